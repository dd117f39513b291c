"""Sample generators and expected-dtype rules shared by the case modules."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from .. import _promote as P
from .._case import Arg, Sample

#: Shapes and layouts every unary op is tried on: 0-d, empty, 1-d, n-d, transposed, step-sliced.
UNARY_SHAPES: list[tuple[tuple[int, ...], str]] = [
    ((), "contiguous"),
    ((0,), "contiguous"),
    ((0, 3), "transposed"),
    ((5,), "contiguous"),
    ((6,), "sliced"),
    ((3, 4), "contiguous"),
    ((3, 4), "transposed"),
    ((2, 3, 4), "sliced"),
]

#: Operand shape pairs for binary ops: equal, non-contiguous, broadcast both ways, 0-d, empty.
BINARY_SHAPES: list[tuple[tuple[int, ...], str, tuple[int, ...], str]] = [
    ((3, 4), "contiguous", (3, 4), "contiguous"),
    ((3, 4), "transposed", (3, 4), "sliced"),
    ((2, 1, 4), "contiguous", (3, 1), "contiguous"),
    ((3, 4), "sliced", (4,), "contiguous"),
    ((), "contiguous", (3,), "contiguous"),
    ((3,), "contiguous", (), "contiguous"),
    ((), "contiguous", (), "contiguous"),
    ((0, 3), "contiguous", (3,), "contiguous"),
]

#: A Python scalar of each dtype category.
SCALARS = {0: True, 1: 3, 2: 1.5, 3: 1.5 - 0.5j}


def unary(**opts: Any) -> Callable[[str], list[Sample]]:
    def samples(dtype: str) -> list[Sample]:
        return [Sample((Arg(shape, dtype, layout, **opts),)) for shape, layout in UNARY_SHAPES]

    return samples


def binary(
    scalars: Iterable[Any] | None = None,
    mixed: Iterable[str] = (),
    other: dict | None = None,
    kwargs: dict | None = None,
    **opts: Any,
) -> Callable[[str], list[Sample]]:
    """Tensor-tensor samples over :data:`BINARY_SHAPES`, tensor-scalar ones, and mixed-dtype ones.

    ``scalars``: the Python numbers to pair with a tensor (default: one of the tensor's category);
    ``mixed``: other dtypes for the second tensor; ``other``: Arg options for the second operand.
    """
    other = {**opts, **(other or {})}
    kwargs = kwargs or {}

    def samples(dtype: str) -> list[Sample]:
        out = [
            Sample((Arg(sa, dtype, la, **opts), Arg(sb, dtype, lb, **other)), dict(kwargs))
            for sa, la, sb, lb in BINARY_SHAPES
        ]
        values = [SCALARS[P.category(dtype)]] if scalars is None else list(scalars)
        for value in values:
            out.append(Sample((Arg((3, 4), dtype, "transposed", **opts), value), dict(kwargs)))
            out.append(Sample((Arg((), dtype, **opts), value), dict(kwargs)))
        for second in mixed:
            if second != dtype:
                out.append(Sample((Arg((3, 4), dtype, **opts), Arg((3, 4), second, **other)), dict(kwargs)))
                out.append(Sample((Arg((4,), dtype, **opts), Arg((), second, **other)), dict(kwargs)))
        return out

    return samples


#: Integer dtypes narrower than int64: PyTorch casts a 0-d int64 operand of 2**bits + 3 to 3 in them.
_NARROW_INTS = ("uint8", "int8", "int16", "int32")
_NUMPY_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def with_wide_zero_dim(samples: Callable[[str], list[Sample]], negative: bool = True,
                       zero: bool = True) -> Callable[[str], list[Sample]]:
    """``samples`` plus, for an integer dtype narrower than int64, a tensor of it against 0-d int64
    operands outside its range, which PyTorch first casts to the tensor's dtype for the ops
    declared ``zero_dim_common``: 2**bits + 3 (cast to 3), -1 when ``negative`` and 2**bits (cast
    to 0) when ``zero`` (not for divisors)."""
    def more(dtype: str) -> list[Sample]:
        out = list(samples(dtype))
        if dtype in _NARROW_INTS:
            bits = np.dtype(dtype).itemsize * 8
            for wide in ((1 << bits) + 3,) + ((-1,) if negative else ()) + ((1 << bits,) if zero else ()):
                out.append(Sample((Arg((4,), dtype, values=[1, 2, 3, 5]), Arg((), "int64", values=wide)), {}))
        return out
    return more


def zero_dim_common(ref: Callable[..., Any]) -> Callable[..., Any]:
    """``ref`` applied to the operands PyTorch computes with: a 0-d array of a dtype category no
    higher than the arrays with dims is first cast to their dtype (``uint8_t == tensor(257)``
    compares with 1; numpy alone would compare with 257)."""
    def reference(*args: Any, **kwargs: Any) -> Any:
        dims = [a for a in args if isinstance(a, np.ndarray) and a.ndim]
        if dims:
            target = np.result_type(*dims)
            rank = _NUMPY_CATEGORY.get(target.kind, 2)
            args = tuple(a.astype(target) if isinstance(a, np.ndarray) and a.ndim == 0
                         and _NUMPY_CATEGORY.get(a.dtype.kind, 2) <= rank else a for a in args)
        return ref(*args, **kwargs)
    return reference


def operands(sample: Sample) -> list[Any]:
    """The sample's operands as :func:`_promote.result_type` takes them."""
    out: list[Any] = []
    for a in sample.args:
        if isinstance(a, Arg):
            out.append((a.dtype, len(a.shape)))
        elif isinstance(a, (bool, int, float, complex)):
            out.append(a)
    return out


def same(sample: Sample) -> str:
    return next(a.dtype for a in sample.args if isinstance(a, Arg))


def promoted(sample: Sample) -> str:
    return P.result_type(operands(sample))


def floated(sample: Sample) -> str:
    return P.to_float(P.result_type(operands(sample)))


def const(name: str) -> Callable[[Sample], str]:
    return lambda sample: name


def real_of_first(sample: Sample) -> str:
    return P.to_real(same(sample))


def excluding(dtypes: Iterable[str], *drop: str) -> tuple[str, ...]:
    return tuple(d for d in dtypes if d not in drop)
