"""``spectral_norm`` / ``remove_spectral_norm``: the hook-based spectral normalisation."""
from __future__ import annotations

from typing import Any

import flambeau

from ..modules.module import Module
from ..parameter import Parameter
from . import _norms

__all__ = ["spectral_norm", "remove_spectral_norm", "SpectralNorm"]


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name> = <name>_orig / sigma``, sigma estimated by power
    iteration (in training mode; evaluation mode reuses the stored singular vectors)."""

    _version = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Any:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = _norms.reshape_to_matrix(weight, self.dim)
        if do_power_iteration:
            _norms.power_iteration(weight_mat.detach(), u, v, self.n_power_iterations, self.eps)
            u, v = u.clone(), v.clone()  # the graph must not see the next in-place refinement
        sigma = flambeau.dot(u, weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with flambeau.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> "SpectralNorm":
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with flambeau.no_grad():
            weight_mat = _norms.reshape_to_matrix(weight, dim)
            h, w = weight_mat.shape
            u = _norms.normalize(flambeau.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
            v = _norms.normalize(flambeau.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1), eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    r"""Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by power iteration
    before every forward in training mode.

    Args:
        module: the module.
        name: the parameter's name.
        n_power_iterations: power-iteration steps per forward.
        eps: the normalisations' epsilon.
        dim: the dimension of the output rows (default 0, 1 for transposed convolutions).
    """
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    r"""Undo :func:`spectral_norm`: ``module.<name>`` becomes a plain parameter with the normalised value."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
