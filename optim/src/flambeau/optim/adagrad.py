r"""Adagrad: per-coordinate learning rates from the sum of squared gradients (Duchi et al., 2011).

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\tilde\gamma \leftarrow \gamma / (1 + (t-1)\eta)\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &s_t \leftarrow s_{t-1} + g_t^2 \qquad (s_0 = \text{initial\_accumulator\_value})\\
        &\theta_t \leftarrow \theta_{t-1} - \tilde\gamma\,\frac{g_t}{\sqrt{s_t} + \epsilon}
    \end{aligned}

with learning rate :math:`\gamma` and learning-rate decay :math:`\eta`.
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import addcdiv_, addcmul_, composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _update_context

__all__ = ["Adagrad", "adagrad"]

# State built at construction, in this (state_dict) order: name -> callable(p, group).
_INIT = {"step": _init_step, "sum": lambda p, group: flambeau.full_like(p, group["initial_accumulator_value"])}


@composite("optim_adagrad")
def _single_tensor_adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
                           state_steps: list[Tensor], lr: float, weight_decay: float, lr_decay: float, eps: float,
                           maximize: bool) -> None:
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = step_t.item()
        grad = maybe_negate(grad, maximize)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        addcmul_(state_sum, grad, grad, 1)
        std = state_sum.sqrt().add_(eps)
        addcdiv_(param, grad, std, -clr)


def adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor], state_steps: list[Tensor], *,
            lr: float, weight_decay: float, lr_decay: float, eps: float, maximize: bool,
            foreach: bool | None = None, fused: bool | None = None, differentiable: bool = False) -> None:
    r"""Functional Adagrad: update ``params`` and their accumulators in place (see :class:`Adagrad`)."""
    run_update("optim_adagrad", params, foreach, fused, differentiable, params, grads, state_sums, state_steps,
               float(lr), weight_decay, lr_decay, eps, maximize)


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the sum of squares of gradients
            (default: 0)
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-10)
        foreach (bool, optional): ``False`` runs the single-tensor composite (default: None)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)
        differentiable (bool, optional): whether autograd should occur through the step (default: False)
        fused (bool, optional): require the backend's fused kernel (default: None)

    Example::

        >>> optimizer = flambeau.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=1e-4)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_foreach_fused(foreach, fused, differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # Adagrad's state exists from construction, as in PyTorch.
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group, _INIT)

    def share_memory(self) -> None:
        """Move each parameter's accumulator (``state["sum"]``) to shared memory, in place.

        As in PyTorch, for Hogwild-style training with :mod:`flambeau.multiprocessing`: after this
        call the sums cross process boundaries without a copy, and every process that steps the
        optimizer updates the same accumulators. The ``step`` counters stay per process.
        """
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, sums, steps = self._group_tensors(group, ("sum", "step"))
                adagrad(params, grads, sums, steps, lr=group["lr"], weight_decay=group["weight_decay"],
                        lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"],
                        foreach=group["foreach"], fused=group["fused"], differentiable=group["differentiable"])
        return loss
