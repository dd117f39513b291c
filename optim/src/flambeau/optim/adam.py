r"""Adam: adaptive moment estimation (Kingma and Ba, 2014), with AMSGrad and decoupled weight decay.

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if decoupled: } \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)
            \text{ else } g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &m_t \leftarrow \beta_1 m_{t-1} + (1-\beta_1) g_t\\
        &v_t \leftarrow \beta_2 v_{t-1} + (1-\beta_2) g_t^2\\
        &\text{if amsgrad: } \hat v_t \leftarrow \max(\hat v_{t-1}, v_t) \text{ else } \hat v_t \leftarrow v_t\\
        &\theta_t \leftarrow \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
            \frac{m_t}{\sqrt{\hat v_t}/\sqrt{1-\beta_2^t} + \epsilon}
    \end{aligned}
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import addcdiv_, addcmul_, composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["Adam", "adam"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "exp_avg": _init_zeros, "exp_avg_sq": _init_zeros}
_INIT_AMSGRAD = {**_INIT, "max_exp_avg_sq": _init_zeros}


@composite("optim_adam")
def _single_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor],
                        amsgrad: bool, beta1: float, beta2: float, lr: float, weight_decay: float, eps: float,
                        maximize: bool, decoupled_weight_decay: bool) -> None:
    for i, param in enumerate(params):
        grad = maybe_negate(grads[i], maximize)
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        step_t.add_(1)
        exp_avg.lerp_(grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        step = step_t.item()
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            flambeau.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        addcdiv_(param, exp_avg, denom, -step_size)


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
         max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, amsgrad: bool, beta1: float, beta2: float,
         lr: float, weight_decay: float, eps: float, maximize: bool, decoupled_weight_decay: bool = False,
         foreach: bool | None = None, fused: bool | None = None, capturable: bool = False,
         differentiable: bool = False) -> None:
    r"""Functional Adam: update ``params`` and their moments in place (see :class:`Adam`)."""
    run_update("optim_adam", params, foreach, fused, differentiable, params, grads, exp_avgs, exp_avg_sqs,
               max_exp_avg_sqs if amsgrad else [], state_steps, amsgrad, beta1, beta2, float(lr), weight_decay,
               eps, maximize, decoupled_weight_decay)


def _check_adam_args(lr: Any, betas: tuple, eps: float, weight_decay: float) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    r"""Implements the Adam algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        decoupled_weight_decay (bool, optional): if True, this optimizer is equivalent to AdamW and the
            algorithm will not accumulate weight decay in the momentum nor variance. (default: False)
        amsgrad (bool, optional): whether to use the AMSGrad variant (default: False)
        foreach (bool, optional): whether the multi-tensor op is used; ``False`` runs the
            single-tensor composite. (default: None)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        capturable (bool, optional): accepted for PyTorch compatibility; flambeau keeps ``step`` in a
            tensor either way and the update is the same (default: False)
        differentiable (bool, optional): whether autograd should occur through the optimizer step (default: False)
        fused (bool, optional): require the backend's fused kernel (default: None)

    Example::

        >>> optimizer = flambeau.optim.Adam(model.parameters(), lr=1e-3)
        >>> optimizer.step()
    """

    _decoupled_default = False

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool | None = None) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_foreach_fused(foreach, fused, differentiable)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_group(self, group: dict[str, Any]) -> tuple[list[Tensor], ...]:
        amsgrad = group["amsgrad"]
        return self._group_tensors(group, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if amsgrad else None, "step"),
                                   _INIT_AMSGRAD if amsgrad else _INIT)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                adam(*self._init_group(group), amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                     weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                     decoupled_weight_decay=group["decoupled_weight_decay"], foreach=group["foreach"],
                     fused=group["fused"], capturable=group["capturable"], differentiable=group["differentiable"])
        return loss
