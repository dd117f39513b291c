"""Memory layouts as PyTorch's: elementwise results keep their inputs' stride order, ``memory_format=``
on ``contiguous``/``clone``/``*_like``/``to``, ``is_contiguous(memory_format=...)``, and the strides
of views of empty tensors.

The references are PyTorch's documented rules written out here (TensorIterator's output layout,
``empty_like``'s ``preserve_format``, the view ops' stride arithmetic), independent of
``flambeau._layout``.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def vals(t):
    return np.asarray(t.detach().resolve_conj().numpy())


def rowmajor(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def nhwc(shape):  # channels_last: C fastest, then W, H, N
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def ndhwc(shape):
    n, c, d, h, w = shape
    return (d * h * w * c, 1, h * w * c, w * c, c)


def dense_in_order(shape, order):  # strides laying the dims out fastest-first in `order`
    strides, acc = [0] * len(shape), 1
    for d in order:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


# -- elementwise results ---------------------------------------------------------------------

def test_unary_and_binary_results_keep_a_transposed_layout():
    x = fb.randn(3, 4).t()  # (4, 3) with strides (1, 4)
    assert x.exp().stride() == (1, 4)
    assert (x + x).stride() == (1, 4)
    assert (x * 2).stride() == (1, 4)
    assert (-x).stride() == (1, 4)
    assert (x > 0).stride() == (1, 4)
    assert x.to(fb.float64).stride() == (1, 4)
    np.testing.assert_allclose(vals(x.exp()), np.exp(vals(x)), rtol=1e-6)
    np.testing.assert_allclose(vals(x + x), 2 * vals(x), rtol=1e-6)


def test_channels_last_inputs_give_channels_last_results():
    x = fb.randn(2, 3, 4, 5).contiguous(memory_format=fb.channels_last)
    assert x.stride() == nhwc((2, 3, 4, 5))
    for r in (x.relu() if hasattr(x, "relu") else x.abs(), x + x, x * 3.0, x.sigmoid(), fb.where(x > 0, x, 0.0)):
        assert r.is_contiguous(memory_format=fb.channels_last), r.stride()
    np.testing.assert_allclose(vals(x + x), 2 * vals(x), rtol=1e-6)
    y = fb.randn(2, 3, 4, 5, 6).contiguous(memory_format=fb.channels_last_3d)
    assert y.exp().is_contiguous(memory_format=fb.channels_last_3d)


def test_the_first_input_decides_when_layouts_disagree():
    a = fb.randn(4, 3)          # row-major
    b = fb.randn(3, 4).t()      # transposed
    assert (a + b).stride() == (3, 1)
    assert (b + a).stride() == (1, 4)
    np.testing.assert_allclose(vals(b + a), vals(a) + vals(b), rtol=1e-6)


def test_broadcast_inputs_follow_the_full_sized_one():
    x = fb.randn(5, 4).t()      # (4, 5), strides (1, 4)
    row = fb.randn(5)
    col = fb.randn(4, 1)
    assert (row + x).stride() == (1, 4)   # a broadcast dim tells nothing: x decides
    assert (x + col).stride() == (1, 4)
    np.testing.assert_allclose(vals(row + x), vals(row) + vals(x), rtol=1e-6)


def test_non_dense_input_orders_the_dims_by_its_strides():
    base = fb.randn(6, 8)
    x = base.t()[::2]           # (4, 6), strides (2, 8): not dense, column-major order
    r = x.exp()
    assert r.stride() == dense_in_order((4, 6), (0, 1))  # (1, 4)
    np.testing.assert_allclose(vals(r), np.exp(vals(x)), rtol=1e-6)
    s = base[:, ::2]            # (6, 4), strides (8, 2): row-major order
    assert s.exp().stride() == (4, 1)


def test_out_and_in_place_keep_the_written_tensor():
    x = fb.randn(3, 4).t()
    out = fb.empty(4, 3)
    fb.exp(x, out=out)
    assert out.stride() == (3, 1)
    y = x.clone()
    y.add_(1)
    assert y.stride() == (1, 4)


def _torch_rule(shape, inputs):
    """TensorIterator's output strides written out (PyTorch's compute_fast_setup_type, then
    reorder_dimensions and an output dense in the permuted order)."""
    ndim = len(shape)

    def contiguous(s, st):
        exp = 1
        for n, x in zip(reversed(s), reversed(st)):
            if n != 1:
                if x != exp:
                    return False
                exp *= n
        return True

    def dense(s, st):
        dims = sorted([d for d in range(len(s)) if s[d] > 1], key=lambda d: st[d])
        exp = 1
        for d in dims:
            if st[d] != exp:
                return False
            exp *= s[d]
        return True

    if all(tuple(s) == tuple(shape) for s, _ in inputs):
        if all(contiguous(s, st) for s, st in inputs):
            return rowmajor(shape)
        if all(dense(s, st) for s, st in inputs) and len({tuple(st) for _, st in inputs}) == 1:
            return tuple(inputs[0][1])
    al = []
    for s, strides in inputs:
        lead = ndim - len(s)
        al.append([0] * lead + [0 if s[i] == 1 and shape[lead + i] != 1 else strides[i] for i in range(len(s))])
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        d1 = i
        for d0 in reversed(range(i)):
            c = 0
            for strides in al:
                a, b = strides[perm[d0]], strides[perm[d1]]
                if a == 0 or b == 0:
                    continue
                if a != b:
                    c = -1 if a < b else 1
                    break
                if shape[perm[d0]] > shape[perm[d1]]:
                    c = 1
                    break
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return dense_in_order(shape, perm)


@st.composite
def strided_inputs(draw):
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(2, 4), min_size=ndim, max_size=ndim)))
    perm = draw(st.permutations(range(ndim)))
    return shape, tuple(perm), draw(st.booleans()), draw(st.sampled_from(["same", "rowmajor", "broadcast", "scalar"]))


@settings(max_examples=60, deadline=None)
@given(strided_inputs())
def test_elementwise_strides_follow_tensoriterator(case):
    shape, perm, step, other_kind = case
    base = fb.randn(*[shape[p] * (2 if step and i == 0 else 1) for i, p in enumerate(perm)])
    x = base[::2] if step else base
    inv = [perm.index(d) for d in range(len(shape))]
    x = x.permute(*inv)          # shape `shape`, strides ordered by perm (and not dense when stepped)
    assert tuple(x.shape) == shape
    if other_kind == "same":
        other = x * 1.0
    elif other_kind == "rowmajor":
        other = fb.randn(*shape)
    elif other_kind == "broadcast":
        other = fb.randn(*shape[1:])
    else:
        other = 2.0
    r = x + other
    inputs = [(shape, x.stride())] + ([(tuple(other.shape), other.stride())] if isinstance(other, fb.Tensor) else [])
    expected = _torch_rule(shape, inputs)
    # dims of size 1 do not occur (sizes >= 2), so strides compare exactly
    assert r.stride() == expected, (x.stride(), other_kind)
    ref = vals(x) + (vals(other) if isinstance(other, fb.Tensor) else other)
    np.testing.assert_allclose(vals(r), ref, rtol=1e-6)


# -- memory_format= ---------------------------------------------------------------------------

def test_memory_format_objects():
    assert repr(fb.channels_last) == "flambeau.channels_last"
    for fmt in (fb.contiguous_format, fb.channels_last, fb.channels_last_3d, fb.preserve_format):
        assert isinstance(fmt, fb.memory_format)


def test_contiguous_with_a_memory_format():
    x = fb.randn(2, 3, 4, 5)
    y = x.contiguous(memory_format=fb.channels_last)
    assert y.stride() == nhwc((2, 3, 4, 5)) and y.is_contiguous(memory_format=fb.channels_last)
    assert not y.is_contiguous() and x.is_contiguous() and not x.is_contiguous(memory_format=fb.channels_last)
    assert y.contiguous(memory_format=fb.channels_last) is y
    assert np.array_equal(vals(y), vals(x))
    z = y.contiguous()
    assert z.stride() == rowmajor((2, 3, 4, 5)) and np.array_equal(vals(z), vals(x))
    v = fb.randn(2, 3, 4, 5, 6).contiguous(memory_format=fb.channels_last_3d)
    assert v.stride() == ndhwc((2, 3, 4, 5, 6))
    assert x.contiguous(memory_format=fb.preserve_format) is x
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x.transpose(0, 1).contiguous(memory_format=fb.preserve_format)
    # PyTorch counts a dim of size 0 as 0 in channels_last strides
    assert fb.zeros(2, 0, 3, 4).contiguous(memory_format=fb.channels_last).stride() == (0, 1, 0, 0)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fb.randn(2, 3).contiguous(memory_format=fb.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        x.contiguous(memory_format="channels_last")


def test_empty_with_a_memory_format():
    assert fb.empty(2, 3, 4, 5, memory_format=fb.channels_last).stride() == nhwc((2, 3, 4, 5))
    assert fb.empty((2, 3, 4, 5, 6), memory_format=fb.channels_last_3d).stride() == ndhwc((2, 3, 4, 5, 6))
    assert fb.empty(2, 3, memory_format=fb.contiguous_format).stride() == (3, 1)
    assert fb.empty(2, 3, 0, 4, memory_format=fb.channels_last).stride() == (0, 1, 12, 3)  # as PyTorch
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fb.empty(2, 3, memory_format=fb.channels_last)
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        fb.empty(2, 3, memory_format=fb.preserve_format)


def test_is_contiguous_with_a_memory_format():
    x = fb.randn(2, 3, 4, 5)
    assert x.is_contiguous(memory_format=fb.contiguous_format)
    assert not fb.randn(2, 3).is_contiguous(memory_format=fb.channels_last)
    assert not fb.randn(2, 3, 4, 5).is_contiguous(memory_format=fb.channels_last_3d)
    # a size-1 channel dim: the same memory is both row-major and channels_last, as in PyTorch
    one = fb.randn(2, 1, 4, 5)
    assert one.is_contiguous() and one.is_contiguous(memory_format=fb.channels_last)
    # preserve_format reads as row-major here, as in PyTorch
    assert x.is_contiguous(memory_format=fb.preserve_format)
    assert not x.permute(0, 2, 3, 1).is_contiguous(memory_format=fb.preserve_format)
    assert not fb.zeros(2, 0, 3, 4).is_contiguous(memory_format=fb.channels_last)


@pytest.mark.parametrize("make", [
    lambda x, **k: fb.empty_like(x, **k), lambda x, **k: fb.zeros_like(x, **k), lambda x, **k: fb.ones_like(x, **k),
    lambda x, **k: fb.full_like(x, 7.0, **k), lambda x, **k: fb.rand_like(x, **k), lambda x, **k: fb.randn_like(x, **k),
    lambda x, **k: x.clone(**k), lambda x, **k: fb.clone(x, **k),
])
def test_like_functions_and_clone_preserve_or_set_the_layout(make):
    t = fb.randn(4, 3).t()  # (3, 4), strides (1, 3)
    assert make(t).stride() == (1, 3)  # preserve_format, the default: a dense input's own strides
    assert make(t, memory_format=fb.preserve_format).stride() == (1, 3)
    assert make(t, memory_format=fb.contiguous_format).stride() == (4, 1)
    c = fb.randn(2, 3, 4, 5)
    assert make(c, memory_format=fb.channels_last).stride() == nhwc((2, 3, 4, 5))
    cl = c.contiguous(memory_format=fb.channels_last)
    assert make(cl).stride() == nhwc((2, 3, 4, 5))
    # not dense: preserve_format gives the format the strides suggest
    sliced = cl[:, :, ::2]
    assert make(sliced).stride() == nhwc((2, 3, 2, 5))
    assert make(fb.randn(4, 6)[:, ::2]).stride() == (3, 1)
    # not dense and transposed: dense strides in the input's order (PyTorch's infer_dense_strides)
    assert make(fb.randn(6, 8).t()[::2]).stride() == (1, 4)


def test_like_values_and_dtypes_survive_the_layout():
    t = fb.randn(4, 3).t()
    assert np.array_equal(vals(fb.zeros_like(t)), np.zeros((3, 4)))
    assert np.array_equal(vals(fb.ones_like(t, dtype=fb.int64)), np.ones((3, 4)))
    f = fb.full_like(t, 2.5, memory_format=fb.preserve_format)
    assert f.dtype == fb.float32 and np.array_equal(vals(f), np.full((3, 4), 2.5))
    assert np.array_equal(vals(t.clone()), vals(t))
    r = fb.rand_like(t)
    assert ((vals(r) >= 0) & (vals(r) < 1)).all()
    try:  # requires_grad needs core-autograd; flambeau's finder raises when it is missing
        has_autograd = importlib.util.find_spec("flambeau.autograd") is not None
    except ImportError:
        has_autograd = False
    if has_autograd:
        g = fb.zeros_like(t, requires_grad=True)
        assert g.requires_grad and g.is_leaf and g.stride() == (1, 3)


def test_to_with_a_memory_format():
    x = fb.randn(2, 3, 4, 5)
    y = x.to(memory_format=fb.channels_last)
    assert y.is_contiguous(memory_format=fb.channels_last) and np.array_equal(vals(y), vals(x))
    z = x.to(fb.float64, memory_format=fb.channels_last)
    assert z.dtype == fb.float64 and z.is_contiguous(memory_format=fb.channels_last)
    assert y.to(memory_format=fb.channels_last) is y
    assert x.t().to(fb.float64).stride() == x.t().stride() if x.dim() == 2 else True
    t = fb.randn(3, 4).t()
    assert t.double().stride() == (1, 4)  # preserve_format
    assert t.to(fb.float64, memory_format=fb.contiguous_format).stride() == (3, 1)


# -- views of empty tensors keep PyTorch's strides ------------------------------------------------

def test_transpose_of_an_empty_tensor():
    assert fb.zeros(0, 3).t().stride() == (1, 3)
    assert fb.zeros(0, 3).stride() == (3, 1)
    assert fb.zeros(2, 0, 3).permute(2, 0, 1).stride() == (1, 3, 3)
    assert fb.zeros(0, 3).unsqueeze(0).stride() == (0, 3, 1)
    assert fb.zeros(0, 3)[:, 1:].stride() == (3, 1)
    assert fb.zeros(0, 4)[:, ::2].stride() == (4, 2)
    assert fb.zeros(0, 3).expand(2, 0, 3).stride() == (0, 3, 1)
    assert fb.zeros(0, 3).view(3, 0).stride() == (1, 1)
    assert fb.zeros(0, 3).as_strided((0, 3), (5, 7)).stride() == (5, 7)
    # a copy of an empty tensor keeps its strides too (preserve_format: empty counts as dense)
    assert fb.zeros(0, 3).t().clone().stride() == (1, 3)
    assert fb.empty_like(fb.zeros(0, 3).t()).stride() == (1, 3)


@st.composite
def view_chains(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim))
    zero = draw(st.integers(0, ndim - 1))
    shape[zero] = 0
    steps = draw(st.lists(st.tuples(st.sampled_from(["transpose", "permute", "unsqueeze", "slice", "expand",
                                                     "squeeze", "t", "as_strided", "narrow"]),
                                    st.integers(0, 10 ** 6)), max_size=5))
    return tuple(shape), steps


@settings(max_examples=80, deadline=None)
@given(view_chains())
def test_view_chains_on_empty_tensors_keep_pytorchs_strides(case):
    """Each step's strides as PyTorch computes them, written out."""
    shape, steps = case
    t = fb.zeros(*shape)
    s, st_ = list(shape), list(rowmajor(shape))
    for name, r in steps:
        n = len(s)
        if name == "transpose" and n:
            a, b = r % n, (r // 7) % n
            t = t.transpose(a, b)
            s[a], s[b], st_[a], st_[b] = s[b], s[a], st_[b], st_[a]
        elif name == "permute" and n:
            perm = [int(p) for p in np.random.default_rng(r).permutation(n)]
            t = t.permute(*perm)
            s, st_ = [s[p] for p in perm], [st_[p] for p in perm]
        elif name == "t" and n <= 2:
            t = t.t()
            s, st_ = s[::-1], st_[::-1]
        elif name == "unsqueeze" and n < 6:
            d = r % (n + 1)
            t = t.unsqueeze(d)
            new = s[d] * st_[d] if d < n else 1
            s.insert(d, 1)
            st_.insert(d, new)
        elif name == "slice" and n:
            d, step = r % n, 1 + (r // 5) % 3
            t = t[(slice(None),) * d + (slice(None, None, step),)]
            s[d] = -(-s[d] // step)
            st_[d] *= step
        elif name == "narrow" and n:
            d = r % n
            t = t.narrow(d, 0, 0)
            s[d] = 0
        elif name == "expand" and n < 6:
            k = 1 + r % 2
            t = t.expand(k, *s)
            s, st_ = [k] + s, [0] + st_
        elif name == "squeeze" and n and 1 in s:
            d = s.index(1)
            t = t.squeeze(d)
            del s[d], st_[d]
        elif name == "as_strided":
            st_ = [1 + (r >> i) % 5 for i in range(n)]
            t = t.as_strided(tuple(s), tuple(st_))
        assert tuple(t.shape) == tuple(s)
        assert t.stride() == tuple(st_), (name, t.stride(), st_)


# -- an optional parity check against PyTorch itself ----------------------------------------------

def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    for shape, make in [((4, 3), lambda m, x: x.t()), ((2, 3, 4, 5), lambda m, x: x.contiguous(
            memory_format=m.channels_last)), ((6, 8), lambda m, x: x.t()[::2])]:
        ours, theirs = make(fb, fb.randn(*shape)), make(torch, torch.randn(*shape))
        assert ours.exp().stride() == theirs.exp().stride()
        assert (ours + 1).stride() == (theirs + 1).stride()
        assert fb.empty_like(ours).stride() == torch.empty_like(theirs).stride()
        assert ours.clone().stride() == theirs.clone().stride()
    assert fb.zeros(0, 3).t().stride() == torch.zeros(0, 3).t().stride()


def test_suggested_format_follows_pytorchs_stride_rules():
    """PyTorch's suggest_memory_format (for nn's convolutions): channels_last when the strides grow
    along C, W, H, N; ambiguous size-1 cases stay row-major."""
    from flambeau._layout import suggest_format

    assert suggest_format((2, 3, 4, 5), rowmajor((2, 3, 4, 5))) == "contiguous_format"
    assert suggest_format((2, 3, 4, 5), nhwc((2, 3, 4, 5))) == "channels_last"
    assert suggest_format((2, 3, 4, 5, 6), ndhwc((2, 3, 4, 5, 6))) == "channels_last_3d"
    assert suggest_format((4, 1, 1, 1), (1, 1, 1, 1)) == "contiguous_format"  # N111: ambiguous
    assert suggest_format((2, 3, 0, 5), nhwc((2, 3, 1, 5))) == "contiguous_format"  # an empty dim
    assert suggest_format((2, 3), (3, 1)) == "contiguous_format"
    cl = fb.randn(2, 3, 4, 5).contiguous(memory_format=fb.channels_last)
    assert suggest_format(tuple(cl.shape), cl.stride()) == "channels_last"
