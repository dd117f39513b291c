"""Cases for ``view_as_real`` and ``view_as_complex``: views that read the same storage as another dtype;
and ``_conj``, the view with the conjugate bit (it reads the storage conjugated)."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same


def _samples(*specs):
    def samples(dtype: str) -> list[Sample]:
        return [Sample((Arg(shape, dtype, layout),)) for shape, layout in specs]

    return samples


def _as_real_ref(z):
    # a trailing dim of 1 re-read as two reals: numpy keeps the other byte strides, as PyTorch does
    return z[..., None].view(z.real.dtype)


def _conj_ref(z):
    """``np.conj(z)`` with ``z``'s strides (the view reads the same memory): the conjugate of the
    whole storage, viewed as ``z`` views it."""
    root = z
    while isinstance(root.base, np.ndarray):
        root = root.base
    flat = np.conj(np.ascontiguousarray(root)).reshape(-1)
    if not root.flags.c_contiguous or z.size == 0:
        return np.conj(z)
    offset = z.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(z.shape, z.dtype, buffer=flat, offset=offset, strides=z.strides)


def _as_complex_ref(x):
    return x.view(np.result_type(x.dtype, np.complex64))[..., 0]


def _as_real_errors():
    return [
        ErrorCase((Arg((3,), dtype),), RuntimeError, "view_as_real is only supported for complex tensors")
        for dtype in ("float32", "int64", "bool")
    ]


def _as_complex_errors():
    def err(shape, dtype, match, layout="contiguous"):
        return ErrorCase((Arg(shape, dtype, layout),), RuntimeError, match)

    return [
        err((3, 2), "int32", "view_as_complex is only supported for half, float and double tensors, but got a "
                             "tensor of scalar type: Int"),
        err((3, 2), "complex64", "but got a tensor of scalar type: ComplexFloat"),
        err((3, 2), "bfloat16", "but got a tensor of scalar type: BFloat16"),
        err((), "float32", "Input tensor must have one or more dimensions"),
        err((3, 3), "float64", "Tensor must have a last dimension of size 2"),
        err((3, 2), "float32", "Tensor must have a last dimension with stride 1", "transposed"),
        err((3, 2), "float64", "Tensor must have a last dimension with stride 1", "sliced"),
    ]


def cases() -> list[OpCase]:
    return [
        OpCase("_conj", P.COMPLEX,
               _samples(((3, 4), "contiguous"), ((3, 4), "transposed"), ((5,), "sliced"), ((), "contiguous"),
                        ((2, 0), "contiguous")),
               _conj_ref, same, upcast=False, check_strides=True),
        OpCase("view_as_real", P.COMPLEX,
               _samples(((3, 4), "contiguous"), ((3, 4), "transposed"), ((5,), "sliced"), ((), "contiguous"),
                        ((2, 0), "contiguous")),
               _as_real_ref, lambda s: P.to_real(same(s)), errors=_as_real_errors, upcast=False,
               check_strides=True),
        OpCase("view_as_complex", ("float32", "float64"),
               _samples(((3, 2), "contiguous"), ((2, 3, 2), "contiguous"), ((2,), "contiguous"),
                        ((0, 2), "contiguous")),
               _as_complex_ref, lambda s: P.to_complex(same(s)), errors=_as_complex_errors, upcast=False,
               check_strides=True),
    ]
