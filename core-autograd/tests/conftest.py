from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def make(rng, *shape, low=-1.0, high=1.0, requires_grad=True, noncontig=False, dtype=None):
    """A float64 tensor of uniform values; ``noncontig`` gives a transposed (non-contiguous) view."""
    dtype = dtype or fb.float64
    if noncontig and len(shape) >= 2:
        data = rng.uniform(low, high, size=shape[::-1]).T  # a transposed view in numpy...
        t = fb.tensor(np.ascontiguousarray(data.T), dtype=dtype).t() if len(shape) == 2 else \
            fb.tensor(np.ascontiguousarray(data.T), dtype=dtype).permute(*range(len(shape) - 1, -1, -1))
        t = t.detach()
        assert not t.is_contiguous()
    else:
        t = fb.tensor(rng.uniform(low, high, size=shape), dtype=dtype)
    return t.requires_grad_(requires_grad)
