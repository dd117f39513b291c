"""Who gets a device type name, and how failures read: reserved names, claims settled by the user,
failure messages that name the cause, warnings that point at the user's code, ``info``'s status.

Each scenario installs fake distributions and runs ``import flambeau`` in a fresh interpreter.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from fake_dists import FakeDist, fake_backend, install, run_json, run_python

RAISES_AT_IMPORT = '''
raise RuntimeError("abroken: no driver")
'''

WARNINGS = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import flambeau as fb
plugin_warnings = [(str(w.message), w.filename) for w in caught
                   if issubclass(w.category, fb.plugins.PluginWarning)]

def error(f):
    try:
        f()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site"


def claimant(dist: str, device: str, module: str, source: str = RAISES_AT_IMPORT) -> FakeDist:
    return fake_backend(name=dist, version="0.0.1", module=module, device=device, source=source)


# -- reserved names -----------------------------------------------------------------------

def test_a_third_party_cpu_entry_point_cannot_take_the_cpu_backend(site):
    install(site, claimant("abroken", "cpu", "abroken_mod"))
    out = run_json(WARNINGS + """
recs = [(r.distribution, r.status, r.reason) for r in fb.plugins.backends() if r.name == "cpu"]
print(json.dumps({"w": plugin_warnings, "ones": fb.ones(2).tolist(), "recs": recs,
                  "imported": "abroken_mod" in sys.modules}))
""", site)
    assert out["ones"] == [1.0, 1.0] and out["imported"] is False
    recs = {dist: (status, reason) for dist, status, reason in out["recs"]}
    assert recs["flambeau-backend-cpu"][0] == "loaded"
    status, reason = recs["abroken"]
    assert status == "failed" and "reserved to flambeau's own flambeau-backend-cpu" in reason
    assert "FLAMBEAU_BACKEND_CPU" in reason
    assert len(out["w"]) == 1 and "abroken" in out["w"][0][0]


def test_disabling_the_intruder_is_silent_and_keeps_cpu(site):
    install(site, claimant("abroken", "cpu", "abroken_mod"))
    out = run_json(WARNINGS + """
recs = {r.distribution: r.status for r in fb.plugins.backends() if r.name == "cpu"}
print(json.dumps({"w": plugin_warnings, "ones": fb.ones(2).tolist(), "recs": recs}))
""", site, env={"FLAMBEAU_DISABLE_PLUGINS": "abroken"})
    assert out == {"w": [], "ones": [1.0, 1.0], "recs": {"abroken": "disabled", "flambeau-backend-cpu": "loaded"}}


def test_a_reserved_name_without_its_distribution_is_still_refused(site):
    install(site, claimant("acme-meta", "meta", "acme_meta"))
    out = run_json(WARNINGS + """
print(json.dumps({"err": error(lambda: fb.ones(1, device="meta")), "w": plugin_warnings}))
""", site, env={"FLAMBEAU_DISABLE_PLUGINS": "flambeau-backend-meta"})
    name, msg = out["err"]
    assert name == "BackendUnavailable" and "reserved to flambeau's own flambeau-backend-meta" in msg


# -- a name claimed twice: the user chooses -------------------------------------------------

def two_fakedevs(site: Path) -> None:
    install(site, fake_backend(), fake_backend(name="zz-other-fakedev", version="9.0", module="zz_fakedev"))


def test_a_name_claimed_twice_goes_to_neither(site):
    two_fakedevs(site)
    out = run_json(WARNINGS + """
recs = [(r.distribution, r.status) for r in fb.plugins.backends() if r.name == "fakedev"]
print(json.dumps({"w": plugin_warnings, "recs": recs, "err": error(lambda: fb.ones(1, device="fakedev")),
                  "mods": ["zz_fakedev" in sys.modules, "flambeau_fakedev" in sys.modules]}))
""", site)
    assert out["recs"] == [["flambeau-backend-fakedev", "failed"], ["zz-other-fakedev", "failed"]]
    (warning, _), = out["w"]  # one warning, naming both claimants and how to choose
    for needle in ("flambeau-backend-fakedev 0.3.0", "zz-other-fakedev 9.0", "FLAMBEAU_BACKEND_FAKEDEV",
                   "choose_backend"):
        assert needle in warning
    name, msg = out["err"]
    assert name == "BackendUnavailable" and "flambeau-backend-fakedev" in msg and "zz-other-fakedev" in msg
    assert out["mods"] == [False, False]


@pytest.mark.parametrize("env, winner", [
    ({"FLAMBEAU_BACKEND_FAKEDEV": "ZZ_Other.FakeDev"}, "zz-other-fakedev"),
    ({"FLAMBEAU_BACKEND_FAKEDEV": "flambeau-backend-fakedev"}, "flambeau-backend-fakedev"),
    ({"FLAMBEAU_DISABLE_PLUGINS": "zz-other-fakedev"}, "flambeau-backend-fakedev"),
    ({"FLAMBEAU_DISABLE_PLUGINS": "flambeau-backend-fakedev"}, "zz-other-fakedev"),
])
def test_the_user_chooses_by_setting_or_by_disabling_the_other(site, env, winner):
    two_fakedevs(site)
    out = run_json(WARNINGS + """
x = fb.ones(2, device="fakedev") + 1
owner = [r.distribution for r in fb.plugins.backends() if r.name == "fakedev" and r.status == "loaded"]
print(json.dumps({"x": x.tolist(), "owner": owner, "w": [m for m, _ in plugin_warnings]}))
""", site, env=env)
    assert out["x"] == [2.0, 2.0] and out["owner"] == [winner]
    if "FLAMBEAU_DISABLE_PLUGINS" in env:
        assert out["w"] == []


def test_choose_backend_in_process_before_first_use(site):
    two_fakedevs(site)
    out = run_json(WARNINGS + """
bad = [error(lambda: fb.plugins.choose_backend("fakedev", 3)), error(lambda: fb.plugins.choose_backend("nodev", "x"))]
fb.plugins.choose_backend("fakedev", "zz-other-fakedev")
x = fb.ones(1, device="fakedev")
late = error(lambda: fb.plugins.choose_backend("fakedev", "flambeau-backend-fakedev"))
statuses = {r.distribution: r.status for r in fb.plugins.backends() if r.name == "fakedev"}
print(json.dumps({"bad": bad, "statuses": statuses, "late": late, "mods": "zz_fakedev" in sys.modules}))
""", site)
    assert [b[0] for b in out["bad"]] == ["TypeError", "ValueError"]
    assert out["statuses"] == {"zz-other-fakedev": "loaded", "flambeau-backend-fakedev": "failed"}
    assert out["late"][0] == "RuntimeError" and "already in use" in out["late"][1]
    assert out["mods"] is True


def test_a_choice_naming_no_claimant_gives_the_name_to_none(site):
    install(site, fake_backend())
    out = run_json(WARNINGS + """
print(json.dumps({"err": error(lambda: fb.ones(1, device="fakedev"))}))
""", site, env={"FLAMBEAU_BACKEND_FAKEDEV": "nobody"})
    name, msg = out["err"]
    assert name == "BackendUnavailable" and "FLAMBEAU_BACKEND_FAKEDEV chooses nobody" in msg


def test_info_names_both_claimants(site):
    two_fakedevs(site)
    proc = run_python("", site, args=("-W", "ignore", "-m", "flambeau", "info"))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("  fakedev:")]
    assert len(lines) == 2
    for line in lines:
        assert "[failed: the device type 'fakedev' is claimed by flambeau-backend-fakedev 0.3.0 and " \
               "zz-other-fakedev 9.0" in line


# -- failure messages ---------------------------------------------------------------------

DRIVER_ERROR = '''
raise RuntimeError("acme driver: device 0 is busy")
'''

OLD_API = '''
from flambeau.ops import no_such_name_in_this_core
'''


def test_a_backend_failing_on_its_own_is_not_called_a_version_mismatch(site):
    install(site, fake_backend(source=DRIVER_ERROR))
    out = run_json(WARNINGS + """
err = error(lambda: fb.ones(1, device="fakedev"))
try:
    fb.ones(1, device="fakedev")
except Exception as exc:
    cause = [type(exc.__cause__).__name__, str(exc.__cause__)]
print(json.dumps({"err": err, "cause": cause}))
""", site)
    name, msg = out["err"]
    assert name == "BackendUnavailable"
    assert "RuntimeError: acme driver: device 0 is busy" in msg
    assert "reinstall or upgrade" not in msg and "FLAMBEAU_DISABLE_PLUGINS=flambeau-backend-fakedev" in msg
    assert out["cause"] == ["RuntimeError", "acme driver: device 0 is busy"]


def test_an_import_error_of_a_flambeau_name_is_a_version_mismatch(site):
    install(site, fake_backend(source=OLD_API))
    out = run_json(WARNINGS + """
print(json.dumps(error(lambda: fb.ones(1, device="fakedev"))))
""", site)
    name, msg = out
    assert name == "BackendUnavailable" and "no_such_name_in_this_core" in msg
    assert "reinstall or upgrade flambeau-backend-fakedev so that it matches flambeau-core-tensor" in msg


def test_info_says_failed_with_the_reason_for_a_backend_failing_when_loaded_for_the_report(site):
    install(site, fake_backend(source=DRIVER_ERROR))
    proc = run_python("", site, args=("-W", "ignore", "-m", "flambeau", "info"))
    assert proc.returncode == 0, proc.stderr
    line, = [line for line in proc.stdout.splitlines() if line.startswith("  fakedev:")]
    assert line == ("  fakedev: flambeau-backend-fakedev 0.3.0 [failed: RuntimeError: acme driver: "
                    "device 0 is busy]")


# -- warnings point at the user's code ----------------------------------------------------

def test_warnings_point_at_the_users_line_not_at_flambeau(site):
    install(site, fake_backend(source=DRIVER_ERROR), claimant("abroken", "cpu", "abroken_mod"))
    out = run_json(WARNINGS + """
with warnings.catch_warnings(record=True) as later:
    warnings.simplefilter("always")
    error(lambda: fb.ones(1, device="fakedev"))
print(json.dumps({"import": [f for _, f in plugin_warnings], "use": [w.filename for w in later]}))
""", site)
    assert out["import"] == ["<string>"]  # the `import flambeau` line of the user's code
    assert out["use"] == ["<string>"]  # the line that used the device
