"""Matrix products onto the core tier's ``mm`` and ``bmm``."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from . import decomposition
from ._util import as_dtype, op, result_dtype


def _broadcast(a: Tensor, b: Tensor) -> tuple[int, ...]:
    from ...ops.meta import broadcast_shapes

    return broadcast_shapes(a._data.shape, b._data.shape)


@decomposition("matmul", "mm bmm mul sum unsqueeze squeeze expand reshape to_dtype")
def _matmul(a: Tensor, b: Tensor) -> Tensor:
    da, db = a._data.ndim, b._data.ndim
    if da == 1 and db == 1:
        return op("sum")(a * b)
    if da == 2 and db == 2:
        return op("mm")(a, b)
    if da == 1 and db == 2:
        return op("mm")(a.unsqueeze(0), b).squeeze(0)
    if da == 2 and db == 1:
        return op("mm")(a, b.unsqueeze(1)).squeeze(1)
    from ...ops.meta import broadcast_shapes

    a2 = a.unsqueeze(0) if da == 1 else a
    b2 = b.unsqueeze(-1) if db == 1 else b
    batch = broadcast_shapes(a2._data.shape[:-2], b2._data.shape[:-2])
    n, k = a2._data.shape[-2:]
    m = b2._data.shape[-1]
    size = 1
    for s in batch:
        size *= s
    r = op("bmm")(a2.expand(batch + (n, k)).reshape(size, n, k), b2.expand(batch + (k, m)).reshape(size, k, m))
    r = r.reshape(batch + (n, m))
    if da == 1:
        r = r.squeeze(-2)
    if db == 1:
        r = r.squeeze(-1)
    return r


@decomposition("dot", "mul sum")
def _dot(a: Tensor, b: Tensor) -> Tensor:
    return op("sum")(a * b)


@decomposition("vdot", "conj_physical mul sum")
def _vdot(a: Tensor, b: Tensor) -> Tensor:
    return op("sum")(op("conj_physical")(a) * b)


@decomposition("mv", "mm unsqueeze squeeze")
def _mv(a: Tensor, v: Tensor) -> Tensor:
    return op("mm")(a, v.unsqueeze(1)).squeeze(1)


def _add_scaled(name: str, input: Tensor, product: Tensor, beta: Any, alpha: Any) -> Tensor:
    """``beta * input + alpha * product`` (``name``'s result dtype comes from the decorator's cast)."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # input is not read (NaN in it does not propagate), only broadcast
        return product.expand(_broadcast(product, input)).clone()
    return product + (input if beta == 1 else input * beta)


@decomposition("addmm", "mm mul add expand clone to_dtype")
def _addmm(input: Tensor, m1: Tensor, m2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _add_scaled("addmm", input, op("mm")(m1, m2), beta, alpha)


@decomposition("addmv", "mm unsqueeze squeeze mul add expand clone to_dtype")
def _addmv(input: Tensor, mat: Tensor, vec: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _add_scaled("addmv", input, op("mm")(mat, vec.unsqueeze(1)).squeeze(1), beta, alpha)


@decomposition("addr", "unsqueeze mul bitwise_and add bitwise_or expand clone to_dtype")
def _addr(input: Tensor, v1: Tensor, v2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    outer = v1.unsqueeze(1) * v2.unsqueeze(0)
    if outer._dtype.name == "bool":  # PyTorch: (beta and input) or (alpha and outer)
        result = outer if alpha else op("bitwise_and")(outer, False)
        return result | input if beta else result.expand(_broadcast(result, input)).clone()
    return _add_scaled("addr", input, outer, beta, alpha)


@decomposition("baddbmm", "bmm mul add expand clone to_dtype")
def _baddbmm(input: Tensor, b1: Tensor, b2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _add_scaled("baddbmm", input, op("bmm")(b1, b2), beta, alpha)


@decomposition("addbmm", "bmm sum mul add expand clone to_dtype")
def _addbmm(input: Tensor, b1: Tensor, b2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    dt = result_dtype("addbmm", input, b1, b2, beta, alpha)
    return _add_scaled("addbmm", input, as_dtype(op("sum")(op("bmm")(b1, b2), 0), dt), beta, alpha)
