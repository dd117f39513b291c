"""flambeau.nn.utils.summary: shapes, counts and mult-adds from a meta run that allocates nothing."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
from flambeau import nn
from flambeau.nn.utils import summary


def _mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.Sequential(nn.Linear(512, 512), nn.Identity()),
                         nn.Linear(512, 10))


def test_rows_totals_and_table():
    model = _mlp()
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    s = summary(model, (128, 1, 28, 28))
    assert [(r.name, r.type, r.depth, r.output_shape) for r in s.layers] == [
        ("", "Sequential", 0, [128, 10]), ("0", "Flatten", 1, [128, 784]), ("1", "Linear", 1, [128, 512]),
        ("2", "Sequential", 1, [128, 512]), ("2.0", "Linear", 2, [128, 512]), ("2.1", "Identity", 2, [128, 512]),
        ("3", "Linear", 1, [128, 10])]
    params = 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10
    assert s.total_params == params and s.trainable_params == params
    assert [r.num_params for r in s.layers] == [0, 0, 784 * 512 + 512, 0, 512 * 512 + 512, 0, 5130]
    assert s.total_mult_adds == 128 * (784 * 512 + 512 * 512 + 512 * 10)
    assert s.param_bytes == 4 * params
    assert s.input_bytes == 4 * 128 * 784
    assert s.activation_bytes == 4 * 128 * (784 + 512 + 512 + 512 + 10)  # leaf modules' outputs
    text = str(s)
    assert "  1 (Linear)" in text and "401,920" in text and "Total params: 669,706" in text
    assert "Total mult-adds: 85,590,016" in text
    # the model is untouched: its tensors are back on the CPU with their values, no hooks left
    for k, v in model.state_dict().items():
        assert v.device.type == "cpu"
        np.testing.assert_array_equal(v.numpy(), before[k])
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_hundred_billion_parameters_on_meta():
    # 1e11 float32 parameters would be 400 GB: the meta run must allocate none of it
    model = nn.Sequential(nn.Linear(100_000, 1_000_000, device="meta"), nn.Linear(1_000_000, 1, device="meta"))
    s = summary(model, (2, 100_000))
    assert s.total_params == 100_000 * 1_000_000 + 1_000_000 + 1_000_000 + 1
    assert s.total_params > 10 ** 11
    assert s.layers[-1].output_shape == [2, 1]
    assert s.param_bytes == 4 * s.total_params


def test_frozen_shared_multiple_inputs_and_input_data():
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, shared)
    shared.bias.requires_grad_(False)
    s = summary(model, input_data=fb.ones(5, 3))
    assert s.total_params == 12 and s.trainable_params == 9 and s.non_trainable_params == 3
    assert s.layers[1].trainable is False
    bil = nn.Bilinear(3, 4, 2, dtype=fb.float64)
    s2 = summary(bil, [(6, 3), (6, 4)], dtypes=[fb.float64, fb.float64])
    assert s2.layers[0].output_shape == [6, 2] and s2.total_mult_adds == 6 * 3 * 4 * 2


def test_runs_on_cpu_when_asked_and_argument_errors():
    s = summary(nn.Linear(2, 3), (4, 2), device="cpu")
    assert s.layers[0].output_shape == [4, 3]
    with pytest.raises(ValueError, match="exactly one of input_size and input_data"):
        summary(nn.Linear(2, 3))
    with pytest.raises(TypeError, match="expects an nn.Module"):
        summary(3, (1,))
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        summary(nn.Linear(2, 3), (4, 5))
