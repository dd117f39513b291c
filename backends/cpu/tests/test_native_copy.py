"""flambeau_cpu._C.copy_into / triangle_into agree with numpy in every layout, decline what they cannot
move as raw bytes, and refuse whatever would take them outside their arrays."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _arrays import layouts, view_of

_C = pytest.importorskip("flambeau_cpu._C")
copy_into, triangle_into = _C.copy_into, _C.triangle_into

DTYPES = (np.bool_, np.int8, np.int16, np.float16, np.float32, np.int64, np.float64, np.complex128)
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
matrix_shapes = st.lists(st.integers(0, 5), min_size=2, max_size=4).map(tuple)


def _values(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    x = rng.integers(-100, 100, size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-100, 100, size=shape)
    return np.array(x, dtype=dtype)  # an array even for shape ()


def _strided(data, rng, shape, dtype) -> np.ndarray:
    layout = data.draw(st.none() | layouts(shape))
    if layout is None:
        return _values(rng, shape, dtype)
    return view_of(_values(rng, layout[0], dtype), layout)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES))
def test_copy_into_matches_numpy_in_any_layout(data, shape, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = _strided(data, rng, shape, dtype)
    out = _strided(data, rng, shape, dtype)
    if np.may_share_memory(out, src):  # two views drawn from separate bases never overlap
        return
    before = out.copy()
    assert copy_into(out, src) is True
    np.testing.assert_array_equal(out, src)
    assert before.shape == out.shape


@settings(max_examples=80, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple))
def test_copy_into_broadcasts_the_source(data, shape):
    rng = np.random.default_rng(0)
    # drop leading dims and squash some of the rest to 1: every shape numpy broadcasts to `shape`
    keep = data.draw(st.integers(0, len(shape)))
    src_shape = tuple(1 if data.draw(st.booleans()) else n for n in shape[len(shape) - keep:])
    src = _values(rng, src_shape, np.float32)
    out = np.zeros(shape, np.float32)
    assert copy_into(out, src)
    np.testing.assert_array_equal(out, np.broadcast_to(src, shape))


def test_flip_sized_copy_threads_and_reverses():
    x = np.arange(600 * 700, dtype=np.float32).reshape(600, 700)
    for dtype in (np.float32, np.float64, np.int16, np.complex128):
        src = x.astype(dtype)
        out = np.empty_like(src)
        assert copy_into(out, src[::-1, ::-1])
        np.testing.assert_array_equal(out, src[::-1, ::-1])


def test_declines_what_numpy_must_do():
    a = np.arange(6.0)
    assert copy_into(np.empty(6, np.float32), a) is False  # another dtype: a cast
    assert copy_into(a[1:], a[:-1]) is False  # overlapping memory
    swapped = np.arange(6.0).astype(">f8")
    assert copy_into(np.empty(6, ">f8"), swapped) is False
    raw = np.zeros(8 * 6 + 1, np.uint8)
    unaligned = raw[1:].view(np.float64)
    assert copy_into(unaligned, a) is False
    assert triangle_into(np.empty((2, 3), np.float32), np.ones((2, 3)), 0, True) is False


def test_refuses_bad_arguments_before_writing():
    out = np.full((2, 3), 7.0)
    with pytest.raises(ValueError):
        copy_into(out, np.ones((3, 3)))  # does not broadcast
    with pytest.raises(ValueError):
        copy_into(out, np.ones((1, 2, 3)))  # more dims than out
    with pytest.raises(ValueError):
        copy_into(np.empty((0, 3)), np.ones((2, 3)))  # an empty out still checks shapes
    read_only = np.zeros((2, 3))
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        copy_into(read_only, np.ones((2, 3)))
    with pytest.raises(ValueError):
        triangle_into(out, np.ones((3, 2)), 0, True)
    with pytest.raises(ValueError):
        triangle_into(np.empty(3), np.ones(3), 0, True)
    np.testing.assert_array_equal(out, 7.0)


def test_a_view_reaching_past_its_buffer_is_refused():
    base = np.zeros(4)
    beyond = np.lib.stride_tricks.as_strided(base, shape=(4,), strides=(16,))
    out = np.empty(4)
    with pytest.raises(ValueError):
        copy_into(out, beyond)
    with pytest.raises(ValueError):
        copy_into(beyond, np.ones(4))
    square = np.lib.stride_tricks.as_strided(base, shape=(3, 3), strides=(24, 8))
    with pytest.raises(ValueError):
        triangle_into(np.empty((3, 3)), square, 0, True)
    np.testing.assert_array_equal(base, 0.0)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=matrix_shapes, dtype=st.sampled_from(DTYPES),
       diagonal=st.integers(-7, 7), lower=st.booleans())
def test_triangle_into_matches_numpy(data, shape, dtype, diagonal, lower):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = _strided(data, rng, shape, dtype)
    out = _strided(data, rng, shape, dtype)
    if np.may_share_memory(out, src):
        return
    assert triangle_into(out, src, diagonal, lower)
    want = np.tril(src, diagonal) if lower else np.triu(src, diagonal)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("lower", [True, False])
def test_triangle_in_place_and_threaded(lower):
    x = np.arange(3 * 300 * 200, dtype=np.float64).reshape(3, 300, 200)
    want = np.tril(x, 5) if lower else np.triu(x, 5)
    assert triangle_into(x, x, 5, lower)
    np.testing.assert_array_equal(x, want)
    t = np.arange(300 * 200, dtype=np.float32).reshape(300, 200).T  # transposed: strided rows
    out = np.empty(t.shape, np.float32)
    assert triangle_into(out, t, -3, lower)
    np.testing.assert_array_equal(out, np.tril(t, -3) if lower else np.triu(t, -3))


def test_copy_many_joins_pieces_in_one_pass():
    rng = np.random.default_rng(5)
    out = np.zeros((300, 257), np.float32)
    a = rng.standard_normal((300, 100)).astype(np.float32)
    b = rng.standard_normal((257, 300)).astype(np.float32).T[:, :157]  # a strided piece
    assert _C.copy_many([out[:, :100], out[:, 100:]], [a, b])
    np.testing.assert_array_equal(out, np.concatenate([a, b], 1))
    assert _C.copy_many([], [])


def test_copy_many_checks_every_pair_before_copying():
    out = np.zeros((2, 6))
    with pytest.raises(ValueError):  # the second pair does not broadcast: nothing is written
        _C.copy_many([out[:, :3], out[:, 3:]], [np.ones((2, 3)), np.ones((3, 3))])
    np.testing.assert_array_equal(out, 0.0)
    assert _C.copy_many([out[:, :3], out[:, 3:]], [np.ones((2, 3)), np.ones((2, 3), np.float32)]) is False
    np.testing.assert_array_equal(out, 0.0)  # declined (a cast) before the first pair was copied
    assert _C.copy_many([out[:, :3], out[:, 3:]], [np.ones((2, 3)), out[:, :3]]) is False  # src is an out
    with pytest.raises(ValueError):
        _C.copy_many([out], [])


@pytest.mark.parametrize("diagonal", [2 ** 63 - 1, -2 ** 63, 2 ** 62, -2 ** 62 - 7])
def test_triangle_into_clamps_extreme_diagonals(diagonal):
    # row + diagonal must not overflow int64 inside the C++ loop (it wrapped to the opposite answer)
    from flambeau_cpu._C import triangle_into

    src = np.arange(1.0, 13.0).reshape(3, 4)
    for lower in (True, False):
        out = np.empty_like(src)
        assert triangle_into(out, src, diagonal, lower)
        clamped = min(max(diagonal, -4), 5)
        np.testing.assert_array_equal(out, np.tril(src, clamped) if lower else np.triu(src, clamped))
