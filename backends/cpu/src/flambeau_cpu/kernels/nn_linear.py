"""Kernel for flambeau-nn's ``nn_linear`` (``F.linear``): ``out = input @ weight.T + bias`` in one call.

Registered under the op's name; it stays unused unless flambeau-nn declares the op. It spares the
composite's three dispatches (``t``, ``addmm`` or ``matmul``, ``add``): a small layer's call is mostly
that overhead. The product is one BLAS gemm with the bias as its accumulator where it suits (see
``blas._gemm``), else numpy's matmul into ``out`` and the bias added in place. float16 and bfloat16
compute in float32 (as the products' kernels do) and round once. Tiny 2-D products (up to 4096
multiply-adds, float32/float64) run one C++ loop (``_C.linear_small``: numpy's matmul and add cost
~3 us there, a fifth of the layer's call); other small ones skip the gemm, whose operands cost more to
set up than the two numpy calls.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import _C
from .blas import _gemm
from ._quiet import quiet_all

_linear_small = getattr(_C, "linear_small", None)

_EXACT = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
_F32 = np.dtype(np.float32)
#: Below this many multiply-adds, matmul + add costs less than preparing the fused gemm's operands.
_SMALL = 16 ** 3


def nn_linear(input: np.ndarray, weight: np.ndarray, bias: Any, out: np.ndarray) -> None:
    if out.dtype not in _EXACT:  # half types: accumulate in float32, round once
        wide = np.empty(out.shape, _F32)
        nn_linear(input.astype(_F32), weight.astype(_F32), None if bias is None else bias.astype(_F32), wide)
        out[...] = wide
        return
    if _linear_small is not None and _linear_small(input, weight, bias, out):  # 2-D, up to 4096 multiply-adds
        return
    if weight.ndim == 1 or input.ndim == 1:
        out[...] = np.matmul(input, weight.T)
        if bias is not None:
            np.add(out, bias, out=out)
        return
    n = math.prod(input.shape[:-1])  # not -1: a reshape of an empty array cannot infer it
    rows = input.reshape(n, input.shape[-1])
    target = out.reshape(n, out.shape[-1])  # out is the dispatcher's fresh C-contiguous array: a view
    if bias is not None and n * weight.shape[0] * weight.shape[1] > _SMALL and \
            _gemm(target, np.broadcast_to(bias, target.shape), rows, weight.T, 1, 1):
        return
    np.matmul(rows, weight.T, out=target)
    if bias is not None:
        np.add(target, bias, out=target)


KERNELS: dict[str, Callable[..., Any]] = quiet_all({"nn_linear": nn_linear})
