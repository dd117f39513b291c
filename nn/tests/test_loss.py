"""The losses other than cross-entropy/NLL: forward against numpy references written out, gradcheck in
float64, reductions, the deprecated size_average/reduce and PyTorch's errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 5))
Y = RNG.normal(size=(4, 5))
P = RNG.uniform(0.05, 0.95, size=(4, 5))
B = (RNG.random(size=(4, 5)) > 0.5) * 1.0
VAR = RNG.uniform(0.1, 1.1, size=(4, 5))
SIGN = np.where(RNG.random(size=(4, 5)) > 0.5, 1.0, -1.0)
CLS = np.array([0, 3, 4, 1])
REDUCTIONS = ["none", "mean", "sum"]


def reduce(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def softplus(z):
    return np.logaddexp(0.0, z)


def t(a, grad=False):
    return fb.tensor(a, dtype=fb.float64, requires_grad=grad)


# name -> (functional call on tensors, numpy reference on arrays (unreduced), the float inputs)
CASES = {
    "l1": (lambda a, b, r: F.l1_loss(a, b, reduction=r), lambda a, b: np.abs(a - b), (X, Y)),
    "mse": (lambda a, b, r: F.mse_loss(a, b, reduction=r), lambda a, b: (a - b) ** 2, (X, Y)),
    "huber": (lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=0.7),
              lambda a, b: np.where(np.abs(a - b) < 0.7, 0.5 * (a - b) ** 2, 0.7 * (np.abs(a - b) - 0.35)), (X, Y)),
    "smooth_l1": (lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5),
                  lambda a, b: np.where(np.abs(a - b) < 0.5, 0.5 * (a - b) ** 2 / 0.5, np.abs(a - b) - 0.25), (X, Y)),
    "poisson": (lambda a, b, r: F.poisson_nll_loss(a, b, reduction=r), lambda a, b: np.exp(a) - b * a, (X, P * 3)),
    "poisson_full": (lambda a, b, r: F.poisson_nll_loss(a, b, log_input=False, full=True, reduction=r),
                     lambda a, b: a - b * np.log(a + 1e-8) + np.where(
                         b > 1, b * np.log(b) - b + 0.5 * np.log(2 * np.pi * b), 0.0), (P, P * 3)),
    "gaussian": (lambda a, b, v, r: F.gaussian_nll_loss(a, b, v, reduction=r),
                 lambda a, b, v: 0.5 * (np.log(v) + (a - b) ** 2 / v), (X, Y, VAR)),
    "gaussian_full_shared": (lambda a, b, v, r: F.gaussian_nll_loss(a, b, v, full=True, reduction=r),
                             lambda a, b, v: 0.5 * (np.log(v[:, :1]) + (a - b) ** 2 / v[:, :1] + np.log(2 * np.pi)),
                             (X, Y, VAR[:, :1].copy())),
    "kl": (lambda a, b, r: F.kl_div(a, b, reduction=r), lambda a, b: b * (np.log(b) - a), (X, P)),
    "kl_log_target": (lambda a, b, r: F.kl_div(a, b, reduction=r, log_target=True),
                      lambda a, b: np.exp(b) * (b - a), (X, Y)),
    "bce": (lambda a, r: F.binary_cross_entropy(a, t(B), reduction=r),
            lambda a: -(B * np.log(a) + (1 - B) * np.log(1 - a)), (P,)),
    "bce_weight": (lambda a, r: F.binary_cross_entropy(a, t(B), weight=t(VAR), reduction=r),
                   lambda a: -VAR * (B * np.log(a) + (1 - B) * np.log(1 - a)), (P,)),
    "bce_logits": (lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, reduction=r),
                   lambda a, b: b * softplus(-a) + (1 - b) * softplus(a), (X * 10, P)),
    "bce_logits_pos_weight": (
        lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, weight=t(VAR), pos_weight=t(VAR[0]), reduction=r),
        lambda a, b: VAR * (VAR[0] * b * softplus(-a) + (1 - b) * softplus(a)), (X, P)),
    "margin_ranking": (lambda a, b, r: F.margin_ranking_loss(a, b, t(SIGN[0]), margin=0.3, reduction=r),
                       lambda a, b: np.maximum(0, -SIGN[0] * (a - b) + 0.3), (X[0].copy(), Y[0].copy())),
    "hinge_embedding": (lambda a, r: F.hinge_embedding_loss(a, t(SIGN), margin=0.8, reduction=r),
                        lambda a: np.where(SIGN == 1, a, np.maximum(0, 0.8 - a)), (X,)),
    "soft_margin": (lambda a, r: F.soft_margin_loss(a, t(SIGN), reduction=r), lambda a: softplus(-SIGN * a), (X,)),
    "multilabel_soft_margin": (
        lambda a, r: F.multilabel_soft_margin_loss(a, t(B), weight=t(VAR[0]), reduction=r),
        lambda a: (VAR[0] * (B * softplus(-a) + (1 - B) * softplus(a))).mean(1), (X,)),
    "cosine_embedding": (
        lambda a, b, r: F.cosine_embedding_loss(a, b, t(SIGN[:, 0]), margin=0.1, reduction=r),
        lambda a, b: np.where(SIGN[:, 0] == 1, 1 - (a * b).sum(1) / np.sqrt(
            ((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12)),
            np.maximum(0, (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12)) - 0.1)),
        (X, Y)),
    "multi_margin": (lambda a, r: F.multi_margin_loss(a, fb.tensor(CLS), reduction=r),
                     lambda a: np.array([sum(max(0, 1 - a[n, CLS[n]] + a[n, i]) for i in range(5) if i != CLS[n])
                                         for n in range(4)]) / 5, (X,)),
    "multi_margin_p2_weight": (
        lambda a, r: F.multi_margin_loss(a, fb.tensor(CLS), p=2, margin=0.5, weight=t(VAR[0]), reduction=r),
        lambda a: np.array([sum(VAR[0, CLS[n]] * max(0, 0.5 - a[n, CLS[n]] + a[n, i]) ** 2 for i in range(5)
                                if i != CLS[n]) for n in range(4)]) / 5, (X,)),
    "triplet": (lambda a, b, c, r: F.triplet_margin_loss(a, b, c, reduction=r),
                lambda a, b, c: np.maximum(0, 1 + np.linalg.norm(a - b + 1e-6, axis=1)
                                           - np.linalg.norm(a - c + 1e-6, axis=1)), (X, Y, P)),
    "triplet_swap_p1": (
        lambda a, b, c, r: F.triplet_margin_loss(a, b, c, p=1, swap=True, margin=2.0, reduction=r),
        lambda a, b, c: np.maximum(0, 2 + np.abs(a - b + 1e-6).sum(1) - np.minimum(
            np.abs(a - c + 1e-6).sum(1), np.abs(b - c + 1e-6).sum(1))), (X, Y, P)),
    "triplet_distance": (
        lambda a, b, c, r: F.triplet_margin_with_distance_loss(
            a, b, c, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=0.5, reduction=r),
        lambda a, b, c: np.maximum(0, 0.5 + np.abs(a - b).sum(1) - np.abs(a - c).sum(1)), (X, Y, P)),
}


def _multilabel_margin_ref(x, y):
    out = []
    for row, tg in zip(x, y):
        listed = []
        for v in tg:
            if v < 0:
                break
            listed.append(v)
        others = [i for i in range(len(row)) if i not in listed]
        out.append(sum(max(0, 1 - (row[j] - row[i])) for j in listed for i in others) / len(row))
    return np.array(out)


MLM_TARGET = np.array([[3, 0, -1, 1, 2], [1, 2, 4, -1, 0], [0, 1, 2, 3, 4], [-1, 1, 1, 1, 1]])
CASES["multilabel_margin"] = (lambda a, r: F.multilabel_margin_loss(a, fb.tensor(MLM_TARGET), reduction=r),
                              lambda a: _multilabel_margin_ref(a, MLM_TARGET), (X,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_numpy(name, reduction):
    call, ref, inputs = CASES[name]
    got = call(*[t(a) for a in inputs], reduction)
    np.testing.assert_allclose(got.numpy(), reduce(ref(*inputs), reduction), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    call, _, inputs = CASES[name]
    tensors = [t(a, grad=True) for a in inputs]
    assert gradcheck(lambda *ts: call(*ts, "sum"), tensors)
    assert gradcheck(lambda *ts: call(*ts, "none"), tensors)


@pytest.mark.parametrize("name", ["mse", "huber", "bce_logits", "kl", "soft_margin"])
def test_gradgradcheck(name):
    call, _, inputs = CASES[name]
    assert gradgradcheck(lambda *ts: call(*ts, "mean"), [t(a, grad=True) for a in inputs])


def test_kl_div_batchmean_and_mean_warning():
    got = F.kl_div(t(X), t(P), reduction="batchmean")
    np.testing.assert_allclose(got.item(), (P * (np.log(P) - X)).sum() / 4)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(t(X), t(P))


def test_deprecated_size_average_reduce_map_with_warning():
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        got = F.mse_loss(t(X), t(Y), size_average=False)
    np.testing.assert_allclose(got.item(), ((X - Y) ** 2).sum())
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.l1_loss(t(X), t(Y), reduce=False).shape == (4, 5)
    with pytest.warns(UserWarning, match="please use reduction='mean' instead"):
        F.smooth_l1_loss(t(X), t(Y), size_average=True, reduce=True)


def test_broadcasting_target_warns():
    with pytest.warns(UserWarning, match="Using a target size"):
        got = F.mse_loss(t(X), t(Y[:1]))
    np.testing.assert_allclose(got.item(), ((X - Y[:1]) ** 2).mean())


def test_smooth_l1_beta_zero_is_l1():
    np.testing.assert_allclose(F.smooth_l1_loss(t(X), t(Y), beta=0.0).item(), np.abs(X - Y).mean())


def test_gaussian_nll_var_forms_and_clamp():
    # a variance per sample without the trailing 1 broadcasts over the last dim
    got = F.gaussian_nll_loss(t(X), t(Y), t(VAR[:, 0].copy()), reduction="none")
    np.testing.assert_allclose(got.numpy(), 0.5 * (np.log(VAR[:, :1]) + (X - Y) ** 2 / VAR[:, :1]))
    # a variance below eps is clamped, and the gradient still reaches it
    v = t(np.full((4, 5), 1e-9), grad=True)
    F.gaussian_nll_loss(t(X), t(Y), v).backward()
    assert np.isfinite(v.grad.numpy()).all() and (v.grad.numpy() != 0).any()


def test_bce_with_logits_large_logits_stay_finite():
    got = F.binary_cross_entropy_with_logits(t(np.array([1000.0, -1000.0])), t(np.array([0.0, 1.0])),
                                             reduction="none")
    np.testing.assert_allclose(got.numpy(), [1000.0, 1000.0])


def test_bce_log_clamped_at_minus_100():
    got = F.binary_cross_entropy(t(np.array([0.0, 1.0])), t(np.array([1.0, 0.0])), reduction="none")
    np.testing.assert_allclose(got.numpy(), [100.0, 100.0])


def test_unbatched_inputs():
    assert F.multi_margin_loss(t(X[0]), fb.tensor(2), reduction="none").shape == ()
    assert F.multilabel_margin_loss(t(X[0]), fb.tensor(MLM_TARGET[0]), reduction="none").shape == ()
    assert F.cosine_embedding_loss(t(X[0]), t(Y[0]), t(np.array(1.0)), reduction="none").shape == ()
    assert F.triplet_margin_loss(t(X[0]), t(Y[0]), t(P[0]), reduction="none").shape == ()


ERRORS = [
    (lambda: F.binary_cross_entropy(t(P), t(B[:, :3].copy())), ValueError,
     "that is different to the input size"),
    (lambda: F.binary_cross_entropy(t(X), t(B)), RuntimeError, "all elements of input should be between 0 and 1"),
    (lambda: F.binary_cross_entropy_with_logits(t(P), t(B[:, :3].copy())), ValueError,
     "must be the same as input size"),
    (lambda: F.margin_ranking_loss(t(X[0]), t(Y[:1]), t(SIGN[0])), RuntimeError,
     "All input tensors should have same dimension"),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(VAR[:2])), ValueError, "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(-VAR)), ValueError, "var has negative entry/entries"),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(VAR), reduction="avg"), ValueError, "avg is not valid"),
    (lambda: F.multi_margin_loss(t(X), fb.tensor(CLS), p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: F.multi_margin_loss(t(X), fb.tensor(CLS + 3)), RuntimeError, "target out of range"),
    (lambda: F.multi_margin_loss(t(X), t(CLS)), RuntimeError, "expected scalar type Long but found Double"),
    (lambda: F.triplet_margin_loss(t(X), t(Y), t(P[0])), RuntimeError,
     "anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: F.triplet_margin_with_distance_loss(t(X), t(Y), t(P), margin=0.0), ValueError,
     "expected margin to be greater than 0"),
    (lambda: F.cosine_embedding_loss(t(X[0]), t(Y[0]), t(SIGN[0])), RuntimeError,
     "1D target tensor expects 2D input tensors"),
    (lambda: F.kl_div(t(X), t(P), reduction="foo"), ValueError, "foo is not a valid value for reduction"),
    (lambda: F.mse_loss(t(X), t(Y), reduction="foo"), ValueError, "foo is not a valid value for reduction"),
    (lambda: F.multilabel_margin_loss(t(X), fb.tensor(MLM_TARGET + 3)), RuntimeError, "target values must be"),
    (lambda: F.multilabel_margin_loss(t(X), fb.tensor(MLM_TARGET[:2])), RuntimeError, "inconsistent target size"),
    (lambda: F.huber_loss(t(X), t(Y), delta=0.0), RuntimeError, "does not support non-positive values for delta"),
    (lambda: F.smooth_l1_loss(t(X), t(Y), beta=-1.0), RuntimeError, "does not support negative values for beta"),
    (lambda: F.l1_loss(t(X), t(Y[:, :3].copy())), RuntimeError, "must match the size of target"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match.replace("(", r"\(").replace(")", r"\)")):
        with pytest.warns(UserWarning) if "must match the size" in match else _nothing():
            call()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_poisson_full_matches_stirling_only_above_one():
    target = np.array([0.5, 1.0, 2.0, 5.0])
    got = F.poisson_nll_loss(t(np.zeros(4)), t(target), full=True, reduction="none").numpy()
    stirling = np.where(target > 1, target * np.log(target) - target + 0.5 * np.log(2 * math.pi * target), 0)
    np.testing.assert_allclose(got, 1 + stirling)


@pytest.mark.parametrize("name,call", [
    ("binary_cross_entropy", lambda w: F.binary_cross_entropy(t(P), t(B), weight=w)),
    ("binary_cross_entropy_with_logits", lambda w: F.binary_cross_entropy_with_logits(t(X), t(P), weight=w)),
    ("multi_margin_loss", lambda w: F.multi_margin_loss(t(X), fb.tensor(CLS), weight=w[0])),
])
def test_weight_that_requires_grad_is_refused_as_pytorch(name, call):
    w = t(VAR, grad=True)
    with pytest.raises(RuntimeError, match=f"The function '{name}' is not differentiable with respect to argument "
                                           "'weight'"):
        call(w)
    with fb.no_grad():
        call(w)
