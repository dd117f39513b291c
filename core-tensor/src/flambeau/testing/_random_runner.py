"""Checking a random op: its values cannot be compared with numpy's, so the kit checks what must hold.

For an op declared ``random=True`` the case's ``ref`` returns the bounds of the distribution's support,
``(low, high)`` or ``(low, high, integral)``, as arrays (or numbers) broadcastable to the result's shape.
The kit then checks, for each sample:

- the result's shape (that of ``np.broadcast(low, high)``), dtype and device;
- every value lies in ``[low, high]`` (never NaN; complex values: both parts), and is an integer
  when ``integral``;
- the same seed gives the same values: through ``flambeau.manual_seed``, through an explicit
  ``flambeau.Generator`` of the device, with ``out=``, and in the in-place form.

A backend that computes no data (``meta``) gets the shape, dtype and ``out=`` checks only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import flambeau
from flambeau.ops import declarations, function

from ._case import Arg, OpCase, Sample
from ._runner import (Inputs, as_list, check_outputs, expected_dtypes, for_reference, host_array, seed_for,
                      to_host)


def _bounds(case: OpCase, host_args: tuple, host_kwargs: dict) -> tuple[np.ndarray, np.ndarray, bool]:
    args = tuple(for_reference(a, True) for a in host_args)
    kwargs = {k: for_reference(v, True) for k, v in host_kwargs.items()}
    produced = case.ref(*args, **kwargs)
    low, high = np.broadcast_arrays(np.asarray(produced[0], dtype=np.float64),
                                    np.asarray(produced[1], dtype=np.float64))
    return low, high, bool(produced[2]) if len(produced) > 2 else False


def _check_support(values: np.ndarray, low: np.ndarray, high: np.ndarray, integral: bool) -> None:
    parts = [values.real, values.imag] if values.dtype.kind == "c" else [values]
    for part in parts:
        part = part.astype(np.float64)
        if np.isnan(part).any():
            raise AssertionError("a sample is NaN")
        outside = (part < low) | (part > high)
        if outside.any():
            where = tuple(int(i[0]) for i in np.nonzero(outside))
            raise AssertionError(f"sample {part[where]} at {where} lies outside [{low[where]}, {high[where]}]")
        if integral and not np.all(part[np.isfinite(part)] == np.round(part[np.isfinite(part)])):
            raise AssertionError("a sample of an integer-valued distribution is not an integer")


def _same(first: Any, second: Any, what: str) -> None:
    a, b = to_host(first), to_host(second)
    if a.shape != b.shape or not np.array_equal(a, b):
        raise AssertionError(f"the same seed gave different values {what}")


def run_random_sample(case: OpCase, dtype: str, index: int, sample: Sample, device: Any, data: bool) -> None:
    decl = declarations()[case.op]
    fn = function(case.op)
    seed = seed_for(case.op, dtype, index)

    def call(f: Any = fn, **extra: Any) -> tuple[Any, tuple]:
        _, _, args, kwargs = Inputs(device, seed).sample(sample)
        flambeau.manual_seed(seed)
        return f(*args, **kwargs, **extra), args

    host_args, host_kwargs, _, _ = Inputs(device, seed).sample(sample)
    low, high, integral = _bounds(case, host_args, host_kwargs)
    first, _ = call()
    dtypes = expected_dtypes(case, sample, 1)
    check_outputs(as_list(first), [low], dtypes, device, case, data=False)
    if data:
        _check_support(host_array(first), low, high, integral)
        _same(first, call()[0], "through manual_seed")
        if "generator" in decl.param_names and "generator" not in sample.kwargs:
            gen = flambeau.Generator(device)
            a, _ = call(generator=gen.manual_seed(seed))
            b, _ = call(generator=gen.manual_seed(seed))
            _same(a, b, "from a flambeau.Generator")

    if decl.returns_out and "out" not in sample.kwargs:
        out = flambeau.empty(low.shape, dtype=getattr(flambeau, dtypes[0]), device=device)
        returned, _ = call(out=out)
        if returned is not out:
            raise AssertionError("with out=: the op did not return the out tensor")
        check_outputs([out], [low], dtypes, device, case, data=False)
        if data:
            _same(first, out, "with out=")

    head = sample.args[0] if sample.args else None
    if decl.inplace and isinstance(head, Arg) and dtypes[0] == head.dtype and low.shape == head.shape:
        returned, args = call(function(case.op + "_"))
        if returned is not args[0]:
            raise AssertionError(f"{case.op}_ did not return its input")
        check_outputs([returned], [low], dtypes, device, case, data=False)
        if data:
            _same(first, returned, f"in place ({case.op}_)")
