"""Backward formulas of flambeau-nn's sparse ops."""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

from .._ops import sparse as S
from .normalization import _op



def _embedding(ctx: Any, grad: Any) -> tuple:
    weight_shape = ctx.shape(0)
    _, indices, padding_idx, scale = ctx.args
    # With create_graph the composite (index_add, differentiable in grad); else the fused op.
    backward = S.embedding_backward if fb.is_grad_enabled() else _op("nn_embedding_backward")
    return backward(grad, indices, weight_shape[0], padding_idx, scale), None, None, None


def formulas() -> dict[str, Any]:
    return {"nn_embedding": Formula(_embedding, save=("indices",))}
