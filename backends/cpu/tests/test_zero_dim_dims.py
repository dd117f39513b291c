"""A 0-d tensor takes dim 0 and -1 (PyTorch wraps dims as if it had one): every op with a
``dim``/``dims`` argument either works on it or refuses it in its meta function, with PyTorch's
error; nothing fails inside a kernel or numpy (``tensor(3.5).flip(0)`` raised numpy's IndexError)."""
from __future__ import annotations

import traceback

import flambeau as fb
import pytest
from flambeau.ops._decl import TENSOR, tensor_kind
from flambeau.ops._registry import FUNCTIONS, OPS

_INTERNAL = ("/flambeau_cpu/", "/numpy/", "/scipy/")


def _dim_ops() -> list[str]:
    names = []
    for name, decl in sorted(OPS.items()):
        params = list(decl.parameters)
        if name not in FUNCTIONS or not params or tensor_kind(params[0]) != TENSOR:
            continue
        if not any(p.name in ("dim", "dims") for p in params):
            continue
        required = [p for p in params[1:] if p.default is p.empty and p.name not in ("dim", "dims")]
        if not required:
            names.append(name)
    return names


def _fails_inside(exc: BaseException) -> str | None:
    for frame in traceback.extract_tb(exc.__traceback__):
        if any(part in frame.filename for part in _INTERNAL):
            return f"{type(exc).__name__}: {exc} ({frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})"
    return None


@pytest.mark.parametrize("dtype", [fb.float32, fb.int64], ids=str)
@pytest.mark.parametrize("dim", [0, -1, (0,), (-1,)], ids=str)
def test_zero_dim_tensors_take_dim_0_and_minus_1(dtype, dim):
    x = fb.tensor(3, dtype=dtype)
    found = {}
    for name in _dim_ops():
        decl = OPS[name]
        key = "dims" if any(p.name == "dims" for p in decl.parameters) else "dim"
        try:
            FUNCTIONS[name](x, **{key: dim})
        except Exception as exc:  # noqa: BLE001 - a refusal is fine when it is the meta function's
            inside = _fails_inside(exc)
            if inside:
                found[name] = inside
    assert not found, found


def test_flip_and_movedim_of_a_0d_tensor():
    x = fb.tensor(3.5)
    for y in (x.flip(0), x.flip(-1), fb.flip(x, (0,)), x.movedim(0, 0), x.movedim(-1, 0), fb.moveaxis(x, 0, -1)):
        assert y.shape == () and y.item() == 3.5
    view = x.movedim(0, 0)
    view += 1  # movedim is a view, 0-d included
    assert x.item() == 4.5
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.movedim(0, 1)
