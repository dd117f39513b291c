"""Cases for the special functions (``_core_ops.pointwise_special``), against scipy.special.

scipy is imported when a reference is computed. Where it is not installed (a backend tested on
its own, like ``meta``, which only checks shapes and dtypes), references are NaN-filled arrays of
the right shape: shape checks still run, and a data check against them can only fail.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import binary, floated, promoted, unary


def _scipy(name: str, *fixed: Any) -> Callable[..., Any]:
    if name == "spherical_jn":
        fixed = (0, *fixed)

    def ref(*args: Any) -> Any:
        arrays = [np.asarray(a, dtype=np.float64) if not isinstance(a, (int, float)) else a for a in args]
        try:
            from scipy import special
        except ImportError:
            shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
            return np.full(shape, np.nan)
        return getattr(special, name)(*fixed, *arrays)
    return ref


#: op -> (scipy function, value range)
UNARY = {
    "lgamma": ("gammaln", (-4.5, 6)),
    "digamma": ("psi", (0.1, 6)),
    "erfinv": ("erfinv", (-0.95, 0.95)),
    "i0": ("i0", (-5, 5)),
    "special_i0e": ("i0e", (-5, 5)),
    "special_i1": ("i1", (-5, 5)),
    "special_i1e": ("i1e", (-5, 5)),
    "special_ndtr": ("ndtr", (-4, 4)),
    "special_ndtri": ("ndtri", (0.02, 0.98)),
    "special_log_ndtr": ("log_ndtr", (-8, 4)),
    "special_erfcx": ("erfcx", (-2, 6)),
    "special_entr": ("entr", (-1, 4)),
    "special_bessel_j0": ("j0", (-8, 8)),
    "special_bessel_j1": ("j1", (-8, 8)),
    "special_bessel_y0": ("y0", (0.2, 8)),
    "special_bessel_y1": ("y1", (0.2, 8)),
    "special_modified_bessel_i0": ("i0", (-5, 5)),
    "special_modified_bessel_i1": ("i1", (-5, 5)),
    "special_modified_bessel_k0": ("k0", (0.2, 6)),
    "special_modified_bessel_k1": ("k1", (0.2, 6)),
    "special_scaled_modified_bessel_k0": ("k0e", (0.2, 6)),
    "special_scaled_modified_bessel_k1": ("k1e", (0.2, 6)),
    "special_spherical_bessel_j0": ("spherical_jn", (-8, 8)),
}

#: Values with edge behaviour worth pinning (poles, infinities, the ends of the domain).
EDGES = {
    "lgamma": [0.0, -1.0, -2.5, 1.0, 2.0, math.inf],
    "digamma": [0.0, -0.0, -1.0, -2.5, 1.0, math.inf],
    "erfinv": [-1.0, 1.0, 0.0, 1.5, -0.5, 0.25],
    "special_ndtri": [0.0, 1.0, 0.5, 0.25, 2.0, -1.0],
    "special_entr": [0.0, -1.0, 1.0, 0.5, math.inf, 2.0],
    "special_log_ndtr": [-30.0, -10.0, 0.0, 10.0, math.inf, -math.inf],
    # the Bessel functions: PyTorch's values at 0, -0, the infinities and negative arguments
    **dict.fromkeys(("i0", "special_i0e", "special_i1", "special_i1e", "special_modified_bessel_i0",
                     "special_modified_bessel_i1"), [0.0, -0.0, 9.0, -9.0, math.inf, -math.inf]),
    **dict.fromkeys(("special_modified_bessel_k0", "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
                     "special_scaled_modified_bessel_k1"), [0.0, -0.0, -1.0, 2.5, math.inf, -math.inf]),
    **dict.fromkeys(("special_bessel_j0", "special_bessel_j1"), [0.0, -0.0, 6.0, -6.0, math.inf, math.nan]),
    **dict.fromkeys(("special_bessel_y0", "special_bessel_y1"), [0.0, -0.0, -1.0, 6.0, math.inf, -math.inf]),
    "special_spherical_bessel_j0": [0.0, -0.0, 0.25, -7.0, math.inf, -math.inf],
}


def _unary_samples(name: str, low: float, high: float) -> Callable[[str], list[Sample]]:
    def samples(dtype: str) -> list[Sample]:
        lo, hi = (low, high) if P.category(dtype) >= 2 or high - low >= 2 else (0, 2)
        out = unary(low=lo, high=hi)(dtype)
        if name in EDGES and P.category(dtype) == 2:
            out.append(Sample((Arg((6,), dtype, values=EDGES[name]),), note="edges"))
        return out
    return samples


def _complex_error(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "complex64"),), NotImplementedError,
                        f"\"{name}_cpu\" not implemented for 'ComplexFloat'")
    return errors


def _tolerances(name: str) -> dict:
    # bfloat16/float16 results of steep functions (log_ndtr far left, erfinv near 1) round coarsely.
    return {"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 5e-2), "float32": (1e-5, 1e-5)}


def _sinc_ref(x):
    return np.sinc(x if x.dtype.kind in "fc" else x.astype(np.float64))


def _polygamma_samples(dtype: str) -> list[Sample]:
    return [Sample((n, arg)) for n in (0, 1, 3) for arg in
            (Arg((3, 4), dtype, low=0.5, high=5), Arg((3, 4), dtype, "transposed", low=0.5, high=5),
             Arg((), dtype, low=0.5, high=5), Arg((0, 2), dtype))]


def _polygamma_ref(n, x):
    return _scipy("psi")(x) if n == 0 else _scipy("polygamma", n)(x)


def _polygamma_dtype(sample: Sample) -> str:
    return P.to_float(sample.args[1].dtype)


def _polygamma_errors():
    yield ErrorCase((-1, Arg((2,), "float32")), RuntimeError, "polygamma(n, x) does not support negative n.")


def _mvlgamma_samples(dtype: str) -> list[Sample]:
    return [Sample((Arg((3, 4), dtype, low=2.5, high=6), p)) for p in (1, 2, 5)] + [
        Sample((Arg((3, 4), dtype, "transposed", low=2, high=6), 3)),
        Sample((Arg((0,), dtype), 2)),
    ]


def _mvlgamma_ref(x, p):
    try:
        from scipy import special
    except ImportError:
        return np.full(np.shape(x), np.nan)
    x = np.asarray(x, dtype=np.float64)
    return p * (p - 1) / 4 * math.log(math.pi) + sum(special.gammaln(x - j / 2) for j in range(p))


def _mvlgamma_errors():
    yield ErrorCase((Arg((2,), "float32"), 0), RuntimeError, "p has to be greater than or equal to 1")
    yield ErrorCase((Arg((2,), "float32", values=[0.2, 3.0]), 2), RuntimeError,
                    "All elements must be greater than (p-1)/2", data_dependent=True)


def _igamma_samples(dtype: str) -> list[Sample]:
    return binary(scalars=(), low=0.2, high=5, mixed=("float64",))(dtype)


def _xlog1py_samples(dtype: str) -> list[Sample]:
    out = binary(scalars=(2.0,), low=0.1, high=4)(dtype)
    if P.category(dtype) == 2:
        out.append(Sample((Arg((3,), dtype, values=[0.0, 0.0, 1.0]), Arg((3,), dtype, values=[-1.0, math.nan, 0.5]))))
    return out


def _zeta_samples(dtype: str) -> list[Sample]:
    out = binary(scalars=(), low=1.5, high=5)(dtype)
    out.append(Sample((2.0, Arg((3, 4), dtype, low=0.5, high=4)), note="scalar s"))
    out.append(Sample((Arg((3, 4), dtype, "transposed", low=1.5, high=5), 1.0), note="scalar q: Riemann zeta"))
    return out


def _float_errors(name: str):
    def errors():
        yield ErrorCase((Arg((2,), "int64"), Arg((2,), "int64")), NotImplementedError,
                        f"\"{name}_cpu\" not implemented for 'Long'")
    return errors


def cases() -> list[OpCase]:
    c = []
    for name, (fn, (low, high)) in UNARY.items():
        c.append(OpCase(name, P.REAL, _unary_samples(name, low, high), _scipy(fn), floated,
                        errors=_complex_error(name.removeprefix("special_")), tolerances=_tolerances(name)))
    c += [
        OpCase("sinc", P.ALL, unary(low=-3, high=3), _sinc_ref, floated, tolerances=_tolerances("sinc")),
        OpCase("polygamma", P.REAL, _polygamma_samples, _polygamma_ref, _polygamma_dtype, errors=_polygamma_errors,
               tolerances={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 5e-2), "float32": (1e-5, 1e-4)}),
        OpCase("mvlgamma", excluding_bool(), _mvlgamma_samples, _mvlgamma_ref, floated, errors=_mvlgamma_errors,
               tolerances=_tolerances("mvlgamma")),
        OpCase("igamma", P.FLOATS, _igamma_samples, _scipy("gammainc"), promoted, errors=_float_errors("igamma"),
               tolerances=_tolerances("igamma")),
        OpCase("igammac", P.FLOATS, _igamma_samples, _scipy("gammaincc"), promoted, errors=_float_errors("igammac"),
               tolerances=_tolerances("igammac")),
        OpCase("special_zeta", P.REAL, _zeta_samples, _scipy("zeta"), floated, tolerances=_tolerances("zeta")),
        OpCase("special_xlog1py", P.REAL, _xlog1py_samples, _scipy("xlog1py"), floated,
               tolerances=_tolerances("xlog1py")),
    ]
    return c


def excluding_bool() -> tuple[str, ...]:
    return tuple(d for d in P.REAL if d != "bool")
