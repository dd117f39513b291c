"""Functional forms: sparse layers (embedding, embedding_bag, one_hot)."""
from __future__ import annotations

import flambeau as fb
from flambeau import Tensor

__all__ = ["embedding", "embedding_bag", "one_hot"]

_embedding = fb.ops.function("nn_embedding")


def _padding_index(padding_idx: int | None, num_embeddings: int) -> int:
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _no_grad_embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale, in place, each row of ``weight`` that ``input`` looks up to a norm of at most ``max_norm``."""
    with fb.no_grad():
        rows = fb.unique(input.reshape(-1))
        if rows.numel() == 0:
            return
        values = weight.index_select(0, rows)  # checks the indices
        norms = fb.linalg.vector_norm(values, norm_type, 1, keepdim=True)
        scale = fb.where(norms > max_norm, max_norm / (norms + 1e-7), fb.ones_like(norms))
        weight.index_copy_(0, rows, values * scale)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    r"""Look up rows of ``weight`` at the indices in ``input``.

    Args:
        input: an integer (int64 or int32) tensor of indices into ``weight``'s rows.
        weight: the ``(num_embeddings, embedding_dim)`` table.
        padding_idx: the row at this index gets no gradient.
        max_norm: rows looked up whose ``norm_type``-norm exceeds it are renormalised in place
            in ``weight`` before the lookup.
        norm_type: the p of the norm for ``max_norm``.
        scale_grad_by_freq: divide each row's gradient by how often its index occurs in ``input``.
        sparse: sparse gradients are not supported (only ``False``).

    Returns:
        A tensor of shape ``input.shape + (embedding_dim,)``.
    """
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported by flambeau; "
                                  "use sparse=False")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq)


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple[Tensor, Tensor, int]:
    """The flat indices, the bag of each, and the number of bags (entries outside every bag get bag ``B``)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        b, n = input.shape
        flat = input.reshape(-1)
        bag = fb.arange(b, device=input.device).repeat_interleave(n)
        return flat, bag, b
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.dtype not in (fb.int64, fb.int32):
        raise RuntimeError(f"embedding_bag: expected offsets to be int64 or int32, got {offsets.dtype}")
    count = offsets.shape[0] - (1 if include_last_offset else 0)
    if count < 0:
        raise RuntimeError("embedding_bag: include_last_offset needs at least one offset")
    starts = offsets.narrow(0, 0, count).to(fb.int64)
    if count and int(starts[0]) != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(starts[0])}")
    positions = fb.arange(input.shape[0], device=input.device)
    bag = fb.searchsorted(starts, positions, right=True) - 1 if count else fb.full_like(positions, 0)
    if include_last_offset and count:
        bag = fb.where(positions >= offsets[count].to(fb.int64), fb.full_like(bag, count), bag)
    return input, bag, count


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    r"""Sums, means or maxes of bags of embeddings, without materialising the looked-up rows per bag.

    ``input`` is 1-D with ``offsets`` giving where each bag starts (``include_last_offset``: the
    last offset is the end of the last bag), or 2-D ``(B, N)``: B bags of N indices each. Entries
    equal to ``padding_idx`` are left out (and do not count towards a mean); an empty bag gives zeros.
    ``per_sample_weights`` (same shape as ``input``) scales each row, for ``mode='sum'`` only.

    Returns:
        A ``(B, embedding_dim)`` tensor.
    """
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not supported by flambeau")
    if per_sample_weights is not None:
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then "
                             f"it must have the same shape as the input ({input.shape})")
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    flat, bag, count = _bags(input, offsets, include_last_offset)
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, flat, max_norm, norm_type)
    rows = _embedding(weight, flat, -1, scale_grad_by_freq)
    if padding_idx >= 0:  # padding entries go to the extra bag `count`, dropped at the end
        bag = fb.where(flat == padding_idx, fb.full_like(bag, count), bag)
    dim = weight.shape[1]
    out = fb.zeros((count + 1, dim), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        index = bag.unsqueeze(1).expand(bag.shape[0], dim)
        out = out.scatter_reduce(0, index, rows, "amax", include_self=False)
        return out.narrow(0, 0, count)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(rows.dtype)
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        sizes = fb.zeros(count + 1, dtype=weight.dtype, device=weight.device).index_add(
            0, bag, fb.ones(bag.shape[0], dtype=weight.dtype, device=weight.device))
        out = out / sizes.clamp_min(1).unsqueeze(1)
    return out.narrow(0, 0, count)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    r"""An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each value's position.

    ``num_classes=-1`` takes one more than the largest value.
    """
    if tensor.dtype != fb.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = fb.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).to(fb.int64)
