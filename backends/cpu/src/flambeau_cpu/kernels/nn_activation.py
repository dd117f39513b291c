"""Fused kernels for flambeau-nn's hot activations and their backward ops (``nn_gelu``, ``nn_silu``,
``nn_mish``, ``nn_leaky_relu``, ``nn_elu``, ``nn_hardswish``, ``nn_softplus`` and each one's
``*_backward``). The backend never imports flambeau-nn: these stay unused unless it declares the ops.

Each runs one C++ pass (``flambeau_cpu._C.nn_act_forward`` / ``nn_act_backward``, OpenMP on the
kernels' thread pool) over C-contiguous float32/float64 arrays. float16, bfloat16 and strided views
go through contiguous float32 (or float64) working copies, so every dtype gets the same maths.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_forward = _C.nn_act_forward
_backward = _C.nn_act_backward
_CODE = _C.NN_ACTIVATIONS


def _work_dtype(out: np.ndarray) -> np.dtype:
    return out.dtype if out.dtype in (_F32, _F64) else _F32


def _run(fused: Callable[..., bool], code: int, inputs: tuple, out: np.ndarray, a: float, b: float, c: float) -> None:
    if fused(code, *inputs, out, a, b, c):
        return
    dt = _work_dtype(out)
    work = [np.ascontiguousarray(np.broadcast_to(x, out.shape), dtype=dt) for x in inputs]
    result = np.empty(out.shape, dt)
    if not fused(code, *work, result, a, b, c):
        raise RuntimeError("nn activation kernel refused its working copies")
    np.copyto(out, result, casting="unsafe")


def _gelu_code(approximate: str) -> int:
    return _CODE["gelu_tanh" if approximate == "tanh" else "gelu"]


def nn_gelu(input, approximate, out):
    _run(_forward, _gelu_code(approximate), (input,), out, 0.0, 0.0, 0.0)


def nn_gelu_backward(grad_output, input, approximate, out):
    _run(_backward, _gelu_code(approximate), (grad_output, input), out, 0.0, 0.0, 0.0)


def _plain(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    code = _CODE[name]

    def forward(input, out):
        _run(_forward, code, (input,), out, 0.0, 0.0, 0.0)

    def backward(grad_output, input, out):
        _run(_backward, code, (grad_output, input), out, 0.0, 0.0, 0.0)

    forward.__name__, backward.__name__ = f"nn_{name}", f"nn_{name}_backward"
    return forward, backward


def nn_leaky_relu(input, negative_slope, out):
    _run(_forward, _CODE["leaky_relu"], (input,), out, float(negative_slope), 0.0, 0.0)


def nn_leaky_relu_backward(grad_output, input, negative_slope, out):
    _run(_backward, _CODE["leaky_relu"], (grad_output, input), out, float(negative_slope), 0.0, 0.0)


def nn_elu(input, alpha, scale, input_scale, out):
    _run(_forward, _CODE["elu"], (input,), out, float(alpha), float(scale), float(input_scale))


def nn_elu_backward(grad_output, input, alpha, scale, input_scale, out):
    _run(_backward, _CODE["elu"], (grad_output, input), out, float(alpha), float(scale), float(input_scale))


def nn_softplus(input, beta, threshold, out):
    _run(_forward, _CODE["softplus"], (input,), out, float(beta), float(threshold), 0.0)


def nn_softplus_backward(grad_output, input, beta, threshold, out):
    _run(_backward, _CODE["softplus"], (grad_output, input), out, float(beta), float(threshold), 0.0)


KERNELS: dict[str, Callable[..., Any]] = {
    "nn_gelu": nn_gelu, "nn_gelu_backward": nn_gelu_backward,
    "nn_leaky_relu": nn_leaky_relu, "nn_leaky_relu_backward": nn_leaky_relu_backward,
    "nn_elu": nn_elu, "nn_elu_backward": nn_elu_backward,
    "nn_softplus": nn_softplus, "nn_softplus_backward": nn_softplus_backward,
}
for _name in ("silu", "mish", "hardswish"):
    KERNELS[f"nn_{_name}"], KERNELS[f"nn_{_name}_backward"] = _plain(_name)
