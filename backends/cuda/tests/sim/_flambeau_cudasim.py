"""TEST DOUBLE: the ``cudasim`` device, flambeau_cuda's backend over the numpy stand-in for CuPy.

Registered through ``flambeau_cudasim_testdouble-0.1.0.dist-info`` in this folder, which only the
test session puts on ``sys.path`` (tests/conftest.py, or PYTHONPATH for the conformance kit).
"""
from __future__ import annotations


def create_backend():
    import _fake_cupy

    from flambeau_cuda._backend import CudaBackend

    return CudaBackend(_fake_cupy, name="cudasim")
