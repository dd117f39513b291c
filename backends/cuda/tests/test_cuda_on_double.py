"""The ``cuda`` device itself and flambeau.cuda, with the numpy test double answering as CuPy.

Each test runs a fresh interpreter in which ``flambeau_cuda._runtime`` is handed ``_fake_cupy``
before flambeau starts: the entry point, ``create_backend`` and every function of flambeau.cuda then
run their production code paths, only CuPy's own kernels and driver calls being the double's.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PRELUDE = """
import json, sys, warnings
import _fake_cupy
from flambeau_cuda import _runtime
_runtime._cache["result"] = _fake_cupy
import flambeau as fb
import flambeau.cuda as cuda
"""


def run(env, body: str) -> dict:
    code = PRELUDE + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_devices_and_properties(env_with_sim):
    got = run(env_with_sim, """
        p = cuda.get_device_properties(0)
        try:
            cuda.get_device_name(3)
            bad = None
        except RuntimeError as exc:
            bad = str(exc)
        with cuda.device("cuda:0"):
            inside = cuda.current_device()
        x = fb.ones(3, device="cuda")
        print(json.dumps({"available": cuda.is_available(), "count": cuda.device_count(),
                          "current": cuda.current_device(), "name": cuda.get_device_name(), "major": p.major,
                          "repr": repr(p), "cap": list(cuda.get_device_capability()), "bad": bad, "inside": inside,
                          "device": str(x.device), "is_cuda": x.is_cuda, "sum": (x + 1).sum().item()}))
    """)
    assert got["available"] and got["count"] == 1 and got["current"] == 0 and got["inside"] == 0
    assert got["name"] == "Fake GPU (numpy test double)" and got["cap"] == [9, 0]
    assert got["repr"].startswith("_CudaDeviceProperties(name='Fake GPU")
    assert "invalid device ordinal 3" in got["bad"] and "cuda:0" in got["bad"]
    assert got["device"] == "cuda:0" and got["is_cuda"] and got["sum"] == 6.0


def test_memory_statistics_follow_allocations(env_with_sim):
    got = run(env_with_sim, """
        base = cuda.memory_allocated()
        x = fb.empty(1024, 1024, device="cuda")            # 4 MiB
        held = cuda.memory_allocated() - base
        del x
        after = cuda.memory_allocated() - base
        peak = cuda.max_memory_allocated() - base
        cuda.reset_peak_memory_stats()
        reset = cuda.max_memory_allocated() - base
        cuda.empty_cache()
        try:
            fb.empty(1 << 40, device="cuda")                  # 4 TiB: beyond the double's 16 GiB
            oom = None
        except cuda.OutOfMemoryError as exc:
            oom = [str(exc), isinstance(exc, RuntimeError)]
        y = fb.ones(4, device="cuda")                        # still usable afterwards
        print(json.dumps({"held": held, "after": after, "peak": peak, "reset": reset, "oom": oom,
                          "reserved": cuda.memory_reserved() >= 0, "y": y.sum().item(),
                          "free": list(cuda.mem_get_info())}))
    """)
    assert got["held"] == 4 * 1024 * 1024 and got["after"] == 0
    assert got["peak"] >= 4 * 1024 * 1024 and got["reset"] == 0
    message = got["oom"][0]
    assert got["oom"][1] and "Tried to allocate 4096.00 GiB" in message
    assert "GPU 0 has a total capacity of 16.00 GiB" in message and "is free" in message
    assert got["y"] == 4.0 and got["free"][1] == 16 * 1024 ** 3


def test_streams_and_events(env_with_sim):
    got = run(env_with_sim, """
        s = cuda.Stream()
        before = cuda.current_stream()
        with cuda.stream(s):
            inside = cuda.current_stream()
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        start.record()
        x = fb.ones(1000, device="cuda") * 2
        end.record()
        cuda.synchronize()
        ms = start.elapsed_time(end)
        try:
            cuda.Event().elapsed_time(cuda.Event())
            untimed = None
        except RuntimeError as exc:
            untimed = str(exc)
        print(json.dumps({"inside": inside == s, "before": before == cuda.default_stream(),
                          "after": cuda.current_stream() == before, "ms": ms, "untimed": untimed,
                          "query": s.query(), "ptr": s.cuda_stream != 0}))
    """)
    assert got["inside"] and got["before"] and got["after"] and got["query"] and got["ptr"]
    assert got["ms"] >= 0 and "enable_timing=True" in got["untimed"]


def test_seeding_is_reproducible_and_generators_keep_state(env_with_sim):
    got = run(env_with_sim, """
        fb.manual_seed(7)
        a = fb.rand(5, device="cuda").tolist()
        fb.manual_seed(7)
        b = fb.rand(5, device="cuda").tolist()
        cuda.manual_seed(7)
        c = fb.rand(5, device="cuda").tolist()
        cuda.manual_seed_all(8)
        d = fb.rand(5, device="cuda").tolist()
        g = fb.Generator(device="cuda")
        g.manual_seed(3)
        state = g.get_state()
        e = fb.randn(4, device="cuda", generator=g).tolist()
        g.set_state(state)
        f = fb.randn(4, device="cuda", generator=g).tolist()
        print(json.dumps({"ab": a == b, "ac": a == c, "ad": a != d, "ef": e == f, "seed": cuda.initial_seed(),
                          "range": all(0 <= v < 1 for v in a)}))
    """)
    assert got == {"ab": True, "ac": True, "ad": True, "ef": True, "seed": 8, "range": True}


def test_host_copies_and_cross_device_rules(env_with_sim):
    got = run(env_with_sim, """
        import numpy as np
        host = fb.arange(6.0).reshape(2, 3)
        dev = host.to("cuda", non_blocking=True)
        cuda.synchronize()
        back = dev.cpu()
        t = dev.t().contiguous().cpu().tolist()
        mixed = (dev + fb.tensor(1.0)).tolist()            # a 0-dim CPU tensor combines with any device
        try:
            dev + fb.ones(3)
            err = None
        except RuntimeError as exc:
            err = str(exc)
        into = fb.zeros(2, 3, device="cuda")
        into.copy_(host)                                     # copy_ between devices
        cpu_out = fb.zeros(2, 3)
        cpu_out.copy_(dev * 2)
        print(json.dumps({"back": back.tolist(), "t": t, "mixed": mixed, "err": err, "into": into.tolist(),
                          "cpu_out": cpu_out.tolist(), "dtype": str(dev.half().dtype),
                          "cuda_method": str(host.cuda().device)}))
    """)
    assert got["back"] == [[0, 1, 2], [3, 4, 5]] and got["t"] == [[0, 3], [1, 4], [2, 5]]
    assert got["mixed"] == [[1, 2, 3], [4, 5, 6]]
    assert "Expected all tensors to be on the same device" in got["err"]
    assert got["into"] == got["back"] and got["cpu_out"] == [[0, 2, 4], [6, 8, 10]]
    assert got["dtype"] == "flambeau.float16" and got["cuda_method"] == "cuda:0"


def test_autograd_and_optim_stay_on_the_device(env_with_sim):
    got = run(env_with_sim, """
        import flambeau.nn as nn, flambeau.optim as optim
        fb.manual_seed(0)
        model = nn.Linear(4, 2).to("cuda")
        opt = optim.Adam(model.parameters(), lr=0.1)
        x = fb.randn(8, 4, device="cuda")
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        print(json.dumps({"grad": str(model.weight.grad.device), "param": str(model.weight.device),
                          "down": losses[-1] < losses[0]}))
    """)
    assert got == {"grad": "cuda:0", "param": "cuda:0", "down": True}
