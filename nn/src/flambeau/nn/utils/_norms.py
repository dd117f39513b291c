"""Shared maths of weight and spectral normalisation."""
from __future__ import annotations

import flambeau
from flambeau import Tensor


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (kept, size 1 elsewhere); ``dim=-1``: all."""
    if dim == -1:
        return flambeau.linalg.vector_norm(v, pow)
    dim = dim % v.ndim
    others = tuple(d for d in range(v.ndim) if d != dim)
    return flambeau.linalg.vector_norm(v, pow, dim=others, keepdim=True) if others else v.abs()


def weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm taken over every dimension but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


def normalize(x: Tensor, eps: float = 1e-12) -> Tensor:
    """``x / max(||x||, eps)`` for a vector."""
    return x / flambeau.linalg.vector_norm(x).clamp(min=eps)


def reshape_to_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix whose rows run along ``dim``."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.ndim) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def power_iteration(weight_mat: Tensor, u: Tensor, v: Tensor, n_power_iterations: int, eps: float) -> None:
    """Refine, in place, the estimates ``u`` and ``v`` of the first left and right singular vectors."""
    with flambeau.no_grad():
        for _ in range(n_power_iterations):
            v.copy_(normalize(weight_mat.t().mv(u), eps))
            u.copy_(normalize(weight_mat.mv(v), eps))
