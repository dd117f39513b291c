"""Without CuPy, without a driver, without a GPU: flambeau.cuda says so, and nothing else breaks."""
from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import flambeau as fb
import flambeau.cuda as cuda
from flambeau_cuda import _runtime


@pytest.fixture
def cupy_as(monkeypatch):
    """Replace ``import cupy`` by a given module (None: not installed) and forget the cached probe."""
    def use(module):
        monkeypatch.setitem(sys.modules, "cupy", module)
        _runtime._reset_for_tests()
    yield use
    _runtime._reset_for_tests()


def _fake_cupy_module(count=None, error=None):
    def get_device_count():
        if error is not None:
            raise error
        return count
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))


NEEDS_DEVICE = [cuda.current_device, cuda.synchronize, cuda.get_device_name, cuda.get_device_properties,
                cuda.memory_allocated, cuda.max_memory_allocated, cuda.memory_reserved, cuda.reset_peak_memory_stats,
                cuda.current_stream, cuda.Stream, cuda.Event, cuda.initial_seed, cuda.init, cuda.mem_get_info,
                lambda: cuda.set_device(0), lambda: cuda.device(0).__enter__(),
                lambda: cuda.stream(object()).__enter__()]


@pytest.mark.parametrize("call", NEEDS_DEVICE)
def test_without_cupy_device_use_names_the_extra_to_install(cupy_as, call):
    cupy_as(None)
    with pytest.raises(AssertionError, match=r"flambeau-backend-cuda\[cuda12\]"):
        call()


def test_without_cupy_nothing_is_available_and_seeding_is_deferred(cupy_as):
    cupy_as(None)
    assert cuda.is_available() is False
    assert cuda.is_initialized() is False
    assert cuda.device_count() == 0
    cuda.manual_seed(0)  # PyTorch defers seeding until CUDA starts: no error without it
    cuda.manual_seed_all(0)
    cuda.seed()
    cuda.empty_cache()
    with cuda.device(None):  # None changes nothing, as PyTorch's
        pass
    with cuda.stream(None):
        pass


def test_no_driver_is_pytorchs_error(cupy_as):
    cupy_as(_fake_cupy_module(error=RuntimeError("cudaErrorInsufficientDriver")))
    assert cuda.is_available() is False and cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver on your system"):
        cuda.current_device()


def test_no_gpu_is_pytorchs_error(cupy_as):
    cupy_as(_fake_cupy_module(count=0))
    assert cuda.is_available() is False
    with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
        cuda.synchronize()


def test_the_probe_is_cached_and_reports_the_same_error(cupy_as):
    cupy_as(None)
    first = _runtime.unavailable_reason()
    assert first is not None and first.kind == "no-cupy"
    assert _runtime.unavailable_reason() is first


def _cupy_importable() -> bool:
    try:
        import cupy  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.mark.skipif(not _cupy_importable(), reason="CuPy is not installed here (pip install cupy-cuda12x to check)")
def test_real_cupy_without_a_driver_is_not_available_and_does_not_crash():
    _runtime._reset_for_tests()
    reason = _runtime.unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is present: this checks the machine without one")
    assert cuda.is_available() is False
    assert reason.kind in ("no-driver", "no-gpu")


def test_using_the_device_names_the_reason():
    if cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(fb.plugins.BackendUnavailable, match="flambeau-backend-cuda"):
        fb.zeros(2, device="cuda")


def _run(code: str, env=None) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_flambeau_loads_neither_cupy_nor_the_backend():
    got = _run("import json, sys, warnings\n"
               "warnings.simplefilter('error')\n"  # no warning at import either
               "import flambeau, flambeau.cuda\n"
               "print(json.dumps({'cupy': 'cupy' in sys.modules, 'backend': 'flambeau_cuda._backend' in sys.modules,"
               " 'tensor': flambeau.ones(2).sum().item()}))")
    assert got == {"cupy": False, "backend": False, "tensor": 2.0}


def test_flambeau_info_says_why_cuda_is_not_usable():
    if cuda.is_available():
        pytest.skip("a GPU is present")
    out = subprocess.run([sys.executable, "-m", "flambeau", "info"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.strip().startswith("cuda: flambeau-backend-cuda"))
    assert ("no CUDA driver found" in line) if _cupy_importable() else ("CuPy is not installed" in line)


def test_import_flambeau_cuda_without_the_distribution_names_it():
    # The finder core-tensor installs last on sys.meta_path is what a missing distribution reaches.
    from flambeau._missing import MissingSubpackageFinder

    with pytest.raises(ModuleNotFoundError, match="flambeau-backend-cuda"):
        MissingSubpackageFinder().find_spec("flambeau.cuda", None)
