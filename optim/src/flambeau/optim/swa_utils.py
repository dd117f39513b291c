r"""Stochastic weight averaging and exponential moving averages of a model's weights.

``AveragedModel`` keeps a copy of a model whose parameters are a running average of the model's:
the equal-weight SWA average (Izmailov et al., 2018) by default,

.. math:: \bar\theta_{n+1} = \bar\theta_n + \frac{\theta - \bar\theta_n}{n + 1},

or an EMA, :math:`\bar\theta \leftarrow \text{decay}\,\bar\theta + (1-\text{decay})\,\theta`
(``multi_avg_fn=get_ema_multi_avg_fn(decay)``). ``SWALR`` anneals the learning rate to a constant
SWA rate; ``update_bn`` recomputes batch-norm statistics for the averaged weights.

These work with any model object that has ``parameters()``, ``buffers()`` and ``modules()`` (and
``train()``/``training`` for ``update_bn``), which ``flambeau.nn.Module`` provides; flambeau-optim
does not depend on flambeau-nn.
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any, Callable, Iterable

import flambeau
from flambeau import Tensor

from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer, _no_grad

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

AvgFn = Callable[[Tensor, Tensor, Tensor], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Tensor], None]


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """The in-place EMA update of lists of tensors: ``ema <- decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list: list[Tensor], current_param_list: list[Tensor], _: Any) -> None:
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if p_ema.is_floating_point() or p_ema.is_complex():
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """The in-place equal-weight average of lists of tensors: ``avg <- avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param_list: list[Tensor], current_param_list: list[Tensor], num_averaged: Any) -> None:
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            p_avg.add_((p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """The EMA of one tensor, returned (not in place)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The equal-weight running average of one tensor, returned (not in place)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        return averaged_param + (current_param - averaged_param) / (n + 1)

    return swa_update


class AveragedModel:
    r"""A copy of ``model`` whose weights average the model's over calls to :meth:`update_parameters`.

    Args:
        model: the model to average (deep-copied); anything with ``parameters()``, ``buffers()``
            and ``modules()``, such as a ``flambeau.nn.Module``.
        device (str or device, optional): if given, the copy is moved there (``model.to(device)``).
        avg_fn (function, optional): ``avg_fn(averaged_param, model_param, num_averaged)`` returning
            the new average of one tensor.
        multi_avg_fn (function, optional): ``multi_avg_fn(averaged_params, model_params, num_averaged)``
            updating lists of tensors in place (takes precedence over ``avg_fn``).
        use_buffers (bool): average the buffers too (otherwise they are copied). Default: False.

    Example::

        >>> swa_model = AveragedModel(model)
        >>> ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        >>> for epoch in range(epochs):
        ...     train(model, optimizer)
        ...     swa_model.update_parameters(model)
        >>> update_bn(loader, swa_model)
    """

    def __init__(self, model: Any, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.n_averaged = flambeau.tensor(0, dtype=flambeau.int64)
        if device is not None:
            self.n_averaged = self.n_averaged.to(device)
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers
        self.training = getattr(self.module, "training", True)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged model."""
        return self.module(*args, **kwargs)

    def parameters(self, recurse: bool = True) -> Iterable[Tensor]:
        return self.module.parameters()

    def buffers(self, recurse: bool = True) -> Iterable[Tensor]:
        yield from self.module.buffers()
        yield self.n_averaged

    def modules(self) -> Iterable[Any]:
        yield self
        yield from self.module.modules()

    def train(self, mode: bool = True) -> "AveragedModel":
        self.training = mode
        if hasattr(self.module, "train"):
            self.module.train(mode)
        return self

    def eval(self) -> "AveragedModel":
        return self.train(False)

    def update_parameters(self, model: Any) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        with _no_grad():
            self._update(model)

    def _update(self, model: Any) -> None:
        if self.use_buffers:
            self_params = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            model_params = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            self_params = list(self.module.parameters())
            model_params = list(model.parameters())
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        for p_averaged, p_model in zip(self_params, model_params):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if first:
                p_averaged.detach().copy_(p_model_)
        if not first:
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, self.n_averaged)
            elif self.avg_fn is None:
                get_swa_multi_avg_fn()(averaged, current, self.n_averaged)
            else:
                for p_averaged, p_model in zip(averaged, current):
                    p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged))
        if not self.use_buffers:
            # Buffers that are not averaged follow the source model.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged.add_(1)


def _is_batchnorm(module: Any) -> bool:
    try:
        from flambeau.nn.modules.batchnorm import _BatchNorm  # type: ignore[import-not-found]
    except ImportError:
        _BatchNorm = None
    if _BatchNorm is not None and isinstance(module, _BatchNorm):
        return True
    return all(hasattr(module, a) for a in ("running_mean", "running_var", "momentum", "reset_running_stats"))


def update_bn(loader: Iterable[Any], model: Any, device: Any = None) -> None:
    r"""Recompute the batch-norm running statistics of ``model`` with one pass over ``loader``.

    Each batch norm's statistics are reset and its ``momentum`` set to None (a cumulative average)
    for the pass, then restored; the model's training mode is restored too.

    Args:
        loader: an iterable of batches (a list or tuple batch uses its first element).
        model: the model (anything with ``modules()``, ``train()`` and ``training``).
        device (optional): if given, each batch is moved there first.

    Example::

        >>> update_bn(loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneals each group's learning rate to a fixed SWA value over ``anneal_epochs`` epochs, then holds it.

    .. math:: \eta_t = \alpha_t\,\eta_{swa} + (1 - \alpha_t)\,\eta_0,\quad
              \alpha_t = a\big(\min(1, t / \text{anneal\_epochs})\big)

    with :math:`a(x) = x` (``linear``) or :math:`(1 - \cos\pi x)/2` (``cos``).

    Args:
        optimizer (Optimizer): wrapped optimizer.
        swa_lr (float or list): the SWA learning rate(s).
        anneal_epochs (int): number of epochs in the annealing phase. Default: 10.
        anneal_strategy (str): ``"cos"`` or ``"linear"``. Default: "cos".
        last_epoch (int): the index of the last epoch. Default: -1.

    Example::

        >>> swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5)
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        if self.anneal_strategy == "linear":
            return t
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
