"""view/reshape of a contiguous tensor take a one-pass check (``_core_ops.views._contiguous_target``);
it must agree with the full checks on every shape, -1 and error included."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb

sizes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def _request(data) -> tuple:
    return tuple(data.draw(st.lists(st.integers(-3, 6), min_size=0, max_size=4)))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=sizes)
def test_view_agrees_with_numpy_reshape(data, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    request = _request(data)
    t = fb.from_numpy(a)
    try:
        want = a.reshape(request)
    except ValueError:
        want = None
    known = int(np.prod([s for s in request if s != -1]))
    ambiguous = -1 in request and a.size == 0 and known == 0  # PyTorch refuses what numpy guesses
    if want is None or any(s < -1 for s in request) or ambiguous:
        with pytest.raises(RuntimeError):
            t.view(request)
        with pytest.raises(RuntimeError):
            t.reshape(request)
        return
    for got in (t.view(request), t.reshape(request)):
        assert tuple(got.shape) == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
        assert got._base is t  # a view sharing t's storage and version counter
        assert got._version_counter is t._version_counter


def test_non_contiguous_inputs_take_the_full_checks():
    t = fb.arange(6.0).reshape(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(6)
    r = t.reshape(-1)
    assert r.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert r._base is not t  # a copy, as in PyTorch
    with pytest.raises(RuntimeError, match="invalid shape dimension -2 at index 0 of shape \\[-2, 3\\]"):
        fb.ones(6).view(-2, 3)


@pytest.mark.parametrize("shape, strides", [((0, 2), (2, 1)), ((2, 0), (1, 1)), ((3, 0, 2), (2, 2, 1)), ((0,), (1,))])
def test_empty_tensors_report_pytorchs_strides(shape, strides):
    # numpy gives a fresh empty array all-zero strides; PyTorch counts each size as at least 1
    t = fb.zeros(shape)
    assert t.stride() == strides
    assert t.is_contiguous()
    assert fb.ones(3, 4)[:, :0].stride() == (4, 1)  # an empty view keeps its base's strides
