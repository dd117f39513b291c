"""Cases for the BLAS-style products: addmm, addmv, addr, addbmm, baddbmm, vdot, outer, inner."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import excluding, promoted, same

#: The products accept every dtype but bool (integer ones included, as on PyTorch's CPU).
DTYPES = excluding(P.ALL, "bool")
WIDE = {"bfloat16": (3e-2, 1e-1), "float16": (4e-3, 2e-2)}


def _scales(dtype: str) -> list[dict]:
    """``beta``/``alpha`` pairs of the dtype's kind (PyTorch refuses float scales for integral results)."""
    if P.category(dtype) <= 1:
        return [{}, {"beta": 2, "alpha": 3}, {"beta": 0, "alpha": 2 if dtype == "uint8" else -1}]
    return [{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0, "alpha": -1.5}]


def _small(shape, dtype, layout="contiguous"):
    return Arg(shape, dtype, layout, low=-3, high=3)


def _scaled_samples(specs):
    """``specs``: (input, layout, a, layout, b, layout) triples of shapes, tried with each scale pair."""
    def samples(dtype: str) -> list[Sample]:
        out = []
        for (si, li, sa, la, sb, lb), kwargs in zip(specs * 3, [k for k in _scales(dtype) for _ in specs]):
            out.append(Sample((_small(si, dtype, li), _small(sa, dtype, la), _small(sb, dtype, lb)), kwargs))
        return out
    return samples


def _scaled_ref(product):
    def ref(input, a, b, beta=1, alpha=1):
        prod = product(a, b)
        if input.dtype == bool:
            return np.logical_or(np.logical_and(input, beta), np.logical_and(prod, alpha))
        base = np.zeros_like(prod) if beta == 0 else beta * input
        return base + alpha * prod
    return ref


def _addbmm_product(a, b):
    return np.matmul(a, b).sum(0)


def _outer_product(a, b):
    return np.multiply.outer(a, b)


def _f(shape, dtype="float32"):
    return Arg(shape, dtype)


def _errors(*items):
    return lambda: list(items)


def _addr_samples(dtype: str) -> list[Sample]:
    out = _scaled_samples([((3, 4), "transposed", (3,), "sliced", (4,), "contiguous"),
                           ((4,), "contiguous", (3,), "contiguous", (4,), "sliced"),
                           ((0, 2), "contiguous", (0,), "contiguous", (2,), "contiguous")])(dtype) \
        if dtype != "bool" else [Sample((Arg((3, 4), "bool"), Arg((3,), "bool"), Arg((4,), "bool"))),
                                 Sample((Arg((3, 4), "bool"), Arg((3,), "bool"), Arg((4,), "bool")),
                                        {"beta": False, "alpha": True})]
    if dtype == "float32":  # mixed dtypes promote
        out.append(Sample((_f((2, 3)), Arg((2,), "int64"), Arg((3,), "int64"))))
        out.append(Sample((_f((2, 3)), _f((2,)), Arg((3,), "float64"))))
    return out


def _vdot_ref(a, b):
    return np.asarray(np.vdot(a, b))


def _inner_ref(a, b):
    return np.asarray(np.inner(a, b))


def _pair_samples(specs):
    def samples(dtype: str) -> list[Sample]:
        return [Sample((_small(a, dtype, la), _small(b, dtype, lb))) for a, la, b, lb in specs]
    return samples


def cases() -> list[OpCase]:
    return [
        OpCase("addmm", DTYPES, _scaled_samples([
            ((3, 5), "contiguous", (3, 4), "contiguous", (4, 5), "transposed"),
            ((5,), "sliced", (3, 4), "transposed", (4, 5), "contiguous"),
            ((1, 1), "contiguous", (0, 4), "contiguous", (4, 2), "contiguous"),
            ((3, 2), "contiguous", (3, 0), "contiguous", (0, 2), "contiguous"),
        ]), _scaled_ref(np.matmul), same, tolerances=WIDE, errors=_errors(
            ErrorCase((_f((2, 5)), _f((2, 3)), _f((4, 5))), RuntimeError,
                      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
            ErrorCase((_f((2, 5)), _f((2, 3, 1)), _f((3, 5))), RuntimeError, "mat1 must be a matrix, got 3-D tensor"),
            ErrorCase((_f((3, 5)), _f((2, 3)), _f((3, 5))), RuntimeError,
                      "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
                      "dimension 0.  Target sizes: [2, 5].  Tensor sizes: [3, 5]"),
            ErrorCase((_f((2, 5), "float64"), _f((2, 3)), _f((3, 5))), RuntimeError,
                      "self and mat2 must have the same dtype, but got Double and Float"),
            ErrorCase((Arg((2, 5), "bool"), Arg((2, 3), "bool"), Arg((3, 5), "bool")), NotImplementedError,
                      "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
        )),
        OpCase("addmv", DTYPES, _scaled_samples([
            ((3,), "contiguous", (3, 4), "transposed", (4,), "sliced"),
            ((1,), "contiguous", (3, 4), "contiguous", (4,), "contiguous"),
            ((0,), "contiguous", (0, 4), "contiguous", (4,), "contiguous"),
        ]), _scaled_ref(np.matmul), same, tolerances=WIDE, errors=_errors(
            ErrorCase((_f((2,)), _f((2, 3)), _f((4,))), RuntimeError,
                      "size mismatch, got input (2), mat (2x3), vec (4)"),
            ErrorCase((_f((2,)), _f((2, 3, 1)), _f((3,))), RuntimeError,
                      "vector + matrix @ vector expected, got 1, 3, 1"),
            ErrorCase((_f((2,)), _f((2, 3)), _f((3,), "float64")), RuntimeError,
                      "addmv input tensors must have the same dtype, but got Float, Float, and Double"),
        )),
        OpCase("addr", P.ALL, _addr_samples, _scaled_ref(_outer_product), promoted, tolerances=WIDE,
               errors=_errors(
                   ErrorCase((_f((2, 3)), _f((2, 1)), _f((3,))), RuntimeError,
                             "addr: Expected 1-D argument vec1, but got 2-D"),
                   ErrorCase((_f((2, 3)), _f((2,)), _f((4,))), RuntimeError,
                             "The expanded size of the tensor (4) must match the existing size (3)"),
                   ErrorCase((Arg((2, 3), "int64"), Arg((2,), "int64"), Arg((3,), "int64")), RuntimeError,
                             "For integral input tensors, argument beta must not be a floating point number.",
                             {"beta": 0.5}),
               )),
        OpCase("addbmm", DTYPES, _scaled_samples([
            ((3, 5), "contiguous", (2, 3, 4), "contiguous", (2, 4, 5), "transposed"),
            ((5,), "sliced", (2, 3, 4), "sliced", (2, 4, 5), "contiguous"),
            ((3, 5), "contiguous", (0, 3, 4), "contiguous", (0, 4, 5), "contiguous"),
        ]), _scaled_ref(_addbmm_product), same, tolerances=WIDE, errors=_errors(
            ErrorCase((_f((2, 5)), _f((4, 2, 3)), _f((4, 4, 5))), RuntimeError,
                      "Incompatible matrix sizes for bmm (2x3 and 4x5)"),
            ErrorCase((_f((2, 5)), _f((4, 2, 3)), _f((3, 3, 5))), RuntimeError,
                      "batch1 and batch2 must have same number of batches, got 4 and 3"),
        )),
        OpCase("baddbmm", DTYPES, _scaled_samples([
            ((2, 3, 5), "contiguous", (2, 3, 4), "contiguous", (2, 4, 5), "transposed"),
            ((3, 1), "contiguous", (2, 3, 4), "transposed", (2, 4, 1), "sliced"),
            ((0, 3, 5), "contiguous", (0, 3, 4), "contiguous", (0, 4, 5), "contiguous"),
        ]), _scaled_ref(np.matmul), same, tolerances=WIDE, errors=_errors(
            ErrorCase((_f((4, 2, 5)), _f((4, 2, 3)), _f((4, 4, 5))), RuntimeError,
                      "Expected size for first two dimensions of batch2 tensor to be: [4, 3] but got: [4, 4]."),
            ErrorCase((_f((4, 2, 5)), _f((2, 3)), _f((3, 3, 5))), RuntimeError, "batch1 must be a 3D tensor"),
            ErrorCase((_f((4, 2, 5)), _f((4, 2, 3)), _f((4, 3, 5), "float64")), RuntimeError,
                      "expected scalar type Float but found Double"),
        )),
        OpCase("vdot", DTYPES, _pair_samples([((5,), "contiguous", (5,), "sliced"), ((0,), "contiguous", (0,),
                                                                                       "contiguous")]),
               _vdot_ref, same, tolerances=WIDE, errors=_errors(
                   ErrorCase((_f((3,)), _f((4,))), RuntimeError, "inconsistent tensor size"),
                   ErrorCase((_f((3, 1)), _f((3,))), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
                   ErrorCase((Arg((3,), "bool"), Arg((3,), "bool")), NotImplementedError,
                             "\"dot\" not implemented for 'Bool'"),
               )),
        OpCase("outer", P.ALL, _pair_samples([((3,), "sliced", (4,), "contiguous"), ((0,), "contiguous", (2,),
                                                                                       "contiguous")]),
               _outer_product, same, errors=_errors(
                   ErrorCase((_f((3, 1)), _f((4,))), RuntimeError, "outer: Expected 1-D argument self, but got 2-D"),
               )),
        OpCase("inner", DTYPES, _pair_samples([
            ((3, 4), "transposed", (2, 4), "contiguous"), ((4,), "sliced", (4,), "contiguous"),
            ((2, 3, 4), "contiguous", (4,), "contiguous"), ((), "contiguous", (2, 3), "contiguous"),
        ]), _inner_ref, same, tolerances=WIDE, errors=_errors(
            ErrorCase((_f((3, 2)), _f((4, 3))), RuntimeError,
                      "inner() the last dimension must match on both input tensors but got shapes [3, 2] and [4, 3]"),
            ErrorCase((_f((3, 2)), Arg((4, 2), "int64")), RuntimeError, "both inputs should have same dtype"),
        )),
    ]
