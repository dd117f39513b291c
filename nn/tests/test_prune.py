"""nn.utils.prune: masks, the ``*_orig`` parameter, the ``*_mask`` buffer, the forward pre-hook,
stacking in a PruningContainer, global pruning and ``remove``."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn as nn
from flambeau.nn.utils import prune

RNG = np.random.default_rng(0)


def linear(out_f=3, in_f=4):
    fb.manual_seed(0)
    m = nn.Linear(in_f, out_f)
    with fb.no_grad():
        m.weight.copy_(fb.tensor(RNG.permutation(out_f * in_f).reshape(out_f, in_f) - 5.5, dtype=fb.float32))
    return m


def test_l1_unstructured_masks_the_smallest_magnitudes_and_reparametrizes():
    m = linear()
    w = m.weight.detach().numpy().copy()
    prune.l1_unstructured(m, "weight", amount=4)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert not isinstance(m.weight, nn.Parameter)
    mask = m.weight_mask.numpy()
    order = np.argsort(np.abs(w).reshape(-1))
    assert set(np.flatnonzero(mask.reshape(-1) == 0)) == set(order[:4])
    np.testing.assert_array_equal(m.weight.detach().numpy(), w * mask)
    assert prune.is_pruned(m)
    assert sorted(m.state_dict()) == ["bias", "weight_mask", "weight_orig"]


def test_fraction_amount_rounds_and_gradient_flows_through_mask():
    m = linear()
    prune.l1_unstructured(m, "weight", amount=0.25)  # round(0.25 * 12) = 3
    assert int((m.weight_mask == 0).sum()) == 3
    x = fb.randn(2, 4)
    m(x).sum().backward()
    g = m.weight_orig.grad.numpy()
    np.testing.assert_allclose(g, np.tile(x.numpy().sum(0), (3, 1)) * m.weight_mask.numpy(), rtol=1e-6)


def test_forward_pre_hook_recomputes_after_orig_changes():
    m = linear()
    prune.random_unstructured(m, "weight", amount=0.5)
    with fb.no_grad():
        m.weight_orig.add_(1.0)
    x = fb.randn(2, 4)
    out = m(x)
    expected = x.numpy() @ (m.weight_orig.detach().numpy() * m.weight_mask.numpy()).T + m.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_random_unstructured_count():
    m = linear(5, 6)
    prune.random_unstructured(m, "weight", amount=7)
    assert int((m.weight_mask == 0).sum()) == 7


def test_structured_pruning_removes_whole_channels():
    m = linear(4, 5)
    w = m.weight.detach().numpy().copy()
    prune.ln_structured(m, "weight", amount=2, n=2, dim=0)
    mask = m.weight_mask.numpy()
    norms = np.linalg.norm(w, axis=1)
    pruned_rows = set(np.argsort(norms)[:2])
    for r in range(4):
        assert np.all(mask[r] == (0 if r in pruned_rows else 1))
    m2 = linear(4, 5)
    prune.random_structured(m2, "weight", amount=0.4, dim=1)  # round(2.0) columns
    mask = m2.weight_mask.numpy()
    assert np.all((mask == 0).all(0).sum() == 2) and np.all(mask.min(0) == mask.max(0))


def test_ln_structured_l1_and_inf_norms():
    m = linear(4, 5)
    w = m.weight.detach().numpy().copy()
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    assert np.all(m.weight_mask.numpy()[np.argmin(np.abs(w).sum(1))] == 0)
    m = linear(4, 5)
    w = m.weight.detach().numpy().copy()
    prune.ln_structured(m, "weight", amount=1, n=float("inf"), dim=-1)
    assert np.all(m.weight_mask.numpy()[:, np.argmin(np.abs(w).max(0))] == 0)


def test_iterative_pruning_builds_a_container_acting_on_what_is_left():
    m = linear(4, 6)
    prune.l1_unstructured(m, "weight", amount=5)
    first = m.weight_mask.numpy().copy()
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    mask = m.weight_mask.numpy()
    assert np.all(mask <= first)  # never un-prunes
    # structured pruning on the pruned weight: the row of smallest L1 norm (of the kept entries) goes
    w = m.weight_orig.detach().numpy() * first
    assert np.all(mask[np.argmin(np.abs(w).sum(1))] == 0)
    prune.l1_unstructured(m, "weight", amount=2)
    assert int((m.weight_mask == 0).sum()) == int((mask == 0).sum()) + 2
    outer = next(h for h in m._forward_pre_hooks.values())
    assert len(outer) == 2 and outer[0] is hooks[0]  # the earlier container nests, as in PyTorch


def test_custom_from_mask_and_identity():
    m = linear()
    mask = fb.tensor(RNG.random((3, 4)) > 0.5, dtype=fb.float32)
    prune.custom_from_mask(m, "bias", mask=fb.tensor([1.0, 0.0, 1.0]))
    assert m.bias.detach().numpy()[1] == 0
    prune.custom_from_mask(m, "weight", mask=mask)
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask.numpy())
    m2 = linear()
    prune.identity(m2, "weight")
    assert np.all(m2.weight_mask.numpy() == 1)


def test_global_unstructured_pools_the_scores():
    a, b = linear(2, 3), linear(3, 3)
    with fb.no_grad():
        a.weight.copy_(fb.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        b.weight.copy_(fb.tensor([[0.5, 7.0, 8.0], [9.0, 1.5, 10.0], [11.0, 12.0, 2.5]]))
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_type=prune.L1Unstructured, amount=4)
    # the 4 smallest of all 15: 0.5, 1, 1.5, 2
    np.testing.assert_array_equal(a.weight_mask.numpy(), [[0, 0, 1], [1, 1, 1]])
    np.testing.assert_array_equal(b.weight_mask.numpy(), [[0, 1, 1], [1, 0, 1], [1, 1, 1]])
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(a, "weight")], pruning_type=prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(a, "weight")], prune.L1Unstructured, importance_scores=[], amount=1)


def test_importance_scores():
    m = linear()
    scores = fb.arange(12, dtype=fb.float32).reshape(3, 4)
    prune.l1_unstructured(m, "weight", amount=3, importance_scores=scores)
    np.testing.assert_array_equal(m.weight_mask.numpy().reshape(-1)[:3], [0, 0, 0])
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(linear(), "weight", amount=3, importance_scores=fb.ones(4))


def test_remove_makes_pruning_permanent():
    m = linear()
    prune.l1_unstructured(m, "weight", amount=6)
    pruned = m.weight.detach().numpy().copy()
    prune.remove(m, "weight")
    assert isinstance(m.weight, nn.Parameter)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    assert list(m.named_buffers()) == []
    np.testing.assert_array_equal(m.weight.detach().numpy(), pruned)
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned before pruning can be "
                                         "removed"):
        prune.remove(m, "weight")


def test_prune_method_directly_and_amount_errors():
    t = fb.tensor([[1.0, -3.0], [0.5, 2.0]])
    np.testing.assert_array_equal(prune.L1Unstructured(amount=2).prune(t).numpy(), [[0, -3.0], [0, 2.0]])
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.L1Unstructured(amount="a")
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.L1Unstructured(amount=1.5)
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.RandomUnstructured(amount=-1)
    m = linear()
    with pytest.raises(ValueError, match="amount=13 should be smaller than the number of parameters to prune=12"):
        prune.l1_unstructured(m, "weight", amount=13)
    # the failed call left the module as it was
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"] and not prune.is_pruned(m)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.random_structured(m, "weight", amount=1, dim=2)
    assert not prune.is_pruned(m)


def test_container_rejects_other_tensor():
    a = prune.L1Unstructured(amount=1)
    a._tensor_name = "weight"
    b = prune.L1Unstructured(amount=1)
    b._tensor_name = "bias"
    c = prune.PruningContainer(a)
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(b)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)


def test_pruned_model_trains_and_state_dict_round_trips():
    fb.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    prune.l1_unstructured(net[0], "weight", amount=0.5)
    sd = net.state_dict()
    assert "0.weight_orig" in sd and "0.weight_mask" in sd
    net2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    prune.identity(net2[0], "weight")
    net2.load_state_dict(sd)
    x = fb.randn(3, 4)
    np.testing.assert_allclose(net2(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
