"""The four-step split of one long complex FFT (``kernels._fft_four_step``) against numpy's direct
transform: every norm, both directions, strided input, lengths that split and ones that do not."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu.kernels import _fft_four_step as four_step

pocketfft = pytest.importorskip("scipy.fft._pocketfft").pypocketfft


def _signal(n: int, dtype=np.complex128, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


@pytest.mark.parametrize("n", [1 << 16, 3 * (1 << 15), 5 ** 7, 2 * 3 * 5 * 7 * 11 * 13 * 17])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("inorm", [0, 1, 2])
def test_matches_the_direct_transform(n, forward, inorm):
    x = _signal(n)
    out = np.empty_like(x)
    assert four_step.c2c(pocketfft, x, out, forward, inorm, 2)
    scale = {0: 1.0, 1: 1 / np.sqrt(n), 2: 1.0 / n}[inorm]
    want = (np.fft.fft(x) if forward else np.fft.ifft(x) * n) * scale
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-9 * np.abs(want).max())


def test_strided_input_and_single_precision():
    x = _signal(1 << 18, np.complex64)[::2]  # 2^17 points, every other one
    out = np.empty(x.shape, np.complex64)
    assert four_step.c2c(pocketfft, x, out, True, 0, 1)
    want = np.fft.fft(x.astype(np.complex128))
    assert np.abs(out - want).max() <= 1e-6 * np.abs(want).max()


def test_declines_lengths_without_a_useful_factor():
    assert four_step.split(65537) is None  # a prime
    out = np.zeros(65537, np.complex128)
    assert not four_step.c2c(pocketfft, _signal(65537), out, True, 0, 1)
    assert not out.any()
    assert four_step.split(1 << 20) == 256


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_flambeau_fft_of_one_long_line(norm):
    x = _signal(1 << 17, seed=1)
    t = fb.from_numpy(x.reshape(1, -1, 1))
    got = fb.fft.fft(t, dim=1, norm=norm).numpy()
    want = np.fft.fft(x, norm=norm).reshape(1, -1, 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max())
    back = fb.fft.ifft(fb.fft.fft(t, dim=1, norm=norm), dim=1, norm=norm).numpy()
    np.testing.assert_allclose(back, x.reshape(1, -1, 1), atol=1e-9)


def test_the_kernels_threshold_is_the_modules_and_the_module_loads_at_first_use():
    # fft_ops keeps its own copy of the threshold so that `import flambeau` need not import the
    # four-step module; the two must agree, and a fresh import must leave the module out.
    import subprocess
    import sys

    from flambeau_cpu.kernels import fft_ops

    assert fft_ops._FOUR_STEP_MIN_POINTS == four_step.MIN_POINTS
    code = "import sys, flambeau; print('flambeau_cpu.kernels._fft_four_step' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
