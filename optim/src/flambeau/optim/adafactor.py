r"""Adafactor: adaptive learning rates with sublinear memory cost (Shazeer and Stern, 2018).

For a matrix (or a batch of them) the second moment is kept factored, as row and column means;
vectors keep it whole.

.. math::
    \begin{aligned}
        &g_t \leftarrow \nabla_\theta f_t(\theta_{t-1}) \quad(\text{negated if maximize})\\
        &\hat\beta_{2t} \leftarrow 1 - t^{c},\quad \rho_t \leftarrow \min(\gamma, 1/\sqrt t),\quad
         \alpha_t \leftarrow \max(\epsilon_2, \mathrm{RMS}(\theta_{t-1}))\,\rho_t\\
        &\theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)\\
        &\text{matrix: } R_t \leftarrow \hat\beta_{2t}R_{t-1} + (1-\hat\beta_{2t})\,\mathrm{mean}_{col}(g_t^2),\
         C_t \leftarrow \hat\beta_{2t}C_{t-1} + (1-\hat\beta_{2t})\,\mathrm{mean}_{row}(g_t^2),\
         \hat V_t \leftarrow \frac{R_t C_t}{\max(\mathrm{mean}(R_t), \epsilon_1)}\\
        &\text{vector: } \hat V_t \leftarrow \hat\beta_{2t}\hat V_{t-1} + (1-\hat\beta_{2t})\,g_t^2\\
        &U_t \leftarrow g_t / \sqrt{\max(\hat V_t, \epsilon_1^2)},\quad
         \theta_t \leftarrow \theta_{t-1} - \frac{\alpha_t}{\max(1, \mathrm{RMS}(U_t)/d)}\,U_t
    \end{aligned}

with learning rate :math:`\gamma`, ``beta2_decay`` :math:`c`, ``eps`` :math:`(\epsilon_1, \epsilon_2)`
(:math:`\epsilon_1` defaults to the dtype's machine epsilon), clipping threshold :math:`d`.
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from ._functional import composite, maybe_negate, run_update
from .optimizer import Optimizer, _float_scalar, _update_context

__all__ = ["Adafactor", "adafactor"]


def _rms(x: Tensor) -> float:
    return (flambeau.sum(x * x).item() ** 0.5) / (x.numel() ** 0.5)


@composite("optim_adafactor")
def _single_tensor_adafactor(params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor],
                             col_vars: list[Tensor], variances: list[Tensor], state_steps: list[Tensor], d: float,
                             lr: float, beta2_decay: float, weight_decay: float, eps1: float | None, eps2: float,
                             maximize: bool) -> None:
    factored = iter(zip(row_vars, col_vars))
    whole = iter(variances)
    for param, grad, step_t in zip(params, grads, state_steps):
        grad = maybe_negate(grad, maximize)
        e1 = flambeau.finfo(param.dtype).eps if eps1 is None else eps1
        step_t.add_(1)
        step = step_t.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, _rms(param)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_var, col_var = next(factored)
            row_mean = flambeau.sum(grad * grad, dim=-1, keepdim=True).div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = flambeau.sum(grad * grad, dim=-2, keepdim=True).div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = flambeau.matmul(row_var, col_var)
            var_estimate.div_(flambeau.mean(row_var, dim=-2, keepdim=True).clamp_(min=e1))
        else:
            variance = next(whole)
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=e1 * e1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, _rms(update) / d)
        param.add_(update, alpha=-alpha / denom)


def adafactor(params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor], col_vars: list[Tensor],
              variances: list[Tensor], state_steps: list[Tensor], *, d: float, lr: float, beta2_decay: float,
              weight_decay: float, eps1: float | None, eps2: float, maximize: bool, foreach: bool | None = None,
              grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:
    r"""Functional Adafactor (see :class:`Adafactor`).

    ``row_vars``/``col_vars`` hold the factored moments of the parameters with two or more
    dimensions, in order; ``variances`` the moments of the others, in order.
    """
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("grad_scale and found_inf are not supported by Adafactor")
    run_update("optim_adafactor", params, foreach, None, False, params, grads, row_vars, col_vars, variances,
               state_steps, d, float(lr), beta2_decay, weight_decay, eps1, eps2, maximize)


class Adafactor(Optimizer):
    r"""Implements the Adafactor algorithm.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): unlike other optimizers, Adafactor does not require a learning
            rate, and the default is 1e-2
        beta2_decay (float, optional): the decay rate of beta2 (default: -0.8)
        eps (Tuple[float, float], optional): epsilon1 added to the squared gradient (``None`` for the
            dtype's machine epsilon) and epsilon2 bounding the parameter scale (default: (None, 1e-3))
        d (float, optional): the clipping threshold of the update (default: 1.0)
        weight_decay (float, optional): weight decay coefficient (default: 0.0)
        foreach (bool, optional): ``False`` runs the single-tensor composite (default: None)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)

    Example::

        >>> optimizer = flambeau.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _state_shape_must_match(self, name: str) -> bool:
        return name not in ("row_var", "col_var")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _float_scalar()
                        if p.grad.dim() > 1:
                            row_shape = list(p.grad.shape)
                            row_shape[-1] = 1
                            state["row_var"] = p.grad.new_zeros(row_shape)
                            col_shape = list(p.grad.shape)
                            col_shape[-2] = 1
                            state["col_var"] = p.grad.new_zeros(col_shape)
                        else:
                            state["variance"] = flambeau.zeros_like(p.grad)
                    params.append(p)
                    grads.append(p.grad)
                    steps.append(state["step"])
                    if "row_var" in state:
                        row_vars.append(state["row_var"])
                        col_vars.append(state["col_var"])
                    else:
                        variances.append(state["variance"])
                eps1, eps2 = group["eps"]
                adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"], lr=group["lr"],
                          beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1,
                          eps2=eps2, maximize=group["maximize"], foreach=group["foreach"])
        return loss
