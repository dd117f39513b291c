"""gradcheck and gradgradcheck (float64) of the index ops' formulas, with non-contiguous inputs,
broadcast masks and indices, repeated indices, and the in-place forms."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.autograd import gradcheck, gradgradcheck

from conftest import make


def check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


IDX = fb.tensor([[0, 2, 1, 0], [2, 2, 0, 1]])  # repeated targets in columns 0 and 1


def test_gather(rng):
    x = make(rng, 4, 3, noncontig=True)
    check(lambda t: fb.gather(t, 0, fb.tensor([[3, 0, 1], [3, 3, 2]])), x)
    check(lambda t: t.gather(-1, fb.tensor([[2], [0], [1], [1]], dtype=fb.int32)), x)


def test_gather_scalar(rng):
    x = make(rng)
    check(lambda t: fb.gather(t, 0, fb.tensor(0)), x)


def test_scatter_src_and_input(rng):
    x = make(rng, 3, 4, noncontig=True)
    src = make(rng, 3, 5)  # larger than the index: the extra entries get zero gradient
    idx = fb.tensor([[0, 2, 1, 0], [2, 1, 0, 1]])
    check(lambda t, s: fb.scatter(t, 0, idx, s), x, src)
    check(lambda t, s: t.clone().scatter_(0, idx, s), x, src)


def test_scatter_value_and_add(rng):
    x = make(rng, 3, 4)
    check(lambda t: t.scatter(0, IDX, 2.5), x)
    check(lambda t: t.scatter(0, IDX, value=-1.0), x)



@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_refuses_backward_like_pytorch(rng, reduce):
    # torch.scatter(..., reduce=) records a not-implemented node: the forward works, backward raises
    x, src = make(rng, 3, 4), make(rng, 2, 4)
    for y in (x.scatter(0, IDX, src, reduce=reduce), x.detach().scatter(0, IDX, src, reduce=reduce),
              x.scatter(0, IDX, 2.0, reduce=reduce)):
        assert y.requires_grad
        with pytest.raises(RuntimeError, match="^derivative for aten::scatter is not implemented$"):
            y.sum().backward()


def test_scatter_add(rng):
    x, src = make(rng, 3, 4, noncontig=True), make(rng, 2, 4)
    check(lambda t, s: fb.scatter_add(t, 0, IDX, s), x, src)
    check(lambda t, s: t.clone().scatter_add_(0, IDX, s), x, src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_scatter_reduce(rng, reduce, include_self):
    x, src = make(rng, 3, 4), make(rng, 2, 4, noncontig=False)
    check(lambda t, s: fb.scatter_reduce(t, 0, IDX, s, reduce, include_self=include_self), x, src,
          second=reduce in ("sum", "mean"))


def test_index_select(rng):
    x = make(rng, 4, 3, noncontig=True)
    check(lambda t: fb.index_select(t, 0, fb.tensor([3, 0, 3])), x)
    check(lambda t: t.index_select(1, fb.tensor([2], dtype=fb.int32)), x)


def test_index_add(rng):
    x, src = make(rng, 4, 3, noncontig=True), make(rng, 3, 3)
    idx = fb.tensor([3, 0, 3])
    check(lambda t, s: fb.index_add(t, 0, idx, s, alpha=-2.0), x, src)
    check(lambda t, s: t.clone().index_add_(0, idx, s), x, src)


def test_index_copy(rng):
    x, src = make(rng, 4, 3), make(rng, 4, 2, noncontig=True)
    check(lambda t, s: fb.index_copy(t, 1, fb.tensor([2, 0]), s), x, src)
    check(lambda t, s: t.clone().index_copy_(1, fb.tensor([2, 0]), s), x, src)


def test_index_fill(rng):
    x = make(rng, 4, 3, noncontig=True)
    v = make(rng)
    check(lambda t: fb.index_fill(t, 0, fb.tensor([1, -1]), 3.0), x)
    check(lambda t, value: t.index_fill(1, fb.tensor([0]), value), x, v)


def test_masked_fill_broadcast(rng):
    x = make(rng, 3, 4, noncontig=True)
    mask = fb.tensor(rng.random((2, 3, 4)) < 0.5)
    v = make(rng)
    check(lambda t: fb.masked_fill(t, mask, 0.5), x)
    check(lambda t, value: t.masked_fill(mask, value), x, v)
    check(lambda t: t.clone().masked_fill_(mask[0], 1.0), x)


def test_masked_select(rng):
    x = make(rng, 3, 4, noncontig=True)
    mask = fb.tensor(rng.random((3, 4)) < 0.5)
    check(lambda t: fb.masked_select(t, mask), x)
    check(lambda t: fb.masked_select(t, fb.tensor([True, False, True, True])), x)  # broadcast mask


def test_masked_scatter(rng):
    x, src = make(rng, 3, 4), make(rng, 4, 4, noncontig=True)
    mask = fb.tensor(rng.random((3, 4)) < 0.5)
    check(lambda t, s: fb.masked_scatter(t, mask, s), x, src)
    check(lambda t, s: t.clone().masked_scatter_(mask, s), x, src)


def test_take(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.take(t, fb.tensor([[0, -1], [5, 0]])), x)


def test_take_along_dim(rng):
    x = make(rng, 3, 4, noncontig=True)
    check(lambda t: fb.take_along_dim(t, fb.tensor([[0, 3, 3, 1]]), 1), x)  # indices broadcast over rows
    check(lambda t: fb.take_along_dim(t, fb.tensor([[2], [0]]), 0), make(rng, 3, 1))  # input broadcast
    check(lambda t: fb.take_along_dim(t, fb.tensor([11, 0, 0])), x)


def test_gather_gradient_values(rng):
    """Repeated indices add their gradients up (numpy's add.at as the reference)."""
    x = make(rng, 5)
    idx = np.array([0, 4, 4, 2, 4])
    fb.gather(x, 0, fb.tensor(idx)).sum().backward()
    want = np.zeros(5)
    np.add.at(want, idx, 1.0)
    assert np.array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["mean", "amax", "amin"])
def test_index_reduce(rng, reduce, include_self):
    x, src = make(rng, 4, 3, noncontig=True), make(rng, 3, 3)
    idx = fb.tensor([3, 0, 3])
    check(lambda t, s: fb.index_reduce(t, 0, idx, s, reduce, include_self=include_self), x, src,
          second=reduce == "mean")
    check(lambda t, s: t.index_reduce(1, fb.tensor([2, 2]), s[:, :2].t().t(), reduce, include_self=include_self),
          make(rng, 3, 3), make(rng, 3, 2), second=False)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod(rng, include_self):
    x, src = make(rng, 3, 4), make(rng, 2, 4)
    check(lambda t, s: fb.scatter_reduce(t, 0, IDX, s, "prod", include_self=include_self), x, src)
    check(lambda t, s: fb.index_reduce(t, 1, fb.tensor([0, 2, 2]), s, "prod", include_self=include_self),
          make(rng, 3, 4), make(rng, 3, 3))


def test_scatter_reduce_prod_with_zero_factors():
    # the products of the other factors, written out (PyTorch's values): one zero in a slot passes
    # the others' product to the zero factor only; two zeros give every factor slope 0
    index = fb.tensor([[0, 2, 1, 0], [2, 1, 0, 1]])
    x = fb.tensor([[0.0, 1, 2, 3], [1, 2, 3, 4], [2, 0, 1, 1]], dtype=fb.float64, requires_grad=True)
    src = fb.tensor([[1.0, 0, 2, 3], [0.5, 2, 0, 1]], dtype=fb.float64, requires_grad=True)
    x.scatter_reduce(0, index, src, "prod").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 1, 0, 3], [1, 2, 2, 1], [0.5, 0, 1, 1]])
    np.testing.assert_allclose(src.grad.numpy(), [[0, 0, 3, 3], [2, 2, 2, 4]])
    x.grad = src.grad = None
    x.scatter_reduce(0, index, src, "prod", include_self=False).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 1]])
    np.testing.assert_allclose(src.grad.numpy(), np.ones((2, 4)))
    two = fb.tensor([0.0, 5.0], dtype=fb.float64, requires_grad=True)
    zeros = fb.tensor([0.0, 3.0, 0.0], dtype=fb.float64, requires_grad=True)
    two.scatter_reduce(0, fb.tensor([0, 0, 1]), zeros, "prod").sum().backward()
    np.testing.assert_allclose(two.grad.numpy(), [0, 0])  # slot 0 has three factors, two of them zero
    np.testing.assert_allclose(zeros.grad.numpy(), [0, 0, 5])


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_reduce_ops_refuse_complex_autograd_like_pytorch(op):
    x = fb.ones(3, 4, dtype=fb.complex128, requires_grad=True)
    src = fb.ones(2, 4, dtype=fb.complex128)
    with pytest.raises(RuntimeError, match=f"^{op} does not support automatic differentiation for outputs with "
                                           "complex dtype.$"):
        if op == "scatter_reduce":
            x.scatter_reduce(0, IDX, src, "sum")
        else:
            x.index_reduce(0, fb.tensor([0, 2]), src, "prod")
    # without autograd the forward runs
    assert x.detach().scatter_reduce(0, IDX, src, "sum").dtype == fb.complex128
