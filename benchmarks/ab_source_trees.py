"""core-tensor and core-autograd at two git revisions, A/B: ``import flambeau`` and the per-op overhead.

For a change that moves code between modules (the layering of issue 10) and must not cost time.
Each revision's ``core-tensor/src`` and ``core-autograd/src`` are extracted with ``git archive``
(no build artefacts such as ``.egg-info`` folders, which would change how plugin metadata is read)
and put first on ``PYTHONPATH``; everything else (numpy, the CPU backend, optim) comes from the
running environment, the same for both. Every sample is a fresh interpreter, the two revisions
alternate, and the order flips each round, so that a loaded machine disturbs both alike:

- import: ``import flambeau, flambeau.autograd`` timed inside the process (bytecode cached);
- ``a + b`` and ``t[0]`` on 1-element float32 tensors, grad off: the best of 7 timeit repeats.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/ab_source_trees.py BASE [HEAD] [--rounds N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CASES = {
    "import flambeau (+autograd)": (
        "import time; t = time.perf_counter(); import flambeau, flambeau.autograd; print(time.perf_counter() - t)",
        1e3, "ms"),
    "a + b, 1 elem": (
        "import flambeau as fb, flambeau.autograd, timeit; a = fb.ones(1); b = fb.ones(1); "
        "print(min(timeit.repeat(lambda: a + b, number=20000, repeat=7)) / 20000)", 1e6, "us"),
    "t[0], 1 elem": (
        "import flambeau as fb, flambeau.autograd, timeit; t = fb.ones(1); "
        "print(min(timeit.repeat(lambda: t[0], number=20000, repeat=7)) / 20000)", 1e6, "us"),
}


def extract(rev: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "core-tensor/src", "core-autograd/src"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{tree}/core-tensor/src{os.pathsep}{tree}/core-autograd/src"
    return env


def sample(tree: Path, code: str) -> float:
    out = subprocess.run([sys.executable, "-c", code], env=environment(tree), capture_output=True, text=True,
                         check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("head", nargs="?", default="HEAD")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {rev: extract(rev, Path(tmp) / f"tree{i}") for i, rev in enumerate((args.base, args.head))}
        for tree in trees.values():  # write the bytecode caches once
            subprocess.run([sys.executable, "-c", "import flambeau, flambeau.autograd"], env=environment(tree),
                           check=True)
        results: dict[tuple[str, str], list[float]] = {(rev, case): [] for rev in trees for case in CASES}
        for r in range(args.rounds):
            order = list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))
            for case, (code, _, _) in CASES.items():
                for rev, tree in order:
                    results[(rev, case)].append(sample(tree, code))
    base, head = args.base, args.head
    print(f"| case | {base} | {head} | {head} / {base} |")
    print("| --- | --- | --- | --- |")
    for case, (_, scale, unit) in CASES.items():
        a, b = statistics.median(results[(base, case)]), statistics.median(results[(head, case)])
        print(f"| {case} | {a * scale:.2f} {unit} | {b * scale:.2f} {unit} | {b / a:.3f} |")
    print(f"medians of {args.rounds} fresh processes each, alternating; load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
