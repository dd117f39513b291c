r"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with momentum decay and decoupled weight decay.

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if decoupled: } \theta_{t-1} \leftarrow \theta_{t-1}(1-\gamma\lambda)
            \text{ else } g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &\mu_t \leftarrow \beta_1\big(1 - \tfrac12 0.96^{t\psi}\big),\quad
         \mu_{t+1} \leftarrow \beta_1\big(1 - \tfrac12 0.96^{(t+1)\psi}\big),\quad
         \Pi_t \leftarrow \textstyle\prod_{i\le t}\mu_i\\
        &m_t \leftarrow \beta_1 m_{t-1} + (1-\beta_1) g_t,\quad v_t \leftarrow \beta_2 v_{t-1} + (1-\beta_2) g_t^2\\
        &d_t \leftarrow \sqrt{v_t / (1-\beta_2^t)} + \epsilon\\
        &\theta_t \leftarrow \theta_{t-1} - \gamma\frac{1-\mu_t}{1-\Pi_t}\frac{g_t}{d_t}
            - \gamma\frac{\mu_{t+1}}{1-\Pi_t\mu_{t+1}}\frac{m_t}{d_t}
    \end{aligned}

with momentum decay :math:`\psi`.
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau import Tensor

from ._functional import addcdiv_, addcmul_, composite, maybe_negate, run_update
from .adam import _check_adam_args
from .optimizer import Optimizer, _check_foreach_fused, _float_scalar, _init_step, _init_zeros, _update_context

__all__ = ["NAdam", "nadam"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "mu_product": lambda p, group: _float_scalar(1.0), "exp_avg": _init_zeros,
         "exp_avg_sq": _init_zeros}


@composite("optim_nadam")
def _single_tensor_nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], mu_products: list[Tensor], state_steps: list[Tensor],
                         beta1: float, beta2: float, lr: float, weight_decay: float, momentum_decay: float,
                         eps: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    for i, param in enumerate(params):
        grad = maybe_negate(grads[i], maximize)
        exp_avg, exp_avg_sq, mu_product, step_t = exp_avgs[i], exp_avg_sqs[i], mu_products[i], state_steps[i]
        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        exp_avg.lerp_(grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        mu_product_value = mu_product.item()
        addcdiv_(param, grad, denom, (-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_value * mu_next))


def nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
          mu_products: list[Tensor], state_steps: list[Tensor], *, beta1: float, beta2: float, lr: float,
          weight_decay: float, momentum_decay: float, eps: float, decoupled_weight_decay: bool = False,
          maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
          differentiable: bool = False) -> None:
    r"""Functional NAdam (see :class:`NAdam`)."""
    run_update("optim_nadam", params, foreach, None, differentiable, params, grads, exp_avgs, exp_avg_sqs, mu_products,
               state_steps, beta1, beta2, float(lr), weight_decay, momentum_decay, eps, decoupled_weight_decay,
               maximize)


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum_decay (float, optional): momentum decay (default: 4e-3)
        decoupled_weight_decay (bool, optional): whether to decouple the weight decay as in AdamW
            (NAdamW) (default: False)
        foreach, maximize, capturable, differentiable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.NAdam(model.parameters(), momentum_decay=4e-3)
    """

    _scalar_state = frozenset({"step", "mu_product"})

    def __init__(self, params: Any, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, exp_avgs, exp_avg_sqs, mu_products, steps = self._group_tensors(
                    group, ("exp_avg", "exp_avg_sq", "mu_product", "step"), _INIT)
                beta1, beta2 = group["betas"]
                nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, beta1=beta1, beta2=beta2,
                      lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                      eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                      maximize=group["maximize"], foreach=group["foreach"], capturable=group["capturable"],
                      differentiable=group["differentiable"])
        return loss
