"""The dispatcher across backends: composites, missing kernels, the opt-in CPU fallback, strict mode,
device mismatches, and a per-op path free of hook calls and metadata scans.

The second device is ``fakedev``, a fake backend (numpy natives) from a fake distribution with only
a few kernels (add, copy, fill, to_dtype, clone, and the fake plugin's fake_double).
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from fake_dists import fake_backend, fake_plugin, install, run_json


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("dispatch") / "site", fake_backend(), fake_plugin())


PRELUDE = """
import json, warnings
import numpy as np
import flambeau as fb
fn = fb.ops.fn
x = fb.tensor([1.0, -2.0, 3.0], device="fakedev")

def error(f):
    try:
        f()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None
"""


def test_composite_runs_on_a_backend_without_its_kernel(site):
    out = run_json(PRELUDE + """
table = fb.ops.kernel_table("fakedev")
r = fn.fake_triple(x)
print(json.dumps({"has_kernel": "fake_triple" in table, "r": r.tolist(), "dev": str(r.device)}))
""", site)
    assert out["has_kernel"] is False
    assert out["r"] == [3.0, -6.0, 9.0] and out["dev"] == "fakedev"


def test_no_kernel_no_composite_is_not_implemented(site):
    out = run_json(PRELUDE + """
print(json.dumps({"nothing": error(lambda: fn.fake_nothing(x)), "mul": error(lambda: x * x),
                  "stats": fb.ops.fallback_stats()}))
""", site)
    name, msg = out["nothing"]
    assert name == "NotImplementedError"
    assert "'fake_nothing'" in msg and "'fakedev'" in msg and "flambeau-backend-fakedev" in msg
    assert "flambeau-fakeops" in msg  # who declared the op
    assert "enable_cpu_fallback('fakedev')" in msg  # and how to opt in
    name, msg = out["mul"]
    assert name == "NotImplementedError" and "'mul'" in msg and "flambeau-core-tensor" in msg
    assert out["stats"] == {}


def test_cpu_fallback_copies_in_and_out_warns_once_and_counts(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("fakedev")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = x * x
    b = x * 2
    c = fn.fake_nothing(x)
    d = fb.neg(x)
    y = fb.tensor([1.0, 2.0, 3.0], device="fakedev")
    y.mul_(10)
    o = fb.empty(3, device="fakedev")
    fb.mul(x, x, out=o)
    m = fb.linalg.slogdet(fb.tensor([[2.0, 0.0], [0.0, 4.0]], device="fakedev"))  # its host decomposition
    nat = fb.ops.kernel_table("fakedev")  # the frozen table is not modified by the fallback
msgs = [str(w.message) for w in caught if "on the CPU" in str(w.message)]
stats = {f"{k[0]}/{k[1]}": v for k, v in fb.ops.fallback_stats().items()}
print(json.dumps({"a": a.tolist(), "b": b.tolist(), "c": c.tolist(), "d": d.tolist(), "y": y.tolist(),
                  "o": o.tolist(), "devs": sorted({str(t.device) for t in (a, b, c, d, y, o)}),
                  "m": [m.sign.tolist(), m.logabsdet.tolist(), type(m).__name__, str(m.sign.device)],
                  "msgs": msgs, "stats": stats, "mul_in_table": "mul" in nat}))
""", site)
    assert out["a"] == [1.0, 4.0, 9.0] and out["b"] == [2.0, -4.0, 6.0] and out["c"] == [1.0, -2.0, 3.0]
    assert out["d"] == [-1.0, 2.0, -3.0] and out["y"] == [10.0, 20.0, 30.0] and out["o"] == [1.0, 4.0, 9.0]
    assert out["devs"] == ["fakedev"]  # results come back to the device
    assert out["m"] == [1.0, pytest.approx(math.log(8)), "linalg_slogdet", "fakedev"]
    # one warning per op, however many calls
    # (slogdet has a host decomposition, which the dispatcher prefers to the CPU fallback)
    assert sorted(m.split("'")[1] for m in out["msgs"]) == ["fake_nothing", "mul", "neg"]
    assert out["stats"] == {"fakedev/mul": 4, "fakedev/fake_nothing": 1, "fakedev/neg": 1}
    assert out["mul_in_table"] is False


def test_views_factories_and_random_never_fall_back(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("fakedev")
print(json.dumps({"view": error(lambda: fn.fake_alias(x)), "core_view": error(lambda: x.transpose(0, 0)),
                  "factory": error(lambda: fb.arange(3, device="fakedev")),
                  "random": error(lambda: fn.fake_noise(x)), "stats": fb.ops.fallback_stats()}))
""", site)
    for key, op in (("view", "fake_alias"), ("core_view", "transpose"), ("factory", "arange"),
                    ("random", "fake_noise")):
        name, msg = out[key]
        assert name == "NotImplementedError", out[key]
        assert f"'{op}'" in msg and "never" in msg and "fall back" in msg, msg
    assert out["stats"] == {}


def test_strict_mode_turns_fallbacks_into_errors(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("fakedev")
fb.ops.set_strict(True)
strict = [fb.ops.is_strict(), error(lambda: x * x), fb.ops.fallback_stats()]
fb.ops.set_strict(False)
relaxed = (x * x).tolist()
fb.ops.enable_cpu_fallback("fakedev", False)
off = error(lambda: x * x)
print(json.dumps({"strict": strict, "relaxed": relaxed, "off": off}))
""", site)
    is_strict, (name, msg), stats = out["strict"]
    assert is_strict is True and name == "RuntimeError" and "'mul'" in msg and "strict" in msg and stats == {}
    assert out["relaxed"] == [1.0, 4.0, 9.0]
    assert out["off"][0] == "NotImplementedError"


def test_fallback_is_per_backend_and_validated(site):
    out = run_json(PRELUDE + """
fb.ops.enable_cpu_fallback("some_other_device")
print(json.dumps({"other": error(lambda: x * x), "bad": error(lambda: fb.ops.enable_cpu_fallback(3))}))
""", site)
    assert out["other"][0] == "NotImplementedError"
    assert out["bad"][0] == "TypeError"


def test_device_mismatch_is_pytorchs_error(site):
    out = run_json(PRELUDE + """
c = fb.tensor([1.0, 2.0, 3.0])
x1 = fb.tensor([1.0, 2.0, 3.0], device="fakedev:1")
print(json.dumps([error(lambda: c + x), error(lambda: x + c), error(lambda: fb.add(x, x1)),
                  error(lambda: fb.where(c > 0, x, x))]))
""", site)
    msgs = [m for _, m in out]
    assert all(name == "RuntimeError" for name, _ in out)
    assert msgs[0].startswith("Expected all tensors to be on the same device, but found at least two devices, "
                              "cpu and fakedev!")
    assert msgs[1].startswith("Expected all tensors to be on the same device, but found at least two devices, "
                              "fakedev and cpu!")
    assert "fakedev and fakedev:1!" in msgs[2]
    assert "cpu and fakedev!" in msgs[3]


def test_no_hook_call_metadata_scan_or_loading_per_op(site):
    out = run_json(PRELUDE + """
import importlib.metadata, inspect, pluggy
from flambeau.plugins import _loader, _discovery
from flambeau.ops import _registry
fb.ops.enable_cpu_fallback("fakedev")
warnings.simplefilter("ignore")
_ = (x * x, fn.fake_triple(x))  # first calls (warnings, caches) before the traps

def trap(*a, **k):
    raise AssertionError("called on the per-op path")

importlib.metadata.entry_points = importlib.metadata.distributions = importlib.metadata.version = trap
pluggy.HookCaller.__call__ = trap
pluggy.PluginManager.register = pluggy.PluginManager._hookexec = trap
_loader.load_backend = _discovery.scan = _discovery.load_entry_point = trap
_registry.build_table = _registry.kernel_mismatch = inspect.signature = trap
type(_registry.TABLES).__missing__ = trap

c = fb.tensor([[1.0, 2.0], [3.0, 4.0]])
results = [
    (c + c).tolist(), (c @ c).tolist(), c.sum().item(), c.t().tolist(), fn.fake_double(c).tolist(),
    fn.fake_triple(c).tolist(), (x + x).tolist(), fn.fake_double(x).tolist(), fn.fake_triple(x).tolist(),
    (x * x).tolist(), fb.zeros(2, device="fakedev").tolist(), fb.ones(2).tolist(),
]
print(json.dumps(results))
""", site)
    assert out[0] == [[2.0, 4.0], [6.0, 8.0]] and out[1] == [[7.0, 10.0], [15.0, 22.0]] and out[2] == 10.0
    assert out[4] == [[2.0, 4.0], [6.0, 8.0]] and out[5] == [[3.0, 6.0], [9.0, 12.0]]
    assert out[6] == [2.0, -4.0, 6.0] and out[8] == [3.0, -6.0, 9.0] and out[9] == [1.0, 4.0, 9.0]
    assert out[10] == [0.0, 0.0]


def test_gradient_registered_by_plugin_is_visible(site):
    out = run_json("""
        import json
        import flambeau as fb
        g = fb.ops.gradients()
        print(json.dumps([sorted(k for k in g if k.startswith("fake_")), g["fake_double"](3)]))
    """, site)
    assert out == [["fake_double"], 6]


def test_strict_mode_is_process_wide(site):
    out = run_json(PRELUDE + """
import threading
fb.ops.enable_cpu_fallback("fakedev")
fb.ops.set_strict(True)
seen = []
t = threading.Thread(target=lambda: seen.append([fb.ops.is_strict(), error(lambda: x * x)]))
t.start(); t.join()
print(json.dumps(seen[0]))
""", site)
    assert out[0] is True and out[1][0] == "RuntimeError" and "strict" in out[1][1]


# -- declared dtypes; copies from the host into existing buffers -----------------------------

def test_a_backend_refuses_dtypes_it_does_not_declare(site):
    out = run_json(PRELUDE + """
cases = [lambda: fb.ones(2, dtype=fb.float16, device="fakedev"),
         lambda: fb.tensor([1, 2], dtype=fb.int8, device="fakedev"),
         lambda: fb.ones(2, dtype=fb.int8).to("fakedev"),
         lambda: x.to(fb.float16)]
print(json.dumps({"errors": [error(c) for c in cases], "ok": fb.ones(2, dtype=fb.int64, device="fakedev").tolist()}))
""", site)
    for (name, msg), dt in zip(out["errors"], ["float16", "int8", "int8", "float16"]):
        assert name == "TypeError"
        assert f"the 'fakedev' backend (flambeau-backend-fakedev 0.3.0) does not support flambeau.{dt}" in msg
        assert "bool, float32, float64, int64" in msg
    assert out["ok"] == [1, 1]


def test_copy_from_host_default_and_non_blocking_reaches_the_backend(site):
    out = run_json(PRELUDE + """
backend = fb.plugins.loaded_backend("fakedev")
dst = fb.zeros(2, 2, device="fakedev")
backend.copy_from_host_(dst._data, np.array([[1, 2], [3, 4]], dtype=np.int64))  # the default: cast as copy_
calls = []
default = backend.copy_from_host_
backend.copy_from_host_ = lambda d, a, non_blocking=False: (calls.append(non_blocking), default(d, a, non_blocking))
y = fb.tensor([5.0, 6.0]).to("fakedev", non_blocking=True)
z = fb.zeros(2, device="fakedev")
z.copy_(fb.tensor([7.0, 8.0]), non_blocking=True)
plain = fb.tensor([1.0]).to("fakedev")
print(json.dumps({"dst": dst.tolist(), "y": y.tolist(), "z": z.tolist(), "calls": calls}))
""", site)
    assert out["dst"] == [[1.0, 2.0], [3.0, 4.0]]
    assert out["y"] == [5.0, 6.0] and out["z"] == [7.0, 8.0]
    assert out["calls"] == [True, True]  # the plain .to() goes through from_numpy
