"""What the inference-tensor check costs on the wrap path: ``add`` generated twice, A/B, one process.

The dispatcher's generated functions give each result a version counter; since inference tensors
(``inference_mode()``) carry a mark in it, the line reads a process-wide count of threads in
inference mode first (``[0] if not _IT[0] else _new_vc()``). This builds ``flambeau.add`` with
that line and with the plain ``[0]`` it replaced, and times both interleaved on 1-element
float32 tensors (min and 10th percentile of 40 blocks each: robust to a loaded machine).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/ab_wrap_inference.py
"""
from __future__ import annotations

import timeit

import flambeau as fb
from flambeau.ops import _codegen
from flambeau.ops._registry import OPS

_CHECKED = "[0] if not _IT[0] else _new_vc()"


def build(expr: str):
    orig = _codegen._wrap_lines
    _codegen._wrap_lines = lambda indent: [line.replace(_CHECKED, expr) for line in orig(indent)]
    try:
        return _codegen.build(OPS["add"])
    finally:
        _codegen._wrap_lines = orig


def main() -> None:
    fns = {"plain [0]": build("[0]"), "inference check": build(_CHECKED)}
    a, b = fb.ones(1), fb.ones(1)
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(40):
        for name, f in fns.items():
            times[name].append(min(timeit.repeat(lambda f=f: f(a, b, alpha=1), number=2000, repeat=5)) / 2000)
    for name, v in times.items():
        v.sort()
        print(f"{name:16s} min {v[0] * 1e9:6.0f} ns   10th pct {v[len(v) // 10] * 1e9:6.0f} ns")


if __name__ == "__main__":
    main()
