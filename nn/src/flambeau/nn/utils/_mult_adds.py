"""Multiply-adds of one module call, for :func:`flambeau.nn.utils.summary`, from the module's
configuration and the shapes of what it was given and returned (on the meta device only shapes exist).

The count is of the products of the computation that accumulate into an output, the quantity
torchinfo calls mult-adds and ptflops MACs, with these conventions (biases, activations and the
elementwise gate arithmetic of recurrent cells count nothing):

- ``Linear``: ``in_features * out_features`` per output row; ``Bilinear``: ``in1 * in2 * out`` per row.
- Convolutions: each output element takes ``in_channels / groups * prod(kernel_size)`` products.
  Transposed convolutions scatter instead: each input element multiplies
  ``out_channels / groups * prod(kernel_size)`` weights.
- ``RNN``/``LSTM``/``GRU``: per time step of each sequence, per layer and direction,
  ``gates * hidden_size * (layer input + recurrent input)`` (gates: 1, 4, 3), plus
  ``hidden_size * proj_size`` for an LSTM's projection. The cells (``RNNCell``...) likewise per row.
- ``MultiheadAttention``: the query, key and value projections, the scores ``Q K^T`` and their
  weighting of ``V`` (``L * S * embed_dim`` each per batch element), and the output projection.
- Normalisation (batch, instance, group, layer, RMS): one per output element to normalise, one more
  with the affine scale; ``LocalResponseNorm``: ``size`` per output element.
- Pooling with a window (max, average, power-average, fractional max): the window's size per output
  element; adaptive pooling: one per input element.

Every other module counts 0 (the table shows ``--``); a container counts nothing of its own (its
children's calls are their own rows).
"""
from __future__ import annotations

import math
import re
from typing import Any

from flambeau import Tensor

from ..modules.module import Module

__all__ = ["mult_adds"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_CELL_GATES = {"RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}


def _spatial_dims(module: Module) -> int:
    """1, 2 or 3 for a module class named ...1d, ...2d, ...3d (0 otherwise)."""
    for cls in type(module).__mro__:
        found = re.search(r"([123])d$", cls.__name__)
        if found:
            return int(found.group(1))
    return 0


def _window(kernel_size: Any, dims: int) -> int:
    if isinstance(kernel_size, int):
        return kernel_size ** max(dims, 1)
    return math.prod(kernel_size)


def _first_tensor(args: tuple) -> Tensor | None:
    return args[0] if args and isinstance(args[0], Tensor) else None


def _rows(t: Tensor) -> int:
    """Elements over the last dim's size: the rows a matrix product sees."""
    return t.numel() // t.shape[-1] if t.ndim and t.shape[-1] else 0


def _linear_like(module: Module, output: Tensor) -> int | None:
    from ..modules.linear import Bilinear, Linear

    if isinstance(module, Linear):
        return _rows(output) * module.in_features * module.out_features
    if isinstance(module, Bilinear):
        return _rows(output) * module.in1_features * module.in2_features * module.out_features
    return None


def _conv(module: Module, args: tuple, output: Tensor) -> int:
    kernel = math.prod(module.kernel_size)
    if module.transposed:
        x = _first_tensor(args)
        return 0 if x is None else x.numel() * module.out_channels // module.groups * kernel
    return output.numel() * module.in_channels // module.groups * kernel


def _recurrent(module: Module, args: tuple) -> int:
    from ..utils.rnn import PackedSequence

    x = args[0] if args else None
    if isinstance(x, PackedSequence):
        steps = x.data.shape[0]  # one row per (sequence, time step) actually run
    elif isinstance(x, Tensor):
        steps = _rows(x)
    else:
        return 0
    gates = _GATES.get(module.mode, 0)
    hidden = module.hidden_size
    recurrent = module.proj_size or hidden
    dirs = 2 if module.bidirectional else 1
    total = 0
    for layer in range(module.num_layers):
        layer_in = module.input_size if layer == 0 else recurrent * dirs
        per_direction = gates * hidden * (layer_in + recurrent)
        if module.proj_size:
            per_direction += hidden * module.proj_size
        total += dirs * per_direction
    return steps * total


def _cell(module: Module, args: tuple) -> int:
    x = _first_tensor(args)
    if x is None:
        return 0
    rows = x.numel() // module.input_size if module.input_size else 0
    return rows * _CELL_GATES[type(module).__name__] * module.hidden_size * (module.input_size + module.hidden_size)


def _attention(module: Module, args: tuple, kwargs: dict) -> int:
    names = ("query", "key", "value")
    q, k, v = (args[i] if len(args) > i else kwargs.get(names[i]) for i in range(3))
    if not all(isinstance(t, Tensor) for t in (q, k, v)):
        return 0
    e = module.embed_dim
    batched = q.ndim == 3
    batch = (q.shape[0] if module.batch_first else q.shape[1]) if batched else 1
    length = q.numel() // (e * batch)
    source = k.numel() // (module.kdim * batch)
    projections = batch * (length * e * e + source * module.kdim * e + source * module.vdim * e)
    attention = 2 * batch * length * source * e  # scores Q K^T, then the weighted sum of V, over all heads
    return projections + attention + batch * length * e * e  # and the output projection


def _norm(module: Module, output: Tensor) -> int:
    affine = getattr(module, "affine", None)
    if affine is None:
        affine = getattr(module, "elementwise_affine", False)
    return output.numel() * (2 if affine else 1)


def mult_adds(module: Module, args: tuple, kwargs: dict, output: Any) -> int:
    """Multiply-adds of the call ``module(*args, **kwargs) -> output`` (see the module docstring)."""
    from ..modules import conv, normalization, pooling, rnn, transformer

    # from the inputs' shapes (a recurrent layer's output may be a PackedSequence)
    if isinstance(module, rnn.RNNBase):
        return _recurrent(module, args)
    if isinstance(module, rnn.RNNCellBase):
        return _cell(module, args)
    if isinstance(module, transformer.MultiheadAttention):
        return _attention(module, args, kwargs)
    # from the output's shape
    result = output[0] if isinstance(output, (tuple, list)) and output and isinstance(output[0], Tensor) else output
    if not isinstance(result, Tensor):
        return 0
    linear = _linear_like(module, result) if result.ndim else None
    if linear is not None:
        return linear
    if isinstance(module, conv._ConvNd):
        return _conv(module, args, result)
    if isinstance(module, (normalization._NormBase, normalization.LayerNorm, normalization.GroupNorm,
                           normalization.RMSNorm)):
        return _norm(module, result)
    if isinstance(module, normalization.LocalResponseNorm):
        return result.numel() * module.size
    if isinstance(module, (pooling._MaxPoolNd, pooling._AvgPoolNd, pooling._LPPoolNd, pooling._FractionalMaxPoolNd)):
        return result.numel() * _window(module.kernel_size, _spatial_dims(module))
    if isinstance(module, (pooling._AdaptiveMaxPoolNd, pooling._AdaptiveAvgPoolNd)):
        x = _first_tensor(args)
        return 0 if x is None else x.numel()
    return 0
