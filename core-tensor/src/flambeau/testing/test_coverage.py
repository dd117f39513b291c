"""The kit covers every declared op, so that a new op cannot go untested by accident.

One test per distribution that declares ops, so that a failure names who owes the cases.
"""
from __future__ import annotations

import pytest

from _flambeau_testing_plugin import KEY_MARKER, backend_name


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "provider" not in metafunc.fixturenames:
        return
    mark = getattr(pytest.mark, KEY_MARKER)
    if backend_name(metafunc.config) is None:
        metafunc.parametrize("provider", [pytest.param(None, id="no-backend", marks=mark("coverage"))])
        return
    from flambeau.ops import declarations

    providers = sorted({d.provider for d in declarations().values()})
    metafunc.parametrize("provider", [pytest.param(p, id=p, marks=mark(f"coverage:{p}")) for p in providers])


def test_every_declared_op_has_a_case(provider, flambeau_backend) -> None:
    from flambeau.ops import declarations
    from flambeau.testing._registry import all_cases, load_failures

    cases = all_cases()
    missing = sorted(op for op, d in declarations().items() if d.provider == provider and op not in cases)
    assert not load_failures, f"case contributions failed to load: {load_failures}"
    assert not missing, (
        f"ops declared by {provider} with no conformance case: {', '.join(missing)}. Add them to "
        "flambeau.testing.cases (core-tensor's ops), or contribute OpCase objects through the "
        "'flambeau.testing' entry-point group (another package's ops)."
    )


@pytest.mark.flambeau_conformance("coverage:samples")
def test_every_case_has_samples(flambeau_backend) -> None:
    from flambeau.ops import declarations
    from flambeau.testing._registry import all_cases

    declared = declarations()
    empty = [f"{op}:{dtype}" for op, case in all_cases().items() if op in declared
             for dtype in case.dtypes if not list(case.samples(dtype))]
    assert not empty, f"cases without samples: {empty}"
