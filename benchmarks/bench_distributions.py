"""flambeau.distributions against torch.distributions, interleaved in one run (issue 16).

Cases (bar from the issue: flambeau's time at most 1.0x PyTorch's):
  normal_log_prob_1M   ``Normal(loc, scale).log_prob(x)`` on 1M float32 elements
  normal_rsample_1M    ``Normal(loc, scale).rsample()`` with 1M elements
  gamma_rsample_1M     ``Gamma(alpha, 1).rsample()`` with 1M elements and its gradient (``.sum().backward()``)
  dirichlet_rsample    ``Dirichlet(alpha).rsample()`` with alpha of shape (10000, 10)
  mvn_log_prob_64      ``MultivariateNormal(loc, covariance_matrix=C).log_prob(x)``, C 64x64, x (10000, 64),
                       construction (the Cholesky factorisation) included

Usage: python benchmarks/bench_distributions.py [--rounds N] [--block S] [--threads T]
(needs flambeau-distributions and torch in one environment).
"""
from __future__ import annotations

import argparse

import numpy as np

import _harness as H

N = 1_000_000


def workloads(libs, case: str):
    rng = np.random.default_rng(0)
    loc = rng.normal(size=N).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, size=N).astype(np.float32)
    x = rng.normal(size=N).astype(np.float32)
    alpha = rng.uniform(0.5, 5.0, size=N).astype(np.float32)
    dir_alpha = rng.uniform(0.5, 5.0, size=(10000, 10)).astype(np.float32)
    m = rng.normal(size=(64, 64))
    cov = (m @ m.T / 64 + np.eye(64)).astype(np.float32)
    mloc = rng.normal(size=64).astype(np.float32)
    pts = rng.normal(size=(10000, 64)).astype(np.float32)
    out = {}
    for lib in libs:
        mod = lib.module
        D = mod.distributions
        t = mod.from_numpy
        if case == "normal_log_prob_1M":
            d = D.Normal(t(loc), t(scale), validate_args=False)
            xt = t(x)
            out[lib.name] = lambda d=d, xt=xt: d.log_prob(xt)
        elif case == "normal_rsample_1M":
            d = D.Normal(t(loc), t(scale), validate_args=False)
            out[lib.name] = lambda d=d: d.rsample()
        elif case == "gamma_rsample_1M":
            a = t(alpha.copy()).requires_grad_()

            def run(a=a, D=D):
                a.grad = None
                D.Gamma(a, 1.0, validate_args=False).rsample().sum().backward()
            out[lib.name] = run
        elif case == "dirichlet_rsample":
            d = D.Dirichlet(t(dir_alpha), validate_args=False)
            out[lib.name] = lambda d=d: d.rsample()
        elif case == "mvn_log_prob_64":
            c, ml, p = t(cov), t(mloc), t(pts)
            out[lib.name] = lambda c=c, ml=ml, p=p, D=D: D.MultivariateNormal(
                ml, covariance_matrix=c, validate_args=False).log_prob(p)
    return out


CASES = ("normal_log_prob_1M", "normal_rsample_1M", "gamma_rsample_1M", "dirichlet_rsample", "mvn_log_prob_64")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--block", type=float, default=0.5, help="seconds per timed block")
    parser.add_argument("--threads", type=int, default=H.THREADS)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    H.THREADS = args.threads
    libs = H.load_libraries(("flambeau", "torch"))
    import flambeau.distributions  # noqa: F401  (makes fb.distributions available on the module)
    import torch.distributions  # noqa: F401

    rows = []
    for case in args.cases.split(","):
        results = H.interleave(workloads(libs, case), args.rounds, args.block)
        rows += H.rows_from(case, results, "ms", lambda t: t * 1e3, higher_is_better=False)
    print(f"threads={H.THREADS} rounds={args.rounds} block={args.block}s")
    print(H.format_rows(rows))


if __name__ == "__main__":
    main()
