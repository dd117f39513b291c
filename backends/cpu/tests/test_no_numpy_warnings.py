"""No numpy RuntimeWarning reaches the user: PyTorch returns inf and NaN without a word.

Every op whose required arguments are tensors (unary, binary, ternary, tensor lists: the
pointwise ops, the reductions over all elements, the matrix products and norms) runs on inputs
holding inf, -inf, NaN, 0, -0, 1e38 and tiny values, in each floating dtype, at a small size and
at one past the C++ kernels' threshold, with every warning recorded. A few named cases from
bug reports run under ``warnings.simplefilter("error")`` as a user's test suite would. numpy's
own error state is left as the user had it.
"""
from __future__ import annotations

import threading
import warnings

import flambeau as fb
import numpy as np
import pytest
from flambeau.ops._decl import OPTIONAL_TENSOR, TENSOR, TENSOR_LIST, TENSOR_OR_SCALAR, tensor_kind
from flambeau.ops._registry import FUNCTIONS, OPS

SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e38, -1e38, 1e-45, 0.5, 2.0]
DTYPES = [fb.float32, fb.float64, fb.float16, fb.bfloat16, fb.complex64]
GRAIN = 32768  # native.GRAIN: the C++ kernels take over from here
# Kernels outside this change that still warn (see test_still_warning): skipped by the sweep.
def special(dtype: fb.dtype, n: int) -> fb.Tensor:
    with warnings.catch_warnings():  # float16 cannot hold 1e38: inf is what we want
        warnings.simplefilter("ignore")
        return fb.tensor(np.resize(np.array(SPECIAL), n), dtype=dtype)


def _tensor_only_ops() -> list[str]:
    """Ops whose required parameters are all tensors (the rest keep their defaults)."""
    names = []
    for name, decl in sorted(OPS.items()):
        if decl.kind != "compute" or name not in FUNCTIONS:
            continue
        required = [p for p in decl.parameters if p.default is p.empty]
        if required and all(tensor_kind(p) in (TENSOR, TENSOR_OR_SCALAR, OPTIONAL_TENSOR, TENSOR_LIST)
                            for p in required):
            names.append(name)
    return names


def _call(name: str, x: fb.Tensor) -> None:
    """``name`` on ``x`` (and its reverse, for further operands); errors for unsupported dtypes are fine."""
    decl = OPS[name]
    args = []
    for i, p in enumerate(p for p in decl.parameters if p.default is p.empty):
        operand = x if i == 0 else x.flip(-1)
        args.append([x, operand] if tensor_kind(p) == TENSOR_LIST else operand)
    try:
        FUNCTIONS[name](*args)
    except RuntimeWarning:
        raise
    except Exception:  # dtype or shape refused: not what this test is about
        pass


def _warnings_of(f) -> list[str]:
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        f()
    return [f"{w.category.__name__}: {w.message} ({w.filename.rsplit('/', 1)[-1]}:{w.lineno})"
            for w in log if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("shape", [(12,), (3, 4), (3, 3)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_ops_on_inf_nan_and_zero_do_not_warn(dtype, shape):
    x = special(dtype, int(np.prod(shape))).reshape(shape)
    found = {}
    for name in _tensor_only_ops():
        got = _warnings_of(lambda name=name: _call(name, x))
        if got:
            found[name] = got[0]
    assert not found, found


@pytest.mark.parametrize("case", ["cumsum", "cumprod", "normal"])
def test_scans_and_normal_on_non_finite_input_do_not_warn(case):
    x = fb.tensor([[float("inf"), 2.0], [float("-inf"), 0.0]])  # down dim 0: inf - inf, inf * 0
    f = {"cumsum": lambda: fb.cumsum(x, 0), "cumprod": lambda: fb.cumprod(fb.tensor([[float("inf")], [0.0]]), 0),
         "normal": lambda: fb.normal(x.to(fb.bfloat16), fb.tensor([float("nan")], dtype=fb.bfloat16))}[case]

    def run() -> None:
        try:
            f()
        except RuntimeError:  # normal refuses a NaN std (after a check that used to warn)
            pass
    assert not _warnings_of(run)


def test_vander_and_float16_creation_do_not_warn():
    # flambeau.tensor casts 1e30 to float16 inf silently (it used to warn, as numpy's cast does)
    assert not _warnings_of(lambda: fb.vander(fb.tensor([1e30, float("inf")], dtype=fb.float16), 4))


@pytest.mark.parametrize("n", [1, 12, GRAIN + 4])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_arithmetic_comparisons_reductions_and_casts_do_not_warn(dtype, n):
    a = special(dtype, n)
    b = a.flip(0)
    calls = [
        lambda: a + b, lambda: a - b, lambda: a * b, lambda: a / b, lambda: a // b, lambda: a % b,
        lambda: a ** b, lambda: 2 ** a, lambda: 1 / a, lambda: a - float("inf"), lambda: a * 0, lambda: a / 0,
        lambda: a.clone().add_(b), lambda: a.clone().mul_(b), lambda: fb.add(a, b, alpha=2),
        lambda: fb.add(a, b, out=fb.empty_like(a)), lambda: fb.atan2(a, b), lambda: fb.atan2(a, 1e300),
        lambda: a == 1e300, lambda: a < b, lambda: a >= b, lambda: fb.maximum(a, b), lambda: fb.fmax(a, b),
        lambda: a.sum(), lambda: a.mean(), lambda: a.prod(), lambda: a.amax(), lambda: a.amin(),
        lambda: a.var(), lambda: a.std(), lambda: fb.logsumexp(a, 0), lambda: fb.nansum(a), lambda: fb.nanmean(a),
        lambda: a.to(fb.int32), lambda: a.to(fb.float16), lambda: a.round(decimals=3), lambda: a.clamp(-1, 1),
        lambda: fb.float_power(a, b), lambda: fb.float_power(a, -2), lambda: fb.ldexp(a, b), lambda: fb.sinc(a),
        lambda: fb.dist(a, b), lambda: fb.dist(a, b, 0.5), lambda: fb.norm(a), lambda: fb.norm(a, 3),
        lambda: fb.linalg.vector_norm(a, float("inf")), lambda: fb.linalg.vector_norm(a, -1),
        lambda: fb.xlogy(a, b), lambda: fb.hypot(a, b), lambda: fb.logaddexp(a, b),
    ]
    found = {}
    for i, f in enumerate(calls):
        def run(f=f):
            try:
                f()
            except RuntimeWarning:
                raise
            except Exception:  # an op refusing a dtype (complex remainder...) is not the point
                pass
        got = _warnings_of(run)
        if got:
            found[i] = got[0]
    assert not found, found


def test_the_reported_cases_under_warnings_as_errors():
    inf, nan = float("inf"), float("nan")
    m = fb.tensor([[inf, 0.0], [1.0, nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan((fb.tensor([inf]) + fb.tensor([-inf])).item())  # the 1-element fast path
        assert np.isnan((fb.tensor([inf]) - fb.tensor([inf])).item())
        assert np.isnan((fb.tensor([inf]) * fb.tensor([0.0])).item())
        assert np.isnan((m @ m)[0, 1].item())  # inf * 0 + 0 * nan
        assert np.isnan(fb.mm(m, m)[0, 1].item())
        assert np.isnan(fb.matmul(m[0], m[:, 1]).item())
        assert fb.float_power(fb.tensor([0.0]), -1).item() == inf
        assert fb.ldexp(fb.tensor([1e308], dtype=fb.float64), fb.tensor([10])).item() == inf
        assert fb.dist(fb.tensor([inf]), fb.tensor([inf])).isnan().item()
        assert fb.norm(fb.tensor([1e38, 1e38])).item() == inf  # squares overflow float32, as in PyTorch
        assert fb.nansum(fb.tensor([inf, -inf, nan])).isnan().item()
        assert fb.sinc(fb.tensor([0.0, inf])).tolist()[0] == 1.0
        assert fb.addmm(m, m, m)[0, 1].isnan().item()


def test_numpy_state_of_the_user_is_untouched():
    before = np.geterr()
    fb.tensor([float("inf")]) - fb.tensor([float("inf")])
    fb.tensor([1e38]) * fb.tensor([10.0])
    assert np.geterr() == before
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        np.log(np.zeros(1))  # the user's own numpy code still warns as numpy does
    assert any("divide by zero" in str(w.message) for w in log)
    with np.errstate(all="raise"):  # and a user's errstate does not leak into flambeau's kernels
        assert np.isnan((fb.tensor([float("inf")]) - fb.tensor([float("inf")])).item())
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))


def test_the_quiet_context_busy_elsewhere():
    # The small binary path runs numpy in one shared context; a call made while that context is
    # already entered (here: from inside it; in real use: from another thread while numpy has let
    # go of the GIL) takes the slower quiet path and gives the same result.
    from flambeau_cpu.kernels._quiet import run_quiet

    a, b = fb.tensor([float("inf"), 1.0]), fb.tensor([float("inf"), 2.0])
    m = fb.tensor([[float("inf"), 0.0], [1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = run_quiet(lambda: (a - b, fb.tensor([1, 2], dtype=fb.uint8) + 1000, a < b, m @ m, fb.float_power(b, -1)))
    assert np.isnan(r[0][0].item()) and r[0][1].item() == -1.0
    assert r[1].tolist() == [233, 234]
    assert r[2].tolist() == [False, True]
    assert np.isnan(r[3][0, 1].item())
    assert r[4].tolist() == [0.0, 0.5]


def test_a_kernel_error_inside_the_quiet_context_is_the_kernel_s():
    # PyTorch's errors are RuntimeErrors too: they must not be taken for a busy context.
    from flambeau_cpu.kernels._quiet import run_quiet

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fb.tensor([1]) // 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_quiet(lambda: fb.tensor([1]) // 0)


def test_threads_share_the_small_path():
    n = 20000  # below GRAIN, long enough for numpy to let go of the GIL inside its loop
    a = fb.tensor(np.full(n, np.inf, dtype=np.float32))
    m = fb.tensor(np.where(np.eye(64) > 0, np.inf, 0.0))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                for _ in range(200):
                    r = a - a
                    assert np.isnan(r[0].item())
                    assert np.isnan((m @ m)[0, 1].item())  # a quiet kernel: BLAS lets go of the GIL
                    assert fb.float_power(a[:4], -1).tolist() == [0.0] * 4
        except BaseException as e:  # reported below: pytest does not see a thread's exception
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]


def _outcome(name: str, x: fb.Tensor):
    """What ``name`` on ``x`` gives: its results as host arrays, or the type of its error."""
    decl = OPS[name]
    args = []
    for i, p in enumerate(p for p in decl.parameters if p.default is p.empty):
        operand = x if i == 0 else x.flip(-1)
        args.append([x, operand] if tensor_kind(p) == TENSOR_LIST else operand)
    try:
        result = FUNCTIONS[name](*args)
    except RuntimeWarning:
        raise
    except Exception as e:  # dtype or shape refused: it must be refused the same way in both modes
        return type(e).__name__
    results = result if isinstance(result, (tuple, list)) else (result,)
    return [r.float().numpy() if r.dtype in (fb.float16, fb.bfloat16) else r.numpy()
            for r in results if isinstance(r, fb.Tensor)]


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
                                    for x, y in zip(a, b))


# The accumulating ops and the C++ elementwise paths, also run past the C++ kernels' grain (the
# sweep above stays small: some tensor-only ops grow quadratically, kron, cdist, outer...).
LARGE_SWEEP = ["sum", "mean", "prod", "nansum", "nanmean", "var", "std", "norm", "logsumexp", "cumsum", "cumprod",
               "logcumsumexp", "dot", "vdot", "matmul", "add", "sub", "mul", "div", "exp", "log", "sqrt", "sign", "sgn",
               "floor_divide", "remainder", "fmod", "float_power", "ldexp", "sinc", "dist", "maximum", "minimum"]


@pytest.mark.parametrize("dtype", [fb.float32, fb.float16, fb.bfloat16], ids=str)
@pytest.mark.parametrize("n", [12, GRAIN + 4])
def test_sweep_under_warnings_as_errors(dtype, n):
    """The sweep as a user's test suite runs it, warnings as errors: nothing raises a RuntimeWarning,
    and no kernel takes another path (a warning turned error and caught inside) to another result."""
    x = special(dtype, n)
    names = _tensor_only_ops() if n < GRAIN else [m for m in LARGE_SWEEP if m in OPS]
    found = {}
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fb.manual_seed(0)  # the random ops draw the same values in both runs
            quiet = _outcome(name, x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's own UserWarnings (cross's default dim) stay
            warnings.simplefilter("error", RuntimeWarning)
            fb.manual_seed(0)
            try:
                strict = _outcome(name, x)
            except RuntimeWarning as w:
                found[name] = f"RuntimeWarning: {w}"
                continue
        if not _same(quiet, strict):
            found[name] = f"{quiet!r:.80} vs {strict!r:.80}"
    assert not found, found
