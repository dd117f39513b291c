"""PyTorch-style docstrings (Args, Shape, Example) of the shape heading's main ops, by op name.

Kept apart from the declarations so that those stay readable; ``with_docs`` fills them in.
"""
from __future__ import annotations

from ..ops._decl import OpDecl

DOCS: dict[str, str] = {
    "cat": """Joins tensors along an existing dim.

Args:
    tensors (sequence of Tensor): tensors of one rank whose sizes match except in ``dim``; a 1-D
        empty tensor is skipped (PyTorch's legacy rule). Their dtypes promote as in arithmetic.
    dim (int): the dim to join along. Default: 0.

Shape:
    The inputs' shape with ``dim`` the sum of their sizes there.

Example::

    >>> fb.cat([fb.ones(2, 3), fb.zeros(1, 3)]).shape
    flambeau.Size([3, 3])
""",
    "stack": """Joins tensors of one shape along a new dim.

Args:
    tensors (sequence of Tensor): tensors of equal shape (dtypes promote as in ``cat``).
    dim (int): where the new dim goes, in ``[-n-1, n]`` for n-dim inputs. Default: 0.

Shape:
    The inputs' shape with ``len(tensors)`` inserted at ``dim``.

Example::

    >>> fb.stack([fb.ones(2), fb.zeros(2)], dim=1)
    tensor([[1., 0.],
            [1., 0.]])
""",
    "split": """Views of consecutive pieces along a dim.

Args:
    tensor (Tensor): the tensor to split.
    split_size_or_sections (int or list of int): the size of each piece (the last may be
        smaller), or the sizes of all pieces (they must add up to the dim's size).
    dim (int): the dim to split. Default: 0.

Example::

    >>> [p.shape[0] for p in fb.arange(5).split(2)]
    [2, 2, 1]
""",
    "chunk": """At most ``chunks`` views of equal size along a dim (the last may be smaller).

Args:
    input (Tensor): the tensor to split.
    chunks (int): how many pieces to aim for; each has ``ceil(size / chunks)`` elements, so
        fewer may come back.
    dim (int): the dim to split. Default: 0.

Example::

    >>> [p.shape[0] for p in fb.ones(6).chunk(4)]
    [2, 2, 2]
""",
    "tensor_split": """Views split into sections along a dim, as ``numpy.array_split``.

Args:
    input (Tensor): the tensor to split.
    indices_or_sections (int, list of int or Tensor): a number of nearly equal sections (the
        first ``size % n`` get one more element), or the indices to split before.
    dim (int): the dim to split. Default: 0.

Example::

    >>> [p.tolist() for p in fb.arange(7).tensor_split(3)]
    [[0, 1, 2], [3, 4], [5, 6]]
""",
    "movedim": """A view with dims moved.

Args:
    input (Tensor): the tensor.
    source (int or sequence of int): the dims to move.
    destination (int or sequence of int): where they go; the other dims keep their order.

Example::

    >>> fb.ones(2, 3, 4).movedim(0, -1).shape
    flambeau.Size([3, 4, 2])
""",
    "unflatten": """A view with one dim expanded into several.

Args:
    input (Tensor): the tensor.
    dim (int): the dim to expand.
    sizes (sequence of int): its new sizes (one may be -1); their product is its size.

Example::

    >>> fb.ones(2, 6).unflatten(1, (3, -1)).shape
    flambeau.Size([2, 3, 2])
""",
    "flip": """A copy with the order of elements reversed along dims.

Args:
    input (Tensor): the tensor.
    dims (int or sequence of int): the dims to reverse.

Example::

    >>> fb.arange(4).reshape(2, 2).flip(0)
    tensor([[2, 3],
            [0, 1]])
""",
    "roll": """A copy with elements shifted circularly along dims.

Args:
    input (Tensor): the tensor.
    shifts (int or sequence of int): how far to shift along each of ``dims``.
    dims (int or sequence of int, optional): the dims; None shifts the flattened tensor and
        restores its shape.

Example::

    >>> fb.arange(5).roll(2)
    tensor([3, 4, 0, 1, 2])
""",
    "rot90": """A copy rotated by 90 degrees ``k`` times in the plane of two dims.

Args:
    input (Tensor): a tensor of at least 2 dims.
    k (int): the number of rotations, from the first dim towards the second. Default: 1.
    dims (sequence of two int): the plane. Default: (0, 1).

Example::

    >>> fb.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
""",
    "repeat": """A copy repeated along each dim (``x.repeat(2, 3)``).

Args:
    input (Tensor): the tensor.
    repeats (sequence of int): the number of copies along each dim; at least ``input.dim()``
        of them (extra ones add leading dims).

Shape:
    ``input.shape`` (padded with leading ones) times ``repeats``, elementwise.

Example::

    >>> fb.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
""",
    "tile": """``repeat`` with ``dims`` padded in front with ones to the input's rank.

Args:
    input (Tensor): the tensor.
    dims (sequence of int): the number of copies along each (trailing) dim.

Example::

    >>> fb.ones(2, 3).tile((2,)).shape
    flambeau.Size([2, 6])
""",
    "repeat_interleave": """A copy with each element repeated in place.

Args:
    input (Tensor): the tensor (alone: a 1-D tensor of counts, giving ``0, 0, 1, ...``).
    repeats (int or Tensor): how many times each element appears, one count for all or one per
        element along ``dim``.
    dim (int, optional): the dim to repeat along; None repeats the flattened input.
    output_size (int, optional): the total length along ``dim``, checked against the counts.

Example::

    >>> fb.tensor([1, 2]).repeat_interleave(fb.tensor([1, 3]))
    tensor([1, 2, 2, 2])
""",
    "diagonal": """A view of a diagonal of the planes ``(dim1, dim2)``, appended as the last dim.

Args:
    input (Tensor): a tensor of at least 2 dims.
    offset (int): 0 for the main diagonal, positive above it, negative below. Default: 0.
    dim1, dim2 (int): the plane. Default: 0, 1.

Example::

    >>> fb.arange(9.).reshape(3, 3).diagonal(1)
    tensor([1., 5.])
""",
    "diag_embed": """Matrices, in dims ``dim1`` and ``dim2``, whose ``offset`` diagonal is the input's last dim.

Args:
    input (Tensor): the diagonals (at least 1 dim).
    offset (int): which diagonal. Default: 0.
    dim1, dim2 (int): where the matrix dims go in the result. Default: -2, -1.

Shape:
    The last dim ``n`` becomes two dims of size ``n + abs(offset)``.

Example::

    >>> fb.diag_embed(fb.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
""",
    "tril": """The lower triangle of the last two dims (on and below diagonal ``diagonal``); zeros elsewhere.

Args:
    input (Tensor): a tensor of at least 2 dims.
    diagonal (int): 0 keeps the main diagonal, positive keeps more above it, negative less. Default: 0.

Example::

    >>> fb.ones(2, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.]])
""",
    "triu": """The upper triangle of the last two dims (on and above diagonal ``diagonal``); zeros elsewhere.

Args:
    input (Tensor): a tensor of at least 2 dims.
    diagonal (int): 0 keeps the main diagonal, positive keeps less, negative more below it. Default: 0.

Example::

    >>> fb.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
""",
    "tril_indices": """The coordinates of the lower triangle of a ``row x col`` matrix, row by row.

Args:
    row, col (int): the matrix size.
    offset (int): the diagonal that bounds the triangle. Default: 0.
    dtype: int64 (default) or int32.

Shape:
    ``(2, N)``: row indices, then column indices.

Example::

    >>> fb.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
""",
    "complex": """The complex tensor ``real + imag * 1j``.

Args:
    real, imag (Tensor): float16, float32 or float64 tensors of one dtype (broadcast together).

Example::

    >>> fb.complex(fb.tensor([1.]), fb.tensor([2.]))
    tensor([1.+2.j])
""",
}


def with_docs(decls: list[OpDecl]) -> list[OpDecl]:
    """The declarations, each with its long docstring where there is one."""
    for d in decls:
        d.doc = DOCS.get(d.name, d.doc)
    return decls
