"""Kernels that run in C++ (``flambeau_cpu._C``) when that pays, and in numpy otherwise.

Each kernel first asks a cheap question (is ``out`` big enough?) so that small tensors go straight
to numpy: the C++ path earns its keep by running on several threads, which only pays above
``GRAIN`` elements, and a pybind11 call plus its checks costs more than a small numpy ufunc.
erf, erfc and sigmoid are the exception: numpy has no fast erf and its sigmoid takes several
passes, so those run in C++ at every size. Where numpy's own SIMD loops are faster than the C++
ones (float32 log, float64 exp and tanh, amax and amin), the C++ kernels exist and are tested but
this glue does not pick them. Anything the C++ kernels do not cover (dtypes other
than float32/float64, mixed dtypes, rounding modes, unaligned or overlapping views) goes to the
numpy kernels in :mod:`.elementwise` and :mod:`.reductions`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C
from . import elementwise as _np_ew
from . import index_ops_np as _np_idx
from . import linalg_ops as _np_linalg
from . import reductions as _np_red
from ._int_scalars import fitted, wrapped_operands
from ._quiet import quiet, run_quiet

GRAIN = 32768  # below this many output elements numpy does the work (see the module docstring)

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)
_ndarray = np.ndarray
_binary = _C.binary
_unary = _C.unary
_reduce = _C.reduce
_threads = _C.get_num_threads
_BIN = _C.BINARY_OPS
_UN = _C.UNARY_OPS
_RED = _C.REDUCE_OPS


def _float(dt: np.dtype) -> bool:
    return dt is _F32 or dt is _F64


def _try_binary(code: int, input: Any, other: Any, out: np.ndarray, alpha: Any, out_dtype: np.dtype | None) -> bool:
    """Runs the C++ kernel when its dtypes fit; False leaves the work to numpy."""
    dt = input.dtype
    if not _float(dt) or out.dtype is not (out_dtype or dt) or _threads() < 2:
        return False
    t = type(other)
    if t is _ndarray:
        if other.dtype is not dt:
            return False
    elif t is not float and t is not int:
        return False
    if type(alpha) is not int and type(alpha) is not float:
        return False
    return _binary(code, input, other, out, alpha)


# Below GRAIN the binary kernels call numpy's ufunc themselves (what the numpy kernel would do),
# sparing a Python call: on a 1-element tensor that call is a sizeable part of the whole op. The
# ufunc runs through `run_quiet` (PyTorch gives inf - inf = nan without a word; see `_quiet`) with
# numpy's default casting, which passes whenever the operands' dtypes make out's (and is checked
# before anything is written). Everything else leaves through one `except` to `_small_retry`:
# PyTorch's result dtype for a wider 0-d operand of the same category (uint8 tensor + int32 0-d
# tensor -> uint8) needs casting="unsafe" (TypeError), a Python int outside an integer tensor's
# dtype wraps around (OverflowError, see `_int_scalars`), and another thread may be inside
# `run_quiet`'s context (RuntimeError). Passing casting= on every call would cost about a tenth of
# a 1-element add; the except clause costs nothing until it runs.
_SMALL_EXITS = (TypeError, OverflowError, RuntimeError)


@quiet
def _small_retry(ufunc: np.ufunc, input: Any, other: Any, out: np.ndarray, exc: Exception) -> None:
    """The small binary path's slow exits (see above), all in one: unsafe casting, wrapped ints.
    ``exc`` is what the fast call raised (numpy's OverflowError costs ~3 us: not twice)."""
    if type(exc) is OverflowError:
        input, other = wrapped_operands(exc, (input, other))
    try:
        ufunc(input, other, out, casting="unsafe")
    except OverflowError as again:  # a wider 0-d operand first (TypeError), then an int
        input, other = wrapped_operands(again, (input, other))
        ufunc(input, other, out, casting="unsafe")


def _arith(name: str, numpy_kernel: Callable[..., Any], ufunc: np.ufunc | None = None) -> Callable[..., Any]:
    """A binary kernel: C++ above GRAIN, else ``ufunc`` straight when given, else ``numpy_kernel``
    (maximum and minimum: their numpy kernels silence the warning about NaN)."""
    code = _BIN[name]

    def kernel(input, other, out):
        if out.size < GRAIN:
            if ufunc is None:
                numpy_kernel(input, other, out)
                return
            try:
                run_quiet(ufunc, input, other, out)
            except _SMALL_EXITS as exc:
                _small_retry(ufunc, input, other, out, exc)
            return
        if _try_binary(code, input, other, out, 1, None):
            return
        numpy_kernel(input, other, out)

    kernel.__name__ = name
    return kernel


def _comparison(name: str, numpy_kernel: Callable[..., Any], ufunc: np.ufunc) -> Callable[..., Any]:
    """A comparison: numpy compares a Python int with an integer tensor as the exact number, where
    PyTorch first wraps it into the tensor's dtype (uint8 == 257 holds at 1), so an int operand's
    range is checked first. A float operand past float32's range (``t == 1e300``) and bfloat16 NaNs
    would make numpy warn, so the ufunc runs quietly as in `_arith`."""
    code = _BIN[name]

    def kernel(input, other, out):
        if type(other) is int and not 0 <= other <= 127:  # [0, 127] fits every dtype: no call for it
            other = fitted(other, input.dtype)
        if out.size < GRAIN:
            try:
                run_quiet(ufunc, input, other, out)
            except _SMALL_EXITS as exc:
                _small_retry(ufunc, input, other, out, exc)
            return
        if _try_binary(code, input, other, out, 1, _BOOL):
            return
        numpy_kernel(input, other, out)

    kernel.__name__ = name
    return kernel


_ADD, _SUB, _DIV = _BIN["add"], _BIN["sub"], _BIN["div"]
_np_add, _np_sub = _np_ew.add, _np_ew.sub
_np_div_quiet = _np_ew.div.__wrapped__  # the numpy kernel inside its `wrapping` (functools.wraps keeps it)
_add, _subtract = np.add, np.subtract


def add(input, other, alpha, out):
    if out.size < GRAIN:
        if alpha == 1:  # numpy's add, straight (as _np_add would do it)
            try:
                run_quiet(_add, input, other, out)
            except _SMALL_EXITS as exc:
                _small_retry(_add, input, other, out, exc)
            return
    elif _try_binary(_ADD, input, other, out, alpha, None):
        return
    _np_add(input, other, alpha, out)


def sub(input, other, alpha, out):
    if out.size < GRAIN:
        if alpha == 1:
            try:
                run_quiet(_subtract, input, other, out)
            except _SMALL_EXITS as exc:
                _small_retry(_subtract, input, other, out, exc)
            return
    elif _try_binary(_SUB, input, other, out, alpha, None):
        return
    _np_sub(input, other, alpha, out)


def div(input, other, rounding_mode, out):
    if out.size >= GRAIN and rounding_mode is None and _try_binary(_DIV, input, other, out, 1, None):
        return
    try:
        _np_div_quiet(input, other, rounding_mode, out)
    except OverflowError as exc:  # what elementwise.div's `wrapping` does, without its call
        input, other = wrapped_operands(exc, (input, other))
        _np_div_quiet(input, other, rounding_mode, out)


def _unary_kernel(name: str, numpy_kernel: Callable[..., Any], dtypes: tuple[np.dtype, ...],
                  always: bool, min_threads: int = 2) -> Callable[..., Any]:
    """A unary kernel: C++ for ``dtypes`` above GRAIN with at least ``min_threads`` threads, or at
    every size when ``always``.

    ``dtypes`` lists where the C++ loop beats numpy's own SIMD loops (measured: numpy's float32 log
    and tanh, and float64 exp, outrun two threads of libm calls, so those stay with numpy). When
    ``always``, an input of another dtype (an integer tensor to a float result) is first converted
    into ``out``, and the function then runs in place there.
    """
    code = _UN[name]

    def kernel(input, out):
        if always or (out.size >= GRAIN and out.dtype in dtypes and _threads() >= min_threads):
            dt = out.dtype
            if _float(dt):
                if input.dtype is dt:
                    if _unary(code, input, out):
                        return
                elif always and input.dtype.kind in "biu":
                    np.copyto(out, input, casting="unsafe")
                    if _unary(code, out, out):
                        return
            elif always and dt.itemsize == 2 and dt.kind in "fV":
                # float16/bfloat16: through a float32 buffer (numpy's fallback for these calls
                # Python's math module per element, 100-600x slower), rounded once at the end
                work = input.astype(_F32)
                if _unary(code, work, work):
                    np.copyto(out, work, casting="unsafe")
                    return
        numpy_kernel(input, out)

    kernel.__name__ = name
    return kernel


def _dims(ndim: int, dim: Any) -> list[int]:
    """The reduced dims, non-negative: None or an empty sequence mean all of them."""
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        return [dim % ndim]
    if len(dim) == 0:
        return list(range(ndim))
    return [d % ndim for d in dim]


def _try_reduce(code: int, input: np.ndarray, dim: Any, keepdim: bool, out: np.ndarray) -> bool:
    """A reduction (sum, mean, amax, amin) of float32/float64 in C++, which beats numpy over every
    set of dims (measured, 2 threads): sums accumulate in double along rows, and in blocks of
    columns (float32 added four rows at a time) across them: 1000x1000 over dim 0 38 us against
    numpy's 56, 100^3 over dim 1 44 against 155."""
    dt = input.dtype
    if input.ndim == 0 or not _float(dt) or out.dtype is not dt:
        return False
    return _reduce(code, input, out, _dims(input.ndim, dim), bool(keepdim))


def _reduction(name: str, numpy_kernel: Callable[..., Any]) -> Callable[..., Any]:
    code = _RED[name]

    def kernel(input, dim, keepdim, dtype, out):
        if input.size >= GRAIN and _try_reduce(code, input, dim, keepdim, out):
            return
        numpy_kernel(input, dim, keepdim, dtype, out)

    kernel.__name__ = name
    return kernel


def _extreme(name: str, numpy_kernel: Callable[..., Any]) -> Callable[..., Any]:
    """amax / amin through _try_reduce (rows vectorised over 64 lanes, NaN kept apart; 1000x1000
    along dim 1: 37 us against numpy's 100), numpy for the rest."""
    code = _RED[name]

    def kernel(input, dim, keepdim, out):
        if input.size >= GRAIN and _try_reduce(code, input, dim, keepdim, out):
            return
        numpy_kernel(input, dim, keepdim, out)

    kernel.__name__ = name
    return kernel


_select_into = _C.select_into


def where(condition, input, other, out):
    """where in C++ (a branch-free select, threaded) for same-shape contiguous arrays or 0-d values
    of out's dtype: numpy's where branches per element, and a random 1000x1000 mask took it 3.6 ms."""
    if out.size >= GRAIN and type(condition) is np.ndarray:
        a, b = _as_operand(input, out.dtype), _as_operand(other, out.dtype)
        if a is not None and b is not None and _select_into(out, condition, a, b):
            return
    _np_ew.where(condition, input, other, out)


@quiet  # squares past the dtype's range give inf, as in PyTorch, without numpy's warning
def linalg_vector_norm(input, ord, dim, keepdim, dtype, out):
    """The 2-norm of real float32/float64 as sqrt of the C++ sum of squares, in one threaded pass
    (squares in the input's dtype, sums in double). Other orders and dtypes: numpy's kernel."""
    if ord == 2 and dtype is None and input.size >= GRAIN and _float(input.dtype) and out.dtype is input.dtype \
            and _try_reduce(_RED["sumsq"], input, dim, keepdim, out):
        np.sqrt(out, out=out)
        return
    _np_vector_norm(input, ord, dim, keepdim, dtype, out)


_np_vector_norm = _np_linalg.KERNELS["linalg_vector_norm"]  # as registered (quiet)


def masked_fill(input, mask, value, out):
    """masked_fill as where(mask, value, input) through select_into when mask and input have out's
    shape (in place too): numpy's masked copy branches per element (1000x1000, random mask: 4 ms)."""
    if out.size >= GRAIN and type(mask) is np.ndarray and (input is out or input.shape == out.shape):
        if _select_into(out, mask, _np_idx.fill_value(value, out.dtype), input):
            return
    _np_idx.masked_fill(input, mask, value, out)


def _as_operand(x: Any, dt: np.dtype) -> np.ndarray | None:
    """``x`` as an array of ``dt`` for select_into: an array as it is, a number as a 0-d array when it
    converts exactly, or, for a floating ``dt``, when it rounds to a finite value (the result is
    that number rounded to out's dtype either way: ``where(c, x_f32, 0.6)`` selects 0.6 in float32);
    None otherwise (numpy's where decides those: a Python float scalar took it ~20x as long)."""
    if type(x) is np.ndarray:
        return x
    if type(x) in (bool, int, float):
        try:
            with np.errstate(over="ignore"):
                value = np.array(x, dt)
        except (OverflowError, ValueError, TypeError):
            return None
        exact = value.item() == x
        if exact or (dt.kind == "f" and type(x) is float and np.isfinite(value)):
            return value
    return None


_arg_reduce = _C.arg_reduce


def _arg_dim(input: np.ndarray, dim: Any) -> int | None:
    """The dim for the C++ arg-reduction, or None to leave it to numpy.

    numpy's argmax along the innermost dim is a fast SIMD scan, but along any other dim it is several
    times slower than the C++ kernel (measured), which walks neighbouring outputs together.
    """
    if input.size < GRAIN or dim is None or not input.ndim or not _float(input.dtype):
        return None
    d = dim % input.ndim
    return None if d == input.ndim - 1 else d


def _extreme_dim(is_max: bool, numpy_kernel: Callable[..., Any]) -> Callable[..., Any]:
    """max_dim / min_dim: values and indices along one dim."""
    def kernel(input, dim, keepdim, out):
        values, indices = out
        d = _arg_dim(input, dim)
        if d is not None and values.dtype is input.dtype and _arg_reduce(is_max, input, values, indices, d,
                                                                          bool(keepdim)):
            return
        numpy_kernel(input, dim, keepdim, out)

    kernel.__name__ = "max_dim" if is_max else "min_dim"
    return kernel


def _arg(is_max: bool, numpy_kernel: Callable[..., Any]) -> Callable[..., Any]:
    """argmax / argmin along one dim (over all elements numpy does it)."""
    def kernel(input, dim, keepdim, out):
        d = _arg_dim(input, dim)
        if d is not None and _arg_reduce(is_max, input, None, out, d, bool(keepdim)):
            return
        numpy_kernel(input, dim, keepdim, out)

    kernel.__name__ = "argmax" if is_max else "argmin"
    return kernel


_NP = _np_ew.KERNELS
KERNELS: dict[str, Callable[..., Any]] = {
    "add": add, "sub": sub, "div": div,
    "mul": _arith("mul", _NP["mul"], np.multiply),
    "maximum": _arith("maximum", _NP["maximum"]),
    "minimum": _arith("minimum", _NP["minimum"]),
    "sum": _reduction("sum", _np_red.KERNELS["sum"]),
    "mean": _reduction("mean", _np_red.KERNELS["mean"]),
    "amax": _extreme("amax", _np_red.KERNELS["amax"]),
    "where": where,
    "masked_fill": masked_fill,
    "linalg_vector_norm": linalg_vector_norm,
    "amin": _extreme("amin", _np_red.KERNELS["amin"]),
    "max_dim": _extreme_dim(True, _np_red.KERNELS["max_dim"]),
    "min_dim": _extreme_dim(False, _np_red.KERNELS["min_dim"]),
    "argmax": _arg(True, _np_red.KERNELS["argmax"]),
    "argmin": _arg(False, _np_red.KERNELS["argmin"]),
}
for _name, _ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                      ("gt", np.greater), ("ge", np.greater_equal)):
    KERNELS[_name] = _comparison(_name, _NP[_name], _ufunc)
# log: the C++ loop (vec_log.h, vectorised) beats numpy's on one thread in both precisions (numpy's
# float32 log is a scalar loop on AVX2 machines). The float32 tanh runs at ~0.4 of numpy's
# single-thread speed per thread, so it needs three threads to win.
# float32 exp: the C++ loop (a vectorised polynomial) beats numpy's on one thread too (1M: 0.83 ms
# against 2.07, CPU time), so it runs from one thread up.
KERNELS["exp"] = _unary_kernel("exp", _NP["exp"], (_F32,), always=False, min_threads=1)
KERNELS["log"] = _unary_kernel("log", _NP["log"], (_F32, _F64), always=False, min_threads=1)
KERNELS["tanh"] = _unary_kernel("tanh", _NP["tanh"], (_F32,), always=False, min_threads=3)
for _name in ("sqrt", "neg", "abs"):
    KERNELS[_name] = _unary_kernel(_name, _NP[_name], (_F32, _F64), always=False)
for _name in ("sigmoid", "erf", "erfc"):
    KERNELS[_name] = _unary_kernel(_name, _NP[_name], (_F32, _F64), always=True)


# -- pow with a Python-number exponent ------------------------------------------------------------
# PyTorch computes a float32/float64 tensor to the power 2, 3, -2, 0.5, -0.5, -1, 1 or 0 without
# calling pow (aten's pow_tensor_scalar kernels): x * x, x * x * x, 1 / (x * x), sqrt(x),
# 1 / sqrt(x), 1 / x, a copy, ones. Those forms are cheaper than numpy's power (a libm call per
# element: 1M float32 ** 2 took 0.77 ms against 0.28 ms for x * x), and their results are
# PyTorch's bit for bit where pow's differ: x ** 3 rounds twice, (-0) ** 0.5 is -0 and
# (-inf) ** 0.5 is NaN (sqrt's results), where pow gives +0 and inf.
_MUL = _BIN["mul"]


@quiet
def _np_square(x, out):
    np.multiply(x, x, out=out)


def _square(x: np.ndarray, out: np.ndarray) -> None:
    if out.size >= GRAIN and _try_binary(_MUL, x, x, out, 1, None):
        return
    _np_square(x, out)


@quiet
def _cube(x, out):
    np.multiply(np.multiply(x, x), x, out=out)  # (x * x) * x, PyTorch's order


@quiet
def _inverse_square(x, out):
    np.divide(1, np.multiply(x, x), out=out)


@quiet
def _reciprocal(x, out):
    np.divide(1, x, out=out)


@quiet
def _rsqrt(x, out):
    np.sqrt(x, out=out)
    np.divide(1, out, out=out)


def _copy(x: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, x)


def _ones(x: np.ndarray, out: np.ndarray) -> None:
    out.fill(1)


_POW_FORMS: dict[float, Callable[[np.ndarray, np.ndarray], None]] = {
    2.0: _square, 3.0: _cube, -2.0: _inverse_square, 0.5: KERNELS["sqrt"], -0.5: _rsqrt, -1.0: _reciprocal,
    1.0: _copy, 0.0: _ones,
}
_np_pow = _NP["pow"]


def pow(input, exponent, out):
    """``input ** exponent``: the forms above for a float32/float64 tensor and an int or float
    exponent among their keys (``2`` and ``2.0`` alike), numpy's power otherwise (integer and
    half-precision tensors, complex, tensor exponents: PyTorch calls pow for those too)."""
    t = type(exponent)
    if (t is float or t is int) and type(input) is _ndarray and input.dtype is out.dtype and _float(out.dtype):
        form = _POW_FORMS.get(exponent)
        if form is not None:
            form(input, out)
            return
    _np_pow(input, exponent, out)


KERNELS["pow"] = pow
