"""Modules: ``CosineSimilarity``, ``PairwiseDistance``."""
from __future__ import annotations

from flambeau import Tensor

from ..functional import distance as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    r"""Cosine similarity of ``x1`` and ``x2`` along ``dim``; see :func:`flambeau.nn.functional.cosine_similarity`."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    r"""The p-norm of ``x1 - x2 + eps`` over the last dim; see :func:`flambeau.nn.functional.pairwise_distance`."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
