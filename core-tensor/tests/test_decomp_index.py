"""``index`` (advanced indexing) decomposed onto nonzero, index_select and views, against the
CPU kernel (numpy's indexing): masks, negatives, broadcasting, both placement rules, errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS

A = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).astype(np.float32)


def _decomposed(x, indices):
    return _without_kernel(OPS["index"], fb.device("cpu"), (x, indices), None, False)


def T(v, dtype=None):
    return fb.tensor(v, dtype=dtype)


CASES = {
    "one": lambda: [T([1, 0])],
    "negative": lambda: [None, T([2, -1])],
    "adjacent, broadcast": lambda: [None, T([[0], [2]]), T([1, 3])],
    "apart": lambda: [T([1]), None, T([0, 3])],
    "apart, inner": lambda: [None, T([0, 1]), None, T([1, 2])],
    "last dim": lambda: [None, None, None, T([4, 0, -5])],
    "mask": lambda: [T(A[..., 0, 0] > 5)],
    "inner mask": lambda: [None, T(np.ones((3, 4), bool))],
    "uint8 mask": lambda: [None, None, T([1, 0, 1, 0], fb.uint8)],
    "int32": lambda: [T([1, 0], fb.int32)],
    "empty": lambda: [T(np.zeros(0, np.int64))],
    "0-d index": lambda: [None, T(2)],
    "none": lambda: [None],
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_the_kernel(case):
    x = fb.from_numpy(A)
    indices = CASES[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uint8 mask's deprecation warning, both ways
        want = fb.ops.function("index")(x, indices)
        got = _decomposed(x, indices)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got._base is None  # a new tensor, as the kernel's


def test_out_of_range_names_the_index_and_dim():
    x = fb.from_numpy(A)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        _decomposed(x, [None, T([0, 3])])
    with pytest.raises(IndexError, match="index -3 is out of bounds for dimension 0 with size 2"):
        _decomposed(x, [T([-3])])


def test_gradient_flows_to_the_picked_elements():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    _decomposed(x, [T([1, 1, 0])]).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 1.0], [2.0, 2.0]])


def _put(x, indices, values, accumulate):
    return _without_kernel(OPS["index_put"], fb.device("cpu"), (x, indices, values, accumulate), None, False)


@pytest.mark.parametrize("case", [c for c in CASES if c not in ("none",)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_the_kernel(case, accumulate):
    x = fb.from_numpy(A)
    indices = CASES[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shape = tuple(fb.ops.function("index")(x, indices).shape)
        values = fb.from_numpy(np.random.default_rng(0).random(shape).astype(np.float32))
        for v in (values, values.reshape(shape)[(0,) * len(shape)] if shape and all(shape) else values):
            want = fb.ops.function("index_put")(x, indices, v, accumulate)
            got = _put(x, indices, v, accumulate)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(x.numpy(), A)  # the input is untouched


def test_index_put_accumulates_repeated_indices():
    x = fb.zeros(3)
    got = _put(x, [T([0, 0, 2])], fb.tensor(1.0), True)
    np.testing.assert_array_equal(got.numpy(), [2.0, 0.0, 1.0])
