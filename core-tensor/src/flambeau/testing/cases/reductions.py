"""Cases for reductions: sum, mean, prod, amax/amin, max/min along a dim, argmax/argmin, all/any."""

from __future__ import annotations

import math

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import const, excluding, same

#: (shape, layout, dim, keepdim): all dims, one dim, negative dims, several dims, 0-d and empty inputs.
REDUCE = [
    ((), "contiguous", None, False),
    ((), "contiguous", 0, True),
    ((5,), "sliced", None, False),
    ((3, 4), "contiguous", None, True),
    ((3, 4), "transposed", 0, False),
    ((3, 4), "transposed", -1, True),
    ((2, 3, 4), "sliced", (0, 2), False),
    ((2, 3, 4), "contiguous", (-1, 1), True),
    ((2, 3, 4), "contiguous", (), False),
    ((0, 3), "contiguous", None, False),
    ((0, 3), "transposed", 0, True),
    ((0, 3), "contiguous", 1, False),
]


def _axis(x: np.ndarray, dim):
    if dim is None or dim == () or x.ndim == 0:
        return None
    return dim


def _reducer(fn):
    def ref(x, dim=None, keepdim=False, dtype=None):
        axis = _axis(x, dim)
        if x.ndim == 0:
            return fn(x.reshape(1), axis=0).reshape(())
        return fn(x, axis=axis, keepdims=keepdim)

    return ref


def _samples(single_dim: bool = False, nonempty: bool = False, **opts):
    def samples(dtype: str) -> list[Sample]:
        out = []
        for shape, layout, dim, keepdim in REDUCE:
            if single_dim and isinstance(dim, tuple):
                continue
            if (
                nonempty
                and 0 in shape
                and (dim is None or any(shape[d] == 0 for d in ((dim,) if isinstance(dim, int) else dim or ())))
            ):
                continue
            if dim is None:
                out.append(Sample((Arg(shape, dtype, layout, **opts),), {"keepdim": keepdim} if keepdim else {}))
            else:
                out.append(Sample((Arg(shape, dtype, layout, **opts), dim, keepdim)))
        return out

    return samples


def _with_nan(samples, *extra):
    """Adds a float sample holding NaN: max/min-like reductions return NaN (argmax its index)."""

    def more(dtype: str) -> list[Sample]:
        out = samples(dtype)
        if P.category(dtype) == 2:
            out.append(
                Sample((Arg((2, 3), dtype, values=[[1.0, math.nan, 2.0], [0.5, -1.0, 3.0]]), *extra), note="NaN")
            )
        return out

    return more


def _with_dtype(samples, target: str):
    def more(dtype: str) -> list[Sample]:
        out = samples(dtype)
        wanted = "complex128" if P.category(dtype) == 3 else target
        out.append(Sample((Arg((3, 4), dtype, "transposed"), 1), {"dtype": _fb(wanted)}))
        return out

    return more


def _fb(name: str):
    import flambeau

    return getattr(flambeau, name)


def _accumulated(sample: Sample) -> str:
    if "dtype" in sample.kwargs:
        return sample.kwargs["dtype"].name
    d = same(sample)
    return "int64" if P.category(d) <= 1 else d


def _mean_errors():
    yield ErrorCase((Arg((2,), "int64"),), RuntimeError, "mean(): could not infer output dtype")


def _dim_errors(name: str):
    def errors():
        yield ErrorCase(
            (Arg((2, 3), "float32"), 2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        )

    return errors


def _extreme_errors(name: str):
    def errors():
        yield ErrorCase(
            (Arg((0, 3), "float32"),),
            RuntimeError,
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0",
        )
        yield ErrorCase(
            (Arg((0, 3), "float32"), 0), IndexError, f"{name}(): Expected reduction dim 0 to have non-zero size"
        )
        yield ErrorCase((Arg((2, 3), "float32"), 2), IndexError, "Dimension out of range")

    return errors


def _prod_ref(x, dim=None, keepdim=False, dtype=None):
    return _reducer(np.prod)(x, dim, keepdim)


def _dim_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((), dtype), 0)),
        Sample((Arg((), dtype), -1, True)),
        Sample((Arg((5,), dtype, "sliced"), 0)),
        Sample((Arg((3, 4), dtype, "transposed"), 1)),
        Sample((Arg((3, 4), dtype), 0, True)),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -2)),
        Sample((Arg((0, 3), dtype), 1)),
    ]


def _extreme_dim_ref(arg):
    def ref(x, dim, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        index = arg(x, axis=dim, keepdims=True)
        values = np.take_along_axis(x, index, axis=dim)
        if not keepdim:
            values, index = values.squeeze(dim), index.squeeze(dim)
        return values, index

    return ref


def _arg_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((), dtype),)),
        Sample((Arg((5,), dtype, "sliced"),)),
        Sample((Arg((3, 4), dtype, "transposed"),)),
        Sample((Arg((3, 4), dtype, "transposed"), 0)),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -1, True)),
        Sample((Arg((0, 3), dtype), 1)),
    ]


def _arg_ref(arg):
    def ref(x, dim=None, keepdim=False):
        if x.ndim == 0:
            return np.zeros((), np.int64)
        if dim is None:
            r = np.asarray(arg(x.reshape(-1)))
            return r.reshape((1,) * x.ndim) if keepdim else r
        return arg(x, axis=dim, keepdims=keepdim)

    return ref


def _logical_dtype(sample: Sample) -> str:
    return "uint8" if same(sample) == "uint8" else "bool"


def cases() -> list[OpCase]:
    real_nonbool = excluding(P.REAL, "bool")
    return [
        OpCase("sum", P.ALL, _with_dtype(_samples(low=-3, high=3), "float64"), _reducer(np.sum), _accumulated),
        OpCase(
            "mean",
            P.FLOATS + P.COMPLEX,
            _with_dtype(_samples(), "float64"),
            _reducer(np.mean),
            _accumulated,
            errors=_mean_errors,
        ),
        OpCase(
            "prod",
            P.ALL,
            _with_dtype(_samples(single_dim=True, low=-2, high=2), "float64"),
            _prod_ref,
            _accumulated,
            errors=_dim_errors("prod"),
        ),
        OpCase(
            "amax",
            P.REAL,
            _with_nan(_samples(nonempty=True), 1),
            _reducer(np.amax),
            same,
            errors=_extreme_errors("amax"),
        ),
        OpCase(
            "amin", P.REAL, _with_nan(_samples(nonempty=True)), _reducer(np.amin), same, errors=_extreme_errors("amin")
        ),
        OpCase(
            "max_dim",
            P.REAL,
            _with_nan(_dim_samples, 1),
            _extreme_dim_ref(np.argmax),
            lambda s: (same(s), "int64"),
            errors=_dim_errors("max"),
        ),
        OpCase(
            "min_dim",
            P.REAL,
            _dim_samples,
            _extreme_dim_ref(np.argmin),
            lambda s: (same(s), "int64"),
            errors=_dim_errors("min"),
        ),
        OpCase(
            "argmax",
            real_nonbool,
            _with_nan(_arg_samples, 1),
            _arg_ref(np.argmax),
            const("int64"),
            errors=_dim_errors("argmax"),
        ),
        OpCase("argmin", real_nonbool, _arg_samples, _arg_ref(np.argmin), const("int64"), errors=_dim_errors("argmin")),
        OpCase("all", P.ALL, _samples(low=-1, high=1), _reducer(np.all), _logical_dtype),
        OpCase("any", P.ALL, _samples(low=-1, high=1), _reducer(np.any), _logical_dtype),
    ]
