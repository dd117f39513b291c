"""Cases for the index ops: gather/scatter, index_* along a dim, masks, take, nonzero.

References are written out element by element (``np.ndindex`` loops), so they share no code
with the kernels they check.
"""

from __future__ import annotations

import numpy as np

from .. import _promote as P
from .._case import Arg, ErrorCase, OpCase, Sample
from ._common import const, same

NUMERIC = tuple(d for d in P.ALL if d != "bool")


def _ints(values, dtype: str = "int64") -> Arg:
    arr = np.asarray(values)
    return Arg(arr.shape, dtype, values=values)


def _dim_key(ndim: int, dim: int, at) -> tuple:
    return (slice(None),) * (dim % ndim) + (at,)


# -- gather ----------------------------------------------------------------------------------------

def _gather_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), 1, _ints([[0, 3], [1, 1], [2, 0]]))),
        Sample((Arg((3, 4), dtype, "transposed"), 0, _ints([[2, 0, 1, 1], [0, 0, 2, 1]], "int32"))),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -1, Arg((2, 2, 5), "int64", low=0, high=3))),
        Sample((Arg((5,), dtype), 0, Arg((7,), "int64", low=0, high=4)), note="index longer than input"),
        Sample((Arg((), dtype), 0, _ints(0))),
        Sample((Arg((3, 4), dtype), 0, Arg((0, 4), "int64"))),
    ]


def _gather_ref(x, dim, index, sparse_grad=False):
    x, idx = np.atleast_1d(x), np.atleast_1d(index)
    out = np.empty(idx.shape, dtype=x.dtype)
    d = dim % x.ndim
    for pos in np.ndindex(idx.shape):
        src = list(pos)
        src[d] = idx[pos]
        out[pos] = x[tuple(src)]
    return out.reshape(np.shape(index))


def _gather_errors():
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[5]])), RuntimeError,
                    "index 5 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[-1]])), RuntimeError,
                    "index -1 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1])), RuntimeError,
                    "Index tensor must have the same number of dimensions as input tensor")
    yield ErrorCase((Arg((3, 4), "float32"), 1, Arg((4, 2), "int64", low=0, high=1)), RuntimeError,
                    "Size does not match at dimension 0 expected index [4, 2] to be no larger than self [3, 4] "
                    "apart from dimension 1")
    yield ErrorCase((Arg((3, 4), "float32"), 0, Arg((1, 1), "float32")), RuntimeError,
                    "gather(): Expected dtype int32/int64 for index")
    yield ErrorCase((Arg((3, 4), "float32"), 2, _ints([[0]])), IndexError, "Dimension out of range")


# -- scatter family -------------------------------------------------------------------------------

# Distinct targets per column (PyTorch leaves the winner among repeated targets unspecified).
_SCATTER_INDEX = [[2, 0, 1, 0], [0, 1, 2, 2]]


def _scatter_samples(dtype: str) -> list[Sample]:
    out = [
        Sample((Arg((3, 4), dtype), 0, _ints(_SCATTER_INDEX), Arg((2, 4), dtype))),
        Sample((Arg((3, 4), dtype, "transposed"), 1, _ints([[3, 0], [1, 2], [0, 3]], "int32"),
                Arg((3, 5), dtype, "sliced")), note="src larger than index"),
        Sample((Arg((3, 4), dtype), -1, _ints([[1], [0], [3]]), P.category(dtype) and 2 or True)),
        Sample((Arg((3, 4), dtype), 0, _ints(_SCATTER_INDEX)), {"value": P.category(dtype) and 3 or True}),
        Sample((Arg((), dtype), 0, _ints(0), Arg((), dtype))),
        Sample((Arg((3, 4), dtype), 0, Arg((0, 4), "int64"), Arg((0, 4), dtype))),
    ]
    if dtype != "bool":
        out.append(Sample((Arg((3, 4), dtype, low=-2, high=2), 0, _ints([[1, 1, 0, 2], [1, 1, 0, 2]]),
                           Arg((2, 4), dtype, low=-2, high=2)), {"reduce": "add"}))
        out.append(Sample((Arg((3, 4), dtype, low=-2, high=2), 0, _ints([[1, 1, 0, 2], [1, 1, 0, 2]]),
                           Arg((2, 4), dtype, low=-2, high=2)), {"reduce": "multiply"}))
    return out


def _combine(reduce, old, new):
    if reduce in (None,):
        return new
    if reduce in ("add", "sum", "mean"):
        return old + new
    if reduce in ("multiply", "prod"):
        return old * new
    if reduce == "amax":
        return old if (old != old or old >= new) else new
    return old if (old != old or old <= new) else new


def _scatter_loop(x, dim, index, values, reduce, include_self=True):
    y = np.array(np.atleast_1d(x))
    idx = np.atleast_1d(index)
    d = dim % y.ndim
    touched: dict = {}
    for pos in np.ndindex(idx.shape):
        dst = list(pos)
        dst[d] = idx[pos]
        dst = tuple(dst)
        v = values if np.ndim(values) == 0 and not isinstance(values, np.ndarray) else np.atleast_1d(values)[pos]
        if dst not in touched:
            touched[dst] = [y[dst]] if include_self else []
        touched[dst].append(v)
    for dst, vals in touched.items():
        if reduce is None:
            y[dst] = vals[-1]
            continue
        acc = vals[0]
        for v in vals[1:]:
            acc = _combine(reduce, acc, v)
        if reduce == "mean":
            acc = acc // len(vals) if y.dtype.kind in "iub" else acc / len(vals)
        y[dst] = acc
    return y.reshape(np.shape(x))


def _scatter_ref(x, dim, index, src=None, value=None, reduce=None):
    return _scatter_loop(x, dim, index, src if src is not None else value, reduce)


def _scatter_errors():
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[5]]), Arg((1, 1), "float32")), RuntimeError,
                    "index 5 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[1]]), Arg((1, 1), "float64")), RuntimeError,
                    "scatter(): Expected self.dtype to be equal to src.dtype")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[1, 1]]), Arg((1, 1), "float32")), RuntimeError,
                    "Expected index [1, 2] to be no larger than self [3, 4] apart from dimension 0 and to be no "
                    "larger size than src [1, 1]")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1]), Arg((1,), "float32")), RuntimeError,
                    "Index tensor must have the same number of dimensions as self tensor")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[1]]), Arg((1, 1), "float32")), RuntimeError,
                    "reduce argument must be either add or multiply.", kwargs={"reduce": "max"})
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[3]]), 1.0), RuntimeError,
                    "index 3 is out of bounds for dimension 0 with size 3", call="scatter_", data_dependent=True)


def _scatter_add_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype, low=-2, high=2), 0, _ints([[1, 1, 0, 2], [1, 1, 0, 2], [0, 1, 2, 2]]),
                Arg((3, 4), dtype, low=-2, high=2)), note="repeated targets"),
        Sample((Arg((3, 4), dtype, "transposed"), 1, Arg((3, 6), "int32", low=0, high=3),
                Arg((3, 6), dtype, "sliced"))),
        Sample((Arg((6,), dtype), 0, Arg((20,), "int64", low=0, high=5), Arg((25,), dtype))),
        Sample((Arg((), dtype), 0, _ints(0), Arg((), dtype))),
    ]


def _scatter_add_ref(x, dim, index, src):
    return _scatter_loop(x, dim, index, src, "add")


def _scatter_add_errors():
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([3]), Arg((1,), "float32")), RuntimeError,
                    "index 3 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([1]), Arg((1,), "float64")), RuntimeError,
                    "Expected self.dtype to be equal to src.dtype")


def _scatter_reduce_samples(dtype: str) -> list[Sample]:
    out = []
    index = _ints([[1, 1, 0, 2], [1, 1, 0, 2], [0, 1, 2, 2]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if dtype == "bool" and reduce in ("sum", "mean", "prod"):
            continue
        if P.category(dtype) == 3 and reduce in ("amax", "amin"):
            continue
        for include_self in (True, False):
            out.append(Sample((Arg((3, 4), dtype, low=-3, high=3), 0, index, Arg((3, 4), dtype, "transposed",
                                                                                  low=-3, high=3), reduce),
                              {"include_self": include_self}))
    return out


def _scatter_reduce_ref(x, dim, index, src, reduce, include_self=True):
    return _scatter_loop(x, dim, index, src, reduce, include_self)


def _scatter_reduce_errors():
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([1]), Arg((1,), "float32"), "max"), RuntimeError,
                    "reduce argument must be either sum, prod, mean, amax or amin, got max")
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([4]), Arg((1,), "float32"), "sum"), RuntimeError,
                    "index 4 is out of bounds for dimension 0 with size 3", data_dependent=True)


# -- index_* -------------------------------------------------------------------------------------

def _index_select_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((4, 3), dtype), 0, _ints([3, 0, 0, 2]))),
        Sample((Arg((4, 3), dtype, "transposed"), 1, _ints([2, 1], "int32"))),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -1, _ints([3]))),
        Sample((Arg((4, 3), dtype), 0, Arg((0,), "int64"))),
        Sample((Arg((), dtype), 0, _ints([0]))),
    ]


def _index_select_ref(x, dim, index):
    if np.ndim(x) == 0:
        return np.array(x)
    return np.stack([np.take(x, int(i), axis=dim) for i in np.atleast_1d(index)], axis=dim) if np.size(index) \
        else np.take(x, np.zeros(0, dtype=np.int64), axis=dim)


def _index_select_errors():
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([3])), IndexError, "index out of range in self",
                    data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([[1]])), IndexError,
                    "index_select(): Index is supposed to be a vector")
    yield ErrorCase((Arg((3, 4), "float32"), 0, Arg((1,), "float32")), RuntimeError,
                    "index_select(): Expected dtype int32 or int64 for index")


def _source_samples(dtype: str, unique: bool) -> list[Sample]:
    rows = [3, 0, 1] if unique else [3, 0, 3]
    return [
        Sample((Arg((4, 3), dtype, low=-2, high=2), 0, _ints(rows), Arg((3, 3), dtype, low=-2, high=2))),
        Sample((Arg((4, 3), dtype, "transposed", low=-2, high=2), 1, _ints([2, 0] if unique else [2, 2]),
                Arg((4, 2), dtype, "sliced", low=-2, high=2))),
        Sample((Arg((5,), dtype, low=-2, high=2), 0, _ints([4] if unique else [4, 4]),
                Arg((1,) if unique else (2,), dtype, low=-2, high=2))),
        Sample((Arg((), dtype), 0, _ints(0), Arg((), dtype))),
    ]


def _index_add_samples(dtype: str) -> list[Sample]:
    out = _source_samples(dtype, unique=False)
    if dtype not in ("bool",):
        out.append(Sample(out[0].args, {"alpha": 2}))
    return out


def _along_loop(x, dim, index, source, combine, include_self=True):
    y = np.array(np.atleast_1d(x))
    src = np.atleast_1d(source).reshape(y.shape[:dim % y.ndim] + (-1,) + y.shape[dim % y.ndim + 1:])
    d = dim % y.ndim
    groups: dict = {}
    for i, target in enumerate(np.atleast_1d(index).reshape(-1)):
        groups.setdefault(int(target) % y.shape[d], []).append(np.take(src, i, axis=d))
    for target, parts in groups.items():
        key = _dim_key(y.ndim, d, target)
        y[key] = combine(y[key], parts)
    return y.reshape(np.shape(x))


def _index_add_ref(x, dim, index, source, alpha=1):
    if np.asarray(x).dtype.kind in "iu":
        alpha = int(alpha)
    return _along_loop(x, dim, index, source, lambda old, parts: old + alpha * sum(parts))


def _index_add_errors():
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([3]), Arg((1, 4), "float32")), RuntimeError,
                    "index 3 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1]), Arg((1, 3), "float32")), RuntimeError,
                    "source tensor shape must match self tensor shape, excluding the specified dimension. "
                    "Got self.shape = [3, 4] source.shape = [1, 3]")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1, 2]), Arg((1, 4), "float32")), RuntimeError,
                    "index_add_(): Number of indices (2) should be equal to source.size(dim): (1), for dim: 0")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1]), Arg((1, 4), "float64")), RuntimeError,
                    "index_add_(): self (Float) and source (Double) must have the same scalar type")


def _index_copy_ref(x, dim, index, source):
    return _along_loop(x, dim, index, source, lambda old, parts: parts[-1])


def _index_copy_errors():
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([3]), Arg((1, 4), "float32")), IndexError,
                    "index_copy_(): index 3 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1, 2]), Arg((1, 4), "float32")), IndexError,
                    "index_copy_(): Number of indices (2) should be equal to source.size(dim) (1)")
    yield ErrorCase((Arg((3, 4), "float32"), 0, _ints([1], "int32"), Arg((1, 4), "float32")), RuntimeError,
                    "index_copy_(): Expected a long tensor for index, but got Int")


def _index_fill_samples(dtype: str) -> list[Sample]:
    value = {0: True, 1: 3, 2: 1.5, 3: 1.5 - 0.5j}[P.category(dtype)]
    return [
        Sample((Arg((4, 3), dtype), 0, _ints([3, -4]), value)),
        Sample((Arg((4, 3), dtype, "transposed"), 1, _ints([2]), Arg((), dtype))),
        Sample((Arg((2, 3, 4), dtype, "sliced"), -1, _ints([-1, 0, 0]), value)),
        Sample((Arg((), dtype), 0, _ints(0), value)),
    ]


def _index_fill_ref(x, dim, index, value):
    y = np.array(np.atleast_1d(x))
    for i in np.atleast_1d(index):
        y[_dim_key(y.ndim, dim, int(i))] = value
    return y.reshape(np.shape(x))


def _index_fill_errors():
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([3]), 1.0), IndexError,
                    "index 3 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([1]), Arg((2,), "float32")), RuntimeError,
                    "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).")
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([[1]]), 1.0), RuntimeError, "Index has to be a vector/scalar")


def _index_reduce_samples(dtype: str) -> list[Sample]:
    out = []
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            for s in _source_samples(dtype, unique=False)[:3]:
                out.append(Sample(s.args + (reduce,), {"include_self": include_self}))
    return out


def _index_reduce_ref(x, dim, index, source, reduce, include_self=True):
    def combine(old, parts):
        vals = ([old] if include_self else []) + parts
        stacked = np.stack(vals)
        if reduce == "prod":
            return np.prod(stacked, axis=0)
        if reduce == "amax":
            return np.max(stacked, axis=0)
        if reduce == "amin":
            return np.min(stacked, axis=0)
        total = np.sum(stacked, axis=0)
        return total // len(vals) if stacked.dtype.kind in "iub" else total / len(vals)
    return _along_loop(x, dim, index, source, combine)


def _index_reduce_errors():
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([1]), Arg((1,), "float32"), "sum"), RuntimeError,
                    "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum.")
    yield ErrorCase((Arg((3,), "float32"), 0, _ints([5]), Arg((1,), "float32"), "amax"), IndexError,
                    "index out of range in self", data_dependent=True)


# -- masks -----------------------------------------------------------------------------------------

def _mask_samples(dtype: str, third) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), Arg((3, 4), "bool"), third(dtype, (3, 4)))),
        Sample((Arg((3, 4), dtype, "transposed"), Arg((4,), "bool"), third(dtype, (3, 4)))),
        Sample((Arg((4,), dtype, "sliced"), Arg((2, 4), "bool", "transposed" if False else "contiguous"),
                third(dtype, (2, 4))), note="mask broadcasts input"),
        Sample((Arg((), dtype), Arg((), "bool"), third(dtype, ()))),
        Sample((Arg((0, 3), dtype), Arg((0, 3), "bool"), third(dtype, (0, 3)))),
    ]


def _fill_value(dtype: str, shape):
    return {0: True, 1: 3, 2: 2.5, 3: 1.5 - 0.5j}[P.category(dtype)]


def _masked_fill_samples(dtype: str) -> list[Sample]:
    out = _mask_samples(dtype, _fill_value)
    out.append(Sample((Arg((3, 4), dtype), Arg((3, 4), "bool"), Arg((), dtype)), note="0-d tensor value"))
    return out


def _masked_fill_ref(x, mask, value):
    shape = np.broadcast_shapes(np.shape(x), np.shape(mask))
    y = np.array(np.broadcast_to(x, shape))
    y[np.broadcast_to(mask, shape)] = value
    return y


def _masked_fill_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float32"), 1.0), RuntimeError,
                    "masked_fill_ only supports boolean masks, but got mask with dtype float")
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "bool"), Arg((2,), "float32")), RuntimeError,
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).")
    yield ErrorCase((Arg((3,), "float32"), Arg((2, 3), "bool"), 1.0), RuntimeError,
                    "output with shape [3] doesn't match the broadcast shape [2, 3]", call="masked_fill_")


def _masked_scatter_samples(dtype: str) -> list[Sample]:
    def source(dt, shape):
        return Arg((int(np.prod(shape)) + 2,), dt)
    return [Sample(s.args, s.kwargs, s.note, data_dependent=False) for s in _mask_samples(dtype, source)]


def _masked_scatter_ref(x, mask, source):
    shape = np.broadcast_shapes(np.shape(x), np.shape(mask))
    y = np.array(np.broadcast_to(x, shape))
    m = np.broadcast_to(mask, shape)
    y[m] = np.asarray(source).reshape(-1)[:int(m.sum())]
    return y


def _masked_scatter_errors():
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "bool", values=[True, True, False]), Arg((1,), "float32")),
                    RuntimeError, "Number of elements of source < number of ones in mask", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "float32"), Arg((3,), "float32")), RuntimeError,
                    "masked_scatter_ only supports boolean masks, but got mask with dtype Float")
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "bool"), Arg((3,), "float64")), RuntimeError,
                    "masked_scatter: expected self and source to have same dtypes but gotFloat and Double")


def _masked_select_samples(dtype: str) -> list[Sample]:
    return [Sample(s.args[:2], data_dependent=True) for s in _mask_samples(dtype, _fill_value)]


def _masked_select_ref(x, mask):
    shape = np.broadcast_shapes(np.shape(x), np.shape(mask))
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def _masked_select_errors():
    # data_dependent: a dynamic op has no kernel on a backend without data, so its checks never run there.
    yield ErrorCase((Arg((3,), "float32"), Arg((3,), "uint8")), RuntimeError,
                    "masked_select: expected BoolTensor for mask", data_dependent=True)
    yield ErrorCase((Arg((3,), "float32"), Arg((2,), "bool")), RuntimeError,
                    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
                    data_dependent=True)


# -- take, nonzero --------------------------------------------------------------------------------

def _take_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), _ints([0, 11, -1, -12, 5]))),
        Sample((Arg((3, 4), dtype, "transposed"), _ints([[1, 2], [7, 0]]))),
        Sample((Arg((6,), dtype, "sliced"), _ints(3))),
        Sample((Arg((), dtype), _ints([0, -1]))),
        Sample((Arg((0,), dtype), Arg((0,), "int64"))),
    ]


def _take_errors():
    yield ErrorCase((Arg((3, 4), "float32"), _ints([12])), IndexError,
                    "out of range: tried to access index 12 on a tensor of 12 elements.", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), _ints([1], "int32")), RuntimeError,
                    "take(): Expected a long tensor for index, but got Int")


def _take_along_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((3, 4), dtype), _ints([[0], [3], [1]]), 1)),
        Sample((Arg((3, 4), dtype, "transposed"), Arg((1, 4), "int64", low=0, high=2), 0), note="broadcast"),
        Sample((Arg((3, 1), dtype), Arg((2, 5), "int64", low=0, high=2), 0), note="broadcast both"),
        Sample((Arg((2, 3), dtype, "sliced"), _ints([5, 0, 2]))),
        Sample((Arg((2, 3, 4), dtype), Arg((2, 3, 2), "int64", low=0, high=3), -1)),
    ]


def _take_along_ref(x, indices, dim=None):
    if dim is None:
        return np.asarray(x).reshape(-1)[np.asarray(indices).reshape(-1)]
    xs, js = list(np.shape(x)), list(np.shape(indices))
    xs[dim] = js[dim] = 1
    both = np.broadcast_shapes(tuple(xs), tuple(js))
    d = dim % len(both)
    xb = np.broadcast_to(x, both[:d] + (np.shape(x)[d],) + both[d + 1:])
    ib = np.broadcast_to(indices, both[:d] + (np.shape(indices)[d],) + both[d + 1:])
    return np.take_along_axis(xb, ib, axis=d)


def _take_along_errors():
    yield ErrorCase((Arg((3, 4), "float32"), _ints([[5]]), 0), RuntimeError,
                    "index 5 is out of bounds for dimension 0 with size 3", data_dependent=True)
    yield ErrorCase((Arg((3, 4), "float32"), _ints([[1]], "int32"), 0), RuntimeError,
                    "flambeau.take_along_dim(): dtype of indices should be Long but got Int")
    yield ErrorCase((Arg((3, 4), "float32"), _ints([1]), 0), RuntimeError,
                    "flambeau.take_along_dim(): input and indices should have the same number of dimensions, but got 2 "
                    "dimensions for input, and 1 dimensions for indices")


def _nonzero_samples(dtype: str) -> list[Sample]:
    shapes = [((3, 4), "contiguous"), ((3, 4), "transposed"), ((5,), "sliced"), ((), "contiguous"),
              ((0, 2), "contiguous"), ((2, 2, 3), "contiguous")]
    out = [Sample((Arg(s, dtype, layout, low=-1, high=1),), data_dependent=True) for s, layout in shapes]
    out += [Sample((Arg(s, dtype, layout, low=-1, high=1),), {"as_tuple": True}, data_dependent=True)
            for s, layout in shapes[:4]]
    return out


def _nonzero_ref(x, as_tuple=False):
    x = np.asarray(x)
    if as_tuple:
        return (np.flatnonzero(x.reshape(1)),) if x.ndim == 0 else np.nonzero(x)
    if x.ndim == 0:
        return np.zeros((int(x != 0), 0), dtype=np.int64)
    return np.argwhere(x)


def cases() -> list[OpCase]:
    real = tuple(d for d in P.ALL if P.category(d) < 3)
    return [
        OpCase("gather", P.ALL, _gather_samples, _gather_ref, same, errors=_gather_errors),
        OpCase("scatter", P.ALL, _scatter_samples, _scatter_ref, same, errors=_scatter_errors),
        OpCase("scatter_add", NUMERIC, _scatter_add_samples, _scatter_add_ref, same, errors=_scatter_add_errors),
        OpCase("scatter_reduce", P.ALL, _scatter_reduce_samples, _scatter_reduce_ref, same,
               errors=_scatter_reduce_errors),
        OpCase("index_select", P.ALL, _index_select_samples, _index_select_ref, same, errors=_index_select_errors),
        OpCase("index_add", NUMERIC, _index_add_samples, _index_add_ref, same, errors=_index_add_errors),
        OpCase("index_copy", P.ALL, lambda d: _source_samples(d, unique=True), _index_copy_ref, same,
               errors=_index_copy_errors),
        OpCase("index_fill", P.ALL, _index_fill_samples, _index_fill_ref, same, errors=_index_fill_errors),
        OpCase("index_reduce", tuple(d for d in real if d != "bool"), _index_reduce_samples, _index_reduce_ref,
               same, errors=_index_reduce_errors),
        OpCase("masked_fill", P.ALL, _masked_fill_samples, _masked_fill_ref, same, errors=_masked_fill_errors),
        OpCase("masked_scatter", P.ALL, _masked_scatter_samples, _masked_scatter_ref, same,
               errors=_masked_scatter_errors),
        OpCase("masked_select", P.ALL, _masked_select_samples, _masked_select_ref, same,
               errors=_masked_select_errors),
        OpCase("take", P.ALL, _take_samples, lambda x, index: np.take(x, index), same, errors=_take_errors),
        OpCase("take_along_dim", P.ALL, _take_along_samples, _take_along_ref, same, errors=_take_along_errors),
        OpCase("nonzero", P.ALL, _nonzero_samples, _nonzero_ref,
               lambda s: ("int64",) * (max(len(s.args[0].shape), 1) if s.kwargs.get("as_tuple") else 1)),
        OpCase("argwhere", P.ALL, lambda d: _nonzero_samples(d)[:6], _nonzero_ref, const("int64")),
    ]
