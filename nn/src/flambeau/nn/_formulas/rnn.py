"""Backward formulas of flambeau-nn's recurrent cell and layer ops (``nn_lstm_cell``, ``nn_gru_cell``,
``nn_lstm_layer``, ``nn_gru_layer``, ``nn_rnn_layer``).

Without a graph of the gradient wanted, they call the fused backward op (a kernel where the backend
has one) on the workspace the forward pass returned. With ``create_graph=True`` they recompute the
cell with differentiable flambeau ops, so that the second derivative sees how the workspace depends
on the inputs, and write the backward pass with the same ops.
"""
from __future__ import annotations

from typing import Any

import flambeau as fb
from flambeau.autograd.formula import Formula

from .._ops import _rnn_math as M

_BOUND: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The op ``name``, bound at first use: formulas are imported while the registry is being filled."""
    fn = _BOUND.get(name)
    if fn is None:
        fn = _BOUND[name] = fb.ops.function(name)
    return fn


def _lstm_cell(ctx: Any, grads: list) -> tuple:
    gates, cx = ctx.args
    grad_hy, grad_cy = grads[0], grads[1]
    if grad_hy is None and grad_cy is None:
        return (None, None)
    if fb.is_grad_enabled():
        _, cy, work = M.lstm_cell(gates, cx)
        dgates, dcx = M.lstm_cell_backward(grad_hy, grad_cy, cx, cy, work)
    else:
        _, cy, work = ctx.result
        dgates, dcx = _op("nn_lstm_cell_backward")(grad_hy, grad_cy, cx, cy, work)
    return (dgates if ctx.needs(0) else None, dcx if ctx.needs(1) else None)


def _gru_cell(ctx: Any, grads: list) -> tuple:
    igates, hgates, hx = ctx.args
    grad_hy = grads[0]
    if grad_hy is None:
        return (None, None, None)
    if fb.is_grad_enabled():
        _, work = M.gru_cell(igates, hgates, hx)
        di, dh, dhx = M.gru_cell_backward(grad_hy, hx, work)
    else:
        work = ctx.result[1]
        di, dh, dhx = _op("nn_gru_cell_backward")(grad_hy, hx, work)
    return (di if ctx.needs(0) else None, dh if ctx.needs(1) else None, dhx if ctx.needs(2) else None)


def _lstm_layer(ctx: Any, grads: list) -> tuple:
    input, h0, c0, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse = ctx.args
    g_out, g_h, g_c = grads[0], grads[1], grads[2]
    if g_out is None and g_h is None and g_c is None:
        return (None,) * 9
    if fb.is_grad_enabled():
        # create_graph: the layer again in differentiable ops, differentiated by autograd itself, so
        # that the gradients' own graph reaches the inputs
        with fb.enable_grad():
            outs = M.lstm_layer(input, h0, c0, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse)[:3]
            pairs = [(o, g) for o, g in zip(outs, (g_out, g_h, g_c)) if g is not None]
            inputs = [input, h0, c0, w_ih, w_hh, b_ih, b_hh]
            wanted = [i for i, x in enumerate(inputs) if x is not None and ctx.needs(i)]
            got = fb.autograd.grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                                   create_graph=True, allow_unused=True)
        result: list = [None] * 9
        for i, g in zip(wanted, got):
            result[i] = g
        return tuple(result)
    output, _, _, work, cells = ctx.result
    need_bias = (b_ih is not None and ctx.needs(5)) or (b_hh is not None and ctx.needs(6))
    mask = (ctx.needs(0), True, True, ctx.needs(3), ctx.needs(4), need_bias)
    gx, gh, gc, gw_ih, gw_hh, gb = _op("nn_lstm_layer_backward")(g_out, g_h, g_c, input, h0, c0, w_ih, w_hh, output,
                                                                  work, cells, batch_sizes, reverse, mask)
    # both biases get the whole of the gates' gradient; each leaf its own tensor
    gb_ih = gb if b_ih is not None and ctx.needs(5) else None
    gb_hh = (gb.clone() if gb_ih is not None else gb) if b_hh is not None and ctx.needs(6) else None
    return (gx if ctx.needs(0) else None, gh if ctx.needs(1) else None, gc if ctx.needs(2) else None,
            gw_ih if ctx.needs(3) else None, gw_hh if ctx.needs(4) else None, gb_ih, gb_hh, None, None)


def _gru_layer(ctx: Any, grads: list) -> tuple:
    xproj, h0, w_hh, b_hh, batch_sizes, reverse = ctx.args
    g_out, g_h = grads[0], grads[1]
    if g_out is None and g_h is None:
        return (None,) * 6
    if fb.is_grad_enabled():  # create_graph: as _lstm_layer
        with fb.enable_grad():
            outs = M.gru_layer(xproj, h0, w_hh, b_hh, batch_sizes, reverse)[:2]
            pairs = [(o, g) for o, g in zip(outs, (g_out, g_h)) if g is not None]
            inputs = [xproj, h0, w_hh, b_hh]
            wanted = [i for i, x in enumerate(inputs) if x is not None and ctx.needs(i)]
            got = fb.autograd.grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                                   create_graph=True, allow_unused=True)
        result: list = [None] * 6
        for i, g in zip(wanted, got):
            result[i] = g
        return tuple(result)
    output, _, work = ctx.result
    gx, gh, gw, gb = _op("nn_gru_layer_backward")(g_out, g_h, h0, w_hh, output, work, batch_sizes, reverse)
    return (gx if ctx.needs(0) else None, gh if ctx.needs(1) else None, gw if ctx.needs(2) else None,
            gb if ctx.needs(3) else None, None, None)


def _rnn_layer(ctx: Any, grads: list) -> tuple:
    xproj, h0, w_hh, batch_sizes, reverse, relu = ctx.args
    g_out, g_h = grads[0], grads[1]
    if g_out is None and g_h is None:
        return (None,) * 6
    if fb.is_grad_enabled():  # create_graph: as _lstm_layer
        with fb.enable_grad():
            outs = M.rnn_layer(xproj, h0, w_hh, batch_sizes, reverse, relu)
            pairs = [(o, g) for o, g in zip(outs, (g_out, g_h)) if g is not None]
            inputs = [xproj, h0, w_hh]
            wanted = [i for i in range(3) if ctx.needs(i)]
            got = fb.autograd.grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                                   create_graph=True, allow_unused=True)
        result: list = [None] * 6
        for i, g in zip(wanted, got):
            result[i] = g
        return tuple(result)
    output = ctx.result[0]
    gx, gh, gw = _op("nn_rnn_layer_backward")(g_out, g_h, h0, w_hh, output, batch_sizes, reverse, relu)
    return (gx if ctx.needs(0) else None, gh if ctx.needs(1) else None, gw if ctx.needs(2) else None, None, None,
            None)


def formulas() -> dict[str, Any]:
    return {
        "nn_lstm_cell": Formula(_lstm_cell, save=("gates", "cx"), result=True, nondiff_outputs=(2,)),
        "nn_gru_cell": Formula(_gru_cell, save=("igates", "hgates", "hx"), result=True, nondiff_outputs=(1,)),
        "nn_lstm_layer": Formula(_lstm_layer, save=("input", "h0", "c0", "w_ih", "w_hh", "b_ih", "b_hh"),
                                 result=True, nondiff_outputs=(3, 4)),
        "nn_gru_layer": Formula(_gru_layer, save=("xproj", "h0", "w_hh", "b_hh"), result=True, nondiff_outputs=(2,)),
        "nn_rnn_layer": Formula(_rnn_layer, save=("xproj", "h0", "w_hh"), result=True),
    }
