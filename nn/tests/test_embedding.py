"""Embeddings: F.embedding, F.embedding_bag, F.one_hot against numpy references."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._ops import sparse as S

RNG = np.random.default_rng(1)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def idx(a, dtype=fb.int64):
    return fb.tensor(np.asarray(a), dtype=dtype)


@pytest.mark.parametrize("index_dtype", [fb.int64, fb.int32])
@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.float16, fb.int64])
def test_embedding_forward(index_dtype, dtype):
    w = (RNG.standard_normal((10, 3)) * 4).round()
    i = RNG.integers(0, 10, (2, 5))
    got = F.embedding(idx(i, index_dtype), t(w, dtype))
    assert tuple(got.shape) == (2, 5, 3) and got.dtype == dtype
    np.testing.assert_array_equal(got.to(fb.float64).numpy(), w[i])
    np.testing.assert_array_equal(S.embedding(t(w, dtype), idx(i, index_dtype)).to(fb.float64).numpy(), w[i])


def test_embedding_index_out_of_range():
    w = t(np.ones((4, 2)))
    for bad in ([0, 4], [-1, 0]):
        with pytest.raises(IndexError, match="index out of range in self"):
            F.embedding(idx(bad), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got FloatTensor instead"):
        F.embedding(t([0.0], fb.float32), w)
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(idx([0]), w, sparse=True)


def ref_grad(i, g, rows, padding_idx=None, by_freq=False):
    out = np.zeros((rows, g.shape[-1]))
    flat = i.reshape(-1)
    gr = g.reshape(-1, g.shape[-1])
    counts = np.bincount(flat, minlength=rows)
    for k, r in enumerate(flat):
        if r == padding_idx:
            continue
        out[r] += gr[k] / (counts[r] if by_freq else 1)
    return out


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("by_freq", [False, True])
def test_embedding_backward(padding_idx, by_freq):
    i = np.array([[0, 2, 2, 5], [5, 5, 1, 0]])
    g = RNG.standard_normal((2, 4, 3))
    w = t(RNG.standard_normal((6, 3)), requires_grad=True)
    F.embedding(idx(i), w, padding_idx=padding_idx, scale_grad_by_freq=by_freq).backward(t(g))
    pad = None if padding_idx is None else padding_idx % 6
    np.testing.assert_allclose(w.grad.numpy(), ref_grad(i, g, 6, pad, by_freq), rtol=1e-12)
    composite = S.embedding_backward(t(g), idx(i), 6, -1 if pad is None else pad, by_freq)
    np.testing.assert_allclose(composite.numpy(), ref_grad(i, g, 6, pad, by_freq), rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 40), n=st.integers(0, 200), dim=st.integers(1, 9), by_freq=st.booleans(),
       dtype=st.sampled_from([fb.float32, fb.float64]))
def test_embedding_backward_kernel_property(rows, n, dim, by_freq, dtype):
    i = RNG.integers(0, rows, n)
    g = RNG.standard_normal((n, dim))
    pad = int(RNG.integers(-1, rows))
    got = fb.ops.function("nn_embedding_backward")(t(g, dtype), idx(i), rows, pad, by_freq)
    tol = 1e-5 if dtype == fb.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), ref_grad(i, g, rows, pad if pad >= 0 else None, by_freq), rtol=tol,
                               atol=tol)


def test_embedding_gradcheck():
    w = t(RNG.standard_normal((5, 2)), requires_grad=True)
    i = idx([[0, 3, 3], [4, 1, 0]])
    # (padding_idx and scale_grad_by_freq change the gradient on purpose: test_embedding_backward covers them)
    assert gradcheck(lambda w: F.embedding(i, w), (w,))
    assert gradgradcheck(lambda w: F.embedding(i, w) ** 2, (w,))


def test_embedding_max_norm_renormalises_rows_in_place():
    w = RNG.standard_normal((5, 3)) * 3
    wt = t(w)
    i = np.array([1, 1, 3])
    out = F.embedding(idx(i), wt, max_norm=1.0)
    expected = w.copy()
    for r in (1, 3):
        norm = np.linalg.norm(w[r])
        if norm > 1.0:
            expected[r] = w[r] * (1.0 / (norm + 1e-7))
    np.testing.assert_allclose(wt.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), expected[i], rtol=1e-12)


def test_embedding_padding_idx_bounds():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(idx([0]), t(np.ones((3, 2))), padding_idx=3)


# -- embedding_bag ------------------------------------------------------------------------------------

def ref_bag(w, i, offsets, mode, psw=None, padding_idx=None, include_last=False):
    ends = list(offsets[1:]) + ([] if include_last else [len(i)])
    starts = offsets[:-1] if include_last else offsets
    out = []
    for s, e in zip(starts, ends):
        rows = [w[i[k]] * (psw[k] if psw is not None else 1) for k in range(s, e) if i[k] != padding_idx]
        if not rows:
            out.append(np.zeros(w.shape[1]))
        elif mode == "sum":
            out.append(np.sum(rows, 0))
        elif mode == "mean":
            out.append(np.mean(rows, 0))
        else:
            out.append(np.max(rows, 0))
    return np.array(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("include_last", [False, True])
def test_embedding_bag_offsets(mode, padding_idx, include_last):
    w = RNG.standard_normal((6, 3))
    i = np.array([0, 2, 4, 5, 2, 1, 3, 3])
    offsets = np.array([0, 3, 3, 6] + ([8] if include_last else []))
    got = F.embedding_bag(idx(i), t(w), idx(offsets), mode=mode, padding_idx=padding_idx,
                          include_last_offset=include_last)
    np.testing.assert_allclose(got.numpy(), ref_bag(w, i, offsets, mode, None, padding_idx, include_last), rtol=1e-12)
    wg = t(w, requires_grad=True)
    assert gradcheck(lambda w: F.embedding_bag(idx(i), w, idx(offsets), mode=mode, padding_idx=padding_idx,
                                               include_last_offset=include_last), (wg,))


def test_embedding_bag_2d_and_per_sample_weights():
    w = RNG.standard_normal((5, 4))
    i = np.array([[0, 1, 2], [4, 4, 3]])
    psw = RNG.standard_normal((2, 3))
    got = F.embedding_bag(idx(i), t(w), mode="sum", per_sample_weights=t(psw))
    expected = np.stack([(w[i[b]] * psw[b][:, None]).sum(0) for b in range(2)])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    pg = t(psw, requires_grad=True)
    assert gradcheck(lambda p: F.embedding_bag(idx(i), t(w), mode="sum", per_sample_weights=p), (pg,))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(idx(i), t(w), mode="mean", per_sample_weights=t(psw))


def test_embedding_bag_errors():
    w = t(np.ones((4, 2)))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx([0, 1]), w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx([[0, 1]]), w, idx([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx([[0, 1]]), w, mode="min")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx([0, 1]), w, idx([1]))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding_bag(idx([0, 9]), w, idx([0]))


def test_one_hot():
    x = np.array([[0, 2], [1, 3]])
    got = F.one_hot(idx(x))
    assert got.dtype == fb.int64 and tuple(got.shape) == (2, 2, 4)
    np.testing.assert_array_equal(got.numpy(), np.eye(4, dtype=np.int64)[x])
    np.testing.assert_array_equal(F.one_hot(idx(x), 6).numpy(), np.eye(6, dtype=np.int64)[x])
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(idx(x), 3)


# -- modules ------------------------------------------------------------------------------------------

def test_embedding_module():
    from flambeau import nn

    emb = nn.Embedding(10, 3, padding_idx=-2)
    assert emb.padding_idx == 8
    assert repr(emb) == "Embedding(10, 3, padding_idx=8)"
    np.testing.assert_array_equal(emb.weight.detach().numpy()[8], np.zeros(3))  # the padding row starts at zero
    out = emb(idx([[8, 1], [1, 0]]))
    out.sum().backward()
    grad = emb.weight.grad.numpy()
    np.testing.assert_array_equal(grad[8], np.zeros(3))
    np.testing.assert_array_equal(grad[1], np.full(3, 2.0))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)
    table = t(RNG.standard_normal((4, 2)), fb.float32)
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad
    np.testing.assert_array_equal(frozen(idx([3])).numpy(), table.numpy()[[3]])
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


def test_embedding_bag_module():
    from flambeau import nn

    bag = nn.EmbeddingBag(6, 2, mode="sum")
    assert repr(bag) == "EmbeddingBag(6, 2, mode='sum')"
    i, offsets = idx([0, 1, 2, 5]), idx([0, 1])
    got = bag(i, offsets)
    w = bag.weight.detach().numpy()
    np.testing.assert_allclose(got.detach().numpy(), np.stack([w[0], w[1] + w[2] + w[5]]), rtol=1e-6)
