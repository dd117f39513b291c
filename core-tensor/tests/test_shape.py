"""Joining, splitting, reordering, diagonals and the creation extras, beyond the conformance kit:
call forms, views and the version counter, PyTorch's errors and warnings, and properties against numpy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def shares(view, base):
    return view._version_counter is base._version_counter


def arr(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- cat / stack ----------------------------------------------------------------------------

def test_cat_promotes_and_aliases():
    a = fb.tensor([[1, 2]], dtype=fb.int32)
    b = fb.tensor([[0.5, 1.5]], dtype=fb.float64)
    c = fb.tensor([[True, False]])
    for fn in (fb.cat, fb.concat, fb.concatenate):
        r = fn([a, b, c])
        assert r.dtype == fb.float64 and r.tolist() == [[1, 2], [0.5, 1.5], [1, 0]]
    assert fb.cat((a, c)).dtype == fb.int32
    assert fb.cat([a, fb.tensor([], dtype=fb.int8)], dim=1).shape == (1, 2)  # legacy empty 1-D


def test_cat_out_and_errors():
    out = fb.empty(4, 2)
    r = fb.cat([fb.ones(1, 2), fb.zeros(3, 2)], out=out)
    assert r is out and out.sum().item() == 2
    with pytest.raises(RuntimeError, match=r"^flambeau.cat\(\): expected a non-empty list of Tensors$"):
        fb.cat([])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 1"):
        fb.cat([fb.ones(2, 2), fb.ones(2)])
    with pytest.raises(RuntimeError, match="Expected size 2 but got size 3 for tensor number 1 in the list."):
        fb.cat([fb.ones(2, 2), fb.ones(3, 2)], 1)
    with pytest.raises(TypeError, match="must be Tensor"):
        fb.cat([fb.ones(2), 3])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        fb.cat([fb.ones(2)], out=fb.empty(2, dtype=fb.int64))


def test_stack_family_shapes_match_numpy():
    a, b = arr((2, 3)), arr((2, 3), seed=1)
    ta, tb = fb.tensor(a), fb.tensor(b)
    for dim in range(-3, 3):
        assert np.array_equal(fb.stack([ta, tb], dim).numpy(), np.stack([a, b], dim))
    assert np.array_equal(fb.hstack([ta, tb]).numpy(), np.hstack([a, b]))
    assert np.array_equal(fb.vstack([ta, tb]).numpy(), np.vstack([a, b]))
    assert np.array_equal(fb.row_stack([ta, tb]).numpy(), np.vstack([a, b]))
    assert np.array_equal(fb.dstack([ta, tb]).numpy(), np.dstack([a, b]))
    assert np.array_equal(fb.column_stack([ta[0], tb[0]]).numpy(), np.column_stack([a[0], b[0]]))
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 "
                                           r"and \[3\] at entry 1"):
        fb.stack([ta, fb.ones(3)])
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        fb.stack([])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(1, 3), st.integers(0, 2), st.data())
def test_cat_property(sizes, ndim, dim_seed, data):
    dim = dim_seed % ndim
    other = data.draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    arrays = []
    for i, n in enumerate(sizes):
        shape = list(other)
        shape[dim] = n
        arrays.append(arr(tuple(shape), seed=i))
    got = fb.cat([fb.tensor(a) for a in arrays], dim)
    assert np.array_equal(got.numpy(), np.concatenate(arrays, dim))


# -- splitting: views --------------------------------------------------------------------

def test_split_chunk_tensor_split_are_views():
    x = fb.arange(10.).reshape(5, 2)
    for pieces in (x.split(2), fb.split(x, [1, 4]), x.chunk(3), x.tensor_split(3), x.tensor_split([1, 3]),
                   fb.tensor_split(x, fb.tensor([2])), x.unbind()):
        assert all(shares(p, x) for p in pieces)
        assert sum(p.numel() for p in pieces) == 10
    pieces = x.split(2)
    pieces[2][0, 0] = -1
    assert x[4, 0].item() == -1
    assert [p.shape[0] for p in fb.chunk(fb.ones(6), 4)] == [2, 2, 2]  # PyTorch: fewer chunks than asked
    assert [p.shape[0] for p in fb.tensor_split(fb.ones(7), 3)] == [3, 2, 2]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 12), st.integers(1, 5))
def test_tensor_split_matches_array_split(n, sections):
    a = np.arange(n, dtype=np.float64)
    got = fb.tensor_split(fb.tensor(a), sections)
    want = np.array_split(a, sections)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_split_errors():
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 5"):
        fb.ones(5).split([2, 2])
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        fb.ones(5).chunk(0)


# -- reordering ---------------------------------------------------------------------------

def test_movedim_unflatten_broadcast_views():
    x = fb.tensor(arr((2, 3, 4)))
    m = fb.movedim(x, (0, 1), (2, 0))
    assert np.array_equal(m.numpy(), np.moveaxis(x.numpy(), (0, 1), (2, 0))) and shares(m, x)
    assert fb.moveaxis(x, 0, -1).shape == (3, 4, 2) and x.moveaxis(0, -1).shape == (3, 4, 2)
    u = x.unflatten(2, (2, -1))
    assert u.shape == (2, 3, 2, 2) and shares(u, x)
    b = fb.broadcast_to(fb.ones(3, 1), (2, 3, 4))
    assert b.shape == (2, 3, 4) and b.stride() == (0, 1, 0)
    p, q = fb.broadcast_tensors(fb.ones(3, 1), fb.ones(4))
    assert p.shape == q.shape == (3, 4)
    assert fb.broadcast_shapes((2, 1), (3,), 1) == fb.Size([2, 3])
    with pytest.raises(RuntimeError, match="at non-singleton dimension 1"):
        fb.broadcast_shapes((2, 3), (2, 4))


def test_atleast_forms():
    s = fb.tensor(1.0)
    assert fb.atleast_1d(s).shape == (1,) and fb.atleast_2d(s).shape == (1, 1)
    assert fb.atleast_3d(fb.ones(4)).shape == (1, 4, 1) and fb.atleast_3d(fb.ones(2, 3)).shape == (2, 3, 1)
    a, b = fb.atleast_2d(fb.ones(3), s)
    assert a.shape == (1, 3) and b.shape == (1, 1)
    assert len(fb.atleast_1d([s, s])) == 2


def test_squeeze_swap_aliases():
    x = fb.ones(2, 1, 1, 3)
    assert x.squeeze((1, 2)).shape == (2, 3) and fb.squeeze(x, (0, 1)).shape == (2, 1, 3)
    assert fb.swapaxes(x, 0, 3).shape == (3, 1, 1, 2) and x.swapdims(0, -1).shape == (3, 1, 1, 2)


# -- copies ---------------------------------------------------------------------------------

def test_flip_roll_rot90_repeat_tile_match_numpy():
    a = arr((3, 4))
    x = fb.tensor(a).t()
    assert np.array_equal(x.flip(0, 1).numpy(), np.flip(a.T, (0, 1)))
    assert np.array_equal(fb.fliplr(x).numpy(), np.fliplr(a.T)) and np.array_equal(fb.flipud(x).numpy(), np.flipud(a.T))
    assert np.array_equal(fb.roll(x, (1, -1), (0, 1)).numpy(), np.roll(a.T, (1, -1), (0, 1)))
    assert np.array_equal(x.roll(5).numpy(), np.roll(a.T.reshape(-1), 5).reshape(4, 3))
    for k in range(-5, 6):
        assert np.array_equal(fb.rot90(x, k).numpy(), np.rot90(a.T, k))
    assert np.array_equal(x.repeat(2, 1, 3).numpy(), np.tile(a.T, (2, 1, 3)))
    assert np.array_equal(x.repeat((2, 2)).numpy(), np.tile(a.T, (2, 2)))
    assert np.array_equal(x.tile(2).numpy(), np.tile(a.T, 2)) and np.array_equal(fb.tile(x, (2, 1, 1)).numpy(),
                                                                                    np.tile(a.T, (2, 1, 1)))
    r = x.flip(0)
    assert not shares(r, x)


def test_repeat_interleave_forms():
    x = fb.tensor([[1, 2], [3, 4]])
    assert fb.repeat_interleave(x, 2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert x.repeat_interleave(fb.tensor([1, 2]), dim=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert x.repeat_interleave(3, dim=1, output_size=6).shape == (2, 6)
    assert fb.repeat_interleave(fb.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    y = fb.ones(3)
    assert not shares(fb.repeat_interleave(y, 1), y)
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        x.repeat_interleave(fb.tensor([1, 2, 3]), dim=0)


# -- diagonals and triangles --------------------------------------------------------------

def test_diagonal_is_a_writable_view():
    x = fb.zeros(3, 4)
    d = x.diagonal(1)
    d.fill_(7)
    assert np.array_equal(x.numpy(), np.eye(3, 4, 1) * 7) and shares(d, x)
    y = fb.tensor(arr((2, 3, 4)))
    assert np.array_equal(y.diagonal(-1, 2, 1).numpy(), np.diagonal(y.numpy(), -1, 2, 1))
    assert fb.diagonal(fb.ones(2, 3), 5).shape == (0,)


def test_diag_diag_embed_diagflat():
    v = fb.tensor([1.0, 2.0])
    assert np.array_equal(fb.diag(v, 1).numpy(), np.diag([1.0, 2.0], 1))
    m = fb.tensor(arr((3, 4)))
    assert np.array_equal(m.diag(-1).numpy(), np.diag(m.numpy(), -1)) and not shares(m.diag(), m)
    e = fb.diag_embed(fb.tensor(arr((2, 3))), offset=-1)
    assert e.shape == (2, 4, 4) and np.array_equal(e[1].numpy(), np.diag(e[1].numpy().diagonal(-1), -1))
    assert np.array_equal(fb.diagflat(fb.tensor([[1, 2], [3, 4]])).numpy(), np.diagflat([[1, 2], [3, 4]]))


def test_tril_triu_in_place_bumps_version():
    a = arr((2, 4, 5))
    x = fb.tensor(a)
    assert np.array_equal(x.tril(1).numpy(), np.tril(a, 1)) and np.array_equal(fb.triu(x, -2).numpy(), np.triu(a, -2))
    v = x._version_counter[0]
    assert x.tril_() is x and x._version_counter[0] == v + 1
    assert np.array_equal(x.numpy(), np.tril(a))
    nan = fb.tensor([[1.0, float("nan")], [2.0, 3.0]])
    assert nan.tril().tolist() == [[1.0, 0.0], [2.0, 3.0]]  # a NaN above the diagonal becomes 0


# -- creation extras ------------------------------------------------------------------------

def test_range_warns_includes_end_and_defaults_to_float():
    with pytest.warns(UserWarning, match="flambeau.range is deprecated"):
        r = fb.range(1, 4)
    assert r.dtype == fb.float32 and r.tolist() == [1, 2, 3, 4]
    with pytest.warns(UserWarning):
        assert fb.range(0, 1, 0.25, dtype=fb.float64).tolist() == [0, 0.25, 0.5, 0.75, 1.0]
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="step must be nonzero"):
        fb.range(0, 1, 0)


def test_tril_triu_indices_match_numpy():
    for row, col, off in [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 4, -9), (2, 2, 5)]:
        assert fb.tril_indices(row, col, off).tolist() == [list(v) for v in np.tril_indices(row, off, col)]
        assert fb.triu_indices(row, col, off).tolist() == [list(v) for v in np.triu_indices(row, off, col)]
    assert fb.tril_indices(3, 3, dtype=fb.int32).dtype == fb.int32


def test_complex_and_polar():
    re, im = fb.tensor([1.0, 2.0]), fb.tensor([[3.0], [4.0]])
    z = fb.complex(re, im)
    assert z.dtype == fb.complex64 and z.shape == (2, 2) and z[1, 0].item() == 1 + 4j
    assert fb.complex(re.double(), re.double()).dtype == fb.complex128
    p = fb.polar(fb.tensor([2.0]), fb.tensor([np.pi / 2]))
    assert abs(p.item() - 2j) < 1e-6
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double tensors"):
        fb.complex(fb.tensor([1]), fb.tensor([1]))


def test_meshgrid_forms_and_warning():
    a, b = fb.arange(3), fb.arange(2)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        x, y = fb.meshgrid(a, b)
    assert x.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for indexing in ("ij", "xy"):
            got = fb.meshgrid([a, b], indexing=indexing)
            want = np.meshgrid(a.numpy(), b.numpy(), indexing=indexing)
            assert all(np.array_equal(g.numpy(), w) for g, w in zip(got, want))
            assert all(shares(g, t) for g, t in zip(got, (a, b)))


def test_empty_strided_clone_memory_format():
    e = fb.empty_strided((2, 3), (1, 2), dtype=fb.float64)
    assert e.stride() == (1, 2) and e.dtype == fb.float64 and e.shape == (2, 3)
    x = fb.tensor(arr((3, 4))).t()
    assert x.clone().stride() == (1, 4) and fb.clone(x).stride() == (1, 4) and not shares(x.clone(), x)
    assert x.clone(memory_format=fb.contiguous_format).stride() == (3, 1)
    assert np.array_equal(x.clone().numpy(), x.numpy())
    assert x[::2].clone().stride() == (1, 2)  # not dense: dense in the input's order, as PyTorch's
    assert fb.ones(3, 1).expand(3, 4).clone().stride() == (4, 1)  # overlapping: row-major
    assert x.reshape(12).numpy().tolist() == x.numpy().reshape(12).tolist()  # reshape still copies row-major
    assert x.contiguous().stride() == (3, 1)
    # clone's gradient through a transposed layout: core-autograd/tests/test_formulas_shape.py
    a = arr((2, 3, 4, 5))
    cl = fb.tensor(a).clone(memory_format=fb.channels_last)
    assert cl.stride() == (60, 1, 15, 3) and np.array_equal(cl.numpy(), a)
    assert fb.clone(fb.ones(1, 2, 3, 4, 5), memory_format=fb.channels_last_3d).stride() == (120, 1, 40, 10, 2)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fb.ones(2, 3).clone(memory_format=fb.channels_last)


def test_zeros_ones_full_like_with_out():
    out = fb.empty(2, 3)
    assert fb.zeros(2, 3, out=out) is out and out.sum().item() == 0
    assert fb.ones((2, 3), out=out) is out and out.sum().item() == 6
    f = fb.full_like(fb.ones(2, dtype=fb.int32), 7)
    assert f.dtype == fb.int32 and f.tolist() == [7, 7]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=4), min_size=1, max_size=4))
def test_broadcast_shapes_and_tensors_match_numpy(shapes):
    try:
        want = np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            fb.broadcast_shapes(*shapes)
        return
    assert tuple(fb.broadcast_shapes(*shapes)) == want
    tensors = [fb.tensor(arr(tuple(s), seed=i)) for i, s in enumerate(shapes)]
    for got, a in zip(fb.broadcast_tensors(*tensors), tensors):
        assert np.array_equal(got.numpy(), np.broadcast_to(a.numpy(), want)) and shares(got, a)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(-4, 4), st.data())
def test_diagonal_and_diag_embed_round_trip(rows, cols, batch, offset, data):
    a = arr((batch, rows, cols))
    dim1, dim2 = data.draw(st.sampled_from([(1, 2), (2, 1), (0, 2), (-1, -2)]))
    x = fb.tensor(a)
    d = x.diagonal(offset, dim1, dim2)
    assert np.array_equal(d.numpy(), np.diagonal(a, offset, dim1, dim2))
    e = fb.diag_embed(d, offset, dim1, dim2)
    assert np.array_equal(e.diagonal(offset, dim1, dim2).numpy(), d.numpy())
    assert e.abs().sum().item() == pytest.approx(d.abs().sum().item(), rel=1e-5)


def test_docstring_examples_run():
    import doctest

    from flambeau._core_ops._docs_shape import DOCS

    for name, text in DOCS.items():
        test = doctest.DocTestParser().get_doctest(text, {"fb": fb}, name, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=lambda s: None)
        assert runner.failures == 0, name
        assert getattr(fb.ops.fn, name).__doc__ == text
