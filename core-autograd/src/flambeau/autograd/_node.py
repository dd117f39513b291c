"""Graph nodes (``grad_fn`` objects), saved tensors and hook handles.

A node is created per recorded op. ``next_functions`` holds one ``(node, output_nr)`` edge per
tensor input (``(None, 0)`` where that input does not require grad). Leaves are reached through
their ``AccumulateGrad`` node, which the leaf holds weakly so that a freed graph frees it too.
"""
from __future__ import annotations

import itertools
import sys
import threading
import weakref
from typing import Any, Callable

import numpy as np

import flambeau
from flambeau._layout import non_overlapping_and_dense
from flambeau._tensor import Tensor, wrap

from .grad_mode import ANOMALY, STATE

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `flambeau.no_grad()` instead of `flambeau.inference_mode()`."
)

STORAGE_BASE: Any = object()  # TensorMeta.diff_base when the differentiable base is ``_base`` itself


class TensorMeta:
    """Per-tensor autograd state kept in ``Tensor._autograd`` (only for tensors that need it)."""

    __slots__ = ("output_nr", "accumulator", "hooks", "post_hooks", "retains_grad", "view_version", "diff_base",
                 "__weakref__")

    def __init__(self, output_nr: int = 0) -> None:
        self.output_nr = output_nr
        self.view_version: int | None = None  # a view's version when its grad_fn was set
        # The tensor this one is a differentiable view of, when that is not its storage base
        # ``_base``: None for a ``detach()`` alias (it shares storage but starts a new history),
        # the alias for a view taken of such an alias.
        self.diff_base: Any = STORAGE_BASE
        self.accumulator: Any = None  # the leaf's AccumulateGrad
        self.hooks: dict[int, Callable] = {}
        self.post_hooks: dict[int, Callable] = {}
        self.retains_grad = False


def diff_base(t: Tensor) -> Tensor | None:
    """The tensor ``t`` is a differentiable view of (None when it is not one).

    ``_base`` says which storage ``t`` shares; autograd's question is whose history an in-place
    write through ``t`` changes. They differ for ``detach()`` aliases (a view for storage only,
    as in PyTorch) and the views taken of them.
    """
    b = t._base
    if b is None:
        return None
    m = t._autograd
    if m is None:
        return b
    d = m.diff_base
    return b if d is STORAGE_BASE else d


def meta_of(t: Tensor) -> TensorMeta:
    m = t._autograd
    if m is None:
        m = t._autograd = TensorMeta()
    return m


def output_nr(t: Tensor) -> int:
    m = t._autograd
    return 0 if m is None else m.output_nr


def alias(t: Tensor) -> Tensor:
    """A tensor sharing ``t``'s data and version counter, outside the graph."""
    a = wrap(t._data, t._dtype, t._device)
    a._version_counter = t._version_counter
    a._base = t._base
    return a


def type_string(t: Tensor) -> str:
    return f"[{t.type()} [{', '.join(str(s) for s in t._data.shape)}]]"


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved."""

    __slots__ = ("tensor", "version", "is_output", "output_nr")

    def __init__(self, t: Tensor, is_output: bool = False, output_nr: int = 0) -> None:
        counter = t._version_counter
        if len(counter) != 1:  # an inference tensor tracks no versions: the check below could not work
            raise RuntimeError(INFERENCE_SAVE_MESSAGE)
        self.version = counter[0]
        self.is_output = is_output
        self.output_nr = output_nr
        # An output is saved as an alias without grad_fn: saving the output itself would make a
        # reference cycle output -> grad_fn -> saved output.
        self.tensor = alias(t) if is_output else t

    def unpack(self, owner: "Node") -> Tensor:
        t = self.tensor
        if t is None:
            raise RuntimeError(FREED_MESSAGE)
        if t._version_counter[0] != self.version:
            fn = owner if self.is_output else t.grad_fn  # PyTorch names the tensor's current node
            which = f", which is output {self.output_nr if self.is_output else output_nr(t)} of {fn.name()}," \
                if fn is not None else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"{type_string(t)}{which} is at version {t._version}; expected version {self.version} instead. "
                "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
                "flambeau.autograd.set_detect_anomaly(True)."
            )
        if self.is_output and STATE.enabled:
            # create_graph: the output must be connected to the graph again (through its own node).
            out = alias(t)
            out._requires_grad = True
            out.grad_fn = owner
            if self.output_nr:
                out._autograd = TensorMeta(self.output_nr)
            return out
        return t


class RemovableHandle:
    """Returned by ``register_hook`` and friends; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, table: dict) -> None:
        self.id = next(self._ids)
        self._table = table

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def add_hook(table: dict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


class Node:
    """A node of the backward graph: the ``grad_fn`` of a tensor computed from tensors requiring grad."""

    # Hot fields are slots; rarely-set ones (hooks, anomaly traces) live in the instance dict with
    # class-level defaults, so that recording a node sets only what every node needs.
    __slots__ = ("next_functions", "_seq", "_in_meta", "__dict__", "__weakref__")
    _pre_hooks: dict | None = None
    _hooks: dict | None = None
    _tensor_hooks: dict | None = None  # output_nr -> {id: hook} (hooks of non-leaf tensors)
    _retained: dict | None = None  # output_nr -> weakref of a tensor that retains its grad
    _trace: Any = None
    _n_out = 1  # how many outputs the node's forward had (gradient slots it receives)
    _validated = False  # whether apply() checks its own gradients (else the engine does)

    def __init__(self, next_functions: tuple, in_meta: tuple) -> None:
        self.next_functions = next_functions
        self._in_meta = in_meta
        self._seq = next(_sequence)
        if ANOMALY[0]:
            self._record_trace()

    def _record_trace(self) -> None:
        import traceback

        self._trace = traceback.format_stack()[:-5]

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, grads: list) -> list:
        """Gradients for each edge from the gradients of each output."""
        raise RuntimeError(f"{self.name()} has no backward")

    def release(self) -> None:
        """Free what was saved for backward (done after backward unless the graph is retained)."""

    def __call__(self, *grads: Any) -> Any:
        with_grads = self.apply(list(grads))
        return with_grads[0] if len(with_grads) == 1 else tuple(with_grads)

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients; it may return
        replacement ``grad_inputs``."""
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return replacement ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, nr: int, fn: Callable) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        return add_hook(self._tensor_hooks.setdefault(nr, {}), fn)


class AccumulateGrad(Node):
    """The node of a leaf: adds the gradient that reaches it into ``variable.grad``.

    The leaf owns this node and the node refers back to it weakly, so that there is no
    reference cycle and the node is made once per leaf (not once per graph).
    """

    __slots__ = ("_variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__((), ())
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> Tensor:
        return self._variable()

    def accumulate(self, grad: Tensor, create_graph: bool, stealable: bool = False) -> None:
        """Add ``grad`` into the leaf's ``.grad``.

        ``stealable``: the caller holds the only references to ``grad`` it knows of (the engine's
        final write); ``grad`` then becomes ``.grad`` itself instead of a copy when nothing else can
        see it (see :func:`_stolen`), as PyTorch's AccumulateGrad steals a gradient nobody else
        holds. On a large parameter the copy cost as much as the backward kernel that made it.
        """
        var = self._variable()
        if var is None:  # the leaf is gone: nobody can read its gradient
            return
        meta = var._autograd
        # Several threads may run backward into this leaf at once: the read-modify-write of .grad
        # (the in-place add runs with the GIL released) must not interleave with another's.
        with grad_lock(var):
            old = var._grad
            if old is None:
                if create_graph:
                    new = grad if grad._base is None and grad._requires_grad else grad.clone()
                else:
                    new = _stolen(grad, var) if stealable else None
                    if new is None:
                        new = _detached_copy(grad, var)
                var._grad = new
            elif create_graph or old._requires_grad:
                var._grad = old + grad
            else:
                old.add_(grad)
        if meta is not None and meta.post_hooks:
            for hook in list(meta.post_hooks.values()):
                hook(var)


# Striped locks for accumulating into ``.grad``: one per tensor would need a lock made race-free
# itself (the first accumulation is the one that creates ``.grad``); 64 stripes keyed by the
# tensor's identity serialise only the rare threads that hit the same stripe.
_GRAD_LOCKS = tuple(threading.Lock() for _ in range(64))


def grad_lock(t: Tensor) -> threading.Lock:
    """The lock that guards accumulation into ``t.grad``."""
    return _GRAD_LOCKS[(id(t) >> 4) & 63]


def accumulate_retained(t: Tensor, g: Tensor) -> None:
    """Add ``g`` into the ``.grad`` of the non-leaf ``t`` that retains its gradient."""
    with grad_lock(t):
        old = t._grad
        t._grad = g if old is None else old + g


#: References to a gradient the engine's final write holds when it calls ``accumulate``: its local
#: variable and ``accumulate``'s parameter (test_accumulate_grad_steal.py fails if the engine starts
#: holding one more, because nothing is stolen then).
_ENGINE_REFS = 2


def _stolen(g: Tensor, var: Tensor) -> Tensor | None:
    """``g`` as ``var``'s new ``.grad`` without a copy, or None when a copy is needed.

    Only a plain, dense gradient laid out like ``var`` that nothing else can reach is kept: no
    other reference to the tensor, no alias sharing its version counter (views and ``detach``
    share it), no numpy array reaching its memory (``from_numpy``). A view of a base that only
    this view reaches (a reduction's result reshaped, say) is kept as a fresh tensor on the same
    memory, so that ``.grad`` never has a ``_base``. Writing into ``var.grad`` later is then seen by
    nobody else, which is what makes skipping the copy safe (PyTorch's AccumulateGrad checks its
    tensor's use count the same way).
    """
    # sys.getrefcount counts its own argument, and this frame's parameter `g`: + 2
    if (g._requires_grad or g.grad_fn is not None or g._conj or sys.getrefcount(g) > _ENGINE_REFS + 2
            or g._dtype is not var._dtype or g._device != var._device
            or not g.is_contiguous() or not var.is_contiguous()):
        return None
    base = g._base
    data = g._data
    if base is None:
        if sys.getrefcount(g._version_counter) > 2:  # g's slot + the argument
            return None
        if type(data) is np.ndarray:
            owner = data.base
            if owner is None:
                return g if sys.getrefcount(data) <= 3 else None  # g's slot, `data`, the argument
            # a reshape of a fresh buffer: the buffer reachable from this array only
            if type(owner) is not np.ndarray or owner.base is not None or sys.getrefcount(owner) > 3:
                return None
        return g
    # g's `_base` slot, `base`, the argument; the version counter: base's slot, g's slot, the argument
    if (base._base is not None or sys.getrefcount(base) > 3 or base._conj
            or sys.getrefcount(g._version_counter) > 3):
        return None
    if type(data) is np.ndarray:
        owner = data.base
        # reached from g's array, `owner`, the argument, and base's array (itself or a view of it)
        if type(owner) is not np.ndarray or owner.base is not None or sys.getrefcount(owner) > 4:
            return None
    return wrap(data, g._dtype, g._device)


def _detached_copy(g: Tensor, like: Tensor | None = None) -> Tensor:
    """A copy of ``g`` outside the graph; laid out like ``like`` (a leaf's ``.grad``) where ``like``
    is dense and non-overlapping, as PyTorch's gradient layout contract asks (a transposed
    parameter gets a transposed gradient, so ``param.add_(grad)`` runs on matching strides)."""
    prev = STATE.enabled
    STATE.enabled = False
    try:
        if (like is not None and like.shape == g.shape and g.stride() != like.stride()
                and non_overlapping_and_dense(tuple(like.shape), like.stride())):
            c = flambeau.empty_strided(like.shape, like.stride(), dtype=g.dtype, device=g.device)
            c.copy_(g)
        else:
            c = g.clone()
    finally:
        STATE.enabled = prev
    c._requires_grad = False
    c.grad_fn = None
    return c


def accumulator(leaf: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (one per leaf)."""
    meta = leaf._autograd
    if meta is None:
        meta = leaf._autograd = TensorMeta()
    acc = meta.accumulator
    if acc is None:
        acc = meta.accumulator = AccumulateGrad(leaf)
    return acc


def refresh_view(t: Tensor) -> None:
    """Give a view whose storage was written in place since its ``grad_fn`` was set (through its
    base or another view) the history "a strided view of the base as it is now"."""
    m = t._autograd
    if m is None or m.view_version is None or m.view_version == t._version_counter[0]:
        return
    base = diff_base(t)
    m.view_version = t._version_counter[0]
    if base is not None and base._requires_grad:
        from ._graph import view_of_base

        view_of_base(base, t)


def edge(t: Tensor) -> tuple:
    if t._base is not None:
        refresh_view(t)
    fn = t.grad_fn
    if fn is not None:
        m = t._autograd
        return (fn, 0 if m is None else m.output_nr)
    return (accumulator(t), 0)


NO_EDGE = (None, 0)


def gradient_edge(t: Any) -> tuple:
    """The edge a gradient for ``t`` flows into (``(None, 0)`` when it does not require grad)."""
    if isinstance(t, Tensor) and t._requires_grad:
        return edge(t)
    return NO_EDGE
