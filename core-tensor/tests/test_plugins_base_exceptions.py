"""Plugin code that raises BaseExceptions (SystemExit, KeyboardInterrupt, GeneratorExit, ...).

Whatever a plugin raises, at whatever stage (its module's import, a pluggy hook, a backend's
module, factory or kernel table), is isolated like an ordinary failure: recorded, warned once
naming the distribution, its version and the reason, and chained into the error that using
the device raises later. Only a real Ctrl-C (a SIGINT arriving while plugin code runs) still
interrupts. Each scenario runs in a fresh interpreter (see ``fake_dists``).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fake_dists import FAKE_BACKEND_SOURCE, FakeDist, fake_backend, fake_plugin, install, run_json, run_python

# The exceptions a plugin may raise, as source text: an Exception subclass and each kind of
# BaseException that `except Exception` lets through.
RAISES = {
    "ValueError": "ValueError('boom')",
    "SystemExit": "SystemExit(3)",
    "KeyboardInterrupt": "KeyboardInterrupt('boom')",
    "GeneratorExit": "GeneratorExit('boom')",
    "PluginBaseError": "type('PluginBaseError', (BaseException,), {})('boom')",
}

HOOK_PLUGIN = '''
from flambeau.plugins import hookimpl


@hookimpl
def {hook}():
    raise {exc}
'''

# The fake backend with one stage replaced by a raise.
BACKEND_STAGES = {
    "module": "raise {exc}\n",
    "factory": "def create_backend():\n    raise {exc}\n",
    "kernels": "FakeBackend.kernels = lambda self: (_ for _ in ()).throw({exc})\n",
}


def _dists(exc: str) -> list[FakeDist]:
    dists = [
        fake_plugin("flambeau-boom-import", "1.0.1", source=f"raise {exc}\n", module="flambeau_boom_import",
                    ep_name="boom_import"),
        fake_plugin("flambeau-boom-declare", "1.0.2", source=HOOK_PLUGIN.format(hook="flambeau_declare_ops", exc=exc),
                    module="flambeau_boom_declare", ep_name="boom_declare"),
        fake_plugin("flambeau-boom-kernels", "1.0.3",
                    source=HOOK_PLUGIN.format(hook="flambeau_register_kernels", exc=exc),
                    module="flambeau_boom_kernels", ep_name="boom_kernels"),
    ]
    for stage, tail in BACKEND_STAGES.items():
        source = FAKE_BACKEND_SOURCE.replace('name = "fakedev"', f'name = "boom{stage}"')
        source = (tail.format(exc=exc) + source) if stage == "module" else source + tail.format(exc=exc)
        dists.append(fake_backend(f"flambeau-backend-boom{stage}", "2.0.0", source=source,
                                  module=f"flambeau_boom{stage}", device=f"boom{stage}"))
    return dists


SCENARIO = """
import json, sys, traceback, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import flambeau as fb
at_import = [str(w.message) for w in caught if issubclass(w.category, fb.plugins.PluginWarning)]
uses = {}
for stage in ("module", "factory", "kernels"):
    attempts = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            try:
                fb.ones(2, device="boom" + stage)
                attempts.append(None)
            except RuntimeError as exc:
                attempts.append([type(exc).__name__, str(exc), type(exc.__cause__).__name__,
                                 len([w for w in again if issubclass(w.category, fb.plugins.PluginWarning)])])
    uses[stage] = attempts
records = {r.name: [r.status, r.reason, type(r.error).__name__, "boom" in r.traceback]
           for r in [*fb.plugins.plugins(), *fb.plugins.backends()] if r.name.startswith("boom")}
print(json.dumps({"at_import": at_import, "uses": uses, "records": records, "ok": (fb.ones(2) + 1).tolist(),
                  "declared": [n for n in fb.ops.declarations() if n.startswith("boom")]}))
"""


@pytest.mark.parametrize("kind", sorted(RAISES))
def test_any_exception_from_any_plugin_stage_is_isolated(tmp_path: Path, kind: str):
    site = install(tmp_path / "site", *_dists(RAISES[kind]))
    out = run_json(SCENARIO, site)  # the interpreter survives `import flambeau` and every first use
    assert out["ok"] == [2.0, 2.0]
    # plugins fail at import, each warned once with its distribution, version and the exception
    plugins = {"boom_import": "flambeau-boom-import 1.0.1", "boom_declare": "flambeau-boom-declare 1.0.2",
               "boom_kernels": "flambeau-boom-kernels 1.0.3"}
    for name, dist in plugins.items():
        status, reason, cause, tb_has = out["records"][name]
        assert status == "failed" and kind in reason and cause == kind and tb_has, (name, out["records"][name])
        assert len([w for w in out["at_import"] if dist in w]) == 1, out["at_import"]
    assert [w for w in out["at_import"] if "backend-boom" in w] == []  # backends only load on first use
    # backends fail at their first use: warned then, and every use raises with the original chained
    for stage, ((name, msg, cause, warned), (name2, msg2, cause2, warned2)) in out["uses"].items():
        assert name == name2 == "BackendUnavailable" and cause == cause2 == kind, out["uses"]
        assert f"flambeau-backend-boom{stage} 2.0.0" in msg and kind in msg and msg2 == msg
        assert (warned, warned2) == (1, 0)
        status, reason, error, _ = out["records"][f"boom{stage}"]
        assert status == "failed" and error == kind


# -- a real Ctrl-C is the user's, and still interrupts -----------------------------------------

SIGINT_ITSELF = '''
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)  # what pressing Ctrl-C does while this module imports
time.sleep(10)
raise AssertionError("the SIGINT did not interrupt")
'''


def test_real_ctrl_c_while_plugins_load_interrupts_import(tmp_path: Path):
    site = install(tmp_path / "site", fake_plugin(source=SIGINT_ITSELF))
    proc = run_python("import flambeau", site)
    assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr, proc.stderr
    assert "AssertionError" not in proc.stderr


def test_real_ctrl_c_that_a_plugin_swallows_still_interrupts_import(tmp_path: Path):
    swallowing = "try:\n" + textwrap.indent(SIGINT_ITSELF, "    ") + \
        "except KeyboardInterrupt:\n    raise RuntimeError('turned into a failure of the plugin')\n"
    site = install(tmp_path / "site", fake_plugin(source=swallowing))
    proc = run_python("import flambeau", site)
    assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr, proc.stderr
    assert "AssertionError" not in proc.stderr


def test_real_ctrl_c_while_a_backend_loads_interrupts_first_use(tmp_path: Path):
    # the first import is interrupted by the user; the next one (after `builtins.later`) succeeds
    source = textwrap.dedent("""
        import builtins
        if not hasattr(builtins, "later"):
    """) + textwrap.indent(SIGINT_ITSELF, "    ") + FAKE_BACKEND_SOURCE
    site = install(tmp_path / "site", fake_backend(source=source))
    out = run_json("""
        import builtins, json, signal, sys
        import flambeau as fb
        handler_after_import = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        try:
            fb.ones(1, device="fakedev")
            first = "no error"
        except KeyboardInterrupt:
            first = "KeyboardInterrupt"
        rec = {r.name: r for r in fb.plugins.backends()}["fakedev"]
        status = rec.status
        sys.modules.pop("flambeau_fakedev", None)
        builtins.later = True  # the user interrupted; a second try loads the backend normally
        print(json.dumps([handler_after_import, first, status, fb.ones(1, device="fakedev").tolist(),
                          signal.getsignal(signal.SIGINT) is signal.default_int_handler]))
    """, site)
    assert out == [True, "KeyboardInterrupt", "not loaded", [1.0], True]


def test_a_plugins_own_keyboard_interrupt_keeps_the_programs_sigint_handler(tmp_path: Path):
    site = install(tmp_path / "site", fake_plugin(source="raise KeyboardInterrupt\n"))
    out = run_json("""
        import json, os, signal, time, warnings
        seen = []
        def mine(signum, frame):
            seen.append(signum)
        signal.signal(signal.SIGINT, mine)
        warnings.simplefilter("ignore")
        import flambeau as fb
        rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
        same = signal.getsignal(signal.SIGINT) is mine
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        print(json.dumps([rec.status, type(rec.error).__name__, same, len(seen)]))
    """, site)
    assert out == ["failed", "KeyboardInterrupt", True, 1]


def test_keyboard_interrupt_raised_by_a_backend_in_another_thread_is_isolated(tmp_path: Path):
    source = FAKE_BACKEND_SOURCE + "\ndef create_backend():\n    raise KeyboardInterrupt\n"
    site = install(tmp_path / "site", fake_backend(source=source))
    out = run_json(textwrap.dedent("""
        import json, threading, warnings
        warnings.simplefilter("ignore")
        import flambeau as fb
        errors = []
        def use():
            try:
                fb.ones(1, device="fakedev")
            except RuntimeError as exc:
                errors.append([type(exc).__name__, type(exc.__cause__).__name__])
        t = threading.Thread(target=use)
        t.start(); t.join()
        print(json.dumps(errors))
    """), site)
    assert out == [["BackendUnavailable", "KeyboardInterrupt"]]
