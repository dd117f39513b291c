"""The decomposed path against the native kernel, on the CPU backend, at 1M elements.

A backend that implements only the core tier runs every other op through core-tensor's
decompositions. This measures what that costs where both exist: the CPU backend's own kernel
(``native``) against the op's decomposition run on the CPU's core kernels (``decomposed``, the
dispatcher's no-kernel path: the meta function, then the composite), interleaved, medians of
the blocks. The softmax-like chain is ``logsumexp`` (amax, sub, exp, sum, log, add), against the
CPU's kernel; ``softmax`` itself is not declared yet (flambeau-nn), and ``cumsum`` is in the core
tier (no decomposition to measure). The bar is a ratio of at most 3.

    python benchmarks/bench_decompositions.py [--quick] [--threads N]
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from _harness import interleave

N = 1000  # 1000 x 1000: 1M elements


def _decomposed(name: str) -> Callable[..., Any]:
    """Op ``name`` as a backend without its kernel runs it."""
    import flambeau as fb
    from flambeau.ops._dispatch import _without_kernel
    from flambeau.ops._registry import OPS

    op = OPS[name]
    if op.composite is None:
        raise SystemExit(f"{name} has no decomposition")
    dev = fb.device("cpu")

    def call(*args: Any) -> Any:
        params = op.parameters[len(args):]
        full = args + tuple(p.default for p in params)
        return _without_kernel(op, dev, full, None, False)
    return call


def workloads() -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    import flambeau as fb

    fb.manual_seed(0)
    x = fb.rand(N, N) + 0.5
    a, b, c = fb.rand(N, N), fb.rand(N, N), fb.rand(N, N)
    v = fb.rand(N * N)
    cases = [
        ("logsumexp (dim 1)", lambda: fb.logsumexp(x, 1), lambda: _decomposed("logsumexp")(x, 1)),
        ("addmm 1000^2", lambda: fb.addmm(c, a, b), lambda: _decomposed("addmm")(c, a, b)),
        ("var (dim 1)", lambda: fb.var(x, 1), lambda: _decomposed("var")(x, 1)),
        ("var (all)", lambda: fb.var(v), lambda: _decomposed("var")(v)),
        ("mean (dim 1)", lambda: fb.mean(x, 1), lambda: _decomposed("mean")(x, 1)),
        ("sigmoid", lambda: fb.sigmoid(x), lambda: _decomposed("sigmoid")(x)),
        ("clamp(0.6, 1.2)", lambda: fb.clamp(x, 0.6, 1.2), lambda: _decomposed("clamp")(x, 0.6, 1.2)),
        ("index_select dim 0", lambda: fb.index_select(x, 0, idx), lambda: _decomposed("index_select")(x, 0, idx)),
    ]
    return cases


idx = None


def main(quick: bool) -> None:
    global idx
    import flambeau as fb

    if "--threads" in sys.argv:
        fb.set_num_threads(int(sys.argv[sys.argv.index("--threads") + 1]))
    print(f"threads: {fb.get_num_threads()}")
    idx = fb.randint(0, N, (N,))
    rounds, block = (3, 0.15) if quick else (7, 0.3)
    print(f"{'workload (1M float32)':28} {'native ms':>10} {'decomposed ms':>14} {'ratio':>6}")
    for label, native, decomposed in workloads():
        r = interleave({"native": native, "decomposed": decomposed}, rounds=rounds, block_seconds=block)
        n, d = r["native"].median * 1e3, r["decomposed"].median * 1e3
        print(f"{label:28} {n:10.3f} {d:14.3f} {d / n:6.2f}")


if __name__ == "__main__":
    main("--quick" in sys.argv)
