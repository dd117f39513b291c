"""gradcheck and gradgradcheck (float64) of the shape heading's ops, primitives and composites alike,
on non-contiguous and broadcast inputs."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

from conftest import make


def check(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_cat_mixed_sizes_noncontiguous(rng):
    a, b = make(rng, 2, 3, noncontig=True), make(rng, 2, 2)
    check(lambda x, y: fb.cat([x, y], 1), a, b)


def test_cat_with_legacy_empty_and_broadcast_product(rng):
    a, b = make(rng, 3, 2), make(rng, 2)
    empty = fb.zeros(0, dtype=fb.float64)
    check(lambda x, y: fb.cat([x * y, empty, x], 0), a, b)


def test_cat_gradient_only_to_inputs_that_need_it(rng):
    a, b = make(rng, 2, 2), make(rng, 1, 2, requires_grad=False)
    fb.cat([a, b]).sum().backward()
    assert np.array_equal(a.grad.numpy(), np.ones((2, 2)))
    assert b.grad is None


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack(rng, dim):
    check(lambda x, y: fb.stack([x, y], dim), make(rng, 2, 3, noncontig=True), make(rng, 2, 3))


def test_hstack_vstack_dstack_column_stack(rng):
    a, b = make(rng, 3), make(rng, 3)
    check(lambda x, y: fb.hstack([x, y]), a, b)
    check(lambda x, y: fb.vstack([x, y]), a, b)
    check(lambda x, y: fb.dstack([x, y]), a, b)
    check(lambda x, y: fb.column_stack([x, y]), a, b)


def test_split_chunk_tensor_split_unbind(rng):
    x = make(rng, 5, 4, noncontig=True)
    check(lambda t: fb.split(t, 2)[1] * 2, x)
    check(lambda t: fb.split(t, [1, 3], 1)[1].sum() + fb.chunk(t, 3)[2].sum(), x)
    check(lambda t: fb.tensor_split(t, [1, 4], 0)[1], x)
    check(lambda t: fb.unbind(t, 1)[2], x)


def test_flip_roll_rot90(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.flip(t, (0, 1)), x)
    check(lambda t: fb.fliplr(t) * t, x)
    check(lambda t: fb.flipud(t), x)
    check(lambda t: fb.roll(t, (1, -2), (0, 1)), x)
    check(lambda t: fb.roll(t, 5), x)
    check(lambda t: fb.rot90(t, 1), x)
    check(lambda t: fb.rot90(t, 3, (1, 0)), x)


def test_repeat_tile_repeat_interleave(rng):
    x = make(rng, 2, 3, noncontig=True)
    check(lambda t: t.repeat(2, 1, 3), x)
    check(lambda t: fb.tile(t, (2,)), x)
    check(lambda t: fb.repeat_interleave(t, 2, 1), x)
    check(lambda t: fb.repeat_interleave(t, fb.tensor([2, 0]), 0), x)
    check(lambda t: fb.repeat_interleave(t, 3), x)


def test_views_movedim_unflatten_broadcast_atleast(rng):
    x = make(rng, 2, 3, noncontig=True)
    check(lambda t: fb.movedim(t, 0, 1) * 1, x)
    check(lambda t: fb.unflatten(t, 1, (3, 1)) * 1, x)
    check(lambda t: fb.broadcast_to(t, (4, 2, 3)) * 1, x)
    check(lambda t, u: fb.broadcast_tensors(t, u)[1] * 1, x, make(rng, 3))
    check(lambda t: fb.atleast_3d(t) * 1, x)


def test_diagonal_family(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.diagonal(t, 1) * 1, x)
    check(lambda t: fb.diagonal(t.unsqueeze(0).expand(2, 3, 4), -1, 1, 2) * 1, x)
    check(lambda t: fb.diag(t, 1), x)
    v = make(rng, 3)
    check(lambda t: fb.diag(t, -1), v)
    check(lambda t: fb.diag_embed(t, 1, 0, 2), x)
    check(lambda t: fb.diagflat(t), x)


def test_tril_triu_and_in_place(rng):
    x = make(rng, 2, 4, 4)
    check(lambda t: fb.tril(t, -1), x)
    check(lambda t: fb.triu(t, 1), make(rng, 3, 5, noncontig=True))
    check(lambda t: (t * 2).tril_(1), x)
    check(lambda t: (t * 2).triu_(), x)


def test_meshgrid(rng):
    a, b = make(rng, 3), make(rng, 2)
    check(lambda x, y: fb.meshgrid(x, y, indexing="xy")[0] * fb.meshgrid(x, y, indexing="xy")[1], a, b)


def test_scatter_family_and_splits(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t, s: fb.select_scatter(t, s, 0, 1), x, make(rng, 4))
    check(lambda t, s: fb.slice_scatter(t, s, 1, 0, None, 2), x, make(rng, 3, 2))
    check(lambda t, s: fb.diagonal_scatter(t, s, 1), x, make(rng, 3))
    check(lambda t: fb.hsplit(t, 2)[1] * fb.vsplit(t, [1])[0][:, :2], x)
    check(lambda t: fb.narrow_copy(t, 1, 1, 2), x)
    check(lambda t: fb.adjoint(t) * 1, x)


def test_complex_and_polar(rng):
    a, b = make(rng, 3, low=0.5), make(rng, 3)
    # second order goes through imag's formula (g * 1j) and mul's, which conjugates the scalar
    check(lambda r, i: fb.real(fb.complex(r, i)) * fb.imag(fb.complex(r, i)), a, b)
    check(lambda r, t: fb.real(fb.polar(r, t)) + 2 * fb.imag(fb.polar(r, t)), a, b)
    check(lambda r, t: fb.polar(r, t) * fb.complex(t, r), a, b)  # complex output, complex128 gradcheck
    check(lambda r, i: fb.real(fb.complex(r, i) * 2), a, b)


def test_clone_of_a_transposed_view_gradient():
    # Moved from core-tensor's test_empty_strided_clone_memory_format (core-tensor runs without autograd).
    g = fb.ones(3, 4, requires_grad=True)
    c = g.t().clone()
    assert c.stride() == (1, 4)  # clone keeps the dense transposed layout
    (c * fb.arange(12.).reshape(4, 3)).sum().backward()
    assert np.array_equal(g.grad.numpy(), np.arange(12.).reshape(4, 3).T)
