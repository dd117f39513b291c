"""``view_as_real`` and ``view_as_complex``: a complex tensor and a real one with a trailing dim of 2
are the same memory, read two ways. Both are views (they share storage and the version counter).

``_conj``: the view that flips the conjugate bit (``Tensor.conj`` of a complex tensor). Its kernel
returns the storage as it is; the dispatcher sets the result's bit (``ops._codegen.CONJ_OP``)."""
from __future__ import annotations

from .._tensor import Tensor
from ..ops._decl import VIEW, OpDecl
from ..ops.meta import type_name


def _view_as_real_meta(input: Tensor) -> None:
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")


def _conj_meta(input: Tensor) -> None:
    """Any dtype: ``Tensor.conj`` returns a real tensor itself and never calls this op on one."""


def _view_as_complex_meta(input: Tensor) -> None:
    name = input._dtype.name
    if name not in ("float32", "float64"):
        if name == "float16":
            # PyTorch reads half pairs as complex32 (chalf), a dtype flambeau does not have.
            raise RuntimeError("view_as_complex is only supported for float and double tensors in flambeau "
                               "(complex32 is not a flambeau dtype), but got a tensor of scalar type: Half")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {type_name(input._dtype)}")
    shape = input._data.shape
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.numel() == 0:
        return  # no element to misread; flambeau's empty tensors may carry numpy's zero strides
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    # PyTorch lets a dim of size 1 keep an odd stride (it is never stepped over)
    if any(st % 2 for n, st in zip(shape[:-1], strides[:-1]) if n != 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


VIEW_AS_REAL_DOC = r"""view_as_real(input) -> Tensor

Returns a view of a complex tensor as a real one: each element becomes its real and imaginary
parts, along a new last dim of size 2. The result shares ``input``'s storage, so a write through
either is seen by the other.

Args:
    input (Tensor): a complex tensor (``complex64`` gives ``float32``, ``complex128`` gives
        ``float64``).

Shape:
    - Input: :math:`(*)`
    - Output: :math:`(*, 2)`; strides are ``input``'s doubled, with 1 for the new dim.

Raises:
    RuntimeError: ``input`` is not complex.

Example::

    >>> z = flambeau.tensor([1 + 2j, 3 - 4j])
    >>> flambeau.view_as_real(z)
    tensor([[ 1.,  2.],
            [ 3., -4.]])
"""

VIEW_AS_COMPLEX_DOC = r"""view_as_complex(input) -> Tensor

Returns a view of a real tensor whose last dim holds (real, imaginary) pairs as a complex tensor
of one dim fewer. The result shares ``input``'s storage.

Args:
    input (Tensor): a ``float32`` or ``float64`` tensor (giving ``complex64`` or ``complex128``)
        whose last dim has size 2 and stride 1, whose other strides are even (dims of size 1
        excepted) and whose storage offset is even.

Shape:
    - Input: :math:`(*, 2)`
    - Output: :math:`(*)`; strides are ``input``'s halved.

Raises:
    RuntimeError: with PyTorch's messages, when the dtype, the last dim's size or stride, another
        stride, or the storage offset does not allow the view.

Example::

    >>> x = flambeau.tensor([[1., 2.], [3., -4.]])
    >>> flambeau.view_as_complex(x)
    tensor([1.+2.j, 3.-4.j])
"""


def declarations() -> list[OpDecl]:
    # PyTorch has no Tensor.view_as_real / Tensor.view_as_complex methods
    return [
        OpDecl("_conj", "(input: Tensor)", _conj_meta, kind=VIEW, method=False, export=False,
               doc="A view of ``input`` with its conjugate bit flipped (see :func:`flambeau.conj`)."),
        OpDecl("view_as_real", "(input: Tensor)", _view_as_real_meta, kind=VIEW, method=False,
               doc=VIEW_AS_REAL_DOC),
        OpDecl("view_as_complex", "(input: Tensor)", _view_as_complex_meta, kind=VIEW, method=False,
               doc=VIEW_AS_COMPLEX_DOC),
    ]
