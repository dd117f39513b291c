"""flambeau: a deep-learning framework with PyTorch's API, built from separately installed packages.

``import flambeau as fb`` gives the tensor library; other distributions add subpackages
(``flambeau.autograd``, ``flambeau.nn``, ...) and backends (``cpu``, ``cuda``, ...).
"""
from __future__ import annotations

from ._portions import extend_path as _extend_path

# Other distributions ship flambeau/nn, flambeau/optim...: find them in plain and editable installs.
__path__ = _extend_path(__path__, __name__)

from ._version import __version__  # noqa: E402

from . import _missing  # noqa: E402

_missing.install()

from ._device import device  # noqa: E402
from ._dtypes import (  # noqa: E402
    bfloat16, bool, can_cast, complex64, complex128, dtype, finfo, float16, float32, float64, get_default_dtype,
    iinfo, int8, int16, int32, int64, promote_types, result_type, set_default_dtype, uint8,
)
from ._size import Size  # noqa: E402
from ._tensor import Tensor  # noqa: E402
from ._creation import (  # noqa: E402
    arange, as_tensor, asarray, empty, empty_like, from_dlpack, from_numpy, full, full_like, ones, ones_like,
    tensor, zeros, zeros_like,
)
from .ops import get_default_device, set_default_device  # noqa: E402
from ._grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from . import ops, plugins, return_types  # noqa: E402

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is a flambeau Tensor."""
    return isinstance(obj, Tensor)


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` is an inference tensor (made inside :class:`inference_mode`)."""
    return input.is_inference()


def numel(input: Tensor) -> int:
    """The number of elements of ``input``."""
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def set_num_threads(n: int) -> None:
    """Set how many threads the CPU backend's kernels use."""
    import builtins  # `int` here is flambeau.int (int32)

    from .plugins import loaded_backend

    if not isinstance(n, builtins.int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    loaded_backend("cpu").set_num_threads(n)


def get_num_threads() -> int:
    """How many threads the CPU backend's kernels use."""
    from .plugins import loaded_backend

    return loaded_backend("cpu").get_num_threads()


def save(obj: object, f: object, pickle_module: object = None, pickle_protocol: object = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` to a safetensors file (never a pickle); see :func:`flambeau.serialization.save`."""
    from .serialization import save as _save

    _save(obj, f, pickle_module, pickle_protocol, _use_new_zipfile_serialization)  # type: ignore[arg-type]


def load(f: object, map_location: object = None, pickle_module: object = None, *, weights_only: bool | None = True,
         mmap: bool | None = None, **pickle_load_args: object) -> object:
    """Load what :func:`save` wrote (never unpickles); see :func:`flambeau.serialization.load`."""
    from .serialization import load as _load

    return _load(f, map_location, pickle_module, weights_only=weights_only, mmap=mmap,  # type: ignore[arg-type]
                 **pickle_load_args)


def __getattr__(name: str) -> object:
    # `fb.cuda` without importing it first, as `torch.cuda` is always there: the real module when
    # flambeau-backend-cuda is installed, else a stand-in whose is_available() is False.
    if name == "cuda":
        from ._cuda_absent import resolve

        module = globals()["cuda"] = resolve()
        return module
    # The repr's formatter and its options load at their first use (a tenth of the core's modules'
    # import time went to modules a program may never need).
    if name == "set_printoptions":
        from ._tensor_repr import set_printoptions

        globals()[name] = set_printoptions
        return set_printoptions
    # Namespaces of functions that wrap ops a program may never call, as torch.fft and
    # torch.special: loaded (and then kept as attributes) on first use.
    if name in _LAZY_SUBMODULES:
        import importlib  # not `from . import`: its attribute check would call this function again

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'flambeau' has no attribute '{name}'")


_LAZY_SUBMODULES = frozenset({"fft", "special"})


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES | {"cuda", "set_printoptions"})


from .plugins import _loader  # noqa: E402
from . import _late_bindings  # noqa: E402

# The few bindings that point up the layers, all in one module (see its docstring).
_late_bindings.bind()
# Plugins load last, so that none of them sees a half-initialised core.
_loader.load()
# Then the methods and functions made from the generated op functions: Tensor methods, fb.rand & co.
_late_bindings.install(__import__(__name__))
del _loader

# The module's own imports are not flambeau's API (`torch.annotations` does not exist either).
del annotations, _extend_path
