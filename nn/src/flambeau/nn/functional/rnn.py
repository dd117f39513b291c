"""Recurrent layers' computation (RNN, LSTM, GRU and their cells), used by ``flambeau.nn.modules.rnn``.

``torch.nn.functional`` has no public recurrent functions, so neither does this module (``__all__`` is
empty); the modules call :func:`run_layers` and the ``*_cell`` functions here.

Every layer works on packed rows: a padded batch ``(T, B, *)`` is the packed batch whose
``batch_sizes`` are all ``B``. For each layer and direction the input's projection for every time
step is one matrix product. A GRU layer and an RNN layer (tanh or relu) are then one op each
(``nn_gru_layer``, ``nn_rnn_layer``), whose kernels loop over the steps without recording any; an LSTM
layer without projection is one op with its input's projection (``nn_lstm_layer``: the kernel also
computes the input-side gradients, in one pass); an LSTM with ``proj_size`` adds the hidden state's
projection (``addmm``) and runs one fused cell op (``nn_lstm_cell``) per step. At step ``t`` only
the first ``batch_sizes[t]`` sequences advance; the others keep their state, which is how a packed
batch's sequences each end with their own final state. The reverse direction walks the steps from
the last, each sequence starting from the initial state at its own last step.
"""
from __future__ import annotations

from typing import Sequence

import flambeau as fb
from flambeau import Tensor

from .._lazy import LazyOp
from .dropout import dropout

__all__: list[str] = []

_lstm_cell = LazyOp("nn_lstm_cell")
_gru_cell = LazyOp("nn_gru_cell")
_lstm_layer = LazyOp("nn_lstm_layer")
_gru_layer = LazyOp("nn_gru_layer")
_rnn_layer = LazyOp("nn_rnn_layer")


def _affine(x: Tensor, weight_t: Tensor, bias: Tensor | None) -> Tensor:
    return fb.addmm(bias, x, weight_t) if bias is not None else x.matmul(weight_t)


def _direction(mode: str, x: Tensor, sizes: Sequence[int], h0: Tensor, c0: Tensor | None, weights: Sequence[Tensor],
               has_bias: bool, proj: bool, reverse: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """One layer in one direction over the packed rows ``x`` ``(N, I)``: ``(output (N, H'), h_n, c_n)``."""
    w_ih, w_hh = weights[0], weights[1]
    b_ih = weights[2] if has_bias else None
    b_hh = weights[3] if has_bias else None
    w_hr = weights[-1] if proj else None
    if mode == "GRU":
        xproj = _affine(x, w_ih.t(), b_ih)
        out, h, _ = _gru_layer(xproj, h0, w_hh, b_hh, tuple(sizes), reverse)
        return out, h, None
    if mode == "LSTM" and w_hr is None:
        # the whole layer, its input's projection included, is one op: one autograd node, its steps
        # looped inside the kernel
        out, h, c, _, _ = _lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, tuple(sizes), reverse)
        return out, h, c
    # RNN and the projected LSTM: both biases go into the input projection, once for every step
    xproj = _affine(x, w_ih.t(), b_ih + b_hh if has_bias else None)
    if mode != "LSTM":  # RNN_TANH, RNN_RELU: one op as well
        out, h = _rnn_layer(xproj, h0, w_hh, tuple(sizes), reverse, mode == "RNN_RELU")
        return out, h, None
    # an LSTM with a projection: its hidden state is the projected output, one cell op per step
    w_hh_t, w_hr_t = w_hh.t(), w_hr.t()
    steps = xproj.split(list(sizes), 0)
    batch = h0.shape[0]
    h, c = h0, c0
    outputs: list[Tensor | None] = [None] * len(sizes)
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    for t in order:
        bs = sizes[t]
        hs, cs = (h, c) if bs == batch else (h[:bs], c[:bs])
        hy, cy, _ = _lstm_cell(fb.addmm(steps[t], hs, w_hh_t), cs)
        hy = hy.matmul(w_hr_t)
        c = cy if bs == batch else fb.cat([cy, c[bs:]], 0)
        outputs[t] = hy
        h = hy if bs == batch else fb.cat([hy, h[bs:]], 0)
    return fb.cat(outputs, 0), h, c


def run_layers(mode: str, x: Tensor, sizes: Sequence[int], hx: Tensor, cx: Tensor | None,
               weights: Sequence[Sequence[Tensor]], num_layers: int, bidirectional: bool, has_bias: bool,
               proj: bool, dropout_p: float, training: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """Runs a stack of recurrent layers over packed rows.

    Args:
        mode: ``"LSTM"``, ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``.
        x: the packed rows ``(N, input_size)``, ``sum(sizes) == N``.
        sizes: the batch size of each time step (non-increasing).
        hx: initial hidden states ``(num_layers * num_directions, B, H')``; ``cx`` likewise for the LSTM.
        weights: per layer and direction, as ``RNNBase.all_weights`` lists them.
        dropout_p: dropout on each layer's output but the last, when ``training``.

    Returns:
        ``(output (N, num_directions * H'), h_n, c_n)`` (``c_n`` None but for the LSTM).
    """
    dirs = 2 if bidirectional else 1
    layer_input = x
    h_n: list[Tensor] = []
    c_n: list[Tensor] = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            out, h, c = _direction(mode, layer_input, sizes, hx[k], cx[k] if cx is not None else None, weights[k],
                                   has_bias, proj, reverse=d == 1)
            outs.append(out)
            h_n.append(h)
            if c is not None:
                c_n.append(c)
        layer_input = outs[0] if dirs == 1 else fb.cat(outs, 1)
        if dropout_p > 0 and training and layer < num_layers - 1:
            layer_input = dropout(layer_input, dropout_p, True)
    return layer_input, fb.stack(h_n, 0), fb.stack(c_n, 0) if cx is not None else None


# -- cells ------------------------------------------------------------------------------------------

def rnn_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None,
             nonlinearity: str) -> Tensor:
    """``act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``act`` tanh or relu."""
    pre = _affine(input, w_ih.t(), b_ih) + _affine(hx, w_hh.t(), b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_cell(input: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
              b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``(h', c')``."""
    gates = fb.addmm(_affine(input, w_ih.t(), b_ih), hx, w_hh.t())
    if b_hh is not None:
        gates = gates + b_hh
    hy, cy, _ = _lstm_cell(gates, cx)
    return hy, cy


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
             b_hh: Tensor | None) -> Tensor:
    """One GRU step: ``h'``."""
    return _gru_cell(_affine(input, w_ih.t(), b_ih), _affine(hx, w_hh.t(), b_hh), hx)[0]
