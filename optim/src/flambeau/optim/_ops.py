"""flambeau-optim's op plugin (entry point ``flambeau: optim``): one multi-tensor update op per algorithm.

Each op takes lists of tensors (parameters, gradients, state) and hyperparameters, and updates the
tensors in place; it returns nothing. Its composite is the algorithm's single-tensor loop written
with flambeau ops, so every backend runs it; a backend may register a fused kernel under the same
name (the CPU backend does for ``optim_sgd``, ``optim_adam``, ``optim_adagrad``, ``optim_rmsprop``).
Kernels get the backends' native arrays in the same order, and also update them in place.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from flambeau.ops import DYNAMIC, OpDecl
from flambeau.ops._registry import code_parameters
from flambeau.plugins import hookimpl

from . import adadelta, adafactor, adagrad, adam, adamax, asgd, nadam, radam, rmsprop, rprop, sgd  # noqa: F401
from ._functional import COMPOSITES, check_lengths

#: op name -> how many leading parameters are tensor lists.
_TENSOR_LISTS = {
    "optim_sgd": 3, "optim_adam": 6, "optim_adamax": 5, "optim_nadam": 6, "optim_radam": 5,
    "optim_adadelta": 5, "optim_adagrad": 4, "optim_rmsprop": 6, "optim_rprop": 5, "optim_asgd": 6,
    "optim_adafactor": 6,
}


def _signature(fn: Callable[..., Any], n_lists: int) -> str:
    # Read from the code object when it says everything (~1 us against ~25 for inspect's, 11 ops
    # at every `import flambeau`).
    fast = code_parameters(fn)
    names = fast[0] if fast is not None and not (fast[1] or fast[2]) else list(inspect.signature(fn).parameters)
    return "(" + ", ".join(f"{n}: TensorList" if i < n_lists else n for i, n in enumerate(names)) + ")"


def _meta(n_lists: int, check: bool) -> Callable[..., Any]:
    def meta(*args: Any) -> None:
        if check:
            check_lengths(args[0], *args[1:n_lists])
        elif len(args[1]) != len(args[0]):
            raise ValueError(f"expected {len(args[0])} gradients, got {len(args[1])}")

    return meta


def declarations() -> list[OpDecl]:
    decls = []
    for name, n_lists in _TENSOR_LISTS.items():
        fn = COMPOSITES[name]
        meta = _meta(n_lists, check=name != "optim_adafactor")
        decls.append(OpDecl(
            name, _signature(fn, n_lists), meta, kind=DYNAMIC,
            composite=fn, method=False, export=False, differentiable=False,
            doc=f"In-place multi-tensor update of {name[len('optim_'):]} (flambeau-optim); returns ().",
        ))
    return decls


@hookimpl
def flambeau_declare_ops() -> list[OpDecl]:
    return declarations()
