"""The pytest plugin of the conformance kit (entry point ``pytest11: flambeau_testing``).

It adds ``--flambeau-backend NAME`` and ``--flambeau-meta-only``, the fixtures the kit's tests
use, and marks the tests a backend lists in ``conformance_xfail`` as strict expected failures.
It imports nothing of flambeau's until a kit test runs: it loads in every pytest run of an
environment where flambeau-core-tensor is installed, which is why it is a top-level module
(a module inside the ``flambeau`` package would import the whole framework first).
"""
from __future__ import annotations

import fnmatch
import os
from typing import Any

import pytest

KEY_MARKER = "flambeau_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flambeau", "flambeau backend conformance kit")
    group.addoption("--flambeau-backend", action="store", default=None, metavar="NAME",
                    help="run flambeau.testing's conformance kit against the backend NAME (cpu, cuda, meta...)")
    group.addoption("--flambeau-only-implemented", action="store_true", default=False,
                    help="run only the ops the backend runs: those it has kernels for and every op that "
                         "decomposes onto them (flambeau.ops.coverage); the others are deselected")
    group.addoption("--flambeau-meta-only", action="store_true", default=False,
                    help="check only result shapes, dtypes, devices and errors, not values "
                         "(automatic for a backend whose computes_data is False)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{KEY_MARKER}(key): a flambeau conformance test, named by its xfail key")
    if backend_name(config) is not None:
        # The kit always checks kernel results against the ops' promises (flambeau.ops._checks),
        # in backends loaded from here on: set before the backend under test builds its table.
        os.environ.setdefault("FLAMBEAU_CHECK_KERNELS", "1")


def backend_name(config: pytest.Config) -> str | None:
    return config.getoption("flambeau_backend", None)


def key_matches(key: str, pattern: str) -> bool:
    """Whether an xfail pattern covers a test key.

    Keys are ``OP:DTYPE`` (an op's values for one dtype), ``errors:OP`` (its error cases),
    ``contract:NAME`` and ``coverage:DISTRIBUTION``. ``"add"`` covers every ``add:DTYPE``;
    ``"*:bfloat16"`` every op's bfloat16 test; wildcards are fnmatch's.
    """
    return fnmatch.fnmatchcase(key, pattern) or fnmatch.fnmatchcase(key, pattern + ":*")


def item_matches(item: pytest.Item, key: str, pattern: str) -> bool:
    """Whether an xfail pattern covers a kit test: by its key (:func:`key_matches`), or by its id
    exactly as pytest prints it: the test's name (``test_op[add-float32]``) or its node id
    (``.../test_ops.py::test_op[add-float32]``), also as a wildcard pattern."""
    if key_matches(key, pattern):
        return True
    if "[" not in pattern and "::" not in pattern:
        return False
    return (fnmatch.fnmatchcase(item.name, pattern) or fnmatch.fnmatchcase(item.nodeid, pattern)
            or fnmatch.fnmatchcase(item.nodeid, "*" + pattern))


def key_op(key: str, declared: Any) -> str | None:
    """The op a kit key tests (``add:float32``, ``errors:add``, ``accumulate:sum:float32``), or None."""
    parts = key.split(":")
    for part in parts[:2]:
        if part in declared:
            return part
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    name = backend_name(config)
    kit_items = [item for item in items if item.get_closest_marker(KEY_MARKER) is not None]
    if not kit_items:
        return
    if name is None:
        skip = pytest.mark.skip(reason="flambeau conformance kit: pass --flambeau-backend NAME to run it")
        for item in kit_items:
            item.add_marker(skip)
        return
    xfails = _declared_xfails(name)
    if config.getoption("flambeau_only_implemented", False):
        items[:], kit_items = _only_implemented(config, name, items, kit_items)
    from flambeau.ops import declarations

    declared = declarations()
    foreign = _foreign_kernels(name)
    used: set[str] = set()
    for item in kit_items:
        key = item.get_closest_marker(KEY_MARKER).args[0]
        for pattern, reason in xfails.items():
            if item_matches(item, key, pattern):
                used.add(pattern)
                # Strict (a fix that makes it pass fails the run, so the list never outlives the bug),
                # unless the op runs through a kernel another distribution registered: a package
                # installed later may fix it without the backend's list being wrong.
                op = key_op(key, declared)
                strict = op is None or op not in foreign
                item.add_marker(pytest.mark.xfail(reason=f"{name}: {reason}", strict=strict))
                break
    stale = sorted(set(xfails) - used)
    if stale and len(kit_items) == len(items):
        config.issue_config_time_warning(pytest.PytestWarning(
            f"flambeau.testing: conformance_xfail entries of backend {name!r} match no test: {', '.join(stale)}"),
            stacklevel=2)


def _only_implemented(config: pytest.Config, name: str, items: list[pytest.Item],
                      kit_items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """``items`` without the kit tests of ops the backend cannot run (``flambeau.ops.runnable_ops``)."""
    from flambeau.ops import declarations, runnable_ops

    _declared_xfails(name)  # loads the backend, or says why it cannot
    runnable = runnable_ops(name)
    declared = declarations()
    kept, dropped = [], []
    for item in items:
        marker = item.get_closest_marker(KEY_MARKER)
        op = key_op(marker.args[0], declared) if marker is not None else None
        (dropped if op is not None and op not in runnable else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    return kept, [item for item in kit_items if item in set(kept)]


def _foreign_kernels(name: str) -> set[str]:
    """The ops whose kernel on backend ``name`` was registered by a plugin of another distribution."""
    from flambeau.ops._registry import HOOK_KERNEL_PROVIDERS
    from flambeau.plugins._loader import backend_records

    record = backend_records.get(name)
    own = record.distribution if record is not None else None
    return {op for (backend, op), provider in HOOK_KERNEL_PROVIDERS.items() if backend == name and provider != own}


def _declared_xfails(name: str) -> dict[str, str]:
    from flambeau.plugins import BackendUnavailable, loaded_backend  # deferred: keep the plugin import-light

    try:
        backend = loaded_backend(name)
    except BackendUnavailable as exc:
        raise pytest.UsageError(f"--flambeau-backend {name}: {exc}") from exc
    declared = getattr(backend, "conformance_xfail", None) or {}
    return {str(k): str(v) for k, v in dict(declared).items()}


@pytest.fixture(scope="session")
def flambeau_backend(pytestconfig: pytest.Config) -> Any:
    """The Backend object under test."""
    name = backend_name(pytestconfig)
    if name is None:
        pytest.skip("pass --flambeau-backend NAME to run the conformance kit")
    from flambeau.plugins import loaded_backend

    return loaded_backend(name)


@pytest.fixture(scope="session")
def flambeau_device(flambeau_backend: Any) -> Any:
    """The device under test, its index resolved as the backend resolves it (``cuda`` -> ``cuda:0``)."""
    import flambeau

    return flambeau.empty(0, device=flambeau_backend.name).device


@pytest.fixture(scope="session")
def flambeau_computes_data(pytestconfig: pytest.Config, flambeau_backend: Any) -> bool:
    """False in shape-and-dtype mode: no values are read back or compared."""
    if pytestconfig.getoption("flambeau_meta_only"):
        return False
    return bool(getattr(flambeau_backend, "computes_data", True))
