"""The BLAS heading beyond the conformance kit: beta/alpha rules, in-place and out= forms with the
version counter, aliases and deprecations, PyTorch's errors, and properties against numpy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def arr(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_addmm_beta_zero_ignores_nan_and_inf():
    inp = fb.full((2, 2), float("nan"))
    a, b = fb.ones(2, 3), fb.ones(3, 2)
    assert fb.addmm(inp, a, b, beta=0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    inp.addmm_(a, b, beta=0, alpha=2)
    assert inp.tolist() == [[6.0, 6.0], [6.0, 6.0]]


def test_addmm_inplace_reads_input_before_writing_and_bumps_version():
    x = fb.tensor(arr((3, 4)))
    a, b = fb.tensor(arr((3, 5), seed=1)), fb.tensor(arr((5, 4), seed=2))
    expected = 0.5 * x.numpy() + 2 * a.numpy() @ b.numpy()
    v = x._version_counter[0]
    r = x.addmm_(a, b, beta=0.5, alpha=2)
    assert r is x and x._version_counter[0] == v + 1
    assert np.allclose(x.numpy(), expected)


def test_addmm_inplace_needs_the_full_shape():
    with pytest.raises(RuntimeError):
        fb.ones(1, 5).addmm_(fb.ones(2, 3), fb.ones(3, 5))


def test_addmm_out_and_method():
    a, b, c = (fb.tensor(arr(s, seed=i)) for i, s in enumerate([(2, 3), (3, 4), (4,)]))
    out = fb.empty(2, 4, dtype=fb.float64)
    r = fb.addmm(c, a, b, alpha=-1, out=out)
    assert r is out
    assert np.allclose(out.numpy(), c.numpy() - a.numpy() @ b.numpy())
    assert np.allclose(c.addmm(a, b).numpy(), c.numpy() + a.numpy() @ b.numpy())


def test_integer_products_take_integer_scales():
    a = fb.tensor([[1, 2], [3, 4]])
    r = fb.addmm(fb.ones(2, 2, dtype=fb.int64), a, a, beta=2, alpha=3)
    assert r.dtype == fb.int64 and r.tolist() == [[23, 32], [47, 68]]
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
        fb.addr(fb.zeros(2, 2, dtype=fb.int64), fb.tensor([1, 2]), fb.tensor([1, 2]), alpha=0.5)


def test_addr_bool_and_promotion():
    r = fb.addr(fb.tensor([[True, False]]), fb.tensor([True, False]), fb.tensor([False, True]))
    assert r.dtype == fb.bool and r.tolist() == [[True, True], [True, False]]
    assert fb.addr(fb.zeros(2, 3), fb.tensor([1, 2]), fb.tensor([1, 2, 3])).dtype == fb.float32


def test_addmv_addbmm_baddbmm_against_numpy():
    m, v, i = arr((3, 4)), arr((4,), seed=1), arr((3,), seed=2)
    assert np.allclose(fb.addmv(fb.tensor(i), fb.tensor(m), fb.tensor(v), beta=3, alpha=0.5).numpy(),
                       3 * i + 0.5 * m @ v)
    b1, b2, inp = arr((5, 3, 4)), arr((5, 4, 2), seed=1), arr((3, 2), seed=2)
    assert np.allclose(fb.addbmm(fb.tensor(inp), fb.tensor(b1), fb.tensor(b2)).numpy(),
                       inp + np.einsum("bij,bjk->ik", b1, b2))
    assert np.allclose(fb.baddbmm(fb.tensor(inp), fb.tensor(b1), fb.tensor(b2), beta=-1).numpy(),
                       -inp + b1 @ b2)
    t = fb.tensor(b1 @ b2)
    t.baddbmm_(fb.tensor(b1), fb.tensor(b2), alpha=-1)
    assert np.allclose(t.numpy(), 0)


def test_vdot_conjugates_first_argument():
    a = fb.tensor([1 + 2j, 3 - 1j])
    b = fb.tensor([2 - 1j, 1j])
    assert complex(fb.vdot(a, b).item()) == pytest.approx(np.vdot(a.numpy(), b.numpy()))
    assert complex(a.vdot(b).item()) != complex(fb.dot(a, b).item())


def test_outer_ger_inner():
    a, b = fb.tensor([1.0, 2.0]), fb.tensor([3.0, 4.0, 5.0])
    assert fb.outer(a, b).tolist() == fb.ger(a, b).tolist() == a.outer(b).tolist() == a.ger(b).tolist()
    assert fb.outer(a, fb.tensor([1, 2])).dtype == fb.float32
    x, y = arr((2, 3, 4)), arr((5, 4), seed=1)
    assert np.allclose(fb.inner(fb.tensor(x), fb.tensor(y)).numpy(), np.inner(x, y))
    assert fb.inner(fb.tensor(2.0), fb.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]


def test_chain_matmul_warns_and_multiplies():
    mats = [arr((2, 3)), arr((3, 4), seed=1), arr((4, 2), seed=2)]
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        r = fb.chain_matmul(*[fb.tensor(m) for m in mats])
    assert np.allclose(r.numpy(), mats[0] @ mats[1] @ mats[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Expected one or more matrices"):
            fb.chain_matmul()
        with pytest.raises(RuntimeError, match="Tensor dimension is 3, expected 2 instead."):
            fb.chain_matmul(fb.ones(2, 3, 1), fb.ones(3, 2))


@pytest.mark.parametrize("call,message", [
    (lambda: fb.addmm(fb.ones(2, 5), fb.ones(2, 3), fb.ones(4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda: fb.addmm(fb.ones(2, 5), fb.ones(2, 3), fb.ones(3, 5, 1)), "mat2 must be a matrix, got 3-D tensor"),
    (lambda: fb.addmm(fb.ones(2, 5), fb.ones(2, 3), fb.ones(3, 5, dtype=fb.float64)),
     "self and mat2 must have the same dtype, but got Float and Double"),
    (lambda: fb.addmv(fb.ones(3), fb.ones(2, 3), fb.ones(3)),
     r"size mismatch, got input \(3\), mat \(2x3\), vec \(3\)"),
    (lambda: fb.addr(fb.ones(2, 3), fb.ones(2), fb.ones(3, 1)), "addr: Expected 1-D argument vec2, but got 2-D"),
    (lambda: fb.baddbmm(fb.ones(3, 2, 5), fb.ones(4, 2, 3), fb.ones(4, 3, 5)),
     "The expanded size of the tensor \\(4\\) must match the existing size \\(3\\) at non-singleton dimension 0"),
    (lambda: fb.vdot(fb.ones(3), fb.ones(3, dtype=fb.float64)),
     "dot : expected both vectors to have same dtype, but found Float and Double"),
    (lambda: fb.outer(fb.ones(3), fb.ones(4, 1)), "outer: Expected 1-D argument vec2, but got 2-D"),
    (lambda: fb.addmm(fb.ones(1, 2, 5), fb.ones(2, 3), fb.ones(3, 5)),
     r"expand\(flambeau.FloatTensor\{\[1, 2, 5\]\}, size=\[2, 5\]\): the number of sizes provided \(2\) must be "
     r"greater or equal to the number of dimensions in the tensor \(3\)"),
])
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_bad_input_leaves_out_untouched():
    out = fb.full((2, 2), 7.0)
    with pytest.raises(RuntimeError):
        fb.addmm(fb.ones(2, 2), fb.ones(2, 3), fb.ones(4, 2), out=out)
    assert out.tolist() == [[7.0, 7.0], [7.0, 7.0]]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 5), k=st.integers(0, 5), m=st.integers(0, 5), b=st.integers(0, 3),
       beta=st.sampled_from([0, 1, 0.5, -2.0]), alpha=st.sampled_from([1, 0.25, -3.0]),
       bcast=st.sampled_from(["full", "row", "col", "scalar"]), transpose=st.booleans())
def test_scaled_products_match_numpy(n, k, m, b, beta, alpha, bcast, transpose):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    shape = {"full": (n, m), "row": (m,), "col": (n, 1), "scalar": ()}[bcast]
    inp = rng.standard_normal(shape)
    a = rng.standard_normal((n, k))
    c = rng.standard_normal((k, m))
    ta = fb.tensor(a.T.copy()).t() if transpose else fb.tensor(a)
    r = fb.addmm(fb.tensor(inp), ta, fb.tensor(c), beta=beta, alpha=alpha)
    expected = alpha * (a @ c) + (0 if beta == 0 else beta * inp)
    assert r.shape == (n, m) and np.allclose(r.numpy(), expected)
    b1, b2 = rng.standard_normal((b, n, k)), rng.standard_normal((b, k, m))
    r = fb.baddbmm(fb.tensor(inp), fb.tensor(b1), fb.tensor(b2), beta=beta, alpha=alpha)
    assert np.allclose(r.numpy(), alpha * (b1 @ b2) + (0 if beta == 0 else beta * inp))
    r = fb.addbmm(fb.tensor(inp), fb.tensor(b1), fb.tensor(b2), beta=beta, alpha=alpha)
    assert np.allclose(r.numpy(), alpha * (b1 @ b2).sum(0) + (0 if beta == 0 else beta * inp))
