"""Dtype arithmetic every array-module backend needs: scalars fitted into a dtype, the dtype a
computation runs in, and the dtype two operands compare in.

Host-side numpy dtypes only (CuPy, and any numpy-like module, shares them), so nothing here touches
device memory.
"""
from __future__ import annotations

from typing import Any

import numpy as np

#: numpy names of the half-precision types (bfloat16 is ml_dtypes', of numpy kind 'V').
HALF_TYPES = ("float16", "bfloat16")


def fitted(value: Any, dtype: np.dtype) -> Any:
    """A Python number as ``dtype`` holds it: integers wrap (-1 into uint8 is 255), as on the CPU.

    Other values (floats, complex numbers, bools, and any value for a non-integer dtype) are
    returned unchanged: the store into the array converts them.
    """
    if isinstance(value, (bool, np.bool_)) or dtype.kind not in "iu":
        return value
    if isinstance(value, (int, np.integer)):
        bits = dtype.itemsize * 8
        v = int(value) & ((1 << bits) - 1)
        return v - (1 << bits) if dtype.kind == "i" and v >= 1 << (bits - 1) else v
    return value


def work_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic runs in: half types in float32, rounded once at the store (as PyTorch's
    kernels compute them; numpy's own half loops are slow and round every step)."""
    return np.dtype(np.float32) if dtype.name in HALF_TYPES else dtype


def is_floating(dtype: np.dtype) -> bool:
    """Floating or complex: ml_dtypes' bfloat16 has numpy kind 'V', not 'f'."""
    return dtype.kind in "fc" or dtype.name in HALF_TYPES


def comparison_dtype(array_dtypes: list[np.dtype], scalars: list[Any]) -> np.dtype:
    """The dtype two operands compare in: the arrays' promoted dtype, widened only where a Python
    scalar's kind does not fit it (scalars are weak, as in PyTorch; the core has cast 0-d tensors)."""
    try:
        dt = np.result_type(*array_dtypes)
    except TypeError:  # ml_dtypes before 0.7 promotes bfloat16 with neither integers nor float16
        floats = [d for d in array_dtypes if is_floating(d)]
        dt = floats[0] if len(set(floats)) == 1 else np.dtype(np.float32)
    for a in scalars:
        if isinstance(a, float) and dt.kind in "biu":
            dt = np.dtype(np.float64)
        if isinstance(a, complex) and dt.kind != "c":
            dt = np.dtype(np.complex128)
        if isinstance(a, int) and not isinstance(a, bool) and dt.kind == "b":
            dt = np.dtype(np.int64)
    return work_dtype(dt)
