"""Conformance cases of flambeau-nn's attention op (``nn_scaled_dot_product_attention``)."""
from __future__ import annotations

import math

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_LOOSE = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}


def _sdpa_ref(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa and q.ndim >= 3:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    factor = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * factor
    if is_causal:
        attn_mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    if attn_mask is not None:
        s = np.where(attn_mask, s, -np.inf) if attn_mask.dtype == bool else s + attn_mask
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return w @ v


def _mask_values(shape: tuple[int, int]) -> np.ndarray:
    mask = (np.arange(shape[0] * shape[1]).reshape(shape) % 3) != 1
    mask[0] = False  # one fully masked row: zeros, not NaN
    return mask


def _sdpa_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3, 4, 5), dtype), Arg((2, 3, 6, 5), dtype), Arg((2, 3, 6, 3), dtype))),
        Sample((Arg((4, 5), dtype, "transposed"), Arg((6, 5), dtype), Arg((6, 5), dtype, "transposed")),
               note="2-D, strided"),
        Sample((Arg((2, 4, 5), dtype), Arg((2, 6, 5), dtype), Arg((2, 6, 2), dtype),
                Arg((4, 6), "bool", values=_mask_values((4, 6))))),
        Sample((Arg((2, 4, 5), dtype), Arg((2, 4, 5), dtype), Arg((2, 4, 5), dtype), Arg((2, 1, 4), dtype))),
        Sample((Arg((1, 2, 5, 3), dtype), Arg((1, 2, 4, 3), dtype), Arg((1, 2, 4, 3), dtype)),
               {"is_causal": True, "scale": 0.5}),
        Sample((Arg((1, 4, 3, 2), dtype), Arg((1, 2, 5, 2), dtype), Arg((1, 2, 5, 2), dtype)), {"enable_gqa": True}),
    ]


def _sdpa_errors() -> list[ErrorCase]:
    x = Arg((2, 3, 4), "float32")
    return [
        ErrorCase((x, Arg((2, 3, 4), "float64"), x), RuntimeError,
                  "Expected query, key, and value to have the same dtype"),
        ErrorCase((x, x, x, Arg((3, 3), "bool")), RuntimeError,
                  "Explicit attn_mask should not be set when is_causal=True", kwargs={"is_causal": True}),
        ErrorCase((x, x, x, Arg((3, 3), "int64")), RuntimeError,
                  "Expected attn_mask dtype to be bool or float or to match query dtype"),
        ErrorCase((x, Arg((2, 3, 5), "float32"), x), RuntimeError, "query and key must have the same embedding size"),
        ErrorCase((Arg((4,), "float32"), Arg((4,), "float32"), Arg((4,), "float32")), RuntimeError,
                  "at least 2 dimensional"),
    ]


def cases() -> list[OpCase]:
    return [
        OpCase("nn_scaled_dot_product_attention", _FLOATS, _sdpa_samples, _sdpa_ref,
               lambda s: s.args[0].dtype, _sdpa_errors, tolerances=_LOOSE),
    ]
