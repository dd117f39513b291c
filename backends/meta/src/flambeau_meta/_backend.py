"""The ``meta`` Backend: allocation without memory, kernels without arithmetic."""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

import flambeau
from flambeau.ops import declarations
from flambeau.plugins import Backend

from . import _views
from ._array import NO_DATA, MetaArray

_ALL_DTYPES = frozenset((flambeau.bool, flambeau.uint8, flambeau.int8, flambeau.int16, flambeau.int32, flambeau.int64,
                         flambeau.float16, flambeau.bfloat16, flambeau.float32, flambeau.float64, flambeau.complex64,
                         flambeau.complex128))


def _no_op(*args: Any, out: Any = None) -> None:
    """Every compute and factory op: the dispatcher already allocated ``out`` with the right
    shape and dtype (from the op's meta function); there is nothing to compute."""


class MetaBackend(Backend):
    """Tensors that have a shape, strides, a dtype and a device, and no elements.

    Useful to trace shapes through a model, to check a program's shapes before running it,
    and as the smallest complete example of a flambeau backend.
    """

    name = "meta"
    priority = -1  # below any backend that computes, should the core ever choose between them
    dtypes = _ALL_DTYPES

    #: For the conformance kit (``flambeau.testing``): check shapes, dtypes and errors only.
    computes_data = False
    #: Tests of the kit expected to fail on this backend, by key (none: it passes its part).
    conformance_xfail: Mapping[str, str] = {}

    # -- memory: metadata only ----------------------------------------------------------
    def empty(self, shape: tuple[int, ...], dtype: flambeau.dtype, device: Any) -> MetaArray:
        return MetaArray(shape, dtype.numpy_dtype)

    def full(self, shape: tuple[int, ...], fill_value: Any, dtype: flambeau.dtype, device: Any) -> MetaArray:
        return self.empty(shape, dtype, device)

    def fill_(self, native: MetaArray, value: Any) -> None:
        pass

    def from_numpy(self, array: np.ndarray, device: Any) -> MetaArray:
        return MetaArray(array.shape, array.dtype)

    def to_numpy(self, native: MetaArray) -> np.ndarray:
        raise NotImplementedError(NO_DATA)

    def copy_(self, dst: MetaArray, src: MetaArray) -> None:
        pass

    def storage_offset(self, native: MetaArray) -> int:
        return native.offset

    def storage_numel(self, native: MetaArray) -> int:
        return native.storage_size

    def data_ptr(self, native: MetaArray) -> int:
        return 0

    # -- kernels ------------------------------------------------------------------------
    def kernels(self) -> Mapping[str, Callable[..., Any]]:
        """A no-op for every compute and factory op declared by any installed package, and
        the view kernels above. Called once, when the backend loads: the table then covers
        ops that packages installed later declare the next time flambeau starts."""
        table: dict[str, Callable[..., Any]] = {}
        for name, decl in declarations().items():
            if decl.kind in ("compute", "factory"):
                table[name] = _no_op
            elif decl.kind == "view" and name in _views.KERNELS:
                table[name] = _views.KERNELS[name]
        # Dynamic ops (output shapes that depend on values, like nonzero) get no kernel:
        # calling one on a meta tensor raises flambeau's NotImplementedError, as PyTorch does.
        return table
