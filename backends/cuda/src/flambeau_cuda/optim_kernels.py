"""Fused optimizer updates for two of the ops flambeau-optim declares, ``optim_sgd`` and ``optim_adam``.

One CuPy ``ElementwiseKernel`` launch per parameter updates the parameter and its state together
(one read and one write of each array, where the op's composite launches a dozen kernels with
temporaries). Where CuPy's kernels are not available (the numpy test double) or a dtype has no fused
kernel (float16/bfloat16 and complex run on float32/real working copies, written back after the update),
the same arithmetic runs as array expressions, so the kit checks the maths either way.

The backend never imports flambeau-optim: kernels registered under an op name that no installed
package declares are ignored. Parameter names equal the ops' declarations (the loader checks them).
"""
from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Callable

import numpy as np

_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_ADAM_BODY = """
    T grad = maximize ? -g : g;
    T param = p;
    if (wd != 0) {
        if (decoupled) param = param * (1 - lr * wd);
        else grad = grad + wd * param;
    }
    T m1 = beta1 * m + (1 - beta1) * grad;
    T v1 = beta2 * v + (1 - beta2) * grad * grad;
    m = m1;
    v = v1;
    T second = v1;
    AMSGRAD
    T denom = sqrt(second) / bc2_sqrt + eps;
    p = param - step_size * m1 / denom;
"""


_SGD_BODY = """
    T d = maximize ? -g : g;
    if (wd != 0) d = d + wd * p;
    MOMENTUM
    p = p - lr * d;
"""
_SGD_MOMENTUM = """
    T b = first ? d : momentum * buf + (1 - dampening) * d;
    buf = b;
    d = nesterov ? d + momentum * b : b;
"""


def make_optim_kernels(xp: ModuleType) -> dict[str, Callable[..., Any]]:
    fused_available = hasattr(xp, "ElementwiseKernel")
    compiled: dict[str, Any] = {}

    def adam_kernel(amsgrad: bool) -> Any:
        key = f"adam{int(amsgrad)}"
        if key not in compiled:
            outs = "T p, T m, T v" + (", T vmax" if amsgrad else "")
            body = _ADAM_BODY.replace("AMSGRAD", "vmax = max(vmax, v1); second = vmax;" if amsgrad else "")
            compiled[key] = xp.ElementwiseKernel(
                "T g, T step_size, T bc2_sqrt, T beta1, T beta2, T lr, T wd, T eps, bool maximize, bool decoupled",
                outs, body, f"flambeau_adam_{key}")
        return compiled[key]

    def working(a: Any, dtype: np.dtype) -> Any:
        """``a`` as a contiguous array of ``dtype`` (complex as pairs of reals, as PyTorch's view_as_real)."""
        if a.dtype.kind == "c":
            real = np.dtype(np.float32 if a.dtype == np.complex64 else np.float64)
            return xp.ascontiguousarray(a).view(real)
        return a if a.dtype == dtype and a.flags.c_contiguous else xp.ascontiguousarray(a.astype(dtype))

    def write_back(work: Any, original: Any) -> None:
        if work is original:
            return
        if original.dtype.kind == "c":
            work = work.view(original.dtype)
        xp.copyto(original, work.reshape(original.shape), casting="unsafe")

    def bump(step: Any) -> float:
        """Add one to a step counter (a 0-d array on the device or the host) and read it."""
        step[...] = step + 1
        return float(step)

    def optim_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, beta1, beta2, lr,
                   weight_decay, eps, maximize, decoupled_weight_decay):
        for i, param in enumerate(params):
            step = bump(state_steps[i])
            step_size = lr / (1 - beta1 ** step)
            bc2_sqrt = math.sqrt(1 - beta2 ** step)
            dtype = param.dtype if param.dtype in _FUSED_DTYPES else (
                np.dtype(np.float64) if param.dtype == np.complex128 else np.dtype(np.float32))
            originals = [param, grads[i], exp_avgs[i], exp_avg_sqs[i]] + ([max_exp_avg_sqs[i]] if amsgrad else [])
            p, g, m, v, *rest = [working(a, dtype) for a in originals]
            with xp.cuda.Device(param.device.id) if fused_available else _nothing():
                if fused_available:
                    adam_kernel(bool(amsgrad))(g, step_size, bc2_sqrt, beta1, beta2, lr, weight_decay, eps,
                                               bool(maximize), bool(decoupled_weight_decay), p, m, v, *rest)
                else:
                    _adam_expressions(xp, p, g, m, v, rest[0] if amsgrad else None, step_size, bc2_sqrt, beta1,
                                      beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay)
            works = [p, g, m, v, *rest]
            for k in [0, 2, 3] + ([4] if amsgrad else []):  # the gradient is only read
                write_back(works[k], originals[k])
        return ()

    def sgd_kernel(with_momentum: bool) -> Any:
        key = f"sgd{int(with_momentum)}"
        if key not in compiled:
            body = _SGD_BODY.replace("MOMENTUM", _SGD_MOMENTUM if with_momentum else "")
            compiled[key] = xp.ElementwiseKernel(
                "T g, T wd, T momentum, T lr, T dampening, bool nesterov, bool maximize, bool first",
                "T p, T buf" if with_momentum else "T p", body, f"flambeau_sgd_{key}")
        return compiled[key]

    def optim_sgd(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov, maximize,
                  is_first_step):
        for i, param in enumerate(params):
            dtype = param.dtype if param.dtype in _FUSED_DTYPES else (
                np.dtype(np.float64) if param.dtype == np.complex128 else np.dtype(np.float32))
            originals = [param, grads[i]] + ([momentum_buffers[i]] if momentum != 0 else [])
            p, g, *rest = [working(a, dtype) for a in originals]
            with xp.cuda.Device(param.device.id) if fused_available else _nothing():
                if fused_available:
                    sgd_kernel(momentum != 0)(g, weight_decay, momentum, lr, dampening, bool(nesterov),
                                              bool(maximize), bool(is_first_step), p, *rest)
                else:
                    _sgd_expressions(p, g, rest[0] if rest else None, weight_decay, momentum, lr, dampening,
                                     nesterov, maximize, is_first_step)
            works = [p, g, *rest]
            for k in [0] + ([2] if momentum != 0 else []):  # the gradient is only read
                write_back(works[k], originals[k])
        return ()

    return {"optim_adam": optim_adam, "optim_sgd": optim_sgd}


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _adam_expressions(xp, p, g, m, v, vmax, step_size, bc2_sqrt, beta1, beta2, lr, wd, eps, maximize, decoupled):
    """The fused kernel's arithmetic as array expressions, in place on the working arrays."""
    grad = -g if maximize else g
    if wd != 0:
        if decoupled:
            p[...] = p * (1 - lr * wd)
        else:
            grad = grad + wd * p
    m[...] = beta1 * m + (1 - beta1) * grad
    v[...] = beta2 * v + (1 - beta2) * grad * grad
    second = v
    if vmax is not None:
        vmax[...] = xp.maximum(vmax, v)
        second = vmax
    p[...] = p - step_size * m / (xp.sqrt(second) / bc2_sqrt + eps)


def _sgd_expressions(p, g, buf, wd, momentum, lr, dampening, nesterov, maximize, first):
    """The fused SGD kernel's arithmetic as array expressions, in place on the working arrays."""
    d = -g if maximize else g
    if wd != 0:
        d = d + wd * p
    if buf is not None:
        buf[...] = d if first else momentum * buf + (1 - dampening) * d
        d = d + momentum * buf if nesterov else buf
    p[...] = p - lr * d
