"""``FLAMBEAU_CHECK_KERNELS=1``: every kernel result checked against what the op promises.

A backend's kernel that returns, or its allocator that makes, an array of the wrong shape or
dtype would otherwise become a silently wrong tensor. In this debug mode each backend's kernel
table is built with checking wrappers (read once, when the table is built: with the variable
unset the table holds the kernels themselves and the per-op path is unchanged):

- the allocator (``Backend.empty``) must return the shape and dtype asked for; so, at load, each
  dtype the backend declares must come back as that dtype (a backend that declares a dtype it
  cannot hold is refused);
- a compute or factory kernel fills ``out`` and returns nothing (or ``out``): one that returns
  another array computed a result that would be thrown away;
- a view kernel's result must have the dtype of its input (the dtype-reinterpreting views
  excepted) and the shape the CPU backend's kernel gives for the same shapes.

Each failure raises :class:`KernelCheckError` naming the backend, the op, what was expected and
what came back.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

#: The environment variable that switches the checks on (any value but "", "0").
VARIABLE = "FLAMBEAU_CHECK_KERNELS"

#: View ops whose result may have another dtype than their input.
_REINTERPRETING = frozenset({"view_as_real", "view_as_complex", "real", "imag", "view_dtype", "_view_dtype"})


class KernelCheckError(RuntimeError):
    """A kernel or allocator returned something other than what its op promises."""


def enabled() -> bool:
    return os.environ.get(VARIABLE, "") not in ("", "0")


def _shape_dtype(native: Any) -> tuple[tuple, Any]:
    return tuple(getattr(native, "shape", ())), getattr(native, "dtype", None)


def checked_allocator(backend: Any, empty: Callable[..., Any]) -> Callable[..., Any]:
    name = backend.name

    def checked_empty(shape: tuple, dtype: Any, device: Any) -> Any:
        native = empty(shape, dtype, device)
        got_shape, got_dtype = _shape_dtype(native)
        if got_shape != tuple(shape) or got_dtype != dtype.numpy_dtype:
            raise KernelCheckError(
                f"backend '{name}': its allocator (Backend.empty) returned an array of shape {got_shape} and dtype "
                f"{got_dtype}; expected shape {tuple(shape)} and dtype {dtype.numpy_dtype} ({dtype})")
        return native

    return checked_empty


def check_declared_dtypes(backend: Any, device: Any) -> None:
    """Each dtype the backend declares must be allocatable as itself (checked at load)."""
    for dt in sorted(backend.dtypes, key=lambda d: d.name):
        native = backend.empty((1,), dt, device)
        if _shape_dtype(native)[1] != dt.numpy_dtype:
            raise KernelCheckError(
                f"backend '{backend.name}' declares {dt} but cannot hold it: its allocator returns "
                f"{_shape_dtype(native)[1]} arrays for it; remove it from Backend.dtypes or store it as "
                f"{dt.numpy_dtype}")


def _outs(out: Any) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def checked_compute(backend_name: str, op_name: str, kernel: Callable[..., Any]) -> Callable[..., Any]:
    def checked(*args: Any, out: Any) -> Any:
        expected = [_shape_dtype(o) for o in _outs(out)]
        result = kernel(*args, out=out)
        if result is not None and result is not out and not (
                isinstance(result, tuple) and all(r is o for r, o in zip(result, _outs(out)))):
            got = [_shape_dtype(r) for r in _outs(result)]
            raise KernelCheckError(
                f"backend '{backend_name}', op '{op_name}': the kernel returned a new array {_describe(got)} "
                f"instead of writing its result into out= {_describe(expected)}")
        got = [_shape_dtype(o) for o in _outs(out)]
        if got != expected:
            raise KernelCheckError(f"backend '{backend_name}', op '{op_name}': out= changed from "
                                   f"{_describe(expected)} to {_describe(got)}")
        return result

    checked.__wrapped__ = kernel  # type: ignore[attr-defined] - the signature check reads the kernel's own
    return checked


def checked_view(backend_name: str, op_name: str, kernel: Callable[..., Any],
                 reference: Callable[..., Any] | None) -> Callable[..., Any]:
    def checked(*args: Any) -> Any:
        result = kernel(*args)
        first = args[0] if args else None
        if not hasattr(first, "shape") or not hasattr(result, "shape"):
            return result  # a view of several tensors (broadcast_tensors...): checked by the kit
        got_shape, got_dtype = _shape_dtype(result)
        if op_name not in _REINTERPRETING and got_dtype != first.dtype:
            raise KernelCheckError(f"backend '{backend_name}', op '{op_name}': the view kernel returned dtype "
                                   f"{got_dtype}; expected {first.dtype} (its input's)")
        want = _reference_shape(reference, first, args[1:])
        if want is not None and got_shape != want:
            raise KernelCheckError(f"backend '{backend_name}', op '{op_name}': the view kernel returned shape "
                                   f"{got_shape}; expected {want}")
        return result

    checked.__wrapped__ = kernel  # type: ignore[attr-defined]
    return checked


def _reference_shape(reference: Callable[..., Any] | None, first: Any, rest: tuple) -> tuple | None:
    """The shape the CPU backend's kernel gives for an input of ``first``'s shape (values unread:
    a zero-strided array of one element), or None when there is no reference to ask."""
    if reference is None:
        return None
    try:
        dummy = np.broadcast_to(np.zeros((), np.dtype(first.dtype)), tuple(first.shape))
        return tuple(reference(dummy, *rest).shape)
    except Exception:  # noqa: BLE001 - a reference that needs real strides: the kit compares the values
        return None


def _describe(specs: list) -> str:
    return ", ".join(f"(shape {s}, dtype {d})" for s, d in specs)


def wrap_kernels(backend: Any, kernels: dict[str, Callable[..., Any]], ops: dict[str, Any],
                 tables: Any) -> dict[str, Callable[..., Any]]:
    """The kernels of ``backend`` wrapped with the checks above (views against the CPU's kernels,
    read from ``tables``, the registry's kernel tables)."""
    from ._decl import COMPUTE, FACTORY, VIEW

    reference_kernels: dict[str, Callable[..., Any]] = {}
    if backend.name != "cpu":
        try:
            reference_kernels = dict(tables["cpu"])
        except Exception:  # noqa: BLE001 - no CPU backend installed: views are checked for dtype only
            reference_kernels = {}
    wrapped = {}
    for name, kernel in kernels.items():
        kind = ops[name].kind
        if kind in (COMPUTE, FACTORY):
            wrapped[name] = checked_compute(backend.name, name, kernel)
            if hasattr(kernel, "into_existing"):  # the out= variant (see _dispatch._run_into)
                wrapped[name].into_existing = checked_compute(  # type: ignore[attr-defined]
                    backend.name, name, kernel.into_existing)
        elif kind == VIEW:
            ref = reference_kernels.get(name) if backend.name != "cpu" else None
            wrapped[name] = checked_view(backend.name, name, kernel, getattr(ref, "__wrapped__", ref))
        else:
            wrapped[name] = kernel
    return wrapped
