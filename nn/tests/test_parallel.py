"""flambeau.nn.parallel: DataParallel on one device, its helpers, the lazy DistributedDataParallel,
and Module.share_memory for Hogwild-style training."""
from __future__ import annotations

import collections
import sys
import types

import numpy as np
import pytest

import flambeau as fb
from flambeau import nn
from flambeau.nn import parallel
from flambeau.nn.parallel import DataParallel, data_parallel, gather, parallel_apply, replicate, scatter


def _net():
    fb.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_exports():
    assert nn.DataParallel is DataParallel
    assert set(parallel.__all__) >= {"DataParallel", "DistributedDataParallel", "data_parallel", "gather",
                                      "parallel_apply", "replicate", "scatter"}


def test_data_parallel_without_an_accelerator_runs_the_module():
    net = _net()
    dp = DataParallel(net, device_ids=[0, 1], output_device=0)  # ignored without GPUs, as PyTorch
    assert dp.module is net and dp.device_ids == [] and dp.dim == 0
    x = fb.randn(5, 3)
    assert fb.equal(dp(x), net(x))
    assert list(dp.state_dict()) == ["module." + k for k in net.state_dict()]
    assert repr(dp).startswith("DataParallel(\n  (module): Sequential(")
    dp(x).sum().backward()
    assert net[0].weight.grad is not None
    assert fb.equal(data_parallel(net, x), net(x))
    assert fb.equal(data_parallel(net, (x,), module_kwargs={}), net(x))
    with pytest.raises(TypeError, match="DataParallel expects a Module, got function"):
        DataParallel(lambda x: x)


def test_device_ids_are_checked_before_anything_moves(monkeypatch):
    module = sys.modules["flambeau.nn.parallel.data_parallel"]  # (the attribute is the function)
    monkeypatch.setattr(module, "accelerator", lambda: ("cuda", 2))
    net = _net()
    with pytest.raises(RuntimeError, match=r"Invalid device id 3: 2 cuda device\(s\) available \(ids 0 to 1\)"):
        DataParallel(net, device_ids=[0, 3])
    with pytest.raises(RuntimeError, match="Invalid device id 5"):
        DataParallel(net, device_ids=[0], output_device=5)
    with pytest.raises(RuntimeError, match="no available devices were found"):
        DataParallel(net, device_ids=[])
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        DataParallel(net, device_ids=["cpu"])
    with pytest.raises(RuntimeError, match="Invalid device id -1"):
        data_parallel(net, fb.ones(2, 3), device_ids=[-1])
    assert net[0].weight.device.type == "cpu"


def test_scatter_and_gather_round_trip():
    x = fb.arange(10.0).reshape(5, 2)
    Pair = collections.namedtuple("Pair", "a b")
    parts = scatter((x, {"k": x, "n": 3}, Pair(x, "s")), ["cpu", "cpu"], dim=0)
    assert len(parts) == 2
    assert parts[0][0].tolist() == x[:3].tolist() and parts[1][0].tolist() == x[3:].tolist()
    assert parts[1][1]["n"] == 3 and parts[0][2].b == "s" and isinstance(parts[0][2], Pair)
    assert len(scatter(fb.ones(1, 4), ["cpu", "cpu", "cpu"])) == 1  # chunk: fewer chunks than devices
    assert scatter(fb.arange(4.0).reshape(2, 2), ["cpu", "cpu"], dim=1)[1].tolist() == [[1.0], [3.0]]
    out = gather([{"y": p[0], "none": None} for p in parts], -1)
    assert out["y"].tolist() == x.tolist() and out["none"] is None
    assert gather([fb.tensor(1.0), fb.tensor(2.0)], "cpu").tolist() == [1.0, 2.0]  # per-replica losses


def test_scatter_and_gather_are_differentiable():
    x = fb.arange(6.0, requires_grad=True)
    a, b = scatter(x, ["cpu", "cpu"])
    (gather([a * 2, b * 3], "cpu") ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8 * 0, 8 * 1, 8 * 2, 18 * 3, 18 * 4, 18 * 5])


def test_replicate_and_parallel_apply_accumulate_into_the_original():
    net = _net()
    replicas = replicate(net, ["cpu", "cpu"])
    assert len(replicas) == 2 and all(isinstance(r, nn.Sequential) for r in replicas)
    assert replicas[0] is not net and replicas[0][0] is not net[0]
    x = fb.randn(6, 3)
    chunks = scatter(x, ["cpu", "cpu"])
    outs = parallel_apply(replicas, [(c,) for c in chunks], None, ["cpu", "cpu"])
    gather(outs, "cpu").sum().backward()
    expected = _net()
    expected(x).sum().backward()
    for p, q in zip(net.parameters(), expected.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    detached = replicate(net, ["cpu"], detach=True)[0]
    assert not any(p.requires_grad for p in detached.parameters())


def test_parallel_apply_reraises_naming_the_replica():
    def bad(x):
        raise ValueError("boom")

    good = nn.Identity()
    with pytest.raises(RuntimeError, match="Caught ValueError in replica 1 on device cpu: boom"):
        parallel_apply([good, bad], [fb.ones(1), fb.ones(1)], devices=["cpu", "cpu"])
    with fb.no_grad():  # the caller's grad mode holds in the worker threads
        outs = parallel_apply([nn.Linear(2, 2), nn.Linear(2, 2)], [fb.ones(1, 2), fb.ones(1, 2)])
    assert not any(o.requires_grad for o in outs)
    with pytest.raises(AssertionError, match="number of modules 2 is not equal to the number of inputs 1"):
        parallel_apply([good, good], [fb.ones(1)])


def test_distributed_data_parallel_is_resolved_lazily(monkeypatch):
    monkeypatch.setitem(sys.modules, "flambeau.distributed", None)
    with pytest.raises(ImportError, match="pip install flambeau-distributed"):
        parallel.DistributedDataParallel
    fake = types.ModuleType("flambeau.distributed")
    fake.DistributedDataParallel = type("DistributedDataParallel", (), {})
    monkeypatch.setitem(sys.modules, "flambeau.distributed", fake)
    assert parallel.DistributedDataParallel is fake.DistributedDataParallel
    with pytest.raises(AttributeError):
        parallel.NotAThing


# -- Module.share_memory and Hogwild ---------------------------------------------------------------
def test_module_share_memory_moves_parameters_and_buffers():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    weight = net[0].weight
    assert net.share_memory() is net
    assert net[0].weight is weight  # the same Parameter objects: optimizers keep working
    assert all(t.is_shared() for t in list(net.parameters()) + list(net.buffers()))


def _hogwild(rank, model, x, y):
    for _ in range(60):
        model.zero_grad()
        loss = ((model(x[rank::2]) - y[rank::2]) ** 2).mean()
        loss.backward()
        with fb.no_grad():
            for p in model.parameters():
                p.sub_(0.1 * p.grad)


def test_hogwild_training_of_a_shared_module():
    import flambeau.multiprocessing as mp

    fb.manual_seed(1)
    model = nn.Linear(3, 1)
    model.share_memory()
    x = fb.randn(64, 3)
    y = x @ fb.tensor([[1.0], [-1.0], [2.0]]) + 0.5
    mp.start_processes(_hogwild, args=(model, x, y), nprocs=2, start_method="fork")
    np.testing.assert_allclose(model.weight.detach().numpy(), [[1.0, -1.0, 2.0]], atol=1e-2)
    np.testing.assert_allclose(model.bias.detach().numpy(), [0.5], atol=1e-2)
