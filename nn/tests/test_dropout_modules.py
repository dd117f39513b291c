"""Dropout modules: training vs eval, p checked at construction, repr."""
from __future__ import annotations

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn as nn


@pytest.mark.parametrize("cls,shape", [(nn.Dropout, (1000,)), (nn.Dropout1d, (4, 50, 3)), (nn.Dropout2d, (4, 50, 2, 2)),
                                       (nn.Dropout3d, (2, 50, 2, 2, 2)), (nn.AlphaDropout, (1000,)),
                                       (nn.FeatureAlphaDropout, (4, 50, 3))])
def test_training_and_eval(cls, shape):
    m = cls(0.5)
    assert repr(m) == f"{cls.__name__}(p=0.5, inplace=False)"
    x = fb.ones(*shape)
    y = m(x)
    assert not (y == x).all()  # something was dropped in training mode
    m.eval()
    assert (m(x) == x).all()


@pytest.mark.parametrize("cls", [nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
                                 nn.FeatureAlphaDropout])
def test_p_checked_at_construction(cls):
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        cls(1.5)


def test_inplace_dropout_module():
    m = nn.Dropout(0.5, inplace=True)
    assert repr(m) == "Dropout(p=0.5, inplace=True)"
    x = fb.ones(100)
    assert m(x) is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}


def test_model_in_eval_is_deterministic():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
    x = fb.randn(3, 4)
    model.eval()
    assert (model(x) == model(x)).all()
    model.train()
    fb.manual_seed(0)
    a = model(x)
    fb.manual_seed(0)
    assert (model(x) == a).all()
