"""``dir(flambeau)`` holds flambeau's API, not what its ``__init__`` imported to build it."""
from __future__ import annotations

import __future__
import builtins
import types

import flambeau as fb


def _leftovers(namespace: object) -> list[str]:
    """Names of ``namespace`` bound to an import's result rather than to flambeau's own objects:
    ``from __future__`` features, modules from outside flambeau, and functions or classes defined
    outside it (typing, builtins aliases such as ``builtins_int``, ``pkgutil.extend_path``...)."""
    found = []
    for name in dir(namespace):
        if name.startswith("__") and name.endswith("__") or not name.isidentifier():
            continue  # __name__, __path__...: every module has them; `@py_builtins`: pytest's rewriting
        value = getattr(namespace, name)
        if isinstance(value, __future__._Feature):
            found.append(name)
        elif isinstance(value, types.ModuleType):
            if not value.__name__.startswith("flambeau"):
                found.append(name)
        else:
            module = getattr(value, "__module__", None)  # classes, functions, typing's forms
            if isinstance(module, str) and not module.startswith("flambeau"):
                found.append(name)
    return found


def test_top_level_namespace_has_no_import_leftovers():
    assert _leftovers(fb) == []


def test_the_names_that_leaked_are_gone():
    for name in ("annotations", "builtins_int", "extend_path"):
        assert not hasattr(fb, name), name


def test_leftover_check_sees_each_kind():
    # The check itself: each kind of leftover is reported, flambeau's own objects are not.
    fake = types.ModuleType("fake")
    fake.annotations = __future__.annotations
    fake.builtins_int = builtins.int
    fake.np = __import__("numpy")
    fake.extend_path = __import__("pkgutil").extend_path
    fake.Any = __import__("typing").Any
    fake.add, fake.float32, fake.linalg, fake.Tensor = fb.add, fb.float32, fb.linalg, fb.Tensor
    assert sorted(_leftovers(fake)) == ["Any", "annotations", "builtins_int", "extend_path", "np"]


def test_set_num_threads_still_refuses_a_non_integer():
    import pytest

    with pytest.raises(RuntimeError, match="positive integer"):
        fb.set_num_threads(1.5)
    with pytest.raises(RuntimeError, match="positive integer"):
        fb.set_num_threads(0)
