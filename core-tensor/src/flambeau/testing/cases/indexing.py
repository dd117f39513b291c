"""Cases for advanced indexing: ``index`` (``x[idx]``) and ``index_put`` (``x[idx] = v``)."""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import same


def _ints(values, dtype: str = "int64") -> Arg:
    return Arg((len(values),), dtype, values=values)


def _numpy_index(indices) -> tuple:
    return tuple(slice(None) if i is None else i for i in indices)


def _index_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((5, 4), dtype), [_ints([0, 4, -1, 2])])),
        Sample((Arg((5, 4), dtype, "transposed"), [None, Arg((2, 2), "int32", low=-4, high=3)])),
        Sample((Arg((3, 4, 5), dtype, "sliced"), [_ints([2, 0]), None, _ints([1, 4])]), note="non-adjacent"),
        Sample(
            (Arg((3, 4, 5), dtype), [None, Arg((2, 1), "int64", low=0, high=3), _ints([0, 4, 2])]),
            note="broadcast indices",
        ),
        Sample((Arg((0, 3), dtype), [Arg((0,), "int64")])),
        Sample((Arg((3, 4), dtype), [Arg((3, 4), "bool")]), data_dependent=True),
        Sample((Arg((3, 4), dtype, "transposed"), [Arg((3,), "bool")]), data_dependent=True),
    ]


def _index_ref(x, indices):
    return x[_numpy_index(indices)]


def _index_errors():
    yield ErrorCase(
        (Arg((5,), "float32"), [Arg((2,), "float32")]),
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    )
    yield ErrorCase(
        (Arg((5,), "float32"), [_ints([1, 7])]),
        IndexError,
        "index 7 is out of bounds for dimension 0 with size 5",
        data_dependent=True,
    )
    yield ErrorCase(
        (Arg((3, 4), "float32"), [_ints([0, 1]), _ints([0, 1, 2])]),
        IndexError,
        "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
    )


def _put_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((5, 4), dtype), [_ints([0, 3, 1])], Arg((3, 4), dtype))),
        Sample((Arg((5, 4), dtype, "transposed"), [_ints([4, -5])], Arg((4,), dtype))),
        Sample((Arg((3, 4, 5), dtype, "sliced"), [None, _ints([3, 0], "int32")], Arg((5,), dtype))),
        Sample((Arg((3, 4), dtype), [Arg((3, 4), "bool")], Arg((), dtype)), data_dependent=True),
    ]
    if P.category(dtype) >= 1:
        out.append(
            Sample(
                (Arg((5, 4), dtype, low=-2, high=2), [_ints([1, 1, 3])], Arg((3, 4), dtype, low=-2, high=2), True),
                note="accumulate, repeated index",
            )
        )
    return out


def _put_ref(x, indices, values, accumulate=False):
    y = np.array(x)
    index = _numpy_index(indices)
    if accumulate:
        np.add.at(y, index, values)
    else:
        y[index] = values
    return y


def _put_errors():
    yield ErrorCase(
        (Arg((5,), "float32"), [_ints([1])], Arg((1,), "float64")),
        RuntimeError,
        "Index put requires the source and destination dtypes match",
    )
    yield ErrorCase(
        (Arg((5,), "float32"), [_ints([1, 2])], Arg((3,), "float32")),
        RuntimeError,
        "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]",
    )
    yield ErrorCase(
        (Arg((5,), "float32"), [_ints([1, 5])], Arg((2,), "float32")),
        IndexError,
        "index 5 is out of bounds for dimension 0 with size 5",
        data_dependent=True,
    )


def cases() -> list[OpCase]:
    return [
        OpCase("index", P.ALL, _index_samples, _index_ref, same, errors=_index_errors),
        OpCase("index_put", P.ALL, _put_samples, _put_ref, same, errors=_put_errors),
    ]
