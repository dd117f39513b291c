"""``flambeau.autograd.functional``: Jacobians, Hessians and vector products of whole functions."""
from __future__ import annotations

from typing import Any, Callable

from flambeau._tensor import Tensor

from ._api import grad as _grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _as_tuple(x: Any, name: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"The {name} given to {fn} must be either a Tensor or a tuple of Tensors but the value "
                        f"given has type {type(x).__name__}.")
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise TypeError(f"The {name} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                            f"element {i} has type {type(t).__name__}.")
    return True, tuple(x)


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    out = []
    for x in inputs:
        if create_graph and x._requires_grad:
            out.append(x.view(tuple(x.shape)))  # keep the caller's graph
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _finish(t: Any, create_graph: bool) -> Any:
    if isinstance(t, Tensor) and not create_graph:
        return t.detach()
    return t


def _grads(outputs: tuple, inputs: tuple, grad_outputs: Any, create_graph: bool, strict: bool, fn: str) -> tuple:
    import flambeau

    diff = tuple(o for o in outputs if o._requires_grad)
    gos = None if grad_outputs is None else tuple(g for o, g in zip(outputs, grad_outputs) if o._requires_grad)
    if not diff:
        got = (None,) * len(inputs)
    else:
        got = _grad(diff, inputs, gos, retain_graph=True, create_graph=create_graph, allow_unused=True)
    result = []
    for i, (x, g) in enumerate(zip(inputs, got)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   "This is not allowed in strict mode.")
            g = flambeau.zeros_like(x)
        result.append(g)
    return tuple(result)


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Args:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point.
        v (tuple of Tensors or Tensor): the vector, shaped like the outputs (may be None for a
            single-element output).
        create_graph (bool): make the result differentiable.
        strict (bool): raise when an output does not depend on an input.

    Returns:
        (outputs, vjp): ``vjp`` is shaped like ``inputs``.
    """
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        if v is not None:
            _, vs = _as_tuple(v, "v", "vjp")
            if len(vs) != len(outs):
                raise RuntimeError(f"v has invalid size: should be {len(outs)} but got {len(vs)}")
            for o, g in zip(outs, vs):
                if tuple(o.shape) != tuple(g.shape):
                    raise RuntimeError(f"Mismatch in shape: v has a shape of {tuple(g.shape)} and the output has "
                                       f"a shape of {tuple(o.shape)}.")
        else:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = None
        grads = _grads(outs, ins, vs, create_graph, strict, "vjp")
    outs = tuple(_finish(o, create_graph) for o in outs)
    grads = tuple(_finish(g, create_graph) for g in grads)
    return (outs if out_tuple else outs[0]), (grads if is_tuple else grads[0])


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs`` (by the double-vjp trick).

    Returns:
        (outputs, jvp): ``jvp`` is shaped like the outputs.
    """
    import flambeau

    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", "jvp")
            if len(vs) != len(ins):
                raise RuntimeError(f"v has invalid size: should be {len(ins)} but got {len(vs)}")
        else:
            if any(x.numel() != 1 for x in ins):
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is "
                                   "a single Tensor with a single element.")
            vs = tuple(flambeau.ones_like(x) for x in ins)
        out = func(*ins)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        # u is a dummy cotangent: d/du <J^T u, v> = J v.
        us = tuple(flambeau.zeros_like(o).requires_grad_(True) for o in outs)
        diff_outs = tuple(o for o in outs if o._requires_grad)
        if diff_outs:
            gs = _grad(diff_outs, ins, tuple(u for o, u in zip(outs, us) if o._requires_grad), create_graph=True,
                       allow_unused=True)
        else:
            gs = (None,) * len(ins)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None and g._requires_grad]
        if pairs:
            got = _grad(tuple(g for g, _ in pairs), us, tuple(vv for _, vv in pairs), create_graph=create_graph,
                        allow_unused=True)
        else:
            got = (None,) * len(us)
        result = []
        for i, (o, g) in enumerate(zip(outs, got)):
            if g is None:
                if strict:
                    raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                g = flambeau.zeros_like(o)
            result.append(_finish(g, create_graph))
    outs = tuple(_finish(o, create_graph) for o in outs)
    return (outs if out_tuple else outs[0]), (tuple(result) if out_tuple else result[0])


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for each output and input, ``output.shape + input.shape``.

    Returns:
        A Tensor for one input and one output; a tuple over inputs (or outputs); a tuple of
        tuples (outputs, then inputs) when both are tuples.

    Example::

        >>> jacobian(lambda x: x ** 2, flambeau.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    import flambeau

    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        result = []
        for i, o in enumerate(outs):
            rows = [[] for _ in ins]
            flat = o.reshape((-1,))
            for k in range(flat.numel()):
                if o._requires_grad:
                    seed = flambeau.zeros_like(flat)
                    seed[k] = 1.0
                    gs = _grad(flat, ins, seed, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(ins)
                for j, (x, g) in enumerate(zip(ins, gs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = flambeau.zeros_like(x)
                    rows[j].append(g)
            per_input = []
            for j, x in enumerate(ins):
                if rows[j]:
                    jac = flambeau.stack(rows[j]) if hasattr(flambeau, "stack") else _stack(rows[j])
                else:
                    jac = flambeau.zeros((0,) + tuple(x.shape), dtype=x._dtype, device=x._device)
                per_input.append(_finish(jac.reshape(tuple(o.shape) + tuple(x.shape)), create_graph))
            result.append(tuple(per_input))
    if is_tuple and out_tuple:
        return tuple(result)
    if out_tuple:
        return tuple(r[0] for r in result)
    return result[0] if is_tuple else result[0][0]


def _stack(tensors: list) -> Tensor:
    """Stack with ops every core has: unsqueeze and add into a zero tensor (keeps the graph)."""
    import flambeau

    first = tensors[0]
    out = flambeau.zeros((len(tensors),) + tuple(first.shape), dtype=first._dtype, device=first._device)
    for k, t in enumerate(tensors):
        onehot = flambeau.zeros((len(tensors),) + (1,) * first.ndim, dtype=first._dtype, device=first._device)
        onehot[k] = 1.0
        out = out + onehot * t.unsqueeze(0)
    return out


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function ``func`` at ``inputs``: ``input_i.shape + input_j.shape`` blocks."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def first(*xs: Any) -> Any:
        out = func(*xs)
        _, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        scalar = outs[0].reshape(())
        g = _grads((scalar,), xs, None, True, strict, "hessian")
        return g

    res = jacobian(first, ins, create_graph=create_graph, strict=strict)
    if is_tuple:
        return res
    return res[0][0] if isinstance(res[0], tuple) else res[0]


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """The vector-Hessian product ``v^T H`` of a scalar ``func``. Returns ``(output, vhp)``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """The Hessian-vector product ``H v`` of a scalar ``func``. Returns ``(output, hvp)``.

    The Hessian of a twice-differentiable function is symmetric, so this equals ``vhp``.
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool, name: str) -> tuple:
    import flambeau

    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", name)
        ins = _prepare(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", name)
            if len(vs) != len(ins):
                raise RuntimeError(f"v has invalid size: should be {len(ins)} but got {len(vs)}")
        else:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is "
                                   "a single Tensor with a single element.")
            vs = (flambeau.ones_like(ins[0]),)
        out = func(*ins)
        _, outs = _as_tuple(out, "outputs of the user-provided function", name)
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(f"The function given to {name} should return a single Tensor with a single element")
        first = _grads(outs, ins, None, True, strict, name)
        diff = [(g, vv) for g, vv in zip(first, vs) if g._requires_grad]
        if diff:
            second = _grad(tuple(g for g, _ in diff), ins, tuple(vv for _, vv in diff), create_graph=create_graph,
                           allow_unused=True)
        else:
            second = (None,) * len(ins)
        result = []
        for i, (x, g) in enumerate(zip(ins, second)):
            if g is None:
                if strict:
                    raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                       "independent of the input. This is not allowed in strict mode.")
                g = flambeau.zeros_like(x)
            result.append(_finish(g, create_graph))
    return _finish(outs[0], create_graph), (tuple(result) if is_tuple else result[0])
