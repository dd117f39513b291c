"""Attention and transformers: F.scaled_dot_product_attention, F.multi_head_attention_forward,
MultiheadAttention and the Transformer modules.

References are written out in numpy (float64): attention itself, and multi-head attention
re-implemented from the module's own weights. Mask conventions differ on purpose, as in PyTorch:
SDPA's bool mask says True = attend; MultiheadAttention's bool masks say True = masked out.
"""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def npy(x):
    return x.detach().numpy().astype(np.float64)


def ref_softmax(s):
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    # a row with every key masked: zero weights (PyTorch's safe softmax in SDPA)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def ref_sdpa(q, k, v, mask=None, is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + bias) v; bool mask: True = attend."""
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if is_causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return ref_softmax(s) @ v


# -- scaled_dot_product_attention --------------------------------------------------------------------

@pytest.mark.parametrize("dtype,tol", [(fb.float32, 1e-5), (fb.float64, 1e-12)])
@pytest.mark.parametrize("shapes", [
    ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)),   # S != L, Ev != E
    ((5, 4), (7, 4), (7, 4)),                     # 2-D
    ((2, 1, 5, 8), (1, 3, 6, 8), (1, 3, 6, 2)),   # broadcast batch dims
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)),
])
def test_sdpa_matches_numpy(dtype, tol, shapes):
    q, k, v = (RNG.standard_normal(s) for s in shapes)
    got = F.scaled_dot_product_attention(t(q, dtype), t(k, dtype), t(v, dtype))
    expected = ref_sdpa(q, k, v)
    assert got.dtype == dtype and tuple(got.shape) == expected.shape
    np.testing.assert_allclose(npy(got), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("L,S", [(4, 4), (3, 6), (6, 3)])
def test_sdpa_causal_is_top_left_lower_triangle(L, S):
    q, k, v = RNG.standard_normal((2, L, 5)), RNG.standard_normal((2, S, 5)), RNG.standard_normal((2, S, 3))
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True)
    np.testing.assert_allclose(npy(got), ref_sdpa(q, k, v, is_causal=True), rtol=1e-12, atol=1e-12)
    # the first query sees the first key only
    np.testing.assert_allclose(npy(got)[:, 0], v[:, 0], rtol=1e-12, atol=1e-12)


def test_sdpa_bool_mask_true_means_attend_and_broadcasts():
    q, k, v = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((2, 3, 6, 5))
    mask = RNG.random((4, 6)) > 0.4
    mask[:, 0] = True
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=fb.tensor(mask))
    np.testing.assert_allclose(npy(got), ref_sdpa(q, k, v, mask), rtol=1e-12, atol=1e-12)
    # the keys masked out do not matter
    v2 = v.copy()
    v2[..., ~mask.any(0), :] += 100.0
    got2 = F.scaled_dot_product_attention(t(q), t(k), t(v2), attn_mask=fb.tensor(mask))
    np.testing.assert_allclose(npy(got2), npy(got), rtol=1e-12, atol=1e-12)


def test_sdpa_float_mask_is_added():
    q, k, v = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((3, 6, 5)), RNG.standard_normal((3, 6, 2))
    bias = RNG.standard_normal((3, 1, 6))
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bias))
    np.testing.assert_allclose(npy(got), ref_sdpa(q, k, v, bias), rtol=1e-12, atol=1e-12)


def test_sdpa_fully_masked_row_is_zero_not_nan():
    q, k, v = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal((5, 2))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    got = npy(F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=fb.tensor(mask)))
    assert np.all(got[1] == 0) and np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref_sdpa(q, k, v, mask), rtol=1e-12, atol=1e-12)


def test_sdpa_scale_and_gqa():
    q, k, v = RNG.standard_normal((2, 6, 3, 4)), RNG.standard_normal((2, 2, 5, 4)), RNG.standard_normal((2, 2, 5, 3))
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), scale=0.3, enable_gqa=True)
    np.testing.assert_allclose(npy(got), ref_sdpa(q, k, v, scale=0.3, enable_gqa=True), rtol=1e-12, atol=1e-12)


def test_sdpa_half_inputs_compute_in_float32():
    q, k, v = (RNG.standard_normal((2, 4, 8)) for _ in range(3))
    for dtype, tol in ((fb.float16, 5e-3), (fb.bfloat16, 3e-2)):
        got = F.scaled_dot_product_attention(t(q, dtype), t(k, dtype), t(v, dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(npy(got.float()), ref_sdpa(q, k, v), rtol=tol, atol=tol)


def test_sdpa_noncontiguous_inputs():
    q = RNG.standard_normal((2, 5, 3, 4))
    k, v = RNG.standard_normal((2, 6, 3, 4)), RNG.standard_normal((2, 6, 3, 4))
    qt, kt, vt = (t(a).transpose(1, 2) for a in (q, k, v))  # (N, H, L, E) views of (N, L, H, E)
    assert not qt.is_contiguous()
    got = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
    expected = ref_sdpa(*(np.swapaxes(a, 1, 2) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(npy(got), expected, rtol=1e-12, atol=1e-12)


def test_sdpa_dropout_statistics_and_zero_p():
    q, k, v = (t(RNG.standard_normal((2, 3, 4))) for _ in range(3))
    plain = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(npy(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)), npy(plain))
    # with p = 1 every weight is dropped
    assert np.all(npy(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)) == 0)
    # same seed, same mask
    fb.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    fb.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(npy(a), npy(b))
    assert not np.allclose(npy(a), npy(plain))
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)


@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal", "gqa"])
def test_sdpa_gradcheck(kind):
    q = t(RNG.standard_normal((1, 2, 3, 4)), requires_grad=True)
    k = t(RNG.standard_normal((1, 2 if kind != "gqa" else 1, 5, 4)), requires_grad=True)
    v = t(RNG.standard_normal((1, 2 if kind != "gqa" else 1, 5, 3)), requires_grad=True)
    kwargs: dict = {}
    inputs = [q, k, v]
    if kind == "bool":
        mask = RNG.random((3, 5)) > 0.3
        mask[:, 0] = True
        kwargs["attn_mask"] = fb.tensor(mask)
    elif kind == "causal":
        kwargs["is_causal"] = True
    elif kind == "gqa":
        kwargs["enable_gqa"] = True
    if kind == "float":
        bias = t(RNG.standard_normal((3, 5)), requires_grad=True)
        inputs.append(bias)

        def fn(q, k, v, b):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=b)
    else:
        def fn(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, **kwargs)
    assert gradcheck(fn, inputs)
    if kind in ("none", "bool"):
        assert gradgradcheck(fn, inputs)


def test_sdpa_errors():
    q, k, v = (fb.randn(2, 3, 4) for _ in range(3))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=fb.ones(3, 3, dtype=fb.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype, but got "
                                           "query.dtype: float key.dtype: double and value.dtype: float instead."):
        F.scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to match query dtype"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=fb.ones(3, 3, dtype=fb.int64))
    with pytest.raises(RuntimeError, match="at least 2 dimensional"):
        F.scaled_dot_product_attention(fb.randn(4), fb.randn(4), fb.randn(4))
    with pytest.raises(RuntimeError, match="query and key must have the same embedding size"):
        F.scaled_dot_product_attention(q, fb.randn(2, 3, 5), v)
    with pytest.raises(RuntimeError, match="do not broadcast"):
        F.scaled_dot_product_attention(q, fb.randn(3, 3, 4), fb.randn(3, 3, 4))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=fb.ones(4, 3, dtype=fb.bool))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(fb.randn(1, 4, 3, 4), fb.randn(1, 3, 3, 4), fb.randn(1, 3, 3, 4),
                                       enable_gqa=True)


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 3), h=st.integers(1, 3), L=st.integers(1, 6), S=st.integers(1, 6), e=st.integers(1, 5),
       ev=st.integers(1, 5), causal=st.booleans())
def test_sdpa_shapes_property(b, h, L, S, e, ev, causal):
    rng = np.random.default_rng(b * 1000 + h * 100 + L * 10 + S)
    q, k, v = rng.standard_normal((b, h, L, e)), rng.standard_normal((b, h, S, e)), rng.standard_normal((b, h, S, ev))
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=causal)
    np.testing.assert_allclose(npy(got), ref_sdpa(q, k, v, is_causal=causal), rtol=1e-10, atol=1e-10)


# -- multi-head attention ----------------------------------------------------------------------------

def ref_mha(mha, query, key, value, key_padding_mask=None, attn_mask=None, average=True):
    """Multi-head attention in numpy from the module's weights; sequence-first (L, N, E) inputs.
    Bool masks: True = masked out."""
    E, H = mha.embed_dim, mha.num_heads
    d = E // H
    if mha._qkv_same_embed_dim:
        w = npy(mha.in_proj_weight)
        wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
    else:
        wq, wk, wv = npy(mha.q_proj_weight), npy(mha.k_proj_weight), npy(mha.v_proj_weight)
    b = npy(mha.in_proj_bias) if mha.in_proj_bias is not None else np.zeros(3 * E)
    q = query @ wq.T + b[:E]
    k = key @ wk.T + b[E:2 * E]
    v = value @ wv.T + b[2 * E:]
    L, N, _ = q.shape
    bias = np.zeros((N, H, L, k.shape[0]))
    if mha.bias_k is not None:
        k = np.concatenate([k, np.broadcast_to(npy(mha.bias_k), (1, N, E))])
        v = np.concatenate([v, np.broadcast_to(npy(mha.bias_v), (1, N, E))])
        bias = np.concatenate([bias, np.zeros((N, H, L, 1))], -1)
    if mha.add_zero_attn:
        k = np.concatenate([k, np.zeros((1, N, E))])
        v = np.concatenate([v, np.zeros((1, N, E))])
        bias = np.concatenate([bias, np.zeros((N, H, L, 1))], -1)
    S = k.shape[0]

    def as_float(m):
        return np.where(m, -np.inf, 0.0) if m.dtype == bool else m

    if attn_mask is not None:
        m = as_float(attn_mask)
        m = m.reshape(N, H, L, -1) if m.ndim == 3 else m
        bias[..., :m.shape[-1]] += m
    if key_padding_mask is not None:
        bias[..., :key_padding_mask.shape[-1]] += as_float(key_padding_mask)[:, None, None, :]
    out = np.zeros((L, N, E))
    weights = np.zeros((N, H, L, S))
    for n in range(N):
        for h in range(H):
            sl = slice(h * d, (h + 1) * d)
            s = q[:, n, sl] @ k[:, n, sl].T / math.sqrt(d) + bias[n, h]
            p = np.exp(s - s.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            weights[n, h] = p
            out[:, n, sl] = p @ v[:, n, sl]
    out = out @ npy(mha.out_proj.weight).T
    if mha.out_proj.bias is not None:
        out = out + npy(mha.out_proj.bias)
    return out, (weights.mean(1) if average else weights)


def _mha(*args, **kwargs):
    fb.manual_seed(0)
    m = nn.MultiheadAttention(*args, dtype=fb.float64, **kwargs)
    with fb.no_grad():  # non-zero biases, so that a misplaced bias shows
        for p in m.parameters():
            if p.dim() == 1:
                p.copy_(fb.randn(p.shape, dtype=fb.float64))
    return m


@pytest.mark.parametrize("options", [
    {},
    {"bias": False},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"kdim": 3, "vdim": 5},
    {"add_bias_kv": True, "add_zero_attn": True, "kdim": 4},
])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_matches_numpy(options, need_weights):
    m = _mha(8, 2, **options)
    L, S, N = 4, 5, 3
    q = RNG.standard_normal((L, N, 8))
    k = RNG.standard_normal((S, N, m.kdim))
    v = RNG.standard_normal((S, N, m.vdim))
    out, w = m(t(q), t(k), t(v), need_weights=need_weights)
    ref_out, ref_w = ref_mha(m, q, k, v)
    np.testing.assert_allclose(npy(out), ref_out, rtol=1e-10, atol=1e-10)
    if need_weights:
        np.testing.assert_allclose(npy(w), ref_w, rtol=1e-10, atol=1e-10)
    else:
        assert w is None


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks_true_means_masked(need_weights):
    m = _mha(6, 3)
    L, S, N = 3, 4, 2
    q, k, v = RNG.standard_normal((L, N, 6)), RNG.standard_normal((S, N, 6)), RNG.standard_normal((S, N, 6))
    kpm = np.array([[False, False, True, True], [False, True, False, False]])
    attn = np.triu(np.ones((L, S), dtype=bool), 1)
    out, w = m(t(q), t(k), t(v), key_padding_mask=fb.tensor(kpm), attn_mask=fb.tensor(attn),
               need_weights=need_weights, average_attn_weights=False)
    ref_out, ref_w = ref_mha(m, q, k, v, kpm, attn, average=False)
    np.testing.assert_allclose(npy(out), ref_out, rtol=1e-10, atol=1e-10)
    if need_weights:
        assert tuple(w.shape) == (N, 3, L, S)
        np.testing.assert_allclose(npy(w), ref_w, rtol=1e-10, atol=1e-10)
        assert np.all(npy(w)[0, :, :, 2:] == 0)  # padded keys get no weight
    # float masks give the same result as the bool ones
    fk, fa = np.where(kpm, -np.inf, 0.0), np.where(attn, -np.inf, 0.0)
    out_f, _ = m(t(q), t(k), t(v), key_padding_mask=t(fk), attn_mask=t(fa), need_weights=need_weights)
    np.testing.assert_allclose(npy(out_f), ref_out, rtol=1e-10, atol=1e-10)


def test_mha_3d_attn_mask_per_head():
    m = _mha(4, 2)
    L, S, N = 3, 3, 2
    q = RNG.standard_normal((L, N, 4))
    mask = RNG.standard_normal((N * 2, L, S))
    for need in (True, False):
        out, _ = m(t(q), t(q), t(q), attn_mask=t(mask), need_weights=need)
        np.testing.assert_allclose(npy(out), ref_mha(m, q, q, q, attn_mask=mask)[0], rtol=1e-10, atol=1e-10)


def test_mha_batch_first_and_unbatched():
    m = _mha(6, 2, batch_first=True)
    q = RNG.standard_normal((2, 4, 6))  # (N, L, E)
    out, w = m(t(q), t(q), t(q))
    ref_out, ref_w = ref_mha(m, np.swapaxes(q, 0, 1), *(np.swapaxes(q, 0, 1),) * 2)
    np.testing.assert_allclose(npy(out), np.swapaxes(ref_out, 0, 1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(npy(w), ref_w, rtol=1e-10, atol=1e-10)
    # unbatched (L, E)
    m2 = _mha(6, 2)
    x = RNG.standard_normal((4, 6))
    out, w = m2(t(x), t(x), t(x), key_padding_mask=fb.tensor([False, False, True, False]))
    ref_out, ref_w = ref_mha(m2, x[:, None], x[:, None], x[:, None], np.array([[False, False, True, False]]))
    assert tuple(out.shape) == (4, 6) and tuple(w.shape) == (4, 4)
    np.testing.assert_allclose(npy(out), ref_out[:, 0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(npy(w), ref_w[0], rtol=1e-10, atol=1e-10)


def test_mha_is_causal_uses_the_mask_or_the_hint():
    m = _mha(4, 2)
    x = RNG.standard_normal((5, 2, 4))
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=fb.float64)
    ref = ref_mha(m, x, x, x, attn_mask=npy(causal))[0]
    for need in (True, False):
        out, _ = m(t(x), t(x), t(x), attn_mask=causal, is_causal=True, need_weights=need)
        np.testing.assert_allclose(npy(out), ref, rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(t(x), t(x), t(x), is_causal=True)


def test_mha_gradcheck():
    m = _mha(4, 2, add_bias_kv=True)
    q = t(RNG.standard_normal((3, 2, 4)), requires_grad=True)
    kv = t(RNG.standard_normal((2, 2, 4)), requires_grad=True)
    kpm = fb.tensor([[False, True], [False, False]])
    params = [m.in_proj_weight, m.in_proj_bias, m.out_proj.weight, m.bias_k]

    def fn(q, kv, w, b, ow, bk):
        return F.multi_head_attention_forward(q, kv, kv, 4, 2, w, b, bk, m.bias_v, False, 0.0, ow, m.out_proj.bias,
                                              key_padding_mask=kpm, need_weights=True)

    def fn_sdpa(q, kv, w, b, ow, bk):
        return F.multi_head_attention_forward(q, kv, kv, 4, 2, w, b, bk, m.bias_v, False, 0.0, ow, m.out_proj.bias,
                                              key_padding_mask=kpm, need_weights=False)[0]

    assert gradcheck(fn, [q, kv, *params])
    assert gradcheck(fn_sdpa, [q, kv, *params])


def test_mha_parameters_and_state_dict_keys():
    m = nn.MultiheadAttention(8, 2)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert tuple(m.in_proj_weight.shape) == (24, 8) and tuple(m.in_proj_bias.shape) == (24,)
    assert np.all(npy(m.in_proj_bias) == 0) and np.all(npy(m.out_proj.bias) == 0)
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform over the packed (3E, E) weight
    assert np.abs(npy(m.in_proj_weight)).max() <= bound
    m2 = nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, kdim=3, vdim=5)
    assert list(m2.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
                                     "out_proj.weight"]
    assert m2.in_proj_weight is None and m2.in_proj_bias is None
    assert tuple(m2.k_proj_weight.shape) == (8, 3) and tuple(m2.v_proj_weight.shape) == (8, 5)
    assert tuple(m2.bias_k.shape) == (1, 1, 8)
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, "
                       "out_features=8, bias=True)\n)")
    assert isinstance(m.out_proj, nn.Linear)


def test_mha_dropout_only_in_training():
    m = _mha(4, 2, dropout=0.5)
    x = t(RNG.standard_normal((3, 2, 4)))
    m.eval()
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    np.testing.assert_array_equal(npy(a), npy(b))
    np.testing.assert_allclose(npy(a), ref_mha(m, npy(x), npy(x), npy(x))[0], rtol=1e-10, atol=1e-10)
    m.train()
    c, _ = m(x, x, x)
    assert not np.allclose(npy(c), npy(a))


def test_mha_errors():
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got embed_dim=0 and "
                                         "num_heads=2 instead"):
        nn.MultiheadAttention(0, 2)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    m = nn.MultiheadAttention(4, 2)
    x = fb.randn(3, 2, 4)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor but received 4-D"):
        m(fb.randn(1, 3, 2, 4), x, x)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D but found 2-D and 3-D"):
        m(x, fb.randn(3, 4), x)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
        m(fb.randn(3, 2, 5), x, x)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is flambeau.Size\(\[2, 3\]\), but should "
                                           r"be \(3, 3\)."):
        m(x, x, x, attn_mask=fb.zeros(2, 3))
    with pytest.raises(RuntimeError, match="The shape of the 3D attn_mask is"):
        m(x, x, x, attn_mask=fb.zeros(2, 3, 3))
    with pytest.raises(AssertionError, match=r"Expected key_padded_mask.shape\[1\] to be 3, but got 4"):
        m(x, x, x, key_padding_mask=fb.zeros(2, 4, dtype=fb.bool))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        m(x, x, x, key_padding_mask=fb.zeros(2, 3, dtype=fb.int64))
    with pytest.raises(AssertionError, match="key shape"):
        m(x, fb.randn(3, 2, 4), fb.randn(4, 2, 4))


# -- transformer layers ------------------------------------------------------------------------------

def ref_layer_norm(x, w, b, eps=1e-5):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def ref_encoder_layer(layer, x, src_mask=None, kpm=None, act=lambda a: np.maximum(a, 0)):
    def lin(mod, a):
        return a @ npy(mod.weight).T + npy(mod.bias)

    def sa(a):
        return ref_mha(layer.self_attn, a, a, a, kpm, src_mask)[0]

    def ff(a):
        return lin(layer.linear2, act(lin(layer.linear1, a)))

    def n1(a):
        return ref_layer_norm(a, npy(layer.norm1.weight), npy(layer.norm1.bias), layer.norm1.eps)

    def n2(a):
        return ref_layer_norm(a, npy(layer.norm2.weight), npy(layer.norm2.bias), layer.norm2.eps)

    if layer.norm_first:
        x = x + sa(n1(x))
        return x + ff(n2(x))
    x = n1(x + sa(x))
    return n2(x + ff(x))


def _gelu(a):
    from math import erf
    return a * 0.5 * (1 + np.vectorize(erf)(a / math.sqrt(2)))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_numpy(norm_first, activation):
    fb.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                       norm_first=norm_first, dtype=fb.float64)
    x = RNG.standard_normal((5, 3, 8))
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    kpm = np.zeros((3, 5), dtype=bool)
    kpm[1, 3:] = True
    act = _gelu if activation == "gelu" else (lambda a: np.maximum(a, 0))
    got = layer(t(x), src_mask=t(mask), src_key_padding_mask=fb.tensor(kpm))
    np.testing.assert_allclose(npy(got), ref_encoder_layer(layer, x, mask, kpm, act), rtol=1e-9, atol=1e-9)


def test_encoder_layer_callable_activation_batch_first_and_bias():
    fb.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation=fb.tanh, batch_first=True, dtype=fb.float64)
    x = RNG.standard_normal((3, 5, 8))
    got = layer(t(x))
    ref = np.swapaxes(ref_encoder_layer(layer, np.swapaxes(x, 0, 1), act=np.tanh), 0, 1)
    np.testing.assert_allclose(npy(got), ref, rtol=1e-9, atol=1e-9)
    nb = nn.TransformerEncoderLayer(8, 2, 16, bias=False)
    assert nb.linear1.bias is None and nb.norm1.bias is None and nb.self_attn.in_proj_bias is None
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_decoder_layer_matches_numpy():
    fb.manual_seed(2)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, dtype=fb.float64)
    tgt, mem = RNG.standard_normal((4, 2, 8)), RNG.standard_normal((6, 2, 8))
    tmask = np.triu(np.full((4, 4), -np.inf), 1)

    def lin(mod, a):
        return a @ npy(mod.weight).T + npy(mod.bias)

    def ln(mod, a):
        return ref_layer_norm(a, npy(mod.weight), npy(mod.bias))

    x = ln(layer.norm1, tgt + ref_mha(layer.self_attn, tgt, tgt, tgt, attn_mask=tmask)[0])
    x = ln(layer.norm2, x + ref_mha(layer.multihead_attn, x, mem, mem)[0])
    x = ln(layer.norm3, x + lin(layer.linear2, np.maximum(lin(layer.linear1, x), 0)))
    got = layer(t(tgt), t(mem), tgt_mask=t(tmask), tgt_is_causal=True)
    np.testing.assert_allclose(npy(got), x, rtol=1e-9, atol=1e-9)


def test_transformer_state_dict_keys_and_shapes():
    m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16)
    keys = list(m.state_dict())
    expected_enc = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                    "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    expected_dec = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                    "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                    "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
                    "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight",
                    "norm2.bias", "norm3.weight", "norm3.bias"]
    expected = ([f"encoder.layers.{i}.{k}" for i in range(2) for k in expected_enc]
                + ["encoder.norm.weight", "encoder.norm.bias"]
                + [f"decoder.layers.0.{k}" for k in expected_dec] + ["decoder.norm.weight", "decoder.norm.bias"])
    assert keys == expected
    # layers are independent copies
    assert m.encoder.layers[0].linear1.weight is not m.encoder.layers[1].linear1.weight


def test_transformer_forward_matches_stacked_layers():
    fb.manual_seed(4)
    m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                       dropout=0.0, dtype=fb.float64)
    src, tgt = t(RNG.standard_normal((5, 2, 8))), t(RNG.standard_normal((4, 2, 8)))
    tmask = nn.Transformer.generate_square_subsequent_mask(4, dtype=fb.float64)
    got = m(src, tgt, tgt_mask=tmask)
    mem = src
    for layer in m.encoder.layers:
        mem = layer(mem)
    mem = m.encoder.norm(mem)
    out = tgt
    for layer in m.decoder.layers:
        out = layer(out, mem, tgt_mask=tmask)
    out = m.decoder.norm(out)
    np.testing.assert_allclose(npy(got), npy(out), rtol=1e-12, atol=1e-12)
    assert tuple(got.shape) == (4, 2, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(src, t(RNG.standard_normal((4, 3, 8))))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        m(t(RNG.standard_normal((5, 2, 6))), t(RNG.standard_normal((4, 2, 6))))


def test_generate_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == fb.float32
    expected = np.array([[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    np.testing.assert_array_equal(mask.numpy(), expected)


def test_encoder_detects_causal_mask_and_accepts_nested_flag():
    from flambeau.nn.modules.transformer import _detect_is_causal_mask
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(causal) is True
    assert _detect_is_causal_mask(causal.clone().fill_(0.0)) is False
    assert _detect_is_causal_mask(None, True) is True
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    x = fb.randn(4, 2, 8)
    a = enc(x, mask=causal)
    b = enc(x, mask=causal, is_causal=True)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_encoder_layer_trains_and_pickles():
    fb.manual_seed(5)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1)
    x = fb.randn(4, 2, 8)
    layer(x).sum().backward()
    assert all(p.grad is not None for p in layer.parameters())
    clone = pickle.loads(pickle.dumps(layer))
    layer.eval()
    clone.eval()
    np.testing.assert_allclose(clone(x).detach().numpy(), layer(x).detach().numpy())
