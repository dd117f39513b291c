"""The MPI engine: mpi4py on contiguous numpy buffers, nonblocking everywhere so that every wait has a deadline.

Data moves as raw bytes (``MPI.BYTE``) wherever nothing is computed, so every dtype travels, bfloat16
included; reductions use MPI's own typed reductions, and float16/bfloat16 (which MPI has no type for)
are reduced in float32 and rounded once, as flambeau reduces half precision everywhere.
"""
from __future__ import annotations

import atexit
from typing import Any

import numpy as np

from ._types import ReduceOp

_MPI: Any = None
_BROKEN = False  # a wait timed out: requests are left pending, so MPI_Finalize could hang at exit

INSTALL_HINT = "pip install mpi4py mpich"


def is_available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported."""
    if _MPI is not None:
        return True
    import importlib.util

    try:
        return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):
        return False


def load() -> Any:
    """``mpi4py.MPI``, initialised; a clear error naming what to install when mpi4py is missing."""
    global _MPI
    if _MPI is not None:
        return _MPI
    try:
        import mpi4py
    except ImportError as e:
        raise RuntimeError(
            f"the 'mpi' backend of flambeau.distributed needs mpi4py and an MPI library: {INSTALL_HINT} "
            "(or pip install 'flambeau-distributed[mpi]')") from e
    # We finalize ourselves (at exit, unless a peer died: MPI_Finalize would then wait for it forever).
    mpi4py.rc.finalize = False
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:  # mpi4py without a loadable MPI library
        raise RuntimeError(f"mpi4py is installed but found no MPI library ({e}): {INSTALL_HINT}") from e
    _MPI = MPI
    atexit.register(_finalize)
    return MPI


def mark_broken() -> None:
    global _BROKEN
    _BROKEN = True


def _finalize() -> None:
    if _MPI is not None and not _BROKEN and _MPI.Is_initialized() and not _MPI.Is_finalized():
        _MPI.Finalize()


def test_all(requests: list) -> bool:
    return _MPI.Request.Testall(requests)


def raw(a: np.ndarray) -> list:
    """A contiguous array as an MPI message of bytes."""
    return [a.reshape(-1).view(np.uint8), _MPI.BYTE]


# numpy dtype -> mpi4py datatype name, for the reductions that compute.
_TYPED = {
    "bool": "C_BOOL", "uint8": "UINT8_T", "int8": "INT8_T", "int16": "INT16_T", "int32": "INT32_T",
    "int64": "INT64_T", "float32": "FLOAT", "float64": "DOUBLE", "complex64": "C_FLOAT_COMPLEX",
    "complex128": "C_DOUBLE_COMPLEX",
}
_HALF = ("float16", "bfloat16")


def typed(a: np.ndarray) -> list:
    return [a.reshape(-1), getattr(_MPI, _TYPED[a.dtype.name])]


def mpi_op(op: ReduceOp, dtype: np.dtype) -> Any:
    """The MPI reduction for ``op`` on ``dtype`` (AVG reduces with SUM and divides afterwards)."""
    name = dtype.name
    if name == "bool":
        return {ReduceOp.SUM: _MPI.LOR, ReduceOp.AVG: _MPI.LOR, ReduceOp.MAX: _MPI.LOR, ReduceOp.BOR: _MPI.LOR,
                ReduceOp.PRODUCT: _MPI.LAND, ReduceOp.MIN: _MPI.LAND, ReduceOp.BAND: _MPI.LAND,
                ReduceOp.BXOR: _MPI.LXOR}[op]
    return {ReduceOp.SUM: _MPI.SUM, ReduceOp.AVG: _MPI.SUM, ReduceOp.PRODUCT: _MPI.PROD, ReduceOp.MIN: _MPI.MIN,
            ReduceOp.MAX: _MPI.MAX, ReduceOp.BAND: _MPI.BAND, ReduceOp.BOR: _MPI.BOR, ReduceOp.BXOR: _MPI.BXOR}[op]


def check_op(op: ReduceOp, dtype: np.dtype, what: str) -> None:
    """Refuse a reduction that the dtype has no meaning for, before anything is sent."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{what}: op must be a dist.ReduceOp, got {type(op).__name__}")
    if op is ReduceOp.PREMUL_SUM:
        raise ValueError(f"{what}: ReduceOp.PREMUL_SUM is only available with the NCCL backend")
    kind = dtype.kind
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "biu":
        raise ValueError(f"{what}: ReduceOp.{op.name} takes integer or bool tensors, got {dtype_name(dtype)}")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and kind == "c":
        raise ValueError(f"{what}: ReduceOp.{op.name} is not defined for complex tensors ({dtype_name(dtype)})")


def dtype_name(dtype: np.dtype) -> str:
    return "flambeau." + dtype.name


def reduce_dtype(dtype: np.dtype) -> np.dtype | None:
    """The dtype a reduction computes in when MPI cannot reduce ``dtype`` itself (float32 for halves)."""
    return np.dtype(np.float32) if dtype.name in _HALF else None


def finish_avg(a: np.ndarray, n: int) -> None:
    """Divide a summed buffer by the group size in place (truncating toward zero for integers)."""
    if a.dtype.kind in "fc":
        a /= n
    elif a.dtype.kind in "iu":
        q = np.abs(a) // n
        a[...] = np.where(a < 0, -q, q)
