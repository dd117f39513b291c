"""Turn a ``run.py --json`` file into the Markdown tables of ``docs/performance.md``.

``python benchmarks/report.py results.json``. The ratio column is flambeau's speed relative to
the other library (above 1: flambeau is faster), whether the unit is a time or a rate.
"""
from __future__ import annotations

import json
import sys


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def markdown(data: dict) -> str:
    env = data["environment"]
    lines = [
        f"- date: {env['date']}; commit: `{env['commit']}`; Python {env['python']}; {env['machine']}; "
        f"threads: {env['threads']}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()),
        "- BLAS / OpenMP runtimes: " + "; ".join(env["blas"]),
        f"- OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE={env['OPENBLAS_L2_SIZE']}",
        f"- command: `{data['command']}`" + (" (quick mode)" if data.get("quick") else ""),
        "",
        "| benchmark | library | median | unit | min .. max | flambeau's speed vs it |",
        "|---|---|---:|---|---:|---:|",
    ]
    rows = data["rows"]
    fb = {r["benchmark"]: r for r in rows if r["library"] == "flambeau"}
    for r in rows:
        ratio = ""
        ref = fb.get(r["benchmark"])
        if ref is not None and r["library"] != "flambeau" and r["value"] and ref["value"]:
            speed = ref["value"] / r["value"] if r["higher_is_better"] else r["value"] / ref["value"]
            ratio = f"{speed:.2f}x"
        lines.append(f"| {r['benchmark']} | {r['library']} | {_fmt(r['value'])} | {r['unit']} | "
                     f"{_fmt(r['min'])} .. {_fmt(r['max'])} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(markdown(json.load(f)))
