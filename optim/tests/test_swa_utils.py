"""swa_utils over a duck-typed model (flambeau-optim does not depend on flambeau-nn)."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau.optim.swa_utils import (AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn,
                                      update_bn)


class TinyBN:
    def __init__(self):
        self.running_mean = fb.zeros(2)
        self.running_var = fb.ones(2)
        self.momentum = 0.1
        self.seen = []

    def reset_running_stats(self):
        self.running_mean.zero_()
        self.running_var.fill_(1.0)

    def __call__(self, x):
        # Cumulative average when momentum is None (what update_bn sets), as batch norm does.
        self.seen.append(self.momentum)
        n = len(self.seen)
        mean = x.mean(dim=0)
        self.running_mean.mul_((n - 1) / n).add_(mean, alpha=1 / n)
        return x


class TinyModel:
    def __init__(self, w, b):
        self.w, self.b = fb.tensor(w), fb.tensor(b)
        self.count = fb.tensor([0.0])
        self.bn = TinyBN()
        self.training = True

    def parameters(self):
        return iter([self.w, self.b])

    def buffers(self):
        return iter([self.count])

    def modules(self):
        return iter([self, self.bn])

    def train(self, mode=True):
        self.training = mode
        return self

    def __call__(self, x):
        return self.bn(x * self.w)


def test_swa_average_equals_mean_of_snapshots():
    model = TinyModel([1.0, 2.0], [0.5])
    avg = AveragedModel(model)
    snapshots = []
    for k in range(5):
        model.w.copy_(fb.tensor([1.0 + k, 2.0 - k]))
        model.b.copy_(fb.tensor([0.5 * k]))
        model.count.fill_(float(k))
        snapshots.append((model.w.numpy().copy(), model.b.numpy().copy()))
        avg.update_parameters(model)
    w_avg, b_avg = list(avg.parameters())
    np.testing.assert_allclose(w_avg.numpy(), np.mean([s[0] for s in snapshots], axis=0), rtol=1e-6)
    np.testing.assert_allclose(b_avg.numpy(), np.mean([s[1] for s in snapshots], axis=0), rtol=1e-6)
    assert avg.n_averaged.item() == 5
    assert avg.module.count.item() == 4.0  # buffers follow the model when use_buffers=False
    assert avg.module.w is not model.w  # a deep copy


@pytest.mark.parametrize("use_multi", [True, False])
def test_ema(use_multi):
    model = TinyModel([1.0, 2.0], [0.0])
    kwargs = {"multi_avg_fn": get_ema_multi_avg_fn(0.9)} if use_multi else {"avg_fn": get_ema_avg_fn(0.9)}
    ema = AveragedModel(model, use_buffers=True, **kwargs)
    expected = np.array([1.0, 2.0])
    ema.update_parameters(model)
    for k in range(1, 6):
        model.w.copy_(fb.tensor([1.0 + k, 2.0 * k]))
        ema.update_parameters(model)
        expected = 0.9 * expected + 0.1 * model.w.numpy()
    np.testing.assert_allclose(next(iter(ema.parameters())).numpy(), expected, rtol=1e-6)


def test_custom_swa_avg_fn_and_forward():
    model = TinyModel([1.0, 2.0], [0.0])
    avg = AveragedModel(model, avg_fn=get_swa_avg_fn())
    avg.update_parameters(model)
    model.w.copy_(fb.tensor([3.0, 4.0]))
    avg.update_parameters(model)
    np.testing.assert_allclose(avg.module.w.numpy(), [2.0, 3.0])
    np.testing.assert_allclose(avg(fb.tensor([[1.0, 1.0]])).numpy(), [[2.0, 3.0]])
    with pytest.raises(ValueError, match="Invalid decay value"):
        get_ema_multi_avg_fn(1.5)


def test_update_bn_recomputes_statistics():
    model = TinyModel([1.0, 1.0], [0.0])
    model.training = False
    model.bn.running_mean.fill_(42.0)
    loader = [(fb.tensor([[1.0, 2.0], [3.0, 4.0]]), None), (fb.tensor([[5.0, 6.0], [7.0, 8.0]]), None)]
    update_bn(loader, model)
    np.testing.assert_allclose(model.bn.running_mean.numpy(), [4.0, 5.0])
    assert model.bn.seen == [None, None]  # momentum None during the pass
    assert model.bn.momentum == 0.1 and model.training is False  # both restored
