"""Declarations of matrix products: matmul, mm, bmm, mv, dot."""
from __future__ import annotations

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import broadcast_shapes, type_name


def _same_dtype(name: str, a: Tensor, b: Tensor) -> None:
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a._dtype.name.replace('float32', 'float')} "
            f"!= {b._dtype.name.replace('float32', 'float')}"
            if name in ("mm", "matmul", "bmm") else
            f"{name}: expected both inputs to have the same dtype, but got {type_name(a._dtype)} "
            f"and {type_name(b._dtype)}"
        )
    if a._dtype.name == "bool":
        raise RuntimeError(f'"{name}" not implemented for \'Bool\'')


def _mm_meta(input: Tensor, mat2: Tensor) -> tuple:
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = input._data.shape, mat2._data.shape
    if k != k2:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})"
        )
    _same_dtype("mm", input, mat2)
    return (n, m), input._dtype


def _bmm_meta(input: Tensor, mat2: Tensor) -> tuple:
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, m) = input._data.shape, mat2._data.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and {b2}")
    if k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}]."
        )
    _same_dtype("bmm", input, mat2)
    return (b, n, m), input._dtype


def _mv_meta(input: Tensor, vec: Tensor) -> tuple:
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {vec._data.ndim}, 1")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._data.shape[0]}), mat ({input._data.shape[0]}x{input._data.shape[1]}), "
            f"vec ({vec._data.shape[0]})"
        )
    _same_dtype("mv", input, vec)
    return (input._data.shape[0],), input._dtype


def _dot_meta(input: Tensor, tensor: Tensor) -> tuple:
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors"
        )
    if input._data.shape[0] != tensor._data.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, "
            "but got {} and {} elements respectively".format(
                input._data.shape[0], tensor._data.shape[0], input._data.shape[0], tensor._data.shape[0])
        )
    if input._dtype is not tensor._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {type_name(input._dtype)} "
            f"and {type_name(tensor._dtype)}"
        )
    return (), input._dtype


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The result shape of ``matmul`` for operand shapes ``a`` and ``b`` (numpy's rules)."""
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D"
        )
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        if len(a) == 1 and len(b) == 1:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, "
                "but got {} and {} elements respectively".format(a[0], b[0], a[0], b[0])
            )
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_flat2(a2)} and {b2[-2]}x{b2[-1]})"
        )
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    shape = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def _flat2(shape: tuple) -> str:
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return f"{rows}x{shape[-1]}"


def _matmul_meta(input: Tensor, other: Tensor) -> tuple:
    a, b, dt = input._data.shape, other._data.shape, input._dtype
    if len(a) == 2 and len(b) == 2 and a[1] == b[0] and other._dtype is dt and dt is not _dtypes.bool:
        return (a[0], b[1]), dt  # matrix @ matrix, the common case: nothing else to check
    shape = matmul_shape(input._data.shape, other._data.shape)
    _same_dtype("matmul", input, other)
    return shape, input._dtype


def declarations() -> list[OpDecl]:
    return [
        OpDecl("matmul", "(input: Tensor, other: Tensor)", _matmul_meta,
               doc="Matrix product with numpy's rules for 1-D operands and broadcast batch dims."),
        OpDecl("mm", "(input: Tensor, mat2: Tensor)", _mm_meta, doc="The product of two matrices."),
        OpDecl("bmm", "(input: Tensor, mat2: Tensor)", _bmm_meta, doc="Batched matrix product of 3-D tensors."),
        OpDecl("mv", "(input: Tensor, vec: Tensor)", _mv_meta, doc="Matrix-vector product."),
        OpDecl("dot", "(input: Tensor, tensor: Tensor)", _dot_meta, doc="The dot product of two 1-D tensors."),
    ]

