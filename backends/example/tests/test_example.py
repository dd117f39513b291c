"""The example backend: the core tier only, everything else by decomposition."""
from __future__ import annotations

import numpy as np

import flambeau as fb
from flambeau.ops import coverage, declarations


def test_it_implements_exactly_the_core_tier():
    core = {name for name, d in declarations().items() if d.tier == "core"}
    cov = coverage("example")
    assert {name for name, how in cov.items() if how == "kernel"} == core


def test_decomposed_ops_run_on_it():
    x = fb.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="example")
    assert coverage("example")["logsumexp"] == "decomposition"
    # tolist: a device tensor is not a numpy array (np.asarray refuses it, as PyTorch's does), and
    # this environment may have no CPU backend for .cpu()
    np.testing.assert_allclose(fb.logsumexp(x, 1).tolist(), np.log(np.exp(np.array([[1, 2, 3], [4, 5, 6.0]])).sum(1)),
                               rtol=1e-6)


def _has_cpu() -> bool:
    try:
        fb.plugins.loaded_backend("cpu")
        return True
    except fb.plugins.BackendUnavailable:
        return False


def test_host_transfers_copy():
    host = np.arange(3.0)
    t = fb.tensor(host, device="example")
    host[0] = 100.0
    assert t.tolist() == [0.0, 1.0, 2.0]
    if _has_cpu():  # (the kit's contract:host_transfers_copy checks the backend's to_numpy too)
        back = t.cpu().numpy()
        back[1] = 100.0
        assert t.tolist() == [0.0, 1.0, 2.0]


def test_python_integers_wrap_into_narrow_dtypes():
    x = fb.tensor([250, 3], dtype=fb.uint8, device="example")
    assert (x < 1000).tolist() == [False, True]  # 1000 wraps to 232 in uint8, as on the CPU
