"""Integer ops onto the core tier.

``gcd`` by Euclid's algorithm run on every element at once (a data-dependent number of rounds, at
most ~92 for int64: the loop ends when no element has a non-zero divisor left), and ``lcm`` from
it, both as PyTorch computes them (``abs`` first, so the most negative value keeps its wrapped
sign; ``lcm`` of a zero is 0, and the product of the narrow types is formed in int32 and wrapped,
as C's promotion does in PyTorch's kernel). The bit shifts as products and floor quotients by
powers of two, with PyTorch's rule for shift counts outside the type's width.
"""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype, scalar_like


def _gcd(a: Tensor, b: Tensor) -> Tensor:
    """gcd of two integer tensors of one dtype, broadcast."""
    a, b = op("abs")(a), op("abs")(b)
    a, b = a + b * 0, b + a * 0  # both at the broadcast shape
    while bool(op("sum")(op("ne")(a, 0)).item()):
        live = op("ne")(a, 0)
        divisor = op("where")(live, a, op("add")(a, 1))  # 1 where a is 0 (those keep b)
        rest = b - op("div")(b, divisor, rounding_mode="trunc") * divisor
        a, b = op("where")(live, rest, a), op("where")(live, a, b)
    return b


@decomposition("gcd", "abs add mul ne sum where div sub to_dtype")
def _gcd_decomposition(a: Tensor, b: Tensor) -> Tensor:
    dt = result_dtype("gcd", a, b)
    return _gcd(as_dtype(a, dt), as_dtype(b, dt))


@decomposition("lcm", "abs add mul ne sum where div sub eq to_dtype")
def _lcm(a: Tensor, b: Tensor) -> Tensor:
    dt = result_dtype("lcm", a, b)
    a, b = as_dtype(a, dt), as_dtype(b, dt)
    g = _gcd(a, b)
    if dt.itemsize < 4:  # PyTorch's ``a / g * b`` runs in C's int for the narrow types, then wraps
        from ... import _dtypes

        a, b, g = (as_dtype(t, _dtypes.int32) for t in (a, b, g))
    zero = op("eq")(g, 0)
    quotient = op("div")(a, op("where")(zero, op("add")(g, 1), g), rounding_mode="trunc")
    return op("where")(zero, g, op("abs")(quotient * b))


def _shift_operands(name: str, a: Any, b: Any) -> tuple[Tensor, Tensor, Any]:
    dt = result_dtype(name, a, b)
    like = a if isinstance(a, Tensor) else b
    a = as_dtype(a, dt) if isinstance(a, Tensor) else scalar_like(a, like, dt)
    b = as_dtype(b, dt) if isinstance(b, Tensor) else scalar_like(b, like, dt)
    return a, b, dt


def _power_of_two(shift: Tensor, valid: Tensor) -> Tensor:
    """``2 ** shift`` in ``shift``'s dtype where ``valid`` (wrapping at the top bit), 1 elsewhere."""
    exponent = op("where")(valid, shift, op("mul")(shift, 0))
    return op("pow")(op("add")(op("mul")(exponent, 0), 2), exponent)


@decomposition("bitwise_left_shift", "where mul add pow ge lt bitwise_and to_dtype")
def _left_shift(a: Any, b: Any) -> Tensor:
    """``a * 2 ** b``, wrapping as the shift does; 0 where ``b`` is negative or at least the
    width in bits (PyTorch's rule: the shift count is read as unsigned)."""
    a, b, dt = _shift_operands("bitwise_left_shift", a, b)
    valid = op("ge")(b, 0) & op("lt")(b, dt.itemsize * 8)
    return op("where")(valid, a * _power_of_two(b, valid), op("mul")(a, 0))


@decomposition("bitwise_right_shift", "where mul add pow ge lt bitwise_and div to_dtype")
def _right_shift(a: Any, b: Any) -> Tensor:
    """``floor(a / 2 ** b)`` (an arithmetic shift); where ``b`` is negative or reaches the width
    less the sign bit, the shift by that width less one: -1 for negative ``a``, else 0."""
    a, b, dt = _shift_operands("bitwise_right_shift", a, b)
    valid = op("ge")(b, 0) & op("lt")(b, dt.itemsize * 8 - int(dt.is_signed))
    shifted = op("div")(a, _power_of_two(b, valid), rounding_mode="floor")
    return op("where")(valid, shifted, op("where")(op("lt")(a, 0), op("add")(op("mul")(a, 0), -1), op("mul")(a, 0)))
