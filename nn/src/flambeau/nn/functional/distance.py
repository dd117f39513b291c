"""Functional forms: distances (cosine_similarity, pairwise_distance, pdist)."""
from __future__ import annotations

import flambeau as fb
from flambeau import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    r"""Cosine similarity of ``x1`` and ``x2`` (broadcast together) along ``dim``.

    ``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))``: each input is divided by its clamped
    norm before the product, as PyTorch does, so large inputs do not overflow.
    """
    shape = fb.broadcast_shapes(x1.shape, x2.shape)
    a, b = x1.expand(shape), x2.expand(shape)
    na = fb.linalg.vector_norm(a, 2, dim, keepdim=True).clamp_min(eps)
    nb = fb.linalg.vector_norm(b, 2, dim, keepdim=True).clamp_min(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    r"""The p-norm of ``x1 - x2 + eps`` over the last dim (inputs broadcast together)."""
    ndim = max(x1.dim(), x2.dim())
    dim = -1 if ndim > 0 else 0
    if ndim == 0:
        return (x1 - x2 + eps).abs()
    return fb.linalg.vector_norm(x1 - x2 + eps, p, dim, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    r"""The p-norm distance between every pair of rows of the ``(N, M)`` ``input``.

    Returns the upper triangle of the distance matrix, row by row: ``N * (N - 1) / 2`` values.
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    pairs = fb.triu_indices(n, n, 1, device=input.device)
    diff = input.index_select(0, pairs[0]) - input.index_select(0, pairs[1])
    return fb.linalg.vector_norm(diff, p, 1)
