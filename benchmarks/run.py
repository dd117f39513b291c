"""Run flambeau's benchmarks: ``python benchmarks/run.py [--quick] [--json FILE] [NAME ...]``.

NAME is any of ``overhead small elementwise reduction matmul import`` (all by default). flambeau,
numpy and, when it imports, PyTorch run interleaved in one process, each with 2 threads.
Benchmarks measure; they do not pass or fail. Results and the commands that produced them
go in ``docs/performance.md``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _harness  # noqa: E402

BENCHMARKS = ("overhead", "small", "elementwise", "reduction", "matmul", "import")


def _module(name: str):
    return __import__({"overhead": "bench_overhead", "small": "bench_small_ops", "elementwise": "bench_elementwise",
                       "reduction": "bench_reduction", "matmul": "bench_matmul", "import": "bench_import"}[name])


def _commit() -> str:
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except OSError:
        return "?"


def environment(libs: list) -> dict:
    versions = {lib.name: getattr(lib.module, "__version__", "?") for lib in libs}
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "versions": versions,
        "threads": _harness.THREADS,
        "blas": _harness.blas_info(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE", "(unset)"),
    }


def main(argv: list[str] | None = None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", choices=[*BENCHMARKS, []], help="which to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter blocks (a smoke run, noisier)")
    parser.add_argument("--libs", default="flambeau,numpy,torch", help="comma-separated libraries")
    parser.add_argument("--json", metavar="FILE", help="also write the results and environment as JSON")
    parser.add_argument("--threads", type=int, default=_harness.THREADS,
                        help=f"threads for every library's kernels (default {_harness.THREADS})")
    args = parser.parse_args(argv)
    _harness.THREADS = args.threads
    libs = _harness.load_libraries(tuple(args.libs.split(",")))
    env = environment(libs)
    for key, value in env.items():
        print(f"# {key}: {value}")
    rows = []
    for name in args.benchmarks or BENCHMARKS:
        new = _module(name).run(libs, quick=args.quick)
        rows += new
        print(_harness.format_rows(new), flush=True)
    print("\n" + _harness.format_rows(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "command": " ".join(sys.argv), "quick": args.quick,
                       "rows": [r.as_dict() for r in rows]}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
