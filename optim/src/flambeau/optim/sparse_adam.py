r"""SparseAdam: the lazy variant of Adam for sparse gradients.

Only the moments and parameter entries that the gradient touches are updated:

.. math::
    \begin{aligned}
        &\text{for each index } i \text{ present in the sparse gradient } g_t:\\
        &\quad m_{t,i} \leftarrow \beta_1 m_{t-1,i} + (1-\beta_1) g_{t,i},\quad
              v_{t,i} \leftarrow \beta_2 v_{t-1,i} + (1-\beta_2) g_{t,i}^2\\
        &\quad \theta_{t,i} \leftarrow \theta_{t-1,i} - \frac{\gamma\sqrt{1-\beta_2^t}}{1-\beta_1^t}\,
              \frac{m_{t,i}}{\sqrt{v_{t,i}} + \epsilon}
    \end{aligned}

As in PyTorch, SparseAdam accepts only sparse gradients; flambeau has no sparse layout yet, so a
gradient is sparse when it is a COO-like object with ``is_sparse = True``, ``coalesce()``,
``_indices()`` (an int64 tensor ``(ndim_sparse, nnz)``) and ``_values()`` (``(nnz, *dense_dims)``).
Dense gradients raise RuntimeError, as PyTorch's do.
"""
from __future__ import annotations

from typing import Any, Callable

import flambeau
from flambeau import Tensor

from .adam import _check_adam_args
from .optimizer import Optimizer, _float_scalar, _update_context

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""SparseAdam implements a masked version of the Adam algorithm suitable for sparse gradients.

    Args:
        params (iterable): iterable of parameters or named parameters to optimize, or dicts defining
            parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing running averages of
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8)
        maximize (bool, optional): maximize the objective instead of minimizing (default: False)

    Example::

        >>> optimizer = flambeau.optim.SparseAdam(embedding.parameters(), lr=1e-3)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        _check_adam_args(lr, betas, eps, 0.0)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse_params = [[i, j] for i, group in enumerate(self.param_groups)
                         for j, p in enumerate(group["params"]) if getattr(p, "is_sparse", False)]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns the loss.
        """
        loss = self._eval_closure(closure)
        with _update_context(self):
            for group in self.param_groups:
                work = []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not getattr(p.grad, "is_sparse", False):
                        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                    work.append(p)
                beta1, beta2 = group["betas"]
                for p in work:
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _float_scalar()
                        state["exp_avg"] = flambeau.zeros_like(p)
                        state["exp_avg_sq"] = flambeau.zeros_like(p)
                    state["step"].add_(1)
                    _sparse_adam_update(p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"].item(),
                                        float(group["lr"]), beta1, beta2, group["eps"], group["maximize"])
        return loss


def _sparse_adam_update(param: Tensor, grad: Any, exp_avg: Tensor, exp_avg_sq: Tensor, step: float, lr: float,
                        beta1: float, beta2: float, eps: float, maximize: bool) -> None:
    grad = grad.coalesce()  # the update is non-linear: duplicate indices must be summed first
    indices = grad._indices()
    values = grad._values()
    if maximize:
        values = values.neg()
    # Gather, update and scatter back the touched rows only (indices index the leading dims).
    index = tuple(indices[k] for k in range(indices.shape[0]))
    old_exp_avg = exp_avg[index]
    exp_avg_update = (values - old_exp_avg) * (1 - beta1)
    new_exp_avg = old_exp_avg + exp_avg_update
    exp_avg[index] = new_exp_avg
    old_exp_avg_sq = exp_avg_sq[index]
    exp_avg_sq_update = (values * values - old_exp_avg_sq) * (1 - beta2)
    new_exp_avg_sq = old_exp_avg_sq + exp_avg_sq_update
    exp_avg_sq[index] = new_exp_avg_sq
    denom = new_exp_avg_sq.sqrt().add_(eps)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr * (bias_correction2 ** 0.5) / bias_correction1
    param[index] = param[index] + (new_exp_avg / denom) * (-step_size)
