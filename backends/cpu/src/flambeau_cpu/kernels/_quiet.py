"""Kernels that say nothing about floating-point exceptions, as PyTorch's do.

numpy warns (``RuntimeWarning: divide by zero encountered in log``...) where PyTorch returns
inf or nan in silence. ``np.errstate(all="ignore")`` would silence it but costs about a
microsecond a call; :func:`quiet` sets numpy's error mode through the context variable that
``errstate`` itself sets (numpy >= 2), a tenth of that, and falls back to ``errstate`` elsewhere.
The mode is restored on the way out, so a user's own ``np.seterr`` / ``errstate`` is untouched.
"""
from __future__ import annotations

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
        return np.errstate(all="ignore")(kernel)
    set_mode, reset_mode = _extobj_contextvar.set, _extobj_contextvar.reset

    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        token = set_mode(_IGNORE)
        try:
            return kernel(*args, **kwargs)
        finally:
            reset_mode(token)

    return run
