"""view_as_real / view_as_complex (storage sharing, strides, PyTorch's errors), logcumsumexp on
complex input, and matrix_exp (the CPU kernel and the composite, against scipy and the maths)."""
from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
import scipy.linalg as sla

import flambeau as fb
from flambeau._core_ops.matrix_exp import _matrix_exp
from flambeau.ops.matrix_exp_plan import degree_and_squarings, pade_coefficients


# -- view_as_real / view_as_complex ----------------------------------------------------------

def test_view_as_real_shares_storage_and_version():
    z = fb.tensor([1 + 2j, 3 - 4j, -5j])
    r = fb.view_as_real(z)
    assert r.dtype is fb.float32 and tuple(r.shape) == (3, 2) and r.stride() == (2, 1)
    np.testing.assert_array_equal(r.numpy(), [[1, 2], [3, -4], [0, -5]])
    r[1, 1] = 7.0
    assert z[1].item() == 3 + 7j
    assert r._version_counter is z._version_counter and r._base is z


@pytest.mark.parametrize("make", [
    lambda z: z, lambda z: z.t(), lambda z: z[:, 1:], lambda z: z[::2, ::3], lambda z: z[1, 2],
])
def test_view_as_real_strides_and_offset(make):
    base = fb.tensor(np.arange(20).reshape(4, 5) * (1 + 0.5j), dtype=fb.complex128)
    z = make(base)
    r = fb.view_as_real(z)
    assert r.stride() == tuple(2 * s for s in z.stride()) + (1,)
    assert r.storage_offset() == 2 * z.storage_offset()
    np.testing.assert_array_equal(r.numpy()[..., 0], z.numpy().real)
    np.testing.assert_array_equal(r.numpy()[..., 1], z.numpy().imag)
    back = fb.view_as_complex(r)
    assert back.stride() == z.stride() and back.storage_offset() == z.storage_offset()
    np.testing.assert_array_equal(back.numpy(), z.numpy())


def test_view_as_complex_shares_storage():
    x = fb.zeros(3, 2, dtype=fb.float64)
    c = fb.view_as_complex(x)
    assert c.dtype is fb.complex128 and tuple(c.shape) == (3,)
    c[2] = 1 - 2j
    np.testing.assert_array_equal(x.numpy()[2], [1, -2])
    assert c._version_counter is x._version_counter


def test_view_as_complex_size_one_dim_keeps_odd_stride():
    # PyTorch: a dim of size 1 is never stepped over, so its stride need not be even
    x = fb.randn(40).as_strided((2, 1, 2), (4, 5, 1))
    assert fb.view_as_complex(x).stride() == (2, 2)


@pytest.mark.parametrize("make, message", [
    (lambda: fb.ones(3, 2, dtype=fb.int32), "view_as_complex is only supported for half, float and double tensors, "
                                             "but got a tensor of scalar type: Int"),
    (lambda: fb.ones(3, 2, dtype=fb.bfloat16), "scalar type: BFloat16"),
    (lambda: fb.ones(3, 2, dtype=fb.float16), "complex32 is not a flambeau dtype"),
    (lambda: fb.tensor(1.0), "Input tensor must have one or more dimensions"),
    (lambda: fb.ones(3, 3), "Tensor must have a last dimension of size 2"),
    (lambda: fb.ones(2, 3).t(), "Tensor must have a last dimension with stride 1"),
    (lambda: fb.ones(40).as_strided((3, 2), (3, 1), 0), "Tensor must have a stride divisible by 2 for all but last "
                                                        "dimension"),
    (lambda: fb.ones(40).as_strided((3, 2), (4, 1), 1), "Tensor must have a storage_offset divisible by 2"),
])
def test_view_as_complex_errors(make, message):
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fb.view_as_complex(make())


@pytest.mark.parametrize("dtype", [fb.float32, fb.int64, fb.bool])
def test_view_as_real_refuses_real(dtype):
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        fb.view_as_real(fb.ones(3, dtype=dtype))


# view_as_complex/view_as_real and matrix_exp on the meta device: backends/meta/tests/test_meta.py


def test_not_tensor_methods():
    # PyTorch has only the functions
    assert not hasattr(fb.ones(2), "view_as_real") and not hasattr(fb.ones(2), "view_as_complex")


# -- logcumsumexp on complex input -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [fb.complex64, fb.complex128])
def test_logcumsumexp_complex_is_log_of_cumsum_of_exp(dtype):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((3, 6)) + 1j * rng.uniform(-3, 3, (3, 6))
    out = fb.logcumsumexp(fb.tensor(z, dtype=dtype), 1).numpy().astype(np.complex128)
    # exp() is blind to the imaginary part's branch: compare the values themselves
    tol = 1e-5 if dtype is fb.complex64 else 1e-12
    np.testing.assert_allclose(np.exp(out), np.cumsum(np.exp(z), axis=1), rtol=tol)


def test_logcumsumexp_complex_no_overflow():
    z = np.array([1000 + 2j, 1000 - 1j, 999 + 3j])
    out = fb.logcumsumexp(fb.tensor(z), 0).numpy()
    assert np.isfinite(out).all()
    shifted = np.log(np.cumsum(np.exp(z - 1000)))  # the same sums, 1000 lower
    np.testing.assert_allclose(np.exp(1j * out.imag) * np.exp(out.real - 1000), np.exp(shifted), rtol=1e-12)


def test_logcumsumexp_complex_special_values():
    inf, nan = math.inf, math.nan
    run = lambda v: fb.logcumsumexp(fb.tensor(v, dtype=fb.complex128), 0).tolist()  # noqa: E731
    # PyTorch's values: a leading -inf + aj becomes -inf + 0j; NaN spreads; +inf wins
    assert run([complex(-inf, 1), complex(-inf, 2), 1 + 1j]) == [complex(-inf, 0)] * 2 + [1 + 1j]
    assert all(cmath.isnan(v) for v in run([1 + 1j, complex(nan, 0), 2])[1:])
    assert all(cmath.isnan(v) for v in run([complex(-inf, nan), 1 + 0j]))  # NaN wins over -inf
    assert all(cmath.isnan(v) for v in run([complex(0, nan), 1 + 0j]))
    assert run([complex(inf, 1), 1 + 0j]) == [complex(inf, 1)] * 2
    both = run([complex(inf, 0), complex(inf, 1)])[1]
    assert both.real == inf and abs(both.imag - math.pi / 4) < 1e-12  # log(e^inf (1 + e^i)) as a plain log
    # the imaginary part is the larger operand's plus the correction's, not wrapped to (-pi, pi]
    # (4j plus arg(1 + e^{-4i}) = pi - 2: 2 + pi, where the principal log gives 2 - pi)
    assert abs(run([0j, 4j])[1].imag - (4 + math.pi - 2)) < 1e-12


def test_logcumsumexp_complex_0d_is_copied():
    z = fb.tensor(complex(-math.inf, 1.0))
    assert fb.logcumsumexp(z, 0).item() == complex(-math.inf, 1.0)


# -- matrix_exp ------------------------------------------------------------------------------

def test_pade_coefficients_are_highams():
    assert pade_coefficients(13)[0] == 64764752532480000.0 and pade_coefficients(13)[-2:] == (182.0, 1.0)
    assert pade_coefficients(3) == (120.0, 60.0, 12.0, 1.0)
    assert degree_and_squarings(0.01, True) == (3, 0)
    assert degree_and_squarings(5.0, True) == (13, 0)
    assert degree_and_squarings(5.371920351148152 * 8, True) == (13, 3)
    assert degree_and_squarings(4.0, False) == (7, 1)


@pytest.mark.parametrize("impl", ["kernel", "composite"])
@pytest.mark.parametrize("dtype, tol", [(fb.float64, 1e-12), (fb.complex128, 1e-12), (fb.float32, 3e-6),
                                        (fb.complex64, 3e-6)])
@pytest.mark.parametrize("scale", [1e-3, 0.5, 3.0, 20.0])
def test_matrix_exp_against_scipy(impl, dtype, tol, scale):
    rng = np.random.default_rng(int(scale * 1000))
    a = rng.standard_normal((3, 4, 4)) * scale
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal((3, 4, 4)) * scale
    a[1] *= 1e-3  # a batch mixing norms: each matrix gets its own squarings
    fn = fb.matrix_exp if impl == "kernel" else _matrix_exp
    got = fn(fb.tensor(a, dtype=dtype)).numpy().astype(np.complex128)
    ref = sla.expm(a)
    err = np.abs(got - ref).max(axis=(-2, -1)) / np.abs(ref).max(axis=(-2, -1))
    assert (err < tol * max(1.0, scale)).all(), err


def test_matrix_exp_rotation_and_diagonal():
    t = 0.7
    R = fb.linalg.matrix_exp(fb.tensor([[0.0, t], [-t, 0.0]], dtype=fb.float64)).numpy()
    np.testing.assert_allclose(R, [[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]], rtol=1e-14, atol=1e-15)
    D = fb.tensor([[1.0, 0.0], [0.0, -2.0]], dtype=fb.float64).matrix_exp().numpy()
    np.testing.assert_allclose(D, np.diag([math.e, math.exp(-2)]), rtol=1e-14, atol=1e-16)


def test_matrix_exp_shapes_dtypes_and_non_finite():
    assert tuple(fb.matrix_exp(fb.zeros(2, 0, 0)).shape) == (2, 0, 0)
    assert tuple(fb.matrix_exp(fb.zeros(0, 3, 3)).shape) == (0, 3, 3)
    for dt in (fb.float16, fb.bfloat16):
        x = fb.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=dt)
        assert x.matrix_exp().dtype is dt
        np.testing.assert_allclose(x.matrix_exp().float().numpy(), sla.expm(x.float().numpy()), rtol=3e-2)
    batch = fb.tensor([[[math.nan, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    for fn in (fb.matrix_exp, _matrix_exp):
        out = fn(batch).numpy()
        assert np.isnan(out[0]).all()  # PyTorch: a non-finite matrix gives NaN everywhere
        np.testing.assert_array_equal(out[1], np.eye(2))


@pytest.mark.parametrize("make, message", [
    (lambda: fb.ones(3, 4), "linalg.matrix_exp: A must be batches of square matrices, but they are 3 by 4 matrices"),
    (lambda: fb.ones(3), "linalg.matrix_exp: The input tensor A must have at least 2 dimensions."),
    (lambda: fb.ones(2, 2, dtype=fb.int64), "linalg.matrix_exp: Expected a floating point or complex tensor as "
                                             "input. Got Long"),
])
def test_matrix_exp_errors(make, message):
    with pytest.raises(RuntimeError, match=message.replace(".", r"\.")):
        fb.linalg.matrix_exp(make())
