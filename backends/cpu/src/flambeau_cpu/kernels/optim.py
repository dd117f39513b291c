"""Fused optimizer kernels for the ops flambeau-optim declares (``optim_sgd``, ``optim_adam``,
``optim_adagrad``, ``optim_rmsprop``).

The backend never imports flambeau-optim: it registers kernels under those op names, and they are
used only when that package is installed and declares the ops. Each kernel updates its lists of
native arrays in place, in one C++ pass per parameter group (``flambeau_cpu._C.optim_*``), and
returns ``()``. Parameter names must equal the op's declaration (the loader checks them).

The C++ code takes C-contiguous, aligned float32/float64 arrays. Anything else (float16 and
bfloat16, complex, strided views) runs on contiguous float working copies, written back after
the update, so every tensor a user can hand an optimizer gets the same maths.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import _C

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_REAL_OF_COMPLEX = {np.dtype(np.complex64): _F32, np.dtype(np.complex128): _F64}


def _direct(a: np.ndarray, dtype: np.dtype) -> bool:
    """Whether the C++ kernels can use ``a`` as it is."""
    return a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned and a.flags.writeable


def _prepare(lists: Sequence[list], written: Sequence[bool]) -> tuple[list[list], list[tuple]]:
    """The lists the C++ kernels can take, and the (working copy, original) pairs to write back."""
    count = len(lists[0])
    params = lists[0]
    if all(params[i].dtype in (_F32, _F64) and _direct(lst[i], params[i].dtype) and lst[i].size == params[i].size
           for lst in lists for i in range(count)):
        return [list(lst) for lst in lists], []
    out: list[list] = [[] for _ in lists]
    write_back: list[tuple] = []
    for i in range(count):
        real = _REAL_OF_COMPLEX.get(params[i].dtype)
        for k, lst in enumerate(lists):
            a = lst[i]
            if real is not None:
                # Complex tensors update as pairs of reals (as PyTorch's view_as_real does).
                if a.flags.c_contiguous and a.flags.writeable:
                    out[k].append(a.reshape(-1).view(real))
                    continue
                work = np.ascontiguousarray(a).reshape(-1).view(real).copy()
            else:
                work_dtype = params[i].dtype if params[i].dtype in (_F32, _F64) else _F32
                if _direct(a, work_dtype):
                    out[k].append(a.reshape(-1))
                    continue
                work = np.array(a, dtype=work_dtype, order="C").reshape(-1)
            out[k].append(work)
            if written[k]:
                write_back.append((work, a, real))
    return out, write_back


def _finish(write_back: list[tuple]) -> None:
    for work, original, real in write_back:
        values = work.view(original.dtype) if real is not None else work
        np.copyto(original, values.reshape(original.shape), casting="unsafe")


def _bump(state_steps: Sequence[np.ndarray]) -> list[float]:
    """Add one to each step counter (0-d float32 arrays) and return the new values."""
    steps = []
    for s in state_steps:
        np.add(s, 1, out=s)
        steps.append(float(s))
    return steps


def optim_sgd(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov, maximize,
              is_first_step):
    lists = [params, grads] + ([momentum_buffers] if momentum != 0 else [])
    arrays, write_back = _prepare(lists, [True, False, True])
    if momentum == 0:
        arrays.append([])
    _C.optim_sgd(arrays[0], arrays[1], arrays[2], float(weight_decay), float(momentum), float(lr), float(dampening),
                 bool(nesterov), bool(maximize), bool(is_first_step))
    _finish(write_back)
    return ()


def optim_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, beta1, beta2, lr,
               weight_decay, eps, maximize, decoupled_weight_decay):
    steps = _bump(state_steps)
    step_sizes = [lr / (1 - beta1 ** s) for s in steps]
    bc2_sqrts = [(1 - beta2 ** s) ** 0.5 for s in steps]
    lists = [params, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    arrays, write_back = _prepare(lists, [True, False, True, True, True])
    if not amsgrad:
        arrays.append([])
    _C.optim_adam(arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], step_sizes, bc2_sqrts, float(beta1),
                  float(beta2), float(lr), float(weight_decay), float(eps), bool(maximize),
                  bool(decoupled_weight_decay), bool(amsgrad))
    _finish(write_back)
    return ()


def optim_adagrad(params, grads, state_sums, state_steps, lr, weight_decay, lr_decay, eps, maximize):
    clrs = [lr / (1 + (s - 1) * lr_decay) for s in _bump(state_steps)]
    arrays, write_back = _prepare([params, grads, state_sums], [True, False, True])
    _C.optim_adagrad(arrays[0], arrays[1], arrays[2], clrs, float(weight_decay), float(eps), bool(maximize))
    _finish(write_back)
    return ()


def optim_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps, weight_decay,
                  momentum, centered, maximize):
    _bump(state_steps)
    lists = [params, grads, square_avgs] + ([grad_avgs] if centered else []) \
        + ([momentum_buffers] if momentum > 0 else [])
    arrays, write_back = _prepare(lists, [True, False, True, True, True])
    squares = arrays[2]
    averages = arrays[3] if centered else []
    buffers = arrays[-1] if momentum > 0 else []
    _C.optim_rmsprop(arrays[0], arrays[1], squares, averages, buffers, float(lr), float(alpha), float(eps),
                     float(weight_decay), float(momentum), bool(centered), bool(maximize))
    _finish(write_back)
    return ()


KERNELS: dict[str, Callable[..., Any]] = (
    {"optim_sgd": optim_sgd, "optim_adam": optim_adam, "optim_adagrad": optim_adagrad,
     "optim_rmsprop": optim_rmsprop}
    if hasattr(_C, "optim_adam") else {}  # an extension built before these kernels existed
)
