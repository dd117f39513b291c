"""The decompositions of cummax/cummin/logcumsumexp (doubling scans), searchsorted/bucketize
(bisection for every value at once), kthvalue/median_dim/nanmedian_dim (picks from a stable sort)
and the bit shifts, run on the CPU with its kernels bypassed, against numpy references and the
CPU's own kernels; gradients through autograd where the op is differentiable."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS


def _decomposed(name, *args):
    return _without_kernel(OPS[name], fb.device("cpu"), args, None, False)


def _running(x: np.ndarray, axis: int, better) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's cummax/cummin written out: the later element wins on ties and when it is NaN."""
    x = np.moveaxis(x, axis, -1)
    values, index = np.empty_like(x), np.empty(x.shape, np.int64)
    for row in np.ndindex(*x.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(x[row]):
            if best is None or np.isnan(v) or (not np.isnan(best) and better(v, best)):
                best, at = v, i
            values[row + (i,)], index[row + (i,)] = best, at
    return np.moveaxis(values, -1, axis), np.moveaxis(index, -1, axis)


@pytest.mark.parametrize("name, better", [("cummax", np.greater_equal), ("cummin", np.less_equal)])
@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_cum_extremes_with_ties_and_nans(name, better, n):
    rng = np.random.default_rng(n)
    a = rng.integers(-3, 4, (3, n)).astype(np.float64)
    a[rng.random(a.shape) < 0.15] = np.nan
    for dim in (1, 0):
        values, indices = _decomposed(name, fb.from_numpy(a), dim)
        want_v, want_i = _running(a, dim, better)
        np.testing.assert_array_equal(values.numpy(), want_v)
        np.testing.assert_array_equal(indices.numpy(), want_i)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.bool_])
def test_cum_extremes_of_integers_match_the_kernel(dtype):
    a = np.random.default_rng(3).integers(0, 2 if dtype is np.bool_ else 100, (4, 9)).astype(dtype)
    x = fb.from_numpy(a)
    for name in ("cummax", "cummin"):
        got, want = _decomposed(name, x, -1), fb.ops.function(name)(x, -1)
        assert got.values.dtype == want.values.dtype and got.indices.dtype == fb.int64
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_cummax_of_a_0d_and_an_empty_tensor():
    values, indices = _decomposed("cummax", fb.tensor(2.5), 0)
    assert values.shape == () and float(values) == 2.5 and int(indices) == 0
    values, indices = _decomposed("cummax", fb.zeros(3, 0), 1)
    assert tuple(values.shape) == (3, 0) and tuple(indices.shape) == (3, 0)


def test_cummax_gradient_reaches_the_element_each_value_came_from():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.tensor([1.0, 3.0, 2.0, 3.0, 0.0], dtype=fb.float64, requires_grad=True)
    values, _ = _decomposed("cummax", x, 0)
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 0, 2, 0])  # indices 0 1 1 3 3: the tie goes to the later 3


def test_logcumsumexp_is_stable_at_any_spread():
    a = np.array([[-1000.0, 0.0, 1000.0, 999.0, -np.inf], [5.0, -np.inf, -np.inf, 700.0, 710.0]])
    got = _decomposed("logcumsumexp", fb.from_numpy(a), 1).numpy()
    want = np.logaddexp.accumulate(a, axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.float16, fb.bfloat16])
def test_logcumsumexp_matches_the_kernel(dtype):
    x = fb.from_numpy(np.random.default_rng(0).normal(size=(3, 37)) * 4).to(dtype)
    got, want = _decomposed("logcumsumexp", x, 1), fb.logcumsumexp(x, 1)
    assert got.dtype == dtype
    tol = {fb.float64: 1e-12, fb.float32: 1e-5}.get(dtype, 1e-2)
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=tol, atol=tol)


def test_logcumsumexp_gradient():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.from_numpy(np.random.default_rng(1).normal(size=(2, 6))).requires_grad_()
    assert fb.autograd.gradcheck(lambda t: _decomposed("logcumsumexp", t, 1), (x,))


def test_logcumsumexp_of_complex_numbers():
    a = np.random.default_rng(2).normal(size=(7,)) + 1j * np.random.default_rng(3).normal(size=(7,))
    got = _decomposed("logcumsumexp", fb.from_numpy(a), 0).numpy()
    np.testing.assert_allclose(np.exp(got), np.cumsum(np.exp(a)), rtol=1e-12)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_batched_scalar_and_sorter(right):
    rng = np.random.default_rng(4)
    seq = np.sort(rng.integers(-5, 6, (3, 9)), axis=-1).astype(np.float32)
    values = rng.integers(-7, 8, (3, 5)).astype(np.float32)
    values[0, 0] = np.nan
    side = "right" if right else "left"
    got = _decomposed("searchsorted", fb.from_numpy(seq), fb.from_numpy(values), False, right)
    want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    np.testing.assert_array_equal(got.numpy(), want)
    row = seq[0]
    got = _decomposed("searchsorted", fb.from_numpy(row), 0.5, True, right)
    assert got.dtype == fb.int32 and int(got) == np.searchsorted(row, 0.5, side=side)
    order = rng.permutation(9)
    unsorted = row[np.argsort(order)]  # ``unsorted[sorter]`` is the sorted row again
    sorter = np.argsort(unsorted, kind="stable")
    got = _decomposed("searchsorted", fb.from_numpy(unsorted), fb.from_numpy(values[0]), False, right, None,
                      fb.from_numpy(sorter))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(unsorted, values[0], side=side, sorter=sorter))


def test_bucketize_matches_the_kernel_on_every_length():
    rng = np.random.default_rng(5)
    x = fb.from_numpy(rng.integers(-20, 21, (4, 6)))
    for n in (0, 1, 2, 3, 7, 8, 16):
        bounds = fb.from_numpy(np.sort(rng.integers(-15, 16, n)))
        for right in (False, True):
            got = _decomposed("bucketize", x, bounds, False, right)
            np.testing.assert_array_equal(got.numpy(), fb.bucketize(x, bounds, right=right).numpy())


@pytest.mark.parametrize("name", ["kthvalue", "median_dim", "nanmedian_dim"])
def test_order_statistics_match_the_kernels(name):
    rng = np.random.default_rng(6)
    a = rng.integers(-3, 4, (4, 7)).astype(np.float64)
    a[0, 2] = a[1, 5] = a[1, 1] = np.nan
    a[3, :] = np.nan
    x = fb.from_numpy(a)
    for dim, keepdim in ((1, False), (0, True)):
        args = (x, 3, dim, keepdim) if name == "kthvalue" else (x, dim, keepdim)
        got, want = _decomposed(name, *args), fb.ops.function(name)(*args)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_median_dim_gradient_goes_to_the_median():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.tensor([[3.0, 1.0, 2.0, 5.0]], dtype=fb.float64, requires_grad=True)
    _decomposed("median_dim", x, 1, False).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 1, 0]])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_shifts_follow_pytorchs_rule_past_the_width(dtype):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, -1 if info.min else 200, 5, 1, 0] * 4, dtype=dtype)
    s = np.array([0, 1, 3, bits - 1, bits, bits + 3] * 4, dtype=dtype)
    if info.min:
        s[-6:] = -np.array([1, 2, 3, 4, 5, 6])
    x, y = fb.from_numpy(a), fb.from_numpy(s)
    big = s.astype(np.int64)
    valid_left = (big >= 0) & (big < bits)
    left = np.where(valid_left, (a.astype(np.int64) << np.where(valid_left, big, 0)), 0).astype(dtype)
    limit = bits - 1 if info.min else bits
    valid_right = (big >= 0) & (big < limit)
    right = np.where(valid_right, a.astype(np.int64) >> np.where(valid_right, big, 0),
                     np.where(a < 0, -1, 0)).astype(dtype)
    got = _decomposed("bitwise_left_shift", x, y)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.numpy(), left)
    np.testing.assert_array_equal(_decomposed("bitwise_right_shift", x, y).numpy(), right)


def test_shifts_broadcast_and_take_scalars():
    x = fb.tensor([[1], [-8]], dtype=fb.int32)
    np.testing.assert_array_equal(_decomposed("bitwise_left_shift", x, fb.tensor([0, 2, 4])).numpy(),
                                  [[1, 4, 16], [-8, -32, -128]])
    np.testing.assert_array_equal(_decomposed("bitwise_right_shift", x, 2).numpy(), [[0], [-2]])
    np.testing.assert_array_equal(_decomposed("bitwise_left_shift", 3, fb.tensor([1, 2])).numpy(), [6, 12])


def test_these_ops_are_no_longer_extended():
    tiers = fb.ops.tiers()
    for name in ("cummax", "cummin", "logcumsumexp", "searchsorted", "bucketize", "histc", "bitwise_left_shift",
                 "bitwise_right_shift"):
        assert tiers[name] == "decomposed", name
    # picks from sort, which computes on the host
    for name in ("kthvalue", "median_dim", "nanmedian_dim", "quantile", "nanquantile", "mode"):
        assert tiers[name] == "host", name


@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")  # numpy's, for the all-NaN row
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("name, reduce", [("quantile", np.quantile), ("nanquantile", np.nanquantile)])
def test_quantiles_match_numpy(name, reduce, interpolation):
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 6))
    a[1, 2] = np.nan
    a[2, :] = np.nan
    q = np.array([0.0, 0.3, 0.5, 1.0])
    x = fb.from_numpy(a)
    with np.errstate(all="ignore"):
        for args, axis, keepdim in (((q, 1, False), 1, False), ((q, 0, True), 0, True),
                                    ((0.37, None, True), None, True), ((0.37, -1, False), -1, False)):
            qq = fb.from_numpy(args[0]) if isinstance(args[0], np.ndarray) else args[0]
            got = _decomposed(name, x, qq, args[1], args[2], interpolation).numpy()
            want = reduce(a, args[0], axis=axis, keepdims=keepdim, method=interpolation)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_quantile_gradient():
    pytest.importorskip("flambeau.autograd")  # core-tensor's tests also run without flambeau-core-autograd
    x = fb.from_numpy(np.random.default_rng(8).normal(size=(3, 5))).requires_grad_()
    assert fb.autograd.gradcheck(lambda t: _decomposed("quantile", t, 0.3, 1, False, "linear"), (x,))


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint8, np.bool_])
def test_mode_matches_the_kernel(dtype):
    rng = np.random.default_rng(9)
    a = rng.integers(0, 2 if dtype is np.bool_ else 4, (3, 5, 7)).astype(dtype)
    x = fb.from_numpy(a)
    for dim, keepdim in ((-1, False), (1, True), (0, False)):
        got, want = _decomposed("mode", x, dim, keepdim), fb.mode(x, dim, keepdim)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    values, indices = _decomposed("mode", fb.tensor([2.0, 1.0, 2.0, 1.0, 3.0]), 0, False)
    assert float(values) == 1.0 and int(indices) == 3  # equally frequent: the smaller, at its last index


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_histc_matches_numpy_and_the_kernel(dtype):
    rng = np.random.default_rng(10)
    finite = np.concatenate([rng.normal(size=500), np.linspace(-1, 1, 41)])
    with_specials = np.concatenate([finite, [np.nan, np.inf, -np.inf, 7.0]])
    # equal bounds (0 and 0, or any pair) take the data's range, as PyTorch
    for a, args, low, high in ((with_specials, (13, -1.0, 1.0), -1.0, 1.0),
                               (finite, (100, 0, 0), None, None), (finite, (7, 0.25, 0.25), None, None)):
        x = fb.from_numpy(a).to(dtype)
        got = _decomposed("histc", x, *args)
        data = x.numpy().astype(np.float64)
        if low is None:
            low, high = data.min(), data.max()
        want = np.histogram(data[np.isfinite(data)], bins=args[0], range=(low, high))[0]
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(got.numpy(), fb.histc(x, *args).numpy())
    np.testing.assert_array_equal(_decomposed("histc", fb.ones(4, dtype=dtype), 3, 0, 0).numpy(), [0, 4, 0])
    with pytest.raises(RuntimeError, match="not finite"):
        _decomposed("histc", fb.from_numpy(with_specials).to(dtype), 5, 0, 0)


def test_lgamma_reflection_near_the_negative_integers():
    """The reflection's sin(pi x) comes from x - round(x), an exact reduction: x - floor(x) rounded for
    small negative x (-1e-10: 3e-8 relative error; -1e-300: 0.95)."""
    special = pytest.importorskip("scipy.special")
    xs = np.array([-1e-5, -1e-10, -3e-8, -1 - 1e-9, -2.5 + 1e-12, -0.3, -7.25, -1e-300, -1 + 1e-7])
    got = _decomposed("lgamma", fb.tensor(xs, dtype=fb.float64)).numpy()
    np.testing.assert_allclose(got, special.gammaln(xs), rtol=2e-14)
