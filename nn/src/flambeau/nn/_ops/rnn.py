"""Declarations of flambeau-nn's recurrent layers (RNN, LSTM, GRU and their cells) ops.

The layers compute the input's projection for every time step in one matrix product, then run one
fused cell op per step on the gate pre-activations (as PyTorch's ``_thnn_fused_lstm_cell``):

- ``nn_lstm_cell(gates, cx) -> (hy, cy, workspace)``, ``gates = x W_ih^T + b_ih + h W_hh^T + b_hh``
  in the order ``i, f, g, o``; the workspace holds the activated gates for the backward pass;
- ``nn_gru_cell(igates, hgates, hx) -> (hy, workspace)``, the input and hidden projections apart
  since ``r`` multiplies the hidden one's ``n`` part (bias included);
- ``nn_lstm_cell_backward`` and ``nn_gru_cell_backward``: the fused backward passes;
- ``nn_lstm_layer``, ``nn_gru_layer``, ``nn_rnn_layer`` (tanh or relu) and their backward ops: a
  whole layer in one direction over packed rows, one op (and one autograd node) per layer, whose
  kernels loop over the steps.

Each has a composite (``_rnn_math``), so every backend runs them.
"""
from __future__ import annotations

from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import fmt_shape, type_name

from . import _rnn_math as M


def _check_float(op: str, *tensors: Tensor | None) -> None:
    first = tensors[0]
    if not first.dtype.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{type_name(first.dtype)}\'')
    for t in tensors[1:]:
        if t is None:
            continue
        if t.dtype != first.dtype:
            raise RuntimeError(f"{op}: expected all tensors to have dtype {type_name(first.dtype)}, but got "
                               f"{type_name(t.dtype)}")
        if t.device != first.device:
            raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found at least two "
                               f"devices, {first.device} and {t.device}!")


def _check_shape(op: str, name: str, t: Tensor | None, shape: tuple[int, ...]) -> None:
    if t is not None and tuple(t.shape) != shape:
        raise RuntimeError(f"{op}: expected {name} of size {fmt_shape(shape)}, but got {fmt_shape(t.shape)}")


def _gates_hidden(op: str, gates: Tensor, state: Tensor, count: int) -> tuple[int, int]:
    """``(batch, hidden)`` of 2-D ``gates`` ``(B, count * H)`` against the state ``(B, H)``."""
    if gates.dim() != 2 or state.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D gates and state, but got gates of size {fmt_shape(gates.shape)} and "
                           f"state of size {fmt_shape(state.shape)}")
    b, h = state.shape
    _check_shape(op, "gates", gates, (b, count * h))
    return b, h


def _lstm_cell_meta(gates, cx):
    _check_float("nn_lstm_cell", gates, cx)
    b, h = _gates_hidden("nn_lstm_cell", gates, cx, 4)
    return [((b, h), gates.dtype), ((b, h), gates.dtype), ((b, 4 * h), gates.dtype)]


def _lstm_cell_backward_meta(grad_hy, grad_cy, cx, cy, workspace):
    op = "nn_lstm_cell_backward"
    _check_float(op, cx, grad_hy, grad_cy, cy, workspace)
    b, h = _gates_hidden(op, workspace, cx, 4)
    for name, t in (("grad_hy", grad_hy), ("grad_cy", grad_cy), ("cy", cy)):
        _check_shape(op, name, t, (b, h))
    return [((b, 4 * h), cx.dtype), ((b, h), cx.dtype)]


def _gru_cell_meta(igates, hgates, hx):
    op = "nn_gru_cell"
    _check_float(op, igates, hgates, hx)
    b, h = _gates_hidden(op, igates, hx, 3)
    _check_shape(op, "hgates", hgates, (b, 3 * h))
    return [((b, h), igates.dtype), ((b, 4 * h), igates.dtype)]


def _gru_cell_backward_meta(grad_hy, hx, workspace):
    op = "nn_gru_cell_backward"
    _check_float(op, hx, grad_hy, workspace)
    b, h = _gates_hidden(op, workspace, hx, 4)
    _check_shape(op, "grad_hy", grad_hy, (b, h))
    return [((b, 3 * h), hx.dtype), ((b, 3 * h), hx.dtype), ((b, h), hx.dtype)]


def _check_batch_sizes(op: str, batch_sizes, rows: int, batch: int) -> None:
    sizes = list(batch_sizes)
    if any(isinstance(b, bool) or not isinstance(b, int) for b in sizes):
        raise TypeError(f"{op}: batch_sizes must be a sequence of ints")
    if any(b < 0 for b in sizes) or any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError(f"{op}: batch_sizes must be non-negative and non-increasing, got {sizes}")
    if sum(sizes) != rows:
        raise RuntimeError(f"{op}: batch_sizes sum to {sum(sizes)}, but the input has {rows} rows")
    if sizes and sizes[0] > batch:
        raise RuntimeError(f"{op}: batch_sizes[0] is {sizes[0]}, but the state holds {batch} sequences")


def _lstm_weights(op: str, input: Tensor, b: int, h: int, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                  b_hh: Tensor | None) -> None:
    _check_shape(op, "w_ih", w_ih, (4 * h, input.shape[1]))
    _check_shape(op, "w_hh", w_hh, (4 * h, h))
    _check_shape(op, "b_ih", b_ih, (4 * h,))
    _check_shape(op, "b_hh", b_hh, (4 * h,))


def _lstm_layer_meta(input, h0, c0, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse=False):
    op = "nn_lstm_layer"
    _check_float(op, input, h0, c0, w_ih, w_hh, b_ih, b_hh)
    if h0.dim() != 2 or c0.dim() != 2 or input.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D input, h0 and c0, but got sizes {fmt_shape(input.shape)}, "
                           f"{fmt_shape(h0.shape)} and {fmt_shape(c0.shape)}")
    b, h = c0.shape
    _check_shape(op, "h0", h0, (b, h))
    _lstm_weights(op, input, b, h, w_ih, w_hh, b_ih, b_hh)
    n = input.shape[0]
    _check_batch_sizes(op, batch_sizes, n, b)
    dt = input.dtype
    return [((n, h), dt), ((b, h), dt), ((b, h), dt), ((n, 4 * h), dt), ((n, h), dt)]


def _lstm_layer_backward_meta(grad_output, grad_hn, grad_cn, input, h0, c0, w_ih, w_hh, output, workspace,
                              cell_states, batch_sizes, reverse, output_mask):
    op = "nn_lstm_layer_backward"
    _check_float(op, h0, grad_output, grad_hn, grad_cn, input, c0, w_ih, w_hh, output, workspace, cell_states)
    if h0.dim() != 2 or output.dim() != 2 or input.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D input and states")
    b, h = h0.shape
    n = output.shape[0]
    for name, t, shape in (("grad_output", grad_output, (n, h)), ("grad_hn", grad_hn, (b, h)),
                           ("grad_cn", grad_cn, (b, h)), ("c0", c0, (b, h)), ("input", input, (n, input.shape[1])),
                           ("output", output, (n, h)), ("workspace", workspace, (n, 4 * h)),
                           ("cell_states", cell_states, (n, h))):
        _check_shape(op, name, t, shape)
    _lstm_weights(op, input, b, h, w_ih, w_hh, None, None)
    _check_batch_sizes(op, batch_sizes, n, b)
    mask = tuple(bool(m) for m in output_mask)
    if len(mask) != 6:
        raise RuntimeError(f"{op}: output_mask must have 6 entries, got {len(mask)}")
    dt = h0.dtype
    shapes = ((n, input.shape[1]), (b, h), (b, h), tuple(w_ih.shape), (4 * h, h), (4 * h,))
    # the states' gradients come with the steps' walk: always computed
    return [(shape if m or i in (1, 2) else (0,), dt) for i, (shape, m) in enumerate(zip(shapes, mask))]


def _gru_layer_meta(xproj, h0, w_hh, b_hh, batch_sizes, reverse=False):
    op = "nn_gru_layer"
    _check_float(op, xproj, h0, w_hh, b_hh)
    if h0.dim() != 2 or xproj.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D xproj and h0, but got sizes {fmt_shape(xproj.shape)} and "
                           f"{fmt_shape(h0.shape)}")
    b, h = h0.shape
    _check_shape(op, "w_hh", w_hh, (3 * h, h))
    _check_shape(op, "b_hh", b_hh, (3 * h,))
    if xproj.shape[1] != 3 * h:
        raise RuntimeError(f"{op}: expected xproj of size [*, {3 * h}], but got {fmt_shape(xproj.shape)}")
    n = xproj.shape[0]
    _check_batch_sizes(op, batch_sizes, n, b)
    dt = xproj.dtype
    return [((n, h), dt), ((b, h), dt), ((n, 4 * h), dt)]


def _gru_layer_backward_meta(grad_output, grad_hn, h0, w_hh, output, workspace, batch_sizes, reverse=False):
    op = "nn_gru_layer_backward"
    _check_float(op, h0, grad_output, grad_hn, w_hh, output, workspace)
    if h0.dim() != 2 or output.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D states")
    b, h = h0.shape
    n = output.shape[0]
    for name, t, shape in (("grad_output", grad_output, (n, h)), ("grad_hn", grad_hn, (b, h)),
                           ("w_hh", w_hh, (3 * h, h)), ("workspace", workspace, (n, 4 * h))):
        _check_shape(op, name, t, shape)
    _check_batch_sizes(op, batch_sizes, n, b)
    dt = h0.dtype
    return [((n, 3 * h), dt), ((b, h), dt), ((3 * h, h), dt), ((3 * h,), dt)]


def _rnn_layer_meta(xproj, h0, w_hh, batch_sizes, reverse=False, relu=False):
    op = "nn_rnn_layer"
    _check_float(op, xproj, h0, w_hh)
    if h0.dim() != 2 or xproj.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D xproj and h0, but got sizes {fmt_shape(xproj.shape)} and "
                           f"{fmt_shape(h0.shape)}")
    b, h = h0.shape
    _check_shape(op, "w_hh", w_hh, (h, h))
    if xproj.shape[1] != h:
        raise RuntimeError(f"{op}: expected xproj of size [*, {h}], but got {fmt_shape(xproj.shape)}")
    n = xproj.shape[0]
    _check_batch_sizes(op, batch_sizes, n, b)
    return [((n, h), xproj.dtype), ((b, h), xproj.dtype)]


def _rnn_layer_backward_meta(grad_output, grad_hn, h0, w_hh, output, batch_sizes, reverse=False, relu=False):
    op = "nn_rnn_layer_backward"
    _check_float(op, h0, grad_output, grad_hn, w_hh, output)
    if h0.dim() != 2 or output.dim() != 2:
        raise RuntimeError(f"{op}: expected 2-D states")
    b, h = h0.shape
    n = output.shape[0]
    for name, t, shape in (("grad_output", grad_output, (n, h)), ("grad_hn", grad_hn, (b, h)),
                           ("w_hh", w_hh, (h, h)), ("output", output, (n, h))):
        _check_shape(op, name, t, shape)
    _check_batch_sizes(op, batch_sizes, n, b)
    dt = h0.dtype
    return [((n, h), dt), ((b, h), dt), ((h, h), dt)]


def declarations() -> list[OpDecl]:
    common = dict(method=False, export=False)
    return [
        OpDecl("nn_lstm_cell", "(gates: Tensor, cx: Tensor)", _lstm_cell_meta, composite=M.lstm_cell,
               output_names=("hy", "cy", "workspace"),
               doc="One LSTM step from the gate pre-activations ``(B, 4H)`` (order i, f, g, o) and the cell state "
                   "``(B, H)``: ``(hy, cy, workspace)``, the workspace being the activated gates.", **common),
        OpDecl("nn_lstm_cell_backward", "(grad_hy: Tensor?, grad_cy: Tensor?, cx: Tensor, cy: Tensor, "
               "workspace: Tensor)", _lstm_cell_backward_meta, composite=M.lstm_cell_backward,
               output_names=("grad_gates", "grad_cx"), differentiable=False,
               doc="The gradients of ``nn_lstm_cell``'s gate pre-activations and cell state.", **common),
        OpDecl("nn_gru_cell", "(igates: Tensor, hgates: Tensor, hx: Tensor)", _gru_cell_meta, composite=M.gru_cell,
               output_names=("hy", "workspace"),
               doc="One GRU step from the input and hidden projections ``(B, 3H)`` (order r, z, n, biases "
                   "included) and the hidden state ``(B, H)``: ``(hy, workspace)``, the workspace "
                   "``[r, z, n, h_n]``.", **common),
        OpDecl("nn_gru_cell_backward", "(grad_hy: Tensor, hx: Tensor, workspace: Tensor)", _gru_cell_backward_meta,
               composite=M.gru_cell_backward, output_names=("grad_igates", "grad_hgates", "grad_hx"),
               differentiable=False,
               doc="The gradients of ``nn_gru_cell``'s input and hidden projections and hidden state.", **common),
        OpDecl("nn_lstm_layer", "(input: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor?, "
               "b_hh: Tensor?, batch_sizes, reverse=False)", _lstm_layer_meta, composite=M.lstm_layer,
               output_names=("output", "h_n", "c_n", "workspace", "cell_states"),
               doc="One LSTM layer in one direction over packed rows ``input`` ``(N, I)``, its weights and biases "
                   "as ``nn.LSTM``'s, ``batch_sizes`` the sequences running at each step. Returns the output "
                   "``(N, H)``, the final states and, for the backward pass, the activated gates and cell states.",
               **common),
        OpDecl("nn_lstm_layer_backward", "(grad_output: Tensor?, grad_hn: Tensor?, grad_cn: Tensor?, input: Tensor, "
               "h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor, output: Tensor, workspace: Tensor, "
               "cell_states: Tensor, batch_sizes, reverse, output_mask)",
               _lstm_layer_backward_meta, composite=M.lstm_layer_backward,
               output_names=("grad_input", "grad_h0", "grad_c0", "grad_w_ih", "grad_w_hh", "grad_bias"),
               differentiable=False,
               doc="The gradients of ``nn_lstm_layer``'s input, initial states, weights and bias (one for both "
                   "biases: each gets all of it). Those masked off come back empty; the states' always come.",
               **common),
        OpDecl("nn_gru_layer", "(xproj: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor?, batch_sizes, reverse=False)",
               _gru_layer_meta, composite=M.gru_layer, output_names=("output", "h_n", "workspace"),
               doc="One GRU layer in one direction over packed rows: ``xproj`` ``(N, 3H)`` the input's projection "
                   "with ``b_ih``. Returns the output ``(N, H)``, the final state and the cells' workspaces.",
               **common),
        OpDecl("nn_gru_layer_backward", "(grad_output: Tensor?, grad_hn: Tensor?, h0: Tensor, w_hh: Tensor, "
               "output: Tensor, workspace: Tensor, batch_sizes, reverse=False)", _gru_layer_backward_meta,
               composite=M.gru_layer_backward, output_names=("grad_xproj", "grad_h0", "grad_w_hh", "grad_b_hh"),
               differentiable=False,
               doc="The gradients of ``nn_gru_layer``'s projection, initial state, hidden weight and bias.", **common),
        OpDecl("nn_rnn_layer", "(xproj: Tensor, h0: Tensor, w_hh: Tensor, batch_sizes, reverse=False, relu=False)",
               _rnn_layer_meta, composite=M.rnn_layer, output_names=("output", "h_n"),
               doc="One ``RNN`` layer (tanh, or relu) in one direction over packed rows: ``xproj`` ``(N, H)`` the "
                   "input's projection with both biases. Returns the output ``(N, H)`` and the final state.",
               **common),
        OpDecl("nn_rnn_layer_backward", "(grad_output: Tensor?, grad_hn: Tensor?, h0: Tensor, w_hh: Tensor, "
               "output: Tensor, batch_sizes, reverse=False, relu=False)", _rnn_layer_backward_meta,
               composite=M.rnn_layer_backward, output_names=("grad_xproj", "grad_h0", "grad_w_hh"),
               differentiable=False,
               doc="The gradients of ``nn_rnn_layer``'s projection, initial state and hidden weight.", **common),
    ]
