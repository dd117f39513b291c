"""Declarations of the creation extras: range, tril_indices, triu_indices, complex, polar, meshgrid."""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import FACTORY, VIEW, OpDecl
from .shape import result_of
from ..ops.meta import broadcast_shapes, type_name
from ..ops.sizes import checked_nbytes
from .factories import FACTORY_KW, _number


def range_length(start: Any, end: Any, step: Any) -> int:
    """How many values ``range`` gives: from ``start`` to ``end`` inclusive, ``step`` apart."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return int(math.floor((end - start) / step)) + 1


def _range_meta(start: Any, end: Any, step: Any = 1, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> tuple:
    start, end, step = _number(start, "start"), _number(end, "end"), _number(step, "step")
    return (range_length(start, end, step),), dtype or _dtypes.get_default_dtype()


def triangle_count(row: int, col: int, offset: int, lower: bool) -> int:
    """How many ``(i, j)`` of a ``row x col`` matrix lie on or below (``lower``) or on or above the
    ``offset``-th diagonal: in closed form (exact Python ints), whatever the sizes."""
    if not lower:  # the upper triangle from `offset` is what the lower one to `offset - 1` leaves
        return row * col - triangle_count(row, col, offset - 1, True)
    # Row i holds min(col, max(0, i + offset + 1)) entries: none before row `lo`, then one more per
    # row up to row `hi`, then full rows.
    lo = min(max(-offset, 0), row)
    hi = min(max(col - offset - 1, lo), row)
    ramp = (hi - lo) * (offset + 1) + (lo + hi - 1) * (hi - lo) // 2
    return ramp + (row - hi) * col


def _indices_meta(name: str, lower: bool):
    def meta(row: int, col: int, offset: int = 0, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> tuple:
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dtype = dtype or _dtypes.int64
        if dtype not in (_dtypes.int64, _dtypes.int32):
            raise RuntimeError(f'"{name}" not implemented for \'{type_name(dtype)}\'')
        shape = (2, triangle_count(row, col, offset, lower))
        checked_nbytes(shape, dtype.itemsize)
        return shape, dtype
    meta.__name__ = f"_{name}_meta"
    return meta


def _complex_meta(real: Tensor, imag: Tensor) -> tuple:
    floats = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
    if real._dtype not in floats or imag._dtype not in floats:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{type_name(real._dtype)} and {type_name(imag._dtype)}")
    if real._dtype is not imag._dtype:
        raise RuntimeError(f"Expected object of scalar type {type_name(real._dtype)} but got scalar type "
                           f"{type_name(imag._dtype)} for second argument")
    result = _dtypes.complex128 if real._dtype is _dtypes.float64 else _dtypes.complex64
    return broadcast_shapes(real._data.shape, imag._data.shape), result


def _polar(abs: Tensor, angle: Tensor) -> Tensor:
    from ..ops._registry import FUNCTIONS

    _complex_meta(abs, angle)
    return FUNCTIONS["complex"](abs * angle.cos(), abs * angle.sin())


_MESHGRID_WARNING = ("flambeau.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


def _meshgrid(tensors: Sequence[Tensor], indexing: Any = None) -> tuple:
    if len(tensors) == 0:
        raise RuntimeError("flambeau.meshgrid: Expected at least one tensor in the tensor list")
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=4)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"flambeau.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    first = tensors[0]
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"flambeau.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t!r}")
        if t._dtype is not first._dtype:
            raise RuntimeError("flambeau.meshgrid: Expected all tensors in the tensor list to have the same dtype.")
        if t._device != first._device:
            raise RuntimeError("flambeau.meshgrid: Expected all tensors in the tensor list to have the same device.")
    vectors = [t.reshape((-1,)) for t in tensors]
    swap = indexing == "xy" and len(vectors) >= 2
    if swap:  # 'xy' is 'ij' with the first two inputs swapped, and the first two grids swapped back
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v._data.shape[0] for v in vectors)
    n = len(vectors)
    grids = [v.reshape(tuple(-1 if k == i else 1 for k in range(n))).expand(shape) for i, v in enumerate(vectors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def declarations() -> list[OpDecl]:
    from ._docs_shape import with_docs

    return with_docs([
        OpDecl("range", f"(start, end, step=1, {FACTORY_KW})", _range_meta, kind=FACTORY, method=False,
               export=False, differentiable=False,
               doc="Deprecated: values from ``start`` to ``end`` inclusive, ``step`` apart (use ``arange``)."),
        OpDecl("tril_indices", f"(row, col, offset=0, {FACTORY_KW})", _indices_meta("tril_indices", True),
               kind=FACTORY, method=False, differentiable=False,
               doc="The ``(row, col)`` indices, as a ``(2, N)`` tensor, of the lower triangle of a "
                   "``row x col`` matrix (on and below diagonal ``offset``), row by row."),
        OpDecl("triu_indices", f"(row, col, offset=0, {FACTORY_KW})", _indices_meta("triu_indices", False),
               kind=FACTORY, method=False, differentiable=False,
               doc="The ``(row, col)`` indices, as a ``(2, N)`` tensor, of the upper triangle of a "
                   "``row x col`` matrix (on and above diagonal ``offset``), row by row."),
        OpDecl("complex", "(real: Tensor, imag: Tensor)", _complex_meta, method=False,
               doc="The complex tensor ``real + imag * 1j`` (float inputs of one dtype, broadcast)."),
        OpDecl("polar", "(abs: Tensor, angle: Tensor)", result_of(_polar), composite=_polar, method=False,
               doc="The complex tensor ``abs * (cos(angle) + sin(angle) * 1j)``."),
        OpDecl("meshgrid", "(tensors: TensorList, *, indexing=None)", None, kind=VIEW, composite=_meshgrid,
               method=False, export=False,
               doc="Coordinate grids (views) from 1-D tensors, with 'ij' (matrix) or 'xy' (Cartesian) indexing."),
    ])
