"""flambeau.fft through both of the CPU backend's FFT libraries: MKL (the optional ``mkl`` extra,
through mkl_fft) and scipy's pocketfft (the fallback, with the four-step split for long lines).

The conformance kit checks whichever path the environment has; this runs every transform through
each path against numpy.fft in float64, with padding and cropping, every norm, strided and real
inputs, and single precision kept single."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu.kernels import fft_ops


@pytest.fixture(params=["mkl", "pocketfft"])
def fft_path(request, monkeypatch):
    if request.param == "mkl":
        if fft_ops._mkl() is None:
            pytest.skip("mkl_fft is not installed (the backend's optional mkl extra)")
        monkeypatch.setattr(fft_ops, "_MKL_POINTS", 0)  # MKL for the small test shapes too
    else:
        monkeypatch.setattr(fft_ops, "_MKL", None)
    return request.param


def _complex(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(got, want, dtype):
    tol = 2e-5 if dtype in (np.complex64, np.float32) else 1e-10
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 6, 13])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_along_a_dim(fft_path, name, n, norm):
    x = _complex((4, 9, 3))
    got = getattr(fb.fft, name)(fb.from_numpy(x), n=n, dim=1, norm=norm).numpy()
    _close(got, getattr(np.fft, name)(x, n=n, axis=1, norm=norm), np.complex128)


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize("s,dim", [(None, None), (None, (0, 2)), ((5, 2), (2, 0)), ((3,), (-1,))])
def test_c2c_over_several_dims(fft_path, name, s, dim):
    x = _complex((4, 3, 6), seed=1)
    got = getattr(fb.fft, name)(fb.from_numpy(x), s=s, dim=dim, norm="ortho").numpy()
    _close(got, getattr(np.fft, name)(x, s=s, axes=dim, norm="ortho"), np.complex128)


def test_single_precision_strided_and_real_inputs(fft_path):
    x = _complex((6, 40), np.complex64, seed=2)[:, ::3]  # a strided complex64 view
    _close(fb.fft.fft(fb.from_numpy(x)).numpy(), np.fft.fft(x.astype(np.complex128)), np.complex64)
    r = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32)
    _close(fb.fft.fft(fb.from_numpy(r), dim=0).numpy(), np.fft.fft(r.astype(np.float64), axis=0), np.complex64)
    ints = np.arange(10, dtype=np.int64)
    _close(fb.fft.ifft(fb.from_numpy(ints)).numpy(), np.fft.ifft(ints), np.complex64)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_real_transforms(fft_path, norm):
    r = np.random.default_rng(4).standard_normal((3, 10))
    _close(fb.fft.rfft(fb.from_numpy(r), n=12, norm=norm).numpy(), np.fft.rfft(r, n=12, norm=norm), np.complex128)
    c = np.fft.rfft(r)
    _close(fb.fft.irfft(fb.from_numpy(c), n=10, norm=norm).numpy(), np.fft.irfft(c, n=10, norm=norm), np.float64)
    _close(fb.fft.rfftn(fb.from_numpy(r), s=(4, 6), norm=norm).numpy(),
           np.fft.rfftn(r, s=(4, 6), axes=(0, 1), norm=norm), np.complex128)
    c2 = np.fft.rfftn(r)
    _close(fb.fft.irfftn(fb.from_numpy(c2), s=(3, 10), norm=norm).numpy(),
           np.fft.irfftn(c2, s=(3, 10), axes=(0, 1), norm=norm), np.float64)


def test_one_long_line(fft_path):
    x = _complex(1 << 17, np.complex64, seed=5)  # long enough for the four-step split without MKL
    got = fb.fft.fft(fb.from_numpy(x)).numpy()
    _close(got, np.fft.fft(x.astype(np.complex128)), np.complex64)
    back = fb.fft.ifft(fb.fft.fft(fb.from_numpy(x), norm="forward"), norm="forward").numpy()
    _close(back, x.astype(np.complex128), np.complex64)


def test_out_argument_is_written_in_place(fft_path):
    x = _complex((2, 8), seed=6)
    out = fb.empty((2, 8), dtype=fb.complex128)
    version = out._version_counter[0]
    result = fb.fft.fft(fb.from_numpy(x), out=out)
    assert result is out and out._version_counter[0] > version
    _close(out.numpy(), np.fft.fft(x), np.complex128)


def test_small_transforms_skip_mkl_and_large_ones_use_it(monkeypatch):
    calls = []

    class Recorder:
        def __getattr__(self, name):
            def transform(x, n, axis, norm, out):
                calls.append(name)
                out[...] = np.fft.fft(x, n, axis, norm)
            return transform

    monkeypatch.setattr(fft_ops, "_MKL", Recorder())
    small = _complex(fft_ops._MKL_POINTS - 1)
    _close(fb.fft.fft(fb.from_numpy(small)).numpy(), np.fft.fft(small), np.complex128)
    assert calls == []
    large = _complex(fft_ops._MKL_POINTS)
    _close(fb.fft.fft(fb.from_numpy(large)).numpy(), np.fft.fft(large), np.complex128)
    assert calls == ["fft"]

