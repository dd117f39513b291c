"""Declarations of the index ops: gather/scatter along a dim, index_* along a dim, masks, take, nonzero.

Every check that needs only shapes, dtypes and options is made here, with PyTorch's exception
types and wording. Whether an index is in range can only be seen in the data, so each backend's
kernel checks every index before it writes anything (the CPU kernels do; see
``flambeau_cpu.kernels.index_ops``).
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import DYNAMIC, OpDecl
from ..ops.meta import broadcast_shapes, checked_scalar, fmt_shape, type_name, wrap_dim, wrap_dim_of_dims

_INT_INDEX = (_dtypes.int64, _dtypes.int32)
_I64, _I32 = _dtypes.int64, _dtypes.int32

#: How ``masked_fill`` names a mask's dtype (c10's TypeMeta names, as PyTorch prints them).
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}

SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def _ndim1(t: Tensor) -> int:
    """Dims counted as PyTorch's gather/scatter count them: a 0-d tensor has one."""
    return max(t._data.ndim, 1)


def _dims1(t: Tensor) -> tuple[int, ...]:
    return _shape(t) or (1,)


# -- gather and scatter ----------------------------------------------------------------------------

def _dim_of(dim: Any, ndim: int) -> int:
    """``wrap_dim`` with the common case (an in-range int) first: meta functions run on every call."""
    if type(dim) is int and -ndim <= dim < ndim:
        return dim % ndim
    return wrap_dim(dim, ndim)


def _gather_meta(input: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> tuple:
    xshape, ishape = input._data.shape, index._data.shape
    d = _dim_of(dim, len(xshape))
    if index._dtype is not _I64 and index._dtype is not _I32:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if ishape == xshape:  # the common case needs no more checks
        return ishape, input._dtype
    if _ndim1(index) != _ndim1(input):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index._data.size:
        for k, (a, b) in enumerate(zip(_dims1(index), _dims1(input))):
            if k != d and a > b:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {fmt_shape(ishape)} to be no "
                    f"larger than self {fmt_shape(xshape)} apart from dimension {d}")
    return ishape, input._dtype


def _scatter_checks(name: str, input: Tensor, dim: int, index: Tensor, src: Any) -> int:
    xshape, ishape = input._data.shape, index._data.shape
    d = _dim_of(dim, len(xshape))
    if index._dtype is not _I64 and index._dtype is not _I32:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    is_tensor = isinstance(src, Tensor)
    if is_tensor and src._dtype is not input._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if ishape == xshape and (not is_tensor or src._data.shape == xshape):
        return d  # the common case needs no more checks
    if _ndim1(index) != _ndim1(input):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if is_tensor and _ndim1(index) != _ndim1(src):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index._data.size:
        xs = _dims1(input)
        ss = _dims1(src) if is_tensor else None
        for k, size in enumerate(_dims1(index)):
            if (k != d and size > xs[k]) or (ss is not None and size > ss[k]):
                tail = f" and to be no larger size than src {fmt_shape(_shape(src))}" if ss is not None else ""
                raise RuntimeError(
                    f"Expected index {fmt_shape(ishape)} to be no larger than self "
                    f"{fmt_shape(xshape)} apart from dimension {d}{tail}")
    return d


def _scatter_meta(input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None,
                  reduce: Any = None) -> tuple:
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required argument: 'src' (a Tensor) or 'value' (a number)")
    if src is not None and value is not None:
        raise TypeError("scatter() takes either 'src' or 'value', not both")
    given = src if src is not None else value
    if isinstance(given, Tensor):
        if value is not None:
            raise TypeError("scatter(): argument 'value' must be a Number, not Tensor")
    elif not isinstance(given, (bool, int, float, complex)):
        raise TypeError(f"scatter(): argument 'src' must be Tensor or Number, not {type(given).__name__}")
    else:
        checked_scalar(given, input._dtype)  # a scalar must fit an integer dtype, as in PyTorch
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    _scatter_checks("scatter", input, dim, index, given)
    return _shape(input), input._dtype


def _scatter_add_meta(input: Tensor, dim: int, index: Tensor, src: Tensor) -> tuple:
    _scatter_checks("scatter_add", input, dim, index, src)
    return _shape(input), input._dtype


def _scatter_reduce_meta(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                         include_self: bool = True) -> tuple:
    if reduce not in SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _scatter_checks("scatter_reduce", input, dim, index, src)
    return _shape(input), input._dtype


# -- index_* along a dim ---------------------------------------------------------------------------

def _index_select_meta(input: Tensor, dim: int, index: Tensor) -> tuple:
    xshape = input._data.shape
    d = _dim_of(dim, len(xshape))
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype is not _I64 and index._dtype is not _I32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if xshape:
        return xshape[:d] + (index._data.size,) + xshape[d + 1:], input._dtype
    if index._data.size != 1:
        raise IndexError("index_select(): Index to scalar can have only 1 value, got "
                         f"{index._data.size} value(s)")
    return (), input._dtype


def _check_source(name: str, input: Tensor, d: int, index: Tensor, source: Tensor, exc: type = RuntimeError,
                  colon: bool = True) -> None:
    """The checks index_add, index_copy and index_reduce share on ``source``."""
    xshape, sshape = _shape(input), _shape(source)
    if len(xshape) != len(sshape) and (len(xshape) > 1 or len(sshape) > 1):
        raise RuntimeError(f"{name}(): When source and destination are not scalars, their dimensionality must "
                           f"match. Source dimensionality ({len(sshape)}), destination dimensionality "
                           f"({len(xshape)})")
    if len(xshape) == len(sshape) and any(a != b for k, (a, b) in enumerate(zip(xshape, sshape)) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified "
                           f"dimension. Got self.shape = {fmt_shape(xshape)} source.shape = {fmt_shape(sshape)}")
    along = sshape[d] if sshape else 1
    if index._data.size != along:
        how = f": ({along}), for dim: {d}" if colon else f" ({along})"
        raise exc(f"{name}(): Number of indices ({index._data.size}) should be equal to source.size(dim){how}")


def _index_vector(name: str, index: Tensor, dtypes: tuple, message: str) -> None:
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index._dtype not in dtypes:
        raise RuntimeError(message.format(type_name(index._dtype)))


def _index_add_meta(input: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any = 1) -> tuple:
    d = wrap_dim(dim, input._data.ndim)
    _index_vector("index_add_", index, _INT_INDEX, "index_add_(): Expected dtype int32/int64 for index but got: {}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"index_add_(): self ({type_name(input._dtype)}) and source "
                           f"({type_name(source._dtype)}) must have the same scalar type")
    _check_source("index_add_", input, d, index, source)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, complex)):
        raise TypeError(f"index_add(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    return _shape(input), input._dtype


def _index_copy_meta(input: Tensor, dim: int, index: Tensor, source: Tensor) -> tuple:
    d = wrap_dim(dim, input._data.ndim)
    _index_vector("index_copy_", index, (_dtypes.int64,),
                  "index_copy_(): Expected a long tensor for index, but got {}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{type_name(input._dtype)} and (source) {type_name(source._dtype)}")
    _check_source("index_copy_", input, d, index, source, IndexError, colon=False)
    return _shape(input), input._dtype


def _index_fill_meta(input: Tensor, dim: int, index: Tensor, value: Any) -> tuple:
    wrap_dim(dim, input._data.ndim)
    if index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index._dtype is not _dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    checked_scalar(_check_scalar_value("index_fill_", value), input._dtype)  # it must fit, as in PyTorch
    return _shape(input), input._dtype


def _index_reduce_meta(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                       include_self: bool = True) -> tuple:
    d = wrap_dim(dim, input._data.ndim)
    if reduce not in INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    _index_vector("index_reduce_", index, _INT_INDEX,
                  "index_reduce_(): Expected dtype int32/int64 for index but got: {}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"index_reduce_(): self ({type_name(input._dtype)}) and source "
                           f"({type_name(source._dtype)}) must have the same scalar type")
    _check_source("index_reduce_", input, d, index, source)
    return _shape(input), input._dtype


# -- masks ---------------------------------------------------------------------------------------

def _check_scalar_value(name: str, value: Any) -> Any:
    """The fill value as a number to range-check: a 0-dim tensor's value is read (as PyTorch reads it
    with ``item()``), so that ``masked_fill(uint8, mask, tensor(300))`` raises instead of wrapping;
    on the meta device, which holds no values, the tensor comes back unchecked."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return value if value.device.type == "meta" else value.item()
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{name.rstrip('_')}(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return value


def _masked_fill_meta(input: Tensor, mask: Tensor, value: Any) -> tuple:
    if mask._dtype is not _dtypes.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_NAMES[mask._dtype.name]}")
    checked_scalar(_check_scalar_value("masked_fill_", value), input._dtype)
    return broadcast_shapes(_shape(input), _shape(mask)), input._dtype


def _masked_scatter_meta(input: Tensor, mask: Tensor, source: Tensor) -> tuple:
    if mask._dtype is not _dtypes.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{type_name(mask._dtype)}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{type_name(input._dtype)} and {type_name(source._dtype)}")
    return broadcast_shapes(_shape(input), _shape(mask)), input._dtype


def _masked_select_meta(input: Tensor, mask: Tensor) -> None:
    if mask._dtype is not _dtypes.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    broadcast_shapes(_shape(input), _shape(mask))


# -- take, nonzero -------------------------------------------------------------------------------

def _take_meta(input: Tensor, index: Tensor) -> tuple:
    if index._dtype is not _dtypes.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {type_name(index._dtype)}")
    return _shape(index), input._dtype


def _take_along_dim_meta(input: Tensor, indices: Tensor, dim: Any = None) -> tuple:
    if indices._dtype is not _dtypes.int64:
        raise RuntimeError(f"flambeau.take_along_dim(): dtype of indices should be Long but got "
                           f"{type_name(indices._dtype)}")
    if dim is None:
        return (indices._data.size,), input._dtype
    d = wrap_dim_of_dims(dim, input._data.ndim)
    if input._data.ndim != indices._data.ndim:
        raise RuntimeError(
            "flambeau.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input._data.ndim} dimensions for input, and {indices._data.ndim} dimensions for indices")
    return take_along_dim_shape(_shape(input), _shape(indices), d), input._dtype


def take_along_dim_shape(xshape: tuple[int, ...], ishape: tuple[int, ...], d: int) -> tuple[int, ...]:
    """The result's shape: the two shapes broadcast everywhere but along ``d``, which is the indices'."""
    if not xshape:
        return ishape
    x = list(xshape)
    i = list(ishape)
    x[d] = i[d] = 1
    shape = list(broadcast_shapes(tuple(x), tuple(i)))
    shape[d] = ishape[d]
    return tuple(shape)


def _nonzero_meta(input: Tensor, as_tuple: bool = False) -> None:
    return None


def _argwhere_meta(input: Tensor) -> None:
    return None


# -- the declarations --------------------------------------------------------------------------------

_SCATTER_EXAMPLE = (
    "Example::\n\n"
    "    >>> fb.zeros(3).scatter(0, fb.tensor([2, 0]), fb.tensor([1., 2.]))\n"
    "    tensor([2., 0., 1.])")


def declarations() -> list[OpDecl]:
    return [
        OpDecl("gather", "(input: Tensor, dim, index: Tensor, *, sparse_grad=False)", _gather_meta,
               doc="Values of ``input`` along ``dim`` at ``index``: ``out[i][j] = input[index[i][j]][j]`` for "
                   "``dim=0``.\n\nArgs:\n    input: the source tensor.\n    dim: the dim to index along.\n"
                   "    index: int64 (or int32) indices, as many dims as ``input``, each other dim no larger.\n\n"
                   "Shape:\n    the result has ``index``'s shape.\n\n"
                   "Example::\n\n    >>> fb.gather(fb.tensor([[1, 2], [3, 4]]), 1, fb.tensor([[0, 0], [1, 0]]))\n"
                   "    tensor([[1, 1],\n            [4, 3]])"),
        OpDecl("scatter", "(input: Tensor, dim, index: Tensor, src: TensorOrScalar = None, *, value=None, "
               "reduce=None)", _scatter_meta, inplace=True,
               doc="Writes ``src`` (a tensor, or a number, also given as ``value=``) into a copy of ``input`` "
                   "along ``dim`` at ``index``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``. "
                   "``reduce='add'`` or ``'multiply'`` combines instead of writing (prefer "
                   "``scatter_reduce``).\n\n" + _SCATTER_EXAMPLE),
        OpDecl("scatter_add", "(input: Tensor, dim, index: Tensor, src: Tensor)", _scatter_add_meta, inplace=True,
               doc="Adds ``src`` into a copy of ``input`` along ``dim`` at ``index``; repeated indices add up.\n\n"
                   "Example::\n\n    >>> fb.zeros(3).scatter_add(0, fb.tensor([2, 2]), fb.tensor([1., 2.]))\n"
                   "    tensor([0., 0., 3.])"),
        OpDecl("scatter_reduce", "(input: Tensor, dim, index: Tensor, src: Tensor, reduce, *, include_self=True)",
               _scatter_reduce_meta, inplace=True,
               doc="Reduces ``src`` into a copy of ``input`` along ``dim`` at ``index`` with ``reduce`` "
                   "('sum', 'prod', 'mean', 'amax' or 'amin'); ``include_self=False`` leaves the values "
                   "already at the scattered positions out. Integer 'mean' rounds down.\n\n"
                   "Example::\n\n    >>> fb.zeros(2).scatter_reduce(0, fb.tensor([0, 0]), fb.tensor([1., 3.]), "
                   "'mean', include_self=False)\n    tensor([2., 0.])"),
        OpDecl("index_select", "(input: Tensor, dim, index: Tensor)", _index_select_meta,
               doc="The slices of ``input`` along ``dim`` at the positions in the 1-d ``index``.\n\n"
                   "Example::\n\n    >>> fb.index_select(fb.arange(6).view(2, 3), 1, fb.tensor([2, 0]))\n"
                   "    tensor([[2, 0],\n            [5, 3]])"),
        OpDecl("index_add", "(input: Tensor, dim, index: Tensor, source: Tensor, *, alpha=1)", _index_add_meta,
               inplace=True,
               doc="Adds ``alpha * source`` into a copy of ``input``: slice ``i`` of ``source`` along ``dim`` "
                   "goes to position ``index[i]``; repeated positions add up.\n\n"
                   "Example::\n\n    >>> fb.zeros(3).index_add(0, fb.tensor([0, 0]), fb.tensor([1., 2.]))\n"
                   "    tensor([3., 0., 0.])"),
        OpDecl("index_copy", "(input: Tensor, dim, index: Tensor, source: Tensor)", _index_copy_meta, inplace=True,
               doc="Copies slice ``i`` of ``source`` along ``dim`` into position ``index[i]`` of a copy of "
                   "``input``.\n\nExample::\n\n    >>> fb.zeros(3).index_copy(0, fb.tensor([2]), fb.tensor([5.]))\n"
                   "    tensor([0., 0., 5.])"),
        OpDecl("index_fill", "(input: Tensor, dim, index: Tensor, value: TensorOrScalar)", _index_fill_meta,
               inplace=True,
               doc="A copy of ``input`` with the slices along ``dim`` at ``index`` set to ``value`` (a number or "
                   "a 0-d tensor); negative indices count from the end.\n\n"
                   "Example::\n\n    >>> fb.zeros(3).index_fill(0, fb.tensor([-1]), 2.)\n    tensor([0., 0., 2.])"),
        OpDecl("index_reduce", "(input: Tensor, dim, index: Tensor, source: Tensor, reduce, *, include_self=True)",
               _index_reduce_meta, inplace=True,
               doc="Reduces slice ``i`` of ``source`` along ``dim`` into position ``index[i]`` of a copy of "
                   "``input`` with ``reduce`` ('prod', 'mean', 'amax' or 'amin')."),
        OpDecl("masked_fill", "(input: Tensor, mask: Tensor, value: TensorOrScalar)", _masked_fill_meta,
               inplace=True,
               doc="A copy of ``input`` with ``value`` (a number or a 0-d tensor) where the bool ``mask`` (broadcast) "
                   "is True.\n\nExample::\n\n    >>> fb.zeros(3).masked_fill(fb.tensor([True, False, True]), 1.)\n"
                   "    tensor([1., 0., 1.])"),
        OpDecl("masked_scatter", "(input: Tensor, mask: Tensor, source: Tensor)", _masked_scatter_meta, inplace=True,
               doc="A copy of ``input`` where the positions at which ``mask`` is True take the first elements of "
                   "``source`` in order.\n\nExample::\n\n    >>> fb.zeros(3).masked_scatter("
                   "fb.tensor([True, False, True]), fb.tensor([1., 2., 3.]))\n    tensor([1., 0., 2.])"),
        OpDecl("masked_select", "(input: Tensor, mask: Tensor)", _masked_select_meta, kind=DYNAMIC,
               doc="The elements of ``input`` where the bool ``mask`` (broadcast with it) is True, as a 1-d "
                   "tensor.\n\nExample::\n\n    >>> fb.masked_select(fb.tensor([1, 2, 3]), "
                   "fb.tensor([True, False, True]))\n    tensor([1, 3])"),
        OpDecl("take", "(input: Tensor, index: Tensor)", _take_meta,
               doc="Elements of ``input`` seen as 1-d at ``index`` (negative indices count from the end); the "
                   "result has ``index``'s shape.\n\nExample::\n\n    >>> fb.take(fb.tensor([[1, 2], [3, 4]]), "
                   "fb.tensor([0, -1]))\n    tensor([1, 4])"),
        OpDecl("take_along_dim", "(input: Tensor, indices: Tensor, dim=None)", _take_along_dim_meta,
               doc="``gather`` with broadcasting (numpy's ``take_along_axis``); with ``dim=None`` both are "
                   "flattened first.\n\nExample::\n\n    >>> x = fb.tensor([[10, 30, 20]])\n"
                   "    >>> fb.take_along_dim(x, fb.argsort(x, 1), 1)\n    tensor([[10, 20, 30]])"),
        OpDecl("nonzero", "(input: Tensor, *, as_tuple=False)", _nonzero_meta, kind=DYNAMIC, differentiable=False,
               doc="The indices of the non-zero elements: an ``(n, ndim)`` int64 tensor, or with "
                   "``as_tuple=True`` one 1-d tensor per dim.\n\nExample::\n\n"
                   "    >>> fb.nonzero(fb.tensor([0, 3, 0, 4]))\n    tensor([[1],\n            [3]])"),
        OpDecl("argwhere", "(input: Tensor)", _argwhere_meta, kind=DYNAMIC, differentiable=False,
               doc="``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero elements."),
    ]
