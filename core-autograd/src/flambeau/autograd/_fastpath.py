"""Per-op recording functions, generated once per op (like the dispatcher's own functions).

``record`` runs for every op whose inputs require grad, so for the common case (not in-place,
one output, no tensor lists) it calls a function written out for that op: no loops over
parameters, no per-call decisions that the declaration already settles.
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau._tensor import Tensor

from ._node import NO_EDGE, SavedTensor, _sequence, accumulator, refresh_view
from .grad_mode import ANOMALY


def build(info: Any) -> Callable[[tuple, tuple], None] | None:
    """The fast recorder of ``info``'s op, or None when the generic path must be used."""
    if info.list_params or info.keep is not None:
        return None
    n = len(info.op.parameters)
    names = [f"a{i}" for i in range(n)]
    lines = ["def record(args, outputs):"]
    if n == 1:
        lines.append("    a0, = args")
    elif n:
        lines.append(f"    {', '.join(names)} = args")
    edges, metas = [], []
    for k, (a, _save, _only) in enumerate(info.plan):
        v = f"a{a}"
        lines += [
            f"    if {v}.__class__ is T or isinstance({v}, T):",  # subclasses (nn.Parameter) too
            f"        if {v}._requires_grad:",
            f"            if {v}._base is not None:",
            f"                refresh_view({v})",
            f"            f = {v}.grad_fn",
            f"            m = {v}._autograd",
            "            if f is None:",
            "                acc = m.accumulator if m is not None else None",
            f"                e{k} = (acc if acc is not None else accumulator({v}), 0)",
            "            else:",
            f"                e{k} = (f, 0 if m is None else m.output_nr)",
            "        else:",
            f"            e{k} = NO_EDGE",
            f"        m{k} = ({v}._data.shape, {v}._dtype)",
            "    else:",
            f"        e{k} = NO_EDGE",
            f"        m{k} = None",
        ]
        edges.append(f"e{k}")
        metas.append(f"m{k}")
    saved = []
    k_of = {a: k for k, (a, _s, _o) in enumerate(info.plan)}
    for i in range(n):
        if i not in k_of:
            saved.append(f"a{i}")
            continue
        _a, save, only_if = info.plan[k_of[i]]
        if not save:
            saved.append(f"(a{i} if a{i}.__class__ is not T and not isinstance(a{i}, T) else None)")
            continue
        cond = " or ".join(f"e{c}[0] is not None" for c in only_if) if only_if else "True"
        saved.append(f"(a{i} if a{i}.__class__ is not T and not isinstance(a{i}, T) else "
                     f"(S(a{i}) if {cond} else None))")
    lines += [
        "    node = new(cls)",
        f"    node.next_functions = ({', '.join(edges)}{',' if len(edges) == 1 else ''})",
        f"    node._in_meta = [{', '.join(metas)}]",
        "    node._seq = next(seq)",
        "    node._info = info",
        "    node._n_out = 1",
        f"    node._saved = [{', '.join(saved)}]",
        "    node._result = S(outputs[0], True, 0)" if info.save_result else "    node._result = None",
        "    if ANOMALY[0]:",
        "        node._record_trace()",
        "    r = outputs[0]",
        "    if r._dtype._category >= 2:",
        "        r._requires_grad = True",
        "        r.grad_fn = node",
    ]
    namespace = {"T": Tensor, "NO_EDGE": NO_EDGE, "accumulator": accumulator, "new": object.__new__,
                 "cls": info.cls, "seq": _sequence, "info": info, "S": SavedTensor, "ANOMALY": ANOMALY,
                 "refresh_view": refresh_view}
    exec(compile("\n".join(lines), f"<flambeau autograd record {info.op.name}>", "exec"), namespace)
    return namespace["record"]
