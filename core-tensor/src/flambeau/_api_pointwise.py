"""The pointwise ops' other names and call forms: numpy-style aliases (``arccos``, ``fix``),
``positive``, the conjugate bit's API (``conj``, ``resolve_conj``, ``is_conj``; the bit itself is
``Tensor._conj``, resolved by the dispatcher), ``Tensor.polygamma(n)``
and the ``Tensor.real`` / ``Tensor.imag`` properties.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

from ._tensor import Tensor
from .ops._registry import FUNCTIONS

#: alias -> the op it names (function, method and, where the op has one, in-place method)
ALIASES = {
    "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh", "arcsinh": "asinh",
    "arctanh": "atanh", "arctan2": "atan2", "fix": "trunc",
    # these had functions and methods already; the alias also gives their in-place form (x.absolute_())
    "absolute": "abs", "negative": "neg", "multiply": "mul", "divide": "div", "subtract": "sub",
    "true_divide": "div",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
}


def _alias(alias: str, target: str) -> Any:
    fn = FUNCTIONS[target]

    def function(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    function.__name__ = function.__qualname__ = alias
    function.__doc__ = f"Alias for :func:`flambeau.{target}`."
    return function


def _inplace_alias(alias: str, target: str) -> Any:
    fn = FUNCTIONS[target + "_"]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = alias + "_"
    method.__doc__ = f"Alias for :meth:`Tensor.{target}_`."
    return method


def positive(input: Tensor) -> Tensor:
    """Returns ``input`` itself (``+input``); bool tensors are refused, as in PyTorch.

    Example::

        >>> x = flambeau.tensor([-1.0, 2.0])
        >>> flambeau.positive(x) is x
        True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"positive(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _check_tensor(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def conj(input: Tensor) -> Tensor:
    r"""conj(input) -> Tensor

    Returns a view of ``input`` with a flipped conjugate bit: it shares ``input``'s storage and
    reads as its complex conjugate. A real ``input`` is returned itself.

    Ops compute on the conjugated values (the dispatcher materialises them first); views of a
    conjugated view keep the bit; a write into it stores the conjugate, so that ``input`` changes
    accordingly. :func:`resolve_conj` materialises the bit, :func:`conj_physical` always computes.

    Args:
        input (Tensor): the input tensor.

    Example::

        >>> x = flambeau.tensor([1 + 1j, 2 - 2j])
        >>> y = x.conj()
        >>> y.is_conj()
        True
        >>> y[0] = 3 + 3j
        >>> x
        tensor([3.-3.j, 2.-2.j])
    """
    _check_tensor("conj", input)
    return FUNCTIONS["_conj"](input) if input._dtype.is_complex else input


def resolve_conj(input: Tensor) -> Tensor:
    r"""resolve_conj(input) -> Tensor

    Returns ``input`` itself when its conjugate bit is not set, else a new tensor holding the
    conjugated values (with the bit cleared).

    Args:
        input (Tensor): the input tensor.

    Example::

        >>> y = flambeau.tensor([1 + 1j]).conj()
        >>> z = y.resolve_conj()
        >>> z.is_conj(), z
        (False, tensor([1.-1.j]))
    """
    _check_tensor("resolve_conj", input)
    if not input._conj:
        return input
    from .ops._dispatch import resolve

    return resolve(input)


def is_conj(input: Tensor) -> bool:
    """Whether ``input`` is a conjugated view (its conjugate bit is set); see :func:`conj`."""
    _check_tensor("is_conj", input)
    return input._conj


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself: negations are always materialised here."""
    return input


def is_neg(input: Tensor) -> bool:
    """Always False: flambeau has no lazy negative bit."""
    return False


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return FUNCTIONS["polygamma"](n, self)


def _polygamma_inplace(self: Tensor, n: int) -> Tensor:
    if self.requires_grad:
        # out= is not differentiable: copy_ records the in-place write, and the formula's saved input
        # is a clone, which that write leaves intact
        return self.copy_(FUNCTIONS["polygamma"](n, self.clone()))
    return FUNCTIONS["polygamma"](n, self, out=self)


def _float_power_inplace(self: Tensor, exponent: Any) -> Tensor:
    """``float_power_`` computes in double precision, so it writes only into a double tensor."""
    from ._dtypes import complex128, float64
    from .ops.meta import type_name

    complex_ = self.dtype.is_complex or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.dtype.is_complex)
    wanted = complex128 if complex_ else float64
    if self.dtype is not wanted:
        raise RuntimeError(f"the base given to float_power_ has dtype {type_name(self.dtype)} but the "
                           f"operation's result requires dtype {type_name(wanted)}")
    return FUNCTIONS["float_power_"](self, exponent)


def _get_real(self: Tensor) -> Tensor:
    return FUNCTIONS["real"](self)


def _set_real(self: Tensor, value: Any) -> None:
    FUNCTIONS["real"](self).copy_(value if isinstance(value, Tensor) else _like(value, self))


def _get_imag(self: Tensor) -> Tensor:
    return FUNCTIONS["imag"](self)


def _set_imag(self: Tensor, value: Any) -> None:
    value = value if isinstance(value, Tensor) else _like(value, self)
    if self._conj:  # the stored imaginary parts are the negated ones
        FUNCTIONS["imag"](FUNCTIONS["_conj"](self)).copy_(-value)
        return
    FUNCTIONS["imag"](self).copy_(value)


def _like(value: Any, t: Tensor) -> Tensor:
    from ._creation import tensor

    return tensor(value, dtype=t.dtype.to_real(), device=t.device)


FUNCTIONS_OUT = ("positive", "conj", "resolve_conj", "resolve_neg", "is_conj", "is_neg")


def install(namespace: ModuleType) -> None:
    """Attach the aliases and wrappers to ``flambeau`` and ``Tensor``."""
    for alias, target in ALIASES.items():
        if target not in FUNCTIONS:
            continue
        fn = _alias(alias, target)
        setattr(namespace, alias, fn)
        setattr(Tensor, alias, fn)
        if target + "_" in FUNCTIONS:
            setattr(Tensor, alias + "_", _inplace_alias(alias, target))
    for name in FUNCTIONS_OUT:
        setattr(namespace, name, globals()[name])
        setattr(Tensor, name, globals()[name])
    Tensor.polygamma = _polygamma_method
    Tensor.float_power_ = _float_power_inplace
    Tensor.polygamma_ = _polygamma_inplace
    Tensor.real = property(_get_real, _set_real, doc="The real parts, as a view (the tensor itself if real).")
    Tensor.imag = property(_get_imag, _set_imag, doc="The imaginary parts of a complex tensor, as a view.")
    from ._api_gradient import gradient

    namespace.gradient = gradient
    # flambeau.special (as torch.special) loads at its first use: flambeau.__getattr__
