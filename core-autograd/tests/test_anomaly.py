"""detect_anomaly / set_detect_anomaly."""
from __future__ import annotations

import warnings

import pytest

import flambeau as fb
from flambeau.autograd import detect_anomaly, set_detect_anomaly


def forward_that_makes_nan(x):
    return x.sqrt()  # the line the anomaly report must point at


def test_nan_in_backward_names_forward_op():
    x = fb.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = forward_that_makes_nan(x) * 0
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.sum().backward()
    messages = [str(w.message) for w in caught]
    report = [m for m in messages if m.startswith("Error detected in SqrtBackward0")]
    assert report and "forward_that_makes_nan" in report[0]


def test_set_detect_anomaly_toggles():
    assert not fb.autograd.is_anomaly_enabled()
    with set_detect_anomaly(True):
        assert fb.autograd.is_anomaly_enabled()
    assert not fb.autograd.is_anomaly_enabled()


def test_without_anomaly_nan_passes_silently():
    x = fb.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x.sqrt() * 0).sum().backward()
    assert x.grad.isnan().all()
