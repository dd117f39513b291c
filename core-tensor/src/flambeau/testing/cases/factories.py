"""Cases for factory ops (arange, linspace, logspace, eye) and copies (clone, copy, fill, to_dtype)."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import DEVICE, Arg, ErrorCase, OpCase, Sample
from ._common import UNARY_SHAPES, same, unary


def _fb(name: str):
    import flambeau

    return getattr(flambeau, name)


def _kw(dtype: str) -> dict:
    return {"dtype": _fb(dtype), "device": DEVICE}


def _arange_samples(dtype: str) -> list[Sample]:
    if P.category(dtype) == 1:
        out = [Sample((0, 5, 1), _kw(dtype)), Sample((1, 10, 3), _kw(dtype)), Sample((3, 3, 1), _kw(dtype))]
        if dtype != "uint8":
            out.append(Sample((5, -3, -2), _kw(dtype)))
        if dtype == "int64":
            out.append(Sample((2, 7, 1), {"device": DEVICE}, note="inferred int64"))
        return out
    out = [Sample((0.5, 3.0, 0.25), _kw(dtype)), Sample((0, 4, 1), _kw(dtype)), Sample((1.0, -1.0, -0.5), _kw(dtype))]
    if dtype == "float32":
        out.append(Sample((0, 2.5, 0.5), {"device": DEVICE}, note="inferred default float"))
    return out


def _arange_ref(start, end, step, dtype=None, device=None, requires_grad=False):
    return np.arange(start, end, step, dtype=np.float64)


def _factory_dtype(sample: Sample) -> str:
    """The ``dtype=`` asked for, else the default float dtype."""
    return sample.kwargs["dtype"].name if "dtype" in sample.kwargs else P.DEFAULT_FLOAT


def _arange_dtype(sample: Sample) -> str:
    """As asked, else int64 for integer bounds and the default float dtype otherwise."""
    if "dtype" in sample.kwargs:
        return sample.kwargs["dtype"].name
    return P.DEFAULT_FLOAT if any(isinstance(v, float) for v in sample.args) else "int64"


def _linspace_samples(dtype: str) -> list[Sample]:
    if P.category(dtype) == 1:
        return [Sample((0, 10, 5), _kw(dtype)), Sample((2, 2, 1), _kw(dtype)), Sample((0, 9, 0), _kw(dtype))]
    out = [
        Sample((-1.0, 2.0, 7), _kw(dtype)),
        Sample((3.0, 3.0, 1), _kw(dtype)),
        Sample((0.0, 1.0, 0), _kw(dtype)),
        Sample((2.0, -2.0, 5), _kw(dtype)),
    ]
    if dtype == "float32":
        out.append(Sample((0, 1, 3), {"device": DEVICE}, note="default dtype"))
    return out


def _linspace_ref(start, end, steps, dtype=None, device=None, requires_grad=False):
    values = np.linspace(start, end, steps, dtype=np.float64)
    return np.trunc(values) if dtype is not None and P.category(dtype.name) == 1 else values


def _logspace_samples(dtype: str) -> list[Sample]:
    return [
        Sample((-1.0, 2.0, 4), _kw(dtype)),
        Sample((0.0, 3.0, 4, 2.0), _kw(dtype)),
        Sample((1.0, 1.0, 0), _kw(dtype)),
    ]


def _logspace_ref(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    return np.power(base, np.linspace(start, end, steps, dtype=np.float64))


def _eye_samples(dtype: str) -> list[Sample]:
    return [Sample((3,), _kw(dtype)), Sample((2, 4), _kw(dtype)), Sample((4, 1), _kw(dtype)), Sample((0,), _kw(dtype))]


def _eye_ref(n, m=None, dtype=None, device=None, requires_grad=False):
    return np.eye(n, n if m is None else m)


def _factory_errors():
    yield ErrorCase((0, 5, 0), RuntimeError, "step must be nonzero", kwargs={"device": DEVICE}, call="arange")
    yield ErrorCase(
        (0, 5, -1), RuntimeError, "bound inconsistent with step sign", kwargs={"device": DEVICE}, call="arange"
    )
    # sizes whose elements overflow int64 are refused before any backend allocates (a backend without
    # storage, like meta, would otherwise make them; empty/zeros: core-tensor's test_numeric_edges.py)
    yield ErrorCase(((2 ** 62, 4),), RuntimeError, "numel: integer multiplication overflow",
                    kwargs={"device": DEVICE}, call="randn")


def _copy_samples(dtype: str) -> list[Sample]:
    out = []
    for src in ("bool", "uint8", "int32", "float16", "float64", "complex64"):
        out.append(Sample((Arg((3, 4), dtype, "transposed"), Arg((3, 4), src, "sliced", low=0, high=4))))
    out.append(Sample((Arg((3, 4), dtype), Arg((4,), dtype))))
    out.append(Sample((Arg((2, 3), dtype, "sliced"), Arg((), dtype))))
    out.append(Sample((Arg((), dtype), Arg((), dtype))))
    out.append(Sample((Arg((0, 2), dtype), Arg((2,), dtype))))
    out.append(Sample((Arg((3,), dtype), {0: True, 1: 2, 2: 1.5, 3: 1j}[P.category(dtype)])))
    return out


def _copy_ref(x, src):
    return _cast_like(np.broadcast_to(np.asarray(src), x.shape), x.dtype)


def _cast_like(values: np.ndarray, target: np.dtype) -> np.ndarray:
    """numpy's cast with PyTorch's rules: complex to real keeps the real part, to bool tests != 0."""
    if target == np.bool_:
        return values != 0
    if values.dtype.kind == "c" and target.kind != "c":
        return values.real
    return values


def _copy_errors():
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((3,), "float32")),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
        call="copy_",
    )
    yield ErrorCase(
        (Arg((1,), "float32"), Arg((3,), "float32")),
        RuntimeError,
        "output with shape [1] doesn't match the broadcast shape [3]",
        call="copy_",
    )


def _fill_samples(dtype: str) -> list[Sample]:
    value = {0: True, 1: 7, 2: 2.5, 3: 1 - 2j}[P.category(dtype)]
    out = [Sample((Arg(shape, dtype, layout), value)) for shape, layout in UNARY_SHAPES]
    out.append(Sample((Arg((3, 4), dtype, "transposed"), Arg((), dtype))))
    return out


def _fill_ref(x, value):
    return np.full(x.shape, value if not isinstance(value, np.ndarray) else value[()])


def _fill_errors():
    yield ErrorCase(
        (Arg((2,), "float32"), Arg((2,), "float32")),
        RuntimeError,
        "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
        call="fill_",
    )


def _to_dtype_samples(dtype: str) -> list[Sample]:
    out = [Sample((Arg((3, 4), dtype, "transposed", low=0, high=4), _fb(target))) for target in P.ALL]
    out.append(Sample((Arg((), dtype, low=0, high=4), _fb("float64"))))
    out.append(Sample((Arg((0, 3), dtype), _fb("int32"))))
    out.append(Sample((Arg((6,), dtype, "sliced", low=0, high=4), _fb("float32"))))
    return out


def _to_dtype_ref(x, dtype):
    return _cast_like(x, dtype.numpy_dtype)


def _to_dtype_rule(sample: Sample) -> str:
    return sample.args[1].name


def cases() -> list[OpCase]:
    ordered = P.INTS + P.FLOATS
    return [
        OpCase("arange", ordered, _arange_samples, _arange_ref, _arange_dtype, errors=_factory_errors),
        OpCase("linspace", ordered, _linspace_samples, _linspace_ref, _factory_dtype),
        OpCase("logspace", P.FLOATS, _logspace_samples, _logspace_ref, _factory_dtype),
        OpCase("eye", P.ALL, _eye_samples, _eye_ref, _factory_dtype),
        OpCase("clone", P.ALL, unary(), np.copy, same),
        OpCase("copy", P.ALL, _copy_samples, _copy_ref, same, errors=_copy_errors),
        OpCase("fill", P.ALL, _fill_samples, _fill_ref, same, errors=_fill_errors),
        OpCase("to_dtype", P.ALL, _to_dtype_samples, _to_dtype_ref, _to_dtype_rule),
    ]
