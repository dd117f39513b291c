"""``flambeau.special``: special functions, with the names of ``torch.special`` (and scipy's).

Each function is the corresponding flambeau op: same dtypes, broadcasting, ``out=`` and
gradients.

Example::

    >>> import flambeau as fb
    >>> fb.special.ndtr(fb.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
"""
from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..ops._registry import FUNCTIONS

__all__ = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "zeta", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
    "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "logsumexp",
    "log_softmax", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
]

#: flambeau.special name -> op name
_SAME = {
    "digamma": "digamma", "psi": "digamma", "entr": "special_entr", "erf": "erf", "erfc": "erfc",
    "erfcx": "special_erfcx", "erfinv": "erfinv", "exp2": "exp2", "expit": "sigmoid", "expm1": "expm1",
    "gammainc": "igamma", "gammaincc": "igammac", "gammaln": "lgamma", "i0": "i0", "i0e": "special_i0e",
    "i1": "special_i1", "i1e": "special_i1e", "log1p": "log1p", "log_ndtr": "special_log_ndtr",
    "ndtr": "special_ndtr", "ndtri": "special_ndtri", "round": "round", "sinc": "sinc", "xlog1py": "special_xlog1py",
    "xlogy": "xlogy", "logit": "logit", "zeta": "special_zeta",
    "bessel_j0": "special_bessel_j0", "bessel_j1": "special_bessel_j1", "bessel_y0": "special_bessel_y0",
    "bessel_y1": "special_bessel_y1", "modified_bessel_i0": "special_modified_bessel_i0",
    "modified_bessel_i1": "special_modified_bessel_i1", "modified_bessel_k0": "special_modified_bessel_k0",
    "modified_bessel_k1": "special_modified_bessel_k1",
    "scaled_modified_bessel_k0": "special_scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1": "special_scaled_modified_bessel_k1",
    "spherical_bessel_j0": "special_spherical_bessel_j0",
}


def _forward(name: str, op: str) -> Any:
    fn = FUNCTIONS[op]

    def special_fn(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = f"``flambeau.special.{name}``: the op ``{op}``.\n\n{fn.__doc__ or ''}"
    return special_fn


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th derivative of the digamma function (see :func:`flambeau.polygamma`)."""
    return FUNCTIONS["polygamma"](n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (see :func:`flambeau.mvlgamma`)."""
    return FUNCTIONS["mvlgamma"](input, p, out=out)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``log(sum(exp(input), dim))``, computed stably (see :func:`flambeau.logsumexp`)."""
    if "logsumexp" not in FUNCTIONS:
        raise NotImplementedError("flambeau.special.logsumexp needs the op 'logsumexp', which no installed "
                                  "package declares")
    return FUNCTIONS["logsumexp"](input, dim, keepdim, out=out)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``exp(input) / sum(exp(input), dim)``, computed stably (see :func:`flambeau.softmax`)."""
    return FUNCTIONS["softmax"](input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably (see :func:`flambeau.log_softmax`)."""
    return FUNCTIONS["log_softmax"](input, dim, dtype)


def _install() -> None:
    namespace = globals()
    for name, op in _SAME.items():
        if op in FUNCTIONS:
            namespace[name] = _forward(name, op)


_install()
__all__ = [n for n in __all__ if n in globals()]
