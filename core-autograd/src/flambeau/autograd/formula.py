"""How a package writes a backward formula for an op it declares.

A formula is registered through the ``flambeau_register_gradients`` hook as
``{op_name: Formula(fn, save=(...), result=...)}`` (a plain callable is accepted too and then
saves every tensor input and output). ``fn(ctx, grad)`` gets:

- ``ctx.args``: the op's arguments in declaration order; tensor arguments named in ``save``
  are the saved tensors (version-checked), other tensor arguments are ``None``; scalars and
  options are always there;
- ``ctx.result``: the output (a tuple of them for several outputs) when ``result=True``;
- ``ctx.needs(i)``: whether argument ``i`` needs a gradient;
- ``ctx.shape(i)`` / ``ctx.dtype(i)``: the shape and dtype argument ``i`` had;
- ``grad``: the gradient of the output (a list, with ``None`` for outputs that got none, for
  several outputs).

It returns one gradient per argument (a shorter sequence means ``None`` for the rest; a single
tensor means the first argument's). Gradients may have the broadcast shape of the output:
the engine sums them back to each input's shape and casts them to its dtype. Write formulas
with flambeau ops, so that ``create_graph=True`` differentiates them again.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence


class Formula:
    """A backward formula and what it needs saved.

    Args:
        fn: ``fn(ctx, grad) -> gradients``.
        save: names of the tensor parameters the formula reads (only these are kept alive).
        result: whether the formula reads the op's output(s).
        keep: ``keep(*args)`` computes extra values at record time (for example an input's
            strides), stored in ``ctx.kept``; for what the formula needs that is not a saved tensor.
        save_if: ``{saved name: (names...)}``: save that tensor only when one of these
            arguments requires grad (``mul`` needs ``other`` only for ``input``'s gradient).
        nondiff_outputs: positions of float or complex outputs that PyTorch marks
            non-differentiable (``linalg.lu``'s permutation ``P``): they never require grad and
            their gradient reaches the formula as ``None``. Integer and bool outputs are
            non-differentiable anyway.
    """

    __slots__ = ("fn", "save", "result", "keep", "save_if", "nondiff_outputs")

    def __init__(self, fn: Callable[..., Any], save: Sequence[str] = (), result: bool = False,
                 keep: Callable[..., Any] | None = None, save_if: dict | None = None,
                 nondiff_outputs: Sequence[int] = ()) -> None:
        self.fn = fn
        self.save = tuple(save)
        self.result = result
        self.keep = keep
        self.save_if = dict(save_if or {})
        self.nondiff_outputs = frozenset(nondiff_outputs)

    def __call__(self, ctx: Any, grad: Any) -> Any:
        return self.fn(ctx, grad)

    def __repr__(self) -> str:
        return f"Formula({getattr(self.fn, '__name__', self.fn)!r}, save={self.save}, result={self.result})"


def formula(save: Sequence[str] = (), result: bool = False,
            keep: Callable[..., Any] | None = None) -> Callable[[Callable[..., Any]], Formula]:
    """Decorator form of :class:`Formula`."""

    def wrap(fn: Callable[..., Any]) -> Formula:
        return Formula(fn, save, result, keep)

    return wrap
