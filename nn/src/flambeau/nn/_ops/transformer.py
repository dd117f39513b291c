"""Declarations of flambeau-nn's attention ops.

``nn_scaled_dot_product_attention`` is ``softmax(query @ key^T * scale + mask) @ value`` over the
last two dims, batch dims broadcast as in ``matmul``. Its composite (:func:`attention`) runs on every
backend through ``matmul`` and the fused ``softmax``, and autograd differentiates it, so the op needs
no formula of its own while no backend ships a kernel. Dropout on the attention weights is random,
so it stays out of the op: ``F.scaled_dot_product_attention`` runs the same maths with a dropout
step in between (:func:`attention` with ``dropout``).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import flambeau as fb
from flambeau import Tensor
from flambeau.ops import OpDecl
from flambeau.ops.meta import broadcast_shapes, fmt_shape

_HALF = (fb.float16, fb.bfloat16)


def _cpp_name(d: Any) -> str:
    """The dtype's C++ name, as PyTorch's attention checks print it."""
    return {fb.float32: "float", fb.float64: "double", fb.float16: "c10::Half", fb.bfloat16: "c10::BFloat16",
            fb.int64: "long int", fb.int32: "int", fb.int16: "short int", fb.int8: "signed char",
            fb.uint8: "unsigned char", fb.bool: "bool"}.get(d, str(d).replace("flambeau.", ""))


def check_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, is_causal: bool,
                    scale: Any, enable_gqa: bool) -> tuple[int, ...]:
    """PyTorch's checks of scaled_dot_product_attention's arguments; returns the output's shape."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_name(query.dtype)} key.dtype: {_cpp_name(key.dtype)} and value.dtype: "
                           f"{_cpp_name(value.dtype)} instead.")
    if not (query.device == key.device == value.device):
        raise RuntimeError("Expected query, key, and value to have the same device type, but got query.device: "
                           f"{query.device} key.device: {key.device} and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError("scaled_dot_product_attention: expected a floating point query, got "
                           f"{_cpp_name(query.dtype)}")
    if attn_mask is not None:
        if attn_mask.dtype != fb.bool and attn_mask.dtype != query.dtype:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cpp_name(attn_mask.dtype)} and  query.dtype: "
                               f"{_cpp_name(query.dtype)} instead.")
        if attn_mask.device != query.device:
            raise RuntimeError(f"Expected attn_mask on {query.device}, got {attn_mask.device}")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
    if scale is not None and not isinstance(scale, (int, float)):
        raise TypeError(f"scaled_dot_product_attention(): argument 'scale' must be float, not {type(scale).__name__}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size, got "
                           f"query {fmt_shape(query.shape)} and key {fmt_shape(key.shape)}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, got "
                           f"key {fmt_shape(key.shape)} and value {fmt_shape(value.shape)}")
    kbatch, vbatch = tuple(key.shape[:-2]), tuple(value.shape[:-2])
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and value.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        kbatch, vbatch = kbatch[:-1] + (hq,), vbatch[:-1] + (hq,)
    try:
        batch = broadcast_shapes(tuple(query.shape[:-2]), kbatch, vbatch)
    except RuntimeError:
        raise RuntimeError(f"scaled_dot_product_attention: the batch dims of query {fmt_shape(query.shape)}, key "
                           f"{fmt_shape(key.shape)} and value {fmt_shape(value.shape)} do not broadcast") from None
    if attn_mask is not None:
        try:
            broadcast_shapes(tuple(attn_mask.shape), batch + (query.shape[-2], key.shape[-2]))
        except RuntimeError:
            raise RuntimeError(f"scaled_dot_product_attention: attn_mask of size {fmt_shape(attn_mask.shape)} does "
                               f"not broadcast to the attention weights' size "
                               f"{fmt_shape(batch + (query.shape[-2], key.shape[-2]))}") from None
    return batch + (query.shape[-2], value.shape[-1])


def _meta(query, key, value, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    return check_attention(query, key, value, attn_mask, is_causal, scale, enable_gqa), query.dtype


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """``t.repeat_interleave(heads // t.size(-3), dim=-3)`` as a view plus one copy (grouped-query attention)."""
    h = t.shape[-3]
    if h == heads:
        return t
    lead = tuple(t.shape[:-3])
    expanded = t.unsqueeze(-3).expand(lead + (h, heads // h) + tuple(t.shape[-2:]))
    return expanded.reshape(lead + (heads,) + tuple(t.shape[-2:]))


def attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, is_causal: bool = False,
              scale: float | None = None, enable_gqa: bool = False,
              dropout: Callable[[Tensor], Tensor] | None = None) -> Tensor:
    """The attention maths on flambeau ops (the op's composite; ``dropout`` applies to the weights).

    Rows whose keys are all masked get zero weights (PyTorch's safe softmax), not NaN.
    """
    dtype = query.dtype
    if dtype in _HALF:  # accumulate in float32, as PyTorch's CPU path does
        query, key, value = query.to(fb.float32), key.to(fb.float32), value.to(fb.float32)
        if attn_mask is not None and attn_mask.dtype != fb.bool:
            attn_mask = attn_mask.to(fb.float32)
    if enable_gqa and query.dim() >= 3:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    # the factor on the smaller operand: query is (L, E), the scores (L, S)
    scores = fb.matmul(query * factor, key.transpose(-2, -1))
    guard = False
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        attn_mask = fb.ones((length, source), dtype=fb.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype == fb.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
        guard = True
    weights = fb.softmax(scores, -1)
    if guard:
        # a row with every key masked: softmax gives NaN (0/0); PyTorch's safe softmax gives zeros
        empty = fb.isneginf(scores).all(-1, keepdim=True)
        weights = weights.masked_fill(empty, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    out = fb.matmul(weights, value)
    return out.to(dtype) if out.dtype != dtype else out


def _composite(query, key, value, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    return attention(query, key, value, attn_mask, is_causal, scale, enable_gqa)


def declarations() -> list[OpDecl]:
    return [
        OpDecl("nn_scaled_dot_product_attention",
               "(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor? = None, is_causal=False, "
               "scale=None, enable_gqa=False)", _meta, composite=_composite, method=False, export=False,
               doc="``softmax(query @ key^T * scale + mask) @ value`` (no dropout; see "
                   "``F.scaled_dot_product_attention``)."),
    ]
