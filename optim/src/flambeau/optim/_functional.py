"""How an optimizer runs its update op: the dispatched op (fused kernel or composite) or the composite directly.

Every algorithm declares one multi-tensor op, ``optim_<name>``, whose composite updates the tensors one
at a time with flambeau ops (so it runs on any backend). ``foreach=False`` calls that composite
directly; ``foreach=None`` or ``True`` goes through the dispatcher, which picks a backend's fused
kernel where one is registered; ``fused=True`` insists on such a kernel.
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau import Tensor

#: op name -> its composite (the single-tensor loop), filled as the algorithm modules import.
COMPOSITES: dict[str, Callable[..., Any]] = {}


def composite(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``fn`` as the composite of op ``name``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        COMPOSITES[name] = fn
        return fn

    return register


def has_kernel(name: str, device_type: str) -> bool:
    """Whether the backend of ``device_type`` registered its own kernel for op ``name``."""
    from flambeau.ops._registry import TABLES

    return name in TABLES[device_type]


def run_update(name: str, params: list[Tensor], foreach: bool | None, fused: bool | None, differentiable: bool,
               *args: Any) -> None:
    """Run the update op ``name`` over ``params`` (the first argument of ``args``)."""
    if not params:
        return
    if differentiable or (foreach is False and not fused):
        COMPOSITES[name](*args)
        return
    from flambeau.ops._registry import FUNCTIONS

    fn = FUNCTIONS.get(name)
    if fused:
        device_type = params[0].device.type
        if fn is None or not has_kernel(name, device_type):
            raise RuntimeError(f"`fused=True` requires a fused kernel for '{name}' on the '{device_type}' backend, "
                               "and none is installed")
        for p in params:
            if not p.is_floating_point():
                raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                                   f"supported devices: ['{device_type}'] but {p.dtype} and {p.device.type}")
    if fn is None:  # flambeau-optim's op plugin is disabled: the composite still does the work
        COMPOSITES[name](*args)
        return
    fn(*args)
    # A kernel writes through natives; bump the version counters as an in-place op would.
    for p in params:
        p._version_counter[0] += 1


# -- small composites shared by the algorithms ---------------------------------------------

def addcmul_(x: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    """``x += value * a * b`` in place."""
    return x.add_(a * b, alpha=value) if value != 1 else x.add_(a * b)


def addcdiv_(x: Tensor, a: Tensor, b: Tensor, value: float = 1.0) -> Tensor:
    """``x += value * a / b`` in place."""
    return x.add_(a / b, alpha=value) if value != 1 else x.add_(a / b)


def maybe_negate(grad: Tensor, maximize: bool) -> Tensor:
    return grad.neg() if maximize else grad


def check_lengths(params: list, *lists: list) -> None:
    """The meta check of an update op: every non-empty state list matches ``params``."""
    for lst in lists:
        if len(lst) not in (0, len(params)):
            raise ValueError(f"expected {len(params)} tensors in every list, got {len(lst)}")
