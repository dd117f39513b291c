"""Cases for ``matrix_exp``, against scipy's ``expm`` (run in float64/complex128)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .._case import Arg, ErrorCase, OpCase, Sample

DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
TOL = {"float16": (2e-2, 2e-2), "bfloat16": (8e-2, 8e-2), "float32": (2e-5, 2e-5), "complex64": (2e-5, 2e-5),
       "float64": (1e-10, 1e-12), "complex128": (1e-10, 1e-12)}


def _samples(dtype: str) -> list[Sample]:
    unit = {"low": -1.0, "high": 1.0}
    out = [
        Sample((Arg((3, 3), dtype, **unit),)),
        Sample((Arg((2, 4, 4), dtype, "transposed", **unit),)),
        Sample((Arg((1, 2, 2, 2), dtype, low=-0.01, high=0.01),), note="small norm: a low Padé degree"),
        Sample((Arg((2, 0, 0), dtype),)),
        Sample((Arg((1, 1), dtype, **unit),)),
    ]
    if dtype in ("float64", "complex128"):
        # a 1-norm past theta_13: scaled, then squared (each matrix of the batch by its own count)
        big = np.array([[[3.0, -2.0, 1.0], [0.5, 2.0, -3.0], [1.0, 1.0, -2.5]], np.eye(3) * 0.1])
        out.append(Sample((Arg((2, 3, 3), dtype, values=big),), note="squarings"))
    return out


def _ref(A: np.ndarray) -> np.ndarray:
    if A.size == 0:
        return A.copy()
    return sla.expm(A)


def _errors() -> list[ErrorCase]:
    op = "linalg.matrix_exp"
    return [
        ErrorCase((Arg((3, 4), "float32"),), RuntimeError,
                  f"{op}: A must be batches of square matrices, but they are 3 by 4 matrices"),
        ErrorCase((Arg((3,), "float32"),), RuntimeError, f"{op}: The input tensor A must have at least 2 dimensions."),
        ErrorCase((Arg((2, 2), "int64"),), RuntimeError,
                  f"{op}: Expected a floating point or complex tensor as input. Got Long"),
    ]


def cases() -> list[OpCase]:
    return [OpCase("matrix_exp", DTYPES, _samples, _ref, lambda s: s.args[0].dtype, errors=_errors, tolerances=TOL)]
