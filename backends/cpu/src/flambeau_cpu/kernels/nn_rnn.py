"""Fused kernels for flambeau-nn's recurrent cell ops (``nn_lstm_cell``, ``nn_gru_cell`` and their
backward ops, csrc/nn_rnn.cpp) and whole-layer ops (``nn_lstm_layer``, ``nn_gru_layer``,
``nn_rnn_layer`` and their backward ops, csrc/nn_rnn_layer.cpp: one call per layer and direction,
the steps looped in C++ with the GIL released), run by ``flambeau_cpu._C``.

The backend never imports flambeau-nn: these are registered under the op names and used only when
that package declares the ops (whose meta functions have checked every shape and dtype). The C++ code
takes C-contiguous float32/float64 arrays of one dtype; float16/bfloat16 inputs compute on float32
copies, other layouts on contiguous copies, and outputs the C++ code cannot write directly go through
working arrays copied back.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C, _threads

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _work_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype in (_F32, _F64) else _F32


def _arr(a: np.ndarray | None, dtype: np.dtype) -> np.ndarray | None:
    """``a`` as a C-contiguous array of ``dtype`` (itself when it already is one)."""
    if a is None:
        return None
    return np.ascontiguousarray(a, dtype=dtype)


def _target(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An array the C++ code can write for ``out``: ``out`` itself, or a working array copied back by _store."""
    if out.dtype == dtype and out.flags.c_contiguous and out.flags.aligned and out.flags.writeable:
        return out
    return np.empty(out.shape, dtype=dtype)


def _store(outs: Any, works: Any) -> None:
    for out, work in zip(outs, works):
        if work is not None and work is not out:  # None: an output not computed
            np.copyto(out, work.reshape(out.shape), casting="unsafe")


def nn_lstm_cell(gates, cx, out):
    dt = _work_dtype(gates)
    batch, hidden = cx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_lstm_cell(_arr(gates, dt), _arr(cx, dt), *works, batch, hidden)
    _store(out, works)


def nn_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, out):
    dt = _work_dtype(cx)
    batch, hidden = cx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_lstm_cell_backward(_arr(grad_hy, dt), _arr(grad_cy, dt), _arr(cx, dt), _arr(cy, dt), _arr(workspace, dt),
                             *works, batch, hidden)
    _store(out, works)


def nn_gru_cell(igates, hgates, hx, out):
    dt = _work_dtype(igates)
    batch, hidden = hx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_cell(_arr(igates, dt), _arr(hgates, dt), _arr(hx, dt), *works, batch, hidden)
    _store(out, works)


def nn_gru_cell_backward(grad_hy, hx, workspace, out):
    dt = _work_dtype(hx)
    batch, hidden = hx.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_cell_backward(_arr(grad_hy, dt), _arr(hx, dt), _arr(workspace, dt), *works, batch, hidden)
    _store(out, works)


# -- whole layers: the step loop in C++ (csrc/nn_rnn_layer.cpp), each step's product on scipy's BLAS --

_GEMM_CAPSULES: dict[np.dtype, Any] = {}


def _gemm(dt: np.dtype) -> Any:
    """scipy's Fortran ``sgemm``/``dgemm`` for ``dt`` as a capsule the C++ loop calls. Imported at the first
    layer, not at ``import flambeau``; that import loads scipy's OpenBLAS, which then joins the kernels'
    OpenMP team (``_threads``) like every other BLAS in the process."""
    if not _GEMM_CAPSULES:
        from scipy.linalg import cython_blas

        capi = cython_blas.__pyx_capi__
        _GEMM_CAPSULES.update({_F32: capi["sgemm"], _F64: capi["dgemm"]})
        _threads.share_new_pools()
    return _GEMM_CAPSULES[dt]


def _sizes(batch_sizes) -> list[int]:
    return [int(b) for b in batch_sizes]


def _optional(a: np.ndarray | None, dt: np.dtype) -> np.ndarray | None:
    return None if a is None else _arr(a, dt)


def nn_lstm_layer(input, h0, c0, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse, out):
    dt = _work_dtype(input)
    batch, hidden = c0.shape
    works = [_target(o, dt) for o in out]
    _C.nn_lstm_layer(_arr(input, dt), _arr(h0, dt), _arr(c0, dt), _arr(w_ih, dt), _arr(w_hh, dt), _optional(b_ih, dt),
                     _optional(b_hh, dt), _sizes(batch_sizes), bool(reverse), *works, batch, hidden, input.shape[1])
    _store(out, works)


def nn_lstm_layer_backward(grad_output, grad_hn, grad_cn, input, h0, c0, w_ih, w_hh, output, workspace, cell_states,
                           batch_sizes, reverse, output_mask, out):
    dt = _work_dtype(h0)
    batch, hidden = h0.shape
    # gradients masked off come back empty (shape (0,)): the C++ code skips them (None); the states' (1, 2)
    # come with the steps' walk
    works = [_target(o, dt) if wanted or i in (1, 2) else None for i, (o, wanted) in enumerate(zip(out, output_mask))]
    _C.nn_lstm_layer_backward(_optional(grad_output, dt), _optional(grad_hn, dt), _optional(grad_cn, dt),
                              _arr(input, dt), _arr(h0, dt), _arr(c0, dt), _arr(w_ih, dt), _arr(w_hh, dt),
                              _arr(output, dt), _arr(workspace, dt), _arr(cell_states, dt), _sizes(batch_sizes),
                              bool(reverse), *works, batch, hidden, input.shape[1], _gemm(dt))
    _store(out, works)


def nn_gru_layer(xproj, h0, w_hh, b_hh, batch_sizes, reverse, out):
    dt = _work_dtype(xproj)
    batch, hidden = h0.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_layer(_arr(xproj, dt), _arr(h0, dt), _arr(w_hh, dt), _optional(b_hh, dt), _sizes(batch_sizes),
                    bool(reverse), *works, batch, hidden, _gemm(dt))
    _store(out, works)


def nn_gru_layer_backward(grad_output, grad_hn, h0, w_hh, output, workspace, batch_sizes, reverse, out):
    dt = _work_dtype(h0)
    batch, hidden = h0.shape
    works = [_target(o, dt) for o in out]
    _C.nn_gru_layer_backward(_optional(grad_output, dt), _optional(grad_hn, dt), _arr(h0, dt), _arr(w_hh, dt),
                             _arr(output, dt), _arr(workspace, dt), _sizes(batch_sizes), bool(reverse), *works, batch,
                             hidden, _gemm(dt))
    _store(out, works)


def nn_rnn_layer(xproj, h0, w_hh, batch_sizes, reverse, relu, out):
    dt = _work_dtype(xproj)
    batch, hidden = h0.shape
    works = [_target(o, dt) for o in out]
    _C.nn_rnn_layer(_arr(xproj, dt), _arr(h0, dt), _arr(w_hh, dt), _sizes(batch_sizes), bool(reverse), bool(relu),
                    *works, batch, hidden)
    _store(out, works)


def nn_rnn_layer_backward(grad_output, grad_hn, h0, w_hh, output, batch_sizes, reverse, relu, out):
    dt = _work_dtype(h0)
    batch, hidden = h0.shape
    works = [_target(o, dt) for o in out]
    _C.nn_rnn_layer_backward(_optional(grad_output, dt), _optional(grad_hn, dt), _arr(h0, dt), _arr(w_hh, dt),
                             _arr(output, dt), _sizes(batch_sizes), bool(reverse), bool(relu), *works, batch, hidden,
                             _gemm(dt))
    _store(out, works)


KERNELS: dict[str, Callable[..., Any]] = {}
if hasattr(_C, "nn_lstm_cell"):  # an extension built before these kernels existed has none of them
    KERNELS.update({"nn_lstm_cell": nn_lstm_cell, "nn_lstm_cell_backward": nn_lstm_cell_backward,
                    "nn_gru_cell": nn_gru_cell, "nn_gru_cell_backward": nn_gru_cell_backward})
if hasattr(_C, "nn_lstm_layer"):
    KERNELS.update({"nn_lstm_layer": nn_lstm_layer, "nn_lstm_layer_backward": nn_lstm_layer_backward,
                    "nn_gru_layer": nn_gru_layer, "nn_gru_layer_backward": nn_gru_layer_backward})
if hasattr(_C, "nn_rnn_layer"):
    KERNELS.update({"nn_rnn_layer": nn_rnn_layer, "nn_rnn_layer_backward": nn_rnn_layer_backward})
