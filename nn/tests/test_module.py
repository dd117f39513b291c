"""The Module system: registration, traversal, state dicts, conversions, hooks, repr, pickling."""
from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import flambeau as fb
from flambeau import nn
from flambeau.nn import Parameter


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.register_buffer("steps", fb.zeros(1))
        self.register_buffer("scratch", fb.ones(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.fc1(x).clamp(min=0))


def _values(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


# -- Parameter -----------------------------------------------------------------------------------------
def test_parameter_is_a_leaf_requiring_grad_sharing_storage():
    t = fb.tensor([1.0, 2.0])
    p = Parameter(t)
    assert isinstance(p, fb.Tensor) and isinstance(p, Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    t[0] = 5.0
    assert p[0].item() == 5.0  # same storage
    assert not Parameter(t, requires_grad=False).requires_grad
    assert Parameter().shape == (0,)


def test_parameter_repr_is_pytorchs():
    assert repr(Parameter(fb.tensor([1.0, 2.0]))) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_parameter_gradient_flows_and_ops_return_plain_tensors():
    p = Parameter(fb.tensor([1.0, 2.0, 3.0], dtype=fb.float64))
    y = (p * p).sum()
    assert type(p * p) is fb.Tensor
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0, 6.0])


def test_parameter_pickle_and_deepcopy():
    p = Parameter(fb.tensor([1.0, 2.0]))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    r = copy.deepcopy(p)
    assert type(r) is Parameter and r.tolist() == [1.0, 2.0] and r.data_ptr() != p.data_ptr()


def test_parameter_rejects_non_tensor():
    with pytest.raises(TypeError, match="must be Tensor"):
        Parameter([1.0])


# -- registration ---------------------------------------------------------------------------------------
def test_registration_on_assignment():
    m = Net()
    assert list(m._parameters) == [] and list(m._modules) == ["fc1", "fc2"]
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "fc2"]
    assert [n for n, _ in m.named_children()] == ["fc1", "fc2"]
    assert len(list(m.parameters(recurse=False))) == 0
    assert [n for n, _ in m.named_parameters(prefix="model")][0] == "model.fc1.weight"
    assert m.fc2.bias is None and "bias" in m.fc2._parameters


def test_reassignment_moves_between_kinds_and_delattr():
    m = nn.Module()
    m.x = Parameter(fb.zeros(2))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'x'"):
        m.x = fb.zeros(2)
    m.x = None
    assert m.x is None and "x" in m._parameters
    m.sub = nn.Identity()
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    m.register_buffer("b", fb.zeros(1))
    m.b = fb.ones(1)
    assert m._buffers["b"].tolist() == [1.0]
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'b'"):
        m.b = "no"
    del m.b
    assert "b" not in m._buffers
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'b'"):
        m.b
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="name can.*t contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", None)
    with pytest.raises(TypeError, match="cannot assign 'Tensor' object to parameter 'w'"):
        m.register_parameter("w", fb.zeros(1))
    with pytest.raises(TypeError, match="buffer name should be a string"):
        m.register_buffer(1, None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    m.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        m.register_buffer("attr", None)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("y", _nonleaf(Parameter(fb.ones(1))))

    class Early(nn.Module):
        def __init__(self):
            self.w = Parameter(fb.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def _nonleaf(x):
    p = Parameter(fb.ones(1))
    y = x * 2
    p.grad_fn = y.grad_fn  # a Parameter with history: what register_parameter refuses
    return p


def test_get_submodule_parameter_buffer():
    m = nn.Sequential(Net())
    assert m.get_submodule("0.fc1") is m[0].fc1
    assert m.get_parameter("0.fc1.weight") is m[0].fc1.weight
    assert m.get_buffer("0.steps") is m[0].steps
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        m.get_submodule("0.nope")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        m.get_parameter("0.steps")
    with pytest.raises(AttributeError, match="`fc1` is not a buffer"):
        m.get_buffer("0.fc1")


def test_shared_parameters_yielded_once():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU() if hasattr(nn, "ReLU") else nn.Identity(), shared)
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    assert len(list(m.modules())) == 3
    tied = nn.Module()
    tied.a = nn.Linear(2, 2, bias=False)
    tied.b = nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight"]


# -- state dict -------------------------------------------------------------------------------------------
def test_state_dict_keys_detached_and_round_trip():
    m = Net()
    sd = m.state_dict()
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]  # own state first, as PyTorch
    assert not sd["fc1.weight"].requires_grad
    assert m.state_dict(keep_vars=True)["fc1.weight"] is m.fc1.weight
    other = Net()
    result = other.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    for k, v in _values(m).items():
        np.testing.assert_array_equal(_values(other)[k], v)
    assert sd._metadata[""] == {"version": 1}


def test_load_state_dict_strict_errors_leave_state_unchanged():
    m = Net()
    before = _values(m)
    sd = Net().state_dict()
    del sd["fc2.weight"]
    sd["extra"] = fb.zeros(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:\n\t")
    assert 'Missing key(s) in state_dict: "fc2.weight". ' in msg
    assert 'Unexpected key(s) in state_dict: "extra". ' in msg
    after = _values(m)
    for k in before:
        np.testing.assert_array_equal(after[k], before[k])


def test_load_state_dict_shape_mismatch_named_and_nothing_copied():
    m = Net()
    before = _values(m)
    sd = Net().state_dict()
    sd["fc2.weight"] = fb.zeros(3, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc2\.weight: copying a param with shape "
                                           r"flambeau\.Size\(\[3, 3\]\) from checkpoint, the shape in current "
                                           r"model is flambeau\.Size\(\[2, 4\]\)"):
        m.load_state_dict(sd, strict=False)
    # fc1's entries were fine, yet not copied either: a failed load changes nothing
    for k, v in _values(m).items():
        np.testing.assert_array_equal(v, before[k])


def test_load_state_dict_non_strict_reports_keys():
    m = Net()
    sd = Net().state_dict()
    del sd["steps"]
    sd["junk"] = fb.zeros(1)
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["steps"] and res.unexpected_keys == ["junk"]
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_load_state_dict_assign_and_hooks():
    m = nn.Linear(2, 2)
    sd = {"weight": fb.ones(2, 2), "bias": fb.zeros(2)}
    m.load_state_dict(sd, assign=True)
    assert isinstance(m.weight, Parameter) and m.weight.requires_grad and m.weight.tolist() == [[1, 1], [1, 1]]
    calls = []
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(keys))
    m.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(prefix))
    m.load_state_dict(m.state_dict())
    assert calls[0] == "" and calls[1].missing_keys == [] and calls[1].unexpected_keys == []


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.note = "a"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"]

    a, b = WithExtra(), WithExtra()
    a.note = "z"
    sd = a.state_dict()
    assert sd["_extra_state"] == {"note": "z"}
    b.load_state_dict(sd)
    assert b.note == "z"


# -- modes, grads, apply, conversions -----------------------------------------------------------------------
def test_train_eval_requires_grad_zero_grad_apply():
    m = Net()
    assert m.training and m.fc1.training
    m.eval()
    assert not m.training and not m.fc2.training
    m.train()
    assert m.fc2.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    m(fb.ones(1, 3)).sum().backward()
    assert m.fc1.weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert m.fc1.weight.grad.abs().sum().item() == 0.0
    m.zero_grad()
    assert m.fc1.weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Linear", "Net"]


def test_to_and_dtype_conversions_keep_parameter_identity():
    m = Net()
    w = m.fc1.weight
    m.double()
    assert m.fc1.weight is w and w.dtype == fb.float64 and isinstance(w, Parameter) and w.requires_grad
    assert m.steps.dtype == fb.float64
    m.to(fb.float32)
    assert w.dtype == fb.float32
    m.half()
    assert w.dtype == fb.float16
    m.float()
    m.to(fb.zeros(1, dtype=fb.float64))
    assert w.dtype == fb.float64
    m.to("cpu", fb.float32)
    assert w.dtype == fb.float32 and w.device.type == "cpu"
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        m.to(fb.int64)
    ints = nn.Module()
    ints.register_buffer("count", fb.zeros(1, dtype=fb.int64))
    ints.double()
    assert ints.count.dtype == fb.int64  # only floating-point tensors are cast


def test_meta_device_construction_and_to_empty():
    m = nn.Linear(1000, 1000, device="meta")
    assert m.weight.device.type == "meta" and m.weight.shape == (1000, 1000) and m.weight.requires_grad
    m.to_empty(device="cpu")
    assert m.weight.device.type == "cpu" and isinstance(m.weight, Parameter)
    m2 = Net().to("meta")
    assert all(p.is_meta for p in m2.parameters())
    out = m2(fb.empty(5, 3, device="meta"))
    assert out.shape == (5, 2) and out.is_meta


# -- hooks ---------------------------------------------------------------------------------------------------
def test_forward_hook_order_modification_and_removal():
    m = nn.Linear(2, 2)
    order = []
    h1 = m.register_forward_pre_hook(lambda mod, args: order.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: order.append("pre0"), prepend=True)
    m.register_forward_hook(lambda mod, args, out: order.append("post"))
    h4 = m.register_forward_hook(lambda mod, args, out: out * 0)
    x = fb.ones(1, 2)
    assert m(x).abs().sum().item() == 0.0
    assert order == ["pre0", "pre1", "post"]
    h1.remove()
    h4.remove()
    h4.remove()  # twice is harmless
    order.clear()
    assert m(x).abs().sum().item() != 0.0
    assert order == ["pre0", "post"]


def test_hooks_with_kwargs_and_context_manager():
    class Scale(nn.Module):
        def forward(self, x, *, k=1.0):
            return x * k

    m = Scale()

    def pre(mod, args, kwargs):
        return args, {"k": 3.0}

    with m.register_forward_pre_hook(pre, with_kwargs=True):
        got = []
        m.register_forward_hook(lambda mod, args, kwargs, out: got.append(kwargs.get("k")), with_kwargs=True)
        assert m(fb.ones(1)).item() == 3.0
        assert got == [3.0]
    assert m(fb.ones(1)).item() == 1.0


def test_forward_hook_always_call():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(fb.ones(1))
    assert seen == [None]


def test_global_forward_hook():
    from flambeau.nn.modules.module import register_module_forward_hook

    seen = []
    h = register_module_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
    try:
        nn.Sequential(nn.Linear(2, 2))(fb.ones(1, 2))
    finally:
        h.remove()
    assert seen == ["Linear", "Sequential"]
    nn.Linear(2, 2)(fb.ones(1, 2))
    assert len(seen) == 2


def test_full_backward_hooks_see_and_replace_gradients():
    m = nn.Linear(3, 2).double()
    x = fb.ones(4, 3, dtype=fb.float64, requires_grad=True)
    record = {}

    def pre(mod, grad_output):
        record["pre"] = grad_output[0].numpy().copy()
        return (grad_output[0] * 2,)

    def post(mod, grad_input, grad_output):
        record["gi"] = grad_input[0].numpy().copy()
        record["go"] = grad_output[0].numpy().copy()
        return (grad_input[0] * 0,)

    m.register_full_backward_pre_hook(pre)
    h = m.register_full_backward_hook(post)
    m(x).sum().backward()
    np.testing.assert_allclose(record["pre"], np.ones((4, 2)))
    np.testing.assert_allclose(record["go"], 2 * np.ones((4, 2)))
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(record["gi"], 2 * np.ones((4, 2)) @ w)
    np.testing.assert_allclose(x.grad.numpy(), 0.0)
    np.testing.assert_allclose(m.weight.grad.numpy(), 2 * np.ones((2, 4)) @ np.ones((4, 3)))
    h.remove()


def test_full_backward_hook_without_input_grad():
    m = nn.Linear(2, 2)
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(gi))
    m(fb.ones(1, 2)).sum().backward()
    assert calls == [(None,)]


# -- repr, dir, pickling ---------------------------------------------------------------------------------------
def test_repr_of_nested_model_matches_pytorch_text():
    model = nn.Sequential(
        nn.Linear(4, 8),
        nn.Sequential(nn.Linear(8, 2, bias=False), nn.Flatten()),
        nn.Identity(),
    )
    expected = (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): Linear(in_features=8, out_features=2, bias=False)\n"
        "    (1): Flatten(start_dim=1, end_dim=-1)\n"
        "  )\n"
        "  (2): Identity()\n"
        ")"
    )
    assert repr(model) == expected
    net = Net()
    assert repr(net) == ("Net(\n"
                         "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
                         "  (fc2): Linear(in_features=4, out_features=2, bias=False)\n"
                         ")")


def test_multiline_extra_repr():
    class M(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(M()) == "M(\n  a=1\n  b=2\n)"


def test_dir_lists_members():
    names = dir(Net())
    assert {"fc1", "fc2", "steps", "forward", "training"} <= set(names)


def test_pickle_and_deepcopy_module():
    m = Net()
    m2 = pickle.loads(pickle.dumps(m))
    for k, v in _values(m).items():
        np.testing.assert_array_equal(_values(m2)[k], v)
    assert isinstance(m2.fc1.weight, Parameter)
    m3 = copy.deepcopy(m)
    assert m3.fc1.weight is not m.fc1.weight
    np.testing.assert_array_equal(m3.fc1.weight.detach().numpy(), m.fc1.weight.detach().numpy())


def test_forward_missing_and_init_arguments():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        nn.Module(x=1)


def test_buffer_class_registers():
    m = nn.Module()
    m.b = nn.Buffer(fb.zeros(2), persistent=False)
    assert "b" in m._buffers and type(m.b) is fb.Tensor
    assert "b" not in m.state_dict()
    m.c = nn.Buffer(fb.ones(1))
    assert list(m.state_dict()) == ["c"]
