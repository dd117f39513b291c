"""Adagrad.share_memory: the accumulators move to shared memory, and steps taken in another
process update the same sums (Hogwild-style training with flambeau.multiprocessing)."""
from __future__ import annotations

import pytest

import flambeau
import flambeau.multiprocessing as mp
from flambeau import optim


def _params():
    p = flambeau.tensor([1.0, -2.0, 3.0], requires_grad=True)
    q = flambeau.tensor([[0.5, 0.25], [-1.0, 2.0]], requires_grad=True)
    return [p, q]


def test_share_memory_moves_every_sum_and_keeps_its_values():
    params = _params()
    opt = optim.Adagrad(params, initial_accumulator_value=0.5)
    sums = [opt.state[p]["sum"] for p in params]
    assert not any(s.is_shared() for s in sums)
    opt.share_memory()
    for p, s in zip(params, sums):
        assert opt.state[p]["sum"] is s  # moved in place, not replaced
        assert s.is_shared()
        assert s.tolist() == flambeau.full_like(p, 0.5).tolist()
    opt.share_memory()  # a second call is a no-op
    assert all(s.is_shared() for s in sums)


def _step_in_child(params, sums, done):
    opt = optim.Adagrad(params, lr=0.1)
    for p, s in zip(params, sums):
        opt.state[p]["sum"] = s
    for p in params:
        p.grad = flambeau.ones_like(p)
    opt.step()
    done.put(True)


@pytest.mark.parametrize("fused", [None, False])
def test_a_step_in_another_process_updates_the_shared_sums(fused):
    params = _params()
    opt = optim.Adagrad(params, lr=0.1, foreach=fused)
    opt.share_memory()
    for p in params:
        p.share_memory_()
    sums = [opt.state[p]["sum"] for p in params]
    # spawn, as Hogwild training does: the tensors travel by their shared-memory handles. (A fork would
    # also restart OpenBLAS's pool in this process, whose fresh workers spin: test_one_pool counts them.)
    ctx = mp.get_context("spawn")
    done = ctx.Queue()
    child = ctx.Process(target=_step_in_child, args=(params, sums, done), daemon=True)
    child.start()
    assert done.get(timeout=240)
    child.join(timeout=60)
    assert child.exitcode == 0
    # one step with gradient 1 adds 1 to every accumulator and moves every parameter by -lr
    for p, s in zip(params, sums):
        assert s.tolist() == flambeau.ones_like(p).tolist()
    assert params[0].tolist() == pytest.approx([0.9, -2.1, 2.9])
