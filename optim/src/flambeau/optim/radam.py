r"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if decoupled: } \theta_{t-1} \leftarrow \theta_{t-1}(1-\gamma\lambda)
            \text{ else } g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &m_t \leftarrow \beta_1 m_{t-1} + (1-\beta_1) g_t,\quad v_t \leftarrow \beta_2 v_{t-1} + (1-\beta_2) g_t^2\\
        &\hat m_t \leftarrow m_t / (1-\beta_1^t),\quad
         \rho_\infty \leftarrow \tfrac{2}{1-\beta_2} - 1,\quad
         \rho_t \leftarrow \rho_\infty - \tfrac{2t\beta_2^t}{1-\beta_2^t}\\
        &\text{if } \rho_t > 5:\ r_t \leftarrow \sqrt{\tfrac{(\rho_t-4)(\rho_t-2)\rho_\infty}
            {(\rho_\infty-4)(\rho_\infty-2)\rho_t}},\
            \theta_t \leftarrow \theta_{t-1} - \gamma\,\hat m_t\, r_t\,\frac{\sqrt{1-\beta_2^t}}{\sqrt{v_t}+\epsilon}\\
        &\text{else: } \theta_t \leftarrow \theta_{t-1} - \gamma\,\hat m_t
    \end{aligned}
"""
from __future__ import annotations

import math
from typing import Any, Callable

from flambeau import Tensor

from ._functional import addcmul_, composite, maybe_negate, run_update
from .adam import _check_adam_args
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["RAdam", "radam"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "exp_avg": _init_zeros, "exp_avg_sq": _init_zeros}


@composite("optim_radam")
def _single_tensor_radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], state_steps: list[Tensor], beta1: float, beta2: float, lr: float,
                         weight_decay: float, eps: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    for param, grad, exp_avg, exp_avg_sq, step_t in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
        grad = maybe_negate(grad, maximize)
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
          state_steps: list[Tensor], *, beta1: float, beta2: float, lr: float, weight_decay: float, eps: float,
          decoupled_weight_decay: bool = False, maximize: bool = False, foreach: bool | None = None,
          capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional RAdam (see :class:`RAdam`)."""
    run_update("optim_radam", params, foreach, None, differentiable, params, grads, exp_avgs, exp_avg_sqs,
               state_steps, beta1, beta2, float(lr), weight_decay, eps, decoupled_weight_decay, maximize)


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        decoupled_weight_decay (bool, optional): whether to decouple the weight decay as in AdamW
            (RAdamW) (default: False)
        foreach, maximize, capturable, differentiable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.RAdam(model.parameters())
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, exp_avgs, exp_avg_sqs, steps = self._group_tensors(
                    group, ("exp_avg", "exp_avg_sq", "step"), _INIT)
                beta1, beta2 = group["betas"]
                radam(params, grads, exp_avgs, exp_avg_sqs, steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                      weight_decay=group["weight_decay"], eps=group["eps"],
                      decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"],
                      foreach=group["foreach"], capturable=group["capturable"],
                      differentiable=group["differentiable"])
        return loss
