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
