"""float16 and bfloat16 reductions, scans and products accumulate in float32, as PyTorch's do.

numpy accumulates a half-precision sum in half precision (``ml_dtypes``' bfloat16 always, and
float16 along any axis its pairwise loop does not cover): 300 bfloat16 ones sum to 256 and
100000 float16 ones have a mean of inf. PyTorch accumulates in float32 and rounds once, at the
end. Rather than each kernel converting its own operands, :func:`accumulating` wraps a kernel
once, where the backend's table is built: when the kernel's result is half precision, its half
operands are widened to float32, it writes into a float32 buffer, and the buffer is rounded into
the real ``out`` once. Any kernel under it (numpy, scipy, BLAS, C++) thus computes in float32,
and float32/float64 calls pay one dtype check.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from flambeau.ops._registry import code_parameters

from ._signature_wrap import with_signature

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_ndarray = np.ndarray

#: The ops whose CPU kernels accumulate (reductions, scans, products): they run in float32 on
#: half-precision data. Extreme values, sorting and counting do not accumulate and stay as they are.
ACCUMULATING_OPS = (
    "sum", "nansum", "mean", "nanmean", "prod", "var", "std", "var_mean", "std_mean",
    "logsumexp", "norm", "dist", "linalg_vector_norm",
    "cumsum", "cumprod", "logcumsumexp",
    "matmul", "mm", "bmm", "mv", "dot", "vdot", "addmm", "addmv", "addr", "addbmm", "baddbmm",
)


def is_half(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is float16 or bfloat16.

    bfloat16 (ml_dtypes' type) is known by its name: importing ml_dtypes to compare with it would
    put its ~10 ms on every ``import flambeau``, and an array of it exists only once it is imported.
    """
    return dtype == _F16 or (dtype.itemsize == 2 and dtype.name == "bfloat16")


def _widen(x: Any) -> Any:
    """``x`` with its half-precision arrays (also inside a list or tuple) converted to float32."""
    if x.__class__ is _ndarray:
        return x.astype(_F32) if is_half(x.dtype) else x
    if isinstance(x, (list, tuple)):
        return type(x)(_widen(v) for v in x)
    named = getattr(x, "numpy_dtype", None)  # a `dtype=` argument naming a half type
    if isinstance(named, np.dtype) and is_half(named):
        return _F32
    return x


def _run_wide(kernel: Callable[..., Any], out_at: int, args: tuple) -> Any:
    """``kernel(*args)`` in float32, rounding its half-precision outputs into ``args[out_at]`` once."""
    out = args[out_at]
    outs = (out,) if out.__class__ is _ndarray else tuple(out)
    buffers = tuple(np.empty(o.shape, _F32) if is_half(o.dtype) else o for o in outs)
    wide = [_widen(a) for a in args]
    wide[out_at] = buffers[0] if out.__class__ is _ndarray else type(out)(buffers)
    result = kernel(*wide)
    with np.errstate(over="ignore"):  # past the half type's range: inf, quietly, as in PyTorch
        for o, b in zip(outs, buffers):
            if b is not o:
                np.copyto(o, b, casting="unsafe")
    return result


# Only a half-precision result takes the slow path: `out` (or its first array, for the ops with
# several outputs) is what the op's meta function made of the dtypes and any `dtype=` argument.
_BODY = """\
    _first = {out} if {out}.__class__ is _ndarray else {out}[0]
    if _first.itemsize != 2 or not _is_half(_first.dtype):
        return _kernel({args})
    return _run_wide(_kernel, {out_at}, ({args},))
"""


def accumulating(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` (which writes into its ``out`` parameter) computing in float32 when ``out`` is half."""
    fast = code_parameters(kernel)  # the code object's names when it has them all (27 kernels at load)
    if fast is not None and fast[3]:
        names, plain = fast[0], True
    else:
        params = inspect.signature(kernel).parameters.values()
        names = [p.name for p in params]
        plain = all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
    if "out" not in names or not plain:
        raise TypeError(f"accumulating(): kernel {kernel!r} needs plain positional parameters and an 'out'")
    body = _BODY.replace("{out_at}", str(names.index("out")))
    run = with_signature(kernel, body, {"_ndarray": _ndarray, "_is_half": is_half, "_run_wide": _run_wide})
    return run
