"""Running the backward graph: iterative, in dependency order, with hooks and gradient capture.

``execute`` never recurses (a 100,000-node chain is fine). Gradients reaching leaves are
written only once the whole pass succeeded, so that an error leaves every ``.grad`` as it was.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

from flambeau._tensor import Tensor

try:
    # The C functions `heapq` re-exports: the module itself (Python fallbacks, then this import)
    # cost ~1% of `import flambeau`.
    from _heapq import heappop, heappush
except ImportError:  # pragma: no cover - an interpreter without the accelerator
    from heapq import heappop, heappush

from ._node import AccumulateGrad, Node, accumulate_retained, edge
from .grad_mode import ANOMALY, STATE


def _fmt(shape: tuple) -> str:
    return "flambeau.Size([" + ", ".join(str(s) for s in shape) + "])"


def make_root_grads(tensors: Sequence[Tensor], grads: Sequence[Any], is_grads_batched: bool = False) -> list:
    """Check each output's gradient (or create ones for scalars), as PyTorch's ``_make_grads`` does."""
    import flambeau

    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if g is None:
            if t._requires_grad:
                if t.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not (t._dtype.is_floating_point or t._dtype.is_complex):
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {t._dtype}")
                g = flambeau.ones_like(t)
            out.append(g)
            continue
        if not isinstance(g, Tensor):
            g = flambeau.tensor(g, dtype=t._dtype, device=t._device)
        if tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_fmt(tuple(g.shape))} and output[{i}] has a "
                f"shape of {_fmt(tuple(t.shape))}."
            )
        if t._dtype.is_complex != g._dtype.is_complex:
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                f"in dtype: grad_output[{i}] has a dtype of {g._dtype} and output[{i}] has a dtype of {t._dtype}."
            )
        out.append(g)
    return out


def root_edge(t: Tensor, i: int) -> tuple:
    if not t._requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    return edge(t)


def _graph(roots: list) -> dict:
    """Every node reachable from the roots, with how many edges point to it."""
    deps: dict = {}
    stack = []
    for node in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    pop, push = stack.pop, stack.append
    while stack:
        for child, _ in pop().next_functions:
            if child is not None:
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    push(child)
    return deps


def _topological(deps: dict, roots: list) -> list:
    remaining = dict(deps)
    order = []
    ready = [n for n in dict.fromkeys(roots) if remaining[n] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            remaining[child] -= 1
            if remaining[child] == 0:
                ready.append(child)
    return order


def execute(root_edges: list, root_grads: list, keep_graph: bool, create_graph: bool,
            capture: list | None = None, accumulate_into: set | None = None) -> list:
    """Run the graph backward from ``root_edges`` seeded with ``root_grads``.

    Args:
        capture: edges ``(node, nr)`` whose incoming gradient is returned instead of used
            (``autograd.grad``); their AccumulateGrad nodes are not run.
        accumulate_into: when given, only these AccumulateGrad nodes (and the nodes that lead to
            them, or to captured edges) run; else every leaf reachable gets its gradient.
    """
    roots = [e[0] for e in root_edges]
    deps = _graph(roots)
    captured: dict = {}
    cap_nodes: dict = {}
    if capture is not None:
        for k, (node, nr) in enumerate(capture):
            cap_nodes.setdefault(node, []).append((nr, k))
    runs: Any = None  # None: every node runs
    if capture is not None or accumulate_into is not None:
        targets = accumulate_into or set()
        needed: dict = {}
        runs = set()
        for node in reversed(_topological(deps, roots)):
            if type(node) is AccumulateGrad:
                run = node in targets
            else:
                run = any(needed.get(c, False) for c, _ in node.next_functions if c is not None)
            if run:
                runs.add(node)
            needed[node] = run or node in cap_nodes
        deps = {n: 0 for n in deps if needed.get(n)}
        for n in deps:
            if n in runs:
                for c, _ in n.next_functions:
                    if c is not None and c in deps:
                        deps[c] += 1
    buffers: dict = {}
    for (node, nr), g in zip(root_edges, root_grads):
        if node not in deps:
            continue
        _add_to(buffers, node, nr, g)
    heap = []
    for node in dict.fromkeys(roots):
        if node in deps and deps[node] == 0:
            heappush(heap, (-node._seq, id(node), node))
    writes: list = []  # (AccumulateGrad, grad) or (tensor, grad) for retain_grad, applied at the end
    prev = STATE.enabled
    STATE.enabled = create_graph
    pop, push = heappop, heappush
    try:
        while heap:
            node = pop(heap)[2]
            buf = buffers.pop(node, None)
            outs = _run(node, buf, keep_graph, create_graph, cap_nodes, captured, writes, runs)
            if runs is not None and node not in runs:
                continue
            i = 0
            for child, nr in node.next_functions:
                if child is not None and child in deps:
                    if outs is not None:
                        g = outs[i]
                        if g is not None:
                            cbuf = buffers.get(child)
                            if cbuf is None:
                                cbuf = buffers[child] = [None] * child._n_out
                            if nr >= len(cbuf):
                                cbuf.extend([None] * (nr + 1 - len(cbuf)))
                            old = cbuf[nr]
                            cbuf[nr] = g if old is None else old + g
                    left = deps[child] - 1
                    deps[child] = left
                    if left == 0:
                        push(heap, (-child._seq, id(child), child))
                i += 1
        # Drop the loop's last references first, and pop each write, so that a gradient nobody
        # else holds reaches `accumulate` with only this frame's reference (it can then be kept
        # as `.grad` without a copy).
        buf = outs = cbuf = old = g = None
        writes.reverse()
        while writes:
            target, g = writes.pop()
            if type(target) is AccumulateGrad:
                target.accumulate(g, create_graph, True)
            else:
                accumulate_retained(target, g)
        g = None
    finally:
        STATE.enabled = prev
    if capture is None:
        return []
    return [captured.get(k) for k in range(len(capture))]


def _add_to(buffers: dict, node: Node, nr: int, g: Tensor) -> None:
    buf = buffers.get(node)
    if buf is None:
        n = max(nr + 1, _n_outputs(node))
        buf = buffers[node] = [None] * n
    elif nr >= len(buf):
        buf.extend([None] * (nr + 1 - len(buf)))
    old = buf[nr]
    buf[nr] = g if old is None else old + g


def _n_outputs(node: Node) -> int:
    return node._n_out


def _run(node: Node, buf: list | None, keep_graph: bool, create_graph: bool, cap_nodes: dict, captured: dict,
         writes: list, runs: Any) -> list | None:
    if buf is None:
        buf = [None] * _n_outputs(node)
    th = node._tensor_hooks
    if th:
        for nr, hooks in th.items():
            if nr < len(buf) and buf[nr] is not None:
                for hook in list(hooks.values()):
                    buf[nr] = call_tensor_hook(hook, buf[nr])
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            if t is not None and nr < len(buf) and buf[nr] is not None:
                writes.append((t, buf[nr] if create_graph else _plain(buf[nr])))
    if type(node) is AccumulateGrad:
        g = buf[0]
        var = node.variable
        meta = var._autograd if var is not None else None
        if g is not None and meta is not None and meta.hooks:
            for hook in list(meta.hooks.values()):
                g = call_tensor_hook(hook, g)
        if node in cap_nodes:
            for _nr, k in cap_nodes[node]:
                captured[k] = g
        if g is not None and (runs is None or node in runs):
            writes.append((node, g))
        return None
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            r = hook(tuple(buf))
            if r is not None:
                buf = list(r)
    if node in cap_nodes:
        for nr, k in cap_nodes[node]:
            captured[k] = buf[nr] if nr < len(buf) else None
    if runs is not None and node not in runs:
        return None
    if buf[0] is None and all(g is None for g in buf):
        return None
    try:
        outs = node.apply(buf)
        if not node._validated:
            outs = validate(node, outs)
        if ANOMALY[0] and ANOMALY[1]:
            _check_nan(node, outs)
    except Exception:
        if ANOMALY[0] and node._trace is not None:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                + "".join(node._trace), RuntimeWarning, stacklevel=2)
        raise
    if not keep_graph:
        node.release()
    if node._hooks:
        for hook in list(node._hooks.values()):
            r = hook(tuple(outs), tuple(buf))
            if r is not None:
                outs = list(r)
    return outs


def call_tensor_hook(hook: Any, grad: Tensor) -> Tensor:
    """Run a tensor hook (``register_hook``) on ``grad``: its result, checked as PyTorch checks it
    (same dtype, device and shape), replaces ``grad``; ``None`` keeps it."""
    r = hook(grad)
    if r is None:
        return grad
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    name = _hook_name(hook)
    if r._dtype is not grad._dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {r.type()})")
    if r._device != grad._device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad._device.type.upper()} tensor "
                           f"got {r._device.type.upper()} tensor)")
    if r._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


def _hook_name(hook: Any) -> str:
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else type(hook).__name__


def _plain(g: Tensor) -> Tensor:
    from ._node import _detached_copy

    return _detached_copy(g)


def validate(node: Node, outs: Any) -> list:
    """Check a node's gradients against its inputs: count, shape (summing broadcast dims), dtype."""
    if outs.__class__ is not list:
        outs = list(outs)
    edges = node.next_functions
    if len(outs) != len(edges):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {len(edges)}, "
            f"got {len(outs)})"
        )
    metas = node._in_meta
    for i, g in enumerate(outs):
        if g is None:
            continue
        if edges[i][0] is None:
            outs[i] = None
            continue
        if g.__class__ is not Tensor and not isinstance(g, Tensor):
            raise TypeError(f"function {node.name()} returned a gradient of type {type(g).__name__} at index {i}, "
                            "expected a Tensor or None")
        meta = metas[i] if i < len(metas) else None
        if meta is not None and (g._data.shape != meta[0] or g._dtype is not meta[1]):
            outs[i] = _conform(node, i, g, meta)
    return outs


def _conform(node: Node, i: int, g: Tensor, meta: tuple) -> Tensor:
    shape, dtype = meta
    if g._data.shape != shape:
        from ._formulas._helpers import expandable, sum_to

        if not expandable(shape, g._data.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, g._data.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]"
            )
        g = sum_to(g, shape)
    if g._dtype.is_complex and not dtype.is_complex:
        # a real input of a complex computation gets the real part (PyTorch's convention)
        g = g.real
    if g._dtype is not dtype:
        g = g.to(dtype)
    return g


def _check_nan(node: Node, outs: list) -> None:
    for i, g in enumerate(outs):
        if g is not None and (g._dtype.is_floating_point or g._dtype.is_complex):
            if bool(g.isnan().any()):
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
