"""``Distribution``, the abstract base class of every probability distribution."""
from __future__ import annotations

import warnings
from typing import Any

import flambeau as fb

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _size(shape: Any) -> Any:
    return fb.Size(tuple(shape))


class Distribution:
    """Distribution is the abstract base class for probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: whether to validate input arguments; defaults to
            ``Distribution.set_default_validate_args``' setting (on).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    support: Any = None
    arg_constraints: dict[str, constraints.Constraint] = {}

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Set whether validation is enabled or disabled by default for every new distribution."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """A new distribution instance (or ``_instance``, filled in by a subclass) with its batch
        dimensions expanded to ``batch_shape``: parameters are expanded views, not copies."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Any:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def mean(self) -> fb.Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> fb.Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> fb.Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> fb.Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> fb.Tensor:
        """Generate a ``sample_shape`` shaped sample (or batch of samples) without gradients."""
        with fb.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> fb.Tensor:
        """Generate a ``sample_shape`` shaped reparameterised sample (gradients flow to the parameters)."""
        raise NotImplementedError

    def sample_n(self, n: int) -> fb.Tensor:
        """Generate n samples (deprecated: use ``sample((n,))``)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(fb.Size((n,)))

    def log_prob(self, value: fb.Tensor) -> fb.Tensor:
        """The log of the probability density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def cdf(self, value: fb.Tensor) -> fb.Tensor:
        """The cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def icdf(self, value: fb.Tensor) -> fb.Tensor:
        """The inverse cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> fb.Tensor:
        """Every value of a discrete distribution's support, along dimension 0: of shape
        ``(cardinality,) + batch_shape + event_shape`` (``expand=True``) or
        ``(cardinality,) + (1,) * len(batch_shape) + event_shape`` (``expand=False``)."""
        raise NotImplementedError

    def entropy(self) -> fb.Tensor:
        """The entropy of the distribution, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> fb.Tensor:
        """The perplexity of the distribution, batched over ``batch_shape``."""
        return fb.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        """``sample_shape + batch_shape + event_shape``: the shape of a sample."""
        if not isinstance(sample_shape, fb.Size):
            sample_shape = fb.Size(tuple(sample_shape))
        return fb.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        """Check a value given to ``log_prob``/``cdf``: a tensor, broadcastable with the distribution's
        shape, and inside its support."""
        if not isinstance(value, fb.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual_shape = value.shape
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {fb.Size(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. "
                          "Please initialize the distribution with `validate_args=False` to turn off "
                          "validation.", stacklevel=2)
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ "
                f"method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"


def _expand_params(dist: Distribution, cls: type, batch_shape: Any, names: tuple[str, ...],
                   _instance: Any = None, event_ndims: dict[str, int] | None = None) -> Any:
    """The common body of ``expand``: a new ``cls`` whose parameters named in ``names`` (those already
    computed: a lazily derived one is derived again from the expanded ones) are expanded views to
    ``batch_shape`` (plus their own trailing event dimensions, ``event_ndims[name]``)."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = fb.Size(tuple(batch_shape))
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            ndims = (event_ndims or {}).get(name, 0)
            tail = tuple(value.shape[value.dim() - ndims:]) if ndims else ()
            setattr(new, name, value.expand(tuple(batch_shape) + tail))
    Distribution.__init__(new, batch_shape, dist.event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
