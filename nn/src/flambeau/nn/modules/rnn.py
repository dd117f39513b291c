"""Modules: recurrent layers (RNN, LSTM, GRU and their cells).

Parameter names, shapes, initialisation and ``repr`` are PyTorch's, so state dicts move between the
two: ``weight_ih_l{k}{suffix}`` ``(gates * hidden_size, input size)``, ``weight_hh_l{k}{suffix}``
``(gates * hidden_size, hidden_size or proj_size)``, ``bias_ih_l{k}{suffix}``, ``bias_hh_l{k}{suffix}``
and, for an LSTM with ``proj_size``, ``weight_hr_l{k}{suffix}`` ``(proj_size, hidden_size)``, the
suffix ``_reverse`` for the second direction. The computation is in ``functional/rnn.py``.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import flambeau
from flambeau import Tensor

from .. import init
from .._packed_sequence import PackedSequence
from ..functional import rnn as R
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    r"""Base class for RNN, LSTM and GRU: the parameters, their names and the argument checks.

    Args:
        mode: ``"LSTM"``, ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``.
        input_size: the number of features of the input.
        hidden_size: the number of features of the hidden state.
        num_layers: the number of stacked recurrent layers (default 1).
        bias: whether the layers have the biases ``b_ih`` and ``b_hh`` (default True).
        batch_first: input and output are ``(batch, seq, feature)`` rather than ``(seq, batch, feature)``.
        dropout: dropout probability on the outputs of each layer but the last, in training.
        bidirectional: whether each layer also runs over the sequence backwards.
        proj_size: LSTM only: project the hidden state to this size (0: no projection).
    """

    _flat_weights: list[Tensor | None]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(flambeau.empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [getattr(self, n) if hasattr(self, n) else None for n in self._flat_weights_names]
        self.flatten_parameters()

    def __setattr__(self, attr: str, value: Any) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            # keep _flat_weights current when a weight is replaced (``self.weight_ih_l0 = ...``)
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        r"""A no-op, as PyTorch's on the CPU (its CUDA path packs the weights into one buffer for cuDNN)."""

    def _apply(self, fn: Any, recurse: bool = True) -> "RNNBase":
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def reset_parameters(self) -> None:
        r"""Every weight and bias from :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})`, :math:`k = 1/\text{hidden\_size}`."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        r"""The parameters per layer and direction, in the order ``w_ih, w_hh, b_ih, b_hh, w_hr``."""
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "_flat_weights_names" in self.__dict__:
            self._init_flat_weights()

    # -- argument checks (PyTorch's messages) ---------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        if input.dtype != self._flat_weights[0].dtype:
            want = self._flat_weights[0].dtype
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({want}). Convert input: "
                             f"input.to({want}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, ...],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- running ----------------------------------------------------------------------------------------
    def _prepare(self, input: Any, hx: Any, name: str, lstm: bool) -> tuple:
        """Unpacks or unsqueezes the input, checks it and the initial state; returns what ``_run`` needs."""
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch = int(batch_sizes[0])
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            data = input
            if data.dim() not in (2, 3):
                tail = " tensor instead" if name == "RNN" else " instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {data.dim()}D{tail}")
            is_batched = data.dim() == 3
            if not is_batched:
                data = data.unsqueeze(batch_dim)
            max_batch = data.size(0) if self.batch_first else data.size(1)
        if hx is None:
            zeros = flambeau.zeros((self.num_layers * num_directions, max_batch, real_hidden), dtype=data.dtype,
                                   device=data.device)
            cells = flambeau.zeros((self.num_layers * num_directions, max_batch, self.hidden_size),
                                   dtype=data.dtype, device=data.device) if lstm else None
            h0, c0 = zeros, cells
        else:
            if lstm:
                h0, c0 = hx
                if not packed:
                    if is_batched and (h0.dim() != 3 or c0.dim() != 3):
                        raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                           f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                    if not is_batched:
                        if h0.dim() != 2 or c0.dim() != 2:
                            raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                               f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                        h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
                h0, c0 = self.permute_hidden(h0, sorted_indices), self.permute_hidden(c0, sorted_indices)
            else:
                h0, c0 = hx, None
                if not packed:
                    if is_batched and h0.dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h0.dim()}-D tensor")
                    if not is_batched:
                        if h0.dim() != 2:
                            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h0.dim()}-D "
                                               "tensor")
                        h0 = h0.unsqueeze(1)
                h0 = self.permute_hidden(h0, sorted_indices)
        self.check_input(data, batch_sizes)
        expected = self.get_expected_hidden_size(data, batch_sizes)
        if lstm:
            self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(c0, expected[:2] + (self.hidden_size,), "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(h0, expected)
        for t in (h0, c0):
            if t is not None and t.device != data.device:
                raise RuntimeError(f"Input and hidden tensors are not at the same device, found input tensor at "
                                   f"{data.device} and hidden tensor at {t.device}")
        return data, batch_sizes, sorted_indices, unsorted_indices, is_batched, h0, c0

    def _run(self, data: Tensor, batch_sizes: Tensor | None, h0: Tensor, c0: Tensor | None) -> tuple:
        """``(output, h_n, c_n)``; ``output`` packed rows when ``batch_sizes`` is given, else padded."""
        if batch_sizes is not None:
            rows = data
            sizes = [int(s) for s in batch_sizes.tolist()]
        else:
            seq = data.transpose(0, 1) if self.batch_first else data
            steps, batch = seq.shape[0], seq.shape[1]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            rows = seq.reshape(steps * batch, seq.shape[2])
            sizes = [batch] * steps
        out, h_n, c_n = R.run_layers(self.mode, rows, sizes, h0, c0, self.all_weights, self.num_layers,
                                     self.bidirectional, self.bias, self.proj_size > 0, self.dropout, self.training)
        if batch_sizes is None:
            out = out.reshape(steps, batch, out.shape[1])
            if self.batch_first:
                out = out.transpose(0, 1)
        return out, h_n, c_n

    def _finish(self, out: Tensor, hidden: Any, batch_sizes: Tensor | None, sorted_indices: Tensor | None,
                unsorted_indices: Tensor | None, is_batched: bool) -> tuple:
        if batch_sizes is not None:
            packed = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
            if isinstance(hidden, tuple):
                return packed, tuple(self.permute_hidden(h, unsorted_indices) for h in hidden)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
        return out, hidden


class RNN(RNNBase):
    r"""A multi-layer Elman RNN with :math:`\tanh` or ReLU:
    :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional: as
            :class:`RNNBase`.
        nonlinearity: ``"tanh"`` (default) or ``"relu"``.

    Inputs: ``input`` ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``), ``(L, H_in)`` unbatched, or
    a :class:`~flambeau.nn.utils.rnn.PackedSequence`; ``hx`` ``(D * num_layers, N, H_out)`` (zeros if None).

    Outputs: ``output`` ``(L, N, D * H_out)`` (or packed), ``h_n`` ``(D * num_layers, N, H_out)``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, h0, _ = self._prepare(input, hx, "RNN", False)
        out, h_n, _ = self._run(data, batch_sizes, h0, None)
        return self._finish(out, h_n, batch_sizes, sorted_indices, unsorted_indices, is_batched)


class LSTM(RNNBase):
    r"""A multi-layer long short-term memory RNN (gates in the order i, f, g, o):

    .. math::
        i, f, g, o = \sigma, \sigma, \tanh, \sigma\,(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh}) \\
        c_t = f \odot c_{t-1} + i \odot g, \quad h_t = o \odot \tanh(c_t)

    With ``proj_size > 0``, :math:`h_t = W_{hr} (o \odot \tanh(c_t))`.

    Inputs: ``input`` as :class:`RNN`'s; ``(h_0, c_0)``, ``h_0`` ``(D * num_layers, N, H_out)`` (``H_out``
    the ``proj_size`` when set), ``c_0`` ``(D * num_layers, N, H_cell)``; zeros if omitted.

    Outputs: ``output, (h_n, c_n)``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return expected[:2] + (self.hidden_size,)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:  # type: ignore[override]
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:  # type: ignore[override]
        if isinstance(hx, tuple):
            return tuple(RNNBase.permute_hidden(self, h, permutation) for h in hx)
        return RNNBase.permute_hidden(self, hx, permutation)

    def forward(self, input: Any, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, h0, c0 = self._prepare(input, hx, "LSTM",
                                                                                                True)
        out, h_n, c_n = self._run(data, batch_sizes, h0, c0)
        return self._finish(out, (h_n, c_n), batch_sizes, sorted_indices, unsorted_indices, is_batched)


class GRU(RNNBase):
    r"""A multi-layer gated recurrent unit RNN (gates in the order r, z, n):

    .. math::
        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}), \quad z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}) \\
        n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn})), \quad h' = (1 - z) \odot n + z \odot h

    Inputs and outputs as :class:`RNN`'s.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, h0, _ = self._prepare(input, hx, "GRU", False)
        out, h_n, _ = self._run(data, batch_sizes, h0, None)
        return self._finish(out, h_n, batch_sizes, sorted_indices, unsorted_indices, is_batched)


# -- cells --------------------------------------------------------------------------------------------

class RNNCellBase(Module):
    r"""Base class of the cells: ``weight_ih`` ``(chunks * hidden_size, input_size)``, ``weight_hh``
    ``(chunks * hidden_size, hidden_size)``, ``bias_ih`` and ``bias_hh`` ``(chunks * hidden_size,)``,
    all from :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})`, :math:`k = 1/\text{hidden\_size}`."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(flambeau.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(flambeau.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(flambeau.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(flambeau.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input: Tensor, hx: Tensor, label: str = "0") -> None:
        """PyTorch's checks of a cell's batched input and state."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                               f"{self.hidden_size}")


def _batched(name: str, input: Tensor, states: tuple[tuple[str, Tensor | None], ...]) -> bool:
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    for label, t in states:
        if t is not None and t.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {t.dim()}D instead")
    return input.dim() == 2


class RNNCell(RNNCellBase):
    r"""An Elman RNN cell: :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})` (or ReLU).

    Args:
        input_size, hidden_size: feature sizes.
        bias: whether to use ``bias_ih`` and ``bias_hh`` (default True).
        nonlinearity: ``"tanh"`` (default) or ``"relu"``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = _batched("RNNCell", input, (("hidden", hx),))
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = flambeau.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, hx)
        ret = R.rnn_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, self.nonlinearity)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""A long short-term memory cell (gates i, f, g, o): returns ``(h', c')``.

    Args:
        input_size, hidden_size: feature sizes.
        bias: whether to use ``bias_ih`` and ``bias_hh`` (default True).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        states = (("hx[0]", hx[0]), ("hx[1]", hx[1])) if hx is not None else ()
        is_batched = _batched("LSTMCell", input, states)
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = flambeau.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check(input, hx[0], "0")
        self._check(input, hx[1], "1")
        h, c = R.lstm_cell(input, hx[0], hx[1], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    r"""A gated recurrent unit cell (gates r, z, n; ``r`` multiplies ``W_hn h + b_hn``).

    Args:
        input_size, hidden_size: feature sizes.
        bias: whether to use ``bias_ih`` and ``bias_hh`` (default True).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = _batched("GRUCell", input, (("hidden", hx),))
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = flambeau.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check(input, hx)
        ret = R.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
