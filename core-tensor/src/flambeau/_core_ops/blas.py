"""Declarations of the BLAS-style products: addmm, addmv, addr, addbmm, baddbmm, vdot, outer, inner.

The scaled-accumulate products (``beta * input + alpha * product``) are primitives: a backend
fuses the scaling into its matrix product. ``outer`` and ``inner`` are composites of ``mul`` and
``tensordot``. ``ger`` and ``chain_matmul`` are thin aliases in :mod:`flambeau._api_blas`.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import checked_scalar, fmt_shape, result_type, type_name
from ._docs_blas_other import DOCS
from .shape import result_of


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def expand_check(input: Tensor, target: tuple) -> None:
    """PyTorch's error when ``input`` cannot be expanded to the product's shape."""
    shape = input._data.shape
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(flambeau.{type_name(input._dtype)}Tensor{{{fmt_shape(shape)}}}, size={fmt_shape(target)}): the "
            f"number of sizes provided ({len(target)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")
    offset = len(target) - len(shape)
    for i, size in enumerate(shape):
        if size != 1 and size != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the existing size ({size}) at "
                f"non-singleton dimension {offset + i}.  Target sizes: {fmt_shape(target)}.  "
                f"Tensor sizes: {fmt_shape(shape)}")


_REAL = (int, float)


def _check_scalars(d: Any, beta: Any, alpha: Any) -> None:
    if type(beta) in _REAL and type(alpha) in _REAL:
        if d._category < _dtypes._COMPLEX:  # 1000 for uint8: PyTorch's checked conversion refuses it
            checked_scalar(beta, d)
            checked_scalar(alpha, d)
        return
    for name, value in (("beta", beta), ("alpha", alpha)):
        if not isinstance(value, (bool, int, float, complex)):
            raise TypeError(f"{name} must be a number, not {type(value).__name__}")
        if isinstance(value, complex) and not d.is_complex:
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
        checked_scalar(value, d)


def _matrix(which: str, t: Tensor) -> None:
    if t._data.ndim != 2:
        raise RuntimeError(f"{which} must be a matrix, got {t._data.ndim}-D tensor")


def _addmm_meta(input: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1, alpha: Any = 1) -> tuple:
    s1, s2 = mat1._data.shape, mat2._data.shape
    if len(s1) != 2:
        _matrix("mat1", mat1)
    if len(s2) != 2:
        _matrix("mat2", mat2)
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and {s2[0]}x{s2[1]})")
    d = input._dtype
    if not (d is mat1._dtype is mat2._dtype) or d is _dtypes.bool:
        if mat1._dtype is not mat2._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_name(mat1._dtype)} and "
                               f"{type_name(mat2._dtype)}")
        if d is not mat1._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_name(d)} and "
                               f"{type_name(mat1._dtype)}")
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if type(beta) not in _REAL or type(alpha) not in _REAL or d._category == _dtypes._INT:
        _check_scalars(d, beta, alpha)
    shape = (s1[0], s2[1])
    if input._data.shape != shape:
        expand_check(input, shape)
    return shape, d


def _addmv_meta(input: Tensor, mat: Tensor, vec: Tensor, beta: Any = 1, alpha: Any = 1) -> tuple:
    if mat._data.ndim != 2 or vec._data.ndim != 1 or input._data.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {mat._data.ndim}, "
                           f"{vec._data.ndim}")
    n, k = mat._data.shape
    size = input._data.shape[0] if input._data.ndim else 1
    if k != vec._data.shape[0] or size not in (1, n):
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({n}x{k}), vec ({vec._data.shape[0]})")
    if not (input._dtype is mat._dtype is vec._dtype):
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{type_name(input._dtype)}, {type_name(mat._dtype)}, and {type_name(vec._dtype)}")
    if input._dtype is _dtypes.bool:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    _check_scalars(input._dtype, beta, alpha)
    return (n,), input._dtype


def _addr_meta(input: Tensor, vec1: Tensor, vec2: Tensor, beta: Any = 1, alpha: Any = 1) -> tuple:
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    d = result_type(input, vec1, vec2)
    if d is _dtypes.bool:
        if not isinstance(beta, (bool, int)) or not isinstance(alpha, (bool, int)):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
    elif not d.is_floating_point and not d.is_complex:
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    _check_scalars(d, beta, alpha)
    shape = (vec1._data.shape[0], vec2._data.shape[0])
    expand_check(input, shape)
    return shape, d


def _batch3(batch1: Tensor, batch2: Tensor) -> tuple:
    if batch1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, m) = batch1._data.shape, batch2._data.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    return b, n, k, k2, m


def _same3(input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    for t in (batch1, batch2):
        if t._dtype is not input._dtype:
            raise RuntimeError(f"expected scalar type {type_name(input._dtype)} but found {type_name(t._dtype)}")


def _addbmm_meta(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any = 1, alpha: Any = 1) -> tuple:
    b, n, k, k2, m = _batch3(batch1, batch2)
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{m})")
    _same3(input, batch1, batch2)
    if input._dtype is _dtypes.bool:
        raise NotImplementedError("\"addbmm\" not implemented for 'Bool'")
    _check_scalars(input._dtype, beta, alpha)
    expand_check(input, (n, m))
    return (n, m), input._dtype


def _baddbmm_meta(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any = 1, alpha: Any = 1) -> tuple:
    b, n, k, k2, m = _batch3(batch1, batch2)
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
                           f"[{b}, {k2}].")
    _same3(input, batch1, batch2)
    if input._dtype is _dtypes.bool:
        raise NotImplementedError("\"baddbmm_cpu\" not implemented for 'Bool'")
    _check_scalars(input._dtype, beta, alpha)
    expand_check(input, (b, n, m))
    return (b, n, m), input._dtype


def _vdot_meta(input: Tensor, other: Tensor) -> tuple:
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input._data.shape[0] != other._data.shape[0]:
        a, b = input._data.shape[0], other._data.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a}] and src [{b}] to have the same number "
                           f"of elements, but got {a} and {b} elements respectively")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {type_name(input._dtype)} "
                           f"and {type_name(other._dtype)}")
    if input._dtype is _dtypes.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    return (), input._dtype


# -- composites --------------------------------------------------------------------------

def _outer(input: Tensor, vec2: Tensor) -> Tensor:
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return input.unsqueeze(1) * vec2


def _inner(input: Tensor, other: Tensor) -> Tensor:
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes "
                           f"{fmt_shape(input._data.shape)} and {fmt_shape(other._data.shape)}")
    if input._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    return _fn("tensordot")(input, other, ([-1], [-1]))


def declarations() -> list[OpDecl]:
    scaled = "(input: Tensor, {a}: Tensor, {b}: Tensor, *, beta=1, alpha=1)"
    return [
        OpDecl("addmm", scaled.format(a="mat1", b="mat2"), _addmm_meta, inplace=True,
               doc=DOCS["addmm"]),
        OpDecl("addmv", scaled.format(a="mat", b="vec"), _addmv_meta, inplace=True,
               doc=DOCS["addmv"]),
        OpDecl("addr", scaled.format(a="vec1", b="vec2"), _addr_meta, inplace=True,
               doc=DOCS["addr"]),
        OpDecl("addbmm", scaled.format(a="batch1", b="batch2"), _addbmm_meta, inplace=True,
               doc=DOCS["addbmm"]),
        OpDecl("baddbmm", scaled.format(a="batch1", b="batch2"), _baddbmm_meta, inplace=True,
               doc=DOCS["baddbmm"]),
        OpDecl("vdot", "(input: Tensor, other: Tensor)", _vdot_meta,
               doc=DOCS["vdot"]),
        OpDecl("outer", "(input: Tensor, vec2: Tensor)", result_of(_outer), composite=_outer,
               doc="The outer product of two 1-D tensors."),
        OpDecl("inner", "(input: Tensor, other: Tensor)", result_of(_inner), composite=_inner,
               doc="The dot product over the last dims (a scalar operand multiplies)."),
    ]
