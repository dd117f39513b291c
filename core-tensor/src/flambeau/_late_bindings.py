"""The late bindings: the one place where a lower layer gets what a higher one defines.

core-tensor's modules stand in layers (core-tensor/README.md, "Layers"; checked by
``core-tensor/tests/test_import_layers.py``): foundations (dtypes, devices), the registry, the
Tensor, the dispatcher, the op declarations, the public namespaces. Each imports only from its
own layer or below. A few things point the other way; this module, in the top layer, binds them
by assignment, so that the lower modules never import upward:

1. :func:`bind`, at ``import flambeau`` before any plugin loads:

   - the registry's ``LOADER``: ``TABLES[device_type]`` loads a backend on its device type's first
     use, and loading runs plugin code that stands on the whole core;
   - ``flambeau.plugins``' loader functions (``plugins._LOADER_NAMES``): the package is imported
     low down, beside the registry, but its loader runs plugins;
   - the Tensor's methods that need the dispatcher layer (``_tensor.LATE_METHODS``): construction
     from data, ``repr``, ``to``/``type``, indexing, pickling, numpy's ``__array_wrap__``; and the
     shared-memory methods, whose :mod:`flambeau.multiprocessing` loads on their first call.

2. :func:`install`, once the plugins have loaded and the op functions exist: the Tensor's
   methods and operators and the ``flambeau`` functions made from them (``_methods`` and the
   ``_api_*`` modules, which wrap the generated functions in PyTorch's overloaded signatures).

The autograd engine is the one slot filled from outside core-tensor: core-autograd's plugin
hands it to ``flambeau.ops._dispatch.set_autograd_engine`` when it loads, which also gives the
Tensor (a layer below the dispatcher) its copy.
"""
from __future__ import annotations

from types import ModuleType

from . import _conversion, _creation, _indexing, plugins
from ._tensor import Tensor
from .ops import _registry
from .plugins import _loader

def tensor_repr(self: Tensor) -> str:
    """``repr(tensor)`` as PyTorch prints it (:func:`flambeau._tensor_repr.tensor_repr`).

    The formatter's module loads at the first repr: a program that never prints a tensor does
    not pay for it at ``import flambeau``.
    """
    from ._tensor_repr import tensor_repr as formatted

    return formatted(self)


def share_memory_(self: Tensor) -> Tensor:
    """Move the storage to shared memory, in place; a no-op if it is there already.

    Tensors in shared memory cross :mod:`flambeau.multiprocessing` queues and pipes without a
    copy, and writes in one process are seen by the others. Only CPU tensors can be shared.
    Views taken before the call keep the old memory: share a tensor first, then take views.
    """
    from .multiprocessing import _sharing  # on first use: `import flambeau` never loads it

    return _sharing.share_(self)


def is_shared(self: Tensor) -> bool:
    """Whether the storage lives in shared memory (see :meth:`share_memory_`)."""
    if self._device.type != "cpu":
        return False
    from .multiprocessing import _sharing

    return _sharing.is_shared(self)


#: Tensor methods defined in the dispatcher layer or above, by name (``_tensor.LATE_METHODS`` says where).
_TENSOR_METHODS = {
    "__new__": staticmethod(_creation.legacy_constructor),
    "__array_wrap__": _creation.array_wrap,
    "__reduce_ex__": _creation.tensor_reduce_ex,
    "new_tensor": _creation.new_tensor,
    "to": _conversion.tensor_to,
    "type": _conversion.tensor_type,
    "__getitem__": _indexing.getitem,
    "__setitem__": _indexing.setitem,
    "__repr__": tensor_repr,
    "share_memory_": share_memory_,
    "is_shared": is_shared,
}


def bind() -> None:
    """Bind what the registry and the Tensor need from above (before any plugin loads)."""
    _registry.LOADER = _loader
    for name in plugins._LOADER_NAMES:
        setattr(plugins, name, getattr(_loader, name))
    for name, method in _TENSOR_METHODS.items():
        setattr(Tensor, name, method)


def install(namespace: ModuleType) -> None:
    """Put the functions made from the op functions on ``namespace`` (``flambeau``) and the
    methods on Tensor (after the plugins have loaded)."""
    # Imported here: these modules read the generated op functions as they are imported. In order:
    # later ones may wrap what earlier ones installed.
    from . import (_api_index_ops, _api_linalg, _api_other, _api_pointwise, _api_random, _api_shape,
                   _api_statistics, _methods)

    for module in (_methods, _api_random, _api_shape, _api_index_ops, _api_pointwise, _api_statistics, _api_linalg,
                   _api_other):
        module.install(namespace)
