"""Integer number theory onto the core tier: ``gcd`` by Euclid's algorithm run on every element
at once (a data-dependent number of rounds, at most ~92 for int64: the loop ends when no element
has a non-zero divisor left), and ``lcm`` from it, both as PyTorch computes them (``abs`` first,
so the most negative value keeps its wrapped sign; ``lcm`` of a zero is 0, and the product of the
narrow types is formed in int32 and wrapped, as C's promotion does in PyTorch's kernel)."""
from __future__ import annotations


from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype


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
