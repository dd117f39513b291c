"""The CPU paths that decide what a decomposition costs: where with a Python float beside a
float tensor (C++ select, the number rounded once), float32 exp in C++ from one thread up, and
glibc's malloc set to reuse freed buffers (see flambeau_cpu._malloc)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import flambeau as fb
from flambeau_cpu.kernels import native

N = 300 * 257  # above native.GRAIN: the C++ paths' size


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("value", [0.6, -1e-40, 1.0 / 3, 65504.0, 3.4e38, 1e300, -1e300])
def test_where_with_an_inexact_float_selects_it_rounded(dtype, value):
    """where(c, x, number): numpy's where on the number, cast to x's dtype (what the numpy
    kernel computes); a number that overflows the dtype goes to numpy's where, unchanged."""
    rng = np.random.default_rng(0)
    x = rng.random(N).astype(dtype)
    cond = rng.random(N) > 0.5
    with np.errstate(over="ignore"):
        expected = np.where(cond, x, value).astype(dtype)
    got = fb.where(fb.from_numpy(cond), fb.from_numpy(x), value)
    np.testing.assert_array_equal(got.numpy(), expected)
    got = fb.where(fb.from_numpy(cond), value, fb.from_numpy(x))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got.numpy(), np.where(cond, value, x).astype(dtype))


def test_where_takes_the_select_path_for_an_inexact_float(monkeypatch):
    calls = []
    real = native._select_into
    monkeypatch.setattr(native, "_select_into", lambda *a: calls.append(1) or real(*a))
    x = fb.rand(N)
    fb.where(x > 0.5, x, 0.6)
    assert calls, "a float scalar that rounds in float32 should not send where to numpy (~20x slower)"
    assert native._as_operand(0.6, np.dtype(np.float32)).dtype == np.float32
    assert native._as_operand(1e300, np.dtype(np.float32)) is None  # overflow: numpy's where decides
    assert native._as_operand(float("nan"), np.dtype(np.float32)) is None
    assert native._as_operand(0.5, np.dtype(np.int32)) is None  # not a float result


def test_float32_exp_runs_in_cpp_on_one_thread(monkeypatch):
    calls = []
    real = native._unary
    monkeypatch.setattr(native, "_unary", lambda *a: calls.append(1) or real(*a))
    before = fb.get_num_threads()
    fb.set_num_threads(1)
    try:
        x = fb.randn(N)
        got = fb.exp(x)
    finally:
        fb.set_num_threads(before)
    assert calls
    np.testing.assert_allclose(got.numpy(), np.exp(x.numpy()), rtol=2e-7 * 8)


def _run(code: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_malloc_tuned_when_the_backend_loads_unless_the_user_chose():
    code = "import flambeau as fb; fb.ones(1); from flambeau_cpu import _malloc; print(_malloc._done)"
    import ctypes

    try:
        ctypes.CDLL(None).gnu_get_libc_version
    except AttributeError:
        pytest.skip("not glibc")
    assert _run(code) == "[True]"
    assert _run(code, FLAMBEAU_TUNE_MALLOC="0") == "[False]"
    assert _run(code, MALLOC_TRIM_THRESHOLD_="1000000") == "[False]"
    assert _run(code, GLIBC_TUNABLES="glibc.malloc.trim_threshold=1000000") == "[False]"
