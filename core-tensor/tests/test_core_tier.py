"""The core tier, the decompositions onto it, and how `coverage`, `manifest` and `info` report them."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import flambeau as fb
from flambeau.ops import coverage, declarations, manifest, runnable_ops
from flambeau.ops._dispatch import _without_kernel
from flambeau.ops._registry import OPS


def test_the_core_tier_is_small_and_marked_in_the_declarations():
    core = [name for name, d in declarations().items() if d.tier == "core"]
    assert 40 <= len(core) <= 60
    for name in core:
        assert declarations()[name].composite is None, f"{name}: a core op has nothing to decompose onto"
    for family in ("add", "eq", "where", "sum", "amax", "mm", "view", "as_strided", "copy", "fill", "to_dtype",
                   "gather", "scatter", "uniform", "random", "arange", "nonzero"):
        assert family in core


def test_manifest_by_tier():
    m = manifest("core")
    assert m["core_api_version"] == fb.plugins.CORE_API_VERSION
    assert set(m["ops"]) == {n for n, d in OPS.items() if d.tier == "core"}
    assert m["ops"]["add"]["signature"] == "(input: Tensor, other: TensorOrScalar, *, alpha=1)"
    everything = manifest()
    assert set(everything["ops"]) == set(OPS)
    assert everything["ops"]["logsumexp"]["tier"] == "decomposed"
    assert everything["ops"]["reshape"]["tier"] == "decomposed"
    assert sum(everything["counts"].values()) == len(OPS)
    with pytest.raises(ValueError, match="tier must be one of"):
        manifest("primitive")


def test_manifest_command_line_prints_the_core_tier():
    out = subprocess.run([sys.executable, "-m", "flambeau", "manifest", "--tier", "core"], capture_output=True,
                         text=True, check=True).stdout
    data = json.loads(out)
    assert data["tier"] == "core" and "add" in data["ops"] and "logsumexp" not in data["ops"]


def test_decompositions_name_only_declared_ops():
    for name, d in OPS.items():
        for used in d.uses or ():
            assert used in OPS, f"{name}'s decomposition uses {used!r}, which no package declares"


def test_every_decomposition_reaches_the_core_tier():
    """With only the core tier's kernels, every decomposed op runs (its `uses`, recursively)."""
    from flambeau.ops import _resolve_all

    class CoreOnly(dict):
        pass

    table = CoreOnly({n: None for n, d in OPS.items() if d.tier == "core"})
    cov = _resolve_all(table)
    for name, d in OPS.items():
        if d.uses is not None:  # the decompositions written for the core tier
            # host when it computes on the host, or picks from an op that does (median from sort)
            via_host = d.host or any(cov.get(u) == "host" for u in d.uses)
            assert cov[name] == ("host" if via_host else "decomposition"), name
        elif d.tier == "core":
            assert cov[name] == "kernel"
    assert fb.ops.tiers()["vander"] == "host"  # an older composite on cumprod, a host decomposition
    assert fb.ops.tiers()["matrix_exp"] == "host"  # it solves with linalg_solve, a host decomposition


def test_coverage_follows_the_uses_of_a_decomposition():
    from flambeau.ops import _resolve_all

    table = {n: None for n, d in OPS.items() if d.tier == "core"}
    del table["log"]
    cov = _resolve_all(table)
    assert cov["log"] == "missing"
    assert cov["log2"] == "missing"  # log2 = log(x) / ln 2
    assert cov["logsumexp"] == "missing"
    assert cov["sigmoid"] == "decomposition"  # exp, add, div
    assert cov["reshape"] == "decomposition"  # its ops read from its code: view, clone...


def test_the_ops_of_an_older_composite_are_read_from_its_code():
    from flambeau.ops import _resolve_all
    from flambeau.ops._uses import inferred_uses

    assert "cumprod" in inferred_uses(OPS["vander"].composite, OPS)  # vander: a cumulative product
    table = {n: None for n, d in OPS.items() if d.tier == "core"}
    assert _resolve_all(table)["vander"] == "host"  # through cumprod's host decomposition
    table["cumprod"] = None
    assert _resolve_all(table)["vander"] == "decomposition"
    del table["mul"]
    assert _resolve_all(table)["vander"] == "missing"


def test_cpu_coverage_counts_and_runnable_ops():
    cov = coverage("cpu")
    assert set(cov.values()) <= {"kernel", "decomposition", "host", "missing"}
    assert cov["add"] == "kernel" and cov["reshape"] == "decomposition"
    assert runnable_ops("cpu") == {n for n, how in cov.items() if how != "missing"}


def test_info_shows_native_and_decomposed_counts():
    from flambeau.plugins._info import report

    text = report()
    assert "native," in text and "by decomposition" in text and "by host decomposition" in text
    assert "core tier:" in text


# -- the decompositions against the CPU's kernels ---------------------------------------

def _decomposed(name, *args):
    op = OPS[name]
    full = args + tuple(p.default for p in op.parameters[len(args):])
    return _without_kernel(op, fb.device("cpu"), full, None, False)


def _close(a, b, rtol=1e-6, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64),
                               b.astype(np.complex128) if b.dtype.kind == "c" else b.astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


UNARY = ["exp2", "expm1", "log1p", "log2", "log10", "sigmoid", "rsqrt", "reciprocal", "square", "tan", "sinh",
         "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "deg2rad", "rad2deg", "ceil", "trunc",
         "frac", "sign", "sgn", "signbit", "angle", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal",
         "logical_not"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_unary_decompositions_match_the_kernels(name, dtype):
    values = np.array([-3.5, -1.0, -0.5, -0.0, 0.0, 1e-12, 0.25, 0.9, 1.0, 2.0, 30.0, np.inf, -np.inf, np.nan])
    if dtype == "int64":
        values = np.array([-3, -1, 0, 1, 2, 30])
    if dtype == "complex128":
        values = values[np.isfinite(values)] * (1 + 0.5j)
    x = fb.from_numpy(values.astype(dtype))
    try:
        expected = fb.ops.function(name)(x)
    except (RuntimeError, NotImplementedError, TypeError) as exc:  # the dtype is refused: by the meta, both ways
        with pytest.raises(type(exc)):
            _decomposed(name, x)
        return
    precise = expected.dtype in (fb.float64, fb.complex128, fb.int64, fb.bool)
    _close(_decomposed(name, x).numpy(), expected.numpy(), rtol=1e-12 if precise else 2e-6)


@pytest.mark.parametrize("name, args", [
    ("maximum", ([1.0, np.nan, 3.0], [2.0, 1.0, np.nan])), ("minimum", ([1.0, np.nan, 3.0], [2.0, 1.0, np.nan])),
    ("fmax", ([1.0, np.nan, 3.0], [2.0, 1.0, np.nan])), ("fmin", ([1.0, np.nan, 3.0], [2.0, 1.0, np.nan])),
    ("remainder", ([5.5, -5.5, 7.0], [2.0, 2.0, -3.0])), ("fmod", ([5.5, -5.5, 7.0], [2.0, 2.0, -3.0])),
    ("hypot", ([3.0, np.inf, 0.0], [4.0, np.nan, 0.0])), ("logaddexp", ([1.0, -np.inf, 1e3], [2.0, -np.inf, 1e3])),
    ("logaddexp2", ([1.0, -np.inf, 5.0], [2.0, -np.inf, -5.0])), ("xlogy", ([0.0, 2.0, 0.0], [0.0, 3.0, np.nan])),
    ("copysign", ([1.0, -2.0, 3.0], [-0.0, 1.0, -1.0])), ("heaviside", ([-1.0, 0.0, 2.0], [0.5, 0.5, 0.5])),
    ("logical_and", ([0.0, 1.0, 2.0], [1.0, 0.0, 3.0])), ("logical_xor", ([0.0, 1.0, 2.0], [1.0, 0.0, 3.0])),
])
def test_binary_decompositions_match_the_kernels(name, args):
    a, b = (fb.tensor(v, dtype=fb.float64) for v in args)
    _close(_decomposed(name, a, b).numpy(), fb.ops.function(name)(a, b).numpy(), rtol=1e-12)


@pytest.mark.parametrize("name, args, kwargs", [
    ("mean", ((1,), True), {}), ("var", (1,), {}), ("std", (0,), {}), ("logsumexp", ((0, 1),), {}),
    ("nansum", (1,), {}), ("nanmean", (1,), {}), ("all", (1,), {}), ("any", (0,), {}), ("count_nonzero", (1,), {}),
    ("linalg_vector_norm", (3.0, 1), {}), ("aminmax", (), {}), ("max_dim", (1,), {}), ("min_dim", (0, True), {}),
])
def test_reduction_decompositions_match_the_kernels(name, args, kwargs):
    x = fb.tensor([[1.0, -2.0, 0.0, 4.5], [3.0, np.nan, 1.0, -1.0], [0.5, 0.25, 8.0, 2.0]], dtype=fb.float64)
    if name not in ("nansum", "nanmean"):
        x = fb.where(x.isnan(), 1.5, x)
    if name == "aminmax":
        got, expected = _decomposed(name, x), fb.aminmax(x)
    else:
        got, expected = _decomposed(name, x, *args), fb.ops.function(name)(x, *args)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected if isinstance(expected, tuple) else (expected,)):
        _close(g.numpy(), e.numpy(), rtol=1e-12)


def test_blas_and_index_decompositions_match_the_kernels():
    fb.manual_seed(0)
    a, b, c = fb.randn(4, 3, dtype=fb.float64), fb.randn(3, 5, dtype=fb.float64), fb.randn(4, 5, dtype=fb.float64)
    _close(_decomposed("addmm", c, a, b, 0.5, 2.0).numpy(), fb.addmm(c, a, b, beta=0.5, alpha=2.0).numpy(), 1e-12)
    nan_input = fb.full((4, 5), float("nan"), dtype=fb.float64)
    assert not _decomposed("addmm", nan_input, a, b, 0, 1).isnan().any()  # beta=0 ignores the input
    batch = fb.randn(2, 1, 4, 3, dtype=fb.float64)
    _close(_decomposed("matmul", batch, b).numpy(), fb.matmul(batch, b).numpy(), 1e-12)
    v = fb.randn(3, dtype=fb.float64)
    _close(_decomposed("matmul", v, b).numpy(), fb.matmul(v, b).numpy(), 1e-12)
    idx = fb.tensor([2, 0, 2])
    _close(_decomposed("index_select", a, 0, idx).numpy(), fb.index_select(a, 0, idx).numpy())
    where = fb.tensor([[-1, 0], [5, 11]])
    _close(_decomposed("take", a, where).numpy(), fb.take(a, where).numpy())
    _close(_decomposed("flip", a, (0, 1)).numpy(), fb.flip(a, (0, 1)).numpy())
    _close(_decomposed("roll", a, (1, -2), (0, 1)).numpy(), fb.roll(a, (1, -2), (0, 1)).numpy())
    _close(_decomposed("repeat", v, (2, 3)).numpy(), v.repeat(2, 3).numpy())
    _close(_decomposed("tril", a, -1).numpy(), fb.tril(a, -1).numpy())
    _close(_decomposed("triu", a, 1).numpy(), fb.triu(a, 1).numpy())
    src = fb.ones(2, 3, dtype=fb.float64)
    _close(_decomposed("index_add", a, 0, fb.tensor([1, 1]), src, 2).numpy(),
           fb.index_add(a, 0, fb.tensor([1, 1]), src, alpha=2).numpy())
    mask = a > 0
    _close(_decomposed("masked_select", a, mask).numpy(), fb.masked_select(a, mask).numpy())
    _close(_decomposed("masked_scatter", a, mask, fb.arange(12.0, dtype=fb.float64)).numpy(),
           a.masked_scatter(mask, fb.arange(12.0, dtype=fb.float64)).numpy())


def test_factory_decompositions_match_the_kernels():
    _close(_decomposed("eye", 3, 4).numpy(), fb.eye(3, 4).numpy())
    _close(_decomposed("linspace", -1.0, 2.0, 7).numpy(), fb.linspace(-1.0, 2.0, 7).numpy())
    _close(_decomposed("logspace", 0.0, 2.0, 5).numpy(), fb.logspace(0.0, 2.0, 5).numpy(), rtol=1e-6)
    _close(_decomposed("tril_indices", 4, 3, 0).numpy(), fb.tril_indices(4, 3).numpy())
    _close(_decomposed("triu_indices", 3, 5, 1).numpy(), fb.triu_indices(3, 5, 1).numpy())
    _close(_decomposed("fft_fftfreq", 7, 0.5).numpy(), fb.fft.fftfreq(7, 0.5).numpy())


def test_random_decompositions_have_their_distributions():
    g = fb.Generator().manual_seed(3)
    z = _decomposed("randn", (200_000,), g)
    assert z.dtype == fb.float32
    assert abs(float(z.mean())) < 0.01 and abs(float(z.std()) - 1) < 0.01
    u = _decomposed("rand", (100_000,), g)
    assert 0 <= float(u.min()) and float(u.max()) < 1 and abs(float(u.mean()) - 0.5) < 0.01
    e = _decomposed("exponential", fb.empty(100_000), 2.0, g)
    assert float(e.min()) >= 0 and abs(float(e.mean()) - 0.5) < 0.01
    b = _decomposed("bernoulli", fb.full((100_000,), 0.3), None, g)
    assert abs(float(b.mean()) - 0.3) < 0.01
    r = _decomposed("randint", 3, 7, (10_000,), g)
    assert r.dtype == fb.int64 and set(r.unique().tolist()) == {3, 4, 5, 6}


def test_host_decompositions_match_the_kernels_and_are_counted_apart():
    x = fb.tensor([[3.0, np.nan, 1.0, 3.0], [-1.0, 2.0, 2.0, -5.0]], dtype=fb.float64)
    for descending in (False, True):
        got, expected = _decomposed("sort", x, 1, descending), fb.sort(x, 1, descending, stable=True)
        _close(got[0].numpy(), expected[0].numpy())
        _close(got[1].numpy(), expected[1].numpy())
        _close(_decomposed("argsort", x, 0, descending).numpy(), fb.argsort(x, 0, descending, stable=True).numpy())
    clean = fb.where(x.isnan(), 0.5, x)
    for g, e in zip(_decomposed("topk", clean, 2), fb.topk(clean, 2)):
        _close(g.numpy(), e.numpy())
    _close(_decomposed("cumprod", clean, 1).numpy(), fb.cumprod(clean, 1).numpy())
    perm = _decomposed("randperm", 50)
    assert perm.dtype == fb.int64 and sorted(perm.tolist()) == list(range(50))
    assert fb.ops.tiers()["sort"] == "host" and fb.ops.tiers()["randperm"] == "host"
    assert fb.ops.manifest()["counts"]["host"] >= 6
