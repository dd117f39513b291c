"""The fused recurrent cells' maths written with flambeau ops: their composites and backward passes.

Every backend runs these (the composite path), autograd differentiates them (double backward of the
fused kernels' formulas), and the CPU kernels must agree with them. Gate orders are PyTorch's:
``i, f, g, o`` for the LSTM, ``r, z, n`` for the GRU.
"""
from __future__ import annotations

import flambeau as fb
from flambeau import Tensor


def lstm_activations(gates: Tensor) -> Tensor:
    """``[sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)]`` of the pre-activations ``gates`` (B, 4H)."""
    i, f, g, o = gates.chunk(4, 1)
    return fb.cat([i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()], 1)


def lstm_cell(gates: Tensor, cx: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(hy, cy, workspace)``: ``cy = f * cx + i * g``, ``hy = o * tanh(cy)``; the workspace is the
    activated gates, which the backward pass reads."""
    work = lstm_activations(gates)
    i, f, g, o = work.chunk(4, 1)
    cy = f * cx + i * g
    hy = o * cy.tanh()
    return hy, cy, work


def lstm_cell_backward(grad_hy: Tensor | None, grad_cy: Tensor | None, cx: Tensor, cy: Tensor,
                       workspace: Tensor) -> tuple[Tensor, Tensor]:
    """``(grad_gates, grad_cx)``: the gradients of the gate pre-activations and of ``cx``."""
    i, f, g, o = workspace.chunk(4, 1)
    tc = cy.tanh()
    gh = grad_hy if grad_hy is not None else fb.zeros_like(cy)
    gc = gh * o * (1 - tc * tc)
    if grad_cy is not None:
        gc = gc + grad_cy
    di = gc * g * i * (1 - i)
    df = gc * cx * f * (1 - f)
    dg = gc * i * (1 - g * g)
    do = gh * tc * o * (1 - o)
    return fb.cat([di, df, dg, do], 1), gc * f


def gru_cell(igates: Tensor, hgates: Tensor, hx: Tensor) -> tuple[Tensor, Tensor]:
    """``(hy, workspace)``: ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``,
    ``n = tanh(i_n + r * h_n)``, ``hy = (1 - z) * n + z * hx``; the workspace is ``[r, z, n, h_n]``."""
    ir, iz, in_ = igates.chunk(3, 1)
    hr, hz, hn = hgates.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    hy = n + z * (hx - n)
    return hy, fb.cat([r, z, n, hn], 1)


def gru_cell_backward(grad_hy: Tensor, hx: Tensor, workspace: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(grad_igates, grad_hgates, grad_hx)``."""
    r, z, n, hn = workspace.chunk(4, 1)
    dn = grad_hy * (1 - z) * (1 - n * n)
    dz = grad_hy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return fb.cat([dr, dz, dn], 1), fb.cat([dr, dz, dn * r], 1), grad_hy * z


# -- a whole LSTM layer in one direction ------------------------------------------------------------------

def _offsets(batch_sizes) -> list[int]:
    out, total = [], 0
    for bs in batch_sizes:
        out.append(total)
        total += bs
    return out


def _order(batch_sizes, reverse: bool) -> range:
    steps = len(batch_sizes)
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _projection(input: Tensor, w_ih: Tensor, b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    """``input @ w_ih^T + b_ih + b_hh`` ``(N, 4H)``: every step's input-side gate pre-activations."""
    bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    return fb.addmm(bias, input, w_ih.t()) if bias is not None else input.matmul(w_ih.t())


def lstm_layer(input: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
               b_hh: Tensor | None, batch_sizes, reverse: bool = False):
    """``(output, h_n, c_n, workspace, cell_states)`` of one LSTM layer over packed rows ``input`` ``(N, I)``.

    At step ``t`` the first ``batch_sizes[t]`` sequences advance (steps walked from the last when
    ``reverse``). The workspace ``(N, 4H)`` (activated gates) and the cell states ``(N, H)`` are what
    the backward pass reads."""
    xproj = _projection(input, w_ih, b_ih, b_hh)
    offsets = _offsets(batch_sizes)
    batch = h0.shape[0]
    w_t = w_hh.t()
    h, c = h0, c0
    outs: list = [None] * len(batch_sizes)
    works: list = [None] * len(batch_sizes)
    cells: list = [None] * len(batch_sizes)
    for t in _order(batch_sizes, reverse):
        bs = batch_sizes[t]
        rows = xproj.narrow(0, offsets[t], bs)
        hs, cs = (h, c) if bs == batch else (h[:bs], c[:bs])
        hy, cy, work = lstm_cell(fb.addmm(rows, hs, w_t), cs)
        outs[t], works[t], cells[t] = hy, work, cy
        h = hy if bs == batch else fb.cat([hy, h[bs:]], 0)
        c = cy if bs == batch else fb.cat([cy, c[bs:]], 0)
    if not outs:
        empty = xproj.new_zeros((0, h0.shape[1]))
        return empty, h, c, xproj.new_zeros((0, xproj.shape[1])), empty
    return fb.cat(outs, 0), h, c, fb.cat(works, 0), fb.cat(cells, 0)


def _previous(t: int, bs: int, batch_sizes, offsets, states: Tensor, initial: Tensor, reverse: bool) -> Tensor:
    """The state the first ``bs`` sequences had before step ``t``: the previous step's rows where that
    step ran them, the initial state for the rest."""
    prev = t + 1 if reverse else t - 1
    if prev < 0 or prev >= len(batch_sizes):
        return initial[:bs]
    pbs = min(batch_sizes[prev], bs)
    before = states.narrow(0, offsets[prev], pbs)
    return before if pbs == bs else fb.cat([before, initial[pbs:bs]], 0)


def lstm_layer_backward(grad_output, grad_hn, grad_cn, input, h0, c0, w_ih, w_hh, output, workspace, cell_states,
                        batch_sizes, reverse: bool, output_mask):
    """``(grad_input, grad_h0, grad_c0, grad_w_ih, grad_w_hh, grad_bias)`` of :func:`lstm_layer`, walking its
    steps backwards (those ``output_mask`` leaves out: empty, but the states')."""
    gx, dh, dc, gw = _gates_backward(grad_output, grad_hn, grad_cn, h0, c0, w_hh, output, workspace, cell_states,
                                     batch_sizes, reverse)
    empty = gx.new_zeros((0,))
    return (gx.matmul(w_ih) if output_mask[0] else empty, dh, dc,
            gx.t().matmul(input) if output_mask[3] else empty, gw if output_mask[4] else empty,
            gx.sum(0) if output_mask[5] else empty)


def _gates_backward(grad_output, grad_hn, grad_cn, h0, c0, w_hh, output, workspace, cell_states, batch_sizes,
                    reverse: bool):
    """``(grad of every step's gate pre-activations (N, 4H), grad_h0, grad_c0, grad_w_hh)``."""
    offsets = _offsets(batch_sizes)
    dh = grad_hn if grad_hn is not None else fb.zeros_like(h0)
    dc = grad_cn if grad_cn is not None else fb.zeros_like(c0)
    gw = fb.zeros_like(w_hh)
    grads: list = [None] * len(batch_sizes)
    for t in reversed(list(_order(batch_sizes, reverse))):
        bs = batch_sizes[t]
        off = offsets[t]
        dht = dh[:bs]
        if grad_output is not None:
            dht = dht + grad_output.narrow(0, off, bs)
        h_prev = _previous(t, bs, batch_sizes, offsets, output, h0, reverse)
        c_prev = _previous(t, bs, batch_sizes, offsets, cell_states, c0, reverse)
        dgates, dcp = lstm_cell_backward(dht, dc[:bs], c_prev, cell_states.narrow(0, off, bs),
                                         workspace.narrow(0, off, bs))
        grads[t] = dgates
        gw = gw + dgates.t().matmul(h_prev)
        dhp = dgates.matmul(w_hh)
        rest = h0.shape[0] - bs
        dh = dhp if rest == 0 else fb.cat([dhp, dh[bs:]], 0)
        dc = dcp if rest == 0 else fb.cat([dcp, dc[bs:]], 0)
    gx = fb.cat(grads, 0) if grads else workspace.new_zeros((0, workspace.shape[1]))
    return gx, dh, dc, gw


# -- a whole GRU layer in one direction -------------------------------------------------------------------

def gru_layer(xproj: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, batch_sizes, reverse: bool = False):
    """``(output, h_n, workspace)`` of one GRU layer over packed rows; ``xproj`` ``(N, 3H)`` the input's
    projection with ``b_ih`` (``b_hh`` stays with the hidden projection, which ``r`` multiplies)."""
    offsets = _offsets(batch_sizes)
    batch = h0.shape[0]
    w_t = w_hh.t()
    h = h0
    outs: list = [None] * len(batch_sizes)
    works: list = [None] * len(batch_sizes)
    for t in _order(batch_sizes, reverse):
        bs = batch_sizes[t]
        hs = h if bs == batch else h[:bs]
        hg = fb.addmm(b_hh, hs, w_t) if b_hh is not None else hs.matmul(w_t)
        hy, work = gru_cell(xproj.narrow(0, offsets[t], bs), hg, hs)
        outs[t], works[t] = hy, work
        h = hy if bs == batch else fb.cat([hy, h[bs:]], 0)
    if not outs:
        return xproj.new_zeros((0, h0.shape[1])), h, xproj.new_zeros((0, 4 * h0.shape[1]))
    return fb.cat(outs, 0), h, fb.cat(works, 0)


def gru_layer_backward(grad_output, grad_hn, h0, w_hh, output, workspace, batch_sizes, reverse: bool = False):
    """``(grad_xproj, grad_h0, grad_w_hh, grad_b_hh)`` of :func:`gru_layer`."""
    offsets = _offsets(batch_sizes)
    dh = grad_hn if grad_hn is not None else fb.zeros_like(h0)
    gx: list = [None] * len(batch_sizes)
    gh: list = [None] * len(batch_sizes)
    prevs: list = [None] * len(batch_sizes)
    for t in reversed(list(_order(batch_sizes, reverse))):
        bs, off = batch_sizes[t], offsets[t]
        dht = dh[:bs]
        if grad_output is not None:
            dht = dht + grad_output.narrow(0, off, bs)
        h_prev = _previous(t, bs, batch_sizes, offsets, output, h0, reverse)
        di, dhg, dhx = gru_cell_backward(dht, h_prev, workspace.narrow(0, off, bs))
        gx[t], gh[t], prevs[t] = di, dhg, h_prev
        dhp = dhg.matmul(w_hh) + dhx
        dh = dhp if bs == h0.shape[0] else fb.cat([dhp, dh[bs:]], 0)
    if not gx:
        return workspace.new_zeros((0, 3 * h0.shape[1])), dh, fb.zeros_like(w_hh), w_hh.new_zeros((w_hh.shape[0],))
    hg = fb.cat(gh, 0)
    return fb.cat(gx, 0), dh, hg.t().matmul(fb.cat(prevs, 0)), hg.sum(0)


# -- a whole Elman RNN layer (tanh or relu) in one direction ----------------------------------------------

def rnn_layer(xproj: Tensor, h0: Tensor, w_hh: Tensor, batch_sizes, reverse: bool = False, relu: bool = False):
    """``(output, h_n)`` of one ``RNN`` layer over packed rows: ``h_t = act(xproj_t + h_{t-1} W_hh^T)``,
    ``act`` tanh (or relu), ``xproj`` ``(N, H)`` the input's projection with both biases."""
    offsets = _offsets(batch_sizes)
    batch = h0.shape[0]
    w_t = w_hh.t()
    h = h0
    outs: list = [None] * len(batch_sizes)
    for t in _order(batch_sizes, reverse):
        bs = batch_sizes[t]
        hs = h if bs == batch else h[:bs]
        pre = fb.addmm(xproj.narrow(0, offsets[t], bs), hs, w_t)
        hy = pre.relu() if relu else pre.tanh()
        outs[t] = hy
        h = hy if bs == batch else fb.cat([hy, h[bs:]], 0)
    if not outs:
        return xproj.new_zeros((0, h0.shape[1])), h
    return fb.cat(outs, 0), h


def rnn_layer_backward(grad_output, grad_hn, h0, w_hh, output, batch_sizes, reverse: bool = False,
                       relu: bool = False):
    """``(grad_xproj, grad_h0, grad_w_hh)`` of :func:`rnn_layer`; the activation's derivative is read from
    the output (``1 - y^2`` for tanh, ``y > 0`` for relu)."""
    offsets = _offsets(batch_sizes)
    dh = grad_hn if grad_hn is not None else fb.zeros_like(h0)
    gx: list = [None] * len(batch_sizes)
    prevs: list = [None] * len(batch_sizes)
    for t in reversed(list(_order(batch_sizes, reverse))):
        bs, off = batch_sizes[t], offsets[t]
        dht = dh[:bs]
        if grad_output is not None:
            dht = dht + grad_output.narrow(0, off, bs)
        y = output.narrow(0, off, bs)
        dpre = dht * (y > 0).to(y.dtype) if relu else dht * (1 - y * y)
        gx[t], prevs[t] = dpre, _previous(t, bs, batch_sizes, offsets, output, h0, reverse)
        dhp = dpre.matmul(w_hh)
        dh = dhp if bs == h0.shape[0] else fb.cat([dhp, dh[bs:]], 0)
    if not gx:
        return output.new_zeros((0, h0.shape[1])), dh, fb.zeros_like(w_hh)
    g = fb.cat(gx, 0)
    return g, dh, g.t().matmul(fb.cat(prevs, 0))
