"""Functional forms: attention (torch.nn.functional's scaled_dot_product_attention and
multi_head_attention_forward)."""
from __future__ import annotations

import math
import warnings
from typing import Any

import flambeau as fb
from flambeau import Tensor

from .._lazy import LazyOp
from .._ops.transformer import attention, check_attention
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_sdpa = LazyOp("nn_scaled_dot_product_attention")


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    r"""Attention: ``softmax(query @ key.transpose(-2, -1) * scale + bias) @ value``.

    Args:
        query: ``(N, ..., Hq, L, E)``.
        key: ``(N, ..., H, S, E)``.
        value: ``(N, ..., H, S, Ev)``.
        attn_mask: broadcastable to ``(N, ..., L, S)``. A bool mask says which keys each query may
            attend to (True = take part); a float mask is added to the scores.
        dropout_p: probability of dropping an attention weight (applied whenever > 0, as PyTorch).
        is_causal: attend only to keys at or before the query's position (the upper-left aligned
            lower triangle); an explicit ``attn_mask`` is then an error.
        scale: the scores' factor, ``1 / sqrt(E)`` by default.
        enable_gqa: grouped-query attention: key and value may have fewer heads (dim -3) than
            query, each of their heads serving ``Hq / H`` query heads.

    Returns:
        ``(N, ..., Hq, L, Ev)``. Rows whose keys are all masked are zeros.
    """
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if dropout_p > 0.0:
        check_attention(query, key, value, attn_mask, is_causal, scale, enable_gqa)
        return attention(query, key, value, attn_mask, is_causal, scale, enable_gqa,
                         dropout=lambda w: fb.dropout(w, dropout_p, True))
    return _sdpa(query, key, value, attn_mask, is_causal, scale, enable_gqa)


# -- multi-head attention ----------------------------------------------------------------------------

def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A bool mask (True = masked out) as a float one (-inf where masked); a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype != fb.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.dtype == fb.bool:
        return fb.zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill(mask, -math.inf)
    return mask


def _none_or_dtype(t: Tensor | None) -> Any:
    if t is None:
        return None
    if isinstance(t, Tensor):
        return t.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or flambeau.Tensor")


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the inputs are batched; PyTorch's assertions on the ranks of inputs and masks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    return linear(x, w, b)


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v through the packed (3E, E) projection; one matmul when they are the same tensor."""
    e = q.shape[-1]
    if k is v and q is k:
        proj = _linear(q, w, b)
        return proj[..., :e], proj[..., e:2 * e], proj[..., 2 * e:]
    bq = bk = bv = None
    if b is not None:
        bq, bk, bv = b[:e], b[e:2 * e], b[2 * e:]
    if k is v:
        kv = _linear(k, w[e:], b[e:] if b is not None else None)
        return _linear(q, w[:e], bq), kv[..., :e], kv[..., e:]
    return _linear(q, w[:e], bq), _linear(k, w[e:2 * e], bk), _linear(v, w[2 * e:], bv)


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Tensor | None, b_k: Tensor | None, b_v: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, shape in (("q", w_q, (eq, eq)), ("k", w_k, (eq, ek)), ("v", w_v, (eq, ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name}_proj_weight shape of {shape}, but got {tuple(w.shape)}")
    for name, b in (("q", b_q), ("k", b_k), ("v", b_v)):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {name}_proj_bias shape of {(eq,)}, but got {tuple(b.shape)}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _pad_last(t: Tensor | None) -> Tensor | None:
    """One more (zero, i.e. attended) key column on a mask."""
    if t is None:
        return None
    return fb.cat([t, fb.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype, device=t.device)], -1)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    r"""Multi-head attention, sequence first: query ``(L, N, E)``, key ``(S, N, Ek)``, value ``(S, N, Ev)``
    (or unbatched ``(L, E)``...).

    ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)``: a bool
    mask marks with True the keys that are NOT attended; a float mask is added to the scores.

    Returns ``(attn_output, attn_output_weights)``: ``(L, N, E)`` and, when ``need_weights``,
    ``(N, L, S)`` averaged over the heads (``(N, num_heads, L, S)`` unless ``average_attn_weights``),
    else None.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the causal hint replaces the mask: the attention kernel builds it
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the padding mask joins the attention mask: no fused causal path

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            e = embed_dim
            b_q, b_k, b_v = in_proj_bias[:e], in_proj_bias[e:2 * e], in_proj_bias[2 * e:]
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = fb.cat([k, bias_k.expand((1, bsz, embed_dim))])
        v = fb.cat([v, bias_v.expand((1, bsz, embed_dim))])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # heads become part of the batch: (N * num_heads, L, head_dim), batch index n * num_heads + h
    q = q.reshape((tgt_len, bsz * num_heads, head_dim)).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz, num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz, num_heads, head_dim)

    if add_zero_attn:
        zeros = fb.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = fb.cat([k, zeros], 1), fb.cat([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.reshape((bsz, 1, 1, src_len)).expand((bsz, num_heads, 1, src_len))
        kpm = kpm.reshape((bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = fb.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = fb.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = fb.dropout(weights, dropout_p, True)
        out = fb.matmul(weights, v)  # (N * num_heads, L, head_dim)
        out = out.transpose(0, 1).reshape((tgt_len * bsz, embed_dim))
        out = _linear(out, out_proj_weight, out_proj_bias).reshape((tgt_len, bsz, embed_dim))
        weights = weights.reshape((bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape((bsz, num_heads, -1, src_len))
    q = q.reshape((bsz, num_heads, tgt_len, head_dim))
    k = k.reshape((bsz, num_heads, src_len, head_dim))
    v = v.reshape((bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape((bsz * tgt_len, embed_dim))
    out = _linear(out, out_proj_weight, out_proj_bias).reshape((tgt_len, bsz, embed_dim))
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _size(shape: Any) -> str:
    return f"flambeau.Size({list(shape)})"


def _heads(t: Tensor, static: Tensor | None, name: str, bsz: int, num_heads: int, head_dim: int) -> Tensor:
    """``(S, N, E)`` as ``(N * num_heads, S, head_dim)``, or the given static tensor after its checks."""
    if static is None:
        return t.reshape((t.shape[0], bsz * num_heads, head_dim)).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static
