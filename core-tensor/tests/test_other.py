"""einsum, tensordot and the "other" composites beyond the conformance kit: call forms, PyTorch's
warnings and errors, in-place forms, and properties against numpy (hypothesis for einsum)."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def arr(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- einsum --------------------------------------------------------------------------------

def test_einsum_call_forms():
    a, b = arr((2, 3)), arr((3, 4), seed=1)
    ta, tb = fb.tensor(a), fb.tensor(b)
    for r in (fb.einsum("ij,jk->ik", ta, tb), fb.einsum("ij,jk->ik", [ta, tb]), fb.einsum("ij,jk", ta, tb),
              fb.einsum(ta, [0, 1], tb, [1, 2]), fb.einsum(ta, [0, 1], tb, [1, 2], [0, 2]),
              fb.einsum(" i j , j k -> i k ", ta, tb)):
        assert np.allclose(r.numpy(), a @ b)
    x = arr((2, 3, 3))
    assert np.allclose(fb.einsum(fb.tensor(x), [Ellipsis, 0, 0], [Ellipsis, 0]).numpy(), np.einsum("...ii->...i", x))


def test_einsum_keeps_integer_dtypes_and_broadcasts_size_one_labels():
    a = fb.tensor([[1, 2, 3]], dtype=fb.int32)
    b = fb.tensor([[1, 1, 1], [2, 2, 2]], dtype=fb.int32)
    r = fb.einsum("ij,ij->ij", a, b)
    assert r.dtype == fb.int32 and r.tolist() == [[1, 2, 3], [2, 4, 6]]
    assert fb.einsum("ij->", a).dtype == fb.int32


@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ij->ij", [(2, 3), (2, 3)], "more operands were provided than specified in the equation"),
    ("ij,jk->ii", [(2, 3), (3, 4)], "output subscript i appears more than once in the output"),
    ("ij->ij->", [(2, 3)], "invalid subscript given at index 6 in the equation string"),
    ("..ij->ij", [(2, 3)], "found '.' for operand 0 that is not part of any ellipsis"),
    ("ii->i", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 2 != 3"),
    ("...ij,...jk->...ik", [(2, 2, 2, 3), (5, 3, 4)], "dimension 0 covered by ellipsis in operand 1has size 5"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match="einsum\\(\\): " + message.replace("(", "\\(").replace(")", "\\)")):
        fb.einsum(equation, *[fb.ones(*s) for s in shapes])


_LABELS = "abcd"


@st.composite
def einsum_problems(draw):
    sizes = {c: draw(st.integers(0, 3)) for c in _LABELS}
    n_ops = draw(st.integers(1, 3))
    ops = []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from(_LABELS), min_size=0, max_size=3))
        ops.append("".join(labels))
    used = sorted(set("".join(ops)))
    out = draw(st.one_of(st.none(), st.permutations(used).map(lambda p: "".join(p))))
    if out is not None:
        out = out[:draw(st.integers(0, len(out)))]
    eq = ",".join(ops) + ("" if out is None else "->" + out)
    shapes = [tuple(sizes[c] for c in o) for o in ops]
    return eq, shapes


@settings(max_examples=60, deadline=None)
@given(einsum_problems(), st.booleans())
def test_einsum_matches_numpy(problem, transposed):
    eq, shapes = problem
    arrays = [arr(s, seed=i) for i, s in enumerate(shapes)]
    tensors = [fb.tensor(a.T.copy()).permute(*reversed(range(a.ndim))) if transposed and a.ndim > 1 else fb.tensor(a)
               for a in arrays]
    expected = np.einsum(eq, *arrays)
    r = fb.einsum(eq, *tensors)
    assert r.shape == expected.shape
    assert np.allclose(r.numpy(), expected)


def test_einsum_result_does_not_alias_its_operand():
    x = fb.ones(2, 2)
    r = fb.einsum("ij", x)
    r.add_(1)
    assert x.sum().item() == 4


# -- tensordot, kron, cross, cdist, trace --------------------------------------------------

def test_tensordot_dims_forms():
    a, b = arr((3, 4, 5)), arr((4, 5, 2), seed=1)
    ta, tb = fb.tensor(a), fb.tensor(b)
    for dims in (2, fb.tensor(2), ([1, 2], [0, 1]), [[1, 2], [0, 1]], fb.tensor([[1, 2], [0, 1]])):
        assert np.allclose(fb.tensordot(ta, tb, dims=dims).numpy(), np.tensordot(a, b, 2))
    assert fb.tensordot(ta, tb, 0).shape == (3, 4, 5, 4, 5, 2)
    with pytest.raises(RuntimeError, match="tensordot expects dims < ndim_a or ndim_b, but got dims=4"):
        fb.tensordot(ta, tb, 4)
    with pytest.raises(RuntimeError, match="tensordot expects dims to be int or"):
        fb.tensordot(ta, tb, 1.5)


def test_kron_matches_numpy_with_mixed_ranks():
    a, b = arr((2, 3)), arr((4, 1, 2), seed=1)
    assert np.allclose(fb.kron(fb.tensor(a), fb.tensor(b)).numpy(), np.kron(a, b))
    assert fb.tensor([True, False]).kron(fb.tensor([True, True])).dtype == fb.bool


def test_cross_default_dim_warns_and_picks_first_size_three():
    a, b = arr((3, 3, 2)), arr((3, 3, 2), seed=1)
    with pytest.warns(UserWarning, match="Using flambeau.cross without specifying the dim arg is deprecated"):
        r = fb.cross(fb.tensor(a), fb.tensor(b))
    assert np.allclose(r.numpy(), np.cross(a, b, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.allclose(fb.tensor(a).cross(fb.tensor(b), dim=1).numpy(), np.cross(a, b, axis=1))


def test_cdist_modes_agree_and_batch_broadcasts():
    x1, x2 = arr((2, 30, 3)), arr((1, 40, 3), seed=1)
    ref = np.sqrt(((x1[:, :, None, :] - x2[:, None, :, :]) ** 2).sum(-1))
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        r = fb.cdist(fb.tensor(x1), fb.tensor(x2), compute_mode=mode)
        assert r.shape == (2, 30, 40) and np.allclose(r.numpy(), ref)
    r = fb.cdist(fb.tensor(x1), fb.tensor(x2), p=0)
    assert np.allclose(r.numpy(), 3)


def test_trace_integer_accumulates_in_int64():
    t = fb.tensor([[100, 1], [2, 100]], dtype=fb.int8)
    assert fb.trace(t).dtype == fb.int64 and t.trace().item() == 200


# -- building tensors ------------------------------------------------------------------------

def test_block_diag_promotes_and_handles_empty():
    r = fb.block_diag(fb.ones(2, 2, dtype=fb.int32), fb.tensor([1.5, 2.5]), fb.tensor(7))
    assert r.dtype == fb.float32 and r.shape == (4, 5)
    assert r.tolist()[2] == [0, 0, 1.5, 2.5, 0] and r.tolist()[3][4] == 7
    assert fb.block_diag().shape == (1, 0)


def test_cartesian_prod_and_combinations_against_itertools():
    a, b, c = fb.tensor([1, 2]), fb.tensor([3, 4, 5]), fb.tensor([6])
    assert fb.cartesian_prod(a, b, c).tolist() == [list(p) for p in itertools.product([1, 2], [3, 4, 5], [6])]
    assert fb.cartesian_prod(a).tolist() == [1, 2]
    x = fb.tensor([1.0, 2.0, 3.0, 4.0])
    for r in range(0, 6):
        for rep in (False, True):
            pick = itertools.combinations_with_replacement if rep else itertools.combinations
            expected = [list(p) for p in pick([1.0, 2.0, 3.0, 4.0], r)]
            got = fb.combinations(x, r, rep)
            if r == 0:
                assert got.shape == (0,)
            else:
                assert got.shape == (len(expected), r) and got.tolist() == expected


def test_vander():
    x = fb.tensor([1, 2, 3], dtype=fb.int32)
    assert fb.vander(x).dtype == fb.int64
    assert np.array_equal(fb.vander(x, N=4, increasing=True).numpy(), np.vander([1, 2, 3], 4, increasing=True))
    assert fb.vander(fb.tensor([True, False])).tolist() == [[1, 1], [0, 1]]


# -- renorm, diff, cov, corrcoef ---------------------------------------------------------------

def test_renorm_inplace_and_method():
    x = fb.tensor([[3.0, 4.0], [0.3, 0.4]])
    v = x._version_counter[0]
    r = x.renorm_(2, 0, 1.0)
    assert r is x and x._version_counter[0] == v + 1
    assert np.allclose(x.numpy(), [[0.6, 0.8], [0.3, 0.4]], atol=1e-6)
    assert np.allclose(fb.tensor([[3.0, 4.0]]).renorm(1, 0, 3.5).numpy(), [[1.5, 2.0]], atol=1e-6)


def test_diff_forms():
    x = arr((3, 5))
    assert np.allclose(fb.diff(fb.tensor(x), 2, 0).numpy(), np.diff(x, 2, 0))
    assert np.allclose(fb.tensor(x).diff(append=fb.tensor(x[:, :2])).numpy(), np.diff(x, append=x[:, :2]))
    assert fb.diff(fb.tensor([True, False, False])).tolist() == [True, False]
    assert fb.diff(fb.tensor([1.0, 2.0]), 5).shape == (0,)
    assert fb.diff(fb.tensor([1, 5], dtype=fb.uint8)).tolist() == [4]


def test_cov_weights_and_warning():
    x = arr((3, 6))
    fw = np.array([1, 2, 0, 1, 3, 1])
    aw = np.array([0.5, 1.0, 2.0, 0.1, 1.0, 1.0])
    r = fb.cov(fb.tensor(x), correction=1, fweights=fb.tensor(fw), aweights=fb.tensor(aw))
    assert np.allclose(r.numpy(), np.cov(x, fweights=fw, aweights=aw))
    assert fb.cov(fb.tensor([1, 2, 4])).dtype == fb.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 0/0 in the division
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            fb.cov(fb.ones(2, 1))
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        fb.cov(fb.tensor(x), fweights=fb.tensor([1, -1, 1, 1, 1, 1]))


def test_corrcoef_clips_and_matches_numpy():
    x = arr((4, 7))
    r = fb.tensor(x).corrcoef()
    assert np.allclose(r.numpy(), np.corrcoef(x)) and np.all(np.abs(r.numpy()) <= 1)
    assert fb.corrcoef(fb.tensor([1.0, 2.0, 3.0])).item() == 1.0


def test_einsum_bool_outer_products_and_contraction_error():
    a = fb.tensor([True, False])
    assert fb.einsum("i,j->ij", a, a).tolist() == [[True, False], [False, False]]
    with pytest.raises(NotImplementedError, match="\"bmm\" not implemented for 'Bool'"):
        fb.einsum("i,i->", a, a)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        fb.tensordot(a, a, 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.lists(st.integers(0, 3), min_size=0, max_size=3),
       st.integers(0, 3), st.integers(0, 2**16))
def test_tensordot_and_kron_match_numpy(free_a, free_b, n, seed):
    rng = np.random.default_rng(seed)
    shared = list(rng.integers(0, 4, size=n))
    a = rng.standard_normal(tuple(free_a) + tuple(shared))
    b = rng.standard_normal(tuple(shared) + tuple(free_b))
    r = fb.tensordot(fb.tensor(a), fb.tensor(b), n)
    assert r.shape == np.tensordot(a, b, n).shape and np.allclose(r.numpy(), np.tensordot(a, b, n))
    k = fb.kron(fb.tensor(a), fb.tensor(b))
    assert np.allclose(k.numpy(), np.kron(a, b))
