"""flambeau-distributions' op plugin (entry point ``flambeau: distributions``): the samplers that are not
plain compositions at the Python level, declared as ops so that a backend may ship kernels for them.

Each op has a composite (``_samplers``) written with flambeau ops; ``dist_standard_gamma`` is
differentiable in ``alpha`` through the implicit reparameterisation gradient ``dist_standard_gamma_grad``.
"""
from __future__ import annotations

from typing import Any

from flambeau.ops import OpDecl
from flambeau.plugins import hookimpl

from . import _samplers

_FLOATING = ("float16", "bfloat16", "float32", "float64")


def _check_floating(op: str, name: str, t: Any) -> None:
    if str(t.dtype).split(".")[-1] not in _FLOATING:
        raise RuntimeError(f"{op}: expected a floating-point {name}, got {t.dtype}")


def _check_generator(op: str, generator: Any) -> None:
    if generator is not None and not hasattr(generator, "manual_seed"):
        raise TypeError(f"{op}(): argument 'generator' must be flambeau.Generator, not {type(generator).__name__}")


def _gamma_meta(alpha: Any, generator: Any = None) -> tuple:
    _check_floating("dist_standard_gamma", "alpha", alpha)
    _check_generator("dist_standard_gamma", generator)
    return tuple(alpha.shape), alpha.dtype


def _gamma_grad_meta(alpha: Any, sample: Any) -> tuple:
    _check_floating("dist_standard_gamma_grad", "alpha", alpha)
    _check_floating("dist_standard_gamma_grad", "sample", sample)
    if tuple(alpha.shape) != tuple(sample.shape):
        raise RuntimeError(f"dist_standard_gamma_grad: alpha and sample must have the same shape, "
                           f"got {tuple(alpha.shape)} and {tuple(sample.shape)}")
    return tuple(alpha.shape), alpha.dtype


def _poisson_meta(rate: Any, generator: Any = None) -> tuple:
    _check_floating("dist_poisson", "rate", rate)
    _check_generator("dist_poisson", generator)
    return tuple(rate.shape), rate.dtype


def _binomial_meta(count: Any, prob: Any, generator: Any = None) -> tuple:
    _check_floating("dist_binomial", "prob", prob)
    _check_generator("dist_binomial", generator)
    from flambeau import broadcast_shapes

    return tuple(broadcast_shapes(tuple(count.shape), tuple(prob.shape))), prob.dtype


def declarations() -> list[OpDecl]:
    common = {"method": False, "export": False}
    return [
        OpDecl("dist_standard_gamma", "(alpha: Tensor, generator=None)", _gamma_meta,
               composite=_samplers.standard_gamma, random=True, differentiable=True,
               doc="Gamma(alpha, 1) samples (flambeau-distributions), differentiable in alpha.", **common),
        OpDecl("dist_standard_gamma_grad", "(alpha: Tensor, sample: Tensor)", _gamma_grad_meta,
               composite=_samplers.standard_gamma_grad, differentiable=False,
               doc="d sample / d alpha of Gamma(alpha, 1) samples at a fixed CDF value.", **common),
        OpDecl("dist_poisson", "(rate: Tensor, generator=None)", _poisson_meta,
               composite=_samplers.poisson, random=True, differentiable=False,
               doc="Poisson(rate) samples (flambeau-distributions).", **common),
        OpDecl("dist_binomial", "(count: Tensor, prob: Tensor, generator=None)", _binomial_meta,
               composite=_samplers.binomial, random=True, differentiable=False,
               doc="Binomial(count, prob) samples (flambeau-distributions).", **common),
    ]


def _standard_gamma_backward(ctx: Any, grad: Any) -> Any:
    from flambeau.ops import fn

    alpha = ctx.args[0]
    return (grad * fn.dist_standard_gamma_grad(alpha, ctx.result),)


def gradient_formulas() -> dict[str, Any]:
    from flambeau.autograd.formula import Formula

    return {"dist_standard_gamma": Formula(_standard_gamma_backward, save=("alpha",), result=True)}


@hookimpl
def flambeau_declare_ops() -> list[OpDecl]:
    return declarations()


@hookimpl
def flambeau_register_gradients() -> dict[str, Any]:
    return gradient_formulas()
