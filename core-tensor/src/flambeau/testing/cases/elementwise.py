"""Cases for pointwise ops: arithmetic, math functions, comparisons, logical and bitwise ops."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import (UNARY_SHAPES, binary, const, excluding, floated, promoted, real_of_first, same, unary,
                      with_wide_zero_dim, zero_dim_common)

NONBOOL = excluding(P.ALL, "bool")
REAL_NONBOOL = excluding(P.REAL, "bool")
INEXACT = P.FLOATS + P.COMPLEX

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


#: name -> (numpy reference, value range, accepts complex)
FLOAT_UNARY = {
    "exp": (np.exp, (-4, 4), True),
    "exp2": (np.exp2, (-4, 4), True),
    "expm1": (np.expm1, (-4, 4), True),
    "log": (np.log, (0.1, 4), True),
    "log2": (np.log2, (0.1, 4), True),
    "log10": (np.log10, (0.1, 4), True),
    "log1p": (np.log1p, (0.1, 4), True),
    "sqrt": (np.sqrt, (0.1, 4), True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4), True),
    "sin": (np.sin, (-4, 4), True),
    "cos": (np.cos, (-4, 4), True),
    "tan": (np.tan, (-1.2, 1.2), True),
    "asin": (np.arcsin, (-0.9, 0.9), True),
    "acos": (np.arccos, (-0.9, 0.9), True),
    "atan": (np.arctan, (-4, 4), True),
    "sinh": (np.sinh, (-4, 4), True),
    "cosh": (np.cosh, (-4, 4), True),
    "tanh": (np.tanh, (-4, 4), True),
    "asinh": (np.arcsinh, (-4, 4), True),
    "acosh": (np.arccosh, (1.1, 4), True),
    "atanh": (np.arctanh, (-0.9, 0.9), True),
    "sigmoid": (_sigmoid, (-4, 4), True),
    "reciprocal": (lambda x: 1 / x, (0.25, 4), True),
    "erf": (_erf, (-3, 3), False),
    "erfc": (_erfc, (-3, 3), False),
}


def _float_unary_cases() -> list[OpCase]:
    out = []
    for name, (ref, (low, high), complex_ok) in FLOAT_UNARY.items():
        dtypes = P.ALL if complex_ok else P.REAL
        out.append(
            OpCase(
                name,
                dtypes,
                unary(low=low, high=high),
                _inexact(ref),
                floated,
                errors=_complex_error(name) if not complex_ok else _none,
            )
        )
    return out


def _inexact(ref):
    """Integer and bool inputs of a float-valued function are computed in float64 (numpy would
    pick float16 for int8, or wrap a negated uint8)."""

    def wrapped(x):
        return ref(x if x.dtype.kind in "fc" else x.astype(np.float64))

    return wrapped


def _none():
    return ()


def _complex_error(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "complex64"),), RuntimeError, "complex")

    return errors


def _specials(dtype: str):
    """Values with NaN and infinities for the classification ops."""
    base = unary(low=-4, high=4)(dtype)
    if P.category(dtype) == 2:
        base.append(Sample((Arg((6,), dtype, values=[0.0, math.nan, math.inf, -math.inf, 1.5, -0.0]),)))
    elif P.category(dtype) == 3:
        base.append(
            Sample(
                (
                    Arg(
                        (4,),
                        dtype,
                        values=[complex(math.nan, 0), complex(1, math.inf), 2 - 1j, complex(-math.inf, math.nan)],
                    ),
                )
            )
        )
    return base


def _div_samples(dtype: str) -> list[Sample]:
    samples = binary(other={"nonzero": True}, mixed=P.ALL)(dtype)
    if P.category(dtype) in (1, 2):
        for mode in ("trunc", "floor"):
            samples += binary(other={"nonzero": True}, kwargs={"rounding_mode": mode})(dtype)[:4]
    return samples + _infinite_divisions(dtype, rounding_mode="floor")


def _div_ref(x, y, rounding_mode=None):
    q = np.true_divide(x, y)
    if rounding_mode == "trunc":
        return np.trunc(q)
    if rounding_mode == "floor":
        return np.floor_divide(x, y)  # Python's: -1 // inf is -1 (floor(a / b): -0)
    return q


def _div_dtype(sample: Sample) -> str:
    return promoted(sample) if sample.kwargs.get("rounding_mode") else floated(sample)


def _alpha_samples(scalar_alpha: dict, mixed=("int32", "float16", "float64", "bool")):
    def samples(dtype: str) -> list[Sample]:
        out = binary(mixed=mixed)(dtype)
        alpha = scalar_alpha.get(P.category(dtype))
        if alpha is not None:
            out += binary(kwargs={"alpha": alpha})(dtype)[:3]
        return out

    return samples


def _errors_sub():
    yield ErrorCase(
        (Arg((2,), "bool"), Arg((2,), "bool")),
        RuntimeError,
        "Subtraction, the `-` operator, with two bool tensors is not supported",
    )
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((2,), "bool")),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported",
    )


def _errors_broadcast(name: str):
    def errors():
        yield ErrorCase(
            (Arg((2, 3), "float32"), Arg((4,), "float32")),
            RuntimeError,
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
        )

    return errors


def _errors_writes(name: str):
    """Writing a result into a tensor that cannot hold it: in place, and through ``out=``."""

    def errors():
        yield ErrorCase(
            (Arg((2,), "int64"), Arg((2,), "float32")),
            RuntimeError,
            "result type Float can't be cast to the desired output type Long",
            call=name + "_",
        )
        yield ErrorCase(
            (Arg((1,), "float32"), Arg((3,), "float32")),
            RuntimeError,
            "output with shape [1] doesn't match the broadcast shape [3]",
            call=name + "_",
        )
        yield ErrorCase(
            (Arg((2,), "float32"), Arg((2,), "float32")),
            RuntimeError,
            "result type Float can't be cast to the desired output type Long",
            kwargs={"out": Arg((2,), "int64")},
        )

    return errors


def _chain(*makers):
    def errors():
        for make in makers:
            yield from make()

    return errors


def _div_errors():
    yield ErrorCase(
        (Arg((2,), "complex64"), Arg((2,), "complex64")),
        NotImplementedError,
        "\"div_trunc_cpu\" not implemented for 'ComplexFloat'",
        kwargs={"rounding_mode": "trunc"},
    )
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((2,), "float32")),
        ValueError,
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
        kwargs={"rounding_mode": "round"},
    )


def _int_division_by_zero():
    yield ErrorCase(
        (Arg((3,), "int64", values=[1, 2, 3]), Arg((3,), "int64", values=[1, 0, 1])),
        RuntimeError,
        "ZeroDivisionError",
        kwargs={"rounding_mode": "floor"},
        data_dependent=True,
    )


def _pow_samples(dtype: str) -> list[Sample]:
    cat = P.category(dtype)
    if cat == 0:  # PyTorch has no bool ** bool-tensor kernel; a scalar exponent is fine
        return [s for s in binary(scalars=(True, False, 2))(dtype) if not isinstance(s.args[1], Arg)]
    if cat == 1:
        lo = 0 if dtype == "uint8" else -3
        return binary(scalars=(2, 0), low=lo, high=3, other={"low": 0, "high": 3})(dtype)
    return binary(scalars=(2, 0.5, -1.5), low=0.25, high=3, other={"low": -2, "high": 2})(dtype)


def _pow_ref(x, y):
    if isinstance(x, np.ndarray) and x.dtype == np.bool_ and (not isinstance(y, np.ndarray) or y.dtype == np.bool_):
        return x | ~np.asarray(y, dtype=bool)
    return np.power(x, y)


def _pow_errors():
    yield ErrorCase((Arg((2,), "int64"), -2), RuntimeError, "Integers to negative integer powers are not allowed.")
    yield ErrorCase((Arg((2,), "bool"), Arg((2,), "bool")), NotImplementedError, "\"pow\" not implemented for 'Bool'")


def _clamp_samples(dtype: str) -> list[Sample]:
    lo, hi = (-1, 2) if P.category(dtype) == 1 else (-1.5, 2.5)
    if dtype == "uint8":
        lo, hi = 1, 3
    out = []
    for shape, layout in UNARY_SHAPES:
        out.append(Sample((Arg(shape, dtype, layout), lo, hi)))
    out.append(Sample((Arg((3, 4), dtype, "transposed"),), {"min": lo}))
    out.append(Sample((Arg((3, 4), dtype, "sliced"),), {"max": hi}))
    out.append(Sample((Arg((3, 4), dtype), Arg((4,), dtype, low=-3, high=0), Arg((3, 1), dtype, low=0, high=3))))
    out.append(Sample((Arg((3, 4), dtype), hi, lo), note="min > max: max wins"))
    return out


def _clamp_ref(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _clamp_dtype(sample: Sample) -> str:
    ops = [(a.dtype, len(a.shape)) if isinstance(a, Arg) else a for a in (*sample.args, *sample.kwargs.values())]
    return P.result_type(ops)


def _clamp_errors():
    yield ErrorCase((Arg((2,), "float32"),), RuntimeError, "At least one of 'min' or 'max' must not be None")


def _where_samples(dtype: str) -> list[Sample]:
    scalar = {0: False, 1: 7, 2: 2.5, 3: 1j}[P.category(dtype)]
    return [
        Sample((Arg((3, 4), "bool"), Arg((3, 4), dtype), Arg((3, 4), dtype))),
        Sample((Arg((3, 4), "bool", "transposed"), Arg((3, 4), dtype, "sliced"), Arg((4,), dtype))),
        Sample((Arg((2, 1, 4), "bool"), Arg((), dtype), Arg((3, 1), dtype))),
        Sample((Arg((0, 3), "bool"), Arg((3,), dtype), Arg((0, 1), dtype))),
        Sample((Arg((5,), "bool", "sliced"), Arg((5,), dtype), scalar)),
        Sample((Arg((5,), "bool"), scalar, Arg((5,), dtype, "sliced"))),
        Sample((Arg((3, 4), "bool"), Arg((3, 4), dtype), Arg((3, 4), "float64"))),
    ]


def _where_dtype(sample: Sample) -> str:
    ops = [(a.dtype, len(a.shape)) if isinstance(a, Arg) else a for a in sample.args[1:]]
    return P.result_type(ops)


def _where_errors():
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((2,), "float32"), Arg((2,), "float32")),
        RuntimeError,
        "where expected condition to be a boolean tensor",
    )


def _lerp_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), Arg((3, 4), dtype), 0.3)),
        Sample((Arg((3, 4), dtype, "transposed"), Arg((4,), dtype), 0.75)),
        Sample((Arg((3, 4), dtype, "sliced"), Arg((3, 4), dtype), Arg((3, 1), dtype, low=0, high=1))),
        Sample((Arg((), dtype), Arg((), dtype), 0.5)),
        Sample((Arg((0, 2), dtype), Arg((2,), dtype), 0.5)),
    ]


def _lerp_errors():
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((2,), "float64"), 0.5),
        RuntimeError,
        "expected dtype flambeau.float32 for `end` but got dtype flambeau.float64",
    )


def _round_samples(dtype: str) -> list[Sample]:
    out = unary(low=-10, high=10)(dtype)
    if P.category(dtype) == 2:
        out.append(Sample((Arg((6,), dtype, values=[0.5, 1.5, 2.5, -0.5, -1.5, 3.25]),), note="half to even"))
        if dtype in ("float32", "float64"):
            out.append(Sample((Arg((3, 4), dtype, "transposed", low=-10, high=10),), {"decimals": 2}))
    return out


def _round_ref(x, decimals=0):
    return np.round(x, decimals)


def _shift_samples(dtype: str) -> list[Sample]:
    low = 0 if dtype == "uint8" else -8
    return binary(scalars=(1, 2), low=low, high=8, other={"low": 0, "high": 3})(dtype)


def _bitwise_errors(name: str, unary: bool = False):
    def errors():
        args = (Arg((2,), "float32"),) if unary else (Arg((2,), "float32"), Arg((2,), "float32"))
        # PyTorch's dtype dispatch raises NotImplementedError (TORCH_CHECK_NOT_IMPLEMENTED).
        yield ErrorCase(args, NotImplementedError, "not implemented for 'Float'")
        if name in ("bitwise_left_shift", "bitwise_right_shift"):  # shifts take integers only, not bool
            kernel = "lshift" if name == "bitwise_left_shift" else "rshift"
            yield ErrorCase((Arg((2,), "bool"), Arg((2,), "bool")), NotImplementedError,
                            f"\"{kernel}_cpu\" not implemented for 'Bool'")

    return errors


def _no_bool_or_complex_errors(kernel: str):
    """floor_divide, remainder, fmod: PyTorch has no bool or complex kernel for them."""
    def errors():
        yield ErrorCase((Arg((2,), "bool"), Arg((2,), "bool")), NotImplementedError,
                        f"\"{kernel}_cpu\" not implemented for 'Bool'")
        yield ErrorCase((Arg((2,), "complex64"), 2), NotImplementedError,
                        f"\"{kernel}_cpu\" not implemented for 'ComplexFloat'")

    return errors


def _neg_errors():
    yield ErrorCase(
        (Arg((2,), "bool"),), RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported."
    )


def _ordered_errors():
    yield ErrorCase((Arg((2,), "complex64"), Arg((2,), "complex64")), RuntimeError, "not supported for complex")


def _with_nan(samples):
    """Adds a sample with NaN in either operand for float dtypes: PyTorch propagates NaN."""

    def more(dtype: str) -> list[Sample]:
        out = samples(dtype)
        if P.category(dtype) == 2:
            out.append(
                Sample(
                    (
                        Arg((4,), dtype, values=[math.nan, 1.0, math.nan, -2.0]),
                        Arg((4,), dtype, values=[0.5, math.nan, math.nan, 3.0]),
                    ),
                    note="NaN propagates",
                )
            )
        return out

    return more


def _minmax_errors():
    yield ErrorCase((Arg((2,), "complex64"), Arg((2,), "complex64")), RuntimeError,
                    "not implemented for complex tensors.")
    yield from _errors_broadcast("maximum")()


#: floor_divide/remainder/fmod: nonzero divisors, and 0-d ones that wrap to a nonzero value.
_divisor_samples_plain = with_wide_zero_dim(binary(other={"nonzero": True}), zero=False)

#: Floor division and remainders against infinities: PyTorch follows Python (-1 // inf is -1,
#: inf // 2 is NaN, -1 % inf is inf), where floor(a / b) gives -0 and inf.
_INF_DIVIDENDS = [-1.0, math.inf, 5.0, -5.0, 7.0, -math.inf, 1.0, -1.0]
_INF_DIVISORS = [math.inf, 2.0, -math.inf, -math.inf, 2.0, math.inf, 0.0, 0.0]


def _infinite_divisions(dtype: str, **kwargs) -> list[Sample]:
    if P.category(dtype) != 2:
        return []
    n = len(_INF_DIVIDENDS)
    return [Sample((Arg((n,), dtype, values=_INF_DIVIDENDS), Arg((n,), dtype, values=_INF_DIVISORS)), kwargs,
                   note="infinities")]


def _divisor_samples(dtype: str) -> list[Sample]:
    return [*_divisor_samples_plain(dtype), *_infinite_divisions(dtype)]


def _floor_divide_ref(x, y):
    """Python's floor division (numpy's floor_divide is that algorithm, from fmod)."""
    return np.floor_divide(x, y)


def _sign_samples(dtype: str) -> list[Sample]:
    out = list(unary()(dtype))
    if P.category(dtype) == 2:
        out.append(Sample((Arg((4,), dtype, values=[math.nan, -math.nan, -0.0, math.inf]),), note="NaN"))
    return out


def _sign_ref(x):
    """PyTorch's sign is (0 < x) - (x < 0): 0 for NaN (numpy's is NaN)."""
    return np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype) if x.dtype.kind == "f" else np.sign(x)


def cases() -> list[OpCase]:
    c = [
        OpCase(
            "add",
            P.ALL,
            _alpha_samples({1: 2, 2: 0.5, 3: 2}, mixed=P.ALL),
            lambda x, y, alpha=1: x + alpha * y,
            promoted,
            errors=_chain(_errors_broadcast("add"), _errors_writes("add")),
        ),
        OpCase(
            "sub",
            NONBOOL,
            _alpha_samples({1: 2, 2: 0.5, 3: 2}, mixed=NONBOOL),
            lambda x, y, alpha=1: x - alpha * y,
            promoted,
            errors=_chain(_errors_sub, _errors_broadcast("sub")),
        ),
        OpCase(
            "mul",
            P.ALL,
            binary(mixed=P.ALL),
            np.multiply,
            promoted,
            errors=_chain(_errors_broadcast("mul"), _errors_writes("mul")),
        ),
        OpCase("div", P.ALL, _div_samples, _div_ref, _div_dtype, errors=_chain(_div_errors, _int_division_by_zero)),
        OpCase(
            "floor_divide",
            REAL_NONBOOL,
            _divisor_samples,
            zero_dim_common(_floor_divide_ref),
            promoted,
            errors=_no_bool_or_complex_errors("div_floor"),
        ),
        OpCase("remainder", REAL_NONBOOL, _divisor_samples, zero_dim_common(np.remainder), promoted,
               errors=_no_bool_or_complex_errors("remainder")),
        OpCase("fmod", REAL_NONBOOL, _divisor_samples, zero_dim_common(np.fmod), promoted,
               errors=_no_bool_or_complex_errors("fmod")),
        OpCase("pow", P.ALL, with_wide_zero_dim(_pow_samples, negative=False), zero_dim_common(_pow_ref), promoted,
               errors=_pow_errors),
        OpCase("atan2", P.REAL, binary(scalars=()), np.arctan2, floated),
        OpCase("maximum", P.REAL, with_wide_zero_dim(_with_nan(binary(scalars=()))), zero_dim_common(np.maximum),
               promoted, errors=_minmax_errors),
        OpCase("minimum", P.REAL, with_wide_zero_dim(_with_nan(binary(scalars=()))), zero_dim_common(np.minimum),
               promoted, errors=_minmax_errors),
        OpCase("where", P.ALL, _where_samples, np.where, _where_dtype, errors=_where_errors),
        OpCase("clamp", REAL_NONBOOL, with_wide_zero_dim(_clamp_samples), zero_dim_common(_clamp_ref), _clamp_dtype,
               errors=_clamp_errors),
        OpCase("lerp", INEXACT, _lerp_samples, lambda x, e, w: x + w * (e - x), same, errors=_lerp_errors),
        OpCase("neg", NONBOOL, unary(), np.negative, same, errors=_neg_errors),
        OpCase("abs", NONBOOL, unary(), np.abs, real_of_first),
        OpCase("sign", REAL_NONBOOL, _sign_samples, _sign_ref, same),
        OpCase(
            "square",
            P.ALL,
            unary(),
            lambda x: x.astype(np.int64) * x if x.dtype == np.bool_ else x * x,
            lambda s: "int64" if same(s) == "bool" else same(s),
        ),
        OpCase("round", REAL_NONBOOL, _round_samples, _round_ref, same),
        OpCase("logical_not", P.ALL, unary(), np.logical_not, const("bool")),
        OpCase("bitwise_not", P.INTEGRAL, unary(), np.invert, same, errors=_bitwise_errors("bitwise_not", unary=True)),
        OpCase("isnan", P.ALL, _specials, np.isnan, const("bool")),
        OpCase("isinf", P.ALL, _specials, np.isinf, const("bool")),
        OpCase("isfinite", P.ALL, _specials, np.isfinite, const("bool")),
        OpCase("floor", REAL_NONBOOL, unary(), np.floor, same),
        OpCase("ceil", REAL_NONBOOL, unary(), np.ceil, same),
        OpCase("trunc", REAL_NONBOOL, unary(), np.trunc, same),
        OpCase("frac", P.FLOATS, unary(), lambda x: x - np.trunc(x), same),
    ]
    c += _float_unary_cases()
    for name, ref in (("eq", np.equal), ("ne", np.not_equal)):
        c.append(OpCase(name, P.ALL, with_wide_zero_dim(binary(mixed=P.ALL)), zero_dim_common(ref), const("bool"),
                        errors=_errors_broadcast(name)))
    for name, ref in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
        c.append(OpCase(name, P.REAL, with_wide_zero_dim(binary(mixed=P.REAL, low=-2, high=2)), zero_dim_common(ref),
                        const("bool"), errors=_ordered_errors))
    for name, ref in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)):
        c.append(OpCase(name, P.ALL, with_wide_zero_dim(binary(mixed=("bool", "float32"), low=-1, high=1)),
                        zero_dim_common(ref), const("bool")))
    for name, ref in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
        c.append(OpCase(name, P.INTEGRAL, binary(mixed=("bool", "int32")), ref, promoted, errors=_bitwise_errors(name)))
    for name, ref in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
        c.append(OpCase(name, P.INTS, _shift_samples, ref, promoted, errors=_bitwise_errors(name)))
    return c
