"""Backend and plugin discovery: entry points, lazy loading, failures, disabling, re-entrancy.

Each scenario installs fake distributions into a temporary directory and runs ``import flambeau``
in a fresh interpreter (the registry is process-global and frozen at import).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from fake_dists import (COMPATIBLE, INCOMPATIBLE, fake_backend, fake_plugin, install, run_json)

WARNINGS_AS_LIST = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import flambeau as fb
plugin_warnings = [str(w.message) for w in caught if issubclass(w.category, fb.plugins.PluginWarning)]
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site"


# -- backends found through entry points, loaded lazily -----------------------------------

def test_backend_from_entry_point_is_not_imported_until_its_device_is_used(site):
    install(site, fake_backend())
    out = run_json("""
        import json, sys
        import flambeau as fb
        rec = {r.name: r for r in fb.plugins.backends()}["fakedev"]
        before = ("flambeau_fakedev" in sys.modules, rec.status, rec.distribution, rec.version)
        cpu_loaded = "flambeau_cpu" in sys.modules
        x = fb.tensor([1.0, 2.0], device="fakedev")
        after = ("flambeau_fakedev" in sys.modules, rec.status)
        print(json.dumps({"before": before, "after": after, "cpu": cpu_loaded, "dev": str(x.device),
                          "values": x.tolist(), "sum": (x + x).tolist()}))
    """, site)
    assert out["before"] == [False, "not loaded", "flambeau-backend-fakedev", "0.3.0"]
    assert out["cpu"] is True  # the default device's backend is loaded at import
    assert out["after"] == [True, "loaded"]
    assert out["dev"] == "fakedev"
    assert out["values"] == [1.0, 2.0] and out["sum"] == [2.0, 4.0]


def test_backend_metadata_only_at_import_even_via_loaded_backend(site):
    install(site, fake_backend())
    out = run_json("""
        import json, sys
        import flambeau as fb
        before = "flambeau_fakedev" in sys.modules
        backend = fb.plugins.loaded_backend("fakedev")
        print(json.dumps({"before": before, "name": backend.name, "count": backend.device_count(),
                          "same": backend is fb.plugins.loaded_backend("fakedev")}))
    """, site)
    assert out == {"before": False, "name": "fakedev", "count": 2, "same": True}


def test_unknown_device_says_which_distribution_to_install():
    out = run_json("""
        import json
        import flambeau as fb
        msgs = []
        for dev in ("cuda", "cuda:1", "meta", "xpu"):
            try:
                fb.zeros(2, device=dev)
            except RuntimeError as exc:
                msgs.append(str(exc))
        print(json.dumps(msgs))
    """)
    assert len(out) == 4
    assert "flambeau-backend-cuda" in out[0] and "'cuda'" in out[0]
    assert "flambeau-backend-cuda" in out[1]
    assert "flambeau-backend-meta" in out[2]
    assert "'xpu'" in out[3] and "install" in out[3]


# -- failures: import errors and incompatible core versions -------------------------------

BROKEN_BACKEND = '''
import flambeau
raise ImportError("libfakedrv.so.3: cannot open shared object file")
'''


def test_backend_that_fails_to_import_fails_on_first_use_with_chained_cause(site):
    install(site, fake_backend(source=BROKEN_BACKEND))
    out = run_json(WARNINGS_AS_LIST + """
import traceback
at_import = list(plugin_warnings)
x = fb.ones(2) + 1  # the library still works
errors = []
for _ in range(2):
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        try:
            fb.ones(2, device="fakedev")
        except RuntimeError as exc:
            errors.append((type(exc).__name__, str(exc), type(exc.__cause__).__name__, str(exc.__cause__),
                           "libfakedrv" in "".join(traceback.format_exception(exc))))
    errors[-1] += (len([w for w in again if issubclass(w.category, fb.plugins.PluginWarning)]),)
rec = {r.name: r for r in fb.plugins.backends()}["fakedev"]
print(json.dumps({"at_import": at_import, "ok": x.tolist(), "errors": errors, "status": rec.status,
                  "reason": rec.reason}))
""", site)
    assert out["at_import"] == []  # only metadata was read at import: nothing failed yet
    assert out["ok"] == [2.0, 2.0]
    (name, msg, cause, cause_msg, tb_has, warned), (_, msg2, cause2, _, _, warned2) = out["errors"]
    assert name == "BackendUnavailable" and cause == "ImportError" and "libfakedrv" in cause_msg and tb_has
    assert "flambeau-backend-fakedev 0.3.0" in msg and "libfakedrv" in msg
    # a driver's ImportError is the backend's own failure, not a version mismatch: it says so
    assert "reinstall or upgrade" not in msg and "FLAMBEAU_DISABLE_PLUGINS=flambeau-backend-fakedev" in msg
    assert (warned, warned2) == (1, 0)  # warned once, on the failure; the second use only raises
    assert cause2 == "ImportError" and msg2 == msg
    assert out["status"] == "failed" and "ImportError" in out["reason"]


def test_incompatible_backend_is_refused_from_metadata_and_never_imported(site):
    install(site, fake_backend(requires=(INCOMPATIBLE, "numpy")))
    out = run_json(WARNINGS_AS_LIST + """
imported = "flambeau_fakedev" in sys.modules
try:
    fb.ones(2, device="fakedev")
except RuntimeError as exc:
    err, cause = str(exc), type(exc.__cause__).__name__
imported_after = "flambeau_fakedev" in sys.modules
print(json.dumps({"w": plugin_warnings, "imported": imported, "after": imported_after, "err": err,
                  "ok": (fb.ones(1) * 3).tolist()}))
""", site)
    assert len(out["w"]) == 1
    w = out["w"][0]
    assert "flambeau-backend-fakedev" in w and "0.3.0" in w and ">=0.9" in w and "0.1.0" in w
    assert out["imported"] is False and out["after"] is False  # native code never loaded
    assert "flambeau-backend-fakedev 0.3.0" in out["err"] and ">=0.9" in out["err"]
    assert out["ok"] == [3.0]


def test_incompatible_plugin_is_never_imported(site):
    install(site, fake_plugin(requires=(INCOMPATIBLE,)))
    out = run_json(WARNINGS_AS_LIST + """
rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
print(json.dumps({"w": plugin_warnings, "imported": "flambeau_fakeops" in sys.modules, "status": rec.status,
                  "declared": "fake_double" in fb.ops.declarations()}))
""", site)
    assert out["imported"] is False and out["status"] == "failed" and out["declared"] is False
    assert len(out["w"]) == 1 and "flambeau-fakeops 0.2.0" in out["w"][0] and ">=0.9" in out["w"][0]


@pytest.mark.parametrize("requires, ok", [
    ((COMPATIBLE,), True),
    (("flambeau_core_tensor >=0.1, <0.2",), True),  # name normalisation
    (("flambeau-core-tensor>=0.1", "flambeau-core-tensor<0.1"), False),  # every range must hold
    (("flambeau-core-tensor>=9; extra == 'dev'", COMPATIBLE), True),  # an extra's requirement does not count
    (("flambeau-core-tensor>=9; python_version < '3'", COMPATIBLE), True),  # nor another platform's
    (("numpy",), False),  # no stated core range: refused
    (("not a valid requirement !!", COMPATIBLE), True),
])
def test_core_range_is_read_from_requires_dist(site, requires, ok):
    install(site, fake_plugin(requires=requires))
    out = run_json("""
        import json, sys
        import warnings; warnings.simplefilter("ignore")
        import flambeau as fb
        rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
        print(json.dumps([rec.status, rec.reason, "flambeau_fakeops" in sys.modules]))
    """, site)
    assert (out[0] == "loaded") is ok, out
    assert out[2] is ok


PLUGIN_IMPORT_ERROR = '''
import flambeau
raise RuntimeError("plugin exploded at import")
'''


def test_plugin_that_fails_to_import_is_recorded_and_warned_once(site):
    install(site, fake_plugin(source=PLUGIN_IMPORT_ERROR))
    out = run_json(WARNINGS_AS_LIST + """
rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
print(json.dumps({"w": plugin_warnings, "status": rec.status, "reason": rec.reason,
                  "cause": type(rec.error).__name__, "tb": "plugin exploded" in rec.traceback,
                  "ok": (fb.ones(2) - 1).tolist()}))
""", site)
    assert len(out["w"]) == 1
    assert "flambeau-fakeops" in out["w"][0] and "0.2.0" in out["w"][0] and "plugin exploded" in out["w"][0]
    assert out["status"] == "failed" and out["cause"] == "RuntimeError" and out["tb"]
    assert out["ok"] == [0.0, 0.0]


def test_broken_install_without_metadata_does_not_break_import(site):
    dist = fake_plugin()
    dist.no_metadata = True
    install(site, dist)
    out = run_json(WARNINGS_AS_LIST + """
rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
print(json.dumps({"w": plugin_warnings, "status": rec.status, "dist": rec.distribution, "version": rec.version,
                  "imported": "flambeau_fakeops" in sys.modules}))
""", site)
    assert out["status"] == "failed" and out["imported"] is False
    assert out["dist"] == "flambeau_fakeops" and out["version"] == "?"
    assert len(out["w"]) == 1


# Two distributions providing one device type: see test_plugins_names.py (neither gets it; the user chooses).


# -- FLAMBEAU_DISABLE_PLUGINS -------------------------------------------------------------

@pytest.mark.parametrize("value", ["fakeops,fakedev", " fakedev , fakeops ",
                                   "Flambeau_FakeOps,flambeau-backend-fakedev"])
def test_disable_plugins_by_name(site, value):
    install(site, fake_backend(), fake_plugin())
    out = run_json("""
        import json, sys
        import flambeau as fb
        p = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
        b = [r for r in fb.plugins.backends() if r.name == "fakedev"][0]
        try:
            fb.ones(1, device="fakedev")
            err = None
        except RuntimeError as exc:
            err = str(exc)
        print(json.dumps({"p": p.status, "b": b.status, "declared": "fake_double" in fb.ops.declarations(),
                          "imported": ["flambeau_fakeops" in sys.modules, "flambeau_fakedev" in sys.modules],
                          "err": err}))
    """, site, env={"FLAMBEAU_DISABLE_PLUGINS": value})
    assert out["p"] == "disabled" and out["b"] == "disabled"
    assert out["declared"] is False and out["imported"] == [False, False]
    assert "FLAMBEAU_DISABLE_PLUGINS" in out["err"]


def test_disable_plugins_leaves_others(site):
    install(site, fake_backend(), fake_plugin())
    out = run_json("""
        import json
        import flambeau as fb
        print(json.dumps([r.status for r in fb.plugins.plugins() if r.name == "fakeops"]
                         + [r.status for r in fb.plugins.backends() if r.name == "fakedev"]))
    """, site, env={"FLAMBEAU_DISABLE_PLUGINS": "fakeops"})
    assert out == ["disabled", "not loaded"]


# -- loading is not re-entrant; plugins see a fully imported core -------------------------

REENTRANT_PLUGIN = '''
import flambeau
from flambeau.plugins import load
load()
'''

DEVICE_AT_IMPORT_PLUGIN = '''
import flambeau
ONES = flambeau.ones(3)
'''


@pytest.mark.parametrize("source, needle", [(REENTRANT_PLUGIN, "not re-entrant"),
                                            (DEVICE_AT_IMPORT_PLUGIN, "cannot be used until")])
def test_loading_is_not_reentrant(site, source, needle):
    install(site, fake_plugin(source=source))
    out = run_json(WARNINGS_AS_LIST + """
rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
print(json.dumps({"w": plugin_warnings, "status": rec.status, "reason": rec.reason,
                  "ok": (fb.ones(2) * 2).tolist(), "hook_kernels_cpu": "add" in fb.ops.kernel_table("cpu")}))
""", site)
    assert out["status"] == "failed" and needle in out["reason"], out
    assert len(out["w"]) == 1 and needle in out["w"][0]
    assert out["ok"] == [2.0, 2.0] and out["hook_kernels_cpu"]


def test_plugin_sees_fully_imported_core(site):
    install(site, fake_plugin())
    out = run_json("""
        import json
        import flambeau as fb
        import flambeau_fakeops
        print(json.dumps(flambeau_fakeops.SAW_FULL_CORE))
    """, site)
    assert out is True


def test_load_again_after_import_is_a_no_op(site):
    install(site, fake_plugin())
    out = run_json("""
        import json
        import flambeau as fb
        n = len(fb.ops.declarations())
        fb.plugins.load()
        print(json.dumps([n, len(fb.ops.declarations()), fb.ops.fn.fake_double(fb.ones(2)).tolist()]))
    """, site)
    assert out[0] == out[1] and out[2] == [2.0, 2.0]


# -- discovery cost and concurrency --------------------------------------------------------

def test_entry_points_scanned_once_and_never_again(site):
    install(site, fake_backend(), fake_plugin())
    out = run_json("""
        import json, sys
        import flambeau as fb
        from flambeau.plugins import _entry_points
        at_import = _entry_points.scans
        x = fb.ones(2, device="fakedev") + 1  # loads the lazy backend
        _ = fb.ops.fn.fake_double(x)
        print(json.dumps([at_import, _entry_points.scans, "importlib.metadata" in sys.modules]))
    """, site)
    # one scan of all groups at import, none for the lazy load, and importlib.metadata never imported
    assert out == [1, 1, False]


def test_concurrent_first_use_loads_the_backend_once(site):
    install(site, fake_backend())
    out = run_json("""
        import json, threading
        import flambeau as fb
        seen, errors = [], []
        def use():
            try:
                seen.append(id(fb.plugins.loaded_backend("fakedev")))
                fb.ones(1, device="fakedev")
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=use) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(json.dumps([len(set(seen)), len(seen), errors]))
    """, site)
    assert out == [1, 8, []]


SELF_USING_BACKEND = '''
import flambeau
from flambeau_fakedev_impl import *  # noqa: the real backend, below
flambeau.zeros(1, device="fakedev")  # uses its own device while being loaded
'''


def test_backend_using_its_own_device_while_loading_gets_a_clear_error(site):
    from fake_dists import FAKE_BACKEND_SOURCE

    dist = fake_backend(source=SELF_USING_BACKEND)
    dist.modules["flambeau_fakedev_impl.py"] = FAKE_BACKEND_SOURCE
    install(site, dist)
    out = run_json(WARNINGS_AS_LIST + """
try:
    fb.ones(1, device="fakedev")
except RuntimeError as exc:
    print(json.dumps([type(exc).__name__, str(exc), str(exc.__cause__)]))
""", site)
    name, msg, cause = out
    assert name == "BackendUnavailable" and "not re-entrant" in msg and "not re-entrant" in cause


def test_unknown_op_mentions_failed_plugins(site):
    install(site, fake_plugin(source=PLUGIN_IMPORT_ERROR))
    out = run_json("""
        import json, warnings; warnings.simplefilter("ignore")
        import flambeau as fb
        try:
            fb.ops.fn.fake_double
        except AttributeError as exc:
            print(json.dumps([str(exc), hasattr(fb.ops.fn, "fake_double")]))
    """, site)
    assert "no op named 'fake_double'" in out[0] and "flambeau-fakeops 0.2.0" in out[0] and "plugin exploded" in out[0]
    assert out[1] is False
