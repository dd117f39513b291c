"""Declarations of the diagonal and triangle ops: diagonal, diag, diag_embed, diagflat, tril, triu.

``diagonal`` is a view: a backend may give it a kernel (the CPU does, so that autograd records it
with its own formula), and its composite, written with ``as_strided``, runs everywhere else;
``diag_embed``, ``tril`` and ``triu`` are primitives; ``diag`` and ``diagflat``
are composites of them.
"""
from __future__ import annotations


from .._tensor import Tensor
from ..ops._decl import VIEW, OpDecl
from .shape import result_of
from ..ops.meta import wrap_dim


def _diag_dims(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    a, b = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return a, b


def diagonal_length(n1: int, n2: int, offset: int) -> int:
    """How many elements the ``offset`` diagonal of an ``n1 x n2`` matrix has."""
    return max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))


def _diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    ndim = input._data.ndim
    a, b = _diag_dims(ndim, dim1, dim2)
    shape, strides = input._data.shape, input.stride()
    length = diagonal_length(shape[a], shape[b], offset)
    start = input.storage_offset()
    if length:
        start += offset * strides[b] if offset >= 0 else -offset * strides[a]
    keep = [i for i in range(ndim) if i not in (a, b)]
    return input.as_strided(tuple(shape[i] for i in keep) + (length,),
                            tuple(strides[i] for i in keep) + (strides[a] + strides[b],), start)


def _diagonal_meta(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> None:
    _diag_dims(input._data.ndim, dim1, dim2)


def _diag_embed_meta(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> tuple:
    ndim = input._data.ndim + 1
    a, b = _diag_dims(ndim, dim1, dim2)
    n = (input._data.shape[-1] if input._data.ndim else 1) + abs(offset)
    rest = list(input._data.shape[:-1])
    for d in sorted((a, b)):
        rest.insert(d, n)
    return tuple(rest), input._dtype


def _diag(input: Tensor, diagonal: int = 0) -> Tensor:
    from ..ops._registry import FUNCTIONS

    ndim = input._data.ndim
    if ndim == 1:
        return FUNCTIONS["diag_embed"](input, diagonal, 0, 1)
    if ndim == 2:
        return _diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def _diagflat(input: Tensor, offset: int = 0) -> Tensor:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS["diag_embed"](input.reshape((-1,)), offset, 0, 1)


def _triangle_meta(name: str):
    def meta(input: Tensor, diagonal: int = 0) -> tuple:
        if input._data.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        if not isinstance(diagonal, int) or isinstance(diagonal, bool):
            raise TypeError(f"{name}(): argument 'diagonal' must be int, not {type(diagonal).__name__}")
        if not -2 ** 63 <= diagonal < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")  # PyTorch's argument parser
        return input._data.shape, input._dtype
    meta.__name__ = f"_{name}_meta"
    return meta


def declarations() -> list[OpDecl]:
    from ._docs_shape import with_docs

    return with_docs([
        OpDecl("diagonal", "(input: Tensor, offset=0, dim1=0, dim2=1)", _diagonal_meta, kind=VIEW, composite=_diagonal,
               doc="A view of the ``offset`` diagonal of the planes ``(dim1, dim2)``, appended as the last dim.\n\n"
                   "Example::\n\n    >>> fb.arange(9.).reshape(3, 3).diagonal(1)\n    tensor([1., 5.])"),
        OpDecl("diag_embed", "(input: Tensor, offset=0, dim1=-2, dim2=-1)", _diag_embed_meta,
               doc="Matrices (in dims ``dim1``, ``dim2``) whose ``offset`` diagonal is the input's last dim."),
        OpDecl("diag", "(input: Tensor, diagonal=0)", result_of(_diag), composite=_diag,
               doc="A 1-D input as the ``diagonal`` of a square matrix; of a 2-D input, a copy of that diagonal."),
        OpDecl("diagflat", "(input: Tensor, offset=0)", result_of(_diagflat), composite=_diagflat,
               doc="The flattened input as the ``offset`` diagonal of a square matrix."),
        OpDecl("tril", "(input: Tensor, diagonal=0)", _triangle_meta("tril"), inplace=True,
               doc="The lower triangle (on and below the ``diagonal``) of the last two dims; zeros elsewhere."),
        OpDecl("triu", "(input: Tensor, diagonal=0)", _triangle_meta("triu"), inplace=True,
               doc="The upper triangle (on and above the ``diagonal``) of the last two dims; zeros elsewhere."),
    ])
