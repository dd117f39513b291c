"""Make this checkout's packages importable, with their entry points, without pip or a network.

For a GPU machine that cannot reach an index (the device machine): for each package folder it writes a
``NAME-VERSION.dist-info`` (METADATA with the Requires-Dist flambeau checks before loading a plugin, and
entry_points.txt, both read from pyproject.toml) into ``SITE``, and prints a PYTHONPATH made of ``SITE``
and every package's ``src``. Nothing is built or copied; the CPU backend's C++ is built in place
separately (gpu_check.sh). Python 3.11+ (tomllib).

Usage: python install_tree.py SITE FOLDER...   (folders relative to the repository root)
"""
from __future__ import annotations

import os
import re
import sys
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _version(folder: str, project: dict) -> str:
    if "version" in project:
        return project["version"]
    with open(os.path.join(ROOT, folder, "pyproject.toml"), "rb") as f:
        attr = tomllib.load(f)["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module = attr.rsplit(".", 1)[0]
    path = os.path.join(ROOT, folder, "src", *module.split(".")) + ".py"
    text = open(path).read()
    return re.search(r"__version__\s*=\s*[\"']([^\"']+)", text).group(1)


def write(site: str, folder: str) -> str:
    with open(os.path.join(ROOT, folder, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    name, version = project["name"], _version(folder, project)
    info = os.path.join(site, f"{name.replace('-', '_')}-{version}.dist-info")
    os.makedirs(info, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {req}" for req in project.get("dependencies", [])]
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("\n".join(lines) + "\n")
    groups = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    with open(os.path.join(info, "entry_points.txt"), "w") as f:
        for group, entries in groups.items():
            f.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n")
    return os.path.join(ROOT, folder, "src")


def main() -> None:
    site, folders = os.path.abspath(sys.argv[1]), sys.argv[2:]
    os.makedirs(site, exist_ok=True)
    paths = [site] + [write(site, folder) for folder in folders]
    print(os.pathsep.join(paths))


if __name__ == "__main__":
    main()
