"""Install some of this repository's packages into the running interpreter, in one pip call.

    python .ci/install_packages.py [-c CONSTRAINTS] FOLDER[EXTRAS] ...
    e.g. python .ci/install_packages.py "core-tensor[tests]" backends/cpu

Each FOLDER is a package folder of the repository (core-tensor, backends/cpu...). By default pip builds
it from the folder. With FLAMBEAU_WHEELS=DIR set (CI builds every wheel once, from its sdist, with
.ci/build_dists.py) the package's wheel file in DIR is installed instead, by path.

Either way no flambeau-* name is ever resolved from a package index: before calling pip, this checks
that every first-party distribution the listed packages require (with the extras asked for) is one of
the listed packages, and stops with an error naming the missing folder otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own vendored TOML reader
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def is_first_party(name: str) -> bool:
    name = canonical(name)
    return name == "flambeau" or name.startswith("flambeau-")


def parse_requirement(text: str) -> tuple[str, set[str]]:
    """(canonical name, extras) of a PEP 508 requirement; markers are ignored (first-party ones have none)."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", text)
    if m is None:
        raise SystemExit(f"install_packages: cannot read the requirement {text!r}")
    extras = {e.strip() for e in (m.group(2) or "").split(",") if e.strip()}
    return canonical(m.group(1)), extras


def project(folder: str) -> dict:
    path = ROOT / folder / "pyproject.toml"
    if not path.is_file():
        raise SystemExit(f"install_packages: {folder} is not a package folder of {ROOT} (no pyproject.toml)")
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


def first_party_needs(meta: dict, extras: set[str]) -> set[str]:
    """First-party distributions required by a project with some of its extras (self-references followed)."""
    needs: set[str] = set()
    own = canonical(meta["name"])
    todo, seen = [(None, r) for r in meta.get("dependencies", [])], set()
    todo += [(e, r) for e in extras for r in meta.get("optional-dependencies", {}).get(e, [])]
    while todo:
        _, req = todo.pop()
        name, req_extras = parse_requirement(req)
        if name == own:  # `pkg[testing]` inside pkg's own extras
            for e in req_extras - seen:
                seen.add(e)
                todo += [(e, r) for r in meta.get("optional-dependencies", {}).get(e, [])]
        elif is_first_party(name):
            needs.add(name)
    return needs


def wheel_for(name: str, wheels: Path) -> Path:
    stem = name.replace("-", "_")
    found = sorted(wheels.glob(f"{stem}-[0-9]*.whl"))
    if len(found) != 1:
        raise SystemExit(f"install_packages: expected one wheel of {name} in {wheels}, found {len(found)}")
    return found[0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--constraint", action="append", default=[], help="a pip constraints file")
    parser.add_argument("packages", nargs="+", metavar="FOLDER[EXTRAS]")
    args = parser.parse_args(argv)

    wheels = Path(os.environ["FLAMBEAU_WHEELS"]) if os.environ.get("FLAMBEAU_WHEELS") else None
    specs, given, needed = [], set(), {}
    for arg in args.packages:
        m = re.fullmatch(r"([^\[\]]+)(?:\[([^\]]*)\])?", arg)
        if m is None:
            raise SystemExit(f"install_packages: cannot read {arg!r} (expected FOLDER or FOLDER[extra,...])")
        folder, extras_text = m.group(1).rstrip("/"), m.group(2) or ""
        extras = {e.strip() for e in extras_text.split(",") if e.strip()}
        meta = project(folder)
        name = canonical(meta["name"])
        given.add(name)
        for dep in first_party_needs(meta, extras):
            needed.setdefault(dep, folder)
        suffix = f"[{','.join(sorted(extras))}]" if extras else ""
        if wheels is not None:
            url = wheel_for(name, wheels).as_uri()
            # The bare name too: pip (23.2) does not match a `NAME[extra] @ URL` requirement to another
            # package's plain `NAME>=X` requirement, and would look NAME up on the index.
            specs.append(f"{name} @ {url}")
            if suffix:
                specs.append(f"{name}{suffix} @ {url}")
        else:
            specs.append(f"{ROOT / folder}{suffix}")
    missing = {dep: by for dep, by in needed.items() if dep not in given}
    if missing:
        detail = ", ".join(f"{dep} (required by {by})" for dep, by in sorted(missing.items()))
        raise SystemExit(f"install_packages: list the folders of {detail} too: no flambeau-* distribution "
                         "may be resolved from a package index")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for c in args.constraint:
        cmd += ["-c", c]
    cmd += specs
    print("install_packages:", " ".join(specs), flush=True)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
