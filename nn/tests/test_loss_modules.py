"""The loss modules: constructor arguments and defaults as PyTorch, buffers, repr, the deprecated
arguments and NLLLoss2d, each module against its functional form; AdaptiveLogSoftmaxWithLoss."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck

RNG = np.random.default_rng(0)


def t(a, grad=False):
    return fb.tensor(a, dtype=fb.float64, requires_grad=grad)


X, Y = t(RNG.normal(size=(4, 5))), t(RNG.normal(size=(4, 5)))
P = t(RNG.uniform(0.05, 0.95, size=(4, 5)))
CLS = fb.tensor([0, 3, 4, 1])
SIGN = t(np.where(RNG.random(4) > 0.5, 1.0, -1.0))
W = t(RNG.uniform(0.5, 2.0, size=5))

# module, its inputs, the functional call it must equal
PAIRS = [
    (nn.L1Loss(reduction="sum"), (X, Y), lambda: F.l1_loss(X, Y, reduction="sum")),
    (nn.MSELoss(), (X, Y), lambda: F.mse_loss(X, Y)),
    (nn.CrossEntropyLoss(weight=W, ignore_index=3, label_smoothing=0.1), (X, CLS),
     lambda: F.cross_entropy(X, CLS, weight=W, ignore_index=3, label_smoothing=0.1)),
    (nn.NLLLoss(weight=W, reduction="none"), (X, CLS), lambda: F.nll_loss(X, CLS, weight=W, reduction="none")),
    (nn.PoissonNLLLoss(log_input=False, full=True), (P, P * 3),
     lambda: F.poisson_nll_loss(P, P * 3, log_input=False, full=True)),
    (nn.GaussianNLLLoss(full=True), (X, Y, P), lambda: F.gaussian_nll_loss(X, Y, P, full=True)),
    (nn.KLDivLoss(reduction="batchmean", log_target=True), (X, Y),
     lambda: F.kl_div(X, Y, reduction="batchmean", log_target=True)),
    (nn.BCELoss(weight=W), (P, P.round()), lambda: F.binary_cross_entropy(P, P.round(), weight=W)),
    (nn.BCEWithLogitsLoss(pos_weight=W), (X, P), lambda: F.binary_cross_entropy_with_logits(X, P, pos_weight=W)),
    (nn.HingeEmbeddingLoss(margin=0.5), (X, SIGN.unsqueeze(1).expand(4, 5)),
     lambda: F.hinge_embedding_loss(X, SIGN.unsqueeze(1).expand(4, 5), margin=0.5)),
    (nn.MultiLabelMarginLoss(), (X, fb.tensor([[1, 2, -1, 0, 0]] * 4)),
     lambda: F.multilabel_margin_loss(X, fb.tensor([[1, 2, -1, 0, 0]] * 4))),
    (nn.SmoothL1Loss(beta=0.3), (X, Y), lambda: F.smooth_l1_loss(X, Y, beta=0.3)),
    (nn.HuberLoss(delta=0.3), (X, Y), lambda: F.huber_loss(X, Y, delta=0.3)),
    (nn.SoftMarginLoss(), (X, SIGN.unsqueeze(1).expand(4, 5)),
     lambda: F.soft_margin_loss(X, SIGN.unsqueeze(1).expand(4, 5))),
    (nn.MultiLabelSoftMarginLoss(weight=W), (X, P.round()),
     lambda: F.multilabel_soft_margin_loss(X, P.round(), weight=W)),
    (nn.CosineEmbeddingLoss(margin=0.2), (X, Y, SIGN), lambda: F.cosine_embedding_loss(X, Y, SIGN, margin=0.2)),
    (nn.MarginRankingLoss(margin=0.1), (X[0], Y[0], SIGN[0].expand(5)),
     lambda: F.margin_ranking_loss(X[0], Y[0], SIGN[0].expand(5), margin=0.1)),
    (nn.MultiMarginLoss(p=2, margin=0.5, weight=W), (X, CLS),
     lambda: F.multi_margin_loss(X, CLS, p=2, margin=0.5, weight=W)),
    (nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True), (X, Y, P),
     lambda: F.triplet_margin_loss(X, Y, P, margin=0.5, p=1.0, swap=True)),
    (nn.TripletMarginWithDistanceLoss(margin=0.5), (X, Y, P),
     lambda: F.triplet_margin_with_distance_loss(X, Y, P, margin=0.5)),
]


@pytest.mark.parametrize("module,inputs,functional", PAIRS, ids=[type(p[0]).__name__ for p in PAIRS])
def test_module_equals_functional(module, inputs, functional):
    np.testing.assert_allclose(module(*inputs).numpy(), functional().numpy(), rtol=1e-12)
    assert repr(module) == f"{type(module).__name__}()"


def test_ctc_loss_module():
    lp = F.log_softmax(t(RNG.normal(size=(6, 2, 4))), 2)
    m = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    got = m(lp, fb.tensor([[1, 2], [3, 0]]), (6, 5), (2, 1))
    np.testing.assert_allclose(got.item(), F.ctc_loss(lp, fb.tensor([[1, 2], [3, 0]]), (6, 5), (2, 1),
                                                       reduction="sum").item())


def test_defaults_as_pytorch():
    ce = nn.CrossEntropyLoss()
    assert (ce.weight, ce.ignore_index, ce.reduction, ce.label_smoothing) == (None, -100, "mean", 0.0)
    assert nn.SmoothL1Loss().beta == 1.0 and nn.HuberLoss().delta == 1.0
    p = nn.PoissonNLLLoss()
    assert (p.log_input, p.full, p.eps) == (True, False, 1e-8)
    assert nn.KLDivLoss().log_target is False
    m = nn.MultiMarginLoss()
    assert (m.p, m.margin) == (1, 1.0)
    tm = nn.TripletMarginLoss()
    assert (tm.margin, tm.p, tm.eps, tm.swap) == (1.0, 2.0, 1e-6, False)
    ctc = nn.CTCLoss()
    assert (ctc.blank, ctc.reduction, ctc.zero_infinity) == (0, "mean", False)


def test_weights_are_buffers_in_the_state_dict():
    m = nn.CrossEntropyLoss(weight=fb.ones(3))
    assert list(m.state_dict()) == ["weight"]
    b = nn.BCEWithLogitsLoss(weight=fb.ones(2), pos_weight=fb.ones(2))
    assert sorted(b.state_dict()) == ["pos_weight", "weight"]
    assert nn.MSELoss().state_dict() == {} or len(nn.MSELoss().state_dict()) == 0
    assert m.double().weight.dtype is fb.float64


def test_deprecated_arguments_warn_and_map():
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert nn.CrossEntropyLoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert nn.L1Loss(reduce=False).reduction == "none"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.MSELoss(reduction="sum").reduction == "sum"


def test_nllloss2d_is_a_deprecated_alias():
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        m = nn.NLLLoss2d()
    assert isinstance(m, nn.NLLLoss)
    x = F.log_softmax(t(RNG.normal(size=(2, 3, 4, 4))), 1)
    target = fb.tensor(RNG.integers(0, 3, size=(2, 4, 4)))
    np.testing.assert_allclose(m(x, target).item(), F.nll_loss(x, target).item())


def test_constructor_errors():
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D instead"):
        nn.MultiMarginLoss(weight=fb.ones(2, 2))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)


def test_cross_entropy_module_trains():
    fb.manual_seed(0)
    model = nn.Linear(4, 3)
    x, y = fb.randn(32, 4), fb.randint(0, 3, (32,))
    loss_fn = nn.CrossEntropyLoss()
    first = loss_fn(model(x), y).item()
    for _ in range(50):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        with fb.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
    assert loss.item() < first


# -- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------------------

def _asm(head_bias=False):
    fb.manual_seed(0)
    return nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], div_value=2.0, head_bias=head_bias).double()


def test_adaptive_structure_and_repr():
    m = _asm()
    assert m.head.out_features == 7 and m.shortlist_size == 5 and m.n_clusters == 2
    assert [(s[0].out_features, s[1].out_features) for s in m.tail] == [(8, 7), (4, 8)]
    head = "AdaptiveLogSoftmaxWithLoss(\n  (head): Linear(in_features=16, out_features=7, bias=False)"
    assert repr(m).startswith(head)


def test_adaptive_output_is_the_log_prob_of_the_target_and_sums_to_one():
    m = _asm(head_bias=True)
    x = t(RNG.normal(size=(7, 16)))
    target = fb.tensor([0, 4, 5, 11, 12, 19, 3])
    out = m(x, target)
    full = m.log_prob(x).detach().numpy()
    np.testing.assert_allclose(np.exp(full).sum(1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out.output.detach().numpy(), full[np.arange(7), target.numpy()], rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), -full[np.arange(7), target.numpy()].mean(), rtol=1e-12)
    np.testing.assert_array_equal(m.predict(x).numpy(), full.argmax(1))
    one = m(x[2], target[2])
    assert one.output.shape == () and abs(one.output.item() - full[2, 5]) < 1e-12


def test_adaptive_gradcheck():
    m = _asm()
    target = fb.tensor([0, 7, 15])
    x = t(RNG.normal(size=(3, 16)), grad=True)
    assert gradcheck(lambda a: m(a, target).loss, (x,))


def test_adaptive_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    m = _asm()
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 19\]"):
        m(t(RNG.normal(size=(2, 16))), fb.tensor([0, 20]))
    with pytest.raises(RuntimeError, match="Input and target should have the same size in the batch dimension"):
        m(t(RNG.normal(size=(2, 16))), fb.tensor([0, 1, 2]))
