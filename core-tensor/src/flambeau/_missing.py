"""Clear errors for first-party subpackages whose distribution is not installed."""
from __future__ import annotations

import sys

SUBPACKAGES = {
    "flambeau.autograd": "flambeau-core-autograd",
    "flambeau.nn": "flambeau-nn",
    "flambeau.optim": "flambeau-optim",
    "flambeau.distributions": "flambeau-distributions",
    "flambeau.distributed": "flambeau-distributed",
    "flambeau.cuda": "flambeau-backend-cuda",
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
            f"Install it with `pip install {dist}`{_meta_package_note(dist)}."
        )


def _meta_package_note(dist: str) -> str:
    """What to say about the meta-package ``flambeau``: it is named only where installing it would help.

    Read from the installed metadata at the time of the error (never on a successful import): the
    meta-package may be installed without ``dist`` (it does not pin every distribution, e.g.
    flambeau-nn before its first release) or be the missing distribution itself.
    """
    if dist == "flambeau":
        return ""
    from importlib import metadata

    try:
        requires = metadata.requires("flambeau")
    except metadata.PackageNotFoundError:
        return ""  # not installed: what it would bring depends on its version, so name only `dist`
    pinned = any(_requirement_name(r) == dist for r in requires or ())
    if pinned:
        return " (the installed meta-package `flambeau` requires it: the install is incomplete)"
    return " (the installed meta-package `flambeau` does not include it)"


def _requirement_name(requirement: str) -> str:
    name = requirement.split(";", 1)[0]
    for stop in "<>=!~[ (":
        name = name.split(stop, 1)[0]
    return name.strip().lower().replace("_", "-").replace(".", "-")


def install() -> None:
    if not any(isinstance(f, MissingSubpackageFinder) for f in sys.meta_path):
        sys.meta_path.append(MissingSubpackageFinder())
