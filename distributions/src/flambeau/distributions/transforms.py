"""Transforms: invertible (or not) maps between constrained spaces, with the log-determinant of their
Jacobians, for ``TransformedDistribution`` and ``biject_to``/``transform_to``.

A transform caches its last input/output pair when ``cache_size=1``, so that ``t.inv(t(x))`` returns
``x`` itself (needed where the inverse is not unique or not stable, e.g. ``SigmoidTransform`` near 0/1).
"""
from __future__ import annotations

import functools
import math
import operator
import weakref
from typing import Any, Sequence

import flambeau as fb

from . import constraints
from .utils import _pad_last, _softplus, _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "Transform", "identity_transform",
]


class Transform:
    """Abstract base class of invertible transforms with computable log-det-Jacobians.

    Args:
        cache_size: 0 (no caching) or 1 (cache the latest ``(x, y)`` pair).

    Attributes:
        domain, codomain: the constraints of the valid inputs and outputs.
        bijective: whether the transform is bijective (``t.inv(t(x)) == x`` and ``t(t.inv(y)) == y``).
        sign: for bijective univariate transforms, +1 or -1 as the transform is increasing or decreasing.
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv: Any = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y: tuple = (None, None)
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform: ``t.inv(t(x))`` is ``x``."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self) -> int:
        """+1 or -1 for a monotone bijective univariate transform."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> "Transform":
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: fb.Tensor) -> fb.Tensor:
        """Compute the transform ``x => y``."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: fb.Tensor) -> fb.Tensor:
        """Invert the transform ``y => x``."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        raise NotImplementedError

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        """``log |dy/dx|`` given input and output."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape: Any) -> Any:
        """The output shape for an input of shape ``shape``."""
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """The input shape for an output of shape ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x: fb.Tensor) -> fb.Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Composes several transforms in a chain: ``parts[0]`` first."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # Adjust event_dim to be maximum among all parts.
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim -= part.codomain.event_dim
            event_dim += part.domain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        assert event_dim >= domain.event_dim
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim -= part.domain.event_dim
            event_dim += part.codomain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        assert event_dim >= codomain.event_dim
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @functools.cached_property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @functools.cached_property
    def sign(self) -> int:  # type: ignore[override]
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: fb.Tensor) -> fb.Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        if not self.parts:
            return fb.zeros_like(x)
        # Compute intermediates; this is free when the parts cache.
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        fmt_string = self.__class__.__name__ + "(\n    "
        fmt_string += ",\n    ".join([p.__repr__() for p in self.parts])
        fmt_string += "\n)"
        return fmt_string


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """Reinterprets ``reinterpreted_batch_ndims`` extra right-most dimensions as dependent: the
    log-det-Jacobian is summed over them."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the right-most part of a tensor: ``in_shape`` to ``out_shape`` (same number of elements)."""

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = fb.Size(tuple(in_shape))
        self.out_shape = fb.Size(tuple(out_shape))
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(self.in_shape)}")
        return fb.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(self.out_shape)}")
        return fb.Size(tuple(shape[:cut]) + tuple(self.in_shape))


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return x.exp()

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _broadcast_params(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @functools.cached_property
    def sign(self) -> Any:  # type: ignore[override]
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return fb.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return fb.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _broadcast_params(*values: Any) -> tuple:
    return tuple(v if isinstance(v, fb.Tensor) else fb.tensor(v) for v in values)


def _clipped_sigmoid(x: fb.Tensor) -> fb.Tensor:
    finfo = fb.finfo(x.dtype)
    return fb.clamp(fb.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``, clipped away from 0 and 1 (so that the inverse stays finite)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return _clipped_sigmoid(x)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        finfo = fb.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return _softplus(x)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return -_softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``; the log-det-Jacobian uses ``2 (log 2 - x - softplus(-2x))``, stable for large ``|x|``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return x.tanh()

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        # Not clamped: a sample of exactly +-1 is better handled by caching than by clipping.
        return fb.atanh(y)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return x.abs()

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``, pointwise; ``event_dim`` right-most dimensions form one event."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if a != b:
                    return False
            elif not bool((fb.as_tensor(a) == fb.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = fb.full_like(x, math.log(abs(scale)))
        else:
            result = fb.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.shape[:result.dim() - self.event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(tuple(shape))

    def forward_shape(self, shape: Any) -> Any:
        return fb.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return fb.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))


class CorrCholeskyTransform(Transform):
    """An unconstrained vector of length ``D*(D-1)/2`` to the Cholesky factor of a ``D x D`` correlation
    matrix (lower triangular, positive diagonal, unit-norm rows), through a stick-breaking of each row's
    squared norm from the ``tanh`` of the inputs."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        x = fb.tanh(x)
        eps = fb.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # Stick-breaking on the squared values: z[i, j] = r[i, j] * sqrt(1 - sum_{k<j} z[i, k]^2).
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        # The diagonal elements are 1.
        r = r + fb.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        y = r * _pad_last(z1m_cumprod_sqrt[..., :-1], 1, 0, 1.0)
        return y

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        # The inverse stick-breaking: recover r from y and the running products of its rows.
        y_cumsum = 1 - fb.cumsum(y * y, dim=-1)
        y_cumsum_shifted = _pad_last(y_cumsum[..., :-1], 1, 0, 1.0)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        x = fb.atanh(t)
        return x

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor, intermediates: Any = None) -> fb.Tensor:
        # d y / d r is triangular with diagonal sqrt(1 - sum of squares so far), and d r / d x = 1 - tanh^2.
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * (y1m_cumsum_tril).log().sum(-1)
        tanh_logdet = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return fb.Size(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        N = D * (D - 1) // 2
        return fb.Size(tuple(shape[:-2]) + (N,))


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by ``exp`` and normalisation (not bijective: the inverse
    returns the logs, defined up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Unconstrained vectors of length ``K-1`` to the ``K``-simplex by stick-breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        offset = x.shape[-1] + 1 - fb.ones(x.shape[-1], dtype=x.dtype, device=x.device).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        y = _pad_last(z, 0, 1, 1.0) * _pad_last(z_cumprod, 1, 0, 1.0)
        return y

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        y_crop = y[..., :-1]
        offset = y.shape[-1] - fb.ones(y_crop.shape[-1], dtype=y.dtype, device=y.device).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        # The sum of the whole stick can be just under 1 in floating point: clamp before the log.
        sf = fb.clamp(sf, min=fb.finfo(y.dtype).tiny)
        x = y_crop.log() - sf.log() + offset.log()
        return x

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        offset = x.shape[-1] + 1 - fb.ones(x.shape[-1], dtype=x.dtype, device=x.device).cumsum(-1)
        x = x - offset.log()
        # log|J| = sum over k of log(sigmoid(x_k)) + log(remaining stick before k)
        detJ = (-x + (-_softplus(-x)) + y[..., :-1].log()).sum(-1)
        return detJ

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return fb.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return fb.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular matrices with a positive diagonal: the strictly
    lower triangle is kept and the diagonal exponentiated (not bijective: the upper triangle is dropped)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones: ``L L^T`` of ``LowerCholeskyTransform``'s ``L``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        y = fb.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)


class CatTransform(Transform):
    """Applies ``tseq[i]`` to the ``i``-th piece (of length ``lengths[i]``) of dimension ``dim``."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("every element of tseq must be a Transform")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"expected {len(self.transforms)} lengths, got {len(self.lengths)}")
        self.dim = dim

    @functools.cached_property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(t.event_dim for t in self.transforms)

    @functools.cached_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check_dim(self, x: fb.Tensor) -> None:
        if not -x.dim() <= self.dim < x.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, "
                             f"{x.dim() - 1}], but got {self.dim})")
        if x.size(self.dim) != self.length:
            raise ValueError(f"expected size {self.length} at dimension {self.dim}, got {x.size(self.dim)}")

    def _pieces(self, x: fb.Tensor) -> list:
        start, out = 0, []
        for length in self.lengths:
            out.append(x.narrow(self.dim, start, length))
            start += length
        return out

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        self._check_dim(x)
        return fb.cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], dim=self.dim)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        self._check_dim(y)
        return fb.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        self._check_dim(x)
        self._check_dim(y)
        logdetjacs = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            logdetjac = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                logdetjac = _sum_rightmost(logdetjac, self.event_dim - t.event_dim)
            logdetjacs.append(logdetjac)
        # Concatenate along dim when it is a batch dimension, else sum the pieces.
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return fb.cat(logdetjacs, dim=dim)
        return functools.reduce(operator.add, logdetjacs)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies ``tseq[i]`` to the ``i``-th slice of dimension ``dim``."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("every element of tseq must be a Transform")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: fb.Tensor) -> list:
        if not -z.dim() <= self.dim < z.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-z.dim()}, "
                             f"{z.dim() - 1}], but got {self.dim})")
        if z.size(self.dim) != len(self.transforms):
            raise ValueError(f"expected size {len(self.transforms)} at dimension {self.dim}, "
                             f"got {z.size(self.dim)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return fb.stack([t(xs) for xs, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return fb.stack([t.inv(ys) for ys, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return fb.stack([t.log_abs_det_jacobian(xs, ys)
                         for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: a univariate distribution's CDF, mapping its support to ``[0, 1]``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: fb.Tensor) -> fb.Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: fb.Tensor) -> fb.Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: fb.Tensor, y: fb.Tensor) -> fb.Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)
