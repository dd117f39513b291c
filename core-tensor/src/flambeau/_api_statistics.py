"""The overloaded call forms of the statistical reductions and comparisons.

``var(x, unbiased)`` / ``var(x, dim, unbiased, keepdim)`` beside ``var(x, dim, correction=)``,
``median(x)`` beside ``median(x, dim)``, and ``equal``/``allclose`` returning Python bools.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any

from ._tensor import Tensor
from .ops._registry import FUNCTIONS


def _moment(name: str) -> Any:
    op = FUNCTIONS[name]

    def fn(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
           correction: Any = None, out: Any = None) -> Any:
        if isinstance(dim, bool):  # var(x, True): the old ``unbiased`` form
            dim, unbiased = None, dim
        if unbiased is not None:
            if correction is not None:
                raise RuntimeError(f"{name}(): cannot specify both 'unbiased' and 'correction'")
            correction = 1 if unbiased else 0
        return op(input, dim, correction=correction, keepdim=keepdim, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (op.__doc__ or "") + (
        "\n``unbiased`` (bool), positional after ``dim`` or alone, is the older form of ``correction``: "
        "True is 1, False is 0.\n")
    return fn


def _median(name: str) -> Any:
    whole, along = FUNCTIONS[name], FUNCTIONS[name + "_dim"]

    def fn(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if dim is None:
            return whole(input, out=out)
        return along(input, dim, keepdim, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(input)``: the median of all elements (the lower middle value for an even count); "
                  f"``{name}(input, dim, keepdim=False)``: ``(values, indices)`` along ``dim``.\n\n"
                  "    Example::\n\n        >>> x = flambeau.tensor([[1.0, 5.0, 2.0], [4.0, 3.0, 6.0]])\n"
                  f"        >>> flambeau.{name}(x, 1).values\n        tensor([2., 4.])\n")
    return fn


def equal(input: Tensor, other: Tensor) -> bool:
    """``True`` if both tensors have the same size and elements (NaN is unequal to itself).

    Example::

        >>> flambeau.equal(flambeau.tensor([1, 2]), flambeau.tensor([1, 2]))
        True
    """
    return bool(FUNCTIONS["equal"](input, other).item())


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (broadcasting).

    Example::

        >>> flambeau.allclose(flambeau.tensor([1.0, 2.0]), flambeau.tensor([1.0, 2.0 + 1e-9]))
        True
    """
    return bool(FUNCTIONS["allclose"](input, other, rtol, atol, equal_nan).item())


def install(namespace: ModuleType) -> None:
    for name in ("var", "std", "var_mean", "std_mean"):
        fn = _moment(name)
        setattr(namespace, name, fn)
        if name in ("var", "std"):
            setattr(Tensor, name, fn)
    for name in ("median", "nanmedian"):
        fn = _median(name)
        setattr(namespace, name, fn)
        setattr(Tensor, name, fn)
    for fn in (equal, allclose):
        setattr(namespace, fn.__name__, fn)
        setattr(Tensor, fn.__name__, fn)
    # flambeau.return_types.sort etc. exist before the first call, as torch.return_types' do.
    from .ops._registry import OPS
    from .return_types import for_op

    for name in ("aminmax", "median_dim", "nanmedian_dim", "mode", "cummax", "cummin", "sort", "topk", "kthvalue"):
        decl = OPS.get(name)
        if decl is not None and decl.output_names:
            for_op(name, decl.output_names)
