"""Matrix products through numpy's BLAS."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._quiet import quiet_all


def matmul(input, other, out):
    if out.ndim == 0:
        out[()] = np.matmul(input, other)
    else:
        np.matmul(input, other, out=out)


def mm(input, mat2, out):
    np.matmul(input, mat2, out=out)


def bmm(input, mat2, out):
    np.matmul(input, mat2, out=out)


def mv(input, vec, out):
    np.matmul(input, vec, out=out)


def dot(input, tensor, out):
    out[()] = np.dot(input, tensor)


# inf * 0 inside a product gives NaN without numpy's "invalid value encountered in matmul", as in PyTorch.
KERNELS: dict[str, Callable[..., Any]] = quiet_all({"matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot})
