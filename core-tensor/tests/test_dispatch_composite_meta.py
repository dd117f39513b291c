"""A composite op's meta function (its argument checks) runs before the composite, as it runs
before a kernel: the caller gets the meta's error, not whatever the composite's inner ops raise."""
from __future__ import annotations

import pytest

import flambeau as fb
from flambeau.ops._decl import OpDecl
from flambeau.ops._dispatch import run_compute, run_dynamic

calls: list[str] = []


def _meta(input, n):
    if n < 0:
        raise ValueError(f"probe_op(): n must be non-negative, got {n}")
    return tuple(input.shape), input.dtype


def _composite(input, n):
    calls.append("composite")
    return input * n


def _decl(kind: str = "compute") -> OpDecl:
    # never registered: no backend has a kernel for it, so the dispatcher takes the composite
    return OpDecl("probe_composite_meta", "(input: Tensor, n: int)", _meta, kind=kind,
                  composite=_composite, export=False)


@pytest.mark.parametrize("runner", ["compute", "dynamic"])
def test_meta_error_before_composite(runner):
    calls.clear()
    x = fb.ones(3)
    op = _decl(runner)
    run = (lambda *a: run_compute(op, x.device, a, (), None, False, False)) if runner == "compute" else \
        (lambda *a: run_dynamic(op, x.device, a, (), False))
    with pytest.raises(ValueError, match="n must be non-negative, got -1"):
        run(x, -1)
    assert calls == []  # the composite never ran
    assert run(x, 2).tolist() == [2.0, 2.0, 2.0] and calls == ["composite"]
