r"""RMSprop (Hinton's lecture notes), with the centered variant (Graves, 2013) and momentum.

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\text{if } \lambda \neq 0:\ g_t \leftarrow g_t + \lambda\theta_{t-1}\\
        &v_t \leftarrow \alpha v_{t-1} + (1-\alpha) g_t^2\\
        &\text{if centered: } \bar g_t \leftarrow \alpha \bar g_{t-1} + (1-\alpha) g_t,\
            d_t \leftarrow \sqrt{v_t - \bar g_t^2} + \epsilon \text{ else } d_t \leftarrow \sqrt{v_t} + \epsilon\\
        &\text{if } \mu > 0:\ b_t \leftarrow \mu b_{t-1} + g_t / d_t,\ \theta_t \leftarrow \theta_{t-1} - \gamma b_t\\
        &\text{else: } \theta_t \leftarrow \theta_{t-1} - \gamma g_t / d_t
    \end{aligned}
"""
from __future__ import annotations

from typing import Any, Callable

from flambeau import Tensor

from ._functional import addcdiv_, addcmul_, composite, maybe_negate, run_update
from .optimizer import Optimizer, _check_foreach_fused, _init_step, _init_zeros, _update_context

__all__ = ["RMSprop", "rmsprop"]


@composite("optim_rmsprop")
def _single_tensor_rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                           grad_avgs: list[Tensor], momentum_buffers: list[Tensor], state_steps: list[Tensor],
                           lr: float, alpha: float, eps: float, weight_decay: float, momentum: float, centered: bool,
                           maximize: bool) -> None:
    for i, param in enumerate(params):
        state_steps[i].add_(1)
        grad = maybe_negate(grads[i], maximize)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg = square_avgs[i]
        addcmul_(square_avg.mul_(alpha), grad, grad, 1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.sub(grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffers[i]
            addcdiv_(buf.mul_(momentum), grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            addcdiv_(param, grad, avg, -lr)


def rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], grad_avgs: list[Tensor],
            momentum_buffer_list: list[Tensor], state_steps: list[Tensor], *, lr: float, alpha: float, eps: float,
            weight_decay: float, momentum: float, centered: bool, maximize: bool, foreach: bool | None = None,
            capturable: bool = False, differentiable: bool = False) -> None:
    r"""Functional RMSprop: update ``params`` and their averages in place (see :class:`RMSprop`)."""
    run_update("optim_rmsprop", params, foreach, None, differentiable, params, grads, square_avgs,
               grad_avgs if centered else [], momentum_buffer_list if momentum > 0 else [], state_steps, float(lr),
               alpha, eps, weight_decay, momentum, centered, maximize)


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional): if True, compute the centered RMSProp, normalizing the gradient by
            an estimation of its variance (default: False)
        capturable, foreach, maximize, differentiable: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.9, centered=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_foreach_fused(foreach, None, differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                has_momentum, centered = group["momentum"] > 0, group["centered"]
                init = {"step": _init_step, "square_avg": _init_zeros}
                if has_momentum:
                    init["momentum_buffer"] = _init_zeros
                if centered:
                    init["grad_avg"] = _init_zeros
                params, grads, square_avgs, grad_avgs, bufs, steps = self._group_tensors(
                    group, ("square_avg", "grad_avg" if centered else None,
                            "momentum_buffer" if has_momentum else None, "step"), init)
                rmsprop(params, grads, square_avgs, grad_avgs, bufs, steps, lr=group["lr"], alpha=group["alpha"],
                        eps=group["eps"], weight_decay=group["weight_decay"], momentum=group["momentum"],
                        centered=group["centered"], maximize=group["maximize"], foreach=group["foreach"],
                        capturable=group["capturable"], differentiable=group["differentiable"])
        return loss
