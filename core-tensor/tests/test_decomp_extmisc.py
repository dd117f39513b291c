"""The decompositions of unique, unique_consecutive, scatter_reduce, index_reduce (host) and frexp,
nextafter (exact arithmetic on the core tier), run with the CPU kernel switched off, against numpy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as fb
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS


def _decomposed(name, *args, **kwargs):
    op = OPS[name]
    names = [p.name for p in op.parameters]
    full = list(args) + [kwargs.get(p.name, p.default) for p in op.parameters[len(args):]]
    assert set(kwargs) <= set(names)
    return _without_kernel(op, fb.device("cpu"), tuple(full), None, False)


def _np(t):
    return t.to(fb.float64).numpy() if t.dtype in (fb.float16, fb.bfloat16) else t.numpy()


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(_np(g), _np(w))


# -- unique, unique_consecutive -----------------------------------------------------------------

FLAGS = [dict(return_inverse=i, return_counts=c) for i in (False, True) for c in (False, True)]


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.float16, fb.bfloat16, fb.int64, fb.uint8, fb.bool])
def test_unique_against_kernel(flags, dim, dtype):
    rng = np.random.default_rng(0)
    x = fb.tensor(rng.integers(0, 3, (5, 4)).astype(np.float64)).to(dtype)
    x_t = x.t()  # non-contiguous
    for src in (x, x_t):
        for sort in (True, False):
            _same(_decomposed("unique", src, sort, dim=dim, **flags), fb.unique(src, sort, dim=dim, **flags))
        _same(_decomposed("unique_consecutive", src, dim=dim, **flags), fb.unique_consecutive(src, dim=dim, **flags))


def test_unique_values_and_special_cases():
    x = fb.tensor([2.0, np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, 2.0])
    values, inverse, counts = _decomposed("unique", x, True, True, True)
    # NaN never equals NaN (each its own), -0 equals 0
    np.testing.assert_array_equal(values.numpy(), [-np.inf, -0.0, 2.0, np.inf, np.nan, np.nan])
    np.testing.assert_array_equal(counts.numpy(), [1, 2, 2, 1, 1, 1])
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x.numpy())
    # empty, 0-d (PyTorch refuses a dim there)
    _same(_decomposed("unique", fb.tensor([]), True, True, True), fb.unique(fb.tensor([]), True, True, True))
    _same(_decomposed("unique", fb.tensor(3.0), True, True, True), fb.unique(fb.tensor(3.0), True, True, True))
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        _decomposed("unique", fb.tensor(3.0), dim=0)
    _same(_decomposed("unique_consecutive", fb.tensor(3.0), True, True),
          fb.unique_consecutive(fb.tensor(3.0), True, True))
    e = fb.zeros((0, 3))
    # (the CPU kernel fails on this one: numpy cannot reshape (0, 3) to (0, -1))
    values, inverse = _decomposed("unique", e, dim=0, return_inverse=True)
    assert tuple(values.shape) == (0, 3) and tuple(inverse.shape) == (0,) and inverse.dtype == fb.int64


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=0, max_size=30))
def test_unique_consecutive_runs(data):
    x = fb.tensor(data, dtype=fb.int64)
    values, inverse, counts = _decomposed("unique_consecutive", x, True, True)
    arr = np.asarray(data, np.int64)
    starts = np.ones(arr.size, bool)
    starts[1:] = arr[1:] != arr[:-1]
    np.testing.assert_array_equal(values.numpy(), arr[starts])
    np.testing.assert_array_equal(np.repeat(values.numpy(), counts.numpy()), arr)
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], arr)


# -- scatter_reduce, index_reduce ---------------------------------------------------------------

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.int64, fb.int32, fb.float16])
def test_scatter_reduce_against_kernel(include_self, reduce, dtype):
    rng = np.random.default_rng(1)
    x = fb.tensor(rng.integers(-4, 5, (4, 5)).astype(np.float64)).to(dtype)
    src = fb.tensor(rng.integers(-4, 5, (6, 5)).astype(np.float64)).to(dtype)
    index = fb.tensor(rng.integers(0, 4, (3, 4)))  # smaller than src: only its leading block is read
    for d in (0, 1):
        idx = index if d == 0 else fb.tensor(rng.integers(0, 5, (4, 3)))
        _same(_decomposed("scatter_reduce", x, d, idx, src, reduce, include_self=include_self),
              fb.scatter_reduce(x, d, idx, src, reduce, include_self=include_self))
    if reduce != "sum":
        source = fb.tensor(rng.integers(-4, 5, (4, 3)).astype(np.float64)).to(dtype)
        sel = fb.tensor([4, 0, 4])
        _same(_decomposed("index_reduce", x, 1, sel, source, reduce, include_self=include_self),
              x.index_reduce(1, sel, source, reduce, include_self=include_self))


def test_scatter_reduce_nan_and_errors():
    x = fb.tensor([1.0, 2.0, 3.0])
    src = fb.tensor([np.nan, 5.0, -1.0])
    idx = fb.tensor([0, 0, 2])
    for reduce in ("amax", "amin"):
        _same(_decomposed("scatter_reduce", x, 0, idx, src, reduce), fb.scatter_reduce(x, 0, idx, src, reduce))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        _decomposed("scatter_reduce", x, 0, fb.tensor([3]), src, "sum")
    with pytest.raises(IndexError, match="index out of range in self"):
        _decomposed("index_reduce", x, 0, fb.tensor([-1]), fb.tensor([1.0]), "prod")
    empty = fb.tensor([], dtype=fb.int64)
    _same(_decomposed("scatter_reduce", x, 0, empty, src, "prod"), x)


# -- frexp, nextafter ---------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 0.75, 3.0, -8.0, 1e-30, 1e30, np.inf, -np.inf, np.nan]


def _floats(np_dtype):
    info = np.finfo(np_dtype)
    extra = [info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
             info.tiny * 3, 1 - info.eps / 2, 1 + info.eps]
    rng = np.random.default_rng(2)
    rand = rng.standard_normal(200) * np.exp(rng.uniform(-60, 60, 200))
    with np.errstate(over="ignore"):  # float16 takes the huge ones to inf
        return np.array(SPECIAL + extra + list(rand), dtype=np.float64).astype(np_dtype)


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64, fb.float16])
def test_frexp_exact(dtype):
    values = _floats(np.dtype(str(dtype).split(".")[-1]))
    x = fb.tensor(values)
    m, e = _decomposed("frexp", x)
    want_m, want_e = np.frexp(values)
    assert m.dtype == dtype and e.dtype == fb.int32
    np.testing.assert_array_equal(m.numpy(), want_m)
    finite = np.isfinite(values)
    np.testing.assert_array_equal(e.numpy()[finite], want_e[finite])
    assert np.array_equal(np.signbit(m.numpy()), np.signbit(want_m))  # -0 stays -0
    strided = fb.tensor(values[: values.size // 2 * 2].reshape(-1, 2)).t()  # a non-contiguous input
    m2, e2 = _decomposed("frexp", strided)
    np.testing.assert_array_equal(m2.numpy(), np.frexp(strided.numpy())[0])


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_nextafter_exact(dtype):
    npd = np.dtype(str(dtype).split(".")[-1])
    values = _floats(npd)
    rng = np.random.default_rng(3)
    for other in (np.full_like(values, np.inf), np.full_like(values, -np.inf), values[rng.permutation(values.size)],
                  values.copy(), np.zeros_like(values)):
        got = _decomposed("nextafter", fb.tensor(values), fb.tensor(other))
        with np.errstate(over="ignore"):
            want = np.nextafter(values, other)
        np.testing.assert_array_equal(got.numpy(), want)
    # broadcasting and 0-d
    got = _decomposed("nextafter", fb.tensor(values), fb.tensor(np.array(1.0, npd)))
    np.testing.assert_array_equal(got.numpy(), np.nextafter(values, npd.type(1.0)))


# -- multinomial, poisson (statistical: their stream is not the CPU kernel's) ----------------------

def _gen(seed):
    return fb.Generator().manual_seed(seed)


@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_multinomial_with_replacement_frequencies(dtype):
    stats = pytest.importorskip("scipy.stats")
    p = np.array([0.1, 0.0, 0.2, 0.7, 0.0])
    probs = fb.tensor(np.stack([p, p[::-1]]) * 3).to(dtype)  # unnormalised, two rows
    n = 20000
    draws = _decomposed("multinomial", probs, n, True, generator=_gen(5)).numpy()
    assert draws.shape == (2, n) and draws.dtype == np.int64
    for row, q in zip(draws, (p, p[::-1])):
        counts = np.bincount(row, minlength=5)
        assert np.all(counts[q == 0] == 0)  # a category of probability 0 is never drawn
        assert stats.chisquare(counts[q > 0], q[q > 0] * n).pvalue > 1e-4
    again = _decomposed("multinomial", probs, n, True, generator=_gen(5)).numpy()
    np.testing.assert_array_equal(draws, again)  # reproducible with a seeded generator
    one = _decomposed("multinomial", fb.tensor([0.0, 0.0, 1.0]).to(dtype), 7, True, generator=_gen(1))
    assert tuple(one.shape) == (7,) and np.all(one.numpy() == 2)


def test_multinomial_without_replacement_order():
    stats = pytest.importorskip("scipy.stats")
    p = np.array([0.5, 0.3, 0.15, 0.05])
    n = 20000
    probs = fb.tensor(np.tile(p, (n, 1)))
    draws = _decomposed("multinomial", probs, 3, generator=_gen(7)).numpy()
    assert all(len(set(r)) == 3 for r in draws[:500])  # no category twice in a row
    first = np.bincount(draws[:, 0], minlength=4)
    assert stats.chisquare(first, p * n).pvalue > 1e-4
    # the second draw: P(j) = sum_i p_i p_j / (1 - p_i) over i != j
    second_p = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)])
    assert stats.chisquare(np.bincount(draws[:, 1], minlength=4), second_p * n).pvalue > 1e-4
    all_of_them = _decomposed("multinomial", fb.tensor(p), 4, generator=_gen(2)).numpy()
    assert sorted(all_of_them) == [0, 1, 2, 3]
    np.testing.assert_array_equal(draws, _decomposed("multinomial", probs, 3, generator=_gen(7)).numpy())


@pytest.mark.parametrize("replacement, values, message", [
    (False, [0.5, -1.0], "probability tensor contains either `inf`, `nan` or element < 0"),
    (False, [0.5, np.nan], "probability tensor contains either `inf`, `nan` or element < 0"),
    (True, [0.5, -1.0], r"invalid multinomial distribution \(encountering probability entry < 0\)"),
    (True, [0.5, np.inf], r"invalid multinomial distribution \(encountering probability entry = infinity or NaN\)"),
    (True, [0.0, 0.0], r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
])
def test_multinomial_errors(replacement, values, message):
    with pytest.raises(RuntimeError, match=message):
        _decomposed("multinomial", fb.tensor(values), 1, replacement)


@pytest.mark.parametrize("rate", [0.3, 2.0, 9.5, 10.0, 37.0, 1e4, 1e8])
def test_poisson_moments_and_distribution(rate):
    stats = pytest.importorskip("scipy.stats")
    n = 20000
    x = _decomposed("poisson", fb.full((n,), rate, dtype=fb.float64), generator=_gen(11)).numpy()
    assert np.all(x == np.floor(x)) and np.all(x >= 0)
    # mean and variance within 5 standard errors (variance of the sample variance ~ 2 rate^2 / n + rate / n)
    assert abs(x.mean() - rate) < 5 * np.sqrt(rate / n)
    assert abs(x.var() - rate) < 5 * np.sqrt((2 * rate * rate + rate) / n)
    # chi-square over the bins of the central 99.8 %, the tails pooled
    lo, hi = stats.poisson.ppf([0.001, 0.999], rate)
    edges = np.unique(np.linspace(lo, hi + 1, min(int(hi - lo) + 2, 40)).astype(np.int64))
    observed = np.histogram(x, np.concatenate([[-np.inf], edges, [np.inf]]))[0]
    cdf = stats.poisson.cdf(np.concatenate([edges - 1, [np.inf]]), rate)
    expected = np.diff(np.concatenate([[0.0], cdf])) * n
    keep = expected > 5
    observed, expected = observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_poisson_special_rates_and_reproducibility():
    rates = fb.tensor([[0.0, 1.0, 50.0], [1e20, 3.5, 0.0]], dtype=fb.float32).t()  # non-contiguous, float32
    x = _decomposed("poisson", rates, generator=_gen(3))
    assert x.dtype == fb.float32 and tuple(x.shape) == (3, 2)
    got = x.numpy()
    assert got[0, 0] == 0 and got[2, 1] == 0 and got[0, 1] == float(-2 ** 63)  # PyTorch's overflowed sample
    np.testing.assert_array_equal(got, _decomposed("poisson", rates, generator=_gen(3)).numpy())
    assert tuple(_decomposed("poisson", fb.zeros((0, 3))).shape) == (0, 3)
    assert _decomposed("poisson", fb.tensor(4.0), generator=_gen(1)).numpy().shape == ()
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        _decomposed("poisson", fb.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        _decomposed("poisson", fb.tensor([np.nan]))
