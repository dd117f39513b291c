"""``flambeau.gradient``: numerical derivatives by central differences (``torch.gradient``).

Written with flambeau ops (``narrow``, arithmetic, ``cat``), so it runs on every backend and is
differentiable wherever they are.
"""
from __future__ import annotations

from typing import Any, Sequence

from ._tensor import Tensor
from .ops._registry import FUNCTIONS
from .ops.meta import wrap_dim


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    r"""Estimates the gradient of a function sampled on a grid, along each of ``dim``.

    Interior points use second-order central differences; the two ends use one-sided differences
    of order ``edge_order``.

    Args:
        input (Tensor): the function's values.
        spacing (scalar, list of scalars, or list of 1-D tensors): the distance between samples, one
            for every dim, one per dim, or each dim's sample coordinates.
        dim (int or list of ints, optional): the dims to differentiate along (all by default).
        edge_order (int): 1 or 2.

    Returns:
        A tuple with one tensor per dim, each of ``input``'s shape.

    Example::

        >>> flambeau.gradient(flambeau.tensor([1.0, 4.0, 9.0, 16.0]))
        (tensor([3., 4., 6., 7.]),)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError("flambeau.gradient only supports edge_order=1 and edge_order=2.")
    ndim = input.dim()
    if dim is None:
        dims = list(range(ndim))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, ndim)]
    else:
        dims = [wrap_dim(d, ndim) for d in dim]
    spacings = _spacings(spacing, dims, input)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("flambeau.gradient expected each dimension size to be at least edge_order+1")
    return tuple(_along(input, d, h, edge_order) for d, h in zip(dims, spacings))


def _spacings(spacing: Any, dims: Sequence[int], input: Tensor) -> list:
    if isinstance(spacing, (int, float)) and not isinstance(spacing, bool):
        return [spacing] * len(dims)
    if isinstance(spacing, Tensor) and spacing.dim() == 0:
        return [spacing.item()] * len(dims)
    items = list(spacing)
    if len(items) == 1 and len(dims) > 1 and not isinstance(items[0], Tensor):
        items = items * len(dims)
    if len(items) != len(dims):
        raise RuntimeError(f"flambeau.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
                           f"a list of length {len(items)}" if len(dims) == input.dim() else
                           f"flambeau.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {len(items)} "
                           f"and a dim argument of length {len(dims)}.")
    out = []
    for item, d in zip(items, dims):
        if isinstance(item, Tensor) and item.dim() > 0:
            if item.dim() != 1 or item.shape[0] != input.shape[d]:
                raise RuntimeError(f"flambeau.gradient expected each tensor to be on the same device and to have "
                                   f"the size of input along dim {d} ({input.shape[d]}), got {tuple(item.shape)}")
            out.append(item)
        else:
            out.append(item.item() if isinstance(item, Tensor) else item)
    return out


def _slice(t: Tensor, d: int, start: int, length: int) -> Tensor:
    return FUNCTIONS["narrow"](t, d, start, length)


def _shape_for(coords: Tensor, d: int, ndim: int) -> Tensor:
    """A 1-D coordinate difference reshaped to broadcast along dim ``d``."""
    shape = [1] * ndim
    shape[d] = coords.shape[0]
    return coords.reshape(shape)


def _along(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    n, nd = f.shape[d], f.dim()
    if isinstance(h, Tensor):
        return _along_coordinates(f, d, h, edge_order, n, nd)
    interior = (_slice(f, d, 2, n - 2) - _slice(f, d, 0, n - 2)) / (2.0 * h)
    f0, f1, fl, fm = _slice(f, d, 0, 1), _slice(f, d, 1, 1), _slice(f, d, n - 1, 1), _slice(f, d, n - 2, 1)
    if edge_order == 1:
        first, last = (f1 - f0) / h, (fl - fm) / h
    else:
        f2, fk = _slice(f, d, 2, 1), _slice(f, d, n - 3, 1)
        first = (f0 * -1.5 + f1 * 2.0 - f2 * 0.5) / h
        last = (fk * 0.5 - fm * 2.0 + fl * 1.5) / h
    return FUNCTIONS["cat"]([first, interior, last], d)


def _along_coordinates(f: Tensor, d: int, x: Tensor, edge_order: int, n: int, nd: int) -> Tensor:
    dx = x[1:] - x[:-1]  # dx[i] = x[i+1] - x[i]
    hs, hd = _shape_for(dx[:-1], d, nd), _shape_for(dx[1:], d, nd)
    fm, f0, fp = _slice(f, d, 0, n - 2), _slice(f, d, 1, n - 2), _slice(f, d, 2, n - 2)
    interior = (fm * (-hd / (hs * (hd + hs))) + f0 * ((hd - hs) / (hd * hs)) + fp * (hs / (hd * (hd + hs))))
    e0, e1, el, em = _slice(f, d, 0, 1), _slice(f, d, 1, 1), _slice(f, d, n - 1, 1), _slice(f, d, n - 2, 1)
    if edge_order == 1:
        first = (e1 - e0) / dx[0]
        last = (el - em) / dx[-1]
    else:
        e2, ek = _slice(f, d, 2, 1), _slice(f, d, n - 3, 1)
        a1, a2 = dx[0], dx[1]
        first = (e0 * (-(2.0 * a1 + a2) / (a1 * (a1 + a2))) + e1 * ((a1 + a2) / (a1 * a2))
                 + e2 * (-a1 / (a2 * (a1 + a2))))
        b1, b2 = dx[-2], dx[-1]
        last = (ek * (b2 / (b1 * (b1 + b2))) + em * (-(b2 + b1) / (b1 * b2))
                + el * ((2.0 * b2 + b1) / (b2 * (b1 + b2))))
    return FUNCTIONS["cat"]([first, interior, last], d)
