"""Kernels that say nothing about floating-point exceptions, as PyTorch's do.

numpy warns (``RuntimeWarning: invalid value encountered in subtract``...) where PyTorch returns
inf or NaN in silence. How it is silenced, and why this way:

* ``np.seterr(all="ignore")`` once at import would cost nothing per call, but it is numpy's
  global state: the user's own numpy code would stop warning too (PyTorch leaves numpy alone),
  and a user's ``np.seterr``/``errstate`` would switch flambeau's warnings back on. Not that.
* ``np.errstate(all="ignore")`` around each kernel is exact but costs about a microsecond.
* Here: numpy >= 2 keeps its error mode in a context variable (what ``errstate`` sets). At
  import we make one :class:`contextvars.Context` in which that mode is "ignore", and each quiet
  kernel runs inside it through ``Context.run``: about 15 ns, plus a wrapper written with the
  kernel's own parameters (:mod:`._signature_wrap`), about 40 ns more. The user's context, and so
  their own error mode, is never touched. The hottest kernels (1-element ``a + b``) call their
  ufunc through :data:`run_quiet` directly, without the wrapper.

Two things follow from running in that one context. Code inside sees the other context variables
as they were at import: fine for numpy and scipy calls, which is all kernels make (flambeau has
no context variables). And a context can be entered by one thread at a time, and not again from
inside itself: when it is busy (another thread is in a kernel while numpy or BLAS has let go of
the GIL, or a quiet kernel calls another), ``Context.run`` raises RuntimeError before running
anything, and the kernel runs instead with the error mode set and reset in the caller's context
(:func:`_elsewhere`, about 0.1 µs more).
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable

import numpy as np

from ._signature_wrap import with_signature

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, TypeError):  # pragma: no cover - numpy < 2 (or a changed private API)
    _extobj_contextvar = None


def _elsewhere(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``kernel`` with numpy's errors ignored in the caller's own context (the quiet one is busy)."""
    if _extobj_contextvar is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            return kernel(*args, **kwargs)
    token = _extobj_contextvar.set(_IGNORE)
    try:
        return kernel(*args, **kwargs)
    finally:
        _extobj_contextvar.reset(token)


def _quiet_run() -> Callable[..., Any]:
    if _extobj_contextvar is None:  # pragma: no cover
        return _elsewhere
    context = contextvars.copy_context()
    context.run(_extobj_contextvar.set, _IGNORE)
    return context.run


#: ``run_quiet(ufunc, *args, **kwargs)``: the call made with numpy's floating-point errors ignored.
#: Raises RuntimeError, before calling anything, while the quiet context is busy (see above).
run_quiet: Callable[..., Any] = _quiet_run()

# A RuntimeError raised by Context.run itself has no frame below the wrapper's; one raised by the
# kernel (PyTorch's errors are RuntimeErrors too) has the kernel's.
_QUIET_BODY = """\
    try:
        return _enter(_kernel, {args})
    except RuntimeError as _quiet_error:  # (a name no kernel parameter has: `as` unbinds it)
        if _quiet_error.__traceback__.tb_next is not None:
            raise
    return _elsewhere(_kernel, {args})
"""


def quiet(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` run with numpy's floating-point errors ignored (same parameters, same result)."""
    run = with_signature(kernel, _QUIET_BODY, {"_enter": run_quiet, "_elsewhere": _elsewhere})
    run._quiet = True  # type: ignore[attr-defined]
    return run


def quiet_all(kernels: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """``kernels`` each made :func:`quiet` (those that already are stay as they are).

    For modules whose kernels are numpy/scipy compositions (matrix products, norms, special
    functions) where any step may meet inf or NaN: one wrapper per kernel call rather than an
    ``errstate`` around each step that can warn, and nothing forgotten.
    """
    return {name: k if getattr(k, "_quiet", False) else quiet(k) for name, k in kernels.items()}
