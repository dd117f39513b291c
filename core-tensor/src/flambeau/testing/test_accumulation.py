"""Half-precision reductions, scans and products accumulate in float32 and round once.

PyTorch sums float16 and bfloat16 data in float32: 3000 float16 ones sum to 3000, not to 2048
(where a float16 accumulator stops growing: 2048 + 1 rounds back to 2048), and 100000 of them
have a mean of 1, not inf. Every op here is run on lengths past 2048 and checked against numpy
in float64 on the same (half-precision) values, rounded once to the half dtype. The tolerance is
two units in the last place of the half type: a float32 accumulator is well inside it, a half one
is far outside (it loses every addend smaller than half an ulp of the running sum).

Keys (for a backend's ``conformance_xfail``): ``accumulate:OP:DTYPE``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import flambeau as fb
from flambeau.testing._runner import host_array

from _flambeau_testing_plugin import KEY_MARKER, backend_name

HALF = ("float16", "bfloat16")
LENGTHS = (3000, 100000)
#: The half type's unit in the last place at 1 (2**-10 for float16, 2**-7 for bfloat16).
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


@dataclass(frozen=True)
class Accumulation:
    """One op on ``n`` half-precision values: ``run(x)`` with ``x`` the 1-D tensor, ``ref(x)``
    the numpy result with ``x`` a float64 array of the same values; ``values(n, ulp)`` draws them."""

    op: str
    run: Callable[[Any], Any]
    ref: Callable[[np.ndarray], Any]
    values: Callable[[int, float], np.ndarray]
    lengths: tuple[int, ...] = LENGTHS


def _ones(n: int, ulp: float) -> np.ndarray:
    return np.ones(n)


def _tenths(n: int, ulp: float) -> np.ndarray:
    return np.full(n, 0.1)


def _cycle(n: int, ulp: float) -> np.ndarray:
    """0.1, 0.2, 0.3, 0.1...: a spread for the moments."""
    return 0.1 * (1 + np.arange(n) % 3)


def _near_one(n: int, ulp: float) -> np.ndarray:
    """1 + ulp: a product of 3000 of them grows to e**(3000 ulp), each step below a half ulp of it."""
    return np.full(n, 1.0 + ulp)


def _var(x: np.ndarray) -> float:
    return np.var(x, ddof=1)


def _row(x):
    return x.reshape(1, -1)


def _column(x):
    return x.reshape(-1, 1)


def _mm_ref(x: np.ndarray) -> np.ndarray:
    return np.array([[x @ x]])


CASES = [
    Accumulation("sum", lambda x: x.sum(), np.sum, _ones),
    Accumulation("sum", lambda x: x.sum(), np.sum, _tenths),
    # along a dim that is not the innermost: no pairwise summation to hide behind
    Accumulation("sum", lambda x: x.unsqueeze(1).expand(-1, 2).contiguous().sum(0),
                 lambda x: np.full(2, np.sum(x)), _ones),
    Accumulation("nansum", lambda x: x.nansum(), np.sum, _tenths),
    Accumulation("mean", lambda x: x.mean(), np.mean, _ones),
    Accumulation("mean", lambda x: x.mean(), np.mean, _tenths),
    Accumulation("mean", lambda x: x.unsqueeze(1).expand(-1, 2).contiguous().mean(0),
                 lambda x: np.full(2, np.mean(x)), _tenths),
    Accumulation("nanmean", lambda x: x.nanmean(), np.mean, _tenths),
    Accumulation("prod", lambda x: x.prod(), np.prod, _near_one, (3000,)),
    Accumulation("var", lambda x: x.var(), _var, _cycle),
    Accumulation("std", lambda x: x.std(), lambda x: np.sqrt(_var(x)), _cycle),
    Accumulation("var_mean", lambda x: fb.var_mean(x), lambda x: (_var(x), np.mean(x)), _cycle),
    Accumulation("std_mean", lambda x: fb.std_mean(x), lambda x: (np.sqrt(_var(x)), np.mean(x)), _cycle),
    Accumulation("cumsum", lambda x: x.cumsum(0), np.cumsum, _ones),
    Accumulation("cumsum", lambda x: x.cumsum(0), np.cumsum, _tenths),
    Accumulation("cumprod", lambda x: x.cumprod(0), np.cumprod, _near_one, (3000,)),
    Accumulation("logsumexp", lambda x: x.logsumexp(0), lambda x: np.log(np.sum(np.exp(x))), _ones),
    Accumulation("logcumsumexp", lambda x: x.logcumsumexp(0), lambda x: np.log(np.cumsum(np.exp(x))), _ones),
    Accumulation("norm", lambda x: x.norm(), np.linalg.norm, _tenths),
    Accumulation("norm", lambda x: x.norm(p=1), lambda x: np.sum(np.abs(x)), _tenths),
    Accumulation("linalg_vector_norm", lambda x: fb.linalg.vector_norm(x), np.linalg.norm, _ones),
    Accumulation("linalg_vector_norm", lambda x: fb.linalg.vector_norm(x, 3),
                 lambda x: np.sum(np.abs(x) ** 3) ** (1 / 3), _tenths),
    Accumulation("linalg_matrix_norm", lambda x: fb.linalg.matrix_norm(x.reshape(-1, 4)),
                 np.linalg.norm, _tenths),
    Accumulation("linalg_matrix_norm", lambda x: fb.linalg.matrix_norm(x.reshape(-1, 4), 1),
                 lambda x: np.linalg.norm(x.reshape(-1, 4), 1), _tenths),
    Accumulation("dist", lambda x: fb.dist(x, fb.zeros_like(x)), np.linalg.norm, _tenths),
    Accumulation("trace", lambda x: x.unsqueeze(1).expand(-1, x.shape[0]).trace(), np.sum, _ones),
    Accumulation("dot", lambda x: fb.dot(x, x), lambda x: x @ x, _ones),
    Accumulation("vdot", lambda x: fb.vdot(x, x), lambda x: x @ x, _tenths),
    Accumulation("mv", lambda x: fb.mv(_row(x), x), lambda x: np.array([x @ x]), _ones),
    Accumulation("mm", lambda x: fb.mm(_row(x), _column(x)), _mm_ref, _ones),
    Accumulation("matmul", lambda x: x @ x, lambda x: x @ x, _tenths),
    Accumulation("bmm", lambda x: fb.bmm(_row(x)[None], _column(x)[None]), lambda x: _mm_ref(x)[None], _ones),
    Accumulation("addmm", lambda x: fb.addmm(fb.ones_like(x[:1]).reshape(1, 1), _row(x), _column(x)),
                 lambda x: _mm_ref(x) + 1, _ones),
    Accumulation("addmv", lambda x: fb.addmv(fb.ones_like(x[:1]), _row(x), x),
                 lambda x: np.array([x @ x + 1]), _ones),
    Accumulation("addbmm", lambda x: fb.addbmm(fb.zeros_like(x[:1]).reshape(1, 1), _row(x)[None], _column(x)[None]),
                 _mm_ref, _ones),
    Accumulation("baddbmm", lambda x: fb.baddbmm(fb.zeros_like(x[:1]).reshape(1, 1, 1), _row(x)[None],
                                                 _column(x)[None]), lambda x: _mm_ref(x)[None], _tenths),
    Accumulation("einsum", lambda x: fb.einsum("i,i->", x, x), lambda x: x @ x, _ones),
    Accumulation("tensordot", lambda x: fb.tensordot(x, x, 1), lambda x: x @ x, _ones),
]


def _params(config: pytest.Config) -> list:
    if backend_name(config) is None:
        return [pytest.param(None, None, id="no-backend", marks=pytest.mark.flambeau_conformance("none"))]
    mark = getattr(pytest.mark, KEY_MARKER)
    return [pytest.param(case, dtype, id=f"{case.op}-{dtype}-{index}", marks=mark(f"accumulate:{case.op}:{dtype}"))
            for index, case in enumerate(CASES) for dtype in HALF]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "accumulation" in metafunc.fixturenames:
        metafunc.parametrize("accumulation,half", _params(metafunc.config))


def _rounded(ref: Any, np_dtype: np.dtype) -> np.ndarray:
    """The float64 reference rounded once to the half type, and back to float64 to compare."""
    with np.errstate(over="ignore"):  # 100000 in float16 is inf
        return np.asarray(ref, np.float64).astype(np_dtype).astype(np.float64)


def _close(got: np.ndarray, want: np.ndarray, ulp: float) -> bool:
    # two half ulps of the expected magnitude, relative (inf and NaN where the reference has them)
    return bool(np.allclose(got, want, rtol=2 * ulp, atol=0, equal_nan=True))


def test_half_accumulates_in_float32(accumulation, half, flambeau_backend, flambeau_device,
                                     flambeau_computes_data) -> None:
    """The op on 3000 and 100000 half-precision values is numpy's float64 result rounded once."""
    dtype = getattr(fb, half)
    if dtype not in flambeau_backend.dtypes:
        pytest.skip(f"backend {flambeau_backend.name!r} does not support {half}")
    failures = []
    for n in accumulation.lengths:
        host = accumulation.values(n, ULP[half]).astype(dtype.numpy_dtype)
        x = fb.tensor(host, device=flambeau_device)
        got = accumulation.run(x)
        gots = got if isinstance(got, tuple) else (got,)
        for g in gots:
            assert g.dtype is dtype and g.device == flambeau_device, f"{accumulation.op}: {g.dtype} on {g.device}"
        if not flambeau_computes_data:
            continue
        ref = accumulation.ref(host.astype(np.float64))
        wants = ref if isinstance(ref, tuple) else (ref,)
        for g, w in zip(gots, wants):
            got_values = host_array(g).astype(np.float64)  # (no .cpu(): the CPU backend may be absent)
            want = _rounded(w, dtype.numpy_dtype)
            if got_values.shape != want.shape or not _close(got_values, want, ULP[half]):
                worst = np.max(np.abs(got_values - want)) if got_values.shape == want.shape else math.nan
                failures.append(f"  n={n} values {host[0]}...: got {got_values.ravel()[-3:]}, want "
                                f"{want.ravel()[-3:]} (largest difference {worst})")
    if failures:
        pytest.fail(f"{accumulation.op} in {half}:\n" + "\n".join(failures), pytrace=False)
