"""ctc_loss against a brute-force reference (every alignment enumerated), its gradient, reductions, errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck


def collapse(path, blank):
    out, prev = [], None
    for s in path:
        if s != prev and s != blank:
            out.append(s)
        prev = s
    return out


def brute_force_nll(lp, target, blank):
    """-log of the summed probability of every length-T path that collapses to ``target``."""
    t_len, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        if collapse(path, blank) == list(target):
            total += np.exp(sum(lp[t, s] for t, s in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def _case(seed=0, t_len=5, n=3, c=4):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(t_len, n, c))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return lp


@pytest.mark.parametrize("blank", [0, 3])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_matches_brute_force(blank, reduction):
    lp = _case()
    labels = [c for c in range(4) if c != blank]
    targets = np.array([[labels[0], labels[1], labels[1]], [labels[2], labels[0], 0], [labels[1], 0, 0]])
    il, tl = [5, 4, 2], [3, 2, 1]
    refs = np.array([brute_force_nll(lp[:il[i], i], targets[i, :tl[i]], blank) for i in range(3)])
    got = F.ctc_loss(fb.tensor(lp), fb.tensor(targets), fb.tensor(il), fb.tensor(tl), blank=blank,
                     reduction=reduction).numpy()
    expected = {"none": refs, "sum": refs.sum(), "mean": (refs / np.maximum(tl, 1)).mean()}[reduction]
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_concatenated_targets_equal_padded():
    lp = fb.tensor(_case(1))
    padded = fb.tensor([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
    flat = fb.tensor([1, 2, 2, 3, 1, 2])
    a = F.ctc_loss(lp, padded, (5, 5, 4), (3, 2, 1), reduction="none")
    b = F.ctc_loss(lp, flat, (5, 5, 4), (3, 2, 1), reduction="none")
    np.testing.assert_allclose(a.numpy(), b.numpy())


def test_unbatched():
    lp = _case(2)[:, 0]
    got = F.ctc_loss(fb.tensor(lp), fb.tensor([1, 2]), 5, 2, reduction="none")
    assert got.shape == ()
    np.testing.assert_allclose(got.item(), brute_force_nll(lp, [1, 2], 0), rtol=1e-10)


def test_impossible_alignment_is_inf_or_zero_with_zero_infinity():
    lp = fb.tensor(_case(3), requires_grad=True)
    # 2 frames cannot emit the repeated label 1, 1 (a blank must separate them)
    targets, il, tl = fb.tensor([[1, 1], [1, 2], [2, 0]]), (2, 5, 3), (2, 2, 1)
    loss = F.ctc_loss(lp, targets, il, tl, reduction="none")
    assert np.isinf(loss[0].item()) and np.isfinite(loss[1:].detach().numpy()).all()
    loss = F.ctc_loss(lp, targets, il, tl, reduction="sum", zero_infinity=True)
    loss.backward()
    grad = lp.grad.numpy()
    assert np.isfinite(grad).all() and (grad[:, 0] == 0).all() and (grad[:, 1] != 0).any()


def test_empty_target():
    lp = _case(4)
    got = F.ctc_loss(fb.tensor(lp), fb.zeros(3, 0, dtype=fb.int64), (5, 3, 1), (0, 0, 0), reduction="none")
    np.testing.assert_allclose(got.numpy(), [-lp[:5, 0, 0].sum(), -lp[:3, 1, 0].sum(), -lp[:1, 2, 0].sum()])


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_gradcheck(reduction):
    lp = fb.tensor(_case(5, t_len=6, n=2, c=4), requires_grad=True)
    targets = fb.tensor([[1, 2, 2], [3, 1, 0]])
    assert gradcheck(lambda x: F.ctc_loss(x, targets, (6, 5), (3, 2), reduction=reduction), (lp,))


def test_gradient_through_log_softmax_beyond_input_length_is_zero():
    logits = fb.tensor(_case(6), requires_grad=True)
    F.ctc_loss(F.log_softmax(logits, 2), fb.tensor([[1, 2], [2, 3], [1, 1]]), (5, 3, 4), (2, 2, 2)).backward()
    grad = logits.grad.numpy()
    assert (grad[3:, 1] == 0).all() and (grad[4:, 2] == 0).all()
    # through log_softmax each frame's gradient sums to zero
    np.testing.assert_allclose(grad.sum(-1), 0, atol=1e-12)


def test_errors():
    lp = fb.tensor(_case())
    t = fb.tensor([[1, 2], [2, 3], [1, 1]])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, t, (5, 5, 5), (2, 2, 2), blank=4)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5, but got value 6"):
        F.ctc_loss(lp, t, (6, 5, 5), (2, 2, 2))
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, t, (5, 5), (2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"):
        F.ctc_loss(lp, t, (5, 5, 5), (3, 2, 2))
    with pytest.raises(RuntimeError, match="out of range"):
        F.ctc_loss(lp, fb.tensor([[1, 7], [2, 3], [1, 1]]), (5, 5, 5), (2, 2, 2))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.ctc_loss(lp, t, (5, 5, 5), (2, 2, 2), reduction="avg")
