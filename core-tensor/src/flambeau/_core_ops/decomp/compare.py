"""Tolerant and exact whole-tensor comparisons onto the core tier's comparisons and reductions."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op


def _isclose(a: Tensor, b: Tensor, rtol: float, atol: float, equal_nan: bool) -> Tensor:
    """numpy's and PyTorch's rule: ``|a - b| <= atol + rtol |b|`` where both are finite, ``a == b``
    elsewhere (infinities), NaN equal to NaN only with ``equal_nan``. Integers and bool compare in
    float64, the half types in float32, as the CPU kernel."""
    from ... import _dtypes

    if not (a._dtype.is_floating_point or a._dtype.is_complex):
        a, b = as_dtype(a, _dtypes.float64), as_dtype(b, _dtypes.float64)
    elif a._dtype in (_dtypes.float16, _dtypes.bfloat16):
        a, b = as_dtype(a, _dtypes.float32), as_dtype(b, _dtypes.float32)
    finite = op("isfinite")(a) & op("isfinite")(b)
    near = op("le")(op("abs")(a - b), op("abs")(b) * rtol + atol)
    close = op("where")(finite, near, op("eq")(a, b))
    if equal_nan:
        close = close | (op("ne")(a, a) & op("ne")(b, b))
    return close


@decomposition("isclose", "isfinite abs sub mul add le eq ne bitwise_and bitwise_or where to_dtype")
def _isclose_decomposition(a: Tensor, b: Tensor, rtol: Any = 1e-05, atol: Any = 1e-08,
                           equal_nan: bool = False) -> Tensor:
    return _isclose(a, b, rtol, atol, equal_nan)


@decomposition("allclose", "isclose eq sum to_dtype")
def _allclose(a: Tensor, b: Tensor, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Tensor:
    return op("sum")(op("eq")(_isclose(a, b, rtol, atol, equal_nan), False)) == 0


@decomposition("equal", "eq sum to_dtype")
def _equal(a: Tensor, b: Tensor) -> Tensor:
    from ..._creation import full
    from ... import _dtypes

    if tuple(a._data.shape) != tuple(b._data.shape):
        return full((), False, dtype=_dtypes.bool, device=a._device)
    return op("sum")(op("eq")(op("eq")(a, b), False)) == 0
