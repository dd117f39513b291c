"""Every CPU kernel that takes integer values or sizes, called with extreme integers.

Run as ``python _int_fuzz.py``; prints one line per call. Each call must return the reference
answer (numpy, or the maths written out) or raise a Python exception where PyTorch refuses (or
the size cannot be allocated under the 4 GiB address-space limit set here, so that a huge but
valid size fails fast). A crash, a hang or a wrong or empty result fails. Kept out of pytest's
process: numpy and C++ kernels handed unchecked extremes have crashed the interpreter.
"""
from __future__ import annotations

import resource
import sys
from typing import Any, Callable

import numpy as np

EXTREMES = [2 ** 63 - 1, -2 ** 63, 2 ** 62, 2 ** 31, -1, 0]
RAISES = object()  # the reference for a call that must raise


def _cases(fb) -> list[tuple[str, Callable[[int], Any], Callable[[int], Any]]]:
    """(name, call(v), reference(v): an array, RAISES, or None when only 'no crash' can be said)."""
    x5 = fb.arange(5.0)
    x33 = fb.arange(9.0).view(3, 3)
    n33 = np.arange(9.0).reshape(3, 3)
    small = lambda v, lo, hi: lo <= v < hi  # noqa: E731

    def tri(fn, r, c, o, huge=RAISES):
        """numpy's triangle of a small matrix; ``huge`` for sizes past it."""
        if r < 0 or c < 0:
            return RAISES
        if r > 64 or c > 64:
            return huge
        return np.array(fn(r, min(max(o, -r - 1), c + 1), c))

    empty = np.zeros((2, 0), dtype=np.int64)

    def diag(a, o):
        if o >= a.shape[1] or -o >= a.shape[0]:
            return np.zeros(0)
        return np.diagonal(a, o)

    def split_ref(v):
        if v <= 0:
            return RAISES
        return np.arange(5.0)[:min(v, 5)]

    return [
        ("bincount value", lambda v: fb.bincount(fb.tensor([v, 1])),
         lambda v: np.bincount([v, 1]) if small(v, 0, 1 << 20) else RAISES),
        ("bincount minlength", lambda v: fb.bincount(fb.tensor([1, 2]), minlength=v),
         lambda v: np.bincount([1, 2], minlength=v) if small(v, 0, 1 << 20) else RAISES),
        ("bincount weights", lambda v: fb.bincount(fb.tensor([v]), weights=fb.tensor([0.5], dtype=fb.float64)),
         lambda v: np.bincount([v], weights=[0.5]) if small(v, 0, 1 << 20) else RAISES),
        ("histc bins", lambda v: fb.histc(x5, bins=v, min=0, max=4),
         lambda v: np.histogram(np.arange(5.0), bins=v, range=(0, 4))[0] if small(v, 1, 1 << 20) else RAISES),
        ("repeat_interleave counts", lambda v: fb.repeat_interleave(fb.tensor([v, 1])),
         lambda v: np.repeat([0, 1], [v, 1]) if small(v, 0, 1 << 20) else RAISES),
        ("repeat_interleave tensor", lambda v: fb.arange(2.0).repeat_interleave(fb.tensor([v, 1])),
         lambda v: np.repeat([0.0, 1.0], [v, 1]) if small(v, 0, 1 << 20) else RAISES),
        ("repeat_interleave int", lambda v: fb.arange(2.0).repeat_interleave(v),
         lambda v: np.repeat([0.0, 1.0], v) if small(v, 0, 1 << 20) else RAISES),
        ("tril_indices rows", lambda v: fb.tril_indices(v, 3), lambda v: tri(np.tril_indices, v, 3, 0)),
        # three rows of a wide matrix: only the first three columns can hold entries
        ("tril_indices cols", lambda v: fb.tril_indices(3, v), lambda v: tri(np.tril_indices, 3, min(v, 3), 0)),
        ("tril_indices square", lambda v: fb.tril_indices(v, v), lambda v: tri(np.tril_indices, v, v, 0)),
        ("tril_indices empty", lambda v: fb.tril_indices(v, 0), lambda v: tri(np.tril_indices, v, 0, 0, empty)),
        ("tril_indices offset", lambda v: fb.tril_indices(3, 4, v), lambda v: tri(np.tril_indices, 3, 4, v)),
        # a tall matrix of three columns: only its first three rows can hold entries
        ("triu_indices rows", lambda v: fb.triu_indices(v, 3), lambda v: tri(np.triu_indices, min(v, 3), 3, 0)),
        ("triu_indices square", lambda v: fb.triu_indices(v, v), lambda v: tri(np.triu_indices, v, v, 0)),
        ("triu_indices offset", lambda v: fb.triu_indices(4, 3, v), lambda v: tri(np.triu_indices, 4, 3, v)),
        ("arange", lambda v: fb.arange(v), lambda v: np.arange(v) if small(v, 0, 1 << 20) else RAISES),
        ("linspace steps", lambda v: fb.linspace(0, 1, v),
         lambda v: np.linspace(0, 1, v) if small(v, 0, 1 << 20) else RAISES),
        ("full size", lambda v: fb.full((v,), 1.0), lambda v: np.ones(v) if small(v, 0, 1 << 20) else RAISES),
        ("zeros size", lambda v: fb.zeros(v, 2), lambda v: np.zeros((v, 2)) if small(v, 0, 1 << 20) else RAISES),
        ("eye", lambda v: fb.eye(v), lambda v: np.eye(v) if small(v, 0, 1 << 10) else RAISES),
        ("full int64 value", lambda v: fb.full((2,), v, dtype=fb.int64),
         lambda v: np.full(2, v, dtype=np.int64)),
        ("randint high", lambda v: fb.randint(0, v, (4,)), lambda v: None if v > 0 else RAISES),
        ("multinomial samples", lambda v: fb.multinomial(fb.tensor([0.5, 0.5]), v, replacement=True),
         lambda v: None if small(v, 1, 1 << 20) else RAISES),
        ("topk k", lambda v: fb.topk(x5, v).values,
         lambda v: np.arange(5.0)[::-1][:v] if small(v, 0, 6) else RAISES),
        ("kthvalue k", lambda v: fb.kthvalue(x5, v).values,
         lambda v: np.array(float(v - 1)) if small(v, 1, 6) else RAISES),
        ("narrow start", lambda v: x5.narrow(0, v, 1),
         lambda v: np.arange(5.0)[v:v + 1 or None] if small(v, -5, 5) else RAISES),
        ("narrow length", lambda v: x5.narrow(0, 0, v),
         lambda v: np.arange(5.0)[:v] if small(v, 0, 6) else RAISES),
        ("unfold size", lambda v: x5.unfold(0, v, 1),
         lambda v: np.lib.stride_tricks.sliding_window_view(np.arange(5.0), v) if small(v, 1, 6) else
         (None if v == 0 else RAISES)),
        ("unfold step", lambda v: x5.unfold(0, 2, v),
         lambda v: np.lib.stride_tricks.sliding_window_view(np.arange(5.0), 2)[::v] if v > 0 else RAISES),
        ("roll", lambda v: fb.roll(x5, v), lambda v: np.roll(np.arange(5.0), v % 5)),
        ("diagonal offset", lambda v: x33.diagonal(v), lambda v: diag(n33, v)),
        ("tril diagonal", lambda v: fb.tril(x33, v), lambda v: np.tril(n33, min(max(v, -4), 4))),
        ("triu diagonal", lambda v: fb.triu(x33, v), lambda v: np.triu(n33, min(max(v, -4), 4))),
        ("repeat", lambda v: x5.repeat(v), lambda v: np.tile(np.arange(5.0), v) if small(v, 0, 1 << 10) else RAISES),
        ("split", lambda v: fb.split(x5, v)[0], split_ref),
        ("chunk", lambda v: fb.chunk(x5, v)[0], lambda v: None if v > 0 else RAISES),
        ("index int", lambda v: x5[v], lambda v: np.array(np.arange(5.0)[v]) if small(v, -5, 5) else RAISES),
        ("take", lambda v: fb.take(x5, fb.tensor([v])),
         lambda v: np.arange(5.0)[[v]] if small(v, -5, 5) else RAISES),
        ("index_select", lambda v: fb.index_select(x5, 0, fb.tensor([v])),
         lambda v: np.arange(5.0)[[v]] if small(v, 0, 5) else RAISES),
        ("gather", lambda v: fb.gather(x5, 0, fb.tensor([v])),
         lambda v: np.arange(5.0)[[v]] if small(v, 0, 5) else RAISES),
        ("scatter_add", lambda v: fb.zeros(5).scatter_add(0, fb.tensor([v]), fb.ones(1)),
         lambda v: np.eye(5, dtype=np.float32)[v] if small(v, 0, 5) else RAISES),
        ("advanced index", lambda v: x5[fb.tensor([v])],
         lambda v: np.arange(5.0)[[v]] if small(v, -5, 5) else RAISES),
        ("index_put", lambda v: fb.zeros(5).index_put_((fb.tensor([v]),), fb.tensor(1.0)),
         lambda v: np.eye(5, dtype=np.float32)[v] if small(v, -5, 5) else RAISES),
        ("cumsum dim", lambda v: fb.cumsum(x5, v), lambda v: np.cumsum(np.arange(5.0)) if small(v, -1, 1) else RAISES),
    ]


def main() -> int:
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30 if hard == resource.RLIM_INFINITY else min(4 << 30, hard), hard))
    import flambeau as fb

    failures = []
    for name, call, reference in _cases(fb):
        for v in EXTREMES:
            print(f"{name}({v})", end=": ", flush=True)  # the last line printed names a crash or a hang
            want = reference(v)
            try:
                got = call(v)
            except Exception as exc:  # any Python exception is an acceptable refusal...
                print(f"raised {type(exc).__name__}", flush=True)
                if want is not RAISES and want is not None:  # ...unless PyTorch answers
                    failures.append(f"{name}({v}) raised {type(exc).__name__}: {exc}")
                continue
            print("returned", flush=True)
            if want is RAISES:
                failures.append(f"{name}({v}) returned {got!r}; expected an error")
            elif want is not None:
                have = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
                if have.shape != np.shape(want) or not np.array_equal(have, want):
                    failures.append(f"{name}({v}) returned {have!r}, expected {want!r}")
    print("\n".join(failures) if failures else "all fine")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
