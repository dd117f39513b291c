"""Cases for matrix products: matmul, mm, bmm, mv, dot."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import excluding, same

#: Matrix products accept every dtype but bool (integer ones included, as on PyTorch's CPU).
DTYPES = excluding(P.ALL, "bool")


def _pairs(*specs):
    def samples(dtype: str) -> list[Sample]:
        small = {"low": -3, "high": 3}
        return [Sample((Arg(a, dtype, la, **small), Arg(b, dtype, lb, **small))) for a, la, b, lb in specs]

    return samples


def _dot_ref(x, y):
    return np.asarray(np.dot(x, y))


def _errors(*items):
    return lambda: list(items)


def _f(shape, dtype="float32"):
    return Arg(shape, dtype)


def cases() -> list[OpCase]:
    wide = {"bfloat16": (3e-2, 1e-1), "float16": (4e-3, 2e-2)}
    return [
        OpCase(
            "matmul",
            DTYPES,
            _pairs(
                ((3, 4), "contiguous", (4, 5), "transposed"),
                ((4,), "sliced", (4,), "contiguous"),
                ((4,), "contiguous", (4, 2), "contiguous"),
                ((3, 4), "transposed", (4,), "sliced"),
                ((2, 3, 4), "sliced", (4, 2), "contiguous"),
                ((2, 1, 3, 4), "contiguous", (5, 4, 2), "transposed"),
                ((0, 4), "contiguous", (4, 2), "contiguous"),
                ((3, 0), "contiguous", (0, 2), "contiguous"),
            ),
            np.matmul,
            same,
            tolerances=wide,
            errors=_errors(
                ErrorCase(
                    (_f((2, 3)), _f((4, 5))), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
                ),
                ErrorCase((_f(()), _f((3,))), RuntimeError, "both arguments to matmul need to be at least 1D"),
                ErrorCase(
                    (_f((2, 3)), _f((3, 2), "float64")), RuntimeError, "expected m1 and m2 to have the same dtype"
                ),
            ),
        ),
        OpCase(
            "mm",
            DTYPES,
            _pairs(
                ((3, 4), "contiguous", (4, 5), "contiguous"),
                ((3, 4), "transposed", (4, 2), "sliced"),
                ((0, 4), "contiguous", (4, 2), "transposed"),
                ((3, 0), "contiguous", (0, 2), "contiguous"),
            ),
            np.matmul,
            same,
            tolerances=wide,
            errors=_errors(
                ErrorCase(
                    (_f((2, 3)), _f((4, 5))), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
                ),
                ErrorCase((_f((3,)), _f((3, 2))), RuntimeError, "self must be a matrix"),
            ),
        ),
        OpCase(
            "bmm",
            DTYPES,
            _pairs(
                ((2, 3, 4), "contiguous", (2, 4, 5), "transposed"),
                ((2, 3, 4), "sliced", (2, 4, 1), "contiguous"),
                ((0, 3, 4), "contiguous", (0, 4, 2), "contiguous"),
            ),
            np.matmul,
            same,
            tolerances=wide,
            errors=_errors(
                ErrorCase(
                    (_f((2, 3, 4)), _f((3, 4, 5))),
                    RuntimeError,
                    "batch1 and batch2 must have same number of batches, got 2 and 3",
                ),
                ErrorCase((_f((3, 4)), _f((2, 4, 5))), RuntimeError, "batch1 must be a 3D tensor"),
            ),
        ),
        OpCase(
            "mv",
            DTYPES,
            _pairs(
                ((3, 4), "contiguous", (4,), "contiguous"),
                ((3, 4), "transposed", (4,), "sliced"),
                ((0, 4), "contiguous", (4,), "contiguous"),
            ),
            np.matmul,
            same,
            tolerances=wide,
            errors=_errors(ErrorCase((_f((3, 4)), _f((5,))), RuntimeError, "size mismatch")),
        ),
        OpCase(
            "dot",
            DTYPES,
            _pairs(((5,), "contiguous", (5,), "sliced"), ((0,), "contiguous", (0,), "contiguous")),
            _dot_ref,
            same,
            tolerances=wide,
            errors=_errors(
                ErrorCase((_f((3,)), _f((4,))), RuntimeError, "inconsistent tensor size"),
                ErrorCase((_f((3, 1)), _f((3,))), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
            ),
        ),
    ]
