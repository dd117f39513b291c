"""Random sampling: generators and seeding, determinism, distribution statistics, shapes, dtypes and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as fb

stats = pytest.importorskip("scipy.stats")

FLOATS = [fb.float16, fb.bfloat16, fb.float32, fb.float64]
N = 20_000  # samples for the statistical checks: tolerances below are several standard errors wide


def host(t: fb.Tensor) -> np.ndarray:
    return np.asarray(t.to(fb.float64).numpy()) if t.dtype.is_floating_point else np.asarray(t.numpy())


def ks_ok(sample: np.ndarray, cdf, alpha: float = 1e-4) -> bool:
    """A Kolmogorov-Smirnov test that rejects only at a tiny level (fixed seeds: it either passes or not)."""
    return stats.kstest(sample, cdf).pvalue > alpha


# -- generators and seeding ------------------------------------------------------------------

def test_default_seed_is_the_same_in_every_process():
    g = fb.Generator()
    assert g.initial_seed() == 67280421310721
    assert g.device == fb.device("cpu")
    a = fb.rand(5, generator=g)
    b = fb.rand(5, generator=fb.Generator())
    np.testing.assert_array_equal(host(a), host(b))


def test_manual_seed_repeats_and_returns_the_default_generator():
    g = fb.manual_seed(123)
    assert g is fb.default_generator
    assert isinstance(g, fb.Generator)
    assert fb.initial_seed() == 123
    a = fb.randn(4, 3)
    fb.manual_seed(123)
    np.testing.assert_array_equal(host(a), host(fb.randn(4, 3)))
    fb.manual_seed(124)
    assert not np.array_equal(host(a), host(fb.randn(4, 3)))


def test_negative_seed_wraps_and_overflow_raises():
    assert fb.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
        fb.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        fb.manual_seed("seven")


def test_generator_is_independent_of_the_default():
    g = fb.Generator().manual_seed(5)
    fb.manual_seed(0)
    a = fb.rand(3, generator=g)
    fb.rand(100)  # draws from the default only
    g2 = fb.Generator().manual_seed(5)
    np.testing.assert_array_equal(host(a), host(fb.rand(3, generator=g2)))


def test_state_round_trip():
    g = fb.Generator().manual_seed(9)
    fb.rand(7, generator=g)
    state = g.get_state()
    assert state.dtype == fb.uint8 and state.dim() == 1
    a = fb.randn(10, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(host(a), host(fb.randn(10, generator=g)))
    # the state carries the seed too, and another generator can take it
    other = fb.Generator().set_state(state)
    assert other.initial_seed() == 9
    np.testing.assert_array_equal(host(a), host(fb.randn(10, generator=other)))


def test_get_state_is_a_copy():
    g = fb.Generator()
    state = g.get_state()
    before = host(state).copy()
    fb.rand(10, generator=g)
    np.testing.assert_array_equal(host(state), before)


def test_rng_state_functions():
    fb.manual_seed(3)
    state = fb.get_rng_state()
    a = fb.rand(6)
    fb.set_rng_state(state)
    np.testing.assert_array_equal(host(a), host(fb.rand(6)))


def test_set_state_errors():
    g = fb.Generator()
    with pytest.raises(TypeError, match="RNG state must be a flambeau.ByteTensor"):
        g.set_state(fb.zeros(60))
    with pytest.raises(RuntimeError, match="RNG state size to be 3"):
        g.set_state(fb.zeros(3, dtype=fb.uint8))
    with pytest.raises(TypeError):
        g.set_state([1, 2, 3])


def test_seed_is_nondeterministic_and_reported():
    g = fb.Generator()
    s1, s2 = g.seed(), g.seed()
    assert s1 != s2 and g.initial_seed() == s2 and 0 <= s2 < 2 ** 64
    s = fb.seed()
    assert fb.initial_seed() == s


def test_generator_argument_checked():
    with pytest.raises(TypeError, match="argument 'generator' must be flambeau.Generator, not int"):
        fb.rand(3, generator=1)
    with pytest.raises(TypeError, match="must be flambeau.Generator"):
        fb.empty(3).normal_(generator="g")


# -- shapes, dtypes, overloads ---------------------------------------------------------------

@pytest.mark.parametrize("fn", [fb.rand, fb.randn])
def test_size_forms(fn):
    assert fn(2, 3).shape == (2, 3)
    assert fn((2, 3)).shape == (2, 3)
    assert fn([4]).shape == (4,)
    assert fn(size=(1, 2)).shape == (1, 2)
    assert fn(()).shape == ()
    assert fn(0, 3).shape == (0, 3)
    assert fn(2).dtype == fb.float32
    assert fn(2, dtype=fb.float64).dtype == fb.float64
    # requires_grad=True is core-autograd's: core-autograd/tests/test_formulas_random.py


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_in_unit_interval_for_every_float_dtype(dtype):
    fb.manual_seed(0)
    values = host(fb.rand(50_000, dtype=dtype))
    assert values.min() >= 0 and values.max() < 1  # low precision never rounds up to 1
    assert abs(values.mean() - 0.5) < 0.01


def test_rand_out_and_dtype_mismatch():
    out = fb.empty(0)
    fb.manual_seed(1)
    r = fb.rand(3, 2, out=out)
    assert r is out and out.shape == (3, 2)
    fb.manual_seed(1)
    np.testing.assert_array_equal(host(out), host(fb.rand(3, 2)))
    with pytest.raises(RuntimeError, match="does not match dtype of out parameter"):
        fb.rand(2, out=fb.empty(2), dtype=fb.float64)


def test_integer_dtypes_refused_where_pytorch_does():
    with pytest.raises(RuntimeError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        fb.rand(2, dtype=fb.int64)
    with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Int'"):
        fb.randn(2, dtype=fb.int32)
    with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        fb.zeros(2, dtype=fb.int64).normal_()


def test_complex_rand_and_randn():
    fb.manual_seed(0)
    r = fb.rand(10_000, dtype=fb.complex64)
    assert r.dtype == fb.complex64
    v = r.numpy()
    assert 0 <= v.real.min() and v.real.max() < 1 and 0 <= v.imag.min() and v.imag.max() < 1
    z = fb.randn(40_000, dtype=fb.complex128).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1.0) < 0.03  # unit variance: each part N(0, 1/2)


def test_randint_overloads_and_bounds():
    fb.manual_seed(0)
    a = fb.randint(10, (1000,))
    assert a.dtype == fb.int64 and host(a).min() >= 0 and host(a).max() <= 9
    b = fb.randint(-5, 5, (1000,), dtype=fb.int8)
    assert b.dtype == fb.int8 and host(b).min() == -5 and host(b).max() == 4
    c = fb.randint(low=2, high=4, size=(50,))
    assert set(host(c).tolist()) == {2, 3}
    d = fb.randint(3, size=(5,), dtype=fb.float32)
    assert d.dtype == fb.float32 and np.all(host(d) == np.round(host(d)))
    assert fb.randint(0, 2, (4,), dtype=fb.bool).dtype == fb.bool
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=3 >= to=3"):
        fb.randint(3, 3, (2,))
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for Byte"):
        fb.randint(0, 257, (2,), dtype=fb.uint8)
    with pytest.raises(TypeError):
        fb.randint(5)


def test_randint_is_uniform():
    fb.manual_seed(4)
    counts = np.bincount(host(fb.randint(0, 6, (60_000,))), minlength=6)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_randperm_is_a_permutation():
    fb.manual_seed(0)
    for n, dtype in ((0, fb.int64), (1, fb.int64), (100, fb.int32), (50, fb.float32)):
        p = fb.randperm(n, dtype=dtype)
        assert p.dtype == dtype and sorted(host(p).tolist()) == list(range(n))
    with pytest.raises(RuntimeError, match="n must be non-negative, got-2"):
        fb.randperm(-2)
    with pytest.raises(RuntimeError, match="n is too large for result tensor type: 'Byte'"):
        fb.randperm(1000, dtype=fb.uint8)


def test_like_functions():
    x = fb.zeros(3, 4, dtype=fb.float64)
    assert fb.rand_like(x).dtype == fb.float64 and fb.rand_like(x).shape == (3, 4)
    assert fb.randn_like(x, dtype=fb.float16).dtype == fb.float16
    r = fb.randint_like(x, 5)
    assert r.dtype == fb.float64 and host(r).max() <= 4
    r = fb.randint_like(fb.zeros(100, dtype=fb.int32), 3, 6)
    assert r.dtype == fb.int32 and 3 <= host(r).min() and host(r).max() <= 5
    g = fb.Generator().manual_seed(2)
    a = fb.rand_like(x, generator=g)
    np.testing.assert_array_equal(host(a), host(fb.rand_like(x, generator=fb.Generator().manual_seed(2))))
    with pytest.raises(RuntimeError, match="check_uniform_bounds"):
        fb.rand_like(fb.zeros(2, dtype=fb.int64))


# -- distributions ----------------------------------------------------------------------------

def test_randn_is_standard_normal():
    fb.manual_seed(0)
    x = host(fb.randn(N, dtype=fb.float64))
    assert abs(x.mean()) < 0.04 and abs(x.var() - 1) < 0.05
    assert ks_ok(x, "norm")


@pytest.mark.parametrize("dtype", FLOATS)
def test_in_place_samplers_statistics(dtype):
    fb.manual_seed(11)
    tol = 0.06 if dtype in (fb.float16, fb.bfloat16) else 0.04
    x = fb.empty(N, dtype=dtype)
    v = host(x.uniform_(-2, 6))
    assert v.min() >= -2 and v.max() <= 6 and abs(v.mean() - 2) < 8 * tol
    v = host(x.normal_(3, 2))
    assert abs(v.mean() - 3) < 2 * tol and abs(v.std() - 2) < 2 * tol
    v = host(x.exponential_(4.0))
    assert v.min() >= 0 and abs(v.mean() - 0.25) < tol
    v = host(x.geometric_(0.25))
    assert v.min() >= 1 and np.all(v == np.round(v)) and abs(v.mean() - 4) < 0.15
    v = host(x.log_normal_(0.0, 0.5))
    assert v.min() >= 0 and abs(np.median(np.log(v[v > 0]))) < 2 * tol
    v = host(x.cauchy_(1.0, 2.0))
    assert abs(np.median(v) - 1) < 0.1
    v = host(x.bernoulli_(0.3))
    assert set(np.unique(v)) <= {0.0, 1.0} and abs(v.mean() - 0.3) < 0.02


def test_samplers_follow_their_distributions():
    fb.manual_seed(2)
    x = fb.empty(N, dtype=fb.float64)
    assert ks_ok(host(x.uniform_(1, 3)), stats.uniform(1, 2).cdf)
    assert ks_ok(host(x.normal_(-1, 0.5)), stats.norm(-1, 0.5).cdf)
    assert ks_ok(host(x.exponential_(2.0)), stats.expon(scale=0.5).cdf)
    assert ks_ok(host(x.cauchy_(0.5, 1.5)), stats.cauchy(0.5, 1.5).cdf)
    assert ks_ok(host(x.log_normal_(0.2, 0.7)), stats.lognorm(0.7, scale=math.exp(0.2)).cdf)
    assert ks_ok(host(fb.normal(2.0, 3.0, (N,), dtype=fb.float64)), stats.norm(2, 3).cdf)


def test_random_in_place_forms():
    fb.manual_seed(0)
    x = fb.empty(5000)
    v = host(x.random_())
    assert v.min() >= 0 and v.max() <= 2 ** 24 and np.all(v == np.round(v))
    v = host(x.random_(10))
    assert v.min() == 0 and v.max() == 9
    v = host(x.random_(-3, 3))
    assert v.min() == -3 and v.max() == 2
    v = host(x.random_(5, None))
    assert v.min() >= 5
    v = host(x.random_(**{"from": 2, "to": 4}))
    assert set(np.unique(v)) == {2.0, 3.0}
    b = fb.empty(1000, dtype=fb.bool).random_()
    assert set(host(b).tolist()) == {False, True}
    u = host(fb.empty(5000, dtype=fb.uint8).random_())
    assert u.max() > 200
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=4 >= to=2"):
        x.random_(4, 2)
    with pytest.raises(RuntimeError, match="from is out of bounds for Char"):
        fb.empty(2, dtype=fb.int8).random_(-200, 3)


def test_in_place_sampler_errors_leave_input_untouched():
    x = fb.arange(4.0)
    with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range, but found from=3 > to=1"):
        x.uniform_(3, 1)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=-1"):
        x.exponential_(-1)
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=0"):
        x.geometric_(0)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        x.log_normal_(1, 0)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=2"):
        x.bernoulli_(2.0)
    with pytest.raises(RuntimeError, match="Expected p_in >= 0"):
        x.bernoulli_(fb.tensor([0.5, 0.5, 0.5, 2.0]))
    np.testing.assert_array_equal(host(x), [0, 1, 2, 3])


def test_in_place_samplers_bump_version_and_keep_identity():
    x = fb.zeros(3, 4)
    version = x._version_counter[0]
    assert x.normal_() is x
    assert x._version_counter[0] == version + 1
    t = fb.zeros(4, 3).t()  # a non-contiguous view: written through
    t.uniform_(5, 6)
    assert t._base is not None and host(t._base).min() >= 5


@pytest.mark.parametrize("dtype", [fb.float16, fb.float32, fb.float64])
def test_bulk_fills_do_not_depend_on_the_thread_count(dtype):
    before = fb.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            fb.set_num_threads(threads)
            g = fb.Generator().manual_seed(77)
            # 4.4M elements: past the size (2**20 counter blocks) where the fills start using threads
            results.append((host(fb.rand(4_400_001, dtype=dtype, generator=g)),
                            host(fb.randn(4_400_001, dtype=dtype, generator=g)),
                            host(fb.empty(1000, 301, dtype=dtype).uniform_(-1, 1, generator=g))))
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
    finally:
        fb.set_num_threads(before)


def test_consecutive_draws_differ_and_continue_the_stream():
    g = fb.Generator().manual_seed(1)
    a, b = host(fb.rand(7, generator=g)), host(fb.rand(7, generator=g))
    assert not np.array_equal(a, b)
    g.manual_seed(1)
    both = host(fb.rand(14, generator=g))
    # a fill takes whole counter blocks (4 float32 each): 7 + 7 values start a new block at the 8th
    np.testing.assert_array_equal(both[:7], a)


@pytest.mark.parametrize("dtype", FLOATS)
def test_same_seed_same_numbers_for_any_layout(dtype):
    for method, args in (("uniform_", (-1.0, 2.0)), ("normal_", (0.5, 2.0))):
        a = fb.empty(5, 6, dtype=dtype)
        b = fb.empty(6, 5, dtype=dtype).t()
        fb.manual_seed(3)
        getattr(a, method)(*args)
        fb.manual_seed(3)
        getattr(b, method)(*args)
        np.testing.assert_array_equal(host(a), host(b))


def test_same_seed_same_numbers_for_a_tensor_and_its_transpose():
    a = fb.empty(3, 4)
    b = fb.empty(4, 3).t()
    fb.manual_seed(8)
    a.normal_()
    fb.manual_seed(8)
    b.normal_()
    np.testing.assert_array_equal(host(a), host(b))


def test_normal_overloads():
    fb.manual_seed(0)
    mean = fb.arange(5.0)
    std = fb.full((5,), 0.5)
    assert fb.normal(mean, std).shape == (5,)
    assert fb.normal(mean, 1.0).shape == (5,)
    assert fb.normal(0.0, std).shape == (5,)
    assert fb.normal(fb.zeros(2, 1), fb.ones(3)).shape == (2, 3)  # broadcast
    assert fb.normal(0.0, 1.0, (2, 3)).shape == (2, 3)
    assert fb.normal(0.0, 1.0, size=(4,), dtype=fb.float64).dtype == fb.float64
    assert fb.normal(mean.to(fb.float64), 1.0).dtype == fb.float64
    # zero std gives the means exactly
    np.testing.assert_array_equal(host(fb.normal(mean, 0.0)), host(mean))
    big = fb.normal(fb.full((N,), 5.0, dtype=fb.float64), fb.full((N,), 2.0, dtype=fb.float64))
    assert abs(host(big).mean() - 5) < 0.06 and abs(host(big).std() - 2) < 0.06
    out = fb.empty(5)
    assert fb.normal(mean, std, out=out) is out
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        fb.normal(mean, fb.full((5,), -1.0))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        fb.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -0.5"):
        fb.normal(mean, -0.5)
    with pytest.raises(TypeError):
        fb.normal(0.0, 1.0)


def test_bernoulli_forms():
    fb.manual_seed(0)
    p = fb.rand(N, dtype=fb.float64)
    b = fb.bernoulli(p)
    assert b.dtype == fb.float64 and set(np.unique(host(b))) <= {0.0, 1.0}
    # P(b = 1 | p) = p: the mean of b - p is near 0
    assert abs((host(b) - host(p)).mean()) < 0.01
    assert host(fb.bernoulli(fb.zeros(100))).sum() == 0
    assert host(fb.bernoulli(fb.ones(100))).sum() == 100
    assert abs(host(fb.bernoulli(fb.zeros(N), 0.7)).mean() - 0.7) < 0.02
    assert abs(host(p.bernoulli()).mean() - 0.5) < 0.02
    x = fb.zeros(N, dtype=fb.int32)
    assert x.bernoulli_() is x and abs(host(x).mean() - 0.5) < 0.02  # default p = 0.5
    rows = fb.zeros(2, 4).bernoulli_(fb.tensor([0.0, 1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(host(rows), [[0, 1, 0, 1], [0, 1, 0, 1]])


def test_multinomial_with_replacement_matches_probabilities():
    fb.manual_seed(0)
    probs = np.array([0.1, 0.0, 0.6, 0.3])
    draws = host(fb.multinomial(fb.tensor(probs * 7), N, replacement=True))
    counts = np.bincount(draws, minlength=4)
    assert counts[1] == 0
    assert stats.chisquare(counts[[0, 2, 3]], N * probs[[0, 2, 3]]).pvalue > 1e-4


def test_multinomial_without_replacement():
    fb.manual_seed(0)
    rows = fb.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, 1.0]])
    s = host(fb.multinomial(rows, 4))
    assert s.shape == (2, 4) and all(sorted(r) == [0, 1, 2, 3] for r in s)
    assert set(s[1, :2]) == {2, 3}  # positive-probability categories come first
    # the first draw follows the probabilities
    firsts = np.bincount([host(fb.multinomial(fb.tensor([1.0, 3.0]), 1))[0] for _ in range(2000)], minlength=2)
    assert abs(firsts[1] / 2000 - 0.75) < 0.04
    assert fb.multinomial(fb.tensor([0.2, 0.8]), 1).dtype == fb.int64


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        fb.multinomial(fb.ones(3), 4)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        fb.multinomial(fb.ones(()), 1)
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        fb.multinomial(fb.tensor([1.0, float("nan")]), 1)
    with pytest.raises(RuntimeError, match="encountering probability entry = infinity or NaN"):
        fb.multinomial(fb.tensor([1.0, float("inf")]), 3, True)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        fb.multinomial(fb.zeros(2, 3), 1)
    with pytest.raises(RuntimeError, match="multinomial only supports floating-point dtypes for input, got: Int"):
        fb.multinomial(fb.ones(3, dtype=fb.int32), 1)


def test_poisson():
    fb.manual_seed(0)
    rates = fb.full((N,), 3.5, dtype=fb.float64)
    v = host(fb.poisson(rates))
    assert np.all(v == np.round(v)) and abs(v.mean() - 3.5) < 0.06 and abs(v.var() - 3.5) < 0.2
    g = fb.Generator().manual_seed(1)
    a = fb.poisson(fb.full((5,), 2.0), g)
    np.testing.assert_array_equal(host(a), host(fb.poisson(fb.full((5,), 2.0), fb.Generator().manual_seed(1))))
    assert host(fb.poisson(fb.zeros(4))).sum() == 0
    with pytest.raises(RuntimeError, match="non-negative"):
        fb.poisson(fb.tensor([-1.0]))


# -- autograd interplay ----------------------------------------------------------------------

def test_which_random_outputs_require_grad():
    # As PyTorch's: bernoulli and poisson stay on the graph (zero derivatives); multinomial's indices do not.
    pytest.importorskip("flambeau.autograd")
    x = fb.full((3,), 0.5, requires_grad=True)
    b = fb.bernoulli(x)
    assert b.requires_grad
    (b.sum() + fb.poisson(x).sum()).backward()
    np.testing.assert_array_equal(host(x.grad), np.zeros(3))
    assert not fb.multinomial(x, 2).requires_grad
    assert not fb.rand(3).requires_grad


def test_in_place_samplers_and_autograd():
    pytest.importorskip("flambeau.autograd")
    w = fb.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.uniform_()
    with fb.no_grad():  # how initialisers fill parameters
        w.normal_()
    assert w.requires_grad and w.grad_fn is None
    for name, args in (("uniform_", ()), ("normal_", ()), ("cauchy_", ()), ("exponential_", ()),
                       ("geometric_", (0.5,)), ("log_normal_", ()), ("random_", (3,)), ("bernoulli_", ())):
        y = w * 2
        getattr(y, name)(*args)
        assert y.requires_grad, name
        w.grad = None
        (y.sum() + w.sum()).backward()
        np.testing.assert_array_equal(host(w.grad), np.ones(3), err_msg=name)


def test_normal_with_tensor_parameters_requires_grad_with_zero_derivatives():
    # As PyTorch's: the output of normal(mean, std) requires grad, and d out / d mean and d out / d std are
    # zero (the draw is not reparameterised; mean + std * randn_like(std) is).
    pytest.importorskip("flambeau.autograd")
    mean = fb.zeros(2, 1, dtype=fb.float64, requires_grad=True)
    std = fb.full((3,), 2.0, dtype=fb.float64, requires_grad=True)
    out = fb.normal(mean, std)
    assert out.requires_grad and out.shape == (2, 3)
    out.sum().backward()
    np.testing.assert_array_equal(host(mean.grad), np.zeros((2, 1)))
    np.testing.assert_array_equal(host(std.grad), np.zeros(3))
    only_mean = fb.normal(mean, 1.0)
    assert only_mean.requires_grad
    assert not fb.normal(mean.detach(), 1.0).requires_grad


def test_random_namespace_and_fork_rng():
    import flambeau.random as fr

    assert fr.manual_seed is fb.manual_seed and fr.default_generator is fb.default_generator
    fr.manual_seed(5)
    expected = host(fb.rand(4))
    fr.manual_seed(5)
    with fr.fork_rng():
        fb.randn(100)
        fb.manual_seed(99)
    np.testing.assert_array_equal(host(fb.rand(4)), expected)
    with fr.fork_rng(enabled=False):
        fb.rand(1)
    with pytest.raises(AttributeError):
        fr.no_such_thing
