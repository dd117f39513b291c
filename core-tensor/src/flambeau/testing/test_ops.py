"""Every declared op against its numpy reference, one test per (op, dtype), and its error cases."""
from __future__ import annotations

from typing import Any

import pytest

from _flambeau_testing_plugin import KEY_MARKER, backend_name

MAX_REPORTED = 6


def _placeholder(*names: str) -> list:
    return [pytest.param(*([None] * len(names)), id="no-backend", marks=pytest.mark.flambeau_conformance("none"))]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "op_dtype" in metafunc.fixturenames:
        metafunc.parametrize("op_dtype", _value_params(metafunc.config))
    if "error_op" in metafunc.fixturenames:
        metafunc.parametrize("error_op", _error_params(metafunc.config))


def _declared_with_cases() -> list[tuple[str, Any]]:
    from flambeau.ops import declarations
    from flambeau.testing._registry import all_cases

    cases = all_cases()
    return [(op, cases[op]) for op in sorted(declarations()) if op in cases]


def _value_params(config: pytest.Config) -> list:
    if backend_name(config) is None:
        return _placeholder("op_dtype")
    mark = getattr(pytest.mark, KEY_MARKER)
    return [pytest.param((op, dtype), id=f"{op}-{dtype}", marks=mark(f"{op}:{dtype}"))
            for op, case in _declared_with_cases() for dtype in case.dtypes]


def _error_params(config: pytest.Config) -> list:
    if backend_name(config) is None:
        return _placeholder("error_op")
    mark = getattr(pytest.mark, KEY_MARKER)
    return [pytest.param(op, id=op, marks=mark(f"errors:{op}")) for op, _ in _declared_with_cases()]


def _report(what: str, failures: list[str]) -> None:
    if failures:
        shown = failures[:MAX_REPORTED]
        more = f"\n... and {len(failures) - MAX_REPORTED} more" if len(failures) > MAX_REPORTED else ""
        pytest.fail(f"{what}: {len(failures)} failing:\n" + "\n".join(shown) + more, pytrace=False)


def test_op(op_dtype, flambeau_backend, flambeau_device, flambeau_computes_data) -> None:
    """The op's results (functional, ``out=``, in place) match numpy for every sample of this dtype."""
    from flambeau.testing._registry import all_cases
    from flambeau.testing._runner import fb_dtype, run_sample

    op, dtype = op_dtype
    if fb_dtype(dtype) not in flambeau_backend.dtypes:
        pytest.skip(f"backend {flambeau_backend.name!r} does not support {dtype}")
    case = all_cases()[op]
    samples = list(case.samples(dtype))
    assert samples, f"the case for {op} has no sample for {dtype}"
    failures = []
    for index, sample in enumerate(samples):
        try:
            run_sample(case, dtype, index, sample, flambeau_device, flambeau_computes_data)
        except Exception as exc:  # noqa: BLE001 - every sample is tried; all failures are reported
            failures.append(f"  {op}{sample.describe()}: {type(exc).__name__}: {exc}")
    _report(f"{op} on {flambeau_device} for {dtype}", failures)


def test_op_errors(error_op, flambeau_device, flambeau_computes_data) -> None:
    """Bad arguments raise PyTorch's exception type with its message."""
    from flambeau.testing._registry import all_cases
    from flambeau.testing._runner import generic_errors, run_error

    case = all_cases()[error_op]
    failures = []
    for index, error in enumerate([*case.errors(), *generic_errors(error_op, flambeau_device)]):
        if error.data_dependent and not flambeau_computes_data:
            continue
        try:
            run_error(error_op, error, flambeau_device, index)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"  {error.describe()}: {exc}")
    _report(f"errors of {error_op} on {flambeau_device}", failures)
