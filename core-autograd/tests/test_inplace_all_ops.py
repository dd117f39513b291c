"""Every in-place op records its edge and bumps the version counter.

For each op declared with an in-place form (``OpDecl(inplace=True)``), drawn from the backend
conformance kit's own samples, and for the in-place methods written outside the declarations
(``zero_``, ``fill_``, ``copy_``, ``masked_fill_``...):

* the gradient through ``y = x * 1; y.op_(...)`` equals the one through the out-of-place
  composition ``op(x * 1, ...)`` (the history behind ``y`` is not dropped: an op that overwrites
  every element still sends zeros back, as PyTorch's do);
* overwriting a tensor saved for backward (``exp``'s output) with the op makes backward raise
  PyTorch's "modified by an inplace operation" error.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau._api_pointwise import ALIASES
from flambeau.ops._registry import FUNCTIONS, OPS
from flambeau.testing._case import Arg
from flambeau.testing._registry import all_cases
from flambeau.testing._runner import Inputs

_VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _declared_inplace() -> list[str]:
    return sorted(name for name, op in OPS.items() if getattr(op, "inplace", False) and name + "_" in FUNCTIONS)


def _sample(name: str):
    """The first float64 sample of the op's conformance case whose output has its first input's shape and
    dtype (what an in-place form needs), built as CPU tensors; None when there is none."""
    case = all_cases().get(name)
    if case is None or "float64" not in case.dtypes:
        return None
    for i, sample in enumerate(case.samples("float64")):
        first = sample.args[0] if sample.args else None
        if not isinstance(first, Arg) or first.dtype != "float64":
            continue
        _, _, args, kwargs = Inputs("cpu", 1234 + i).sample(sample)
        args = tuple(a.contiguous() if isinstance(a, fb.Tensor) else a for a in args)
        try:
            out = FUNCTIONS[name](*args, **kwargs)
        except Exception:  # noqa: BLE001 - a sample made for the error path or another overload
            continue
        if isinstance(out, fb.Tensor) and tuple(out.shape) == tuple(args[0].shape) and out.dtype == args[0].dtype:
            return args, kwargs
    return None


# Ops whose conformance samples give no in-place-shaped float64 call: name -> (args, kwargs).
_MANUAL: dict = {}


def _leaves(args: tuple, first: bool = True) -> tuple:
    return tuple(a.detach().clone().requires_grad_(True)
                 if isinstance(a, fb.Tensor) and a.dtype.is_floating_point and (first or k) else a
                 for k, a in enumerate(args))


def _grads(leaves: tuple) -> list:
    return [None if not isinstance(a, fb.Tensor) or a.grad is None else a.grad.numpy().copy() for a in leaves]


def _check_op(functional, inplace, args: tuple, kwargs: dict) -> None:
    # first: whether the written tensor's own history is differentiated (PyTorch has no derivative
    # of igamma_ for its input, say: then only the other arguments are)
    first = True
    leaves = _leaves(args)
    expected = functional(leaves[0] * 1, *leaves[1:], **kwargs)
    if not expected.requires_grad:
        pytest.skip("not differentiable")
    g = fb.tensor(np.random.default_rng(0).uniform(-1, 1, tuple(expected.shape)).tolist(), dtype=expected.dtype)
    try:
        expected.backward(g)
    except NotImplementedError:
        first = False
        leaves = _leaves(args, first)
        expected = functional(leaves[0] * 1, *leaves[1:], **kwargs)
        expected.backward(g)
    want = _grads(leaves)

    leaves = _leaves(args, first)
    y = leaves[0] * 1
    version = y._version
    result = inplace(y, *leaves[1:], **kwargs)
    assert result is y
    assert y._version > version, "the in-place op did not bump the version counter"
    assert y.grad_fn is not None and y.grad_fn.next_functions, "the in-place op dropped the graph edge"
    y.backward(g)
    got = _grads(leaves)
    for k, (w, h) in enumerate(zip(want, got)):
        if w is None:
            assert h is None or not np.any(h), f"argument {k}: a gradient where the out-of-place op has none"
        else:
            assert h is not None, f"argument {k}: no gradient (the out-of-place op gives one)"
            np.testing.assert_allclose(h, w, rtol=1e-12, atol=1e-12, err_msg=f"argument {k}")

    if not first:
        return
    # the op overwrites exp's saved output: backward must notice
    leaves = _leaves(args)
    s = leaves[0].exp()
    inplace(s, *leaves[1:], **kwargs)
    with pytest.raises(RuntimeError, match=_VERSION_ERROR):
        s.backward(g)


@pytest.mark.parametrize("name", _declared_inplace())
def test_declared_inplace_op_records_edge_and_version(name):
    case = all_cases().get(name)
    if case is not None and "float64" not in case.dtypes:
        pytest.skip("no floating-point form: nothing to differentiate")
    if name in _COMPARISONS:
        _check_comparison(name)
        return
    found = _MANUAL.get(name) or _sample(name)
    if found is None:
        pytest.fail(f"no in-place-shaped float64 sample for {name}_: add one to _MANUAL")
    args, kwargs = found
    functional, inplace = FUNCTIONS[name], FUNCTIONS[name + "_"]
    if getattr(OPS[name], "random", False):  # dropout_...: both forms must draw the same mask
        functional, inplace = _seeded(functional), _seeded(inplace)
    _check_op(functional, inplace, args, kwargs)


def _seeded(fn):
    def call(*args, **kwargs):
        fb.manual_seed(1234)
        return fn(*args, **kwargs)
    return call


#: In-place comparisons and logical ops: the out-of-place forms give bool (nothing to differentiate),
#: but written into a float tensor that requires grad they keep its history and send zeros back.
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not"}


def _check_comparison(name: str) -> None:
    x = _rand(2, 3).requires_grad_(True)
    y = x * 1
    version = y._version
    others = () if name == "logical_not" else (_rand(2, 3) * 0.5,)
    result = FUNCTIONS[name + "_"](y, *others)
    assert result is y and y._version > version and y.dtype == fb.float64
    assert y.grad_fn is not None and y.grad_fn.next_functions, "the in-place op dropped the graph edge"
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[0.0] * 3] * 2


def _rand(*shape):
    return fb.tensor(np.random.default_rng(len(shape)).uniform(-1, 1, shape).tolist(), dtype=fb.float64)


_MASK = fb.tensor([[True, False, True], [False, False, True]])
_INDEX = fb.tensor([2, 0])

# Methods outside the declarations: (in-place call, out-of-place equivalent, tensor args).
METHODS = {
    "zero_": (lambda y: y.zero_(), lambda y: y * 0, ()),
    "fill_": (lambda y: y.fill_(2.5), lambda y: y * 0 + 2.5, ()),
    "fill_tensor": (lambda y, v: y.fill_(v), lambda y, v: y * 0 + v, (_rand(),)),
    "copy_": (lambda y, s: y.copy_(s), lambda y, s: y * 0 + s, (_rand(2, 3),)),
    "copy_broadcast": (lambda y, s: y.copy_(s), lambda y, s: y * 0 + s, (_rand(3),)),
    "masked_fill_": (lambda y: y.masked_fill_(_MASK, 1.5), lambda y: y.masked_fill(_MASK, 1.5), ()),
    "clamp_": (lambda y: y.clamp_(-0.5, 0.5), lambda y: y.clamp(-0.5, 0.5), ()),
    "setitem": (lambda y, v: y.__setitem__((0, slice(1, 3)), v) or y,
                lambda y, v: fb.cat([fb.stack([y[0, 0], v[0], v[1]]).unsqueeze(0), y[1:]]), (_rand(2),)),
    "index_fill_": (lambda y: y.index_fill_(1, _INDEX, -1.0), lambda y: y.index_fill(1, _INDEX, -1.0), ()),
    "mul_scalar": (lambda y: y.mul_(3.0), lambda y: y * 3.0, ()),
    "exp_": (lambda y: y.exp_(), lambda y: y.exp(), ()),
    "sigmoid_": (lambda y: y.sigmoid_(), lambda y: y.sigmoid(), ()),
    "clip_": (lambda y: y.clip_(-0.5, 0.5), lambda y: y.clamp(-0.5, 0.5), ()),
    "polygamma_": (lambda y: y.polygamma_(1), lambda y: fb.polygamma(1, y), ()),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_inplace_method_records_edge_and_version(name):
    inplace, functional, extra = METHODS[name]
    _check_op(functional, inplace, (_rand(2, 3),) + extra, {})


def test_zero_fill_copy_on_non_leaf_send_zeros_back():
    # The case: the overwritten history still runs, giving zeros rather than None.
    for write in (lambda y: y.zero_(), lambda y: y.fill_(3.0), lambda y: y.copy_(fb.ones(2))):
        x = fb.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        write(y)
        y.sum().backward()
        assert x.grad is not None and x.grad.tolist() == [0.0, 0.0]


def test_every_inplace_method_is_covered():
    # A new in-place method must join one of the tables above (or the declarations' test).
    declared = {n + "_" for n in _declared_inplace()}
    covered = declared | {n for n in METHODS if n.endswith("_")}
    covered |= {alias + "_" for alias, target in ALIASES.items() if target + "_" in covered}  # same op
    exempt = {"requires_grad_", "detach_", "share_memory_", "retain_grad_", "resize_", "resize_as_", "set_",
              "zero_", "fill_", "copy_", "record_stream_"}
    methods = {n for n in dir(fb.Tensor) if n.endswith("_") and not n.startswith("__") and not n.startswith("_")}
    missing = sorted(methods - covered - exempt - _RANDOM - _NOT_DIFFERENTIABLE - set(_SHAPE_INPLACE))
    assert not missing, f"in-place methods without a gradient/version test: {missing}"


#: In-place samplers: they overwrite every element; PyTorch sends zeros back through them.
_RANDOM = {"uniform_", "normal_", "bernoulli_", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_"}
#: In-place forms whose result is not differentiable.
_NOT_DIFFERENTIABLE: set[str] = set()
#: In-place shape changes (t_, transpose_, ...): refused on a tensor that requires grad (below).
_SHAPE_INPLACE = {"t_": (), "transpose_": (0, 1), "swapdims_": (0, 1), "swapaxes_": (0, 1), "squeeze_": (),
                  "unsqueeze_": (0,), "as_strided_": ((3, 2), (1, 3))}


@pytest.mark.parametrize("name", sorted(_SHAPE_INPLACE))
def test_inplace_shape_change_of_a_tensor_that_requires_grad_is_refused(name):
    x = _rand(2, 3).requires_grad_(True)
    y = x * 1
    version = y._version
    with pytest.raises(RuntimeError, match="in-place shape changes"):
        getattr(y, name)(*_SHAPE_INPLACE[name])
    assert y.shape == (2, 3) and y._version == version  # refused before any change


@pytest.mark.parametrize("name", sorted(_RANDOM))
def test_inplace_sampler_sends_zeros_back_and_bumps_version(name):
    method = getattr(fb.Tensor, name, None)
    if method is None:
        pytest.skip(f"no Tensor.{name}")
    args = {"bernoulli_": (0.5,), "random_": (0, 5), "geometric_": (0.5,)}.get(name, ())
    x = fb.tensor([1.0, 2.0], dtype=fb.float64, requires_grad=True)
    y = x * 2
    v = y._version
    getattr(y, name)(*args)
    assert y._version > v
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0]
    s = x.exp()
    getattr(s, name)(*args)
    with pytest.raises(RuntimeError, match=_VERSION_ERROR):
        s.sum().backward()


def _declared_with_out() -> list[str]:
    return sorted(name for name, op in OPS.items()
                  if getattr(op, "inplace", False) and op.returns_out and name in FUNCTIONS)


@pytest.mark.parametrize("name", _declared_with_out())
def test_out_variant_bumps_version_and_refuses_grad(name):
    case = all_cases().get(name)
    if case is not None and "float64" not in case.dtypes:
        pytest.skip("no floating-point form")
    if not OPS[name].differentiable:
        pytest.skip("not differentiable: PyTorch's out= check varies by op (heaviside passes, nextafter raises)")
    found = _MANUAL.get(name) or _sample(name)
    if found is None:
        pytest.fail(f"no float64 sample for {name}(out=)")
    args, kwargs = found
    out = fb.empty_like(args[0])
    v = out._version
    FUNCTIONS[name](*args, **kwargs, out=out)
    assert out._version == v + 1
    leaves = _leaves(args)
    before = out.numpy().copy()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        FUNCTIONS[name](*leaves, **kwargs, out=out)
    np.testing.assert_array_equal(out.numpy(), before)  # refused before writing
