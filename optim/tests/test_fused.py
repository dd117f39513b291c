"""The dispatched update op (a backend's fused kernel where it has one) against the composite."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau import optim
from flambeau.optim._functional import has_kernel

FUSED = [
    ("optim_sgd", optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("optim_sgd", optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("optim_sgd", optim.SGD, dict(lr=0.1)),
    ("optim_adam", optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    ("optim_adam", optim.Adam, dict(lr=0.01, amsgrad=True, maximize=True)),
    ("optim_adam", optim.AdamW, dict(lr=0.01, amsgrad=True)),
    ("optim_adagrad", optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("optim_rmsprop", optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("optim_rmsprop", optim.RMSprop, dict(lr=0.01)),
    ("optim_rmsprop", optim.RMSprop, dict(lr=0.01, momentum=0.5, maximize=True)),
]

SHAPES = [(3, 4), (7,), (), (2, 3, 5), (40000,)]


def _run(cls, kwargs, foreach, dtype=fb.float32, steps=20, make=None):
    rng = np.random.default_rng(1)
    params = [fb.tensor(rng.normal(size=s).astype(np.float64), dtype=dtype) if make is None else make(s, rng)
              for s in SHAPES]
    opt = cls(params, foreach=foreach, **kwargs)
    for k in range(steps):
        for p in params:
            p.grad = fb.tensor(rng.normal(size=tuple(p.shape)), dtype=p.dtype) * (1 + k % 3)
        opt.step()
    return params, opt


@pytest.mark.parametrize("op, cls, kwargs", FUSED, ids=lambda x: x if isinstance(x, str) else "")
def test_dispatched_op_matches_composite_float32(op, cls, kwargs):
    steps = 20
    fused, _ = _run(cls, kwargs, None, steps=steps)
    composite, _ = _run(cls, kwargs, False, steps=steps)
    # How far two float32 evaluations of the same update may drift apart. Each step rounds an element
    # about 4 times (weight decay, the state update(s), the parameter update), each rounding off by at
    # most u = 2**-24 relative to the values in play, bounded by the largest |param| reached, M (~28
    # for SGD with momentum; its buffer is of the same order and feeds back into the parameter with a
    # total weight lr / (1 - momentum) <= 1). The fused kernel and the composite round, and contract
    # into FMAs, at different places (which elements take the vector path depends on the thread
    # split), so they may differ by 2u*M per rounding, and the differences add up over the steps.
    # The error is absolute: a parameter near 0 got there by cancelling values of size M.
    # (A wrong update rule is off by ~lr * |grad| ~ 0.1, far outside this bound.)
    largest = max(float(np.abs(b.numpy()).max()) for b in composite if b.numel())
    atol = steps * 4 * 2 * 2.0 ** -24 * largest
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("op, cls, kwargs", FUSED[::2], ids=lambda x: x if isinstance(x, str) else "")
def test_dispatched_op_matches_composite_float64(op, cls, kwargs):
    fused, opt1 = _run(cls, kwargs, None, dtype=fb.float64)
    composite, opt2 = _run(cls, kwargs, False, dtype=fb.float64)
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
    for p1, p2 in zip(fused, composite):  # the state too, steps included
        for key, value in opt1.state[p1].items():
            other = opt2.state[p2][key]
            np.testing.assert_allclose(value.numpy(), other.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op, cls, kwargs", FUSED[::3], ids=lambda x: x if isinstance(x, str) else "")
def test_strided_half_and_complex_params(op, cls, kwargs):
    def strided(shape, rng):
        base = fb.tensor(rng.normal(size=(*shape, 2)) if shape else rng.normal(size=(2,)))
        return base[..., 0] if shape else base[0]

    def half(shape, rng):
        return fb.tensor(rng.normal(size=shape), dtype=fb.float16)

    # float16 only for SGD: the fused kernels compute half in float32 (as PyTorch's fused kernels do),
    # where the composite's float16 eps (1e-8) underflows to 0 and Adam's denominators can be 0.
    makers = ((strided, 1e-5), (half, 1e-2)) if cls is optim.SGD else ((strided, 1e-5),)
    for make, rtol in makers:
        fused, _ = _run(cls, kwargs, None, make=make, steps=5)
        composite, _ = _run(cls, kwargs, False, make=make, steps=5)
        for a, b in zip(fused, composite):
            np.testing.assert_allclose(a.numpy().astype(np.float64), b.numpy().astype(np.float64), rtol=rtol,
                                       atol=rtol)


def test_complex_params_update_as_real_pairs():
    rng = np.random.default_rng(2)
    z = rng.normal(size=4) + 1j * rng.normal(size=4)
    p = fb.tensor(z, dtype=fb.complex128)
    q = fb.tensor(np.stack([z.real, z.imag], -1), dtype=fb.float64)
    opt_p, opt_q = optim.Adam([p], lr=0.1), optim.Adam([q], lr=0.1, foreach=False)
    for _ in range(5):
        g = rng.normal(size=4) + 1j * rng.normal(size=4)
        p.grad = fb.tensor(g, dtype=fb.complex128)
        q.grad = fb.tensor(np.stack([g.real, g.imag], -1), dtype=fb.float64)
        if not has_kernel("optim_adam", "cpu"):
            pytest.skip("no fused Adam kernel on this backend")
        opt_p.step()
        opt_q.step()
    got = p.numpy()
    np.testing.assert_allclose(np.stack([got.real, got.imag], -1), q.numpy(), rtol=1e-12)


def test_fused_true_requires_a_kernel():
    p = fb.tensor([1.0, 2.0])
    p.grad = fb.tensor([1.0, 1.0])
    if has_kernel("optim_adam", "cpu"):
        optim.Adam([p], fused=True).step()
        optim.SGD([p], lr=0.1, momentum=0.9, fused=True).step()
        optim.Adagrad([p], fused=True).step()
    else:
        with pytest.raises(RuntimeError, match="fused=True"):
            optim.Adam([p], fused=True).step()


def test_kernels_bump_version_counters():
    p = fb.tensor([1.0, 2.0])
    p.grad = fb.tensor([1.0, 1.0])
    before = p._version_counter[0]
    optim.Adam([p]).step()
    assert p._version_counter[0] > before
