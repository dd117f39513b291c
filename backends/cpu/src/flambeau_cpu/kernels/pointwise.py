"""numpy/scipy kernels for the pointwise ops of ``flambeau._core_ops.pointwise`` and
``pointwise_special``. Each fills its preallocated ``out`` (which may alias an input)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ._int_scalars import fitted
from ._quiet import quiet_all
from .elementwise import sign as _sign

_HALF_LOG_PI = 0.5 * math.log(math.pi)

try:  # the fused C++ kernels (a stale or missing build leaves the numpy ones in charge)
    from .. import _C

    _c_binary = _C.pointwise_binary
    _c_unary = _C.pointwise_unary
    _c_addcmul = _C.addcmul
    _c_addcdiv = _C.addcdiv
    _C_BIN = _C.POINTWISE_BINARY_OPS
    _C_UN = _C.POINTWISE_UNARY_OPS
except (ImportError, AttributeError):
    _c_binary = _c_unary = _c_addcmul = _c_addcdiv = None
    _C_BIN = _C_UN = {}

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_ndarray = np.ndarray


def _c_ready(out: np.ndarray, *inputs: Any) -> bool:
    """Cheap pre-check for the C++ kernels: float32/float64 arrays of out's dtype (they check the rest)."""
    dt = out.dtype
    if dt is not _F32 and dt is not _F64:
        return False
    for x in inputs:
        if type(x) is not _ndarray or x.dtype is not dt:
            return False
    return True


def _work_dtype(out: np.ndarray) -> np.dtype:
    """The dtype to compute in: float16 and bfloat16 results are computed in float32 (as PyTorch's
    CPU kernels do), and scipy has no loops for them."""
    if out.dtype.kind == "c":
        return out.dtype
    return out.dtype if out.dtype == np.float64 else np.dtype(np.float32)


def _as(x: Any, wd: np.dtype) -> Any:
    if isinstance(x, np.ndarray) and x.dtype != wd:
        return x.astype(wd)
    return x


def _special() -> Any:
    """scipy.special, imported at first use: it costs ~0.1 s that ``import flambeau`` should not pay."""
    from scipy import special

    return special


def _resolve(fn: Any) -> Any:
    """A function given by its scipy.special name, or the function itself."""
    return getattr(_special(), fn) if isinstance(fn, str) else fn


def _store(out: np.ndarray, result: Any) -> None:
    np.copyto(out, result, casting="unsafe")


def _float_unary(fn: Any) -> Callable[..., None]:
    """A kernel computing ``fn`` (a function, or a scipy.special name) in the working dtype, straight
    into ``out`` when it can."""
    def kernel(input, out):
        nonlocal fn
        if isinstance(fn, str):
            fn = _resolve(fn)
        wd = _work_dtype(out)
        x = _as(input, wd)
        if out.dtype == wd and isinstance(fn, np.ufunc):
            fn(x, out=out)
        else:
            _store(out, fn(x))
    return kernel


def _float_binary(fn: Any) -> Callable[..., None]:
    def kernel(input, other, out):
        nonlocal fn
        if isinstance(fn, str):
            fn = _resolve(fn)
        wd = _work_dtype(out)
        a, b = _as(input, wd), _as(other, wd)
        if out.dtype == wd and isinstance(fn, np.ufunc):
            fn(a, b, out=out)
        else:
            _store(out, fn(a, b))
    return kernel


# -- fused arithmetic ------------------------------------------------------------------

def addcmul(input, tensor1, tensor2, value, out):
    if _c_addcmul is not None and _c_ready(out, input, tensor1, tensor2) and not isinstance(value, complex) \
            and _c_addcmul(input, tensor1, tensor2, value, out):
        return
    if out.dtype.kind == "b":
        product = np.multiply(tensor1, tensor2)
    else:
        # Operands cast first: before ml_dtypes 0.7, bfloat16 has no safe cast to float64 that
        # np.multiply(..., dtype=float64) could use, so a bfloat16 x float64 product would raise.
        product = np.multiply(tensor1.astype(out.dtype, copy=False), tensor2.astype(out.dtype, copy=False))
    if value != 1:
        product = np.multiply(product, value, casting="unsafe")
    np.add(input, product, out=out, casting="unsafe")


def addcdiv(input, tensor1, tensor2, value, out):
    if _c_addcdiv is not None and _c_ready(out, input, tensor1, tensor2) and not isinstance(value, complex) \
            and _c_addcdiv(input, tensor1, tensor2, value, out):
        return
    quotient = np.true_divide(tensor1, tensor2)
    if value != 1:
        quotient = np.multiply(quotient, value)
    np.add(input, quotient, out=out, casting="unsafe")


def clamp_min(input, min, out):
    try:
        np.maximum(input, min, out=out, casting="unsafe")
    except OverflowError:  # a negative bound of an unsigned tensor wraps, as in elementwise.clamp
        np.maximum(input, fitted(min, out.dtype), out=out, casting="unsafe")


def clamp_max(input, max, out):
    try:
        np.minimum(input, max, out=out, casting="unsafe")
    except OverflowError:
        np.minimum(input, fitted(max, out.dtype), out=out, casting="unsafe")


# -- unary -----------------------------------------------------------------------------

def sgn(input, out):
    if input.dtype.kind != "c":
        _sign(input, out)  # sign's own kernel (NaN gives 0, as PyTorch's)
        return
    magnitude = np.abs(input)
    with np.errstate(invalid="ignore", divide="ignore"):
        _store(out, np.where(magnitude == 0, 0, input / np.where(magnitude == 0, 1, magnitude)))


def signbit(input, out):
    if input.dtype.kind == "f":
        np.signbit(input, out=out)
    elif input.dtype.kind == "i":
        np.less(input, 0, out=out)
    elif input.dtype.kind in "ub":
        out[...] = False
    else:  # bfloat16 has no signbit loop
        np.signbit(input.astype(np.float32), out=out)


def angle(input, out):
    if input.dtype.kind == "c":
        _store(out, np.angle(input))
        return
    x = _as(input, _work_dtype(out))
    # PyTorch: pi for negative numbers, 0 otherwise (-0.0 included), NaN stays NaN
    _store(out, np.where(np.isnan(x), x, np.where(x < 0, math.pi, 0.0)))


def conj_physical(input, out):
    if input.dtype.kind == "c":
        np.conjugate(input, out=out)
    elif out is not input:
        np.copyto(out, input)


def deg2rad(input, out):
    _float_unary(np.deg2rad)(input, out)


def rad2deg(input, out):
    _float_unary(np.rad2deg)(input, out)


def _finfo(d: np.dtype) -> Any:
    try:
        return np.finfo(d)
    except (TypeError, ValueError):  # bfloat16
        import ml_dtypes

        return ml_dtypes.finfo(d)


def nan_to_num(input, nan, posinf, neginf, out):
    if input.dtype.kind in "iub":
        if out is not input:
            np.copyto(out, input)
        return
    info = _finfo(input.real.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = input if input.dtype.kind == "c" else _as(input, _work_dtype(out))
    _store(out, np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf))


def frexp(input, out):
    mantissa, exponent = out
    x = input if input.dtype.itemsize >= 2 and input.dtype.kind == "f" else input.astype(np.float32)
    m, e = np.frexp(x)
    _store(mantissa, m)
    _store(exponent, e)


def logit(input, eps, out):
    x = _as(input, _work_dtype(out))
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        _store(out, np.log(x / (1 - x)))


def real(input):
    return input.real


def imag(input):
    return input.imag


# -- binary ----------------------------------------------------------------------------

def _fast_binary(name: str, fallback: Callable[..., None]) -> Callable[..., None]:
    code = _C_BIN.get(name)
    if code is None:
        return fallback

    def kernel(input, other, out):
        if not (_c_ready(out, input, other) and _c_binary(code, input, other, out)):
            fallback(input, other, out)
    return kernel


copysign = _float_binary(np.copysign)
hypot = _fast_binary("hypot", _float_binary(np.hypot))
logaddexp = _fast_binary("logaddexp", _float_binary(np.logaddexp))
logaddexp2 = _fast_binary("logaddexp2", _float_binary(np.logaddexp2))


def _fast_unary(name: str, fallback: Callable[..., None]) -> Callable[..., None]:
    code = _C_UN.get(name)
    if code is None:
        return fallback

    def kernel(input, out):
        if not (_c_ready(out, input) and _c_unary(code, input, out)):
            fallback(input, out)
    return kernel
xlogy = _float_binary("xlogy")
special_xlog1py = _float_binary("xlog1py")


def nextafter(input, other, out):
    # In the result's own dtype: the next float32 after x is not the next float64's.
    np.nextafter(input, other, out=out, casting="unsafe")


def heaviside(input, values, out):
    _store(out, np.where(input == 0, values, input > 0))


def gcd(input, other, out):
    fix = _gcd_at_minimum(input, other, out.dtype) if out.dtype.kind == "i" else None
    np.gcd(input, other, out=out, casting="unsafe")
    if fix is not None:
        out[fix[0]] = fix[1]


def _gcd_at_minimum(input: Any, other: Any, dt: np.dtype) -> tuple[np.ndarray, np.ndarray] | None:
    """PyTorch's Euclid where an operand is the dtype's minimum, whose absolute value wraps to
    itself: C's remainder (the dividend's sign) then gives, e.g., gcd(-128, -118) = -2 in int8
    where numpy's gcd says 2. Those elements (where, values) are computed with PyTorch's loop,
    before anything is written (``out`` may be ``input``)."""
    low = np.iinfo(dt).min
    a, b = np.broadcast_arrays(np.asarray(input, dt), np.asarray(other, dt))
    at = (a == low) | (b == low)
    if not at.any():
        return None
    x, y = np.abs(a[at]), np.abs(b[at])  # |min| wraps to min, as C's abs into the dtype
    while True:
        live = x != 0
        if not live.any():
            return at, y
        x, y = np.where(live, np.fmod(y, np.where(live, x, 1)), x), np.where(live, x, y)


def lcm(input, other, out):
    """PyTorch's ``abs(a / gcd(a, b) * b)``, computed as C computes it: in int (32 bits) for the
    narrower dtypes, in the dtype itself for int32/int64, wrapping on overflow, and then wrapped
    into the dtype. numpy's lcm takes the absolute values first, so an overflow came out with the
    other sign (int64: -2**61 where PyTorch gives 2**61)."""
    work = out.dtype if out.dtype.itemsize >= 4 else np.dtype(np.int32)
    g = np.gcd(input, other, dtype=work, casting="unsafe")
    zero = g == 0
    quotient = np.floor_divide(input, np.where(zero, 1, g), dtype=work, casting="unsafe")  # exact: g divides a
    product = np.abs(np.multiply(quotient, other, dtype=work, casting="unsafe"))
    np.copyto(out, np.where(zero, 0, product), casting="unsafe")


def ldexp(input, other, out):
    wd = _work_dtype(out)
    scale = np.exp2(_as(other, wd))  # complex exponents too: 2 ** (1+1j) turns as well as scales
    np.multiply(input, scale, out=out, casting="unsafe")


def float_power(input, exponent, out):
    np.power(_as(input, out.dtype), _as(exponent, out.dtype), out=out, casting="unsafe")


# -- special functions -----------------------------------------------------------------

def polygamma(n, input, out):
    x = _as(input, _work_dtype(out))
    sc = _special()
    _store(out, sc.psi(x) if n == 0 else sc.polygamma(n, x))


def mvlgamma(input, p, out):
    x = _as(input, _work_dtype(out))
    if x.size and not np.all(x > (p - 1) / 2):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    total = np.full(x.shape, p * (p - 1) / 2 * _HALF_LOG_PI, dtype=x.dtype)
    for j in range(p):
        total += _special().gammaln(x - j / 2)
    _store(out, total)


_IGAMMA = _float_binary("gammainc")
_IGAMMAC = _float_binary("gammaincc")


def igamma(input, other, out):
    _IGAMMA(input, other, out)


def igammac(input, other, out):
    _IGAMMAC(input, other, out)


def _sinc(input, out):
    x = input if input.dtype.kind == "c" else _as(input, _work_dtype(out))
    _store(out, np.sinc(x))


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    """``sin(x) / x``, 1 at 0 and 0 at +-inf (PyTorch's limits; ``np.sinc`` gives NaN there)."""
    return np.where(np.isinf(x), 0.0, np.sinc(x / np.pi)).astype(x.dtype, copy=False)


# inf, NaN, 0 and huge values give inf/NaN without numpy's RuntimeWarnings, as PyTorch's kernels do.
KERNELS: dict[str, Callable[..., Any]] = quiet_all({
    "addcmul": addcmul, "addcdiv": addcdiv, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "sgn": sgn, "signbit": signbit, "angle": angle, "conj_physical": conj_physical,
    "deg2rad": deg2rad, "rad2deg": rad2deg, "nan_to_num": nan_to_num, "frexp": frexp, "logit": logit,
    "real": real, "imag": imag,
    "copysign": copysign, "hypot": hypot, "logaddexp": logaddexp, "logaddexp2": logaddexp2,
    "nextafter": nextafter, "xlogy": xlogy, "special_xlog1py": special_xlog1py, "heaviside": heaviside,
    "gcd": gcd, "lcm": lcm, "ldexp": ldexp, "float_power": float_power,
    "lgamma": _fast_unary("lgamma", _float_unary("gammaln")), "digamma": _float_unary("psi"),
    "erfinv": _float_unary("erfinv"),
    "i0": _float_unary("i0"), "special_i0e": _float_unary("i0e"), "special_i1": _float_unary("i1"),
    "special_i1e": _float_unary("i1e"), "special_ndtr": _float_unary("ndtr"),
    "special_ndtri": _float_unary("ndtri"), "special_log_ndtr": _float_unary("log_ndtr"),
    "special_erfcx": _float_unary("erfcx"), "special_entr": _float_unary("entr"),
    "special_bessel_j0": _float_unary("j0"), "special_bessel_j1": _float_unary("j1"),
    "special_bessel_y0": _float_unary("y0"), "special_bessel_y1": _float_unary("y1"),
    "special_modified_bessel_i0": _float_unary("i0"), "special_modified_bessel_i1": _float_unary("i1"),
    "special_modified_bessel_k0": _float_unary("k0"), "special_modified_bessel_k1": _float_unary("k1"),
    "special_scaled_modified_bessel_k0": _float_unary("k0e"), "special_scaled_modified_bessel_k1": _float_unary("k1e"),
    "special_spherical_bessel_j0": _float_unary(_spherical_j0),
    "special_zeta": _float_binary("zeta"),
    "sinc": _sinc, "polygamma": polygamma, "mvlgamma": mvlgamma, "igamma": igamma, "igammac": igammac,
})
