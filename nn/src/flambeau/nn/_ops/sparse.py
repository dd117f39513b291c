"""Declarations of flambeau-nn's sparse ops: the embedding lookup and its backward pass.

``nn_embedding`` gathers rows of ``weight``; ``nn_embedding_backward`` adds the output's gradient
rows into a ``(num_weights, embedding_dim)`` gradient (the padding row gets none; with
``scale_grad_by_freq`` each row's contribution is divided by how often its index occurs). Whether
an index is in range depends on values, so it is checked where the rows are read (the composite's
``index_select``, the CPU kernel's gather loop), not in the meta functions.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import type_name

#: PyTorch's legacy tensor-type names, as its index-type errors print them (``FloatTensor``).
_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "bool": "Bool",
           "uint8": "Byte", "int8": "Char", "int16": "Short", "complex64": "ComplexFloat",
           "complex128": "ComplexDouble"}


def check_indices(indices: Tensor, what: str = "embedding") -> None:
    if indices.dtype not in (fb.int64, fb.int32):
        legacy = _LEGACY.get(str(indices.dtype).split(".")[-1], type_name(indices.dtype))
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {legacy}Tensor instead (while checking arguments for {what})")


def _embedding_meta(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False) -> tuple:
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    check_indices(indices)
    if indices.device != weight.device:
        raise RuntimeError(f"embedding: expected all tensors to be on the same device, but found at least two "
                           f"devices, {weight.device} and {indices.device}!")
    return tuple(indices.shape) + (weight.shape[1],), weight.dtype


def _embedding_backward_meta(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int = -1,
                             scale_grad_by_freq: bool = False) -> tuple:
    check_indices(indices, "embedding_backward")
    if grad.dim() != indices.dim() + 1 or tuple(grad.shape[:-1]) != tuple(indices.shape):
        raise RuntimeError(f"embedding_backward: grad of shape {list(grad.shape)} does not match indices of shape "
                           f"{list(indices.shape)} and one embedding dim")
    if not isinstance(num_weights, int) or num_weights < 0:
        raise RuntimeError(f"embedding_backward: num_weights must be a non-negative int, got {num_weights!r}")
    return (num_weights, grad.shape[-1]), grad.dtype


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False) -> Tensor:
    """The composite: rows of ``weight`` (``index_select`` checks the indices as it reads)."""
    rows = weight.index_select(0, indices.reshape(-1))
    return rows.reshape(tuple(indices.shape) + (weight.shape[1],))


def embedding_backward(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int = -1,
                       scale_grad_by_freq: bool = False) -> Tensor:
    """The composite: ``grad``'s rows added at their indices (``index_add``, which checks them)."""
    dim = grad.shape[-1]
    flat = indices.reshape(-1)
    # the kernels' check, before index_add (whose decomposition words it as scatter's RuntimeError)
    if flat.numel() and (int(flat.amin()) < 0 or int(flat.amax()) >= num_weights):
        raise IndexError("index out of range in self")
    rows = grad.reshape(-1, dim)
    keep: Any = None
    if padding_idx is not None and padding_idx >= 0:
        keep = flat != padding_idx
    if scale_grad_by_freq:
        counts = fb.zeros(num_weights, dtype=rows.dtype, device=rows.device).index_add(
            0, flat, fb.ones(flat.shape[0], dtype=rows.dtype, device=rows.device))
        rows = rows / counts.index_select(0, flat).unsqueeze(1)
    if keep is not None:
        rows = rows * keep.to(rows.dtype).unsqueeze(1)
    return fb.zeros((num_weights, dim), dtype=grad.dtype, device=grad.device).index_add(0, flat, rows)


def declarations() -> list[OpDecl]:
    return [
        OpDecl("nn_embedding", "(weight: Tensor, indices: Tensor, padding_idx=-1, scale_grad_by_freq=False)",
               _embedding_meta, composite=embedding, method=False, export=False,
               doc="Rows of ``weight`` at ``indices``: shape ``indices.shape + (embedding_dim,)``."),
        OpDecl("nn_embedding_backward", "(grad: Tensor, indices: Tensor, num_weights, padding_idx=-1, "
               "scale_grad_by_freq=False)", _embedding_backward_meta, composite=embedding_backward, method=False,
               export=False, differentiable=False,
               doc="The gradient of ``nn_embedding``'s weight: ``grad``'s rows summed at their indices."),
    ]
