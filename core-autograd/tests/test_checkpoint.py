"""flambeau.utils.checkpoint: the forward keeps no graph, the backward recomputes it with the
forward's random state, and the gradients equal those of the plain run (both use_reentrant modes)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as fb
from flambeau.utils.checkpoint import checkpoint, checkpoint_sequential

MODES = [True, False]


def block(x, w):
    """Two layers with a random op between them, so the recomputation must replay the same mask."""
    h = fb.dropout(fb.tanh(x @ w), 0.5, True)
    return (h @ w.t()).sin()


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = fb.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    w = fb.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    return x, w


@pytest.mark.parametrize("use_reentrant", MODES)
def test_gradients_equal_the_plain_run_with_dropout(use_reentrant):
    x, w = _inputs()
    fb.manual_seed(7)
    plain = block(x, w)
    plain.sum().backward()
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    fb.manual_seed(7)
    out = checkpoint(block, x, w, use_reentrant=use_reentrant)
    np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
    fb.randn(100)  # the generator moves on before backward: the recomputation must not see it
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-12)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_forward_keeps_no_graph_and_recomputes_once(use_reentrant):
    x, w = _inputs()
    calls = []

    def fn(a, b):
        calls.append(fb.is_grad_enabled())
        return (a @ b).exp()

    out = checkpoint(fn, x, w, use_reentrant=use_reentrant)
    assert out.requires_grad and calls == [False]
    out.sum().backward()
    assert calls == [False, True]
    expected = np.exp(x.detach().numpy() @ w.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected @ w.detach().numpy().T, rtol=1e-12)


def test_without_preserving_rng_state_the_mask_differs():
    x, w = _inputs()
    fb.manual_seed(7)
    plain = block(x, w)
    plain.sum().backward()
    gw = w.grad.numpy().copy()
    w.grad = None
    fb.manual_seed(7)
    checkpoint(block, x, w, use_reentrant=True, preserve_rng_state=False).sum().backward()
    assert not np.allclose(w.grad.numpy(), gw)


def test_non_tensor_arguments_and_several_outputs():
    x, w = _inputs()

    def fn(a, scale, b):
        return a * scale, (a @ b).sum()

    for mode in MODES:
        x.grad = None
        y, s = checkpoint(fn, x, 3.0, w, use_reentrant=mode)
        (y.sum() + s).backward()
        expected = 3.0 + w.detach().numpy().sum(1)[None, :].repeat(4, 0)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_keyword_arguments_only_non_reentrant():
    x, w = _inputs()

    def fn(a, b=None):
        return a @ b

    out = checkpoint(fn, x, b=w, use_reentrant=False)
    out.sum().backward()
    assert w.grad is not None
    with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
        checkpoint(fn, x, b=w, use_reentrant=True)
    with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only supported when use_reentrant=False"):
        checkpoint(fn, x, w, use_reentrant=True, debug=True)


def test_use_reentrant_none_warns():
    x, w = _inputs()
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(block, x, w)


def test_reentrant_warns_when_no_input_requires_grad():
    x = fb.randn(3, 3)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(fb.sin, x, use_reentrant=True)
    assert not out.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(fb.sin, x, use_reentrant=False)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_checkpoint_sequential_matches_plain(use_reentrant):
    rng = np.random.default_rng(1)
    ws = [fb.tensor(rng.standard_normal((5, 5)) * 0.5, requires_grad=True) for _ in range(5)]
    fns = [(lambda a, w=w: fb.dropout(fb.tanh(a @ w), 0.3, True)) for w in ws]
    x = fb.tensor(rng.standard_normal((3, 5)), requires_grad=True)

    def plain_run(a):
        for f in fns:
            a = f(a)
        return a

    fb.manual_seed(11)
    plain_run(x).sum().backward()
    expected = [w.grad.numpy().copy() for w in ws] + [x.grad.numpy().copy()]
    for w in ws:
        w.grad = None
    x.grad = None
    fb.manual_seed(11)
    out = checkpoint_sequential(fns, 3, x, use_reentrant=use_reentrant)
    out.sum().backward()
    got = [w.grad.numpy() for w in ws] + [x.grad.numpy()]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    with pytest.raises(ValueError, match="segments must be a positive int"):
        checkpoint_sequential(fns, 0, x, use_reentrant=use_reentrant)


def test_importable_as_flambeau_utils_checkpoint():
    import flambeau.utils.checkpoint as ckpt

    assert ckpt.checkpoint is checkpoint
    assert "flambeau-core-autograd" in (ckpt.__doc__ or "")
