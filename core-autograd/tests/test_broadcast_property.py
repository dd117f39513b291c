"""Property-based: gradients of broadcast binary ops have their inputs' shapes and numpy's values."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import flambeau as fb


@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div"]), seed=st.integers(0, 2**16))
def test_broadcast_gradients(shapes, op, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    an, bn = rng.uniform(0.5, 1.5, size=sa), rng.uniform(0.5, 1.5, size=sb)
    a = fb.tensor(an, dtype=fb.float64, requires_grad=True)
    b = fb.tensor(bn, dtype=fb.float64, requires_grad=True)
    getattr(fb, op)(a, b).sum().backward()
    assert tuple(a.grad.shape) == tuple(sa) and tuple(b.grad.shape) == tuple(sb)
    full = np.broadcast_shapes(sa, sb)
    ones = np.ones(full)
    da = {"add": ones, "sub": ones, "mul": np.broadcast_to(bn, full), "div": 1 / np.broadcast_to(bn, full)}[op]
    db = {"add": ones, "sub": -ones, "mul": np.broadcast_to(an, full),
          "div": -np.broadcast_to(an, full) / np.broadcast_to(bn, full) ** 2}[op]

    def reduce(g, shape):
        g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
        return g.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True).reshape(shape)

    np.testing.assert_allclose(a.grad.numpy(), reduce(da, sa), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), reduce(db, sb), rtol=1e-12, atol=1e-12)
