"""``import flambeau`` imports flambeau.distributions for its op plugin, not its ~50 modules: they
load, all at once, on the first use of a public name of the package (``__init__.py``)."""
from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()


def test_import_flambeau_loads_only_the_plugin_modules():
    (line,) = _run("import sys, flambeau\n"
                   "print(sorted(m for m in sys.modules if m.startswith('flambeau.distributions')))")[-1:]
    assert line == ("['flambeau.distributions', 'flambeau.distributions._ops', 'flambeau.distributions._samplers', "
                    "'flambeau.distributions._version']")


def test_first_public_name_loads_every_module_and_the_star_import_sees_the_transforms():
    lines = _run("import sys, flambeau.distributions as D\n"
                 "n = D.Normal(0.0, 1.0)\n"
                 "print(len([m for m in sys.modules if m.startswith('flambeau.distributions.')]) > 40)\n"
                 "print('ExpTransform' in D.__all__, 'Normal' in dir(D))\n"
                 "ns = {}; exec('from flambeau.distributions import *', ns)\n"
                 "print(ns['Normal'] is D.Normal, ns['ExpTransform'] is D.transforms.ExpTransform)\n")
    assert lines[-3:] == ["True", "True True", "True True"]


def test_a_submodule_imported_first_then_the_package_names():
    # A submodule's own `from . import constraints` must not start the package's full load while
    # it is half-imported (a circular import), and the names must then be the submodules' own.
    lines = _run("import flambeau.distributions.kl as kl\n"
                 "import flambeau.distributions as D\n"
                 "print(D.kl_divergence is kl.kl_divergence, D.Bernoulli.__module__)\n")
    assert lines[-1] == "True flambeau.distributions.bernoulli"
