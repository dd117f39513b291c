"""nll_loss and cross_entropy (functional forms and the fused ops) against numpy references."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck


def np_log_softmax(x, axis):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_nll(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """logp (N, C, *), target (N, *)."""
    c = logp.shape[1]
    w = np.ones(c) if weight is None else weight
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    wt = w[safe] * kept
    loss = -picked * wt
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def np_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    logp = np_log_softmax(x, 1)
    c = x.shape[1]
    if target.dtype.kind == "f":  # probabilities
        t = target * (1 - label_smoothing) + label_smoothing / c
        w = np.ones(c) if weight is None else weight
        loss = -(logp * t * w.reshape([c] + [1] * (x.ndim - 2))).sum(1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / (x.size / c)}[reduction]
    nll = np_nll(logp, target, weight, ignore_index, reduction)
    w = np.ones(c) if weight is None else weight
    kept = target != ignore_index
    smooth = -(logp * w.reshape([c] + [1] * (x.ndim - 2))).sum(1) * kept
    if reduction == "mean":
        smooth = smooth.sum() / (w[np.where(kept, target, 0)] * kept).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + label_smoothing / c * smooth


def _data(shape, c, seed=0, ignore=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 2
    t = rng.integers(0, c, size=(shape[0],) + tuple(shape[2:]))
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return x, t


REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 5), (4, 3, 2), (2, 4, 3, 2)])
@pytest.mark.parametrize("ignore", [None, 1, -100])
def test_nll_loss_matches_numpy(shape, weighted, reduction, ignore):
    c = shape[1]
    x, t = _data(shape, c, ignore=ignore)
    logp = np_log_softmax(x, 1)
    w = np.linspace(0.5, 2.0, c) if weighted else None
    got = F.nll_loss(fb.tensor(logp), fb.tensor(t), weight=None if w is None else fb.tensor(w),
                     ignore_index=-100 if ignore is None else ignore, reduction=reduction)
    ref = np_nll(logp, t, w, -100 if ignore is None else ignore, reduction)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 5), (4, 3, 2), (2, 4, 3, 2)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("ignore", [None, 2])
def test_cross_entropy_class_indices_matches_numpy(shape, weighted, reduction, smoothing, ignore):
    c = shape[1]
    x, t = _data(shape, c, seed=1, ignore=ignore)
    w = np.linspace(0.5, 2.0, c) if weighted else None
    ii = -100 if ignore is None else ignore
    got = F.cross_entropy(fb.tensor(x), fb.tensor(t), weight=None if w is None else fb.tensor(w), ignore_index=ii,
                          reduction=reduction, label_smoothing=smoothing)
    ref = np_cross_entropy(x, t, w, ii, reduction, smoothing)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities_matches_numpy(reduction, weighted, smoothing):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 5, 3))
    p = rng.random(size=(4, 5, 3))
    p /= p.sum(1, keepdims=True)
    w = np.linspace(0.5, 2.0, 5) if weighted else None
    got = F.cross_entropy(fb.tensor(x), fb.tensor(p), weight=None if w is None else fb.tensor(w),
                          reduction=reduction, label_smoothing=smoothing)
    np.testing.assert_allclose(got.numpy(), np_cross_entropy(x, p, w, -100, reduction, smoothing), rtol=1e-10)


def test_unbatched_input():
    x = np.array([0.5, -1.0, 2.0])
    got = F.cross_entropy(fb.tensor(x), fb.tensor(2))
    assert got.shape == ()
    np.testing.assert_allclose(got.item(), -np_log_softmax(x[None], 1)[0, 2])
    assert F.cross_entropy(fb.tensor(x), fb.tensor(2), reduction="none").shape == ()
    assert F.nll_loss(fb.tensor(x), fb.tensor(0), reduction="none").shape == ()


def test_every_target_ignored_gives_nan_mean_and_zero_sum():
    x = fb.randn(3, 4)
    t = fb.tensor([-100, -100, -100])
    assert np.isnan(F.cross_entropy(x, t).item())
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradcheck(reduction, smoothing, weighted):
    x, t = _data((5, 4), 4, seed=3, ignore=1)
    w = fb.tensor(np.linspace(0.5, 2.0, 4)) if weighted else None
    xt = fb.tensor(x, requires_grad=True)
    fn = lambda a: F.cross_entropy(a, fb.tensor(t), weight=w, ignore_index=1, reduction=reduction,  # noqa: E731
                                   label_smoothing=smoothing)
    assert gradcheck(fn, (xt,))
    assert gradgradcheck(fn, (xt,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_gradcheck_k_dim(reduction):
    x, t = _data((2, 3, 4), 3, seed=4, ignore=0)
    xt = fb.tensor(x, requires_grad=True)
    w = fb.tensor([0.2, 1.0, 3.0], dtype=fb.float64)
    fn = lambda a: F.nll_loss(a, fb.tensor(t), weight=w, ignore_index=0, reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (xt,))
    assert gradgradcheck(fn, (xt,))


def test_cross_entropy_probabilities_gradcheck():
    rng = np.random.default_rng(5)
    x = fb.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    p = fb.tensor(rng.dirichlet(np.ones(4), size=3), requires_grad=True)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), (x, p))


def test_backward_ops_match_the_differentiated_composite():
    """The fused backward ops give what autograd gives through the composite."""
    from flambeau.nn._ops.loss import cross_entropy_composite

    x, t = _data((7, 6), 6, seed=6, ignore=3)
    w = fb.tensor(np.linspace(0.1, 1.0, 6))
    for reduction in REDUCTIONS:
        for smoothing in (0.0, 0.4):
            a = fb.tensor(x, requires_grad=True)
            b = fb.tensor(x, requires_grad=True)
            F.cross_entropy(a, fb.tensor(t), weight=w, ignore_index=3, reduction=reduction,
                            label_smoothing=smoothing).sum().backward()
            cross_entropy_composite(b, fb.tensor(t), w, reduction, 3, smoothing).sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)


# -- bad input ------------------------------------------------------------------------------------

def test_target_dtype_must_be_long():
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(fb.randn(3, 4), fb.tensor([1.0, 2.0, 0.0]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 2, 0], dtype=fb.int32))


@pytest.mark.parametrize("bad", [12, -1, 4])
def test_target_out_of_range(bad):
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, bad, 0]))
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        F.nll_loss(fb.randn(2, 4, 3), fb.tensor([[1, 0, 0], [0, bad, 0]]))


def test_ignored_target_may_be_out_of_range():
    F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 17, 0]), ignore_index=17)


def test_shape_mismatches():
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(4\)"):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 2, 0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 3\], got \[2, 4\]"):
        F.cross_entropy(fb.randn(2, 5, 3), fb.zeros(2, 4, dtype=fb.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 2, 0]), weight=fb.ones(3))
    with pytest.raises(ValueError, match=r"Expected 1 or more dimensions \(got 0\)"):
        F.nll_loss(fb.tensor(1.0), fb.tensor(0))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities"):
        F.cross_entropy(fb.randn(3, 3), fb.zeros(3, 3, dtype=fb.int64))


def test_bad_reduction_and_smoothing():
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 2, 0]), reduction="foo")
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F.cross_entropy(fb.randn(3, 4), fb.tensor([1, 2, 0]), label_smoothing=1.5)


def test_deprecated_size_average_and_reduce():
    x, t = fb.randn(3, 4), fb.tensor([1, 2, 0])
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        s = F.cross_entropy(x, t, size_average=False)
    np.testing.assert_allclose(s.item(), F.cross_entropy(x, t, reduction="sum").item(), rtol=1e-6)
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.nll_loss(x, t, reduce=False).shape == (3,)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 5), c=st.integers(1, 6), k=st.integers(0, 2), seed=st.integers(0, 100),
       reduction=st.sampled_from(REDUCTIONS))
def test_property_k_dim_equals_flattened_rows(n, c, k, seed, reduction):
    """A (N, C, d...) input gives the loss of its rows moved to (N * d..., C)."""
    rng = np.random.default_rng(seed)
    spatial = tuple(rng.integers(1, 3, size=k))
    x = rng.normal(size=(n, c) + spatial)
    t = rng.integers(0, c, size=(n,) + spatial)
    got = F.cross_entropy(fb.tensor(x), fb.tensor(t), reduction=reduction).numpy()
    ref = np_cross_entropy(np.moveaxis(x, 1, -1).reshape(-1, c), t.reshape(-1), reduction=reduction)
    if reduction == "none":
        ref = ref.reshape(t.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def np_cross_entropy_grad(x, target, weight, ignore_index, reduction, eps):
    """d sum(loss) / dx (upstream gradient of ones), written out."""
    n, c = x.shape
    p = np.exp(np_log_softmax(x, 1))
    w = np.ones(c) if weight is None else weight
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    wt = w[safe] * kept
    s = np.where(kept, 1.0 / wt.sum() if reduction == "mean" else 1.0, 0.0)
    grad = p * (s * ((1 - eps) * wt + eps / c * w.sum()))[:, None] - (s[:, None] * eps / c) * w
    grad[np.arange(n)[kept], safe[kept]] -= (s * (1 - eps) * wt)[kept]
    return grad


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 9), c=st.integers(1, 70), seed=st.integers(0, 1000), weighted=st.booleans(),
       eps=st.sampled_from([0.0, 0.15]), ignore=st.booleans(), reduction=st.sampled_from(REDUCTIONS),
       dtype=st.sampled_from(["float32", "float64"]), transposed=st.booleans())
def test_property_fused_cross_entropy_forward_and_backward(n, c, seed, weighted, eps, ignore, reduction, dtype,
                                                           transposed):
    """The fused kernels (row lengths around the 16-lane blocks, float32 and float64, strided inputs)
    against the maths written out."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(n, c)) * 3).astype(dtype)
    target = rng.integers(0, c, size=n)
    ii = int(target[0]) if ignore else -100
    w = rng.uniform(0.2, 2.0, size=c).astype(dtype) if weighted else None
    xt = fb.tensor(x.T.copy()).t() if transposed else fb.tensor(x)
    xt.requires_grad_(True)
    loss = F.cross_entropy(xt, fb.tensor(target), weight=None if w is None else fb.tensor(w), ignore_index=ii,
                           reduction=reduction, label_smoothing=eps)
    tol = 1e-4 if dtype == "float32" else 1e-10
    x64 = x.astype(np.float64)
    w64 = None if w is None else w.astype(np.float64)
    ref = np_cross_entropy(x64, target, w64, ii, reduction, eps)
    np.testing.assert_allclose(loss.detach().numpy(), ref, rtol=tol, atol=tol)
    loss.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np_cross_entropy_grad(x64, target, w64, ii, reduction, eps),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_composites_equal_the_kernels(reduction):
    """The decomposed path (what a backend without kernels runs) gives the CPU kernels' results."""
    from flambeau.nn._ops import loss as ops

    x, t = _data((6, 5), 5, seed=7, ignore=2)
    w = fb.tensor(np.linspace(0.5, 1.5, 5))
    xt, tt = fb.tensor(x), fb.tensor(t)
    g = fb.tensor(np.linspace(-1, 1, 6)) if reduction == "none" else fb.tensor(0.7, dtype=fb.float64)
    pairs = [
        (ops.nll_loss_composite(xt, tt, w, reduction, 2), fb.ops.function("nn_nll_loss")(xt, tt, w, reduction, 2)),
        (ops.nll_loss_backward_composite(g, xt, tt, w, reduction, 2),
         fb.ops.function("nn_nll_loss_backward")(g, xt, tt, w, reduction, 2)),
        (ops.cross_entropy_composite(xt, tt, w, reduction, 2, 0.3),
         fb.ops.function("nn_cross_entropy")(xt, tt, w, reduction, 2, 0.3)),
        (ops.cross_entropy_backward_composite(g, xt, tt, w, reduction, 2, 0.3),
         fb.ops.function("nn_cross_entropy_backward")(g, xt, tt, w, reduction, 2, 0.3)),
    ]
    for composite, kernel in pairs:
        np.testing.assert_allclose(composite.numpy(), kernel.numpy(), rtol=1e-12, atol=1e-14)
