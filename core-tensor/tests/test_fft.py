"""flambeau.fft beyond the conformance kit: numpy agreement over random shapes/n/dim/norm
(hypothesis), PyTorch's dtype rules, round trips, frequencies and shifts, errors, ``out=``."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb

NORMS = st.sampled_from([None, "backward", "ortho", "forward"])


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), n=st.one_of(st.none(), st.integers(1, 9)),
       norm=NORMS, which=st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]), data=st.data())
def test_one_dim_transforms_match_numpy(shape, n, norm, which, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(len(shape) * 7 + (n or 0))
    x = rng.standard_normal(shape)
    if which in ("fft", "ifft", "irfft", "hfft"):
        x = x + 1j * rng.standard_normal(shape)
    if which in ("irfft", "hfft") and n is None and x.shape[dim] == 1:
        n = 2  # a default length of 2 * (1 - 1) = 0 is an error (checked elsewhere)
    got = getattr(fb.fft, which)(fb.tensor(x), n, dim, norm).numpy()
    want = getattr(np.fft, which)(x, n, dim, norm)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=3), norm=NORMS,
       which=st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]),
       sized=st.booleans())
def test_n_dim_transforms_match_numpy(shape, norm, which, sized):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape) + (0 if which.startswith("rfft") else 1j * rng.standard_normal(shape))
    s = tuple(v + 1 for v in shape[-2:]) if sized else None
    if which.startswith("irfft") and s is None and shape[-1] == 1:
        s = (shape[-2], 2)
    kwargs = {} if s is None else {"s": s}
    if which.endswith("n") and s is not None:
        kwargs["dim"] = (-2, -1)
    got = getattr(fb.fft, which)(fb.tensor(x), norm=norm, **kwargs).numpy()
    np_kwargs = {("axes" if k == "dim" else k): v for k, v in kwargs.items()}
    want = getattr(np.fft, which)(x, norm=norm, **np_kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype,expected", [(fb.float32, fb.complex64), (fb.float64, fb.complex128),
                                            (fb.int64, fb.complex64), (fb.bool, fb.complex64),
                                            (fb.complex64, fb.complex64), (fb.complex128, fb.complex128)])
def test_result_dtypes(dtype, expected):
    x = fb.ones(4, dtype=dtype)
    assert fb.fft.fft(x).dtype == expected
    assert fb.fft.ifftn(x).dtype == expected
    assert fb.fft.irfft(x).dtype == expected.to_real()
    if not dtype.is_complex:
        assert fb.fft.rfft(x).dtype == expected


def test_round_trips():
    rng = np.random.default_rng(0)
    x = fb.tensor(rng.standard_normal((3, 8)), dtype=fb.float32)
    np.testing.assert_allclose(fb.fft.irfft(fb.fft.rfft(x), 8).numpy(), x.numpy(), atol=1e-5)
    np.testing.assert_allclose(fb.fft.ifft(fb.fft.fft(x, norm="ortho"), norm="ortho").real.numpy(), x.numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(fb.fft.irfftn(fb.fft.rfftn(x), x.shape).numpy(), x.numpy(), atol=1e-5)


def test_frequencies_and_shifts():
    np.testing.assert_allclose(fb.fft.fftfreq(5, 0.1).numpy(), np.fft.fftfreq(5, 0.1), rtol=1e-6)
    np.testing.assert_allclose(fb.fft.rfftfreq(6).numpy(), np.fft.rfftfreq(6), rtol=1e-6)
    assert fb.fft.fftfreq(4, dtype=fb.float64).dtype == fb.float64
    x = fb.arange(12).reshape(3, 4)
    assert fb.fft.fftshift(x).tolist() == np.fft.fftshift(x.numpy()).tolist()
    assert fb.fft.ifftshift(x, 1).tolist() == np.fft.ifftshift(x.numpy(), 1).tolist()
    assert fb.fft.ifftshift(fb.fft.fftshift(x)).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="fftfreq requires a floating point or complex dtype"):
        fb.fft.fftfreq(4, dtype=fb.int64)


def test_errors():
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "bad"'):
        fb.fft.fft(fb.ones(4), norm="bad")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        fb.fft.fft(fb.ones(4), n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        fb.fft.irfft(fb.ones(1, dtype=fb.complex64))
    with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no dimensions"):
        fb.fft.fft(fb.tensor(1.0))
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got ComplexFloat"):
        fb.fft.rfft(fb.ones(4, dtype=fb.complex64))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        fb.fft.fft(fb.ones(4, dtype=fb.float16))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        fb.fft.fftn(fb.ones(4, 4), dim=(0, 0))


def test_out_argument():
    out = fb.empty(4, dtype=fb.complex64)
    assert fb.fft.fft(fb.arange(4.0), out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.fft(np.arange(4.0)), rtol=1e-6)
