"""unique / unique_consecutive along a dim of an input with empty dims: PyTorch 2.13's results and errors
(written out), on the CPU's kernels and on the core-tier decomposition (example backend, when installed)."""
from __future__ import annotations

import pytest

import flambeau as fb

MORE_THAN_ONE = "Number of zero sized dimensions is more than one, so unique cannot be applied"
NOT_SELECTED = "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"

CASES = [  # shape, dim, the (values, inverse, counts) shapes or the error
    ((0, 3), 0, [(0, 3), (0,), (0,)]),
    ((3, 0), 1, [(3, 0), (0,), (0,)]),
    ((2, 0, 4), 1, [(2, 0, 4), (0,), (0,)]),
    ((0, 3), 1, NOT_SELECTED),
    ((3, 0), 0, NOT_SELECTED),
    ((0, 3, 0), 1, NOT_SELECTED),
    ((0, 0), 0, MORE_THAN_ONE),
    ((2, 0, 0), 1, MORE_THAN_ONE),
]


def _devices() -> list[str]:
    devices = ["cpu"]
    try:
        import flambeau_example  # noqa: F401
        devices.append("example")
    except ImportError:
        pass
    return devices


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("op", [fb.unique, fb.unique_consecutive], ids=["unique", "unique_consecutive"])
@pytest.mark.parametrize("shape,dim,want", CASES, ids=[f"{c[0]}-dim{c[1]}" for c in CASES])
def test_unique_with_empty_dims(device, op, shape, dim, want):
    x = fb.zeros(shape, device=device)
    if isinstance(want, str):
        with pytest.raises(RuntimeError, match=want.replace("(", r"\(").replace(")", r"\)")):
            op(x, dim=dim, return_inverse=True, return_counts=True)
        return
    values, inverse, counts = op(x, dim=dim, return_inverse=True, return_counts=True)
    assert [tuple(t.shape) for t in (values, inverse, counts)] == want
    assert inverse.dtype == fb.int64 and counts.dtype == fb.int64
