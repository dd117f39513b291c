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


# -- multiply-adds of the layers beyond Linear/Bilinear (conventions in nn/utils/_mult_adds.py) ---------

def _one(module, *shapes):
    """The mult-adds summary() gives the model's own (first) row."""
    return summary(module, [tuple(s) for s in shapes]).layers[0].mult_adds


@pytest.mark.parametrize("module, shape, expected", [
    (nn.Conv2d(3, 8, 3, padding=1), (2, 3, 16, 16), 2 * 8 * 16 * 16 * 3 * 9),  # each output: in * k * k
    (nn.Conv1d(4, 6, 5, stride=2, groups=2), (3, 4, 20), 3 * 6 * 8 * (4 // 2) * 5),  # groups split the input
    (nn.Conv3d(2, 2, (1, 2, 3)), (2, 4, 4, 4), 2 * 4 * 3 * 2 * 2 * 6),  # unbatched (C, D, H, W)
    (nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2), (1, 4, 5, 5), 4 * 25 * (6 // 2) * 9),  # each input scatters
    (nn.ConvTranspose1d(3, 5, 4), (2, 3, 7), 2 * 3 * 7 * 5 * 4),
])
def test_convolutions(module, shape, expected):
    assert _one(module, shape) == expected


def _weights(module):
    return sum(p.numel() for name, p in module.named_parameters() if "weight" in name)


@pytest.mark.parametrize("module, shape, steps", [
    (nn.LSTM(10, 20, num_layers=2, bidirectional=True), (7, 3, 10), 21),
    (nn.LSTM(10, 20, proj_size=5, batch_first=True), (3, 7, 10), 21),
    (nn.GRU(10, 20, num_layers=3), (7, 10), 7),  # unbatched
    (nn.RNN(6, 4, nonlinearity="relu", bidirectional=True), (5, 2, 6), 10),
])
def test_recurrent_layers_multiply_every_weight_once_per_step(module, shape, steps):
    # one product per weight and (sequence, time step): 4 gates * 20 * (10 + 20) per LSTM layer-direction...
    assert _one(module, shape) == steps * _weights(module)


def test_recurrent_layers_by_hand_and_the_cells():
    assert _one(nn.LSTM(10, 20, num_layers=2, bidirectional=True), (7, 3, 10)) == \
        21 * 2 * (4 * 20 * (10 + 20) + 4 * 20 * (40 + 20))
    assert _one(nn.LSTM(10, 20, proj_size=5), (1, 1, 10)) == 4 * 20 * (10 + 5) + 20 * 5
    assert _one(nn.GRUCell(10, 20), (4, 10)) == 4 * 3 * 20 * (10 + 20)
    assert _one(nn.LSTMCell(10, 20), (10,)) == 4 * 20 * 30
    assert _one(nn.RNNCell(3, 2), (5, 3)) == 5 * 2 * 5


def test_multihead_attention_counts_projections_scores_and_output():
    mha = nn.MultiheadAttention(16, 4)
    q, kv = fb.zeros(5, 2, 16), fb.zeros(7, 2, 16)
    expected = 2 * (5 * 16 * 16 + 2 * 7 * 16 * 16) + 2 * 2 * 5 * 7 * 16 + 2 * 5 * 16 * 16
    assert summary(mha, input_data=[q, kv, kv]).layers[0].mult_adds == expected
    # key and value given by keyword count the same
    wrapped = _KeywordAttention(mha)
    assert summary(wrapped, input_data=[q, kv]).layers[1].mult_adds == expected
    cross = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, batch_first=True)
    got = summary(cross, input_data=[fb.zeros(4, 6, 8), fb.zeros(4, 9, 3), fb.zeros(4, 9, 5)]).layers[0].mult_adds
    assert got == 4 * (6 * 8 * 8 + 9 * 3 * 8 + 9 * 5 * 8) + 2 * 4 * 6 * 9 * 8 + 4 * 6 * 8 * 8


class _KeywordAttention(nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, q, kv):
        return self.mha(q, key=kv, value=kv)[0]


@pytest.mark.parametrize("module, shape, expected", [
    (nn.BatchNorm2d(8), (2, 8, 4, 4), 2 * 256),  # normalise, then the affine scale
    (nn.BatchNorm1d(8, affine=False), (4, 8), 32),
    (nn.InstanceNorm1d(3), (2, 3, 5), 30),  # not affine by default
    (nn.LayerNorm(16), (3, 16), 2 * 48),
    (nn.GroupNorm(2, 4), (2, 4, 3), 2 * 24),
    (nn.RMSNorm(16, elementwise_affine=False), (3, 16), 48),
    (nn.LocalResponseNorm(3), (2, 4, 5), 40 * 3),
    (nn.MaxPool2d(2), (1, 3, 8, 8), 48 * 4),  # window size per output element
    (nn.AvgPool1d(3, stride=1), (2, 2, 10), 32 * 3),
    (nn.MaxPool3d((1, 2, 2)), (1, 1, 2, 4, 4), 8 * 4),
    (nn.LPPool2d(2, 3), (1, 2, 6, 6), 8 * 9),
    (nn.AdaptiveAvgPool2d(1), (2, 3, 4, 4), 96),  # every input element once
    (nn.AdaptiveMaxPool1d(2), (3, 10), 30),
    (nn.ReLU(), (4, 4), 0),
])
def test_norms_and_pooling(module, shape, expected):
    assert _one(module, shape) == expected


def test_a_small_cnn_totals_its_layers():
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 13 * 13, 10))
    s = summary(model, (8, 1, 28, 28))
    conv, bn, pool, fc = 8 * 4 * 26 * 26 * 9, 2 * 8 * 4 * 26 * 26, 8 * 4 * 13 * 13 * 4, 8 * 676 * 10
    assert [r.mult_adds for r in s.layers] == [0, conv, bn, 0, pool, 0, fc]
    assert s.total_mult_adds == conv + bn + pool + fc


def test_packed_sequences_count_the_steps_they_hold_and_keep_batch_sizes_on_the_cpu():
    from flambeau.nn.utils.rnn import pack_padded_sequence

    lstm = nn.LSTM(4, 8)
    packed = pack_padded_sequence(fb.zeros(5, 3, 4), fb.tensor([5, 3, 2]))
    for device in ("meta", "cpu"):
        s = summary(lstm, input_data=[packed], device=device)
        assert s.layers[0].mult_adds == (5 + 3 + 2) * 4 * 8 * (4 + 8)
