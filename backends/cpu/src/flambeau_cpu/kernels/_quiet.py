"""Kernels that say nothing about floating-point exceptions, as PyTorch's do.

numpy warns (``RuntimeWarning: divide by zero encountered in log``...) where PyTorch returns
inf or nan in silence. ``np.errstate(all="ignore")`` would silence it but costs about a
microsecond a call; :func:`quiet` sets numpy's error mode through the context variable that
``errstate`` itself sets (numpy >= 2), a tenth of that, and falls back to ``errstate`` elsewhere.
The mode is restored on the way out, so a user's own ``np.seterr`` / ``errstate`` is untouched.

That tenth is still an eighth of a 1-element ``a + b``, so the hottest kernels call their ufunc
through :data:`run_quiet` instead: ``Context.run`` of a context made once at import in which the
mode is "ignore", entered only for the ufunc call (about 15 ns). numpy's global state and the
user's own context stay as they are. It is for bare ufunc calls only: code run in that context
sees the other context variables as they were at import. A context can be entered by one thread
at a time, so ``run_quiet`` raises RuntimeError while another thread is inside it (numpy lets go
of the GIL in longer loops); callers then take a slower path through :func:`quiet`.
"""
from __future__ import annotations

import contextvars
import functools
from typing import Any, Callable

import numpy as np

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, TypeError):  # pragma: no cover - numpy < 2 (or a changed private API)
    _extobj_contextvar = None


def quiet(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` run with numpy's floating-point errors ignored (same signature, same result)."""
    if _extobj_contextvar is None:  # pragma: no cover
        run = np.errstate(all="ignore")(kernel)
        run._quiet = True
        return run
    set_mode, reset_mode = _extobj_contextvar.set, _extobj_contextvar.reset

    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        token = set_mode(_IGNORE)
        try:
            return kernel(*args, **kwargs)
        finally:
            reset_mode(token)

    run._quiet = True  # type: ignore[attr-defined]
    return run


def quiet_all(kernels: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """``kernels`` each made :func:`quiet` (those that already are stay as they are).

    For modules whose kernels are numpy/scipy compositions (matrix products, norms, special
    functions) where any step may meet inf or NaN: one wrapper per kernel call rather than an
    ``errstate`` around each step that can warn, and nothing forgotten.
    """
    return {name: k if getattr(k, "_quiet", False) else quiet(k) for name, k in kernels.items()}


def _errstate_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - numpy < 2
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def _quiet_run() -> Callable[..., Any]:
    if _extobj_contextvar is None:  # pragma: no cover
        return _errstate_call
    context = contextvars.copy_context()
    context.run(_extobj_contextvar.set, _IGNORE)
    return context.run


#: ``run_quiet(ufunc, *args, **kwargs)``: the ufunc called with numpy's floating-point errors ignored
#: (see the module docstring; RuntimeError while another thread is inside it).
run_quiet: Callable[..., Any] = _quiet_run()
