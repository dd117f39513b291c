"""Per-call cost of common ops on a small (4 x 4 float32) tensor, in µs: framework overhead
beyond ``a + b`` (in-place update, scalar operand, unary math, reductions, views, indexing, a
tiny matmul). numpy's in-place form is ``np.add(a, b, out=a)``."""
from __future__ import annotations

from _harness import Library, Row, interleave, rows_from


def _ops(lib: Library) -> dict:
    a, b = lib.make((4, 4)), lib.make((4, 4))
    if lib.name == "numpy":
        np = lib.module
        return {"a.add_(b)": lambda: np.add(a, b, out=a), "a * 2.0": lambda: a * 2.0, "exp(a)": lambda: np.exp(a),
                "a.sum()": lambda: a.sum(), "a.sum(0)": lambda: a.sum(0), "a.t()": lambda: a.T,
                "a.view(16)": lambda: a.reshape(16),
                "a[0]": lambda: a[0], "a @ a": lambda: a @ a}
    return {"a.add_(b)": lambda: a.add_(b), "a * 2.0": lambda: a * 2.0, "exp(a)": lambda: a.exp(),
            "a.sum()": lambda: a.sum(), "a.sum(0)": lambda: a.sum(0), "a.t()": lambda: a.t(),
            "a.view(16)": lambda: a.view(16),
            "a[0]": lambda: a[0], "a @ a": lambda: a @ a}


def run(libs: list[Library], quick: bool = False) -> list[Row]:
    per_lib = {lib.name: _ops(lib) for lib in libs}
    rows = []
    for op in per_lib[libs[0].name]:
        results = interleave({name: ops[op] for name, ops in per_lib.items()}, rounds=5 if quick else 11,
                             block_seconds=0.03 if quick else 0.06, switch_sleep=0.05)
        rows += rows_from(f"4x4 {op}", results, "us", lambda t: t * 1e6, higher_is_better=False)
    return rows


if __name__ == "__main__":
    from run import main

    main(["small"])
