"""The CPU fallback runs every op, whatever its signature, and cross-device rules as PyTorch's.

``nokern`` is a fake backend (numpy natives that it copies in and out, as a device's would be)
with the view kernels and copy/fill/cast only: every other op reaches the opt-in CPU fallback.
The conformance kit's cases then run, with its numpy references, for every op that has
keyword-only parameters (``prod(x, *, dtype)``, ``cumsum``, ``sort``, ``var``, ``addmm``...), whose
arguments the fallback once passed positionally; its functional, ``out=`` and in-place forms.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from fake_dists import fake_backend, install, run_json

NOKERN_SOURCE = '''
import numpy as np
import flambeau
from flambeau.ops._registry import OPS
from flambeau_cpu._backend import CpuBackend

KEEP = {"copy", "fill", "to_dtype", "clone"}


class NoKernels(CpuBackend):
    name = "nokern"

    def from_numpy(self, array, device):
        return np.array(array, copy=True)

    def to_numpy(self, native):
        return np.array(native, copy=True)

    def device_of(self, native):
        return flambeau.device("nokern")

    def kernels(self):
        return {name: k for name, k in super().kernels().items()
                if name in KEEP or (name in OPS and OPS[name].kind == "view")}


def create_backend():
    return NoKernels()
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("nokern") / "site",
                   fake_backend(name="flambeau-backend-nokern", module="flambeau_nokern", device="nokern",
                                source=NOKERN_SOURCE))


def test_every_op_with_keyword_only_parameters_runs_through_the_fallback(site):
    out = run_json("""
import json, warnings
import flambeau as fb
from flambeau.ops._registry import OPS, TABLES
from flambeau.testing import all_cases
from flambeau.testing._runner import run_sample

warnings.simplefilter("ignore")
fb.ops.enable_cpu_fallback("nokern")
dev = fb.device("nokern")
cases = all_cases()
names = sorted(n for n, d in OPS.items() if d.kind in ("compute", "dynamic") and not d.random
               and any(p.kind is p.KEYWORD_ONLY for p in d.parameters))
failures, ran, kernels = [], [], [n for n in names if n in TABLES["nokern"]]
for name in names:
    case = cases.get(name)
    if case is None:
        failures.append(f"{name}: no kit case")
        continue
    dtype = "float64" if "float64" in case.dtypes else case.dtypes[0]
    for i, sample in enumerate(list(case.samples(dtype))[:3]):
        try:
            run_sample(case, dtype, i, sample, dev, True)
        except Exception as exc:
            failures.append(f"{name}{sample.describe()}: {type(exc).__name__}: {exc}"[:300])
    ran.append(name)
stats = sorted({op for (backend, op) in fb.ops.fallback_stats() if backend == "nokern"})
print(json.dumps({"names": names, "ran": ran, "failures": failures, "kernels": kernels, "stats": stats}))
""", site)
    assert out["failures"] == []
    assert len(out["ran"]) >= 40 and out["ran"] == out["names"]
    for name in ("prod", "cumsum", "sort", "var", "addmm", "nonzero"):
        assert name in out["names"]
    assert out["kernels"] == ["clone"]  # the rest had no kernel of their own
    # An op with a decomposition (var, addmm...) runs by it, as PyTorch runs a composite before a
    # fallback, and the core ops it calls fall back; the ops without one fall back themselves.
    assert {"cumsum", "nonzero"} <= set(out["stats"])  # (sort takes its host decomposition)


PRELUDE = """
import json, warnings
import numpy as np
import flambeau as fb

def error(f):
    try:
        f()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None
"""


def test_fallback_warns_once_at_the_users_line_and_strict_mode_refuses(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("nokern")
x = fb.tensor([[1.0, 2.0], [3.0, 4.0]], device="nokern")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = fb.prod(x, 1, dtype=fb.float64)
    b = fb.prod(x, 1, dtype=fb.float64)
got = [(str(w.message), w.filename) for w in caught]
fb.ops.set_strict(True)
strict = error(lambda: fb.cumsum(x, 0))
print(json.dumps({"a": a.tolist(), "dev": str(a.device), "dt": str(a.dtype), "warned": got, "strict": strict,
                  "count": fb.ops.fallback_stats()[("nokern", "prod")]}))
""", site)
    assert out["a"] == [2.0, 12.0] and out["dev"] == "nokern" and out["dt"] == "flambeau.float64"
    assert len(out["warned"]) == 1 and "'prod'" in out["warned"][0][0] and out["warned"][0][1] == "<string>"
    assert out["count"] == 2
    assert out["strict"][0] == "RuntimeError" and "strict" in out["strict"][1]


# -- cross-device rules ---------------------------------------------------------------------

def test_copy_between_devices_both_ways(site):
    out = run_json(PRELUDE + """
d = fb.zeros(2, 3, device="nokern")
c = fb.arange(6.0).reshape(2, 3)
r = d.copy_(c)
back = fb.zeros(2, 3, dtype=fb.float64)
back.copy_(d)
cast = fb.zeros(3, dtype=fb.int64, device="nokern").copy_(fb.tensor([1.5, 2.5, -3.5]))
bc = fb.zeros(2, 3, device="nokern").copy_(fb.tensor([1.0, 2.0, 3.0]))
print(json.dumps({"same": r is d, "d": d.tolist(), "dev": str(d.device), "back": back.tolist(),
                  "back_dev": str(back.device), "cast": cast.tolist(), "bc": bc.tolist(),
                  "bad": error(lambda: fb.zeros(2, device="nokern").copy_(fb.ones(3)))}))
""", site)
    assert out["same"] is True and out["dev"] == "nokern"
    assert out["d"] == [[0, 1, 2], [3, 4, 5]] and out["back"] == [[0, 1, 2], [3, 4, 5]] and out["back_dev"] == "cpu"
    assert out["cast"] == [1, 2, -3] and out["bc"] == [[1, 2, 3], [1, 2, 3]]
    assert out["bad"][0] == "RuntimeError" and "must match the size of tensor b (3)" in out["bad"][1]


def test_zero_dim_cpu_tensors_combine_with_any_device(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("nokern")
x = fb.tensor([1.0, 2.0], device="nokern")
s = fb.tensor(10.0)
results = [x + s, s + x, fb.where(fb.tensor(True), x, s), x.clamp(fb.tensor(1.5), fb.tensor(1.75))]
y = fb.tensor([1.0, 2.0], device="nokern")
y.mul_(fb.tensor(3.0))
errors = [error(lambda: x + fb.ones(2)), error(lambda: fb.ones(2) + x), error(lambda: s.add_(x)),
          error(lambda: fb.cat([x, fb.ones(1)])), error(lambda: fb.ones(2) * x)]
print(json.dumps({"r": [r.tolist() for r in results], "devs": [str(r.device) for r in results],
                  "y": y.tolist(), "errors": errors}))
""", site)
    assert out["r"] == [[11.0, 12.0], [11.0, 12.0], [1.0, 2.0], [1.5, 1.75]]
    assert out["devs"] == ["nokern"] * 4 and out["y"] == [3.0, 6.0]
    for (name, msg), pair in zip(out["errors"], ["nokern and cpu", "cpu and nokern", "cpu and nokern",
                                                 "nokern and cpu", "cpu and nokern"]):
        assert name == "RuntimeError"
        assert msg.startswith(f"Expected all tensors to be on the same device, but found at least two devices, {pair}!")


def test_numpy_of_a_device_tensor_raises_as_pytorch(site):
    out = run_json(PRELUDE + """
x = fb.ones(2, device="nokern")
print(json.dumps({"asarray": error(lambda: np.asarray(x)), "numpy": error(lambda: x.numpy()),
                  "cpu": np.asarray(x.cpu()).tolist(), "force": x.numpy(force=True).tolist()}))
""", site)
    msg = "can't convert nokern device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    assert out["asarray"] == ["TypeError", msg] and out["numpy"] == ["TypeError", msg]
    assert out["cpu"] == [1.0, 1.0] and out["force"] == [1.0, 1.0]
