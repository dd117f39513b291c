r"""Rprop: resilient backpropagation (Riedmiller and Braun, 1993).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\eta_t \leftarrow \begin{cases}
            \min(\eta_{t-1}\eta_+, \Gamma_{max}) & g_t g_{t-1} > 0\\
            \max(\eta_{t-1}\eta_-, \Gamma_{min}) & g_t g_{t-1} < 0 \ (\text{and then } g_t \leftarrow 0)\\
            \eta_{t-1} & \text{otherwise}\end{cases}\\
        &\theta_t \leftarrow \theta_{t-1} - \eta_t\,\mathrm{sign}(g_t),\qquad g_{t-1} \leftarrow g_t
    \end{aligned}

with step sizes starting at the learning rate, :math:`(\eta_-, \eta_+)` = ``etas`` and
:math:`(\Gamma_{min}, \Gamma_{max})` = ``step_sizes``.
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["Rprop", "rprop"]

# State built on a parameter's first step, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "prev": _init_zeros,
         "step_size": lambda p, group: flambeau.full_like(p.grad, float(group["lr"]))}


@composite("optim_rprop")
def _single_tensor_rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor], step_sizes: list[Tensor],
                         state_steps: list[Tensor], step_size_min: float, step_size_max: float, etaminus: float,
                         etaplus: float, maximize: bool) -> None:
    for param, grad, prev, step_size, step_t in zip(params, grads, prevs, step_sizes, state_steps):
        grad = maybe_negate(grad, maximize)
        step_t.add_(1)
        product_sign = grad.mul(prev).sign()
        flipped = product_sign < 0
        factor = flambeau.where(product_sign > 0, flambeau.full_like(step_size, etaplus),
                                flambeau.where(flipped, flambeau.full_like(step_size, etaminus),
                                               flambeau.ones_like(step_size)))
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # Where the gradient changed sign, this step does not move and the next one starts afresh.
        grad = flambeau.where(flipped, flambeau.zeros_like(grad), grad)
        param.add_(grad.sign() * step_size, alpha=-1)
        prev.copy_(grad)


def rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor], step_sizes: list[Tensor],
          state_steps: list[Tensor], *, step_size_min: float, step_size_max: float, etaminus: float, etaplus: float,
          maximize: bool, foreach: bool | None = None, capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional Rprop (see :class:`Rprop`)."""
    run_update("optim_rprop", params, foreach, None, differentiable, params, grads, prevs, step_sizes, state_steps,
               step_size_min, step_size_max, etaminus, etaplus, maximize)


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, optional): learning rate (the initial step size) (default: 1e-2)
        etas (Tuple[float, float], optional): pair of (etaminus, etaplus), the multiplicative decrease
            and increase factors (default: (0.5, 1.2))
        step_sizes (Tuple[float, float], optional): a pair of minimal and maximal allowed step sizes
            (default: (1e-6, 50))
        capturable, foreach, maximize, differentiable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.Rprop(model.parameters())
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
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
                params, grads, prevs, step_sizes, steps = self._group_tensors(
                    group, ("prev", "step_size", "step"), _INIT)
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                rprop(params, grads, prevs, step_sizes, steps, step_size_min=step_size_min,
                      step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"],
                      foreach=group["foreach"], capturable=group["capturable"],
                      differentiable=group["differentiable"])
        return loss
