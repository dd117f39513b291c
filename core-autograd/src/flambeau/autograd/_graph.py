"""Recording: the dispatcher hands each op whose inputs require grad to ``record``.

One ``OpNode`` per op: edges to the inputs' nodes, only the tensors its formula reads (saved
with their versions), the inputs' shapes and dtypes (to reduce broadcast gradients). In-place
ops move the written tensor's history onto the new node; on a view they rebase the base's
history through a ``CopySlices`` node.
"""
from __future__ import annotations

import weakref
from typing import Any

from flambeau._dtypes import _FLOAT
from flambeau._tensor import Tensor
from flambeau.ops._decl import OPTIONAL_TENSOR_LIST, TENSOR_LIST, tensor_kind
from flambeau.ops._registry import GRADIENTS, OPS

from ._formulas import DeferredFormula
from ._node import (NO_EDGE, STORAGE_BASE, Node, SavedTensor, TensorMeta, _sequence, accumulator, diff_base, edge,
                    refresh_view)
from .formula import Formula
from .grad_mode import ANOMALY, STATE

_new = object.__new__

_NAMES = {"basic_index": "Slice", "max_dim": "Max", "min_dim": "Min", "to_dtype": "ToCopy", "copy": "Copy",
          "index_put": "IndexPut", "matrix_exp": "LinalgMatrixExp"}


def _camel(name: str) -> str:
    return _NAMES.get(name) or "".join(part[:1].upper() + part[1:] for part in name.split("_"))


class OpInfo:
    """What recording needs to know about one op, computed once."""

    __slots__ = ("op", "cls", "formula", "tensor_params", "list_params", "save_idx", "save_result", "edge_of_arg",
                 "plan", "keep", "fast", "nondiff")

    def __init__(self, op: Any) -> None:
        self.op = op
        f = GRADIENTS.get(op.name)
        if type(f) is DeferredFormula:  # core-autograd's own formulas load with their first record
            f = f.resolve()
        if f is not None and not isinstance(f, Formula):
            f = Formula(f, [p.name for p in op.parameters if tensor_kind(p)], True)
        self.formula = f
        params = op.parameters
        self.tensor_params = tuple(i for i, p in enumerate(params) if tensor_kind(p))
        self.list_params = any(tensor_kind(params[i]) in (TENSOR_LIST, OPTIONAL_TENSOR_LIST)
                               for i in self.tensor_params)
        names = [p.name for p in params]
        self.save_idx = frozenset(names.index(n) for n in f.save) if f is not None else frozenset()
        self.save_result = bool(f is not None and f.result)
        self.edge_of_arg = {a: k for k, a in enumerate(self.tensor_params)}
        save_if = {names.index(k): tuple(names.index(n) for n in v) for k, v in (f.save_if or {}).items()} \
            if f is not None else {}
        self.plan = tuple((a, a in self.save_idx, tuple(self.edge_of_arg[c] for c in save_if.get(a, ())))
                          for a in self.tensor_params)
        self.keep = f.keep if f is not None else None
        self.nondiff = f.nondiff_outputs if f is not None else frozenset()
        suffix = "Backwards" if op.name == "copy" else "Backward0"
        self.cls = type(_camel(op.name) + suffix, (OpNode,), {"__slots__": ()})
        from ._fastpath import build

        self.fast = build(self)


_INFO: dict[str, OpInfo] = {}


def info_for(op: Any) -> OpInfo:
    info = _INFO.get(op.name)
    if info is None or info.op is not op:
        info = _INFO[op.name] = OpInfo(op)
        op._autograd_info = info  # read back on the per-op path without a dict lookup
    return info


class OpNode(Node):
    """The node of one recorded op; its backward is the op's registered formula."""

    _validated = True  # apply() already checks its gradients against the inputs

    __slots__ = ("_info", "_saved", "_result", "_n_out")
    # Set only on some nodes or during backward: class defaults, instance dict when set.
    _list_lens: list | None = None
    args: Any = None
    result: Any = None
    _freed = False
    kept: Any = None

    def name(self) -> str:
        return type(self).__name__

    def needs(self, i: int) -> bool:
        """Whether argument ``i`` needs a gradient."""
        if self._list_lens is None:
            k = self._info.edge_of_arg.get(i)
            return k is not None and self.next_functions[k][0] is not None
        return any(e[0] is not None for e in self._edges_of(i))

    @property
    def needs_input_grad(self) -> tuple:
        return tuple(self.needs(i) for i in range(len(self._info.op.parameters)))

    def _edges_of(self, i: int) -> list:
        start = 0
        for a, n in zip(self._info.tensor_params, self._list_lens):
            if a == i:
                return list(self.next_functions[start:start + n])
            start += n
        return []

    def shape(self, i: int) -> tuple:
        return self._meta_of(i)[0]

    def dtype(self, i: int) -> Any:
        return self._meta_of(i)[1]

    def _meta_of(self, i: int) -> tuple:
        if self._list_lens is None:
            return self._in_meta[self._info.edge_of_arg[i]]
        start = 0
        for a, n in zip(self._info.tensor_params, self._list_lens):
            if a == i:
                if n != 1 or self._in_meta[start] is None:
                    raise ValueError("shape()/dtype() of a tensor-list argument: read it from the saved tensors")
                return self._in_meta[start]
            start += n
        raise ValueError(f"argument {i} is not a tensor argument")

    @property
    def saved_tensors(self) -> tuple:
        return tuple(s.unpack(self) for s in self._all_saved())

    def _all_saved(self) -> list:
        out = []
        for s in self._saved:
            if type(s) is SavedTensor:
                out.append(s)
            elif type(s) is list:
                out.extend(x for x in s if type(x) is SavedTensor)
        r = self._result
        if type(r) is SavedTensor:
            out.append(r)
        elif type(r) is tuple:
            out.extend(x for x in r if type(x) is SavedTensor)
        return out

    def apply(self, grads: list) -> list:
        info = self._info
        f = info.formula
        if f is None:
            raise RuntimeError(f"the derivative for '{info.op.name}' is not implemented.")
        if self._freed and (info.save_idx or info.save_result):
            raise RuntimeError(_node_freed())
        lens = self._list_lens
        if lens is None:
            args = [s.unpack(self) if s.__class__ is SavedTensor else s for s in self._saved]
        else:
            args = [s.unpack(self) if s.__class__ is SavedTensor else
                    [x.unpack(self) if x.__class__ is SavedTensor else x for x in s] if s.__class__ is list else s
                    for s in self._saved]
        r = self._result
        if r is not None:
            if r.__class__ is SavedTensor:
                r = r.unpack(self)
            else:
                r = tuple(x.unpack(self) if x.__class__ is SavedTensor else None for x in r)
            self.result = r
        self.args = args
        try:
            out = f.fn(self, grads[0] if self._n_out == 1 else grads)
        finally:
            self.args = None
            if r is not None:
                self.result = None
        if out is None or out.__class__ is Tensor or isinstance(out, Tensor):
            out = (out,)
        n = len(out)
        if lens is None:
            # Checked here rather than by the engine's generic validate: same rules, one loop.
            edges = self.next_functions
            metas = self._in_meta
            result = []
            for k, a in enumerate(info.tensor_params):
                g = out[a] if a < n else None
                if g is not None:
                    if edges[k][0] is None:
                        g = None
                    else:
                        if g.__class__ is not Tensor and not isinstance(g, Tensor):
                            raise TypeError(f"function {self.name()} returned a gradient of type "
                                            f"{type(g).__name__} at index {k}, expected a Tensor or None")
                        meta = metas[k]
                        if meta is not None and (g._data.shape != meta[0] or g._dtype is not meta[1]):
                            from ._engine import _conform

                            g = _conform(self, k, g, meta)
                result.append(g)
            return result
        per_edge = []
        for a, k in zip(info.tensor_params, lens):
            g = out[a] if a < n else None
            if isinstance(g, (list, tuple)):
                per_edge.extend(g)
            else:
                per_edge.extend([g] + [None] * (k - 1))
        return per_edge

    def release(self) -> None:
        self._freed = True
        for s in self._saved:
            if s.__class__ is SavedTensor:
                s.tensor = None
            elif s.__class__ is list:
                for x in s:
                    if x.__class__ is SavedTensor:
                        x.tensor = None
        r = self._result
        if r is not None:
            if r.__class__ is SavedTensor:
                r.tensor = None
            else:
                for x in r:
                    x.tensor = None


def _node_freed() -> str:
    from ._node import FREED_MESSAGE

    return FREED_MESSAGE




def differentiable_dtype(dt: Any) -> bool:
    return dt.is_floating_point or dt.is_complex


def _saved_outputs(info: OpInfo, outputs: tuple) -> tuple:
    """Several outputs saved for the formula: the differentiable ones as outputs of the node
    (aliases, reconnected under create_graph), the others as plain tensors (they have no grad_fn)."""
    nondiff = info.nondiff
    return tuple(SavedTensor(o, True, i) if differentiable_dtype(o._dtype) and i not in nondiff else SavedTensor(o)
                 for i, o in enumerate(outputs))


class Recorder:
    """The recording half of the engine (``record``, ``before_write``, ``record_device_copy``)."""

    def record(self, op: Any, args: tuple, outputs: tuple, mode: str, pre: Any) -> None:
        if not STATE.enabled:
            return
        try:
            info = op._autograd_info
        except AttributeError:
            info = info_for(op)
        if mode == "inplace":
            return self._record_inplace(info, args, outputs[0], pre)
        fast = info.fast
        if fast is not None and len(outputs) == 1 and pre is None:
            fast(args, outputs)
            if mode == "view":
                self._mark_views(args, outputs)
            return
        node = self._make_node(info, args, outputs, pre)
        if len(outputs) == 1:
            r = outputs[0]
            if r._dtype._category >= _FLOAT:  # floating point or complex: differentiable
                r._requires_grad = True
                r.grad_fn = node
            return
        nr = 0
        nondiff = info.nondiff
        for r in outputs:
            if (r._dtype.is_floating_point or r._dtype.is_complex) and nr not in nondiff:
                r._requires_grad = True
                r.grad_fn = node
                if nr:
                    r._autograd = TensorMeta(nr)
            nr += 1
        if mode == "view":
            self._mark_views(args, outputs)

    def _make_node(self, info: OpInfo, args: tuple, outputs: tuple, pre: Any) -> Node:
        if info.list_params:
            return self._make_list_node(info, args, outputs, pre)
        # The per-op path: written out flat, since it runs for every recorded op.
        edges = []
        in_meta = []
        add_edge = edges.append
        add_meta = in_meta.append
        saved = list(args)
        conditional = False
        for a, save, only_if in info.plan:
            v = args[a]
            if v.__class__ is Tensor or isinstance(v, Tensor):  # subclasses (nn.Parameter) too
                if v._requires_grad:
                    if v._base is not None:
                        refresh_view(v)
                    fn = v.grad_fn
                    m = v._autograd
                    if fn is None:
                        acc = m.accumulator if m is not None else None
                        add_edge((acc if acc is not None else accumulator(v), 0))
                    else:
                        add_edge((fn, 0 if m is None else m.output_nr))
                else:
                    add_edge(NO_EDGE)
                add_meta((v._data.shape, v._dtype))
                if save:
                    if only_if:
                        conditional = True  # decided once every edge is known
                    saved[a] = SavedTensor(pre[a] if pre and a in pre else v)
                else:
                    saved[a] = None
            else:
                add_edge(NO_EDGE)
                add_meta(None)
        if conditional:
            for a, _save, only_if in info.plan:
                if only_if and saved[a] is not None and all(edges[k][0] is None for k in only_if):
                    saved[a] = None  # no input whose gradient reads it needs one
        cls = info.cls
        node = _new(cls)
        node.next_functions = tuple(edges)
        node._in_meta = in_meta
        node._seq = next(_sequence)
        node._info = info
        node._n_out = len(outputs)
        node._saved = saved
        if info.save_result:
            if len(outputs) == 1:
                node._result = SavedTensor(outputs[0], True, 0)
            else:
                node._result = _saved_outputs(info, outputs)
        else:
            node._result = None
        if info.keep is not None:
            node.kept = info.keep(*args)
        if ANOMALY[0]:
            node._record_trace()
        return node

    def _make_list_node(self, info: OpInfo, args: tuple, outputs: tuple, pre: Any) -> Node:
        edges = []
        in_meta = []
        lens = []
        for a in info.tensor_params:
            v = args[a]
            if isinstance(v, (list, tuple)):
                lens.append(len(v))
                for t in v:
                    edges.append(edge(t) if t is not None and t._requires_grad else NO_EDGE)
                    in_meta.append((t._data.shape, t._dtype) if t is not None else None)
            else:
                lens.append(1)
                edges.append(edge(v) if isinstance(v, Tensor) and v._requires_grad else NO_EDGE)
                in_meta.append((v._data.shape, v._dtype) if isinstance(v, Tensor) else None)
        node = info.cls.__new__(info.cls)
        Node.__init__(node, tuple(edges), tuple(in_meta))
        node._info = info
        node._list_lens = lens
        node._n_out = len(outputs)
        if info.keep is not None:
            node.kept = info.keep(*args)
        save = info.save_idx
        saved = list(args)
        for a in info.tensor_params:
            v = saved[a]
            if v.__class__ is Tensor or isinstance(v, Tensor):  # subclasses (nn.Parameter) too
                saved[a] = SavedTensor(pre[a] if pre and a in pre else v) if a in save else None
            elif isinstance(v, (list, tuple)):
                saved[a] = [SavedTensor(t) if a in save and t is not None else None for t in v]
        node._saved = saved
        if info.save_result:
            node._result = SavedTensor(outputs[0], True, 0) if len(outputs) == 1 else _saved_outputs(info, outputs)
        else:
            node._result = None
        return node

    # -- in-place ops and out= -------------------------------------------------------------
    def before_write(self, op: Any, args: tuple, outs: tuple, mode: str) -> Any:
        if not STATE.enabled:
            return None
        if mode == "out":
            if any(o._requires_grad for o in outs) or _any_requires_grad(args):
                raise RuntimeError(
                    f"{op.name}(): functions with out=... arguments don't support automatic differentiation, "
                    "but one of the arguments requires grad."
                )
            return None
        o = outs[0]
        base = diff_base(o)  # a detach() alias shares storage but is no differentiable view
        if o._requires_grad and o.grad_fn is None:
            if base is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if base is not None and base._requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if not _any_requires_grad(args) and not o._requires_grad:
            return None
        info = info_for(op)
        pre = {}
        root = o if o._base is None else o._base  # what the write overwrites is a matter of storage
        for a in info.save_idx:
            v = args[a]
            if isinstance(v, Tensor) and (v is o or (v._base if v._base is not None else v) is root):
                pre[a] = v.clone()  # the formula needs the value this op is about to overwrite
        return pre or {}

    def _record_inplace(self, info: OpInfo, args: tuple, o: Tensor, pre: Any) -> None:
        if not (o._dtype.is_floating_point or o._dtype.is_complex):
            return
        base = diff_base(o)
        node = self._make_node(info, args, (o,), pre)
        if all(e[0] is None for e in node.next_functions):
            return
        if base is None:
            old = o.grad_fn
            o._requires_grad = True
            o.grad_fn = node
            m = o._autograd
            if m is not None:
                if m.retains_grad and old is not None and old._retained:
                    # retain_grad() follows the tensor onto its new node
                    old._retained.pop(m.output_nr, None)
                    node._retained = {0: weakref.ref(o)}
                m.output_nr = 0
            return
        refresh_view(o)
        copy_slices = CopySlices(base, o, node)
        base._requires_grad = True
        base.grad_fn = copy_slices
        if base._autograd is not None:
            base._autograd.output_nr = 0
        view_of_base(base, o)  # the view's history is now "a strided view of the updated base"

    def _mark_views(self, args: tuple, outputs: tuple) -> None:
        src = args[0]
        # a view of a detach() alias is a differentiable view of the alias, not of the storage base
        own = None
        if isinstance(src, Tensor) and src._base is not None:
            sm = src._autograd
            if sm is not None and sm.diff_base is not STORAGE_BASE:
                own = src if sm.diff_base is None else sm.diff_base
        for r in outputs:
            if r._base is not None and r.grad_fn is not None:
                m = r._autograd
                if m is None:
                    m = r._autograd = TensorMeta()
                m.view_version = r._version_counter[0]
                if own is not None:
                    m.diff_base = own

    def record_device_copy(self, src: Tensor, dst: Tensor) -> None:
        if not STATE.enabled:
            return
        node = DeviceCopy((edge(src),), ((src._data.shape, src._dtype),), src._device)
        dst._requires_grad = True
        dst.grad_fn = node


def _reads_other_dtype(base: Tensor, view: Tensor) -> bool:
    """Whether ``view`` reads ``base``'s storage as another dtype (real/imag, view_as_real,
    view_as_complex): strides and offsets are then counted in different units."""
    return base._dtype.is_complex != view._dtype.is_complex


def _real_units(t: Tensor) -> tuple:
    """``(shape, strides, offset, complex)`` of ``t`` over its storage read as reals (a complex
    tensor becomes its ``view_as_real``: a trailing dim of two, everything else doubled)."""
    if t._dtype.is_complex:
        return (tuple(t.shape) + (2,), tuple(2 * s for s in t.stride()) + (1,), 2 * t.storage_offset(), True)
    return (tuple(t.shape), t.stride(), t.storage_offset(), False)


def _place(buf: Tensor, geom: tuple) -> Tensor:
    """The view of the real buffer ``buf`` that ``geom`` (from :func:`_real_units`) describes."""
    shape, stride, offset, is_complex = geom
    v = buf.as_strided(shape, stride, offset)
    if is_complex:
        from flambeau.ops._registry import FUNCTIONS

        v = FUNCTIONS["view_as_complex"](v)
    return v


def view_of_base(base: Tensor, view: Tensor) -> None:
    """Set ``view``'s history to ``base.as_strided(view's geometry)`` (through ``view_as_real`` /
    ``view_as_complex`` when ``view`` reads the storage as another dtype)."""
    if _reads_other_dtype(base, view):
        from flambeau.ops._registry import FUNCTIONS

        prev = STATE.enabled
        STATE.enabled = True
        try:
            src = FUNCTIONS["view_as_real"](base) if base._dtype.is_complex else base
            shape, stride, offset, is_complex = _real_units(view)
            replay = src.as_strided(shape, stride, offset)
            if is_complex:
                replay = FUNCTIONS["view_as_complex"](replay)
        finally:
            STATE.enabled = prev
        node = replay.grad_fn
    else:
        info = info_for(OPS["as_strided"])
        node = Recorder()._make_node(info, (base, tuple(view.shape), view.stride(), view.storage_offset()), (view,),
                                     None)
    view._requires_grad = True
    view.grad_fn = node
    m = view._autograd
    if m is None:
        m = view._autograd = TensorMeta()
    m.output_nr = 0
    m.view_version = view._version_counter[0]


def _any_requires_grad(args: tuple) -> bool:
    for v in args:
        if isinstance(v, Tensor):
            if v._requires_grad:
                return True
        elif isinstance(v, (list, tuple)):
            if any(isinstance(t, Tensor) and t._requires_grad for t in v):
                return True
    return False


class DeviceCopy(Node):
    """``tensor.to(device)``: the gradient goes back to the source device."""

    __slots__ = ("_device",)

    def __init__(self, edges: tuple, in_meta: tuple, device: Any) -> None:
        super().__init__(edges, in_meta)
        self._device = device

    def name(self) -> str:
        return "ToCopyBackward0"

    def apply(self, grads: list) -> list:
        return [grads[0].to(self._device)]


DeviceCopy.__name__ = DeviceCopy.__qualname__ = "ToCopyBackward0"


class CopySlices(Node):
    """An in-place op on a view, seen from the base: the view's region of the base was replaced."""

    __slots__ = ("_fn", "_base_geom", "_view_geom", "_view_shape", "_storage", "_real", "_dtype", "_device")

    def __init__(self, base: Tensor, view: Tensor, fn: OpNode) -> None:
        base_edge = edge(base) if base._requires_grad else NO_EDGE
        super().__init__((base_edge,) + fn.next_functions[1:],
                         ((base._data.shape, base._dtype),) + tuple(fn._in_meta[1:]))
        self._fn = fn
        self._view_shape = tuple(view.shape)
        # A view reading the storage as another dtype (view_as_real, real, imag, view_as_complex):
        # both geometries are taken over the storage read as reals, so that their units agree.
        self._real = _reads_other_dtype(base, view)
        if self._real:
            self._base_geom, self._view_geom = _real_units(base), _real_units(view)
            self._storage = base._storage_numel() * (2 if base._dtype.is_complex else 1)
        else:
            self._base_geom = (tuple(base.shape), base.stride(), base.storage_offset(), False)
            self._view_geom = (self._view_shape, view.stride(), view.storage_offset(), False)
            self._storage = base._storage_numel()
        self._dtype = base._dtype
        self._device = base._device

    def apply(self, grads: list) -> list:
        import flambeau

        g = grads[0]
        dtype = g._dtype.to_real() if self._real else g._dtype
        buf = flambeau.zeros(self._storage, dtype=dtype, device=g._device)
        full = _place(buf, self._base_geom)
        full.copy_(g)
        region = _place(buf, self._view_geom)
        res = self._fn.apply([region.clone()])
        first = res[0]
        if first is None:
            region.fill_(0)
        else:
            from ._formulas._helpers import sum_to

            region.copy_(sum_to(first, self._view_shape))
        return [_place(buf, self._base_geom)] + list(res[1:])

    def release(self) -> None:
        self._fn.release()
