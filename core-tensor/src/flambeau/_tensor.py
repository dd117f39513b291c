"""``flambeau.Tensor``: a backend's native array with its dtype, device and autograd fields.

Tensor holds no maths of its own: its methods and operators are the generated op functions,
attached when the op registry loads (``flambeau.plugins._loader``). It stands below the
dispatcher, so the few of its own methods that need the layers above (construction from data,
``repr``, ``to``, indexing, pickling) are installed by ``flambeau._late_bindings``: see
:data:`LATE_METHODS`.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from . import _dtypes
from ._device import device as _device
from ._grad_mode import INFERENCE_THREADS as _INFERENCE_THREADS
from ._grad_mode import new_version_counter as _new_version_counter
from ._layout import contiguous_strides, format_name, is_contiguous_as
from ._size import Size, make_size

_AUTOGRAD_MISSING = (
    "autograd is not installed: install flambeau-core-autograd (or the meta-package flambeau) "
    "to use requires_grad and backward()"
)


class Tensor:
    """A multi-dimensional array on a device, with PyTorch's semantics.

    Create tensors with :func:`flambeau.tensor`, :func:`flambeau.zeros` and the other
    creation functions rather than with this class.
    """

    # `_conj`: the conjugate bit. A conjugated view shares its base's storage (unconjugated) and
    # reads as its conjugate; the dispatcher resolves it before any kernel but a view's sees it.
    __slots__ = ("_data", "_dtype", "_device", "_version_counter", "_base", "_requires_grad", "_grad", "grad_fn",
                 "_autograd", "_conj", "__weakref__")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for hook in SUBCLASS_HOOKS:  # flambeau.multiprocessing registers its pickling reducers here
            hook(cls)

    # -- metadata -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return make_size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the length of one dimension."""
        if dim is None:
            return make_size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtypes.dtype:
        return self._dtype

    @property
    def device(self) -> _device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return math.prod(self._data.shape)

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._dtype.itemsize * self.numel()

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements, as PyTorch counts them."""
        item = self._dtype.itemsize
        data = self._data
        strides = tuple(s // item for s in data.strides)
        if data.size == 0 and strides and not any(strides):
            # numpy gives a freshly allocated empty array all-zero strides; PyTorch reports the
            # row-major strides of its shape, each size counted as at least 1: (0, 2) -> (2, 1)
            strides = contiguous_strides(data.shape)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    # TABLES (the registry, a layer below) is imported inside the methods that read it: importing any
    # flambeau.ops module runs flambeau/ops/__init__.py first, which imports the dispatcher above.
    def storage_offset(self) -> int:
        from .ops._registry import TABLES

        return TABLES[self._device.type].backend.storage_offset(self._data)

    def _storage_numel(self) -> int:
        from .ops._registry import TABLES

        return TABLES[self._device.type].backend.storage_numel(self._data)

    def data_ptr(self) -> int:
        from .ops._registry import TABLES

        return TABLES[self._device.type].backend.data_ptr(self._data)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements are laid out densely in the order ``memory_format`` names
        (``flambeau.contiguous_format``, the default, is row-major; ``flambeau.channels_last``
        NHWC for 4-D tensors; ``flambeau.channels_last_3d`` NDHWC for 5-D ones)."""
        if memory_format is not None:
            name = format_name(memory_format, "is_contiguous", default="contiguous_format")
            if name != "preserve_format":  # PyTorch reads preserve_format as row-major here
                return is_contiguous_as(self._data.shape, self.stride(), name)
        if 0 in self._data.shape:
            return True  # as PyTorch: an empty tensor is contiguous whatever its strides (numpy gives 0s)
        expected = 1
        for size, stride in zip(reversed(self._data.shape), reversed(self.stride())):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def get_device(self) -> int:
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    @property
    def T(self) -> "Tensor":
        return self.permute(*range(self.ndim - 1, -1, -1))

    @property
    def mT(self) -> "Tensor":
        if self.ndim < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def H(self) -> "Tensor":
        return self.T.conj() if self._dtype.is_complex else self.T

    @property
    def mH(self) -> "Tensor":
        return self.mT.conj() if self._dtype.is_complex else self.mT

    @property
    def _version(self) -> int:
        """How many times this tensor's data (shared with its views) has been written in place,
        an int as in PyTorch; the counter itself is a one-element list its views share."""
        if len(self._version_counter) != 1:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made inside ``flambeau.inference_mode()`` (or a
        view of one). Inference tensors cannot be saved for backward, nor written in place
        outside inference mode."""
        return len(self._version_counter) != 1

    # -- autograd fields (core-autograd fills in the behaviour) ---------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set whether autograd records operations on this tensor (a leaf)."""
        engine = autograd_engine
        if engine is None:
            if requires_grad:
                raise RuntimeError(_AUTOGRAD_MISSING)
            self._requires_grad = False
            return self
        engine.set_requires_grad(self, bool(requires_grad))
        return self

    # `grad` is a property so that core-autograd can replace it (warning on non-leaf access,
    # checking assigned shapes) without a per-op cost: the dispatcher never touches it.
    @property
    def grad(self) -> "Tensor | None":
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:
        """Compute the gradient of this tensor with respect to graph leaves (needs flambeau-core-autograd)."""
        engine = autograd_engine
        if engine is None:
            raise RuntimeError(_AUTOGRAD_MISSING)
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> "Tensor":
        """A new tensor sharing this one's data, outside the autograd graph."""
        out = wrap(self._data, self._dtype, self._device)
        out._version_counter = self._version_counter
        out._base = self._base
        out._conj = self._conj
        return out

    def detach_(self) -> "Tensor":
        if self._base is not None and self._requires_grad and autograd_engine is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> "Tensor":
        # Like PyTorch's `.data`: shares storage but not the version counter, so that changes made
        # through it are invisible to autograd's saved-tensor checks.
        out = self.detach()
        out._version_counter = [0] + self._version_counter[1:]  # an inference tensor's .data is one too
        return out

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data, self._dtype, self._device = value._data, value._dtype, value._device
        self._conj = value._conj

    # -- host interop ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array; on the CPU it shares memory with the tensor.

        Each call returns a new array object viewing the tensor's memory, never the tensor's own
        storage object: assigning its ``shape``, ``dtype`` or ``strides``, ``resize`` or
        ``setflags`` change that view only, as with PyTorch.

        Args:
            force: copy to the host (and drop the autograd fields) when the tensor is on
                another device or requires grad, instead of raising.
        """
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._conj:
            if not force:
                raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                                   "Use tensor.resolve_conj().numpy() instead.")
            return self.resolve_conj().numpy(force=True)
        if self._device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._device.type} device type tensor to numpy. "
                    "Use Tensor.cpu() to copy the tensor to host memory first."
                )
            return self.cpu().numpy(force=True)
        return self._data.view()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._conj:  # as numpy(), as PyTorch's
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                               "Use tensor.resolve_conj().numpy() instead.")
        if self._device.type != "cpu":  # never a silent copy from a device, as PyTorch's
            raise TypeError(f"can't convert {self._device.type} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        host = self._host()
        if host is self._data:  # the CPU backend's storage itself: hand out a view of it, never the object
            host = host.view()
        if dtype is not None:
            host = host.astype(dtype, copy=False)
        return host.copy() if copy else host

    def _host(self) -> np.ndarray:
        """The values as a host numpy array (the conjugated values of a conjugated view)."""
        from .ops._registry import TABLES

        host = TABLES[self._device.type].backend.to_numpy(self._data)
        return np.conjugate(host) if self._conj else host

    def tolist(self) -> Any:
        host = self._host()
        if self._dtype is _dtypes.bfloat16:
            host = host.astype(np.float32)
        return host.tolist()

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        host = self._host()
        if self._dtype is _dtypes.bfloat16:
            host = host.astype(np.float32)
        return host.reshape(()).item()

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self._conj:
            raise RuntimeError("Can't export tensors with the conjugate bit set")
        if stream is None and not kwargs:
            return self._data.__dlpack__()
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict:
        """Numba/CuPy's CUDA array interface, for tensors whose backend's arrays offer one (``cuda``);
        an AttributeError elsewhere, so ``hasattr`` tells consumers to use another protocol."""
        native = getattr(self._data, "__cuda_array_interface__", None)
        if native is None:
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self._device.type}")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable that doesn't "
                               "require grad.")
        return native

    # -- Python protocol ------------------------------------------------------------
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element: Any) -> bool:
        """``element in tensor``: whether any element equals ``element`` (a number or a tensor)."""
        if isinstance(element, (Tensor, bool, int, float, complex)):
            return bool((self == element).any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
        )

    def __bool__(self) -> bool:
        if self.numel() != 1:
            what = "no values" if self.numel() == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self.item())

    def _scalar(self) -> Any:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self._dtype._category > _dtypes._INT or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__
    # numpy defers to Tensor's reflected operators (``np.float64(2) * t`` is a Tensor, as in PyTorch).
    __array_priority__ = 1000

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        result = self.clone().detach()
        if self._requires_grad:
            result.requires_grad_(True)
        if self.grad is not None:
            result.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result

    # -- conversions ----------------------------------------------------------------
    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> "Tensor":
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device),
                       non_blocking=non_blocking)

    def float(self) -> "Tensor":
        return self.to(_dtypes.float32)

    def double(self) -> "Tensor":
        return self.to(_dtypes.float64)

    def half(self) -> "Tensor":
        return self.to(_dtypes.float16)

    def bfloat16(self) -> "Tensor":
        return self.to(_dtypes.bfloat16)

    def long(self) -> "Tensor":
        return self.to(_dtypes.int64)

    def int(self) -> "Tensor":
        return self.to(_dtypes.int32)

    def short(self) -> "Tensor":
        return self.to(_dtypes.int16)

    def char(self) -> "Tensor":
        return self.to(_dtypes.int8)

    def byte(self) -> "Tensor":
        return self.to(_dtypes.uint8)

    def bool(self) -> "Tensor":
        return self.to(_dtypes.bool)

    def cfloat(self) -> "Tensor":
        return self.to(_dtypes.complex64)

    def cdouble(self) -> "Tensor":
        return self.to(_dtypes.complex128)

    def type_as(self, other: "Tensor") -> "Tensor":
        return self.to(other._dtype)

#: Methods of Tensor that need a higher layer (creation, conversion, indexing, repr), by name with
#: the module that defines them; ``flambeau._late_bindings.bind`` installs them before any plugin loads.
LATE_METHODS = {
    "__new__": "flambeau._creation.legacy_constructor (PyTorch's legacy constructor, Tensor(2, 3))",
    "__array_wrap__": "flambeau._creation.array_wrap",
    "__reduce_ex__": "flambeau._creation.tensor_reduce_ex",
    "new_tensor": "flambeau._creation.new_tensor",
    "to": "flambeau._conversion.tensor_to",
    "type": "flambeau._conversion.tensor_type",
    "__getitem__": "flambeau._indexing.getitem",
    "__setitem__": "flambeau._indexing.setitem",
    "__repr__": "flambeau._late_bindings.tensor_repr (loads flambeau._tensor_repr at the first repr)",
    "share_memory_": "flambeau._late_bindings.share_memory_",
    "is_shared": "flambeau._late_bindings.is_shared",
}

#: The autograd engine, or None without flambeau-core-autograd: the dispatcher's
#: ``set_autograd_engine`` fills it (with the dispatcher's own hot-path copy).
autograd_engine: Any = None

_new = object.__new__

#: Called with every subclass of Tensor as it is defined (flambeau.multiprocessing's reducers).
SUBCLASS_HOOKS: list = []


def wrap(native: Any, dtype: _dtypes.dtype, device: _device) -> Tensor:
    """A new Tensor around a backend's native array (the dispatcher's result path).

    The generated op functions write these same assignments out inline (``ops/_codegen.py``);
    ``core-tensor/tests/test_dispatch_fastpath.py`` checks the two agree slot for slot.
    """
    t = _new(Tensor)
    t._data = native
    t._dtype = dtype
    t._device = device
    t._version_counter = [0] if not _INFERENCE_THREADS[0] else _new_version_counter()
    t._base = None
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._autograd = None
    t._conj = False
    return t


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative, or PyTorch's IndexError."""
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    if dim < low or dim > high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % ndim if ndim else 0
