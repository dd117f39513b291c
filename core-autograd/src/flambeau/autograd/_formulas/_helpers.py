"""Small building blocks shared by the formulas (all written with flambeau ops)."""
from __future__ import annotations

from typing import Any, Sequence

from flambeau._tensor import Tensor


def expandable(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def sum_to(g: Tensor, shape: Sequence[int]) -> Tensor:
    """``g`` summed over the dims that broadcasting added to reach its shape from ``shape``."""
    shape = tuple(shape)
    gshape = g._data.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead or g._data.shape != shape:
        g = g.reshape(shape)
    return g


def unsqueeze_dims(g: Tensor, dims: Sequence[int] | None, ndim: int, keepdim: bool) -> Tensor:
    """Put back the dims a reduction removed (so that ``g`` broadcasts against the input)."""
    if keepdim or ndim == 0:
        return g
    if dims is None:
        return g.reshape((1,) * ndim)
    for d in sorted(dims):
        g = g.unsqueeze(d)
    return g


def reduction_dims(dim: Any, ndim: int) -> tuple | None:
    """``dim`` as sorted non-negative ints, or None for "all dims"."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    if isinstance(dim, int):
        dim = (dim,)
    if ndim == 0:
        return None
    return tuple(sorted(d % ndim for d in dim))


def zeros_like(t: Tensor) -> Tensor:
    import flambeau

    return flambeau.zeros(tuple(t.shape), dtype=t._dtype, device=t._device)


def zeros(shape: Sequence[int], like: Tensor) -> Tensor:
    import flambeau

    return flambeau.zeros(tuple(shape), dtype=like._dtype, device=like._device)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def conj(x: Any) -> Any:
    """The complex conjugate of a tensor or Python number; real ones are returned as they are,
    without an op, so that real-valued backward passes cost nothing more.

    Products' and quotients' gradients use the conjugates of the other factors: PyTorch's
    convention for complex autograd (the gradient of a real ``L`` is ``dL/dRe + i dL/dIm``).
    """
    if x.__class__ is Tensor or isinstance(x, Tensor):
        return x.conj_physical() if x._dtype.is_complex else x
    if isinstance(x, complex):
        return x.conjugate()
    return x
