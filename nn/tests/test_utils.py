"""flambeau.nn.utils: clipping, parameter vectors, weight/spectral norm, parametrize."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
from flambeau import nn
from flambeau.autograd import gradcheck
from flambeau.nn import utils
from flambeau.nn.utils import parametrizations, parametrize


def _params_with_grads(grads):
    params = []
    for g in grads:
        p = nn.Parameter(fb.zeros(*np.shape(g), dtype=fb.float64))
        p.grad = fb.tensor(g, dtype=fb.float64)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.5, math.inf])
def test_clip_grad_norm(norm_type):
    grads = [np.array([3.0, -4.0]), np.array([[1.0, 2.0], [-2.0, 0.5]])]
    params = _params_with_grads(grads)
    flat = np.concatenate([g.ravel() for g in grads])
    expected = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    total = utils.clip_grad_norm_(params, max_norm=1.0, norm_type=norm_type)
    assert total.item() == pytest.approx(expected)
    scale = 1.0 / (expected + 1e-6)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale)


def test_clip_grad_norm_no_clip_below_max_and_single_tensor_and_no_grads():
    p = _params_with_grads([np.array([0.3, 0.4])])[0]
    assert utils.clip_grad_norm_(p, 10.0).item() == pytest.approx(0.5)
    np.testing.assert_allclose(p.grad.numpy(), [0.3, 0.4])
    assert utils.clip_grad_norm_([nn.Parameter(fb.zeros(2))], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    params = _params_with_grads([np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite"):
        utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert math.isinf(utils.clip_grad_norm_(params, 1.0).item())


def test_get_total_norm_and_clip_grads_with_norm():
    params = _params_with_grads([np.array([6.0, 8.0])])
    total = utils.get_total_norm([p.grad for p in params])
    assert total.item() == pytest.approx(10.0)
    utils.clip_grads_with_norm_(params, 5.0, total)
    np.testing.assert_allclose(params[0].grad.numpy(), np.array([6.0, 8.0]) * 5 / (10 + 1e-6))


def test_clip_grad_value():
    params = _params_with_grads([np.array([-3.0, 0.2, 5.0])])
    utils.clip_grad_value_(params, 1.0)
    np.testing.assert_allclose(params[0].grad.numpy(), [-1.0, 0.2, 1.0])


def test_parameters_to_vector_round_trip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = utils.parameters_to_vector(m.parameters())
    assert vec.shape == (sum(p.numel() for p in m.parameters()),)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], m[0].weight.detach().numpy().ravel())
    new = fb.arange(float(vec.numel()))
    utils.vector_to_parameters(new, m.parameters())
    np.testing.assert_array_equal(m[0].weight.detach().numpy().ravel(), np.arange(6.0))
    assert m[1].bias.item() == vec.numel() - 1
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        utils.vector_to_parameters([1.0], m.parameters())
    with pytest.raises(RuntimeError, match="expected a 1-D vector of 11 elements"):
        utils.vector_to_parameters(fb.zeros(3), m.parameters())


def _col_norms(w, dim=0):
    others = tuple(d for d in range(w.ndim) if d != dim)
    return np.sqrt((w ** 2).sum(axis=others, keepdims=True))


def test_weight_norm_hook_api():
    m = nn.Linear(4, 3).double()
    w0 = m.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning):
        utils.weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(m.weight_g.detach().numpy(), _col_norms(w0))
    np.testing.assert_allclose(m.weight.detach().numpy(), w0)
    with fb.no_grad():
        m.weight_g.mul_(2)
    m(fb.ones(1, 4, dtype=fb.float64))
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * w0)
    utils.remove_weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * w0)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        utils.remove_weight_norm(m)


def test_weight_norm_parametrization_gradcheck_and_state_dict():
    m = nn.Linear(3, 2).double()
    w0 = m.weight.detach().numpy().copy()
    parametrizations.weight_norm(m)
    assert parametrize.is_parametrized(m, "weight") and type(m).__name__ == "ParametrizedLinear"
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]
    np.testing.assert_allclose(m.weight.detach().numpy(), w0)
    from flambeau.nn.utils._norms import weight_norm

    g = m.parametrizations.weight.original0.detach().clone().requires_grad_()
    v = m.parametrizations.weight.original1.detach().clone().requires_grad_()
    assert gradcheck(lambda g, v: weight_norm(v, g, 0), (g, v))
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not parametrize.is_parametrized(m)
    np.testing.assert_allclose(m.weight.detach().numpy(), w0)


def test_spectral_norm_hook_and_parametrization_reach_unit_sigma():
    fb.manual_seed(0)
    m = nn.Linear(5, 4)
    utils.spectral_norm(m, n_power_iterations=30)
    m(fb.ones(1, 5))
    assert np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-3)
    assert {"weight_orig"} == {n for n, _ in m.named_parameters()} - {"bias"}
    assert {"weight_u", "weight_v"} == {n for n, _ in m.named_buffers()}
    utils.remove_spectral_norm(m)
    assert "weight" in m._parameters
    m2 = nn.Linear(5, 4)
    parametrizations.spectral_norm(m2)
    for _ in range(10):
        w = m2.weight
    assert np.linalg.svd(w.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-3)


def test_register_parametrization_chain_cached_and_errors():
    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, x):
            return x

    class Double(nn.Module):
        calls = 0

        def forward(self, x):
            Double.calls += 1
            return 2 * x

        def right_inverse(self, x):
            return x / 2

    m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    parametrize.register_parametrization(m, "weight", Double())
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * w)
    with parametrize.cached():
        Double.calls = 0
        m.weight
        m.weight
        assert Double.calls == 1
    m.weight = fb.eye(3) * 4  # assignment goes through the right inverses
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(), 2 * np.eye(3))

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink())
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(nn.Linear(2, 2), "nope", Double())
    other = nn.Linear(3, 3)
    assert type(other) is nn.Linear  # only the parametrized instance changed class


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_parametrization(shape, orthogonal_map):
    m = nn.Linear(shape[1], shape[0]).double()
    parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)

    def check():
        w = m.weight.detach().numpy()
        gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
        np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-10)

    check()
    with fb.no_grad():  # an optimiser's step moves the original anywhere: the weight stays orthogonal
        m.parametrizations.weight.original.copy_(fb.tensor(np.random.default_rng(0).standard_normal(shape)))
    check()
    m(fb.ones(2, shape[1], dtype=fb.float64)).sum().backward()
    assert m.parametrizations.weight.original.grad.shape == shape
    q = np.linalg.qr(np.random.default_rng(1).standard_normal((max(shape), max(shape))))[0][:shape[0], :shape[1]]
    m.weight = fb.tensor(q)  # assignment through right_inverse: the weight becomes q
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-10)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions"):
        parametrizations.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        parametrizations.orthogonal(nn.Linear(2, 3), orthogonal_map="qr")
