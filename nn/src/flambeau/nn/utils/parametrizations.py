"""Parametrizations built on :mod:`flambeau.nn.utils.parametrize`: ``weight_norm`` and ``spectral_norm``."""
from __future__ import annotations


import flambeau
from flambeau import Tensor

from ..modules.module import Module
from . import _norms, parametrize

__all__ = ["weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    """``g * v / ||v||`` from ``(g, v)``; ``right_inverse`` splits a weight into its ``(g, v)``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _norms.weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norms.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    r"""Parametrize ``module.<name>`` as ``g * v / ||v||``, with g in
    ``module.parametrizations.<name>.original0`` and v in ``...original1`` (PyTorch's layout and state-dict
    keys); the norm is taken over every dimension but ``dim`` (``None``: over the whole tensor)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        ndim = weight.ndim
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            with flambeau.no_grad():
                mat = _norms.reshape_to_matrix(weight, self.dim)
                h, w = mat.shape
                u = _norms.normalize(flambeau.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
                v = _norms.normalize(flambeau.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            _norms.power_iteration(mat, self._u, self._v, 15, eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _norms.normalize(weight, self.eps)
        mat = _norms.reshape_to_matrix(weight, self.dim)
        if self.training:
            _norms.power_iteration(mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        u, v = self._u.clone(), self._v.clone()
        sigma = flambeau.vdot(u, mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    r"""Parametrize ``module.<name>`` as itself divided by its spectral norm (estimated by power iteration,
    refined at every access in training mode)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
