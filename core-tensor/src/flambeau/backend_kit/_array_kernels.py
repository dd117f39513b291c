"""The core tier's compute kernels, written once against a numpy-like array module ``xp``.

Only functions numpy and CuPy share with the same semantics are called on ``xp``; dtype arithmetic
(promotion, limits, fitting scalars) uses numpy's dtypes on the host, which such modules share.
What a backend must say for itself comes in as arguments: its memory (an
:class:`~flambeau.backend_kit.ArrayStorage`), its random engines, its ``erf``, and the places its
array module differs from numpy (see :func:`make_core_kernels`).

What a kernel receives (the backend guide, backends/meta/README.md): natives in place of tensors,
other arguments as the user wrote them (dims may be negative, ``dim`` may be None or a tuple), and,
for compute ops, ``out``: a native already allocated with the result's shape and dtype, which may
alias an input. Host operands (a 0-d CPU tensor's numpy array, which the core lets combine with a
tensor of any device) are moved to ``xp`` first.
"""
from __future__ import annotations

import contextlib
import math
from types import ModuleType
from typing import Any, Callable

import numpy as np

from ._numbers import HALF_TYPES, comparison_dtype, fitted, is_floating, work_dtype
from ._storage import ArrayStorage
from ._view_kernels import make_view_kernels

#: ``random_source(generator, out)``: the random engine to draw from, as an object with numpy
#: ``Generator``'s ``random(size, dtype)`` and ``integers(low, high, size, dtype, endpoint)``
#: (``generator`` is the user's ``flambeau.Generator`` or None for the device's default).
RandomSource = Callable[[Any, Any], Any]
#: ``scatter_at(ufunc_name, result, key, values)``: ``xp.<ufunc_name>.at(result, key, values)`` (the
#: name is "add" or "multiply"), returning the result (the same array or a new one).
ScatterAt = Callable[[str, Any, tuple, Any], Any]


def host_erf(x: np.ndarray) -> np.ndarray:
    """The error function of a numpy float array without scipy: Python's ``math.erf`` per element
    (correctly rounded in double; slow, about 0.1 µs an element), in ``x``'s dtype."""
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


def make_core_kernels(xp: ModuleType, storage: ArrayStorage, random_source: RandomSource, *,
                      erf: Callable[[Any], Any], scatter_at: ScatterAt | None = None,
                      native_half_matmul: bool = False,
                      ignore_float_errors: bool | None = None) -> dict[str, Callable[..., Any]]:
    """Every kernel of the core tier (``python -m flambeau manifest --tier core``) on ``xp``.

    Args:
        xp: the array module, numpy's API (``numpy``, ``cupy``, ...); its ``ndarray`` type is the
            backend's native array.
        storage: how natives sit in the backend's memory (views, allocation, overlap).
        random_source: the engine ``uniform`` and ``random`` draw from (see :data:`RandomSource`).
        erf: the error function on a float array of ``xp`` (``scipy.special.erf``,
            ``cupyx.scipy.special.erf``); complex inputs are refused before it is called.
        scatter_at: accumulation at repeated indices for ``scatter``'s reductions and ``scatter_add``;
            default ``getattr(xp, name).at``. A module lacking some ``ufunc.at`` passes its own.
        native_half_matmul: whether ``xp.matmul`` multiplies float16/bfloat16 accumulating in float32
            (cuBLAS does; numpy accumulates in the half type, so the kit then computes in float32).
        ignore_float_errors: run under ``np.errstate(all="ignore")``: numpy reports overflow and
            invalid values as warnings, PyTorch never does. Default: when ``xp`` is numpy.

    Returns:
        ``{op name: kernel}``, to return from ``Backend.kernels()`` (add or replace entries for the
        ops your device does faster or differently).

    Example (a numpy-backed device; ``my_storage`` and ``my_engine`` are the backend's own)::

        import numpy as np
        from flambeau.backend_kit import host_erf, make_core_kernels

        KERNELS = make_core_kernels(np, my_storage, lambda generator, out: my_engine(generator),
                                    erf=host_erf)
    """
    if ignore_float_errors is None:
        ignore_float_errors = xp is np
    quiet = (lambda: np.errstate(all="ignore")) if ignore_float_errors else contextlib.nullcontext
    if scatter_at is None:
        def scatter_at(name, result, key, values):
            getattr(xp, name).at(result, key, values)
            return result

    def device_array(x: Any) -> Any:
        """A host operand (a 0-d CPU tensor's numpy array, moved by the core) as ``xp``'s array or a scalar."""
        if isinstance(x, np.ndarray) and not isinstance(x, xp.ndarray):
            return x.item() if x.ndim == 0 else xp.asarray(x)
        return x

    def operand(x: Any, dtype: np.dtype) -> Any:
        """An input as ``dtype``: arrays cast, Python scalars fitted into it (not widening it)."""
        x = device_array(x)
        if isinstance(x, xp.ndarray):
            return x if x.dtype == dtype else x.astype(dtype)
        if dtype.kind == "b":
            return xp.asarray(x).astype(dtype) if not isinstance(x, bool) else x
        if isinstance(x, complex) and dtype.kind != "c":
            return x
        return xp.asarray(fitted(x, dtype), dtype=dtype)

    def store(out: Any, value: Any) -> None:
        """``value`` into ``out``, cast as C casts (a complex value into a real ``out`` keeps its real part)."""
        value = device_array(value)
        if isinstance(value, xp.ndarray) and value.dtype.kind == "c" and out.dtype.kind != "c":
            value = xp.real(value)
        elif isinstance(value, complex) and out.dtype.kind != "c":
            value = value.real
        xp.copyto(out, value, casting="unsafe")

    def any_true(mask: Any) -> bool:
        return bool(xp.any(mask))  # on a device: one read back, as the error must come before the result

    def same_dtype(x: Any, dtype: np.dtype) -> bool:
        return isinstance(x, xp.ndarray) and x.dtype == dtype

    # -- elementwise arithmetic and math ----------------------------------------------------

    def elementwise(fn):
        def kernel(*args, out):
            dt = work_dtype(out.dtype)
            with quiet():
                store(out, fn(*[operand(a, dt) for a in args]))
        kernel.__name__ = getattr(fn, "__name__", "elementwise")
        return kernel

    def into(ufunc, a, b, out) -> bool:
        """One pass straight into ``out`` when both operands already have its dtype (no temporary,
        no second copy: what a large add needs to reach the memory bandwidth)."""
        if out.dtype.name in HALF_TYPES or out.dtype.kind == "b" or not same_dtype(a, out.dtype) or not (
                same_dtype(b, out.dtype) or (isinstance(b, (int, float)) and not isinstance(b, bool)
                                             and out.dtype.kind == "f")):
            return False
        with quiet():
            ufunc(a, b, out=out)
        return True

    def add(input, other, alpha, out):
        if alpha == 1 and into(xp.add, input, other, out):
            return
        dt = work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        with quiet():
            if dt.kind == "b":
                store(out, xp.logical_or(a, b))
            else:
                store(out, a + (b if alpha == 1 else b * operand(alpha, dt)))

    def sub(input, other, alpha, out):
        if alpha == 1 and into(xp.subtract, input, other, out):
            return
        dt = work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        with quiet():
            store(out, a - (b if alpha == 1 else b * operand(alpha, dt)))

    def mul(input, other, out):
        if into(xp.multiply, input, other, out):
            return
        dt = work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        with quiet():
            store(out, xp.logical_and(a, b) if dt.kind == "b" else a * b)

    def div(input, other, rounding_mode, out):
        dt = work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        if dt.kind in "iu" and any_true(b == 0):
            raise RuntimeError("ZeroDivisionError")  # PyTorch's message for integer division by zero
        with quiet():
            if rounding_mode is None:
                r = xp.true_divide(a, b)
            elif rounding_mode == "trunc":
                r = xp.trunc(a / b) if dt.kind in "fc" else int_trunc_div(a, b)
            else:
                r = xp.floor_divide(a, b) if dt.kind in "iu" else float_floor_div(a, b)
            store(out, r)

    def int_trunc_div(a, b):
        q = xp.floor_divide(a, b)
        fix = (q < 0) & (q * b != a)
        return q + fix

    def float_floor_div(a, b):
        # PyTorch's: floor of the true quotient, computed from the remainder to stay exact
        r = xp.fmod(a, b)
        q = (a - r) / b
        q = xp.where((r != 0) & ((b < 0) != (r < 0)), q - 1, q)
        fl = xp.floor(q)
        q = xp.where(q - fl > 0.5, fl + 1, fl)
        return xp.where(b == 0, a / b, xp.where(q == 0, xp.copysign(xp.zeros_like(q), a / b), q))

    def pow(input, exponent, out):
        dt = work_dtype(out.dtype)
        a, b = operand(input, dt), operand(exponent, dt)
        if dt.kind in "iu" and any_true(xp.asarray(b) < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        with quiet():
            store(out, xp.power(a, b))

    def neg(input, out):
        with quiet():
            store(out, xp.negative(input.astype(work_dtype(out.dtype))))

    def abs(input, out):
        store(out, xp.abs(input) if input.dtype.kind != "b" else input)

    def checked_erf(x):
        if x.dtype.kind == "c":
            raise RuntimeError("erf is not implemented for complex numbers")
        return erf(x)

    def atan2(input, other, out):
        if all(isinstance(a, xp.ndarray) and a.dtype.kind in "biu" for a in (input, other)):
            # integers: computed in the float type numpy promotes them to (float16 for 8-bit), as the CPU does
            with quiet():
                store(out, xp.arctan2(input, other))
            return
        elementwise(xp.arctan2)(input, other, out=out)

    def floor(input, out):
        store(out, xp.floor(input.astype(work_dtype(input.dtype))) if is_floating(input.dtype) else input)

    def round(input, decimals, out):
        if not is_floating(input.dtype):
            store(out, input)
            return
        x = input.astype(np.float64 if out.dtype.itemsize > 4 else np.float32)
        with quiet():
            store(out, xp.rint(x) if decimals == 0 else xp.rint(x * 10.0 ** decimals) / 10.0 ** decimals)

    # -- comparisons and selection ----------------------------------------------------------

    def comparison(fn):
        def kernel(input, other, out):
            arrays = (xp.ndarray, np.ndarray)  # a host operand's dtype counts as a device array's
            dt = comparison_dtype([a.dtype for a in (input, other) if isinstance(a, arrays)],
                                  [a for a in (input, other) if not isinstance(a, arrays)])
            with quiet():
                store(out, fn(operand(input, dt), operand(other, dt)))
        kernel.__name__ = fn.__name__
        return kernel

    def where(condition, input, other, out):
        dt = work_dtype(out.dtype)
        store(out, xp.where(device_array(condition), operand(input, dt), operand(other, dt)))

    def clamp(input, min, max, out):
        # PyTorch's order, min(max(x, lo), hi): hi wins when lo > hi. maximum/minimum propagate a
        # NaN of either side, so a NaN element or a NaN bound gives NaN, as PyTorch's clamp does.
        dt = work_dtype(out.dtype)
        x = operand(input, dt)
        with quiet():
            if min is not None:
                x = xp.maximum(x, operand(min, dt))
            if max is not None:
                x = xp.minimum(x, operand(max, dt))
            store(out, x)

    def bitwise(fn):
        def kernel(input, other, out):
            store(out, fn(operand(input, out.dtype), operand(other, out.dtype)))
        kernel.__name__ = fn.__name__
        return kernel

    def bitwise_not(input, out):
        store(out, xp.invert(input))

    # -- reductions -------------------------------------------------------------------------

    def axes(input, dim):
        """A reduction's dims: None and () mean all; negative dims wrapped."""
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) or input.ndim == 0:
            return None
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        return tuple(d % input.ndim for d in dims)

    def reduce(fn, input, dim, keepdim, out):
        dt = work_dtype(out.dtype)
        with quiet():
            r = fn(input if input.dtype == dt else input.astype(dt), axis=axes(input, dim), keepdims=bool(keepdim))
            store(out, xp.reshape(r, out.shape))

    def sum(input, dim, keepdim, dtype, out):
        reduce(xp.sum, input, dim, keepdim, out)

    def prod(input, dim, keepdim, dtype, out):
        reduce(xp.prod, input, dim, keepdim, out)

    def amax(input, dim, keepdim, out):
        reduce(xp.max, input, dim, keepdim, out)

    def amin(input, dim, keepdim, out):
        reduce(xp.min, input, dim, keepdim, out)

    def arg(fn, input, dim, keepdim, out):
        x = input.reshape(-1) if dim is None else input
        axis = 0 if dim is None or input.ndim == 0 else dim % input.ndim
        if x.ndim == 0:
            x = x.reshape(1)
        if x.dtype.name in HALF_TYPES:
            x = x.astype(np.float32)  # exact: every half value is a float32 value
        r = fn(x, axis=axis)
        if bool(keepdim) and dim is not None:
            r = xp.expand_dims(r, axis)
        store(out, xp.reshape(r, out.shape))

    def argmax(input, dim, keepdim, out):
        arg(xp.argmax, input, dim, keepdim, out)

    def argmin(input, dim, keepdim, out):
        arg(xp.argmin, input, dim, keepdim, out)

    def cumsum(input, dim, dtype, out):
        x = input.astype(work_dtype(out.dtype))
        if x.ndim == 0:
            store(out, x)
            return
        with quiet():
            store(out, xp.cumsum(x, axis=dim % x.ndim))

    # -- matrix products ----------------------------------------------------------------------

    def mm(input, mat2, out):
        if input.dtype == mat2.dtype == out.dtype and (out.dtype.name not in HALF_TYPES or native_half_matmul):
            try:
                with quiet():
                    xp.matmul(input, mat2, out=out)
                return
            except (TypeError, NotImplementedError, ValueError):
                if out.dtype.name not in HALF_TYPES:
                    raise  # only a half type may lack a native product (bfloat16 on an older CuPy)
        dt = work_dtype(out.dtype)
        with quiet():
            store(out, xp.matmul(input if input.dtype == dt else input.astype(dt),
                                 mat2 if mat2.dtype == dt else mat2.astype(dt)))

    # -- copy, fill, cast -----------------------------------------------------------------------

    def copy(input, src, out):
        src = device_array(src)
        if isinstance(src, xp.ndarray):
            if storage.shares_memory(src, out):
                src = src.copy()
            with quiet():
                store(out, src)
        else:
            out[...] = fitted(src, out.dtype)

    def fill(input, value, out):
        value = device_array(value)
        if isinstance(value, xp.ndarray):
            v = value.reshape(()).item()
            value = v if not isinstance(v, complex) or out.dtype.kind == "c" else v.real
        out[...] = fitted(value, out.dtype)

    def to_dtype(input, dtype, out):
        with quiet():
            store(out, input)

    # -- gather and scatter along a dim (indices checked first: one read back on a device) -------

    def checked(index, size, dim):
        index = index.astype(np.int64) if index.dtype != np.int64 else index
        if index.size:
            bad_mask = (index < 0) | (index >= size)
            if any_true(bad_mask):
                bad = int(index[bad_mask].ravel()[0])
                raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
        return index

    def grid(index, dim):
        """Every coordinate of ``index``'s elements, with ``index`` itself along ``dim`` (open grids)."""
        grids = []
        for d, n in enumerate(index.shape):
            shape = [1] * index.ndim
            shape[d] = n
            grids.append(xp.arange(n).reshape(shape))
        grids[dim] = index
        return tuple(grids)

    def gather(input, dim, index, sparse_grad, out):
        if input.ndim == 0:
            checked(index, 1, 0)
            store(out, xp.broadcast_to(input, out.shape))
            return
        d = dim % input.ndim
        idx = checked(index, input.shape[d], d)
        if idx.size:
            store(out, input[grid(idx, d)])

    def values_of(src, value, index, dtype):
        given = device_array(src if src is not None else value)
        if isinstance(given, xp.ndarray):
            return given[tuple(slice(0, n) for n in index.shape)].astype(dtype)
        return fitted(given, dtype)

    def scatter(input, dim, index, src, value, reduce, out):
        values = values_of(src, value, index, out.dtype)
        result = input.copy()
        if input.ndim == 0:
            checked(index, 1, 0)
            if index.size:
                flat = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), index.shape).reshape(-1)
                with quiet():
                    if reduce is None:
                        result[...] = flat[-1]
                    elif reduce == "add":
                        result[...] = result + flat.sum(dtype=result.dtype)
                    else:
                        result[...] = result * flat.prod(dtype=result.dtype)
            store(out, result)
            return
        d = dim % input.ndim
        key = grid(checked(index, input.shape[d], d), d)
        if reduce is None:
            result[key] = values
        else:
            spread = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), index.shape)
            with quiet():
                result = scatter_at("add" if reduce == "add" else "multiply", result, key, spread)
        store(out, result)

    def scatter_add(input, dim, index, src, out):
        scatter(input, dim, index, src, None, "add", out)

    # -- random sources ---------------------------------------------------------------------------

    def uniform(input, from_, to, generator, out):
        rng = random_source(generator, out)
        low, high = float(from_), float(to)
        if out.dtype.kind == "c":  # each part uniform in [from, to)
            parts = low + (high - low) * rng.random(out.shape + (2,))
            store(out, parts[..., 0] + 1j * parts[..., 1])
            return
        draw = rng.random(out.shape, dtype=np.float32 if out.dtype.itemsize <= 4 else np.float64)
        with quiet():
            values = (low + (high - low) * draw).astype(out.dtype)
        # rounding to a narrow dtype can reach `to`: [from, to) stays half-open (the bound computed on the host)
        top = np.nextafter(np.asarray(high, out.dtype), np.asarray(low, out.dtype))
        store(out, xp.where(values >= high, xp.asarray(top), values))

    def random(input, from_, to, generator, out):
        rng = random_source(generator, out)
        if to is None:
            if out.dtype.kind == "b":
                high = 1
            elif out.dtype.kind in "iu":
                high = int(np.iinfo(out.dtype).max)
            else:
                digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[out.dtype.name]
                high = 2 ** digits
        else:
            high = int(to) - 1
        store(out, rng.integers(int(from_), high, size=out.shape, dtype=np.int64, endpoint=True))

    # -- a factory, and the data-dependent op -----------------------------------------------------

    def arange(start, end, step, dtype, device, requires_grad, out):
        n = out.shape[0]
        with quiet():
            if out.dtype.kind in "iub":
                store(out, int(start) + int(step) * xp.arange(n, dtype=np.int64))
            else:
                store(out, float(start) + float(step) * xp.arange(n, dtype=np.float64))

    def fresh(a):
        """``a`` copied into a storage of its own (what the core expects of a data-dependent op's results)."""
        out = storage.allocate(a.shape, a.dtype)
        xp.copyto(out, a)
        return out

    def nonzero(input, as_tuple):
        if input.ndim == 0:
            hit = int(bool(input.item() != 0))
            if as_tuple:  # a 0-d input gives one index tensor, as if it were 1-d
                return (fresh(xp.zeros(hit, dtype=np.int64)),)
            coords = xp.zeros((hit, 0), dtype=np.int64)
        else:
            coords = xp.argwhere(input).astype(np.int64)
        coords = fresh(coords)
        if as_tuple:
            return tuple(fresh(coords[:, i]) for i in range(coords.shape[1]))
        return coords

    return dict(
        add=add, sub=sub, mul=mul, div=div, neg=neg, abs=abs, pow=pow,
        exp=elementwise(xp.exp), log=elementwise(xp.log), sqrt=elementwise(xp.sqrt), sin=elementwise(xp.sin),
        cos=elementwise(xp.cos), atan2=atan2, erf=elementwise(checked_erf), floor=floor, round=round,
        eq=comparison(xp.equal), ne=comparison(xp.not_equal), lt=comparison(xp.less),
        le=comparison(xp.less_equal), gt=comparison(xp.greater), ge=comparison(xp.greater_equal), where=where,
        clamp=clamp,
        bitwise_and=bitwise(xp.bitwise_and), bitwise_or=bitwise(xp.bitwise_or),
        bitwise_xor=bitwise(xp.bitwise_xor), bitwise_not=bitwise_not,
        sum=sum, prod=prod, amax=amax, amin=amin, argmax=argmax, argmin=argmin, cumsum=cumsum, mm=mm, bmm=mm,
        copy=copy, fill=fill, to_dtype=to_dtype, gather=gather, scatter=scatter, scatter_add=scatter_add,
        uniform=uniform, random=random, arange=arange, nonzero=nonzero,
        **make_view_kernels(storage),
    )
