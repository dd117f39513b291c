r"""Adadelta: an adaptive learning rate method (Zeiler, 2012).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &v_t \leftarrow \rho v_{t-1} + (1-\rho) g_t^2\\
        &\Delta x_t \leftarrow \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}}\, g_t\\
        &u_t \leftarrow \rho u_{t-1} + (1-\rho)\Delta x_t^2\\
        &\theta_t \leftarrow \theta_{t-1} - \gamma\,\Delta x_t
    \end{aligned}
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau import Tensor

from ._functional import addcmul_, composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["Adadelta", "adadelta"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "square_avg": _init_zeros, "acc_delta": _init_zeros}


@composite("optim_adadelta")
def _single_tensor_adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                            acc_deltas: list[Tensor], state_steps: list[Tensor], lr: float, rho: float, eps: float,
                            weight_decay: float, maximize: bool) -> None:
    for param, grad, square_avg, acc_delta, step_t in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step_t.add_(1)
        grad = maybe_negate(grad, maximize)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        param.add_(delta, alpha=-lr)


def adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], acc_deltas: list[Tensor],
             state_steps: list[Tensor], *, lr: float, rho: float, eps: float, weight_decay: float, maximize: bool,
             foreach: bool | None = None, capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional Adadelta (see :class:`Adadelta`)."""
    run_update("optim_adadelta", params, foreach, None, differentiable, params, grads, square_avgs, acc_deltas,
               state_steps, float(lr), rho, eps, weight_decay, maximize)


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): coefficient that scales delta before it is applied to the
            parameters (default: 1.0)
        rho (float, optional): coefficient used for computing a running average of squared gradients
            (default: 0.9)
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        foreach, capturable, maximize, differentiable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.Adadelta(model.parameters(), rho=0.95)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, square_avgs, acc_deltas, steps = self._group_tensors(
                    group, ("square_avg", "acc_delta", "step"), _INIT)
                adadelta(params, grads, square_avgs, acc_deltas, steps, lr=group["lr"], rho=group["rho"],
                         eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                         foreach=group["foreach"], capturable=group["capturable"],
                         differentiable=group["differentiable"])
        return loss
