"""Write a pip constraints file pinning every third-party runtime dependency to its declared lower bound.

    python .ci/lowest_constraints.py OUTPUT FOLDER ...

For each FOLDER's ``project.dependencies`` (not its extras: the test tools are not the packages' ranges),
every requirement on a third-party distribution becomes ``name==LOWER`` (its marker kept), LOWER being the
version of its ``>=`` (or ``~=`` / ``==``) clause. The tox environment ``min-versions`` installs the packages
with this file, so each lower bound the packages declare is one that CI has run the tests against.

A dependency without a lower bound, or declared with different lower bounds by two packages (the
environment could test only the higher one), is an error: the ranges must say what was tested.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip's own vendored TOML reader
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)(?:;(.*))?$")
LOWER = re.compile(r"(?:>=|~=|==)\s*([0-9][0-9A-Za-z.]*)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lowest_pins(folders: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """{(name, marker): (lower bound, the folder that declared it)} over the folders' runtime dependencies."""
    pins: dict[tuple[str, str], tuple[str, str]] = {}
    for folder in folders:
        with open(ROOT / folder / "pyproject.toml", "rb") as f:
            deps = tomllib.load(f)["project"].get("dependencies", [])
        for req in deps:
            m = REQUIREMENT.match(req)
            if m is None:
                raise SystemExit(f"lowest_constraints: cannot read {req!r} in {folder}")
            name, spec, marker = canonical(m.group(1)), m.group(2), (m.group(3) or "").strip()
            if name == "flambeau" or name.startswith("flambeau-"):
                continue
            lower = LOWER.search(spec)
            if lower is None:
                raise SystemExit(f"lowest_constraints: {folder} requires {req!r} with no lower bound")
            key = (name, marker)
            if key in pins and pins[key][0] != lower.group(1):
                raise SystemExit(f"lowest_constraints: {name} has lower bound {pins[key][0]} in {pins[key][1]} "
                                 f"but {lower.group(1)} in {folder}: declare one bound")
            pins[key] = (lower.group(1), folder)
    return pins


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        raise SystemExit(__doc__)
    output, folders = Path(argv[0]), argv[1:]
    lines = [f"{name}=={version}" + (f"; {marker}" if marker else "")
             for (name, marker), (version, _) in sorted(lowest_pins(folders).items())]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(line + "\n" for line in lines))
    print(f"lowest_constraints: {output}: " + ", ".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
