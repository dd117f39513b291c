"""The functional compute path that generated op functions inline (ops/_codegen._compute_lines)
must behave exactly as ``run_compute``: same results, same recording, same exits."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops import _dispatch
from flambeau.ops._registry import FUNCTIONS


class RecordingEngine:
    """Stands in for core-autograd: notes every record() call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def record(self, op, args, outputs, mode, pre):
        self.calls.append((op.name, args, outputs, mode, pre))

    def set_requires_grad(self, tensor, flag):
        tensor._requires_grad = flag

    def before_write(self, op, args, outs, mode):
        return None


@pytest.fixture
def engine(monkeypatch):
    eng = RecordingEngine()
    monkeypatch.setattr(_dispatch, "_engine", eng)
    return eng


def test_generated_compute_functions_inline_the_one_output_path():
    source = FUNCTIONS["add"]._source  # written with placeholders: _a0 is input, _a1 other, _a2 alpha
    assert "_k(_a0._data, _n__a1, _a2, out=_o)" in source
    assert "_meta(_a0, _a1, _a2)" in source
    assert "return _into(_OP, _k, _dev" in FUNCTIONS["add_"]._source  # in-place: straight to _run_into


def test_values_dtypes_and_broadcasting():
    a = fb.tensor([[1.0, 2.0, 3.0]])
    b = fb.tensor([[10], [20]], dtype=fb.int64)
    r = a + b
    assert r.dtype == fb.float32 and tuple(r.shape) == (2, 3)
    np.testing.assert_array_equal(r.numpy(), np.array([[11, 12, 13], [21, 22, 23]], np.float32))
    assert (fb.tensor([1, 2]) * 2.5).dtype == fb.float32  # a Python float makes an int tensor float
    assert fb.add(fb.tensor([1.0]), fb.tensor([2.0]), alpha=3).tolist() == [7.0]


def test_meta_errors_still_raised_before_any_work():
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        fb.ones(2, 3) + fb.ones(4)


def test_records_only_when_an_input_requires_grad(engine):
    a, b = fb.ones(2), fb.ones(2)
    fb.mul(a, b)
    assert engine.calls == []
    a._requires_grad = True
    r = fb.mul(a, b)
    assert len(engine.calls) == 1
    name, args, outputs, mode, pre = engine.calls[0]
    assert name == "mul" and args == (a, b) and outputs == (r,) and mode == "functional" and pre is None


def test_non_differentiable_ops_never_record(engine):
    a = fb.ones(2)
    a._requires_grad = True
    fb.eq(a, a)
    assert engine.calls == []


def test_several_outputs_go_through_finish_compute(engine):
    a = fb.tensor([[1.0, 5.0], [7.0, 2.0]])
    values, indices = FUNCTIONS["max_dim"](a, 1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    a._requires_grad = True
    out = FUNCTIONS["max_dim"](a, 1)
    assert out.values.tolist() == [5.0, 7.0]
    assert len(engine.calls) == 1 and len(engine.calls[0][2]) == 2


def test_out_argument_leaves_the_inline_path():
    a = fb.ones(3)
    out = fb.empty(3)
    r = fb.add(a, a, out=out)
    assert r is out and out.tolist() == [2.0, 2.0, 2.0]


def test_results_are_fresh_leaf_tensors():
    a = fb.ones(2)
    r = a + a
    assert r._base is None and not r.requires_grad and r.grad_fn is None and r._version_counter == [0]
    assert r._data is not a._data


def test_inplace_fast_path_bumps_the_version_and_records(engine):
    a, b = fb.ones(3), fb.full((3,), 2.0)
    view = a[1:]
    before = a._version_counter[0]
    r = a.add_(b)
    assert r is a and a.tolist() == [3.0, 3.0, 3.0] and view.tolist() == [3.0, 3.0]
    assert a._version_counter[0] == before + 1 and view._version_counter[0] == before + 1
    assert engine.calls == []
    b._requires_grad = True
    a.mul_(b)
    assert len(engine.calls) == 1 and engine.calls[0][3] == "inplace" and engine.calls[0][2] == (a,)


def test_inplace_and_out_errors_are_unchanged():
    a = fb.ones(3, dtype=fb.int64)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        a.add_(fb.ones(3))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        fb.ones(3).add_(fb.ones(2, 3))
    expanded = fb.ones(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        expanded.add_(1)


def test_out_with_another_shape_is_resized_with_a_warning():
    out = fb.ones(2)
    with pytest.warns(UserWarning, match="was resized"):
        fb.add(fb.ones(3), 1, out=out)
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_out_of_a_wider_dtype_is_filled():
    out = fb.empty(2, dtype=fb.float64)
    fb.add(fb.ones(2), 1, out=out)
    assert out.dtype == fb.float64 and out.tolist() == [2.0, 2.0]


def test_inlined_wrap_sets_every_slot_as_wrap_does():
    """The generated compute path builds its result without calling ``wrap``: same slots, same values."""
    import numpy as np

    from flambeau._tensor import Tensor, wrap

    a = fb.tensor([1.0, 2.0])
    fast = a + a
    reference = wrap(np.zeros(2, np.float32), fb.float32, a.device)
    for slot in Tensor.__slots__:
        if slot in ("__weakref__", "_data", "_version_counter"):
            continue
        assert getattr(fast, slot) == getattr(reference, slot), slot
    assert fast._version_counter == [0] and fast._version_counter is not a._version_counter
