"""The decomposed path against the native kernel, on the CPU backend, at 1M elements.

A backend that implements only the core tier runs every other op through core-tensor's
decompositions. This measures what that costs where both exist: the CPU backend's own kernel
(``native``) against the op's decomposition run on the CPU's core kernels (``decomposed``, the
dispatcher's no-kernel path: the meta function, then the composite), interleaved, medians of
the blocks. The softmax-like chain is ``logsumexp`` (amax, sub, exp, sum, log, add), against the
CPU's kernel; ``softmax`` itself is not declared yet (flambeau-nn), and ``cumsum`` is in the core
tier (no decomposition to measure). The bar is a ratio of at most 3.

With ``--cpu-time`` the blocks are timed in this process's CPU time (``time.process_time``)
instead of wall time: on a loaded machine a single-threaded run's wall time mostly measures the
wait for a core, in both columns alike but not proportionally (use it with ``--threads 1``).

    python benchmarks/bench_decompositions.py [--quick] [--threads N] [--cpu-time] [--only LABEL_PART]
"""
from __future__ import annotations

import sys
import time
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
    bounds = fb.linspace(0, 1, 127)
    cases = [
        ("logsumexp (dim 1)", lambda: fb.logsumexp(x, 1), lambda: _decomposed("logsumexp")(x, 1)),
        ("addmm 1000^2", lambda: fb.addmm(c, a, b), lambda: _decomposed("addmm")(c, a, b)),
        ("var (dim 1)", lambda: fb.var(x, 1), lambda: _decomposed("var")(x, 1)),
        ("var (all)", lambda: fb.var(v), lambda: _decomposed("var")(v)),
        ("mean (dim 1)", lambda: fb.mean(x, 1), lambda: _decomposed("mean")(x, 1)),
        ("sigmoid", lambda: fb.sigmoid(x), lambda: _decomposed("sigmoid")(x)),
        # clamp is in the core tier (a backend's one-pass kernel); its one-bound forms and maximum decompose onto it
        ("clamp_min(0.6)", lambda: fb.clamp_min(x, 0.6), lambda: _decomposed("clamp_min")(x, 0.6)),
        ("maximum", lambda: fb.maximum(a, b), lambda: _decomposed("maximum")(a, b)),
        ("index_select dim 0", lambda: fb.index_select(x, 0, idx), lambda: _decomposed("index_select")(x, 0, idx)),
        # scans by doubling (log2(1000) = 10 rounds of several passes) and a bisection: beyond the 3x of
        # issue 12's sample, measured so that the cost of running them decomposed is known
        ("cummax (dim 1)", lambda: fb.cummax(x, 1), lambda: _decomposed("cummax")(x, 1)),
        ("logcumsumexp (dim 1)", lambda: fb.logcumsumexp(x, 1), lambda: _decomposed("logcumsumexp")(x, 1)),
        ("bucketize, 127 bounds", lambda: fb.bucketize(v, bounds), lambda: _decomposed("bucketize")(v, bounds)),
        ("quantile 0.3 (dim 1)", lambda: fb.quantile(x, 0.3, 1), lambda: _decomposed("quantile")(x, 0.3, 1)),
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
    cpu_time = "--cpu-time" in sys.argv
    if cpu_time:
        import _harness

        _harness.CLOCK = time.process_time
    print(f"{'workload (1M float32)':28} {'native ms':>10} {'decomposed ms':>14} {'ratio':>6}"
          + ("  (CPU time)" if cpu_time else ""))
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    for label, native, decomposed in workloads():
        if only not in label:
            continue
        r = interleave({"native": native, "decomposed": decomposed}, rounds=rounds, block_seconds=block)
        n, d = r["native"].median * 1e3, r["decomposed"].median * 1e3
        print(f"{label:28} {n:10.3f} {d:14.3f} {d / n:6.2f}")


if __name__ == "__main__":
    main("--quick" in sys.argv)
