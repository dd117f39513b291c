"""The core tier's kernels, in numpy.

What a kernel receives (see the guide): natives in place of tensors, other arguments as the
user wrote them (dims may be negative, ``dim`` may be None or a tuple), and, for compute ops,
``out``: a native already allocated with the result's shape and dtype, which may alias an input.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

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
    """The dtype arithmetic runs in: half types in float32 (numpy's are slow and round every step)."""
    return np.dtype(np.float32) if dtype.name in _HALF else dtype


def _operand(x: Any, dtype: np.dtype) -> Any:
    """An input as ``dtype``: arrays cast, Python scalars fitted into it (not widening it)."""
    if isinstance(x, np.ndarray):
        return x if x.dtype == dtype else x.astype(dtype)
    if dtype.kind == "b":
        return np.asarray(x).astype(dtype) if not isinstance(x, bool) else x
    return np.asarray(fitted(x, dtype), dtype=dtype) if not isinstance(x, complex) or dtype.kind == "c" else x


def _store(out: np.ndarray, value: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if np.iscomplexobj(value) and out.dtype.kind != "c":
            value = np.real(value)
        np.copyto(out, value, casting="unsafe")


def _elementwise(fn):
    """A kernel computing ``fn`` on the inputs cast to the output's (work) dtype."""
    def kernel(*args, out):
        dt = _work_dtype(out.dtype)
        with np.errstate(all="ignore"):
            _store(out, fn(*[_operand(a, dt) for a in args]))
    kernel.__name__ = fn.__name__
    return kernel


def _common(*args: Any) -> np.dtype:
    """The dtype two operands compare in (the core cast 0-d operands already; scalars are weak)."""
    arrays = [a.dtype for a in args if isinstance(a, np.ndarray)]
    try:
        dt = np.result_type(*arrays)
    except TypeError:  # ml_dtypes before 0.7 promotes bfloat16 with neither integers nor float16
        floats = [d for d in arrays if d.kind not in "biu"]
        dt = floats[0] if len(set(floats)) == 1 else np.dtype(np.float32)
    for a in args:
        if isinstance(a, float) and dt.kind in "biu":
            dt = np.dtype(np.float64)
        if isinstance(a, complex) and dt.kind != "c":
            dt = np.dtype(np.complex128)
        if isinstance(a, int) and not isinstance(a, bool) and dt.kind == "b":
            dt = np.dtype(np.int64)
    return _work_dtype(dt)


# -- elementwise arithmetic and math ----------------------------------------------------

def add(input, other, alpha, out):
    dt = _work_dtype(out.dtype)
    a, b = _operand(input, dt), _operand(other, dt)
    with np.errstate(all="ignore"):
        _store(out, a + (b if alpha == 1 else b * _operand(alpha, dt)) if dt.kind != "b" else a | b)


def sub(input, other, alpha, out):
    dt = _work_dtype(out.dtype)
    a, b = _operand(input, dt), _operand(other, dt)
    with np.errstate(all="ignore"):
        _store(out, a - (b if alpha == 1 else b * _operand(alpha, dt)))


def mul(input, other, out):
    dt = _work_dtype(out.dtype)
    a, b = _operand(input, dt), _operand(other, dt)
    with np.errstate(all="ignore"):
        _store(out, a & b if dt.kind == "b" else a * b)


def div(input, other, rounding_mode, out):
    dt = _work_dtype(out.dtype)
    a, b = _operand(input, dt), _operand(other, dt)
    if dt.kind in "iu" and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")  # PyTorch's message for integer division by zero
    with np.errstate(all="ignore"):
        if rounding_mode is None:
            r = a / b
        elif rounding_mode == "trunc":
            r = np.trunc(a / b) if dt.kind in "fc" else _int_trunc_div(a, b)
        else:
            r = np.floor_divide(a, b) if dt.kind in "iu" else _float_floor_div(a, b)
        _store(out, r)


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    fix = (q < 0) & (q * b != a)
    return q + fix


def _float_floor_div(a, b):
    # PyTorch's: floor of the true quotient, computed from the remainder to stay exact
    r = np.fmod(a, b)
    q = (a - r) / b
    q = np.where((r != 0) & ((b < 0) != (r < 0)), q - 1, q)
    fl = np.floor(q)
    q = np.where(q - fl > 0.5, fl + 1, fl)
    return np.where(b == 0, a / b, np.where(q == 0, np.copysign(0.0, a / b), q))


def pow(input, exponent, out):
    dt = _work_dtype(out.dtype)
    a, b = _operand(input, dt), _operand(exponent, dt)
    if dt.kind in "iu" and np.any(np.asarray(b) < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with np.errstate(all="ignore"):
        _store(out, np.power(a, b))


def neg(input, out):
    with np.errstate(all="ignore"):
        _store(out, np.negative(input.astype(_work_dtype(out.dtype))))


def abs(input, out):
    _store(out, np.abs(input) if input.dtype.kind != "b" else input)


def _erf(x):
    if x.dtype.kind == "c":
        raise RuntimeError("erf is not implemented for complex numbers")
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


exp, log, sqrt, sin, cos = (_elementwise(f) for f in (np.exp, np.log, np.sqrt, np.sin, np.cos))
def atan2(input, other, out):
    if all(isinstance(a, np.ndarray) and a.dtype.kind in "biu" for a in (input, other)):
        # integers: computed in the float type numpy gives them (float16 for 8-bit), as the CPU does
        with np.errstate(all="ignore"):
            _store(out, np.arctan2(input, other))
        return
    _elementwise(np.arctan2)(input, other, out=out)
erf = _elementwise(_erf)


def _floating(dtype: np.dtype) -> bool:
    """Floating or complex: ml_dtypes' bfloat16 has numpy kind 'V', not 'f'."""
    return dtype.kind in "fc" or dtype.name in _HALF


def floor(input, out):
    _store(out, np.floor(input.astype(_work_dtype(input.dtype))) if _floating(input.dtype) else input)


def round(input, decimals, out):
    if not _floating(input.dtype):
        _store(out, input)
        return
    x = input.astype(np.float64 if out.dtype.itemsize > 4 else np.float32)
    with np.errstate(all="ignore"):
        _store(out, np.round(x) if decimals == 0 else np.round(x * 10.0 ** decimals) / 10.0 ** decimals)


# -- comparisons and selection ------------------------------------------------------------

def _comparison(fn):
    def kernel(input, other, out):
        dt = _common(input, other)
        with np.errstate(all="ignore"):
            _store(out, fn(_operand(input, dt), _operand(other, dt)))
    kernel.__name__ = fn.__name__
    return kernel


eq, ne, lt, le, gt, ge = (_comparison(f) for f in (np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                                                   np.greater_equal))


def where(condition, input, other, out):
    dt = _work_dtype(out.dtype)
    _store(out, np.where(condition, _operand(input, dt), _operand(other, dt)))


def _bitwise(fn):
    def kernel(input, other, out):
        _store(out, fn(_operand(input, out.dtype), _operand(other, out.dtype)))
    kernel.__name__ = fn.__name__
    return kernel


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(f) for f in (np.bitwise_and, np.bitwise_or, np.bitwise_xor))


def bitwise_not(input, out):
    _store(out, np.invert(input))


# -- reductions -----------------------------------------------------------------------

def _axes(input, dim):
    """A reduction's dims: None and () mean all; negative dims wrapped."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) or input.ndim == 0:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % input.ndim for d in dims)


def _reduce(fn, input, dim, keepdim, out, dtype=None):
    dt = _work_dtype(out.dtype)
    with np.errstate(all="ignore"):
        r = fn(input.astype(dt), axis=_axes(input, dim), keepdims=bool(keepdim))
    _store(out, np.reshape(r, out.shape))


def sum(input, dim, keepdim, dtype, out):
    _reduce(np.sum, input, dim, keepdim, out)


def prod(input, dim, keepdim, dtype, out):
    _reduce(np.prod, input, dim, keepdim, out)


def amax(input, dim, keepdim, out):
    _reduce(np.max, input, dim, keepdim, out)


def amin(input, dim, keepdim, out):
    _reduce(np.min, input, dim, keepdim, out)


def _arg(fn, input, dim, keepdim, out):
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None or input.ndim == 0 else dim % input.ndim
    if x.ndim == 0:
        x = x.reshape(1)
    r = fn(x, axis=axis, keepdims=bool(keepdim) and dim is not None)
    _store(out, np.reshape(r, out.shape))


def argmax(input, dim, keepdim, out):
    _arg(np.argmax, input, dim, keepdim, out)


def argmin(input, dim, keepdim, out):
    _arg(np.argmin, input, dim, keepdim, out)


def cumsum(input, dim, dtype, out):
    x = input.astype(_work_dtype(out.dtype))
    if x.ndim == 0:
        _store(out, x)
        return
    with np.errstate(all="ignore"):
        _store(out, np.cumsum(x, axis=dim % x.ndim))


# -- matrix products --------------------------------------------------------------------

def mm(input, mat2, out):
    dt = _work_dtype(out.dtype)
    _store(out, np.matmul(input.astype(dt), mat2.astype(dt)))


bmm = mm


# -- views: shape, strides and offset in elements, over the input's storage ---------------

def _view(x, shape, strides, offset=None):
    return _storage.strided(x, shape, strides, _storage.offset_of(x) if offset is None else offset)


def view(input, size):
    shape = list(size)
    if -1 in shape:
        known = 1
        for s in shape:
            known *= s if s != -1 else 1
        shape[shape.index(-1)] = input.size // known if known else 0
    shape = tuple(shape)
    if input.size == 0 or shape == input.shape:
        return _view(input, shape, _storage.contiguous_strides(shape) if shape != input.shape
                     else _storage.strides_of(input))
    # strides of the new shape from the old: numpy's reshape without copying does that arithmetic
    result = input.view()
    result.shape = shape  # the meta function checked that the view exists
    return result


def as_strided(input, size, stride, storage_offset):
    return _view(input, tuple(size), tuple(stride), storage_offset)


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return _view(input, (), ())
    perm = list(range(input.ndim))
    d0, d1 = dim0 % input.ndim, dim1 % input.ndim
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(input, perm)


def permute(input, dims):
    shape, strides = input.shape, _storage.strides_of(input)
    dims = [d % input.ndim for d in dims] if input.ndim else []
    return _view(input, tuple(shape[d] for d in dims), tuple(strides[d] for d in dims))


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
    return _view(input, tuple(shape), tuple(out))


def squeeze(input, dim):
    if input.ndim == 0:
        return _view(input, (), ())
    if dim is None:
        dims = set(range(input.ndim))
    else:
        dims = {d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim)}
    strides = _storage.strides_of(input)
    keep = [i for i in range(input.ndim) if not (i in dims and input.shape[i] == 1)]
    return _view(input, tuple(input.shape[i] for i in keep), tuple(strides[i] for i in keep))


def unsqueeze(input, dim):
    d = dim % (input.ndim + 1)
    shape, strides = list(input.shape), list(_storage.strides_of(input))
    new = shape[d] * strides[d] if d < input.ndim else 1  # PyTorch's stride for the new dim
    return _view(input, tuple(shape[:d] + [1] + shape[d:]), tuple(strides[:d] + [new] + strides[d:]))


def select(input, dim, index):
    d = dim % input.ndim
    i = index % input.shape[d]
    strides = _storage.strides_of(input)
    return _view(input, input.shape[:d] + input.shape[d + 1:], strides[:d] + strides[d + 1:],
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
    return _view(input, tuple(out_shape + shape[d:]), tuple(out_strides + strides[d:]), offset)


def unfold(input, dimension, size, step):
    if input.ndim == 0:
        return _view(input, (size,), (1,))
    d = dimension % input.ndim
    shape, strides = list(input.shape), list(_storage.strides_of(input))
    count = (shape[d] - size) // step + 1
    inner = strides[d]
    shape[d], strides[d] = count, strides[d] * step
    return _view(input, tuple(shape) + (size,), tuple(strides) + (inner,))


def view_as_real(input):
    real = np.dtype(input.real.dtype)
    r = _storage.root(input)
    flat = r.view(real) if r.ndim == 1 else r.reshape(-1).view(real)
    strides = tuple(2 * s for s in _storage.strides_of(input)) + (1,)
    return _storage.strided(flat, input.shape + (2,), strides, 2 * _storage.offset_of(input))


def view_as_complex(input):
    cplx = np.result_type(input.dtype, np.complex64)
    r = _storage.root(input)
    flat = r.view(cplx)
    strides = tuple(s // 2 for s in _storage.strides_of(input)[:-1])
    return _storage.strided(flat, input.shape[:-1], strides, _storage.offset_of(input) // 2)


def _conj(input):
    return _view(input, input.shape, _storage.strides_of(input))


# -- copy, fill, cast ---------------------------------------------------------------------

def copy(input, src, out):
    if isinstance(src, np.ndarray):
        if np.may_share_memory(src, out):
            src = src.copy()
        _store(out, src)
    else:
        out[...] = fitted(src, out.dtype)


def fill(input, value, out):
    if isinstance(value, np.ndarray):
        value = value.reshape(()).item() if value.dtype.kind != "c" or out.dtype.kind == "c" else value.real.item()
    out[...] = fitted(value, out.dtype)


def to_dtype(input, dtype, out):
    _store(out, input)


# -- gather and scatter along a dim -------------------------------------------------------

def _checked(index, size, dim):
    index = np.asarray(index, dtype=np.int64)
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {dim} with size {size}")
    return index


def _grid(index, dim):
    """Every coordinate of ``index``'s elements, with ``index`` itself along ``dim``."""
    grids = list(np.indices(index.shape, sparse=True)) if index.ndim else []
    grids[dim] = index
    return tuple(grids)


def gather(input, dim, index, sparse_grad, out):
    if input.ndim == 0:
        _checked(index, 1, 0)
        _store(out, np.broadcast_to(input, out.shape))
        return
    d = dim % input.ndim
    idx = _checked(index, input.shape[d], d)
    _store(out, input[_grid(idx, d)] if idx.size else np.empty(out.shape, input.dtype))


def _values(src, value, index, dtype):
    given = src if src is not None else value
    if isinstance(given, np.ndarray):
        return given[tuple(slice(0, n) for n in index.shape)].astype(dtype)
    return fitted(given, dtype)


def scatter(input, dim, index, src, value, reduce, out):
    values = _values(src, value, index, out.dtype)
    result = np.array(input, copy=True)
    if input.ndim == 0:
        _checked(index, 1, 0)
        if index.size:
            flat = np.broadcast_to(values, index.shape).reshape(-1)
            if reduce is None:
                result[...] = flat[-1]
            elif reduce == "add":
                result[...] = result + flat.sum(dtype=result.dtype)
            else:
                result[...] = result * flat.prod(dtype=result.dtype)
        _store(out, result)
        return
    d = dim % input.ndim
    key = _grid(_checked(index, input.shape[d], d), d)
    if reduce is None:
        result[key] = values
    elif reduce == "add":
        np.add.at(result, key, np.broadcast_to(values, index.shape))
    else:
        np.multiply.at(result, key, np.broadcast_to(values, index.shape))
    _store(out, result)


def scatter_add(input, dim, index, src, out):
    scatter(input, dim, index, src, None, "add", out)


# -- random sources -------------------------------------------------------------------

def _engine(generator):
    from . import _backend

    return generator._native if generator is not None else _backend.default_engine()


def uniform(input, from_, to, generator, out):
    rng = _engine(generator).numpy
    low, high = float(from_), float(to)
    if out.dtype.kind == "c":  # each part uniform in [from, to)
        parts = low + (high - low) * rng.random(out.shape + (2,))
        _store(out, parts[..., 0] + 1j * parts[..., 1])
        return
    draw = rng.random(out.shape, dtype=np.float32 if out.dtype.itemsize <= 4 else np.float64)
    values = (low + (high - low) * draw).astype(out.dtype)
    # rounding to a narrow dtype can reach `to`: [from, to) stays half-open
    values = np.where(values >= high, np.nextafter(np.asarray(high, out.dtype), np.asarray(low, out.dtype)), values)
    _store(out, values)


def random(input, from_, to, generator, out):
    rng = _engine(generator).numpy
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
    _store(out, rng.integers(int(from_), high, size=out.shape, dtype=np.int64, endpoint=True))


# -- a factory, and the data-dependent op ---------------------------------------------------

def arange(start, end, step, dtype, device, requires_grad, out):
    n = out.shape[0]
    if out.dtype.kind in "iub":
        _store(out, int(start) + int(step) * np.arange(n, dtype=np.int64))
    else:
        _store(out, float(start) + float(step) * np.arange(n, dtype=np.float64))


def nonzero(input, as_tuple):
    if input.ndim == 0:
        if as_tuple:  # a 0-d input gives one index tensor, as if it were 1-d
            return (_device_array(np.zeros(int(input != 0), dtype=np.int64)),)
        coords = np.zeros((int(input != 0), 0), dtype=np.int64)
    else:
        coords = np.argwhere(input).astype(np.int64)
    coords = _device_array(coords)
    if as_tuple:
        return tuple(_device_array(coords[:, i].copy()) for i in range(coords.shape[1]))
    return coords


def _device_array(a):
    out = _storage.allocate(a.shape, a.dtype)
    out[...] = a
    return out


KERNELS = {name: globals()[name] for name in (
    "add", "sub", "mul", "div", "neg", "abs", "pow", "exp", "log", "sqrt", "sin", "cos", "atan2", "erf", "floor",
    "round", "eq", "ne", "lt", "le", "gt", "ge", "where", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum", "mm", "bmm", "_conj", "view",
    "as_strided", "basic_index", "expand", "permute", "transpose", "squeeze", "unsqueeze", "select", "unfold",
    "view_as_real", "view_as_complex", "copy", "fill", "to_dtype", "gather", "scatter", "scatter_add", "uniform",
    "random", "arange", "nonzero")}
