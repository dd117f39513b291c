"""Packaging contracts between the flambeau distributions (DESIGN: "One import name").

These check the environment the tests run in: run them with every flambeau distribution installed
(`./dev test`, the `flambeau` tox environment) and with core-tensor alone (the `core-tensor` one).
"""
from __future__ import annotations

import importlib
import subprocess
import sys
from collections import defaultdict
from importlib import metadata

import pytest

# Which distribution provides each first-party subpackage, as DESIGN's layout table says.
SUBPACKAGE_DISTRIBUTIONS = {
    "flambeau.autograd": "flambeau-core-autograd",
    "flambeau.nn": "flambeau-nn",
    "flambeau.optim": "flambeau-optim",
    "flambeau.distributions": "flambeau-distributions",
    "flambeau.cli": "flambeau",
}


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def flambeau_distributions() -> dict[str, metadata.Distribution]:
    """Installed distributions named ``flambeau`` or ``flambeau-*``; the first on sys.path wins, as for imports."""
    found: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        name = _canonical(dist.metadata["Name"] or "")
        if (name == "flambeau" or name.startswith("flambeau-")) and name not in found:
            found[name] = dist
    return found


def _installed(dist_name: str) -> bool:
    return _canonical(dist_name) in flambeau_distributions()


def test_core_tensor_is_installed():
    assert "flambeau-core-tensor" in flambeau_distributions()


def test_no_two_distributions_ship_the_same_file():
    owners: dict[str, list[str]] = defaultdict(list)
    for name, dist in flambeau_distributions().items():
        for path in dist.files or []:
            owners[path.as_posix()].append(name)
    clashes = {path: names for path, names in owners.items() if len(names) > 1}
    assert clashes == {}


def test_only_core_tensor_ships_flambeau_init():
    shippers = [
        name
        for name, dist in flambeau_distributions().items()
        if any(p.as_posix() == "flambeau/__init__.py" for p in dist.files or [])
    ]
    # An editable install of core-tensor lists no source files at all; a plain one lists the __init__.
    assert shippers in ([], ["flambeau-core-tensor"])
    for name in flambeau_distributions():
        if name != "flambeau-core-tensor":
            assert name not in shippers


def test_other_distributions_ship_only_their_own_subfolder():
    for name, dist in flambeau_distributions().items():
        if name == "flambeau-core-tensor":
            continue
        # Nothing directly inside flambeau/: a file there would belong to core-tensor's package.
        loose = [p.as_posix() for p in dist.files or [] if p.parts[:1] == ("flambeau",) and len(p.parts) == 2]
        assert loose == [], f"{name} ships files directly in flambeau/: {loose}"


def test_flambeau_init_belongs_to_core_tensor():
    import flambeau

    assert flambeau.__version__ == metadata.version("flambeau-core-tensor")
    # extend_path keeps the package open to subpackages of the other distributions.
    assert isinstance(flambeau.__path__, list)


@pytest.mark.parametrize("module, dist", sorted(SUBPACKAGE_DISTRIBUTIONS.items()))
def test_missing_subpackage_names_its_distribution(module, dist):
    if _installed(dist):
        pytest.skip(f"{dist} is installed")
    with pytest.raises(ModuleNotFoundError) as info:
        importlib.import_module(module)
    assert str(info.value).startswith(f"No module named '{module}'")
    assert f"'{dist}'" in str(info.value)
    assert f"pip install {dist}" in str(info.value)


nn_installed = pytest.mark.skipif(_installed("flambeau-nn"), reason="flambeau-nn is installed")


@nn_installed
def test_import_flambeau_nn_without_flambeau_nn():
    with pytest.raises(ModuleNotFoundError, match=r"flambeau-nn"):
        import flambeau.nn  # noqa: F401
    assert "flambeau.nn" not in sys.modules


@nn_installed
def test_import_flambeau_nn_submodule_without_flambeau_nn():
    with pytest.raises(ModuleNotFoundError, match=r"flambeau-nn"):
        import flambeau.nn.functional  # noqa: F401


@nn_installed
def test_import_flambeau_nn_in_a_fresh_interpreter():
    # A fresh process: nothing imported before, so the error must come from `import flambeau` itself.
    result = subprocess.run(
        [sys.executable, "-c", "import flambeau.nn"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ModuleNotFoundError: No module named 'flambeau.nn'"), result.stderr
    assert "flambeau-nn" in last_line


@nn_installed
def test_from_flambeau_import_nn_names_the_distribution():
    # The PyTorch idiom `from torch import nn`: the hint must survive the from-import machinery,
    # which turns some ModuleNotFoundErrors into a bare "cannot import name 'nn'".
    with pytest.raises(ModuleNotFoundError, match=r"flambeau-nn"):
        from flambeau import nn  # noqa: F401


def test_pytest_plugin_entry_point_imports_nothing_of_flambeau():
    """pytest loads the kit's plugin in every run: loading it must not import the framework."""
    import subprocess
    import sys

    code = (
        "import importlib.metadata as m, sys\n"
        "ep = [e for e in m.entry_points(group='pytest11') if e.name == 'flambeau_testing'][0]\n"
        "ep.load()\n"
        "assert 'flambeau' not in sys.modules, sorted(k for k in sys.modules if k.startswith('flambeau'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
