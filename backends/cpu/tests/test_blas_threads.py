"""set_num_threads reaches the BLAS pools the matrix products run on (numpy's and scipy's OpenBLAS)."""
from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import flambeau as fb


def _blas_threads() -> list[int]:
    return [entry["num_threads"] for entry in threadpool_info() if entry["user_api"] == "blas"]


@pytest.fixture
def restore_threads():
    before = fb.get_num_threads()
    yield
    fb.set_num_threads(before)


def test_set_num_threads_limits_loaded_blas(restore_threads) -> None:
    assert _blas_threads(), "numpy's BLAS should be visible to threadpoolctl"
    fb.set_num_threads(1)
    assert fb.get_num_threads() == 1
    assert set(_blas_threads()) == {1}
    fb.set_num_threads(2)
    assert fb.get_num_threads() == 2
    # OpenBLAS caps the count at the cores it was built for / found; never above what was asked
    assert all(1 <= n <= 2 for n in _blas_threads())


def test_blas_loaded_later_gets_the_count(restore_threads) -> None:
    fb.set_num_threads(1)
    # a small addmm goes through scipy's gemm, which loads scipy's own OpenBLAS if not yet loaded
    a = fb.from_numpy(np.ones((3, 4), dtype=np.float32))
    b = fb.from_numpy(np.ones((4, 5), dtype=np.float32))
    c = fb.from_numpy(np.zeros((3, 5), dtype=np.float32))
    np.testing.assert_allclose(fb.addmm(c, a, b).numpy(), np.full((3, 5), 4.0))
    assert set(_blas_threads()) == {1}
