"""Views share storage and the version counter, with PyTorch's strides and offsets.

Strides are in elements. Expected values are PyTorch 2.x's; property tests check against numpy.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def shares(view, base):
    """Whether a write through ``view`` shows in ``base`` (and the version counter is shared)."""
    return view._version_counter is base._version_counter


def test_view_shapes_and_sharing():
    x = fb.arange(12)
    v = x.view(3, 4)
    v[1, 1] = 100
    assert x[5].item() == 100 and v.stride() == (4, 1) and shares(v, x)
    assert x.view(-1, 6).shape == (2, 6)
    assert x.view(2, -1, 3).shape == (2, 2, 3)
    assert x.view(fb.Size([3, 4])).shape == (3, 4)
    assert x.view((2, 6)).shape == (2, 6)
    assert fb.arange(12).view(3, 4).t().view(2, 2, 3).stride() == (2, 1, 4)


@pytest.mark.parametrize("call, message", [
    (lambda: fb.arange(12).view(5, -1), "shape '[5, -1]' is invalid for input of size 12"),
    (lambda: fb.arange(12).view(-1, -1), "only one dimension can be inferred"),
    (lambda: fb.arange(12).view(3, 5), "shape '[3, 5]' is invalid for input of size 12"),
    (lambda: fb.arange(12).view(3, 4).t().view(12),
     "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
     "contiguous subspaces). Use .reshape(...) instead."),
    (lambda: fb.arange(0).view(0, 3, -1),
     "cannot reshape tensor of 0 elements into shape [0, 3, -1] because the unspecified dimension size -1 can be "
     "any value and is ambiguous"),
])
def test_view_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


def test_reshape_views_when_possible_else_copies():
    x = fb.arange(12).view(3, 4)
    r = x.reshape(4, 3)
    r[0, 0] = 99
    assert x[0, 0].item() == 99 and r.data_ptr() == x.data_ptr()
    t = fb.arange(12).view(3, 4).t()
    c = t.reshape(12)
    c[0] = 99
    assert t[0, 0].item() == 0 and c.is_contiguous()
    assert fb.arange(6).reshape((3, -1)).shape == (3, 2)
    assert fb.reshape(fb.arange(6), (2, 3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        fb.arange(6).reshape(4, -1)


def test_transpose_permute_t():
    x = fb.arange(24).view(2, 3, 4)
    assert x.transpose(0, 2).shape == (4, 3, 2) and x.transpose(0, 2).stride() == (1, 4, 12)
    assert x.permute(2, 0, 1).stride() == (1, 12, 4)
    assert x.permute((1, 2, 0)).shape == (3, 4, 2) and x.permute(-1, 0, 1).shape == (4, 2, 3)
    assert shares(x.permute(1, 0, 2), x)
    m = fb.arange(6).view(2, 3)
    assert m.t().stride() == (1, 3) and m.T.shape == (3, 2) and m.mT.shape == (3, 2)
    assert fb.arange(3).t().shape == (3,) and fb.tensor(1.).t().shape == ()
    assert fb.zeros(2, 3, 4).T.shape == (4, 3, 2)
    assert fb.zeros(2, 3, 4).mT.shape == (2, 4, 3) and fb.zeros(2, 3, 4).mT.stride() == (12, 1, 4)
    assert m.swapaxes(0, 1).shape == (3, 2)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        m.transpose(0, 5)
    with pytest.raises(RuntimeError, match="permute\\(\\): duplicate dims are not allowed."):
        m.permute(0, 0)
    with pytest.raises(RuntimeError, match="number of dimensions in the tensor input does not match"):
        m.permute(0)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"):
        fb.zeros(2, 3, 4).t()
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. "
                                           "Got 1-D tensor."):
        fb.zeros(3).mT


def test_expand():
    x = fb.tensor([[1], [2]])
    e = x.expand(2, 3)
    assert e.tolist() == [[1, 1, 1], [2, 2, 2]] and e.stride() == (1, 0) and shares(e, x)
    assert x.expand(-1, 4).shape == (2, 4)
    assert x.expand(3, 2, 2).shape == (3, 2, 2) and x.expand(3, 2, 2).stride() == (0, 1, 0)
    assert x.expand_as(fb.zeros(2, 5)).shape == (2, 5)
    f = fb.tensor([[1.], [2.]])
    g = f.expand(2, 3)
    g[0, 1] = 7  # a write to an expanded view writes the one element behind it
    assert f.tolist() == [[7.], [2.]]
    g.fill_(3)  # fill_ is the one in-place op allowed on overlapping memory
    assert f.tolist() == [[3.], [3.]]
    overlap = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
               "location. Please clone() the tensor before performing the operation.")
    for write in (lambda: g.add_(1), lambda: g.copy_(fb.zeros(2, 3)), lambda: fb.add(fb.zeros(2, 3), 1, out=g),
                  lambda: g.__setitem__(0, 5)):
        with pytest.raises(RuntimeError) as info:
            write()
        assert str(info.value) == overlap
    assert f.tolist() == [[3.], [3.]]


@pytest.mark.parametrize("call, message", [
    (lambda: fb.tensor([1, 2]).expand(3),
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  "
     "Target sizes: [3].  Tensor sizes: [2]"),
    (lambda: fb.tensor([[1, 2]]).expand(2),
     "expand(flambeau.LongTensor{[1, 2]}, size=[2]): the number of sizes provided (1) must be greater or equal to "
     "the number of dimensions in the tensor (2)"),
    (lambda: fb.tensor([1, 2]).expand(-1, 2),
     "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"),
])
def test_expand_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


def test_squeeze_unsqueeze():
    x = fb.zeros(1, 3, 1, 2)
    assert x.squeeze().shape == (3, 2)
    assert x.squeeze(0).shape == (3, 1, 2) and x.squeeze(1).shape == (1, 3, 1, 2)
    assert x.squeeze(-2).shape == (1, 3, 2) and x.squeeze((0, 2)).shape == (3, 2)
    assert x.unsqueeze(0).shape == (1, 1, 3, 1, 2) and x.unsqueeze(-1).shape == (1, 3, 1, 2, 1)
    assert x.unsqueeze(4).shape == (1, 3, 1, 2, 1)
    assert fb.zeros(1, 3).unsqueeze(1).stride() == (3, 3, 1)
    assert fb.zeros(2, 3).t().unsqueeze(0).stride() == (3, 1, 3)
    assert fb.zeros(3, 1).unsqueeze(1).stride() == (1, 1, 1)
    assert fb.tensor(5.).unsqueeze(0).shape == (1,) and fb.tensor(5.).squeeze(0).shape == ()
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        fb.zeros(2).unsqueeze(2)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        fb.zeros(2).squeeze(1)


def test_narrow_select_unfold():
    x = fb.arange(10)
    n = x.narrow(0, 2, 3)
    n[0] = -1
    assert x[2].item() == -1 and shares(n, x) and n.storage_offset() == 2
    assert x.narrow(0, -3, 2).tolist() == [7, 8]
    assert fb.arange(6).view(2, 3).narrow(1, 1, 2).tolist() == [[1, 2], [4, 5]]
    with pytest.raises(RuntimeError, match=r"start \(8\) \+ length \(3\) exceeds dimension size \(10\)."):
        x.narrow(0, 8, 3)
    m = fb.arange(6).view(2, 3)
    s = m.select(1, 2)
    s[0] = 50
    assert m.tolist() == [[0, 1, 50], [3, 4, 5]] and s.stride() == (3,) and s.storage_offset() == 2
    assert m.select(0, -1).tolist() == [3, 4, 5]
    with pytest.raises(IndexError,
                       match=r"select\(\): index 3 out of range for tensor of size \[2, 3\] at dimension 1"):
        m.select(1, 3)
    with pytest.raises(IndexError, match=r"select\(\) cannot be applied to a 0-dim tensor."):
        fb.tensor(1).select(0, 0)
    u = fb.arange(8.).unfold(0, 3, 2)
    assert u.tolist() == [[0., 1., 2.], [2., 3., 4.], [4., 5., 6.]] and u.stride() == (2, 1)
    assert fb.arange(6).view(2, 3).unfold(1, 2, 1).shape == (2, 2, 2)
    assert fb.arange(6).view(2, 3).t().unfold(0, 2, 1).stride() == (1, 3, 1)
    shifted = fb.arange(9.)[1:].unfold(0, 3, 2)
    assert shifted.storage_offset() == 1 and shifted[1].storage_offset() == 3 and shares(shifted, shifted._base)
    assert fb.tensor(3.).unfold(0, 1, 1).tolist() == [3.]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 5 but size is 6"):
        fb.arange(5).unfold(0, 6, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        fb.arange(5).unfold(0, 2, 0)


def test_as_strided():
    x = fb.arange(9.)
    s = x.as_strided((2, 2), (3, 1), 1)
    assert s.tolist() == [[1., 2.], [4., 5.]] and s.stride() == (3, 1) and s.storage_offset() == 1
    assert s[1].storage_offset() == 4
    s[0, 0] = -5
    assert x[1].item() == -5 and shares(s, x)
    tail = fb.arange(9.)[2:]
    assert tail.as_strided((2,), (1,)).tolist() == [2., 3.]  # the offset defaults to the input's
    assert tail.as_strided((2,), (2,), 0).tolist() == [0., 2.]
    with pytest.raises(RuntimeError) as info:
        x.as_strided((3, 3), (3, 1), 1)
    assert str(info.value) == ("setStorage: sizes [3, 3], strides [3, 1], storage offset 1, and itemsize 4 "
                               "requiring a storage size of 40 are out of bounds for storage of size 36")


def test_contiguous_and_strides():
    x = fb.arange(6).view(2, 3).t()
    c = x.contiguous()
    assert c.is_contiguous() and not x.is_contiguous() and c.stride() == (2, 1)
    y = fb.arange(6)
    assert y.contiguous() is y
    z = fb.zeros(2, 1, 3)
    assert z.is_contiguous() and z.transpose(0, 1).is_contiguous()  # size-1 dims do not count
    assert not z[:, :, ::2].is_contiguous()
    assert fb.zeros(0, 3).t().is_contiguous() and not fb.zeros(3, 4)[:, :2].is_contiguous()
    w = fb.arange(24).view(2, 3, 4)
    assert w.stride() == (12, 4, 1) and w.stride(0) == 12 and w.stride(-1) == 1
    assert w[1].storage_offset() == 12 and w[:, 1:, 2:].storage_offset() == 6
    assert w[::2, ::2].stride() == (24, 8, 1)
    assert fb.zeros(2, 3)[None, ..., None].stride() == (6, 3, 1, 1)
    assert fb.zeros(2, 3)[:, None, ::2, None].stride() == (3, 3, 2, 1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        w.stride(3)


def test_view_dtype():
    x = fb.tensor([1., 2.])
    y = x.view(fb.int32)
    assert y.tolist() == [1065353216, 1073741824] and y.dtype is fb.int32 and shares(y, x)
    assert x.view(fb.float16).shape == (4,) and x.view(fb.int16).shape == (4,)
    assert fb.zeros(2, 4, dtype=fb.int8).view(fb.int32).shape == (2, 1)
    z = fb.zeros(3)
    z.view(fb.int32)[0] = 1065353216
    assert z.tolist() == [1., 0., 0.]
    with pytest.raises(RuntimeError) as info:
        fb.zeros(3, dtype=fb.int8).view(fb.int16)
    assert str(info.value) == ("self.size(-1) must be divisible by 2 to view Char as Short (different element "
                               "sizes), but got 3")
    with pytest.raises(RuntimeError) as info:
        fb.zeros(4, 2).t().view(fb.int8)
    assert str(info.value) == ("self.stride(-1) must be 1 to view Float as Char (different element sizes), "
                               "but got 2")


def test_version_counter_is_shared_by_views():
    x = fb.zeros(3)
    v = x[1:]
    v.add_(1)
    assert x._version_counter == v._version_counter == [1]
    assert x.tolist() == [0., 1., 1.]
    w = x.view(3)
    x.add_(1)
    assert w._version_counter[0] == 2
    assert fb.zeros(2)._version_counter[0] == 0
    m = fb.zeros(2, 2)
    m.T.mul_(2)
    assert m._version_counter[0] == 1
    n = fb.zeros(4)
    n[1:3] = 1
    assert n._version_counter[0] == 1


def test_flatten_unbind_and_aliases():
    x = fb.arange(6).view(2, 3)
    assert x.flatten().tolist() == [0, 1, 2, 3, 4, 5] and x.flatten().data_ptr() == x.data_ptr()
    assert fb.zeros(2, 3, 4).flatten(1).shape == (2, 12) and fb.tensor(1).flatten().shape == (1,)
    assert [t.tolist() for t in x.unbind(1)] == [[0, 3], [1, 4], [2, 5]]
    assert x.unbind()[1].storage_offset() == 3
    assert x.view_as(fb.zeros(3, 2)).shape == (3, 2) and x.reshape_as(fb.zeros(6)).shape == (6,)


def test_metadata():
    y = fb.arange(6.).view(2, 3)
    assert (y.element_size(), y.nbytes, y.itemsize, y.numel(), y.nelement()) == (4, 24, 4, 6, 6)
    assert (y.dim(), y.ndimension(), y.ndim, y.size(), y.size(1), y.size(-1)) == (2, 2, 2, (2, 3), 3, 3)
    assert isinstance(y.shape, fb.Size) and repr(y.shape) == "flambeau.Size([2, 3])"
    assert fb.Size([2, 3]).numel() == 6 and isinstance(fb.Size([2, 3])[1:], fb.Size)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        y.size(2)


# -- properties against numpy -------------------------------------------------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    return tuple(s // array.itemsize for s in array.strides)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data())
def test_permute_matches_numpy(shape, data):
    base = np.arange(math.prod(shape)).reshape(shape)
    order = data.draw(st.permutations(range(len(shape))))
    t = fb.from_numpy(base).permute(*order)
    expected = base.transpose(order)
    assert t.shape == expected.shape and t.stride() == element_strides(expected)
    np.testing.assert_array_equal(t.numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data())
def test_slicing_matches_numpy(shape, data):
    base = np.arange(math.prod(shape)).reshape(shape)
    index = tuple(slice(data.draw(st.integers(-5, 5) | st.none()), data.draw(st.integers(-5, 5) | st.none()),
                        data.draw(st.integers(1, 3) | st.none())) for _ in shape)
    t = fb.from_numpy(base)[index]
    expected = base[index]
    assert t.shape == expected.shape
    np.testing.assert_array_equal(t.numpy(), expected)
    if expected.size > 1:
        assert t.stride() == tuple(s if n > 1 else t.stride()[i] for i, (s, n) in
                                   enumerate(zip(element_strides(expected), expected.shape)))
    if expected.size:
        assert t.storage_offset() == int(np.ravel_multi_index(
            tuple((sl.indices(n)[0]) for sl, n in zip(index, shape)), shape)) if all(expected.shape) else True


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data())
def test_reshape_of_permuted_matches_numpy(shape, data):
    base = np.arange(math.prod(shape)).reshape(shape)
    order = data.draw(st.permutations(range(len(shape))))
    permuted = fb.from_numpy(base).permute(*order)
    numel = math.prod(shape)
    divisors = [d for d in range(1, numel + 1) if numel % d == 0]
    first = data.draw(st.sampled_from(divisors))
    result = permuted.reshape(first, -1)
    np.testing.assert_array_equal(result.numpy(), base.transpose(order).reshape(first, -1))
    if result.data_ptr() == permuted.data_ptr() and numel > 1:  # a view: writes reach the base
        assert result._version_counter is permuted._version_counter


def test_version_is_an_int_as_in_pytorch():
    base = fb.zeros(4)
    view = base[1:]
    assert base._version == 0 and isinstance(base._version, int)
    view.add_(1)
    assert base._version == view._version == 1
    base.mul_(2)
    assert view._version == 2
    assert (base + 1)._version == 0
