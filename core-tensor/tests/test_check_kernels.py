"""``FLAMBEAU_CHECK_KERNELS=1``: kernels and allocators checked against what each op promises.

A fake backend ``badkern`` (numpy natives) carries deliberately wrong kernels: one that returns
a new array instead of filling ``out``, view kernels with the wrong shape or dtype, and an
allocator that cannot hold a dtype it declares. With the checks on, each is a clear error naming
the backend, the op, what was expected and what came back; with them off, the table holds the
kernels themselves (nothing on the per-op path).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from fake_dists import FAKE_BACKEND_SOURCE, fake_backend, install, run_json

BAD_KERNELS = FAKE_BACKEND_SOURCE + '''

def mul_returns_new(input, other, out):
    return np.multiply(input, other)  # out= is left unwritten


def t_wrong_shape(input):
    return input.view()  # not transposed


def squeeze_wrong_dtype(input, dim):
    return np.squeeze(input).view(np.int32) if input.dtype == np.float32 else np.squeeze(input)


def narrow_ok(input, dim, start, length):
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, start + length)
    return input[tuple(index)]


_base_kernels = FakeBackend.kernels


def kernels(self):
    return {**_base_kernels(self), "mul": mul_returns_new, "t": t_wrong_shape, "squeeze": squeeze_wrong_dtype,
            "narrow": narrow_ok}


FakeBackend.kernels = kernels
FakeBackend.name = "badkern"
'''

HALF_AS_FLOAT = FAKE_BACKEND_SOURCE + '''

FakeBackend.dtypes = FakeBackend.dtypes | {_dtypes.float16}
_empty = FakeBackend.empty
FakeBackend.empty = lambda self, shape, dtype, device: np.empty(shape, np.float32 if dtype is _dtypes.float16
                                                                else dtype.numpy_dtype)
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("badkern") / "site",
                   fake_backend(name="flambeau-backend-badkern", module="flambeau_badkern", device="badkern",
                                source=BAD_KERNELS),
                   fake_backend(name="flambeau-backend-halfdev", module="flambeau_halfdev", device="halfdev",
                                source=HALF_AS_FLOAT.replace('"fakedev"', '"halfdev"')))


PRELUDE = """
import json
import flambeau as fb

def error(f):
    try:
        f()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None

x = fb.tensor([[1.0, 2.0, 3.0]], device="badkern")
"""


def test_with_checks_each_wrong_kernel_is_named(site):
    out = run_json(PRELUDE + """
print(json.dumps({"mul": error(lambda: x * x), "t": error(lambda: x.t()), "squeeze": error(lambda: x.squeeze(0)),
                  "narrow": x.narrow(1, 1, 2).tolist(), "add": (x + x).tolist(),
                  "half": error(lambda: fb.ones(1, device="halfdev"))}))
""", site, env={"FLAMBEAU_CHECK_KERNELS": "1"})
    name, msg = out["mul"]
    assert name == "KernelCheckError" and "backend 'badkern', op 'mul'" in msg
    assert "returned a new array (shape (1, 3), dtype float32) instead of writing its result into out=" in msg
    name, msg = out["t"]
    assert name == "KernelCheckError" and "backend 'badkern', op 't'" in msg
    assert "returned shape (1, 3); expected (3, 1)" in msg
    name, msg = out["squeeze"]
    assert name == "KernelCheckError" and "op 'squeeze'" in msg and "dtype int32; expected float32" in msg
    assert out["narrow"] == [[2.0, 3.0]] and out["add"] == [[2.0, 4.0, 6.0]]  # right kernels pass
    name, msg = out["half"]
    assert name == "BackendUnavailable"
    assert "backend 'halfdev' declares flambeau.float16 but cannot hold it" in msg and "float32" in msg


def test_without_checks_the_table_holds_the_kernels_themselves(site):
    out = run_json(PRELUDE + """
import flambeau_badkern
table = fb.ops.kernel_table("badkern")
print(json.dumps({"same": table["mul"] is flambeau_badkern.mul_returns_new,
                  "t": list(x.t().shape)}))
""", site, env={"FLAMBEAU_CHECK_KERNELS": "0"})
    assert out == {"same": True, "t": [1, 3]}  # unchecked: the wrong view goes through
