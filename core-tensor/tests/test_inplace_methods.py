"""In-place comparison and logical methods, and the audit of PyTorch's in-place variants.

``x.ge_(y)`` writes the bool result into ``x``, cast to ``x``'s dtype; only ``y`` broadcasts.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb

BINARY = {
    "eq_": np.equal, "ne_": np.not_equal, "lt_": np.less, "le_": np.less_equal, "gt_": np.greater,
    "ge_": np.greater_equal, "greater_": np.greater, "greater_equal_": np.greater_equal, "less_": np.less,
    "less_equal_": np.less_equal, "not_equal_": np.not_equal, "logical_and_": np.logical_and,
    "logical_or_": np.logical_or, "logical_xor_": np.logical_xor,
}
DTYPES = [fb.float32, fb.float64, fb.int64, fb.int32, fb.uint8, fb.bool, fb.float16]


def _values(dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 3, size=shape)
    return data.astype(bool) if dtype is fb.bool else data.astype(dtype.numpy_dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace_writes_the_result_in_selfs_dtype(name, dtype):
    a, b = _values(dtype, (3, 4)), _values(dtype, (4,))[::-1].copy()
    x = fb.from_numpy(a.copy())
    other = fb.from_numpy(b)
    before = x._version
    result = getattr(x, name)(other)  # other broadcasts to self's shape
    assert result is x and x.dtype is dtype and tuple(x.shape) == (3, 4) and x._version == before + 1
    np.testing.assert_array_equal(x.numpy(), BINARY[name](a, b).astype(a.dtype))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace_with_a_scalar_and_on_a_view(name):
    base = fb.tensor([[0., 1., 2.], [3., 4., 5.]])
    view = base[:, 1:]  # non-contiguous: the parent sees the writes
    getattr(view, name)(2)
    expected = BINARY[name](np.array([[1., 2.], [4., 5.]]), 2).astype(np.float32)
    np.testing.assert_array_equal(base.numpy()[:, 1:], expected)
    assert base[0, 0].item() == 0.


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_inplace_does_not_broadcast_self(name):
    x = fb.zeros(1, 3)
    with pytest.raises(RuntimeError, match=r"output with shape \[1, 3\] doesn't match the broadcast shape \[2, 3\]"):
        getattr(x, name)(fb.zeros(2, 3))
    assert x.shape == (1, 3)


def test_ordered_comparisons_refuse_complex_in_place():
    x = fb.tensor([1 + 1j])
    with pytest.raises(RuntimeError):
        x.lt_(x)
    assert x.eq_(x).tolist() == [1 + 0j]  # equality is defined: True, cast to complex


def test_logical_not_in_place():
    x = fb.tensor([0., 2., -1.])
    assert x.logical_not_() is x and x.tolist() == [1., 0., 0.]
    b = fb.tensor([True, False])
    assert b.logical_not_().tolist() == [False, True]


def test_in_place_comparison_refuses_a_leaf_that_requires_grad():
    pytest.importorskip("flambeau.autograd")
    x = fb.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.ge_(0)


#: PyTorch's in-place Tensor methods (every public name ending in ``_`` in ``dir(torch.Tensor)``,
#: torch 2.13): each one whose out-of-place form flambeau's Tensor has must exist too.
PYTORCH_INPLACE = """
abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ apply_ arccos_ arccosh_ arcsin_
arcsinh_ arctan2_ arctan_ arctanh_ as_strided_ asin_ asinh_ atan2_ atan_ atanh_ baddbmm_ bernoulli_ bitwise_and_
bitwise_left_shift_ bitwise_not_ bitwise_or_ bitwise_right_shift_ bitwise_xor_ cauchy_ ceil_ clamp_ clamp_max_
clamp_min_ clip_ conj_physical_ copy_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ detach_ digamma_ div_ divide_
eq_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ exponential_ fill_ fill_diagonal_ fix_ float_power_ floor_ floor_divide_
fmod_ frac_ gcd_ ge_ geometric_ greater_ greater_equal_ gt_ heaviside_ hypot_ i0_ igamma_ igammac_ index_add_
index_copy_ index_fill_ index_put_ index_reduce_ lcm_ ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_
log2_ log_ log_normal_ logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ map2_ map_ masked_fill_
masked_scatter_ mul_ multiply_ mvlgamma_ nan_to_num_ ne_ neg_ negative_ nextafter_ normal_ not_equal_ polygamma_
pow_ put_ rad2deg_ random_ reciprocal_ relu_ remainder_ renorm_ requires_grad_ resize_ resize_as_ resize_as_sparse_
round_ rsqrt_ scatter_ scatter_add_ scatter_reduce_ set_ sgn_ share_memory_ sigmoid_ sign_ sin_ sinc_ sinh_
sparse_resize_ sparse_resize_and_clear_ sqrt_ square_ squeeze_ sub_ subtract_ swapaxes_ swapdims_ t_ tan_ tanh_
transpose_ tril_ triu_ true_divide_ trunc_ uniform_ unsqueeze_ xlogy_ zero_
""".split()


def test_every_pytorch_in_place_variant_of_an_op_flambeau_has_exists():
    missing = [name for name in PYTORCH_INPLACE if hasattr(fb.Tensor, name[:-1]) and not hasattr(fb.Tensor, name)]
    assert missing == []


@pytest.mark.parametrize("name, args, reference", [
    ("t_", (), lambda a: a.T),
    ("transpose_", (0, 1), lambda a: a.T),
    ("swapdims_", (1, 0), lambda a: a.T),
    ("swapaxes_", (0, 1), lambda a: a.T),
    ("unsqueeze_", (1,), lambda a: a[:, None]),
    ("squeeze_", (), lambda a: a),
    ("as_strided_", ((3,), (2,)), lambda a: a.reshape(-1)[::2]),
])
def test_in_place_view_methods_change_this_tensor_over_the_same_storage(name, args, reference):
    x = fb.arange(6.).view(2, 3)
    before, ptr = x._version, x.data_ptr()
    assert getattr(x, name)(*args) is x
    np.testing.assert_array_equal(x.numpy(), reference(np.arange(6.).reshape(2, 3)))
    assert x.data_ptr() == ptr and x._version == before + 1


def test_in_place_view_methods_check_before_changing_anything():
    x = fb.zeros(2, 3)
    with pytest.raises(IndexError):
        x.transpose_(0, 5)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        fb.zeros(2, 2, 2).t_()
    assert x.shape == (2, 3) and x._version == 0


def test_resize_keeps_storage_order_and_grows():
    x = fb.arange(6.)
    x.resize_(2, 2)
    assert x.tolist() == [[0., 1.], [2., 3.]]
    x.resize_(6)
    assert x.tolist() == [0., 1., 2., 3., 4., 5.]  # the storage still held them
    x.resize_(3, 3)
    assert x.shape == (3, 3) and x.view(-1)[:6].tolist() == [0., 1., 2., 3., 4., 5.]
    y = fb.arange(4.)
    y.resize_as_(fb.zeros(2, 2))
    assert y.tolist() == [[0., 1.], [2., 3.]]
    with pytest.raises(RuntimeError, match="negative dimension"):
        y.resize_(-1)
    with pytest.raises(RuntimeError, match="cannot grow the storage of a view"):
        fb.arange(4.)[1:].resize_(5)


def test_in_place_comparison_gives_zero_gradients_as_in_pytorch():
    pytest.importorskip("flambeau.autograd")
    x = fb.ones(3, requires_grad=True)
    y = x * 2
    y.ge_(1)
    y.sum().backward()
    assert x.grad.tolist() == [0., 0., 0.]
    assert not x.gt(0).requires_grad  # the functional form's bool result never requires grad
