"""Clear errors for first-party subpackages whose distribution is not installed."""
from __future__ import annotations

import sys

SUBPACKAGES = {
    "flambeau.autograd": "flambeau-core-autograd",
    "flambeau.nn": "flambeau-nn",
    "flambeau.optim": "flambeau-optim",
    "flambeau.distributions": "flambeau-distributions",
    "flambeau.cli": "flambeau",
}


class MissingSubpackageFinder:
    """Last on ``sys.meta_path``: reached only when no installed distribution provides the module.

    A meta path finder needs only ``find_spec``; not subclassing ``importlib.abc.MetaPathFinder``
    spares ``import flambeau`` importing importlib.abc (and with it importlib.resources, tempfile,
    shutil, random...: ~8 ms).
    """

    def find_spec(self, fullname, path, target=None):
        top = ".".join(fullname.split(".")[:2])
        dist = SUBPACKAGES.get(top)
        if dist is None:
            return None
        if fullname != top and top in sys.modules:
            return None  # the subpackage is there; its own submodule is missing: the usual error
        # No `name=`: `from flambeau import nn` swallows a ModuleNotFoundError whose name is
        # "flambeau.nn" and reports "cannot import name 'nn'", losing the hint below.
        raise ModuleNotFoundError(
            f"No module named '{fullname}': it is provided by the distribution '{dist}'. "
            f"Install it with `pip install {dist}` (or the meta-package `flambeau`)."
        )


def install() -> None:
    if not any(isinstance(f, MissingSubpackageFinder) for f in sys.meta_path):
        sys.meta_path.append(MissingSubpackageFinder())
