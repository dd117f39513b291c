"""On a real NVIDIA GPU with CuPy: what the numpy test double cannot show (skipped elsewhere, with the reason).

gpu_check.sh runs these on the device machine; the conformance kit on ``cuda`` checks every op there.
"""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb

pytestmark = pytest.mark.gpu


def test_results_match_numpy_and_stay_on_the_gpu():
    import cupy

    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((32, 16)).astype(np.float32)
    x, y = fb.tensor(a, device="cuda"), fb.tensor(b, device="cuda")
    assert isinstance(x._data, cupy.ndarray) and x.device == fb.device("cuda:0")
    np.testing.assert_allclose((x @ y).cpu().numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((x + 1).sum(0).cpu().numpy(), (a + 1).sum(0), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(x.t().contiguous().cpu().numpy(), a.T)


def test_half_matmul_accumulates_in_float32():
    a = fb.ones(4, 4096, device="cuda", dtype=fb.bfloat16)
    b = fb.full((4096, 4), 1e-3, device="cuda", dtype=fb.bfloat16)
    got = (a @ b).float().cpu().numpy()
    np.testing.assert_allclose(got, 4096 * float(fb.tensor(1e-3, dtype=fb.bfloat16).float().item()), rtol=1e-2)


def test_dlpack_both_ways_with_cupy_shares_memory():
    import cupy

    c = cupy.arange(6, dtype=cupy.float32)
    t = fb.from_dlpack(c)
    c[0] = 42
    assert t.device.type == "cuda" and t[0].item() == 42
    back = cupy.from_dlpack(t)
    back[1] = 7
    assert t[1].item() == 7


def test_dlpack_both_ways_with_torch_shares_memory():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    tt = torch.arange(4.0, device="cuda")
    t = fb.from_dlpack(tt)
    tt[0] = 9
    assert t[0].item() == 9
    back = torch.from_dlpack(t)
    back[2] = 5
    assert t[2].item() == 5


def test_out_of_memory_names_the_size_and_leaves_the_process_usable():
    with pytest.raises(fb.cuda.OutOfMemoryError, match="Tried to allocate") as info:
        fb.empty(1 << 45, dtype=fb.uint8, device="cuda")  # 32 TiB
    assert isinstance(info.value, RuntimeError) and "free" in str(info.value)
    assert fb.ones(3, device="cuda").sum().item() == 3.0


def test_index_checks_on_the_device_raise_pytorchs_error():
    x = fb.arange(5.0, device="cuda")
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(0, fb.tensor([0, 5], device="cuda"))
    with pytest.raises(IndexError, match="out of bounds"):
        x[fb.tensor([7], device="cuda")]


def test_ops_in_a_stream_block_run_on_that_stream():
    import cupy

    s = fb.cuda.Stream()
    with fb.cuda.stream(s):
        assert cupy.cuda.get_current_stream().ptr == s.cuda_stream
        y = fb.ones(1 << 20, device="cuda") * 2
    s.synchronize()
    assert y.sum().item() == 2 * (1 << 20)


def test_events_time_gpu_work():
    start, end = fb.cuda.Event(enable_timing=True), fb.cuda.Event(enable_timing=True)
    x = fb.ones(4096, 4096, device="cuda")
    start.record()
    for _ in range(5):
        x = x @ x / 4096
    end.record()
    assert start.elapsed_time(end) > 0


def test_philox_streams_repeat_after_manual_seed():
    fb.manual_seed(123)
    a = fb.randn(1000, device="cuda").cpu().numpy()
    fb.cuda.manual_seed_all(123)
    b = fb.randn(1000, device="cuda").cpu().numpy()
    np.testing.assert_array_equal(a, b)
    assert abs(a.mean()) < 0.2 and 0.8 < a.std() < 1.2


def test_non_blocking_host_copy_arrives_after_synchronize():
    host = fb.arange(1 << 20, dtype=fb.float32)
    dev = host.to("cuda", non_blocking=True)
    fb.cuda.synchronize()
    assert dev.sum().item() == float(np.arange(1 << 20, dtype=np.float64).sum())


def test_peer_copies_between_gpus():
    if fb.cuda.device_count() < 2:
        pytest.skip("one GPU: peer copies need two")
    x = fb.arange(10.0, device="cuda:0")
    y = x.to("cuda:1")
    assert y.device == fb.device("cuda:1") and y.cpu().tolist() == x.cpu().tolist()
    with pytest.raises(RuntimeError, match="same device"):
        x + y


def test_cuda_array_interface_export_shares_memory():
    import cupy

    t = fb.zeros(4, device="cuda")
    c = cupy.asarray(t)  # reads t.__cuda_array_interface__: no copy
    c[0] = 3
    assert t[0].item() == 3
    assert not hasattr(fb.zeros(2), "__cuda_array_interface__")  # a CPU tensor has none, as PyTorch's
