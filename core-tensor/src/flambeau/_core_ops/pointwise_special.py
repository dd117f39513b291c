"""Declarations of the special functions: gamma family, error-function inverse, modified Bessel
functions, normal distribution functions, incomplete gamma.

The ``special_*`` ops are reached through :mod:`flambeau.special` (``flambeau.special.i0e``), as
PyTorch's are; the others are also ``flambeau.NAME`` and Tensor methods.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import binary_result_type, broadcast, to_float, type_name


def _float_unary(name: str):
    """Real-valued functions: integral inputs are computed in the default float dtype."""
    def meta(input: Tensor) -> tuple:
        if input._dtype.is_complex:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(input._dtype)}\'')
        return input._data.shape, to_float(input._dtype)
    return meta


def _sinc_meta(input: Tensor) -> tuple:
    return input._data.shape, to_float(input._dtype)


def _polygamma_meta(n: Any, input: Tensor) -> tuple:
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _float_unary("polygamma")(input)


def _mvlgamma_meta(input: Tensor, p: Any) -> tuple:
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input._dtype.is_complex or input._dtype is _dtypes.bool:
        raise RuntimeError("mvlgamma is not implemented for " + type_name(input._dtype) + " tensors")
    return input._data.shape, to_float(input._dtype)


def _float_only_binary(name: str):
    def meta(input: Tensor, other: Tensor) -> tuple:
        dt = binary_result_type(input, other)
        if not dt.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(dt)}\'')
        return broadcast(input, other), dt
    return meta


def _xlog1py_meta(input: Any, other: Any) -> tuple:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_xlog1py(): at least one of 'input' and 'other' must be a Tensor")
    dt = binary_result_type(input, other)
    if dt.is_complex:
        raise NotImplementedError(f'"xlog1py_cpu" not implemented for \'{type_name(dt)}\'')
    return broadcast(input, other), to_float(dt)


#: name -> (doc, exported as flambeau.NAME and a method)
_UNARY = {
    "lgamma": ("The natural log of the absolute value of the gamma function.", True),
    "digamma": ("The logarithmic derivative of the gamma function (-inf at 0, as PyTorch).", True),
    "erfinv": ("The inverse error function (±inf at ±1, NaN outside [-1, 1]).", True),
    "i0": ("The modified Bessel function of the first kind, order 0.", True),
    "special_i0e": ("The exponentially scaled modified Bessel function of order 0: ``exp(-|x|) * i0(x)``.", False),
    "special_i1": ("The modified Bessel function of the first kind, order 1.", False),
    "special_i1e": ("The exponentially scaled modified Bessel function of order 1: ``exp(-|x|) * i1(x)``.", False),
    "special_ndtr": ("The standard normal cumulative distribution function.", False),
    "special_ndtri": ("The inverse of the standard normal CDF (the quantile function).", False),
    "special_log_ndtr": ("The log of the standard normal CDF, accurate far into the left tail.", False),
    "special_erfcx": ("The scaled complementary error function ``exp(x ** 2) * erfc(x)``.", False),
    "special_entr": ("Elementwise entropy: ``-x * log(x)`` for x > 0, 0 at 0, -inf below.", False),
}


#: Bessel functions of ``torch.special``; like PyTorch, they have no derivative formula.
_BESSEL = {
    "special_bessel_j0": "The Bessel function of the first kind, order 0.",
    "special_bessel_j1": "The Bessel function of the first kind, order 1.",
    "special_bessel_y0": "The Bessel function of the second kind, order 0.",
    "special_bessel_y1": "The Bessel function of the second kind, order 1.",
    "special_modified_bessel_i0": "The modified Bessel function of the first kind, order 0.",
    "special_modified_bessel_i1": "The modified Bessel function of the first kind, order 1.",
    "special_modified_bessel_k0": "The modified Bessel function of the second kind, order 0.",
    "special_modified_bessel_k1": "The modified Bessel function of the second kind, order 1.",
    "special_scaled_modified_bessel_k0": "``exp(x) * K0(x)``.",
    "special_scaled_modified_bessel_k1": "``exp(x) * K1(x)``.",
    "special_spherical_bessel_j0": "The spherical Bessel function of the first kind, order 0: ``sin(x) / x``.",
}


def _zeta_meta(input: Any, other: Any) -> tuple:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_zeta(): at least one of 'input' and 'other' must be a Tensor")
    dt = binary_result_type(input, other)
    if dt.is_complex:
        raise NotImplementedError(f'"zeta_cpu" not implemented for \'{type_name(dt)}\'')
    return broadcast(input, other), to_float(dt)


def declarations() -> list[OpDecl]:
    decls = []
    for name, (doc, public) in _UNARY.items():
        kernel_name = name.removeprefix("special_")
        decls.append(OpDecl(name, "(input: Tensor)", _float_unary(kernel_name), inplace=public, method=public,
                            export=public, doc=doc))
    for name, doc in _BESSEL.items():
        decls.append(OpDecl(name, "(input: Tensor)", _float_unary(name.removeprefix("special_")), method=False,
                            export=False, differentiable=False, doc=doc))
    decls += [
        OpDecl("sinc", "(input: Tensor)", _sinc_meta, inplace=True,
               doc="The normalized sinc function ``sin(pi x) / (pi x)`` (1 at 0)."),
        OpDecl("polygamma", "(n: int, input: Tensor)", _polygamma_meta, method=False,
               doc="The ``n``-th derivative of the digamma function."),
        OpDecl("mvlgamma", "(input: Tensor, p: int)", _mvlgamma_meta, inplace=True,
               doc="The log of the multivariate gamma function of dimension ``p``."),
        OpDecl("igamma", "(input: Tensor, other: Tensor)", _float_only_binary("igamma"), inplace=True,
               doc="The regularized lower incomplete gamma function P(input, other)."),
        OpDecl("igammac", "(input: Tensor, other: Tensor)", _float_only_binary("igammac"), inplace=True,
               doc="The regularized upper incomplete gamma function Q(input, other)."),
        OpDecl("special_zeta", "(input: TensorOrScalar, other: TensorOrScalar)", _zeta_meta, method=False,
               export=False, doc="The Hurwitz zeta function: the sum over k >= 0 of ``(k + other) ** -input``."),
        OpDecl("special_xlog1py", "(input: TensorOrScalar, other: TensorOrScalar)", _xlog1py_meta, method=False,
               export=False, doc="``input * log1p(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN)."),
    ]
    return decls
