"""Build every package's sdist, then its wheel from that sdist, and check what they contain.

    python .ci/build_dists.py OUT [FOLDER ...]      (default: the folders `./dev packages` lists)

For each package folder: ``uv build`` makes the sdist and builds the wheel from the unpacked sdist (not
from the folder), so a file the build or the tests need but the sdist lacks fails here. Both land in
OUT; each sdist is also unpacked into OUT/src/FOLDER, where CI runs the package's tests from
(FLAMBEAU_TESTS_ROOT), so the tests that pass are the ones a downstream packager gets.

Checks, each an error naming the file:
- the sdist holds every file git tracks in the folder (sources, tests, conftest files, helpers, fake
  dists, README, CHANGELOG, LICENSE), and the LICENSE is the repository's;
- the wheel holds the LICENSE (``*.dist-info/licenses/LICENSE``), a ``py.typed`` in each Python package it
  ships, no tests, and metadata with the license expression, classifiers and project URLs;
- the wheel's version is the one in the package's single version source;
- a native extension (the CPU backend's) carries no symbol table (stripped at link time) on Linux.

The build tool is uv (installed with tox-uv by .ci/run); UV=PATH names its executable.
"""
from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def folders_from_dev() -> list[str]:
    # Every folder, backends/cuda included: `./dev` leaves it out where no GPU is found (its tests need
    # none to install), but its tox env installs its wheel like any other package's.
    env = dict(os.environ, FLAMBEAU_CUDA="1")
    out = subprocess.run(["bash", str(ROOT / "dev"), "packages"], capture_output=True, text=True, check=True,
                         env=env)
    return out.stdout.split()


def tracked_files(folder: str) -> list[str]:
    """Files git tracks under the folder, relative to it (empty outside a git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    prefix = folder.rstrip("/") + "/"
    return [p[len(prefix):] for p in out.stdout.decode().split("\0") if p.startswith(prefix)]


def build(folder: str, out: Path, uv: str) -> tuple[Path, Path]:
    before = set(out.iterdir()) if out.exists() else set()
    # Default uv behaviour for a directory: the sdist first, then the wheel built from that sdist.
    subprocess.run([uv, "build", "--quiet", "--out-dir", str(out), str(ROOT / folder)], check=True)
    new = set(out.iterdir()) - before
    sdists = [p for p in new if p.name.endswith(".tar.gz")]
    wheels = [p for p in new if p.suffix == ".whl"]
    if len(sdists) != 1 or len(wheels) != 1:
        raise SystemExit(f"build_dists: {folder}: expected one sdist and one wheel, got {sorted(p.name for p in new)}")
    return sdists[0], wheels[0]


def check_sdist(folder: str, sdist: Path, unpack_to: Path) -> list[str]:
    errors = []
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        top = names[0].split("/", 1)[0]
        inside = {n.split("/", 1)[1] for n in names if "/" in n}
        for rel in tracked_files(folder):
            if rel not in inside:
                errors.append(f"{sdist.name} lacks {folder}/{rel}")
        license_member = tar.extractfile(f"{top}/LICENSE") if "LICENSE" in inside else None
        if license_member is None:
            errors.append(f"{sdist.name} has no LICENSE")
        elif license_member.read() != (ROOT / "LICENSE").read_bytes():
            errors.append(f"{sdist.name}: its LICENSE differs from the repository's")
        tmp = unpack_to.parent / (unpack_to.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tar.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    shutil.rmtree(unpack_to, ignore_errors=True)
    unpack_to.parent.mkdir(parents=True, exist_ok=True)
    (tmp / top).rename(unpack_to)
    tmp.rmdir()
    return errors


def _version_source(folder: str) -> str | None:
    """The version the package's one source says: pyproject's static version or its _version.py."""
    try:
        import tomllib
    except ModuleNotFoundError:
        return None
    with open(ROOT / folder / "pyproject.toml", "rb") as f:
        data = tomllib.load(f)
    if "version" in data["project"]:
        return data["project"]["version"]
    attr = data["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module = attr.rsplit(".", 1)[0]
    path = ROOT / folder / "src" / (module.replace(".", "/") + ".py")
    scope: dict = {}
    exec(path.read_text(), scope)  # a one-line module: __version__ = "X"
    return scope["__version__"]


def check_wheel(folder: str, wheel: Path) -> list[str]:
    errors = []
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        info = next(n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info"))
        if f"{info}/licenses/LICENSE" not in names:
            errors.append(f"{wheel.name} has no {info}/licenses/LICENSE")
        elif zf.read(f"{info}/licenses/LICENSE") != (ROOT / "LICENSE").read_bytes():
            errors.append(f"{wheel.name}: its LICENSE differs from the repository's")
        packages = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
        # A package is typed by the py.typed of its top: flambeau/ for core-tensor, flambeau/optim/ for
        # a distribution that ships a subpackage of the shared namespace.
        tops = {p for p in packages if not any(p.startswith(q + "/") for q in packages)}
        for top in sorted(tops):
            if f"{top}/py.typed" not in names:
                errors.append(f"{wheel.name} has no {top}/py.typed")
        tests = [n for n in names if n.startswith("tests/") or "/tests/" in n]
        if tests:
            errors.append(f"{wheel.name} ships tests: {tests[:3]}")
        meta = email.parser.Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        if meta.get("License-Expression") != "BSD-3-Clause":
            errors.append(f"{wheel.name}: License-Expression is {meta.get('License-Expression')!r}")
        if not meta.get_all("Classifier"):
            errors.append(f"{wheel.name} has no classifiers")
        if not meta.get_all("Project-URL"):
            errors.append(f"{wheel.name} has no project URLs")
        want = _version_source(folder)
        if want is not None and meta.get("Version") != want:
            errors.append(f"{wheel.name}: version {meta.get('Version')} but the package's source says {want}")
        if sys.platform.startswith("linux"):
            for n in names:
                if n.endswith(".so") and elf_has_symtab(zf.read(n)):
                    errors.append(f"{wheel.name}: {n} is not stripped (it has a .symtab section)")
    return errors


def elf_has_symtab(data: bytes) -> bool:
    """Whether an ELF file has a SHT_SYMTAB section (a stripped one has only .dynsym)."""
    if data[:4] != b"\x7fELF":
        return False
    is64, order = data[4] == 2, "little" if data[5] == 1 else "big"

    def num(offset: int, size: int) -> int:
        return int.from_bytes(data[offset:offset + size], order)

    shoff = num(0x28, 8) if is64 else num(0x20, 4)
    shentsize, shnum = (num(0x3A, 2), num(0x3C, 2)) if is64 else (num(0x2E, 2), num(0x30, 2))
    sht_symtab = 2
    return any(num(shoff + i * shentsize + 4, 4) == sht_symtab for i in range(shnum))


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit(__doc__)
    out = Path(argv[0]).resolve()
    folders = argv[1:] or folders_from_dev()
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"
    out.mkdir(parents=True, exist_ok=True)
    errors = []
    for folder in folders:
        sdist, wheel = build(folder, out, uv)
        found = check_sdist(folder, sdist, out / "src" / folder) + check_wheel(folder, wheel)
        errors += found
        print(f"build_dists: {folder}: {sdist.name}, {wheel.name}: {'ok' if not found else 'FAILED'}", flush=True)
    for e in errors:
        print(f"build_dists: ERROR: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
