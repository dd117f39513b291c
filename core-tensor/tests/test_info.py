"""``python -m flambeau info [--ops]``: the environment report for bug reports."""
from __future__ import annotations

import platform
from pathlib import Path

import pytest
from fake_dists import INCOMPATIBLE, fake_backend, fake_plugin, install, run_python

PLUGIN_IMPORT_ERROR = '''
raise ImportError("fake plugin cannot find libfoo")
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install(
        tmp_path_factory.mktemp("info") / "site",
        fake_backend(),
        fake_plugin(),
        fake_plugin(name="flambeau-brokenops", version="1.2.3", module="flambeau_brokenops", ep_name="brokenops",
                    source=PLUGIN_IMPORT_ERROR),
        fake_backend(name="flambeau-backend-oldxpu", version="0.0.9", module="flambeau_oldxpu", device="oldxpu",
                     requires=(INCOMPATIBLE,)),
    )


def info(site: Path | None, *extra: str) -> str:
    proc = run_python("", site, args=("-W", "ignore", "-m", "flambeau", "info", *extra))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def section(text: str, title: str) -> str:
    return text.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0]


def test_info_lists_python_distributions_backends_plugins_failures(site):
    text = info(site)
    assert text.startswith(f"Python {platform.python_version()}")
    dists = section(text, "Distributions")
    for line in ("flambeau-core-tensor 0.1.0", "flambeau-backend-cpu 0.1.0", "flambeau-backend-fakedev 0.3.0",
                 "flambeau-fakeops 0.2.0", "flambeau-brokenops 1.2.3", "flambeau-backend-oldxpu 0.0.9"):
        assert f"  {line}" in dists.splitlines(), line
    backends = section(text, "Backends")
    assert "  cpu: flambeau-backend-cpu 0.1.0 [loaded]" in backends
    # not loaded at import; the report loads it to show devices, dtypes and coverage
    assert "  fakedev: flambeau-backend-fakedev 0.3.0 [not loaded; loaded for this report]" in backends
    assert "devices: 2; dtypes: bool, float32, float64, int64" in backends
    assert "  oldxpu: flambeau-backend-oldxpu 0.0.9 [failed: it requires flambeau-core-tensor" in backends
    assert ">=0.9" in backends
    assert "refused kernel fake_scale: its parameters are (x, f)" in backends
    plugins = section(text, "Plugins")
    assert "  core: flambeau-core-tensor 0.1.0 [loaded]" in plugins
    assert "  fakeops: flambeau-fakeops 0.2.0 [loaded] - 6 ops, 7 kernels" in plugins
    assert "ops: fake_double, fake_triple, fake_scale, fake_alias, fake_noise, fake_nothing" in plugins
    assert "  brokenops: flambeau-brokenops 1.2.3 [failed: ImportError: fake plugin cannot find libfoo]" in plugins
    failed = section(text, "Failed plugins") if "\n\n" in text.split("Failed plugins:")[1] else \
        text.split("Failed plugins:\n", 1)[1]
    assert "plugin brokenops from flambeau-brokenops 1.2.3: ImportError: fake plugin cannot find libfoo" in failed
    assert "backend oldxpu from flambeau-backend-oldxpu 0.0.9: it requires flambeau-core-tensor" in failed


def test_info_coverage_counts(site):
    text = info(site)
    backends = section(text, "Backends")
    fakedev = backends.split("  fakedev:")[1].split("\n  oldxpu")[0]
    # fakedev has kernels for add, clone, copy, fill, to_dtype and the plugin's fake_double
    assert "ops: 6 native," in fakedev
    assert "core tier: 4 of 60 (lacks " in fakedev  # add, copy, fill and to_dtype are core; clone is not


def test_info_ops_lists_kernel_composite_or_neither_per_backend(site):
    text = info(site, "--ops")
    backends = section(text, "Backends")
    fakedev = backends.split("  fakedev:")[1].split("\n  oldxpu")[0]
    lines = {line.split(" (")[0].strip(): line.split(": ", 1)[1] for line in fakedev.splitlines()
             if line.startswith(("    native", "    by decomposition", "    missing"))}
    assert set(lines["native"].split(", ")) == {"add", "clone", "copy", "fake_double", "fill", "to_dtype"}
    # fake_triple's composite runs on fakedev's kernels; reshape's needs `view`, which fakedev lacks
    assert "fake_triple" in lines["by decomposition"].split(", ")
    missing = lines["missing"].split(", ")
    assert "mul" in missing and "fake_nothing" in missing and "add" not in missing and "reshape" in missing
    cpu = backends.split("  cpu:")[1].split("\n  fakedev")[0]
    assert "    native (" in cpu and "fake_double" in cpu
    assert "    native (" not in info(site)  # only with --ops


def test_info_without_failures_says_none(monkeypatch):
    from flambeau.plugins import _info, _loader

    # Other packages installed in this environment may be broken; keep only the healthy records.
    monkeypatch.setattr(_loader, "plugin_records", [r for r in _loader.plugin_records if r.status != "failed"])
    monkeypatch.setattr(_loader, "all_backend_records",
                        [r for r in _loader.all_backend_records if r.status != "failed"])
    text = _info.report()
    assert text.split("Failed plugins:\n", 1)[1].strip() == "(none)"
    assert "  cpu: flambeau-backend-cpu" in text


def test_report_function_in_process():
    from flambeau.plugins._info import report

    text = report(show_ops=True)
    assert "Backends:" in text and "Plugins:" in text and "core: flambeau-core-tensor" in text
