r"""AdamW: Adam with decoupled weight decay (Loshchilov and Hutter, 2019).

.. math::
    \begin{aligned}
        &\theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)\\
        &m_t \leftarrow \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad v_t \leftarrow \beta_2 v_{t-1} + (1-\beta_2) g_t^2\\
        &\theta_t \leftarrow \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
            \frac{m_t}{\sqrt{\hat v_t}/\sqrt{1-\beta_2^t} + \epsilon}
    \end{aligned}

The update is Adam's with ``decoupled_weight_decay=True`` (the same op and kernels).
"""
from __future__ import annotations

from typing import Any

from flambeau import Tensor

from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Implements the AdamW algorithm (Adam with decoupled weight decay).

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients for the running averages of the gradient
            and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay coefficient (default: 1e-2)
        amsgrad (bool, optional): whether to use the AMSGrad variant (default: False)
        foreach, maximize, capturable, differentiable, fused: as for :class:`Adam`.

    Example::

        >>> optimizer = flambeau.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    """

    _decoupled_default = True

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
          max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], **kwargs: Any) -> None:
    r"""Functional AdamW: :func:`~flambeau.optim.adam.adam` with decoupled weight decay."""
    kwargs["decoupled_weight_decay"] = True
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs)
