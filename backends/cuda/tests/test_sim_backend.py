"""flambeau_cuda's backend on the ``cudasim`` device (the numpy test double standing in for CuPy)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops import coverage, declarations


def test_the_double_is_never_importable_as_cupy():
    spec = importlib.util.find_spec("cupy")
    assert spec is None or "sim" not in os.path.dirname(spec.origin or "")
    import _fake_cupy

    assert _fake_cupy.IS_TEST_DOUBLE and _fake_cupy.__name__ == "_fake_cupy"


def test_every_core_op_has_a_kernel_and_optim_adam_is_fused():
    cov = coverage("cudasim")
    core = {name for name, d in declarations().items() if d.tier == "core"}
    assert {name for name in core if cov[name] != "kernel"} == set()
    assert cov.get("optim_adam") in (None, "kernel")  # None: flambeau-optim not installed
    assert cov["sort"] == "kernel" and cov["index"] == "kernel"


def test_views_share_the_allocation_with_pytorchs_strides_and_offsets():
    x = fb.arange(12.0, device="cudasim").reshape(3, 4)
    v = x[1:, 1::2]
    assert v.stride() == (4, 2) and v.storage_offset() == 5
    v.fill_(-1.0)
    assert x.tolist()[1] == [4.0, -1.0, 6.0, -1.0]
    t = x.t()
    assert t.stride() == (1, 4) and t.data_ptr() == x.data_ptr()
    assert x.view(2, 6).stride() == (6, 1) and x.t().reshape(12).is_contiguous()


def test_as_strided_is_checked_against_the_exact_storage_size():
    x = fb.zeros(10, device="cudasim")  # the double's "pool" may hold more; the storage is 10 elements
    assert x.as_strided((2, 5), (5, 1)).shape == (2, 5)
    with pytest.raises(RuntimeError):
        x.as_strided((3, 5), (5, 1))


def test_view_as_real_and_complex_reinterpret_the_same_bytes():
    z = fb.tensor([1 + 2j, 3 - 4j], dtype=fb.complex64, device="cudasim")
    r = fb.view_as_real(z)
    assert r.tolist() == [[1.0, 2.0], [3.0, -4.0]] and r.stride() == (2, 1)
    r[0, 1] = 9.0
    assert z.tolist()[0] == 1 + 9j
    assert fb.view_as_complex(r).tolist() == z.tolist()


def test_index_bounds_are_checked_before_any_write():
    x = fb.zeros(4, device="cudasim")
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[fb.tensor([1, 4], device="cudasim")] = 1.0
    assert x.tolist() == [0.0] * 4


def test_descending_sort_is_stable_with_nan_first():
    x = fb.tensor([1.0, float("nan"), 3.0, 1.0, 3.0], device="cudasim")
    values, indices = x.sort(descending=True, stable=True)
    assert indices.tolist() == [1, 2, 4, 0, 3]
    assert np.isnan(values.tolist()[0]) and values.tolist()[1:] == [3.0, 3.0, 1.0, 1.0]
