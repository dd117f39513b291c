"""``summary(model, input_size)``: a table of a model's layers, their output shapes, parameters and cost.

The model runs once on the ``meta`` device, where tensors have shapes and dtypes but no storage, so a
model far larger than the machine's memory can be summarised. A model whose tensors live elsewhere is
not copied: each parameter and buffer is pointed at a meta stand-in for the run and restored after it.
Forward hooks on every module record what each call returned.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import flambeau
from flambeau import Tensor

from ..modules.module import Module
from ._mult_adds import mult_adds

__all__ = ["summary", "ModelSummary", "LayerInfo"]


@dataclass
class LayerInfo:
    """One module call: where it sits in the model, what it returned, what it holds and costs."""

    name: str  #: dotted name in the model ("" for the model itself)
    type: str  #: the module's class name
    depth: int  #: 0 for the model, 1 for its children, ...
    index: int  #: position among its parent's calls, from 1
    output_shape: Any = None  #: list of ints, or a list of them for several outputs
    num_params: int = 0  #: the module's own parameters (not its children's)
    trainable: bool | None = None  #: whether its own parameters require grad (None: it has none)
    mult_adds: int = 0  #: multiply-adds of this call (0 where unknown, see ``summary``)
    output_bytes: int = 0
    is_leaf: bool = True


@dataclass
class ModelSummary:
    """What :func:`summary` returns; ``str()`` of it is the table."""

    layers: list[LayerInfo] = field(default_factory=list)
    total_params: int = 0
    trainable_params: int = 0
    total_mult_adds: int = 0
    param_bytes: int = 0
    activation_bytes: int = 0
    input_bytes: int = 0

    @property
    def non_trainable_params(self) -> int:
        return self.total_params - self.trainable_params

    def __str__(self) -> str:
        head = ("Layer (type)", "Depth", "Output Shape", "Param #", "Trainable", "Mult-Adds")
        rows = []
        for layer in self.layers:
            label = "  " * layer.depth + (f"{layer.name.rsplit('.', 1)[-1]} ({layer.type})" if layer.name
                                          else layer.type)
            rows.append((label, f"{layer.depth}-{layer.index}", _shape_text(layer.output_shape),
                         f"{layer.num_params:,}" if layer.num_params else "--",
                         "--" if layer.trainable is None else str(layer.trainable),
                         f"{layer.mult_adds:,}" if layer.mult_adds else "--"))
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()
        rule = "=" * len(line)
        out = [rule, line, rule]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        mb = 1024 ** 2
        out += [rule,
                f"Total params: {self.total_params:,}",
                f"Trainable params: {self.trainable_params:,}",
                f"Non-trainable params: {self.non_trainable_params:,}",
                f"Total mult-adds: {self.total_mult_adds:,}",
                rule,
                f"Input size (MB): {self.input_bytes / mb:.2f}",
                f"Forward pass size (MB): {self.activation_bytes / mb:.2f}",
                f"Params size (MB): {self.param_bytes / mb:.2f}",
                f"Estimated Total Size (MB): {(self.input_bytes + self.activation_bytes + self.param_bytes) / mb:.2f}",
                rule]
        return "\n".join(out)

    __repr__ = __str__


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "--"
    return str(shape)


def _outputs(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _outputs(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _outputs(v)]
    return []


def _shape_of(value: Any) -> Any:
    if isinstance(value, Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        shapes = [_shape_of(v) for v in value]
        return [s for s in shapes if s is not None] or None
    return None


def _meta_inputs(input_size: Any, dtypes: Sequence[Any] | None, device: Any) -> list[Tensor]:
    if input_size and all(isinstance(s, int) for s in input_size):
        sizes = [tuple(input_size)]
    else:
        sizes = [tuple(s) for s in input_size]
    if dtypes is None:
        dtypes = [flambeau.get_default_dtype()] * len(sizes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"summary: got {len(dtypes)} dtypes for {len(sizes)} inputs")
    for s in sizes:
        if any(not isinstance(d, int) or d < 0 for d in s):
            raise ValueError(f"summary: input sizes must be non-negative ints, got {s}")
    make = flambeau.empty if flambeau.device(device).type == "meta" else flambeau.zeros
    return [make(s, dtype=dt, device=device) for s, dt in zip(sizes, dtypes)]


def _to_device(value: Any, device: Any) -> Any:
    if isinstance(value, Tensor):
        if value.device == flambeau.device(device):
            return value
        if flambeau.device(device).type == "meta":
            return flambeau.empty(tuple(value.shape), dtype=value.dtype, device=device)
        return value.to(device)
    from .._packed_sequence import PackedSequence

    if isinstance(value, PackedSequence):  # batch_sizes stays on the CPU, where PyTorch keeps it
        return PackedSequence(_to_device(value.data, device), value.batch_sizes,
                              _to_device(value.sorted_indices, device), _to_device(value.unsorted_indices, device))
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple takes its fields one by one
        return type(value)(*(_to_device(v, device) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def _swap_to_meta(model: Module) -> list[tuple]:
    """Point every parameter and buffer not on meta at a meta stand-in; what to restore afterwards."""
    saved = []
    for module in model.modules():
        for p in module._parameters.values():
            if p is not None and not p.is_meta:
                saved.append(("param", p, p.data))
                p.data = flambeau.empty(tuple(p.shape), dtype=p.dtype, device="meta")
        for name, b in module._buffers.items():
            if b is not None and not b.is_meta:
                saved.append(("buffer", (module, name), b))
                module._buffers[name] = flambeau.empty(tuple(b.shape), dtype=b.dtype, device="meta")
    return saved


def _restore(saved: list[tuple]) -> None:
    for kind, where, value in saved:
        if kind == "param":
            where.data = value
        else:
            module, name = where
            module._buffers[name] = value


def summary(model: Module, input_size: Any = None, *, input_data: Any = None, dtypes: Sequence[Any] | None = None,
            device: Any = "meta") -> ModelSummary:
    r"""Summarise ``model``: each layer's output shape, parameter count, trainable flag and multiply-adds,
    and the totals (parameters, their memory, the activations' memory).

    The model runs once, without gradients, on ``device`` (the ``meta`` device by default: nothing is
    allocated, and the model's own tensors are restored afterwards, so this works for a model far
    larger than memory, built with ``device="meta"`` or not).

    Args:
        model: the module.
        input_size: the shape of the input (a tuple of ints), or a list of shapes for several inputs.
        input_data: example inputs instead of ``input_size`` (a tensor, or a list/tuple of positional
            arguments); on the meta device only their shapes and dtypes matter.
        dtypes: the inputs' dtypes for ``input_size`` (default: the default dtype).
        device: where to run (default ``"meta"``).

    Multiply-adds are counted from each call's shapes for linear and bilinear layers, convolutions
    (transposed and grouped too), recurrent layers and cells, multi-head attention, normalisation and
    pooling layers (the conventions are in ``flambeau.nn.utils._mult_adds``); every other layer counts
    0 and shows ``--``. The forward pass size is the bytes of the outputs of the leaf modules (those
    without children).

    Returns:
        A :class:`ModelSummary`; ``print()`` it for the table.
    """
    if not isinstance(model, Module):
        raise TypeError(f"summary() expects an nn.Module, got {type(model).__name__}")
    if (input_size is None) == (input_data is None):
        raise ValueError("summary() needs exactly one of input_size and input_data")
    if input_data is not None:
        args = input_data if isinstance(input_data, (list, tuple)) else [input_data]
        args = [_to_device(a, device) for a in args]
    else:
        args = _meta_inputs(input_size, dtypes, device)

    result = ModelSummary()
    names = {id(m): n for n, m in model.named_modules()}
    counters: dict[int, int] = {}
    stack: list[LayerInfo] = []
    handles = []

    def pre_hook(module: Module, inputs: Any, kwargs: dict) -> None:
        name = names.get(id(module), type(module).__name__)
        depth = len(stack)
        parent = id(stack[-1]) if stack else 0
        counters[parent] = counters.get(parent, 0) + 1
        own = [p for p in module._parameters.values() if p is not None]
        info = LayerInfo(name, type(module).__name__, depth, counters[parent],
                         num_params=sum(p.numel() for p in own),
                         trainable=None if not own else all(p.requires_grad for p in own),
                         is_leaf=not any(True for _ in module.children()))
        result.layers.append(info)
        stack.append(info)

    def post_hook(module: Module, inputs: Any, kwargs: dict, output: Any) -> None:
        info = stack.pop()
        info.output_shape = _shape_of(output)
        info.output_bytes = sum(t.numel() * t.element_size() for t in _outputs(output))
        info.mult_adds = mult_adds(module, inputs, kwargs, output)

    saved = _swap_to_meta(model) if flambeau.device(device).type == "meta" else []
    try:
        for module in model.modules():
            handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
            handles.append(module.register_forward_hook(post_hook, with_kwargs=True, always_call=True))
        with flambeau.no_grad():
            model(*args)
    finally:
        for h in handles:
            h.remove()
        _restore(saved)

    params = list(model.parameters())  # each shared parameter once
    result.total_params = sum(p.numel() for p in params)
    result.trainable_params = sum(p.numel() for p in params if p.requires_grad)
    result.param_bytes = sum(p.numel() * p.element_size() for p in params) + \
        sum(b.numel() * b.element_size() for b in model.buffers())
    result.total_mult_adds = sum(layer.mult_adds for layer in result.layers)
    result.activation_bytes = sum(layer.output_bytes for layer in result.layers if layer.is_leaf)
    result.input_bytes = sum(t.numel() * t.element_size() for t in _outputs(list(args)))
    return result
