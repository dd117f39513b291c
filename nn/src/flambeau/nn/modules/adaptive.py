"""Modules: ``AdaptiveLogSoftmaxWithLoss`` (Grave et al., "Efficient softmax approximation for GPUs")."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

import flambeau
from flambeau import Tensor

from ..functional.softmax import log_softmax
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""Efficient softmax approximation: frequent classes in a head, rare ones in clusters of smaller projections.

    The head scores the ``cutoffs[0]`` most frequent classes and one entry per cluster; cluster ``i``
    (classes ``cutoffs[i]`` to ``cutoffs[i + 1] - 1``) projects the input to
    ``in_features // div_value ** (i + 1)`` features before scoring its classes.

    Args:
        in_features (int): the number of features of the input.
        n_classes (int): the number of classes.
        cutoffs (Sequence[int]): increasing class indices in ``[1, n_classes - 1]`` where clusters start.
        div_value (float): the ratio between the clusters' projection sizes. Default: 4.0.
        head_bias (bool): whether the head has a bias. Default: False.

    Returns:
        ``forward`` returns a named tuple ``(output, loss)``: each target's log-probability, shape
        ``(N)`` (or ``()``), and the mean negative log-likelihood.

    Shape:
        - input: :math:`(N, \text{in\_features})` or :math:`(\text{in\_features})`.
        - target: :math:`(N)` or :math:`()`, class indices in ``[0, n_classes)``.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, **factory),
                                        Linear(hsz, osz, bias=False, **factory)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{list(input_.shape)}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{list(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if input.shape[-1] != self.in_features:
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: expected input with {self.in_features} features, got "
                               f"{list(input.shape)}")
        batch = target.shape[0]
        with flambeau.no_grad():
            if batch and bool(((target < 0).logical_or(target >= self.n_classes)).any()):
                raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                   f"[{int(target.min())}, {int(target.max())}] were found. ")
        # each row's entry in the head: its class (shortlist) or its cluster's entry
        gather_inds = target.clone()
        output = input.new_zeros(batch)
        bounds = [0] + self.cutoffs
        for i in range(1, len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low).logical_and(target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            gather_inds = gather_inds.masked_fill(mask, self.shortlist_size + i - 1)
            cluster_logprob = log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = cluster_logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1)).squeeze(1)
            output = output.index_put((rows,), local)
        head_logprob = log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return flambeau.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        r"""The log-probabilities of every class, shape ``(N, n_classes)`` (or ``(n_classes)``)."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        r"""The most likely class of each input row, shape ``(N)`` (or ``()``); cheaper than ``log_prob().argmax(1)``
        when the head's best entry is a shortlist class."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = head_output.argmax(1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            rows = outside.nonzero().reshape(-1)
            full = self._get_full_log_prob(x.index_select(0, rows), head_output.index_select(0, rows))
            output = output.index_put((rows,), full.argmax(1))
        return output if batched else output.squeeze(0)
