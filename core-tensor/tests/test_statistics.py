"""The statistical and cumulative reductions beyond the conformance kit: call forms (unbiased,
median(x, dim)), dtypes, NaN semantics, the C++ scans (long rows, in place, int64 wrap-around),
unique/bincount/histc, and property tests against numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb


def test_var_std_call_forms():
    x = fb.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0]])
    data = x.numpy()
    assert np.allclose(fb.var(x).item(), np.var(data, ddof=1))
    assert np.allclose(fb.var(x, False).item(), np.var(data))  # var(x, unbiased)
    assert np.allclose(fb.var(x, 1, False, True).numpy(), np.var(data, 1, keepdims=True))  # (dim, unbiased, keepdim)
    assert np.allclose(x.std(1, correction=0).numpy(), np.std(data, 1))
    assert np.allclose(x.std((0, 1), keepdim=True, correction=2).numpy(), np.std(data, ddof=2).reshape(1, 1))
    assert np.allclose(fb.std(x, unbiased=True).item(), np.std(data, ddof=1))
    var, mean = fb.var_mean(x, 0, correction=0)
    assert np.allclose(var.numpy(), np.var(data, 0)) and np.allclose(mean.numpy(), data.mean(0))
    std, mean = fb.std_mean(x, unbiased=False)
    assert np.allclose(std.item(), np.std(data)) and np.allclose(mean.item(), data.mean())


def test_var_dtypes_and_errors():
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        fb.var(fb.tensor([1, 2]))
    z = fb.tensor([1 + 1j, 2 - 1j, 0j])
    assert z.var().dtype == fb.float32
    assert np.allclose(z.var().item(), np.var(z.numpy(), ddof=1))
    assert math.isnan(fb.var(fb.tensor([1.0])).item())  # one sample, correction 1


def test_nansum_nanmean():
    x = fb.tensor([[1.0, math.nan], [3.0, 4.0]])
    assert fb.nansum(x).item() == 8.0
    assert fb.nansum(x, 1).tolist() == [1.0, 7.0]
    assert fb.nanmean(x, 0).tolist() == [2.0, 4.0]
    assert fb.nansum(fb.tensor([1, 2], dtype=fb.int32)).dtype == fb.int64
    assert math.isnan(fb.nanmean(fb.tensor([math.nan])).item())


def test_aminmax():
    x = fb.tensor([[1, 9, 3], [4, -2, 6]])
    r = fb.aminmax(x)
    assert type(r).__name__ == "aminmax" and r.min.item() == -2 and r.max.item() == 9
    r = x.aminmax(dim=1, keepdim=True)
    assert r.min.tolist() == [[1], [-2]] and r.max.tolist() == [[9], [6]]


def test_median_forms_and_nan():
    x = fb.tensor([[1.0, 5.0, 2.0, 8.0], [4.0, math.nan, 6.0, 0.0]])
    assert fb.median(fb.tensor([1.0, 5.0, 2.0, 8.0])).item() == 2.0  # the lower of the two middle values
    assert math.isnan(fb.median(x).item())
    assert fb.nanmedian(x).item() == 4.0
    r = fb.median(x, 1)
    assert type(r).__name__ == "median" and r.values[0].item() == 2.0 and r.indices[0].item() == 2
    assert math.isnan(r.values[1].item()) and r.indices[1].item() == 1  # NaN wins, at its index
    r = x.nanmedian(1, keepdim=True)
    assert r.values.tolist() == [[2.0], [4.0]] and r.indices.tolist() == [[2], [0]]


def test_mode():
    x = fb.tensor([[1, 2, 2, 3, 3], [7, 7, 0, 0, 5]])
    r = fb.mode(x)
    assert r.values.tolist() == [2, 0]  # equally frequent: the smallest value
    assert r.indices.tolist() == [2, 3]
    assert x.mode(0).values.tolist() == [1, 2, 0, 0, 3]


def test_quantile():
    data = np.random.default_rng(0).standard_normal((4, 7))
    x = fb.from_numpy(data)
    q = fb.tensor([0.1, 0.5, 0.9], dtype=fb.float64)
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        assert np.allclose(fb.quantile(x, q, 1, interpolation=mode).numpy(),
                           np.quantile(data, q.numpy(), axis=1, method=mode))
    assert np.allclose(fb.quantile(x, 0.3).item(), np.quantile(data, 0.3))
    assert tuple(fb.quantile(x, q, 0, keepdim=True).shape) == (3, 1, 7)
    data[0, 0] = np.nan
    assert math.isnan(fb.quantile(fb.from_numpy(data), 0.5, 1)[0].item())
    assert np.allclose(fb.nanquantile(fb.from_numpy(data), 0.5, 1).numpy(), np.nanquantile(data, 0.5, axis=1))
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        fb.quantile(x, fb.tensor([0.5, 1.5], dtype=fb.float64))
    with pytest.raises(RuntimeError, match="input tensor must be either float or double"):
        fb.quantile(fb.tensor([1, 2]), 0.5)


def test_logsumexp_norm_dist():
    data = np.random.default_rng(1).standard_normal((3, 4))
    x = fb.from_numpy(data)
    ref = np.log(np.exp(data).sum(1))
    assert np.allclose(fb.logsumexp(x, 1).numpy(), ref)
    assert fb.logsumexp(fb.tensor([1000.0, 1000.0]), 0).item() == pytest.approx(1000 + math.log(2))
    assert fb.logsumexp(fb.tensor([1, 2]), 0).dtype == fb.float32
    assert np.allclose(fb.norm(x).item(), np.linalg.norm(data))
    assert np.allclose(x.norm(1, 1).numpy(), np.abs(data).sum(1))
    assert np.allclose(fb.norm(x, math.inf).item(), np.abs(data).max())
    assert np.allclose(fb.norm(x, "nuc").item(), np.linalg.norm(data, "nuc"))
    assert np.allclose(fb.norm(x, 3, (0, 1), keepdim=True).numpy(), (np.abs(data) ** 3).sum() ** (1 / 3))
    assert fb.norm(fb.tensor([3 + 4j])).item() == pytest.approx(5.0)
    y = fb.from_numpy(data[0])
    assert np.allclose(fb.dist(x, y, 1).item(), np.abs(data - data[0]).sum())
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        fb.norm(fb.tensor([1, 2]))


def test_count_nonzero():
    x = fb.tensor([[0, 1, 2], [0, 0, 3]])
    assert fb.count_nonzero(x).item() == 3
    assert x.count_nonzero(0).tolist() == [0, 1, 2]
    assert fb.count_nonzero(x, (0, 1)).item() == 3


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((4, 3000), -1), ((2, 40_000), 1), ((5, 7), 0)])
def test_cumsum_cumprod_match_numpy(dtype, shape, dim):
    rng = np.random.default_rng(shape[-1])
    data = rng.integers(0, 3, size=shape).astype(dtype)
    x = fb.from_numpy(data)
    want = np.cumsum(data.astype(np.float64 if data.dtype.kind == "f" else np.int64), axis=dim)
    got = fb.cumsum(x, dim)
    assert got.dtype == (fb.int64 if dtype in ("int32", "uint8", "bool", "int64") else x.dtype)
    assert np.allclose(got.numpy(), want, rtol=1e-6)
    # About 20 twos among ones per row, so that no running product overflows any dtype.
    factors = np.where(rng.random(shape) < 20 / shape[dim], 2, 1)
    small = fb.from_numpy(factors.astype(dtype) if dtype != "bool" else data)
    want = np.cumprod(small.numpy().astype(np.float64), axis=dim)
    assert np.allclose(fb.cumprod(small, dim).numpy().astype(np.float64), want, rtol=1e-5)


def test_cumsum_float32_accumulates_in_double():
    x = fb.full((1, 1_000_000), 0.1)
    assert fb.cumsum(x, 1)[0, -1].item() == pytest.approx(100000.0, rel=1e-6)


def test_cumsum_int64_wraps_and_in_place():
    big = np.array([[2**62, 2**62, 2**62]], dtype=np.int64)
    assert fb.cumsum(fb.from_numpy(big), 1).numpy()[0, 2] == np.cumsum(big, 1)[0, 2]  # wraps like numpy
    x = fb.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    version = x._version_counter[0]
    assert x.cumsum_(1) is x and x.tolist() == [[1.0, 3.0, 6.0], [4.0, 9.0, 15.0]]
    assert x._version_counter[0] > version
    y = fb.tensor([[1.0, 2.0], [3.0, 4.0]])
    y.t().cumprod_(1)
    assert y.tolist() == [[1.0, 2.0], [3.0, 8.0]]
    out = fb.empty(3, dtype=fb.float64)
    assert fb.cumsum(fb.tensor([1, 2, 3]), 0, dtype=fb.float64, out=out) is out and out.tolist() == [1.0, 3.0, 6.0]


def test_cummax_cummin_nan_and_ties():
    x = fb.tensor([1.0, 3.0, 3.0, math.nan, 5.0, math.nan])
    r = fb.cummax(x, 0)
    assert np.array_equal(r.values.numpy(), [1, 3, 3, np.nan, np.nan, np.nan], equal_nan=True)
    assert r.indices.tolist() == [0, 1, 2, 3, 3, 5]  # ties: the latest; NaN: every NaN takes over
    r = fb.cummin(fb.tensor([[4, 2, 2, 9, 1]]), 1)
    assert r.values.tolist() == [[4, 2, 2, 2, 1]] and r.indices.tolist() == [[0, 1, 2, 2, 4]]


def test_logcumsumexp():
    data = np.random.default_rng(2).standard_normal((3, 6))
    assert np.allclose(fb.logcumsumexp(fb.from_numpy(data), 1).numpy(), np.log(np.cumsum(np.exp(data), 1)))
    assert fb.logcumsumexp(fb.tensor([-math.inf, 0.0]), 0).tolist() == [-math.inf, 0.0]


def test_unique_forms():
    x = fb.tensor([[2, 1, 2], [3, 1, 1]])
    assert fb.unique(x).tolist() == [1, 2, 3]
    values, inverse, counts = fb.unique(x, return_inverse=True, return_counts=True)
    assert inverse.tolist() == [[1, 0, 1], [2, 0, 0]] and counts.tolist() == [3, 2, 1]
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [3, 2, 1]
    rows = fb.tensor([[1, 2], [0, 5], [1, 2]])
    values, inverse = fb.unique(rows, dim=0, return_inverse=True)
    assert values.tolist() == [[0, 5], [1, 2]] and inverse.tolist() == [1, 0, 1]
    nan = fb.unique(fb.tensor([math.nan, math.nan, 1.0]))
    assert tuple(nan.shape) == (3,)  # NaNs are each distinct, as in PyTorch
    c = fb.unique_consecutive(fb.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True, return_counts=True)
    assert c[0].tolist() == [1, 2, 3, 1] and c[1].tolist() == [0, 0, 1, 1, 2, 3, 3] and c[2].tolist() == [2, 2, 1, 2]
    cols = fb.unique_consecutive(fb.tensor([[1, 1, 2], [3, 3, 4]]), dim=1)
    assert cols.tolist() == [[1, 2], [3, 4]]


def test_bincount_histc():
    x = fb.tensor([0, 1, 1, 3])
    assert fb.bincount(x).tolist() == [1, 2, 0, 1]
    assert fb.bincount(x, minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    w = fb.tensor([0.5, 1.0, 1.0, 2.0])
    assert fb.bincount(x, w).tolist() == [0.5, 2.0, 0.0, 2.0] and fb.bincount(x, w).dtype == fb.float32
    assert fb.bincount(x, fb.tensor([1, 1, 1, 1])).dtype == fb.float64
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
        fb.bincount(fb.tensor([-1, 2]))
    h = fb.histc(fb.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3)
    assert h.tolist() == [0.0, 2.0, 1.0, 0.0]  # 4.0 is outside [0, 3]
    assert fb.histc(fb.tensor([1.0, 2.0, 3.0]), bins=2).tolist() == [1.0, 2.0]  # data's own range
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        fb.histc(fb.tensor([1.0]), 3, 2, 1)


def test_all_any_take_dim_tuples():
    x = fb.tensor([[[True, False], [True, True]]])
    assert fb.all(x, (0, 2)).tolist() == [False, True]
    assert x.any((1, 2)).tolist() == [True]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_reductions_property(shape, data):
    arr = np.random.default_rng(sum(shape)).standard_normal(shape)
    x = fb.from_numpy(arr)
    ndim = len(shape)
    dims = tuple(sorted(set(data.draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim)))))
    keepdim = data.draw(st.booleans())
    assert np.allclose(fb.var(x, dims, keepdim=keepdim, correction=0).numpy(), np.var(arr, axis=dims, keepdims=keepdim))
    assert np.allclose(fb.logsumexp(x, dims, keepdim).numpy(),
                       np.log(np.exp(arr).sum(axis=dims, keepdims=keepdim)))
    assert np.allclose(fb.norm(x, 2, dims, keepdim).numpy(),
                       np.sqrt((arr ** 2).sum(axis=dims, keepdims=keepdim)))
    dim = data.draw(st.integers(-ndim, ndim - 1))
    assert np.allclose(fb.cumsum(x, dim).numpy(), np.cumsum(arr, axis=dim))


def test_docstring_examples_hold():
    from flambeau._core_ops._docs_statistics import DOCS

    for name, doc in DOCS.items():
        example = doc.split("Example::", 1)[1].strip("\n").splitlines()
        namespace = {"flambeau": fb}
        shown: list[str] = []
        for line in example:
            line = line[4:]
            if line.startswith(">>> "):
                if shown:
                    raise AssertionError(f"{name}: output before the last statement")
                statement = line[4:]
            elif line:
                shown.append(line)
                continue
            else:
                continue
            try:
                last = eval(statement, namespace)
            except SyntaxError:
                exec(statement, namespace)
        assert repr(last) == "\n".join(shown), name
        assert "Args:" in doc, name
