r"""Adamax: Adam with the infinity norm (Kingma and Ba, 2014, section 7).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &m_t \leftarrow \beta_1 m_{t-1} + (1-\beta_1) g_t\\
        &u_t \leftarrow \max(\beta_2 u_{t-1}, |g_t| + \epsilon)\\
        &\theta_t \leftarrow \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,\frac{m_t}{u_t}
    \end{aligned}
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import addcdiv_, composite, maybe_negate, run_update
from .adam import _check_adam_args
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["Adamax", "adamax"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "exp_avg": _init_zeros, "exp_inf": _init_zeros}


@composite("optim_adamax")
def _single_tensor_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_infs: list[Tensor],
                          state_steps: list[Tensor], eps: float, beta1: float, beta2: float, lr: float,
                          weight_decay: float, maximize: bool) -> None:
    for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        grad = maybe_negate(grad, maximize)
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        flambeau.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = lr / (1 - beta1 ** step_t.item())
        addcdiv_(param, exp_avg, exp_inf, -clr)


def adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_infs: list[Tensor],
           state_steps: list[Tensor], *, eps: float, beta1: float, beta2: float, lr: float, weight_decay: float,
           maximize: bool, foreach: bool | None = None, capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional Adamax (see :class:`Adamax`)."""
    run_update("optim_adamax", params, foreach, None, differentiable, params, grads, exp_avgs, exp_infs, state_steps,
               eps, beta1, beta2, float(lr), weight_decay, maximize)


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm (a variant of Adam based on the infinity norm).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, maximize, differentiable, capturable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.Adamax(model.parameters())
    """

    def __init__(self, params: Any, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, exp_avgs, exp_infs, steps = self._group_tensors(
                    group, ("exp_avg", "exp_inf", "step"), _INIT)
                beta1, beta2 = group["betas"]
                adamax(params, grads, exp_avgs, exp_infs, steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                       lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                       foreach=group["foreach"], capturable=group["capturable"],
                       differentiable=group["differentiable"])
        return loss
