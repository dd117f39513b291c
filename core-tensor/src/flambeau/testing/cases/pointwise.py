"""Cases for the pointwise ops of ``_core_ops.pointwise``: fused arithmetic, sign and float bits,
complex parts, binary math functions. The special functions are in :mod:`.pointwise_special`."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import UNARY_SHAPES, binary, const, excluding, floated, promoted, same, unary

NONBOOL = excluding(P.ALL, "bool")
REAL_NONBOOL = excluding(P.REAL, "bool")
NONCOMPLEX_FLOATS = P.FLOATS


def _ternary_samples(value_by_category: dict, t2: dict | None = None):
    t2 = t2 or {}

    def samples(dtype: str) -> list[Sample]:
        value = value_by_category.get(P.category(dtype), 1)
        return [
            Sample((Arg((3, 4), dtype), Arg((3, 4), dtype), Arg((3, 4), dtype, **t2))),
            Sample((Arg((3, 4), dtype, "transposed"), Arg((4,), dtype), Arg((3, 1), dtype, **t2)), {"value": value}),
            Sample((Arg((2, 1, 4), dtype, "sliced"), Arg((3, 1), dtype), Arg((), dtype, **t2)), {"value": value}),
            Sample((Arg((), dtype), Arg((), dtype), Arg((), dtype, **t2))),
            Sample((Arg((0, 3), dtype), Arg((3,), dtype), Arg((0, 1), dtype, **t2))),
            Sample((Arg((4,), dtype), Arg((4,), dtype), Arg((4,), "float64", **t2)), note="mixed dtypes"),
        ]

    return samples


def _ternary_dtype(sample: Sample) -> str:
    return P.result_type([(a.dtype, len(a.shape)) for a in sample.args])


def _addcmul_ref(x, t1, t2, value=1):
    return x + value * (t1 * t2)


def _addcdiv_ref(x, t1, t2, value=1):
    return x + value * (t1 / t2)


def _addcmul_errors():
    yield ErrorCase((Arg((2,), "int64"), Arg((2,), "int64"), Arg((2,), "int64")), RuntimeError,
                    "argument value must not be a floating point number", kwargs={"value": 0.5})
    yield ErrorCase((Arg((2, 3), "float32"), Arg((4,), "float32"), Arg((4,), "float32")), RuntimeError,
                    "The size of tensor a (3) must match the size of tensor b (4)")


def _addcdiv_errors():
    yield ErrorCase((Arg((2,), "float32"), Arg((2,), "int64"), Arg((2,), "int64")), RuntimeError,
                    "Integer division with addcdiv is no longer supported")


def _bound_samples(dtype: str) -> list[Sample]:
    bound = {1: 1, 2: 0.5}.get(P.category(dtype), 1)
    if dtype == "uint8":
        bound = 2
    out = [Sample((Arg(shape, dtype, layout), bound)) for shape, layout in UNARY_SHAPES]
    out.append(Sample((Arg((3, 4), dtype, "transposed"), Arg((4,), dtype))))
    out.append(Sample((Arg((3, 4), dtype), Arg((3, 1), "float64")), note="promotes"))
    if P.category(dtype) == 2:
        out.append(Sample((Arg((3,), dtype, values=[math.nan, 1.0, -2.0]), 0.0), note="NaN propagates"))
    return out


def _bound_errors(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "complex64"), 1.0), RuntimeError, f"{name} is not supported for complex types")
    return errors


def _sgn_ref(x):
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    return np.sign(x)


def _signed_specials(dtype: str) -> list[Sample]:
    out = unary()(dtype)
    if P.category(dtype) == 2:
        out.append(Sample((Arg((5,), dtype, values=[-0.0, 0.0, math.inf, -math.inf, math.nan]),)))
    return out


def _signbit_ref(x):
    return np.signbit(x.astype(np.float64)) if x.dtype.kind in "iub" else np.signbit(x)


def _signbit_errors():
    yield ErrorCase((Arg((2,), "complex64"),), RuntimeError, "signbit is not implemented for complex")


def _angle_ref(x):
    if x.dtype.kind == "c":
        return np.angle(x)
    x = x.astype(np.float64)
    return np.where(np.isnan(x), x, np.where(x < 0, math.pi, 0.0))


def _angle_dtype(sample: Sample) -> str:
    return P.to_float(P.to_real(same(sample)))


def _nan_to_num_samples(dtype: str) -> list[Sample]:
    out = unary()(dtype)
    if P.category(dtype) >= 2:
        values = [math.nan, math.inf, -math.inf, 1.5, -2.0, 0.0]
        if P.category(dtype) == 3:
            values = [complex(math.nan, 1), complex(math.inf, -math.inf), 1 + 2j, complex(0, math.nan), 0j, -1j]
        out.append(Sample((Arg((6,), dtype, values=values),)))
        out.append(Sample((Arg((6,), dtype, values=values),), {"nan": 2.0, "posinf": 10.0, "neginf": -10.0}))
        out.append(Sample((Arg((6,), dtype, values=values), -1.0), {"neginf": -5.0}))
    return out


def _nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    # Given in its own dtype (upcast=False): the defaults are that dtype's finite extremes.
    if x.dtype.kind in "iub":
        return x
    real = x.real.dtype
    try:
        info = np.finfo(real)
    except (TypeError, ValueError):  # bfloat16
        import ml_dtypes

        info = ml_dtypes.finfo(real)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    return np.nan_to_num(x.astype(wide), nan=nan, posinf=posinf, neginf=neginf)


def _frexp_samples(dtype: str) -> list[Sample]:
    out = unary(low=-100, high=100)(dtype)
    out.append(Sample((Arg((6,), dtype, values=[0.0, -0.0, 1.0, -8.0, 0.375, 3.0]),)))
    return out


def _frexp_ref(x):
    return np.frexp(x)


def _logit_samples(dtype: str) -> list[Sample]:
    out = unary(low=0.05, high=0.95)(dtype) if P.category(dtype) >= 2 else unary(low=0, high=2)(dtype)
    out.append(Sample((Arg((3, 4), dtype, "transposed", low=0, high=1),), {"eps": 0.1}))
    return out


def _logit_ref(x, eps=None):
    x = x.astype(np.float64)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _view_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg(shape, dtype, layout),)) for shape, layout in UNARY_SHAPES]


def _imag_errors():
    yield ErrorCase((Arg((2,), "float32"),), RuntimeError,
                    "imag is not implemented for tensors with non-complex dtypes.")


def _float_binary_errors(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "int64"), Arg((2,), "int64")), NotImplementedError,
                        f"\"{name}_cpu\" not implemented for 'Long'")
    return errors


def _xlogy_samples(dtype: str) -> list[Sample]:
    out = binary(scalars=(2.0,), low=0.1, high=4, mixed=("float64", "int32"))(dtype)
    if P.category(dtype) == 2:
        out.append(Sample((Arg((4,), dtype, values=[0.0, 0.0, 1.0, 2.0]),
                           Arg((4,), dtype, values=[0.0, math.nan, 0.0, 3.0])), note="0 * log 0 = 0"))
    out.append(Sample((3.0, Arg((3, 4), dtype, low=0.1, high=4)), note="scalar input"))
    return out


def _xlogy_ref(x, y):
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    with np.errstate(all="ignore"):
        r = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), 0.0, r)


def _heaviside_samples(dtype: str) -> list[Sample]:
    low = 0 if dtype == "uint8" else -2
    out = [Sample((Arg(sa, dtype, la, low=low, high=2), Arg(sb, dtype, lb, low=low, high=2)))
           for sa, la, sb, lb in [((3, 4), "contiguous", (3, 4), "contiguous"), ((3, 4), "transposed", (4,), "sliced"),
                                  ((), "contiguous", (3,), "contiguous"), ((0, 2), "contiguous", (2,), "contiguous")]]
    out.append(Sample((Arg((4,), dtype, values=[0, 1, 0, 2] if dtype != "bool" else [0, 1, 0, 1]),
                       Arg((4,), dtype, values=[1, 1, 0, 1]))))
    return out


def _heaviside_ref(x, v):
    return np.where(x == 0, v, x > 0).astype(np.result_type(x, v))


def _heaviside_errors():
    yield ErrorCase((Arg((2,), "float32"), Arg((2,), "float64")), RuntimeError,
                    "heaviside is not yet implemented for tensors with different dtypes.")
    yield ErrorCase((Arg((2,), "complex64"), Arg((2,), "complex64")), RuntimeError,
                    "heaviside is not yet implemented for complex tensors.")


def _int_binary_samples(dtype: str) -> list[Sample]:
    low = 0 if dtype == "uint8" else -12
    return binary(scalars=(), low=low, high=30, mixed=("int64",))(dtype)


def _gcd_lcm_samples(dtype: str) -> list[Sample]:
    """The usual ones, plus the dtype's extremes: lcm's products past its range (PyTorch wraps
    |a / gcd * b| as C does) and gcd's operands at its minimum."""
    info = np.iinfo(dtype)
    edges = [info.max, info.min, 2 ** (info.bits // 2) + 1, 3, info.max // 2, -7 if info.min else 7]
    other = [2, 0, 2 ** (info.bits // 2) + 3, info.min, info.max, info.min if info.min else 5]
    return [*_int_binary_samples(dtype),
            Sample((Arg((6,), dtype, values=edges), Arg((6,), dtype, values=other)), note="overflow")]


def _wrap(value: int, bits: int, signed: bool = True) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def _gcd_ref(a, b):
    """PyTorch's Euclid in the dtype: |a| and |b| wrap into it (|min| is min), and C's remainder
    takes the dividend's sign, so an operand at the dtype's minimum can give a negative gcd."""
    dt = np.result_type(a, b)
    bits, signed = dt.itemsize * 8, dt.kind == "i"

    def one(x: int, y: int) -> int:
        x, y = _wrap(abs(x), bits, signed), _wrap(abs(y), bits, signed)
        while x != 0:
            r = abs(y) % abs(x)
            x, y = (-r if y < 0 else r), x
        return y
    shape = np.broadcast(a, b).shape
    return np.array([one(int(x), int(y)) for x, y in np.broadcast(a, b)], dtype=dt).reshape(shape)


def _lcm_ref(a, b):
    """PyTorch's ``abs(a / gcd(a, b) * b)`` with C's arithmetic: in int (32 bits) for the narrower
    dtypes, else in the dtype, wrapping; then into the result dtype."""
    dt = np.result_type(a, b)
    work = max(32, dt.itemsize * 8)
    out = []
    for x, y in np.broadcast(a, b):
        x, y = int(x), int(y)
        g = math.gcd(x, y)
        out.append(0 if g == 0 else _wrap(abs(_wrap(x // g * y, work)), work))
    bits = dt.itemsize * 8
    return np.array([_wrap(v, bits, dt.kind == "i") for v in out], dtype=dt).reshape(np.broadcast(a, b).shape)


def _int_errors(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "float32"), Arg((2,), "float32")), NotImplementedError,
                        f"\"{name}_cpu\" not implemented for 'Float'")
    return errors


def _ldexp_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), Arg((3, 4), "int64", low=-3, high=3))),
        Sample((Arg((3, 4), dtype, "transposed"), Arg((4,), "int32", low=-3, high=3))),
        Sample((Arg((), dtype), Arg((3,), "int64", low=-3, high=3))),
        Sample((Arg((3,), dtype, "sliced"), Arg((3,), dtype, low=-2, high=2))),
        Sample((Arg((0, 2), dtype), Arg((2,), "int8", low=0, high=3))),
    ]


def _ldexp_ref(x, e):
    return x * np.exp2(np.asarray(e, dtype=np.float64))


def _ldexp_dtype(sample: Sample) -> str:
    x, e = sample.args
    return P.result_type([(x.dtype, len(x.shape)), (P.to_float(e.dtype), len(e.shape))])


def _float_power_samples(dtype: str) -> list[Sample]:
    if P.category(dtype) <= 1:
        lo = 0 if dtype in ("uint8", "bool") else -3
        return binary(scalars=(2, -1.5), low=lo, high=3, other={"low": 0, "high": 3})(dtype)
    return binary(scalars=(2, 0.5, -1.5), low=0.25, high=3, other={"low": -2, "high": 2})(dtype) + [
        Sample((2.0, Arg((3,), dtype, low=-2, high=2)), note="scalar base")]


def _float_power_ref(x, y):
    wide = np.complex128 if any(np.iscomplexobj(v) for v in (x, y)) else np.float64
    with np.errstate(all="ignore"):
        return np.power(np.asarray(x, dtype=wide), np.asarray(y, dtype=wide))


def _float_power_dtype(sample: Sample) -> str:
    complex_ = any((isinstance(a, Arg) and P.category(a.dtype) == 3) or isinstance(a, complex) for a in sample.args)
    return "complex128" if complex_ else "float64"


def _hypot_samples(dtype: str) -> list[Sample]:
    return binary(scalars=())(dtype)


def _nextafter_samples(dtype: str) -> list[Sample]:
    out = binary(scalars=())(dtype)
    out.append(Sample((Arg((4,), dtype, values=[0.0, 1.0, -1.0, math.inf]),
                       Arg((4,), dtype, values=[1.0, 0.0, 5.0, 0.0]))))
    return out


def _nextafter_ref(x, y):
    # In the operands' own precision: the runner hands float inputs in float64.
    return np.nextafter(x, y)


def cases() -> list[OpCase]:
    c = [
        OpCase("addcmul", NONBOOL, _ternary_samples({1: 2, 2: 0.5, 3: 2}), _addcmul_ref, _ternary_dtype,
               errors=_addcmul_errors),
        OpCase("addcdiv", P.FLOATS + P.COMPLEX, _ternary_samples({2: 0.5, 3: 2}, {"nonzero": True, "low": 0.5}),
               _addcdiv_ref, _ternary_dtype, errors=_addcdiv_errors),
        OpCase("clamp_min", REAL_NONBOOL, _bound_samples, np.maximum, promoted, errors=_bound_errors("clamp_min")),
        OpCase("clamp_max", REAL_NONBOOL, _bound_samples, np.minimum, promoted, errors=_bound_errors("clamp_max")),
        OpCase("sgn", NONBOOL, unary(), _sgn_ref, same),
        OpCase("signbit", P.REAL, _signed_specials, _signbit_ref, const("bool"),
               errors=_signbit_errors),
        OpCase("angle", P.ALL, _signed_specials, _angle_ref, _angle_dtype),
        OpCase("conj_physical", P.ALL, unary(), np.conjugate, same),
        OpCase("deg2rad", P.REAL, unary(low=-360, high=360), lambda x: np.deg2rad(x.astype(np.float64)), floated),
        OpCase("rad2deg", P.REAL, unary(), lambda x: np.rad2deg(x.astype(np.float64)), floated),
        OpCase("nan_to_num", P.ALL, _nan_to_num_samples, _nan_to_num_ref, same, upcast=False),
        OpCase("frexp", P.FLOATS, _frexp_samples, _frexp_ref, lambda s: (same(s), "int32"),
               errors=lambda: [ErrorCase((Arg((2,), "int64"),), RuntimeError,
                                         "flambeau.frexp() only supports floating-point dtypes")]),
        OpCase("logit", P.REAL, _logit_samples, _logit_ref, floated),
        OpCase("real", P.ALL, _view_samples, np.real, lambda s: P.to_real(same(s)), upcast=False),
        OpCase("imag", P.COMPLEX, _view_samples, np.imag, lambda s: P.to_real(same(s)), upcast=False,
               errors=_imag_errors),
        OpCase("copysign", P.REAL, binary(scalars=(-1.0, 2), mixed=("float64", "int32")),
               lambda x, y: np.copysign(np.asarray(x, dtype=np.float64), y), floated),
        OpCase("hypot", P.FLOATS, _hypot_samples, np.hypot, promoted, errors=_float_binary_errors("hypot")),
        OpCase("logaddexp", P.FLOATS, _hypot_samples, np.logaddexp, promoted, errors=_float_binary_errors("logaddexp")),
        OpCase("logaddexp2", P.FLOATS, _hypot_samples, np.logaddexp2, promoted,
               errors=_float_binary_errors("logaddexp2")),
        OpCase("nextafter", ("float32", "float64"), _nextafter_samples, _nextafter_ref, promoted, upcast=False,
               errors=_float_binary_errors("nextafter")),
        OpCase("xlogy", P.REAL, _xlogy_samples, _xlogy_ref, floated),
        OpCase("heaviside", P.REAL, _heaviside_samples, _heaviside_ref, same, errors=_heaviside_errors),
        OpCase("gcd", P.INTS, _gcd_lcm_samples, _gcd_ref, promoted, errors=_int_errors("gcd")),
        OpCase("lcm", P.INTS, _gcd_lcm_samples, _lcm_ref, promoted, errors=_int_errors("lcm")),
        OpCase("ldexp", P.FLOATS, _ldexp_samples, _ldexp_ref, _ldexp_dtype),
        OpCase("float_power", P.ALL, _float_power_samples, _float_power_ref, _float_power_dtype),
    ]
    return c
