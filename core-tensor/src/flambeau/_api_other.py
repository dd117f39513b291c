"""The Python faces of the "other" and BLAS ops whose PyTorch signatures are variadic or aliases.

``einsum(equation, *operands)`` (and the sublist form ``einsum(a, [0, 1], b, [1, 2])``),
``block_diag(*tensors)``, ``cartesian_prod(*tensors)``, the deprecated ``chain_matmul(*matrices)``
and ``ger``, the old name of ``outer``.
"""
from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any, Sequence

from ._tensor import Tensor
from .ops._registry import FUNCTIONS

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(labels: Sequence[Any]) -> str:
    out = []
    for x in labels:
        if x is Ellipsis:
            out.append("...")
        elif isinstance(x, int) and not isinstance(x, bool) and 0 <= x < len(_LETTERS):
            out.append(_LETTERS[x])
        else:
            raise RuntimeError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
    return "".join(out)


def einsum(*args: Any) -> Tensor:
    """Sums the product of the operands' elements over the dims an Einstein-summation equation names.

    ``einsum(equation, *operands)``, ``einsum(equation, [operands])`` or the sublist form
    ``einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])`` with labels as ints in [0, 52).

    Args:
        equation: labels per operand, comma-separated, ``...`` for broadcast dims, and optionally
            ``->`` and the output's labels (else: the labels seen once, in alphabetical order).
        operands: the tensors.

    Example::

        >>> a, b = fb.randn(2, 3, 4), fb.randn(2, 4, 5)
        >>> fb.einsum('bij,bjk->bik', a, b).shape
        flambeau.Size([2, 3, 5])
    """
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one "
                        "operand and its subscripts list")
    if isinstance(args[0], Tensor):  # the sublist form: operand, labels, operand, labels, ..., [output labels]
        pairs = len(args) // 2
        operands = list(args[0:2 * pairs:2])
        equation = ",".join(_sublist(s) for s in args[1:2 * pairs:2])
        if len(args) % 2:
            equation += "->" + _sublist(args[-1])
        return FUNCTIONS["einsum"](equation, operands)
    equation, rest = args[0], args[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        rest = tuple(rest[0])
    return FUNCTIONS["einsum"](equation, list(rest))


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix from the given tensors (0-d and 1-d ones count as one row).

    Example::

        >>> fb.block_diag(fb.ones(1, 2), fb.tensor([3.])).tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 3.0]]
    """
    if not tensors:
        from ._creation import empty

        return empty(1, 0)
    return FUNCTIONS["block_diag"](list(tensors))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors: one row per combination (a single tensor is returned as is).

    Example::

        >>> fb.cartesian_prod(fb.tensor([1, 2]), fb.tensor([3, 4])).tolist()
        [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    return FUNCTIONS["cartesian_prod"](list(tensors))


_CHAIN_WARNING = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "flambeau.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.")


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Deprecated: the product of the matrices, in the cheapest order; use ``flambeau.linalg.multi_dot``."""
    warnings.warn(_CHAIN_WARNING, UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        m = matrices[0]
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
        return m.clone() if out is None else out.copy_(m)
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    return FUNCTIONS["linalg_multi_dot"](list(matrices), out=out)


def ger(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`flambeau.outer`."""
    return FUNCTIONS["outer"](input, vec2, out=out)


def install(namespace: ModuleType) -> None:
    for fn in (einsum, block_diag, cartesian_prod, chain_matmul, ger):
        setattr(namespace, fn.__name__, fn)
    Tensor.ger = ger
