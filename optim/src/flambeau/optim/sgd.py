r"""Stochastic gradient descent, with momentum, dampening and Nesterov momentum.

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &\text{if } \mu \neq 0:\\
        &\quad b_t \leftarrow g_t \text{ at } t = 1, \text{ else } \mu b_{t-1} + (1-\tau) g_t\\
        &\quad g_t \leftarrow g_t + \mu b_t \text{ if nesterov, else } b_t\\
        &\theta_t \leftarrow \theta_{t-1} - \gamma g_t
    \end{aligned}

with learning rate :math:`\gamma`, weight decay :math:`\lambda`, momentum :math:`\mu` and
dampening :math:`\tau`.
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _update_context

__all__ = ["SGD", "sgd"]


@composite("optim_sgd")
def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor], momentum_buffers: list[Tensor],
                       weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool,
                       maximize: bool, is_first_step: bool) -> None:
    for i, param in enumerate(params):
        d_p = maybe_negate(grads[i], maximize)
        if weight_decay != 0:
            d_p = d_p.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffers[i]
            if is_first_step:
                buf.copy_(d_p)
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
            d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
        param.add_(d_p, alpha=-lr)


def sgd(params: list[Tensor], d_p_list: list[Tensor], momentum_buffer_list: list[Tensor], *,
        weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool, maximize: bool,
        is_first_step: bool = False, foreach: bool | None = None, fused: bool | None = None,
        differentiable: bool = False) -> None:
    r"""Functional SGD: update ``params`` in place (see :class:`SGD`).

    ``momentum_buffer_list`` holds one buffer per parameter when ``momentum != 0`` (filled with the
    gradient when ``is_first_step``), and is empty otherwise.
    """
    run_update("optim_sgd", params, foreach, fused, differentiable, params, d_p_list, momentum_buffer_list,
               weight_decay, momentum, float(lr), dampening, nesterov, maximize, is_first_step)


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum. Only applicable when momentum is
            non-zero. (default: False)
        maximize (bool, optional): maximize the objective with respect to the params, instead of
            minimizing (default: False)
        foreach (bool, optional): whether the multi-tensor op is used; ``False`` runs the
            single-tensor composite. (default: None)
        differentiable (bool, optional): whether autograd should occur through the optimizer step
            (default: False)
        fused (bool, optional): require the backend's fused kernel (default: None)

    Example::

        >>> optimizer = flambeau.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> optimizer.zero_grad()
        >>> loss_fn(model(input), target).backward()
        >>> optimizer.step()
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_foreach_fused(foreach, fused, differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                momentum = group["momentum"]
                fresh, old = ([], [], []), ([], [], [])
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if momentum != 0 and buf is None:
                        buf = state["momentum_buffer"] = flambeau.zeros_like(p)
                        target = fresh
                    else:
                        target = old
                    target[0].append(p)
                    target[1].append(p.grad)
                    if momentum != 0:
                        target[2].append(buf)
                for (params, grads, bufs), first in ((old, False), (fresh, True)):
                    sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=momentum,
                        lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                        maximize=group["maximize"], is_first_step=first, foreach=group["foreach"],
                        fused=group["fused"], differentiable=group["differentiable"])
        return loss
