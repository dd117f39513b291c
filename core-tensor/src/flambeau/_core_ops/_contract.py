"""``einsum`` and ``tensordot`` as composites: diagonals, sums, permutes and one ``bmm`` per pair.

Each operand's repeated labels become a diagonal and labels no one else needs are summed first;
the operands are then contracted left to right, each pair as a single batched matrix product
(batch labels, then the left operand's own labels, then the right one's). Everything is written
with flambeau ops, so autograd and every backend get both for free.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from .. import _dtypes
from .._tensor import Tensor
from ..ops.meta import fmt_shape, type_name, wrap_dim

_ELLIPSIS = "..."


def _bad_char(index: int) -> RuntimeError:
    return RuntimeError(f"einsum(): invalid subscript given at index {index} in the equation string, subscripts must "
                        "be in [a-zA-Z]")


@lru_cache(maxsize=256)
def parse(equation: str) -> tuple[list[list[str]], list[str] | None]:
    """The labels of each operand and of the output (None: implicit); ``"..."`` marks an ellipsis."""
    operands: list[list[str]] = [[]]
    output: list[str] | None = None
    current = operands[0]
    i, n = 0, len(equation)
    while i < n:
        ch = equation[i]
        if ch == " ":
            i += 1
        elif ch.isascii() and ch.isalpha():
            current.append(ch)
            i += 1
        elif ch == ".":
            if equation[i:i + 3] != _ELLIPSIS or _ELLIPSIS in current:
                where = "output" if output is not None else f"operand {len(operands) - 1}"
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            current.append(_ELLIPSIS)
            i += 3
        elif ch == "," and output is None:
            current = []
            operands.append(current)
            i += 1
        elif ch == "-" and output is None and equation[i + 1:i + 2] == ">":
            output = current = []
            i += 2
        else:
            raise _bad_char(i)
    return operands, output


def _label_sizes(labels: list[str], shape: tuple[int, ...], index: int) -> list[tuple[str, int]]:
    """``(label, size)`` per dim of operand ``index``; ellipsis dims get labels ``.k`` counted from the right."""
    named = sum(1 for x in labels if x != _ELLIPSIS)
    if _ELLIPSIS in labels:
        if named > len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the number "
                               f"of dimensions ({len(shape)}) for operand {index}")
    elif named != len(shape):
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                           f"of dimensions ({len(shape)}) for operand {index} and no ellipsis was given")
    out: list[tuple[str, int]] = []
    dim = 0
    for label in labels:
        if label == _ELLIPSIS:
            span = len(shape) - named
            out.extend((f".{span - j}", shape[dim + j]) for j in range(span))
            dim += span
        else:
            out.append((label, shape[dim]))
            dim += 1
    return out


def _output_labels(output: list[str] | None, inputs: list[list[tuple[str, int]]]) -> list[str]:
    seen: dict[str, int] = {}
    for dims in inputs:
        for label, _ in dims:
            seen[label] = seen.get(label, 0) + 1
    dots = sorted((x for x in seen if x.startswith(".")), key=lambda x: -int(x[1:]))
    if output is None:  # implicit: ellipsis dims, then the labels seen exactly once, alphabetically
        return dots + sorted(x for x, count in seen.items() if count == 1 and not x.startswith("."))
    result: list[str] = []
    for label in output:
        if label == _ELLIPSIS:
            result.extend(dots)
            continue
        if label not in seen:
            raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any input "
                               "operand")
        if label in result:
            raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
        result.append(label)
    return result


def _check_sizes(inputs: list[list[tuple[str, int]]]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for index, dims in enumerate(inputs):
        own: dict[str, int] = {}
        for label, size in dims:
            if label in own and own[label] != size:
                raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {index} but the sizes don't "
                                   f"match, {own[label]} != {size}")
            own[label] = size
        for label, size in own.items():
            before = sizes.get(label, 1)
            if size != before and size != 1 and before != 1:
                if label.startswith("."):
                    raise RuntimeError(
                        f"einsum(): dimension {len([d for d in dims if d[0].startswith('.')]) - int(label[1:])} "
                        f"covered by ellipsis in operand {index}has size {size} which does not broadcast with "
                        f"previously seen ellipsis with size {before} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {index} which does not "
                                   f"broadcast with previously seen size {before}")
            sizes[label] = size if before == 1 else before
    return sizes


# A plan is worked out once per (equation, shapes) from labels and sizes alone, then replayed on
# the tensors: a list of steps per operand and per contraction, with no-op steps left out, so that
# 'bij,bjk->bik' runs as a bare bmm.
Steps = tuple  # of ("diag", i, j) | ("sum", dims) | ("permute", order) | ("expand", shape) | ("reshape", shape)


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _diagonal_steps(labels: list[str], shape: list[int]) -> tuple[list[str], list[int], list]:
    """Repeated labels of one operand become one dim (the diagonal, which ``diagonal`` puts last)."""
    steps: list = []
    while len(set(labels)) != len(labels):
        first = next(x for x in labels if labels.count(x) > 1)
        i = labels.index(first)
        j = labels.index(first, i + 1)
        steps.append(("diag", i, j))
        shape = [n for k, n in enumerate(shape) if k not in (i, j)] + [shape[i]]
        labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [first]
    return labels, shape, steps


def _sum_steps(labels: list[str], shape: list[int], needed: set[str]) -> tuple[list[str], list[int], list]:
    drop = tuple(i for i, x in enumerate(labels) if x not in needed)
    if not drop:
        return labels, shape, []
    keep = [i for i in range(len(labels)) if i not in drop]
    return [labels[i] for i in keep], [shape[i] for i in keep], [("sum", drop)]


def _layout_steps(shape: list[int], order: list[int], target: list[int], flat: list[int]) -> list:
    steps: list = []
    if order != list(range(len(order))):
        steps.append(("permute", tuple(order)))
        shape = [shape[k] for k in order]
    if shape != target:  # shared labels of size 1 on one side broadcast against the other
        steps.append(("expand", tuple(target)))
    if target != flat:
        steps.append(("reshape", tuple(flat)))
    return steps


def _pair_plan(la: list[str], sa: list[int], lb: list[str], sb: list[int], later: set[str],
               sizes: dict[str, int]) -> tuple[list[str], list[int], list, list, list]:
    """Contract two operands over their shared labels that nothing later needs: one ``bmm``."""
    shared = [x for x in la if x in lb]
    batch = [x for x in shared if x in later]
    summed = [x for x in shared if x not in later]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]
    bs, ks = [sizes[x] for x in batch], [sizes[x] for x in summed]
    ls, rs = [sa[la.index(x)] for x in left], [sb[lb.index(x)] for x in right]
    if not summed:  # nothing to contract: a broadcast product (outer products; bool works too)
        ab = [sa[la.index(x)] for x in batch]
        bb = [sb[lb.index(x)] for x in batch]
        a_steps = _layout_steps(sa, [la.index(x) for x in batch + left], ab + ls, ab + ls + [1] * len(rs))
        b_steps = _layout_steps(sb, [lb.index(x) for x in batch + right], bb + rs, bb + [1] * len(ls) + rs)
        return batch + left + right, bs + ls + rs, a_steps, b_steps, None
    a_steps = _layout_steps(sa, [la.index(x) for x in batch + left + summed], bs + ls + ks,
                            [_numel(bs), _numel(ls), _numel(ks)])
    b_steps = _layout_steps(sb, [lb.index(x) for x in batch + summed + right], bs + ks + rs,
                            [_numel(bs), _numel(ks), _numel(rs)])
    shape = bs + ls + rs
    after = [] if shape == [_numel(bs), _numel(ls), _numel(rs)] else [("reshape", tuple(shape))]
    return batch + left + right, shape, a_steps, b_steps, after


@lru_cache(maxsize=512)
def _plan(equation: str, shapes: tuple[tuple[int, ...], ...]) -> tuple:
    labels, output = parse(equation)
    if len(labels) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(labels) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    inputs = [_label_sizes(ls, shape, i) for i, (ls, shape) in enumerate(zip(labels, shapes))]
    out_labels = _output_labels(output, inputs)
    sizes = _check_sizes(inputs)
    terms = [_diagonal_steps([x for x, _ in dims], [n for _, n in dims]) for dims in inputs]
    prepared = [list(steps) for _, _, steps in terms]
    ls, shape = terms[0][0], terms[0][1]
    program: list = []  # ("steps", steps) on the running result, ("bmm", operand, a_steps, b_steps, after)
    for i in range(1, len(terms) + 1):
        needed = set(out_labels).union(*(set(x) for x, _, _ in terms[i:]))
        ls, shape, steps = _sum_steps(ls, shape, needed)
        if steps:
            program.append(("steps", tuple(steps)))
        if i == len(terms):
            break
        lb, sb, b_sum = _sum_steps(terms[i][0], terms[i][1], needed | set(ls))
        prepared[i] += b_sum
        later = set(out_labels).union(*(set(x) for x, _, _ in terms[i + 1:]))
        ls, shape, a_steps, b_steps, after = _pair_plan(ls, shape, lb, sb, later, sizes)
        kind = "mul" if after is None else "bmm"
        program.append((kind, i, tuple(a_steps), tuple(prepared[i] + b_steps), tuple(after or ())))
    if ls != out_labels:
        program.append(("steps", (("permute", tuple(ls.index(x) for x in out_labels)),)))
    return tuple(prepared[0]), tuple(program)


def _replay(t: Tensor, steps: Steps) -> Tensor:
    for step in steps:
        kind = step[0]
        if kind == "diag":
            t = t.diagonal(0, step[1], step[2])
        elif kind == "sum":
            t = t.sum(step[1], dtype=t._dtype)  # einsum keeps integer dtypes
        elif kind == "permute":
            t = t.permute(step[1])
        elif kind == "expand":
            t = t.expand(step[1])
        else:
            t = t.reshape(step[1])
    return t


def einsum(equation: str, operands: Sequence[Tensor]) -> Tensor:
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    first = operands[0]._dtype
    for t in operands[1:]:
        if t._dtype is not first:
            raise RuntimeError(f"expected scalar type {type_name(first)} but found {type_name(t._dtype)}")
    start, program = _plan(equation, tuple(t._data.shape for t in operands))
    t = _replay(operands[0], start)
    for step in program:
        if step[0] == "steps":
            t = _replay(t, step[1])
        elif step[0] == "mul":
            t = _replay(t, step[2]) * _replay(operands[step[1]], step[3])
        else:
            _, index, a_steps, b_steps, after = step
            if first is _dtypes.bool:
                raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
            t = _replay(_replay(t, a_steps).bmm(_replay(operands[index], b_steps)), after)
    return t if t is not operands[0] else t.clone()


# -- tensordot ---------------------------------------------------------------------------

def _dims_lists(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    if isinstance(dims, Tensor):
        dims = int(dims.item()) if dims._data.ndim == 0 else dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a._data.ndim or dims > b._data.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        return da, db
    raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                       f"containing two lists, but got dims={dims}")


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    da, db = _dims_lists(a, b, dims)
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    if a._dtype is _dtypes.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    sa, sb = a._data.shape, b._data.shape
    wa = [wrap_dim(d, len(sa)) for d in da]
    wb = [wrap_dim(d, len(sb)) for d in db]
    for d1, d2, x, y in zip(da, db, wa, wb):
        if sa[x] != sb[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} in dim {d1} and "
                               f"second has size {sb[y]} in dim {d2}")
    if len(set(wa)) != len(wa) or len(set(wb)) != len(wb):
        raise RuntimeError(f"tensordot: a dim appears more than once in dims {fmt_shape(da)}, {fmt_shape(db)}")
    free_a = [i for i in range(len(sa)) if i not in wa]
    free_b = [i for i in range(len(sb)) if i not in wb]
    k = 1
    for x in wa:
        k *= sa[x]
    m = 1
    for x in free_a:
        m *= sa[x]
    n = 1
    for x in free_b:
        n *= sb[x]
    left = a.permute(free_a + wa).reshape(m, k)
    right = b.permute(wb + free_b).reshape(k, n)
    return left.mm(right).reshape([sa[x] for x in free_a] + [sb[x] for x in free_b])
