"""The core tier's kernels, written against an array module ``xp`` (CuPy on a GPU).

:func:`make_kernels` builds them for one array module: CuPy in production, the numpy test double of
``tests/_fake_cupy.py`` in CI, which runs every line here except CuPy's own kernels. Only functions
CuPy and numpy share with the same semantics are called on ``xp``; dtype arithmetic (promotion, limits)
uses numpy's dtypes, which CuPy shares.

What a kernel receives (see the backend guide, backends/meta/README.md): natives in place of tensors,
other arguments as the user wrote them, and, for compute ops, ``out``: a native already allocated with
the result's shape and dtype, which may alias an input.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import _storage

_HALF = ("float16", "bfloat16")


def fitted(value: Any, dtype: np.dtype) -> Any:
    """A Python number as ``dtype`` holds it: integers wrap (-1 into uint8 is 255), as on the CPU."""
    if isinstance(value, (bool, np.bool_)) or dtype.kind not in "iu":
        return value
    if isinstance(value, (int, np.integer)):
        bits = dtype.itemsize * 8
        v = int(value) & ((1 << bits) - 1)
        return v - (1 << bits) if dtype.kind == "i" and v >= 1 << (bits - 1) else v
    return value


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic runs in: half types in float32 (one rounding at the store, as PyTorch's CUDA
    kernels compute half types in float)."""
    return np.dtype(np.float32) if dtype.name in _HALF else dtype


def _floating(dtype: np.dtype) -> bool:
    """Floating or complex: ml_dtypes' bfloat16 has numpy kind 'V', not 'f'."""
    return dtype.kind in "fc" or dtype.name in _HALF


def special_functions(xp: ModuleType) -> ModuleType:
    """``scipy.special`` for ``xp``: cupyx's on a GPU; a test double names its own as ``_special``."""
    own = getattr(xp, "_special", None)
    return own if own is not None else importlib.import_module("cupyx.scipy.special")


def make_kernels(xp: ModuleType, engines: Callable[[Any, Any], Any]) -> dict[str, Callable[..., Any]]:
    """The core tier's kernels on ``xp``; ``engines(generator, out)`` gives the random engine to draw from."""
    special = special_functions(xp)

    def device_array(x: Any) -> Any:
        """A host operand (a 0-d CPU tensor's numpy array, moved by the core) as a device array or scalar."""
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
        value = device_array(value)
        if isinstance(value, xp.ndarray) and value.dtype.kind == "c" and out.dtype.kind != "c":
            value = xp.real(value)
        elif isinstance(value, complex) and out.dtype.kind != "c":
            value = value.real
        xp.copyto(out, value, casting="unsafe")

    def elementwise(fn):
        def kernel(*args, out):
            dt = _work_dtype(out.dtype)
            store(out, fn(*[operand(a, dt) for a in args]))
        kernel.__name__ = getattr(fn, "__name__", "elementwise")
        return kernel

    def common(*args: Any) -> np.dtype:
        """The dtype two operands compare in (the core cast 0-d operands already; scalars are weak)."""
        arrays = [a.dtype for a in args if isinstance(a, (xp.ndarray, np.ndarray))]
        try:
            dt = np.result_type(*arrays)
        except TypeError:  # ml_dtypes before 0.7 promotes bfloat16 with neither integers nor float16
            floats = [d for d in arrays if _floating(d)]
            dt = floats[0] if len(set(floats)) == 1 else np.dtype(np.float32)
        for a in args:
            if isinstance(a, float) and dt.kind in "biu":
                dt = np.dtype(np.float64)
            if isinstance(a, complex) and dt.kind != "c":
                dt = np.dtype(np.complex128)
            if isinstance(a, int) and not isinstance(a, bool) and dt.kind == "b":
                dt = np.dtype(np.int64)
        return _work_dtype(dt)

    def any_true(mask: Any) -> bool:
        return bool(xp.any(mask))  # one device-to-host read: the error must come before the result

    # -- elementwise arithmetic and math --------------------------------------------------

    def same_dtype(x: Any, dtype: np.dtype) -> bool:
        return isinstance(x, xp.ndarray) and x.dtype == dtype

    def into(ufunc, a, b, out) -> bool:
        """One pass straight into ``out`` when both operands already have its dtype (no temporary,
        no second copy: what a 256M-element add needs to reach the memory bandwidth)."""
        if out.dtype.name in _HALF or out.dtype.kind == "b" or not same_dtype(a, out.dtype) or not (
                same_dtype(b, out.dtype) or (isinstance(b, (int, float)) and not isinstance(b, bool)
                                             and out.dtype.kind == "f")):
            return False
        ufunc(a, b, out=out)
        return True

    def add(input, other, alpha, out):
        if alpha == 1 and into(xp.add, input, other, out):
            return
        dt = _work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        if dt.kind == "b":
            store(out, xp.logical_or(a, b))
        else:
            store(out, a + (b if alpha == 1 else b * operand(alpha, dt)))

    def sub(input, other, alpha, out):
        if alpha == 1 and into(xp.subtract, input, other, out):
            return
        dt = _work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        store(out, a - (b if alpha == 1 else b * operand(alpha, dt)))

    def mul(input, other, out):
        if into(xp.multiply, input, other, out):
            return
        dt = _work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        store(out, xp.logical_and(a, b) if dt.kind == "b" else a * b)

    def div(input, other, rounding_mode, out):
        dt = _work_dtype(out.dtype)
        a, b = operand(input, dt), operand(other, dt)
        if dt.kind in "iu" and any_true(b == 0):
            raise RuntimeError("ZeroDivisionError")  # PyTorch's message for integer division by zero
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
        dt = _work_dtype(out.dtype)
        a, b = operand(input, dt), operand(exponent, dt)
        if dt.kind in "iu" and any_true(xp.asarray(b) < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        store(out, xp.power(a, b))

    def neg(input, out):
        store(out, xp.negative(input.astype(_work_dtype(out.dtype))))

    def abs(input, out):
        store(out, xp.abs(input) if input.dtype.kind != "b" else input)

    def erf_fn(x):
        if x.dtype.kind == "c":
            raise RuntimeError("erf is not implemented for complex numbers")
        return special.erf(x).astype(x.dtype) if x.dtype.kind == "f" else special.erf(x.astype(np.float64))

    def atan2(input, other, out):
        if all(isinstance(a, xp.ndarray) and a.dtype.kind in "biu" for a in (input, other)):
            # integers: computed in the float type numpy promotes them to (float16 for 8-bit), as the CPU does
            store(out, xp.arctan2(input, other))
            return
        elementwise(xp.arctan2)(input, other, out=out)

    def floor(input, out):
        store(out, xp.floor(input.astype(_work_dtype(input.dtype))) if _floating(input.dtype) else input)

    def round(input, decimals, out):
        if not _floating(input.dtype):
            store(out, input)
            return
        x = input.astype(np.float64 if out.dtype.itemsize > 4 else np.float32)
        store(out, xp.rint(x) if decimals == 0 else xp.rint(x * 10.0 ** decimals) / 10.0 ** decimals)

    # -- comparisons and selection ------------------------------------------------------------

    def comparison(fn):
        def kernel(input, other, out):
            dt = common(input, other)
            store(out, fn(operand(input, dt), operand(other, dt)))
        kernel.__name__ = fn.__name__
        return kernel

    def where(condition, input, other, out):
        dt = _work_dtype(out.dtype)
        store(out, xp.where(device_array(condition), operand(input, dt), operand(other, dt)))

    def bitwise(fn):
        def kernel(input, other, out):
            store(out, fn(operand(input, out.dtype), operand(other, out.dtype)))
        kernel.__name__ = fn.__name__
        return kernel

    def bitwise_not(input, out):
        store(out, xp.invert(input))

    # -- reductions -----------------------------------------------------------------------

    def axes(input, dim):
        """A reduction's dims: None and () mean all; negative dims wrapped."""
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) or input.ndim == 0:
            return None
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        return tuple(d % input.ndim for d in dims)

    def reduce(fn, input, dim, keepdim, out):
        dt = _work_dtype(out.dtype)
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
        if x.dtype.name in _HALF:
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
        x = input.astype(_work_dtype(out.dtype))
        if x.ndim == 0:
            store(out, x)
            return
        store(out, xp.cumsum(x, axis=dim % x.ndim))

    # -- matrix products (cuBLAS through CuPy) ---------------------------------------------

    # A GPU multiplies float16/bfloat16 in cuBLAS with float32 accumulation (as PyTorch's); the numpy test
    # double has no such product (numpy would accumulate in the half type), so it computes in float32.
    native_half = not getattr(xp, "IS_TEST_DOUBLE", False)

    def mm(input, mat2, out):
        if input.dtype == mat2.dtype == out.dtype and (out.dtype.name not in _HALF or native_half):
            try:
                xp.matmul(input, mat2, out=out)
                return
            except (TypeError, NotImplementedError, ValueError):
                if out.dtype.name not in _HALF:
                    raise  # only a half type may lack a native product (bfloat16 on an older CuPy)
        dt = _work_dtype(out.dtype)
        store(out, xp.matmul(input if input.dtype == dt else input.astype(dt),
                             mat2 if mat2.dtype == dt else mat2.astype(dt)))

    # -- views: shape, strides and offset in elements, over the input's storage -----------

    def view_of(x, shape, strides, offset=None):
        return _storage.strided(xp, x, shape, strides, _storage.offset_of(x) if offset is None else offset)

    def view(input, size):
        shape = list(size)
        if -1 in shape:
            known = 1
            for s in shape:
                known *= s if s != -1 else 1
            shape[shape.index(-1)] = input.size // known if known else 0
        shape = tuple(shape)
        if input.size == 0 or shape == input.shape:
            return view_of(input, shape, _storage.contiguous_strides(shape) if shape != input.shape
                           else _storage.strides_of(input))
        return view_of(input, shape, _storage.view_strides(input.shape, _storage.strides_of(input), shape))

    def as_strided(input, size, stride, storage_offset):
        return view_of(input, tuple(size), tuple(stride), storage_offset)

    def transpose(input, dim0, dim1):
        if input.ndim == 0:
            return view_of(input, (), ())
        perm = list(range(input.ndim))
        d0, d1 = dim0 % input.ndim, dim1 % input.ndim
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return permute(input, perm)

    def permute(input, dims):
        shape, strides = input.shape, _storage.strides_of(input)
        dims = [d % input.ndim for d in dims] if input.ndim else []
        return view_of(input, tuple(shape[d] for d in dims), tuple(strides[d] for d in dims))

    def expand(input, size):
        offset = len(size) - input.ndim
        strides = _storage.strides_of(input)
        shape, out = [], []
        for i, s in enumerate(size):
            j = i - offset
            own = input.shape[j] if j >= 0 else 1
            n = own if s == -1 else s
            shape.append(n)
            out.append(strides[j] if j >= 0 and own == n else 0)
        return view_of(input, tuple(shape), tuple(out))

    def squeeze(input, dim):
        if input.ndim == 0:
            return view_of(input, (), ())
        if dim is None:
            dims = set(range(input.ndim))
        else:
            dims = {d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)}
        strides = _storage.strides_of(input)
        keep = [i for i in range(input.ndim) if not (i in dims and input.shape[i] == 1)]
        return view_of(input, tuple(input.shape[i] for i in keep), tuple(strides[i] for i in keep))

    def unsqueeze(input, dim):
        d = dim % (input.ndim + 1)
        shape, strides = list(input.shape), list(_storage.strides_of(input))
        new = shape[d] * strides[d] if d < input.ndim else 1  # PyTorch's stride for the new dim
        return view_of(input, tuple(shape[:d] + [1] + shape[d:]), tuple(strides[:d] + [new] + strides[d:]))

    def select(input, dim, index):
        d = dim % input.ndim
        i = index % input.shape[d]
        strides = _storage.strides_of(input)
        return view_of(input, input.shape[:d] + input.shape[d + 1:], strides[:d] + strides[d + 1:],
                       _storage.offset_of(input) + i * strides[d])

    def basic_index(input, index):
        """``input[index]`` for a tuple of ints, slices (positive steps) and None, left to right."""
        shape, strides = list(input.shape), list(_storage.strides_of(input))
        offset = _storage.offset_of(input)
        out_shape, out_strides, d = [], [], 0
        for i in index:
            if i is None:
                out_shape.append(1)
                out_strides.append(shape[d] * strides[d] if d < len(shape) else 1)
            elif isinstance(i, slice):
                start, stop, step = i.indices(shape[d])
                out_shape.append(len(range(start, stop, step)))
                out_strides.append(strides[d] * step)
                offset += start * strides[d] if out_shape[-1] else 0
                d += 1
            else:
                offset += (i % shape[d]) * strides[d]
                d += 1
        return view_of(input, tuple(out_shape + shape[d:]), tuple(out_strides + strides[d:]), offset)

    def unfold(input, dimension, size, step):
        if input.ndim == 0:
            return view_of(input, (size,), (1,))
        d = dimension % input.ndim
        shape, strides = list(input.shape), list(_storage.strides_of(input))
        count = (shape[d] - size) // step + 1
        inner = strides[d]
        shape[d], strides[d] = count, strides[d] * step
        return view_of(input, tuple(shape) + (size,), tuple(strides) + (inner,))

    def view_as_real(input):
        real = np.dtype(np.float32 if input.dtype == np.complex64 else np.float64)
        strides = tuple(2 * s for s in _storage.strides_of(input)) + (1,)
        return _storage.strided(xp, input, input.shape + (2,), strides, 2 * _storage.offset_of(input), real)

    def view_as_complex(input):
        cplx = np.result_type(input.dtype, np.complex64)
        strides = tuple(s // 2 for s in _storage.strides_of(input)[:-1])
        return _storage.strided(xp, input, input.shape[:-1], strides, _storage.offset_of(input) // 2, cplx)

    def _conj(input):
        return view_of(input, input.shape, _storage.strides_of(input))

    # -- copy, fill, cast ---------------------------------------------------------------------

    def overlaps(a, b) -> bool:
        return a.data.mem.ptr == b.data.mem.ptr  # same allocation: copy first (conservative, as numpy's check)

    def copy(input, src, out):
        src = device_array(src)
        if isinstance(src, xp.ndarray):
            if overlaps(src, out):
                src = src.copy()
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
        store(out, input)

    # -- gather and scatter along a dim (indices checked on the device, one read back) ------

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
            # (ufunc.at: CuPy's add.at and multiply.at accumulate repeated indices with atomics)
            ufunc = xp.add if reduce == "add" else xp.multiply
            spread = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), index.shape)
            try:
                ufunc.at(result, key, spread)
            except (AttributeError, NotImplementedError, TypeError):
                # a CuPy without this ufunc's `at` (multiply): on the host, in the same order
                host = xp.asnumpy(result)
                (np.add if reduce == "add" else np.multiply).at(host, tuple(xp.asnumpy(k) for k in key),
                                                                 xp.asnumpy(spread))
                result = xp.asarray(host)
        store(out, result)

    def scatter_add(input, dim, index, src, out):
        scatter(input, dim, index, src, None, "add", out)

    # -- random sources (Philox, see _random.py) --------------------------------------------

    def uniform(input, from_, to, generator, out):
        rng = engines(generator, out).next_generator()
        low, high = float(from_), float(to)
        if out.dtype.kind == "c":  # each part uniform in [from, to)
            parts = low + (high - low) * rng.random(out.shape + (2,))
            store(out, parts[..., 0] + 1j * parts[..., 1])
            return
        draw = rng.random(out.shape, dtype=np.float32 if out.dtype.itemsize <= 4 else np.float64)
        values = (low + (high - low) * draw).astype(out.dtype)
        # rounding to a narrow dtype can reach `to`: [from, to) stays half-open (the bound computed on the host)
        top = np.nextafter(np.asarray(high, out.dtype), np.asarray(low, out.dtype))
        store(out, xp.where(values >= high, xp.asarray(top), values))

    def random(input, from_, to, generator, out):
        rng = engines(generator, out).next_generator()
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

    # -- a factory, and the data-dependent op -------------------------------------------------

    def arange(start, end, step, dtype, device, requires_grad, out):
        n = out.shape[0]
        if out.dtype.kind in "iub":
            store(out, int(start) + int(step) * xp.arange(n, dtype=np.int64))
        else:
            store(out, float(start) + float(step) * xp.arange(n, dtype=np.float64))

    def fresh(a):
        out = _storage.allocate(xp, a.shape, a.dtype)
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

    kernels = dict(
        add=add, sub=sub, mul=mul, div=div, neg=neg, abs=abs, pow=pow,
        exp=elementwise(xp.exp), log=elementwise(xp.log), sqrt=elementwise(xp.sqrt), sin=elementwise(xp.sin),
        cos=elementwise(xp.cos), atan2=atan2, erf=elementwise(erf_fn), floor=floor, round=round,
        eq=comparison(xp.equal), ne=comparison(xp.not_equal), lt=comparison(xp.less),
        le=comparison(xp.less_equal), gt=comparison(xp.greater), ge=comparison(xp.greater_equal), where=where,
        bitwise_and=bitwise(xp.bitwise_and), bitwise_or=bitwise(xp.bitwise_or),
        bitwise_xor=bitwise(xp.bitwise_xor), bitwise_not=bitwise_not,
        sum=sum, prod=prod, amax=amax, amin=amin, argmax=argmax, argmin=argmin, cumsum=cumsum, mm=mm, bmm=mm,
        _conj=_conj, view=view, as_strided=as_strided, basic_index=basic_index, expand=expand, permute=permute,
        transpose=transpose, squeeze=squeeze, unsqueeze=unsqueeze, select=select, unfold=unfold,
        view_as_real=view_as_real, view_as_complex=view_as_complex, copy=copy, fill=fill, to_dtype=to_dtype,
        gather=gather, scatter=scatter, scatter_add=scatter_add, uniform=uniform, random=random, arange=arange,
        nonzero=nonzero,
    )
    return kernels
