r"""ASGD: averaged stochastic gradient descent (Polyak and Juditsky, 1992).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &\theta_t \leftarrow \theta_{t-1}(1 - \lambda_d\eta_t) - \eta_t g_t\\
        &\bar\theta_t \leftarrow \bar\theta_{t-1} + \mu_t(\theta_t - \bar\theta_{t-1})
            \ (\bar\theta_t \leftarrow \theta_t \text{ while } \mu_t = 1)\\
        &\eta_{t+1} \leftarrow \gamma / (1 + \lambda_d\gamma t)^\alpha,\quad
         \mu_{t+1} \leftarrow 1 / \max(1, t - t_0)
    \end{aligned}

with decay term :math:`\lambda_d` (``lambd``), power :math:`\alpha` and averaging start :math:`t_0`;
:math:`\eta_1 = \gamma`, :math:`\mu_1 = 1`. The average is kept in ``state["ax"]``.
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau import Tensor

from ._functional import composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _float_scalar, _init_step, _init_zeros, _update_context

__all__ = ["ASGD", "asgd"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "eta": lambda p, group: _float_scalar(float(group["lr"])),
         "mu": lambda p, group: _float_scalar(1.0), "ax": _init_zeros}


@composite("optim_asgd")
def _single_tensor_asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor],
                        etas: list[Tensor], state_steps: list[Tensor], lambd: float, lr: float, t0: float,
                        alpha: float, weight_decay: float, maximize: bool) -> None:
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = maybe_negate(grad, maximize)
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        mu_value = mu.item()
        if mu_value != 1:
            ax.add_(param.sub(ax).mul_(mu_value))
        else:
            ax.copy_(param)
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))


def asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor], etas: list[Tensor],
         state_steps: list[Tensor], *, lambd: float, lr: float, t0: float, alpha: float, weight_decay: float,
         maximize: bool, foreach: bool | None = None, capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional ASGD (see :class:`ASGD`)."""
    run_update("optim_asgd", params, foreach, None, differentiable, params, grads, axs, mus, etas, state_steps,
               lambd, float(lr), t0, alpha, weight_decay, maximize)


class ASGD(Optimizer):
    r"""Implements Averaged Stochastic Gradient Descent.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lambd (float, optional): decay term (default: 1e-4)
        alpha (float, optional): power for eta update (default: 0.75)
        t0 (float, optional): point at which to start averaging (default: 1e6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, maximize, differentiable, capturable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    _scalar_state = frozenset({"step", "eta", "mu"})

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, axs, mus, etas, steps = self._group_tensors(
                    group, ("ax", "mu", "eta", "step"), _INIT)
                asgd(params, grads, axs, mus, etas, steps, lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
                     alpha=group["alpha"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                     foreach=group["foreach"], capturable=group["capturable"],
                     differentiable=group["differentiable"])
        return loss
