"""Argument checks shared by the ``flambeau.linalg`` declarations, with PyTorch's wording."""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops.meta import type_name


def check_float(op: str, A: Tensor, name: str = "input", low_precision: bool = False) -> None:
    """Linear algebra runs on float32/float64 and the complex types only; the norms and vecdot
    (``low_precision``) on float16 and bfloat16 too, accumulating in float32, as in PyTorch."""
    d = A._dtype
    if d._category < _dtypes._FLOAT:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as {name}. Got {type_name(d)}")
    if not low_precision and d.itemsize < 4 or (d._category == _dtypes._COMPLEX and d.itemsize < 8):
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {type_name(d)}")


def check_matrix(op: str, A: Tensor, name: str = "A") -> None:
    if A._data.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def check_square(op: str, A: Tensor, name: str = "A") -> None:
    check_matrix(op, A, name)
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {m} by {n} matrices")


def square_float(op: str, A: Tensor) -> tuple[int, ...]:
    """The usual checks of a function of one square matrix; returns its shape."""
    check_square(op, A)
    check_float(op, A)
    return tuple(A._data.shape)


def matrix_float(op: str, A: Tensor) -> tuple[int, ...]:
    check_matrix(op, A)
    check_float(op, A)
    return tuple(A._data.shape)


def same_dtype(op: str, A: Tensor, B: Tensor, a: str = "A", b: str = "B") -> None:
    if A._dtype is not B._dtype:
        raise RuntimeError(f"{op}: Expected {a} and {b} to have the same dtype, but found {a} of type "
                           f"{type_name(A._dtype)} and {b} of type {type_name(B._dtype)} instead")


def check_uplo(UPLO: Any) -> None:
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def broadcast_batch(op: str, a: tuple, b: tuple) -> tuple[int, ...]:
    """The broadcast of two batch shapes (PyTorch's error when they do not broadcast)."""
    from ..ops.meta import broadcast_shapes

    return broadcast_shapes(a, b)


class LinAlgError(RuntimeError):
    """A linear algebra routine failed on the values it was given (a singular matrix, a matrix
    that is not positive-definite...); PyTorch's ``torch.linalg.LinAlgError``."""

    __module__ = "flambeau.linalg"
