"""``fb.cuda`` always resolves, as ``torch.cuda`` does on a CPU build (flambeau/_cuda_absent.py)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from flambeau import _cuda_absent


def _cuda_installed() -> bool:
    try:
        metadata.distribution(_cuda_absent.DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_stand_in_answers_like_a_cpu_build_of_pytorch():
    cuda = _cuda_absent.stand_in()
    assert cuda.is_available() is False and cuda.is_initialized() is False and cuda.device_count() == 0
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(cuda, name)(0) is None
    for name in ("seed", "seed_all", "empty_cache"):
        assert getattr(cuda, name)() is None
    for name in ("current_device", "synchronize", "get_device_name", "memory_allocated"):
        with pytest.raises(AssertionError, match="flambeau-backend-cuda.*is not installed.*cuda12"):
            getattr(cuda, name)()
    with pytest.raises(AttributeError):
        cuda.no_such_function  # noqa: B018


@pytest.mark.skipif(_cuda_installed(), reason="flambeau-backend-cuda is installed here")
def test_fb_cuda_without_the_distribution_in_a_fresh_interpreter():
    code = textwrap.dedent("""
        import sys, flambeau as fb
        assert "flambeau.cuda" not in sys.modules
        device = "cuda" if fb.cuda.is_available() else "cpu"   # the idiom every device-agnostic script uses
        assert device == "cpu" and fb.cuda.device_count() == 0
        assert fb.cuda is fb.cuda                                # resolved once
        assert "flambeau.cuda" not in sys.modules                # the stand-in is no module to import
        try:
            import flambeau.cuda
        except ModuleNotFoundError as e:
            assert "flambeau-backend-cuda" in str(e)
        else:
            raise AssertionError("import flambeau.cuda worked without its distribution")
        try:
            fb.no_such_name
        except AttributeError as e:
            assert "no attribute 'no_such_name'" in str(e)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_a_broken_install_is_not_hidden_by_the_stand_in(monkeypatch):
    # flambeau.cuda present but one of its own imports missing: that error, not a quiet stand-in
    def fail(name):
        raise ModuleNotFoundError("No module named 'flambeau_cuda._runtime'", name="flambeau_cuda._runtime")

    monkeypatch.setattr(_cuda_absent.importlib, "import_module", fail)
    with pytest.raises(ModuleNotFoundError, match="flambeau_cuda._runtime"):
        _cuda_absent.resolve()
