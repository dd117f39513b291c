"""The connectionist temporal classification loss (``F.ctc_loss``).

The forward (alpha) recursion runs in log space over time, each step one set of tensor ops over the
whole batch and every position of the blank-extended targets; autograd differentiates it, which is
the backward (beta) recursion of the forward-backward algorithm. Unreachable states hold a large
finite negative number instead of -inf, so that no gradient is ever NaN (0 * inf); a sample that
no alignment can explain gets an infinite loss (zero, with a zero gradient, under ``zero_infinity``).
"""
from __future__ import annotations

from typing import Any, Sequence

import flambeau
from flambeau import Tensor

import flambeau.nn._reduction as _reduction

#: log-probability of an unreachable state: finite, so that exp(x - max) and its gradients stay finite.
_NEG = -1e30


def _lengths(name: str, lengths: Any, batch: int) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype.is_complex:
            raise RuntimeError(f"ctc_loss(): {name} must be integral, got {lengths.dtype}")
        values = lengths.reshape(-1).tolist()
    elif isinstance(lengths, int):
        values = [lengths]
    else:
        values = [int(v) for v in lengths]
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def _padded_targets(targets: Tensor, target_lengths: Sequence[int], batch: int) -> Tensor:
    """``(N, S)`` targets from the padded form, or from the 1-D concatenation of every sample's targets."""
    s_max = max(target_lengths, default=0)
    if targets.dim() == 2:
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' "
                               "(while checking arguments for ctc_loss_cpu)")
        if targets.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' "
                               "(while checking arguments for ctc_loss_cpu)")
        return targets[:, :s_max]
    if targets.dim() != 1:
        raise RuntimeError(f"ctc_loss(): targets must be 1-D (concatenated) or 2-D (padded), got {targets.dim()}-D")
    total = sum(target_lengths)
    if targets.shape[0] < total:
        raise RuntimeError(f"Expected tensor to have size at least {total} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)")
    index, offset = [], 0
    for length in target_lengths:
        index.append([offset + min(s, max(length - 1, 0)) for s in range(s_max)])
        offset += length
    if s_max == 0 or total == 0:
        return targets.new_zeros((batch, s_max))
    return targets[flambeau.tensor(index, dtype=flambeau.int64, device=targets.device)]


def _logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    top = flambeau.maximum(flambeau.maximum(a, b), c).detach()
    return top + ((a - top).exp() + (b - top).exp() + (c - top).exp()).log()


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    r"""The connectionist temporal classification loss: minus the log-probability of the targets,
    summed over every alignment of them with the inputs.

    Args:
        log_probs (Tensor): ``(T, N, C)`` or ``(T, C)`` log-probabilities (e.g. ``F.log_softmax(x, 2)``).
        targets (Tensor): ``(N, S)`` padded class indices, or the concatenation of every sample's
            targets (1-D); never ``blank``.
        input_lengths (Tensor or tuple): ``(N)``, each at most T.
        target_lengths (Tensor or tuple): ``(N)``.
        blank (int): the blank label. Default: 0.
        reduction (str): ``'none'`` | ``'mean'`` (each loss divided by its target length, then the
            batch mean) | ``'sum'``. Default: ``'mean'``.
        zero_infinity (bool): infinite losses (no alignment possible) and their gradients become 0.
            Default: False.
    """
    _reduction.get_enum(reduction)
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(f"ctc_loss(): expected log_probs to be 2-D or 3-D, got {log_probs.dim()}-D")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    if not log_probs.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss(): log_probs must be floating point, got {log_probs.dtype}")
    if targets.dtype not in (flambeau.int64, flambeau.int32):
        raise RuntimeError(f"ctc_loss(): targets must be int64 or int32, got {targets.dtype}")
    t_max, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    il = _lengths("input_lengths", input_lengths, batch)
    tl = _lengths("target_lengths", target_lengths, batch)
    for length in il:
        if not 0 <= length <= t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {length} "
                               "(while checking arguments for ctc_loss_cpu)")
    for length in tl:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length}")
    padded = _padded_targets(targets, tl, batch).to(flambeau.int64)
    s_max = padded.shape[1]
    device = log_probs.device
    tl_t = flambeau.tensor(tl, dtype=flambeau.int64, device=device)
    if s_max:
        within = flambeau.arange(s_max, device=device).unsqueeze(0) < tl_t.unsqueeze(1)
        with flambeau.no_grad():
            bad = within.logical_and((padded < 0).logical_or(padded >= classes))
            if bool(bad.any()):
                raise RuntimeError(f"ctc_loss(): target {int(padded[bad][0])} is out of range [0, {classes})")
        padded = padded.where(within, padded.new_full((), blank))

    # blank-extended targets: blank, l1, blank, l2, ..., lS, blank
    width = 2 * s_max + 1
    ext = flambeau.full((batch, width), blank, dtype=flambeau.int64, device=device)
    if s_max:
        ext[:, 1::2] = padded
    # a state may be reached from two back when it is a label different from the label two back
    skip = flambeau.zeros((batch, width), dtype=flambeau.bool, device=device)
    if width > 2:
        skip[:, 2:] = (ext[:, 2:] != blank).logical_and(ext[:, 2:] != ext[:, :-2])

    work = flambeau.float32 if log_probs.dtype in (flambeau.float16, flambeau.bfloat16) else log_probs.dtype
    lp = log_probs.to(work).clamp(min=_NEG)
    emit = lp.gather(2, ext.unsqueeze(0).expand(t_max, batch, width))  # (T, N, 2S+1)
    neg = flambeau.full((), _NEG, dtype=work, device=device)
    il_t = flambeau.tensor(il, dtype=flambeau.int64, device=device)

    start = flambeau.full((batch, width), _NEG, dtype=work, device=device)
    first = flambeau.arange(width, device=device) < 2
    if t_max:
        alpha = flambeau.where(first.unsqueeze(0), emit[0], neg)
    else:
        alpha = start
    # an empty input explains only an empty target
    alpha = flambeau.where((il_t > 0).unsqueeze(1), alpha,
                           flambeau.where((flambeau.arange(width, device=device) == 0).unsqueeze(0),
                                          flambeau.zeros((), dtype=work, device=device), neg))
    pad1 = flambeau.full((batch, 1), _NEG, dtype=work, device=device)
    pad2 = flambeau.full((batch, 2), _NEG, dtype=work, device=device)
    for t in range(1, t_max):
        one_back = flambeau.cat([pad1, alpha[:, :-1]], 1)
        two_back = flambeau.where(skip, flambeau.cat([pad2, alpha[:, :-2]], 1), neg)
        step = _logsumexp3(alpha, one_back, two_back) + emit[t]
        alpha = flambeau.where((il_t > t).unsqueeze(1), step, alpha)  # finished sequences keep their last alpha

    last = (2 * tl_t).unsqueeze(1)
    end_blank = alpha.gather(1, last).squeeze(1)
    end_label = flambeau.where(tl_t > 0, alpha.gather(1, (last - 1).clamp(min=0)).squeeze(1), neg)
    top = flambeau.maximum(end_blank, end_label).detach()
    ll = top + ((end_blank - top).exp() + (end_label - top).exp()).log()
    feasible = ll > _NEG / 2
    inf = flambeau.full((), float("inf"), dtype=work, device=device)
    loss = flambeau.where(feasible, -ll, flambeau.zeros((), dtype=work, device=device) if zero_infinity else inf)
    loss = loss.to(log_probs.dtype)
    if reduction == "mean":
        return (loss / tl_t.clamp(min=1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
