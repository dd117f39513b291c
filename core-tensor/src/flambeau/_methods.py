"""Putting the generated op functions where users look for them: ``flambeau.*`` and ``Tensor``.

Also the thin Python wrappers that PyTorch's overloaded signatures need (``x.view(2, 3)``,
``fb.max(x, dim)``), and the operators (``+``, ``@``, ``+=``...).
"""
from __future__ import annotations

import operator
from types import ModuleType
from typing import Any

from . import _dtypes
from ._creation import scalar_tensor_like as _scalar_tensor_like
from ._tensor import Tensor
from .ops._registry import FUNCTIONS, OPS


def _sizes(args: tuple, name: str = "", arg: str = "size") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size([2, 3]))`` all give ``(2, 3)``.

    With ``name``, every entry must be an integer (an int, a numpy integer, a one-element integer
    tensor), else PyTorch's TypeError, raised before any op sees it.
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if name:
        for pos, value in enumerate(args, 1):
            if value.__class__ is not int and not _is_index(value):
                raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {pos} with error "
                                f"\"type must be tuple of ints,but got {type(value).__name__}\"")
    return args


def _dims(args: tuple, kwargs: dict, name: str) -> Any:
    """``x.squeeze()``, ``x.squeeze(0)``, ``x.squeeze(0, 1)``, ``x.squeeze((0, 1))``, ``x.squeeze(dim=0)``:
    the optional ``dim`` argument of a method that PyTorch also lets take dims as varargs."""
    if kwargs:
        if set(kwargs) != {"dim"} or args:
            unexpected = next((k for k in kwargs if k != "dim"), "dim")
            raise TypeError(f"{name}() got an unexpected keyword argument '{unexpected}'" if unexpected != "dim"
                            else f"{name}() got multiple values for argument 'dim'")
        return kwargs["dim"]
    if not args:
        return None
    if len(args) == 1:
        return args[0]
    return _sizes(args, name, "dim")


def _is_index(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def install(namespace: ModuleType) -> None:
    """Attach every op's function: core ops to ``flambeau``, all ops' methods to ``Tensor``."""
    for name, decl in OPS.items():
        fn = FUNCTIONS[name]
        if decl.export and decl.provider == "flambeau-core-tensor":
            setattr(namespace, name, fn)
        if decl.method:
            setattr(Tensor, name, fn)
        if decl.inplace:
            setattr(Tensor, name + "_", FUNCTIONS[name + "_"])
    for name in _EXPORTED_INPLACE:
        setattr(namespace, name + "_", FUNCTIONS[name + "_"])
    for name, value in _OVERLOADS.items():
        setattr(namespace, name, value)
    for name, value in _METHODS.items():
        setattr(Tensor, name, value)
    _install_operators()


# -- overloaded functions --------------------------------------------------------------

def _extreme(name: str, elementwise: str):
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if isinstance(dim, Tensor):
            return FUNCTIONS[elementwise](input, dim, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments: keepdim needs dim")
            return FUNCTIONS["a" + name](input, out=out)
        return FUNCTIONS[name + "_dim"](input, dim, keepdim, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(input)``: the {name}imum of all elements; ``{name}(input, dim, keepdim=False)``: "
                  f"(values, indices) along ``dim``; ``{name}(input, other)``: ``{elementwise}``.")
    return fn


def _transpose_alias(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return FUNCTIONS["transpose"](input, dim0, dim1)


#: Ops whose in-place form PyTorch also has as a function (``torch.relu_``), not only as a method.
_EXPORTED_INPLACE = ("relu", "threshold", "selu", "celu", "rrelu", "dropout", "alpha_dropout", "feature_dropout",
                     "feature_alpha_dropout")

_OVERLOADS: dict[str, Any] = {
    "max": _extreme("max", "maximum"),
    "min": _extreme("min", "minimum"),
    "swapaxes": _transpose_alias,
    "swapdims": _transpose_alias,
    "true_divide": lambda input, other, *, out=None: FUNCTIONS["div"](input, other, out=out),
    "multiply": lambda input, other, *, out=None: FUNCTIONS["mul"](input, other, out=out),
    "subtract": lambda input, other, *, alpha=1, out=None: FUNCTIONS["sub"](input, other, alpha=alpha, out=out),
    "divide": lambda input, other, *, rounding_mode=None, out=None: FUNCTIONS["div"](
        input, other, rounding_mode=rounding_mode, out=out),
    "negative": lambda input, *, out=None: FUNCTIONS["neg"](input, out=out),
    "clip": lambda input, min=None, max=None, *, out=None: FUNCTIONS["clamp"](input, min, max, out=out),
    "absolute": lambda input, *, out=None: FUNCTIONS["abs"](input, out=out),
}


# -- methods whose signature differs from the function's -------------------------------

def _view(self: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], _dtypes.dtype):
        return _view_dtype(self, shape[0])
    return FUNCTIONS["view"](self, _sizes(shape, "view"))


def _view_dtype(self: Tensor, dtype: _dtypes.dtype) -> Tensor:
    """``x.view(dtype)``: the same bytes read as another dtype (the last dim rescales by the size ratio)."""
    from ._tensor import wrap
    from .ops.meta import type_name

    old, new = self._dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"to view {type_name(self._dtype)} as {type_name(dtype)} (different element sizes)"
        if self._data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if new > old:
            ratio = new // old
            if self._data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {self._data.shape[-1]}")
            if self.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {self.storage_offset()}")
            for d, st in enumerate(self.stride()[:-1]):
                if st % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {st}")
    out = wrap(self._data.view(dtype.numpy_dtype), dtype, self._device)
    out._version_counter, out._base = self._version_counter, self._base if self._base is not None else self
    return out


def _filled_like(name: str):
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               **_: Any) -> Tensor:
        from . import _creation

        return getattr(_creation, name)(_sizes(size, "new_" + name), dtype=dtype or self._dtype,
                                        device=device if device is not None else self._device,
                                        requires_grad=requires_grad)
    method.__name__ = "new_" + name
    return method


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    from ._creation import full

    return full(size, fill_value, dtype=dtype or self._dtype, device=device if device is not None else self._device,
                requires_grad=requires_grad)


def _near(self: Any, src: Any, non_blocking: bool) -> Any:
    """``copy_``'s source, moved to the destination's device first when ``non_blocking`` asks the
    transfer to be queued (the dispatcher moves it otherwise, synchronously)."""
    if non_blocking and isinstance(src, Tensor) and src._device is not self._device:
        from ._conversion import to_device

        return to_device(src, self._device, non_blocking=True)
    return src


def _zero_(self: Tensor) -> Tensor:
    return FUNCTIONS["fill_"](self, 0)


def _inplace_view(name: str):
    """``x.t_()``, ``x.squeeze_()``...: ``x`` itself takes the shape and strides of ``x.t()``."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if self._requires_grad:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            raise RuntimeError(f"{name}_(): in-place shape changes of a tensor that requires grad are not "
                               f"supported; use {name}() instead")
        view = getattr(self, name)(*args, **kwargs)  # every argument check happens here, before any change
        self._data = view._data
        self._version_counter[0] += 1
        return self
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place version of :meth:`Tensor.{name}`: this tensor becomes that view of its storage."
    return method


def _sum_to_size(self: Tensor, size: tuple) -> Tensor:
    """Sum this tensor down to ``size``, which must expand to its shape (the reverse of ``expand``)."""
    shape = tuple(self.shape)
    size = tuple(operator.index(s) for s in size)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != n and s != 1 for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    result = FUNCTIONS["sum"](self, list(range(lead)), False) if lead else self
    kept = [d for d, s in enumerate(size) if s == 1 and result.shape[d] != 1]
    return FUNCTIONS["sum"](result, kept, True) if kept else result


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give this tensor the shape ``sizes``, row-major, over its storage from its storage offset.

    The first elements keep their values (read in storage order); when the storage is too small
    for the new shape, the tensor gets a larger storage of its own with the old elements copied
    to its start, and the rest uninitialised, as in PyTorch.

    Args:
        *sizes: the new shape, as ints or one sequence (``resize_(2, 3)``, ``resize_((2, 3))``).

    Example::

        >>> x = fb.arange(6.)
        >>> x.resize_(2, 3)
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
    """
    import math

    from ._layout import contiguous_strides as _contiguous_strides
    from ._creation import _size_args, empty

    shape = _size_args("resize_", sizes)
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    offset, capacity = self.storage_offset(), self._storage_numel()
    numel = math.prod(shape)
    if offset + numel <= capacity:
        native = FUNCTIONS["as_strided"](self, shape, _contiguous_strides(shape), offset)._data
    else:
        if self._base is not None:
            raise RuntimeError("resize_: cannot grow the storage of a view: its base would no longer share it; "
                               "resize the base, or clone() the view first")
        grown = empty(numel, dtype=self._dtype, device=self._device)
        kept = capacity - offset
        if kept > 0:
            grown[:kept].copy_(FUNCTIONS["as_strided"](self, (kept,), (1,), offset))
        native = grown.view(shape)._data
    self._data = native
    self._version_counter[0] += 1
    return self


def _resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    return _resize_(self, tuple(the_template.shape))


_METHODS: dict[str, Any] = {
    "view": _view,
    "reshape": lambda self, *shape: FUNCTIONS["reshape"](self, _sizes(shape, "reshape", "shape")),
    "permute": lambda self, *dims: FUNCTIONS["permute"](self, _sizes(dims, "permute", "dims")),
    "expand": lambda self, *size: FUNCTIONS["expand"](self, _sizes(size, "expand")),
    "broadcast_to": lambda self, *size: FUNCTIONS["broadcast_to"](self, _sizes(size, "broadcast_to")),
    "sum_to_size": lambda self, *size: _sum_to_size(self, _sizes(size, "sum_to_size")),
    "expand_as": lambda self, other: FUNCTIONS["expand"](self, other.shape),
    "view_as": lambda self, other: FUNCTIONS["view"](self, other.shape),
    "reshape_as": lambda self, other: FUNCTIONS["reshape"](self, other.shape),
    "squeeze": lambda self, *dim, **kw: FUNCTIONS["squeeze"](self, _dims(dim, kw, "squeeze")),
    "count_nonzero": lambda self, *dim, **kw: FUNCTIONS["count_nonzero"](self, _dims(dim, kw, "count_nonzero")),
    "max": _OVERLOADS["max"],
    "min": _OVERLOADS["min"],
    "swapaxes": _transpose_alias,
    "swapdims": _transpose_alias,
    "copy_": lambda self, src, non_blocking=False: FUNCTIONS["copy_"](self, _near(self, src, non_blocking)),
    "fill_": lambda self, value: FUNCTIONS["fill_"](self, value),
    "zero_": _zero_,
    "resize_": _resize_,
    **{name + "_": _inplace_view(name) for name in ("squeeze", "unsqueeze", "t", "transpose", "swapdims",
                                                     "swapaxes", "as_strided")},
    "resize_as_": _resize_as_,
    "new_zeros": _filled_like("zeros"),
    "new_ones": _filled_like("ones"),
    "new_empty": _filled_like("empty"),
    "new_full": _new_full,
    "contiguous": lambda self, memory_format=None: FUNCTIONS["contiguous"](self, memory_format),
    "unfold": lambda self, dimension, size, step: FUNCTIONS["unfold"](self, dimension, size, step),
    "clip": lambda self, min=None, max=None: FUNCTIONS["clamp"](self, min, max),
    "clip_": lambda self, min=None, max=None: FUNCTIONS["clamp_"](self, min, max),
    "absolute": lambda self: FUNCTIONS["abs"](self),
    "negative": lambda self: FUNCTIONS["neg"](self),
    "multiply": lambda self, other: FUNCTIONS["mul"](self, other),
    "divide": lambda self, other, *, rounding_mode=None: FUNCTIONS["div"](self, other, rounding_mode=rounding_mode),
    "true_divide": lambda self, other: FUNCTIONS["div"](self, other),
    "subtract": lambda self, other, *, alpha=1: FUNCTIONS["sub"](self, other, alpha=alpha),
}


# -- operators -------------------------------------------------------------------------

def _reflected(name: str):
    def op(self: Tensor, other: Any) -> Any:
        left = _scalar_tensor_like(other, self, name == "div")
        if left is NotImplemented:
            return NotImplemented
        return FUNCTIONS[name](left, self)
    op.__name__ = f"__r{name}__"
    return op


def _binary(name: str):
    fn = FUNCTIONS[name]

    def op(self: Tensor, other: Any) -> Any:
        if not isinstance(other, (Tensor, bool, int, float, complex)):
            return NotImplemented
        return fn(self, other)
    op.__name__ = f"__{name}__"
    return op


def _inplace(name: str):
    fn = FUNCTIONS[name + "_"]

    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other)
    return op


def _pow_reflected(self: Tensor, other: Any) -> Any:
    left = _scalar_tensor_like(other, self)
    return NotImplemented if left is NotImplemented else FUNCTIONS["pow"](left, self)


def _invert(self: Tensor) -> Tensor:
    if self._dtype._category > _dtypes._INT:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return FUNCTIONS["bitwise_not"](self)


def _install_operators() -> None:
    pairs = {
        "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
        "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
        "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
    }
    for dunder, op in pairs.items():
        # The op function itself, not a wrapper: `a + b` is the hottest path there is.
        setattr(Tensor, f"__{dunder}__", FUNCTIONS[op])
        if op != "matmul":
            setattr(Tensor, f"__i{dunder}__", _inplace(op))
        commutative = op in ("add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor")
        setattr(Tensor, f"__r{dunder}__", FUNCTIONS[op] if commutative else _reflected(op))
    Tensor.__rmatmul__ = lambda self, other: FUNCTIONS["matmul"](other, self)
    Tensor.__rpow__ = _pow_reflected
    for dunder, op in {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}.items():
        setattr(Tensor, f"__{dunder}__", _binary(op))
    Tensor.__neg__ = FUNCTIONS["neg"]
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = FUNCTIONS["abs"]
    Tensor.__invert__ = _invert
    Tensor.__hash__ = object.__hash__
