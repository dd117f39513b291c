"""Modules: activation (torch.nn's activation layers, the softmax family aside).

Each wraps its functional form in :mod:`flambeau.nn.functional.activation`; ``inplace=True`` layers
write into their input.
"""
from __future__ import annotations

import flambeau as fb
from flambeau._tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
    "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
    "Softshrink", "PReLU", "Softsign", "Tanhshrink",
]


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """``y = x`` if ``x > threshold`` else ``value``.

    Args:
        threshold: the value to threshold at.
        value: the value to replace with.
        inplace: do the operation in place.
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(Module):
    """``max(0, x)`` elementwise.

    Args:
        inplace: do the operation in place.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class RReLU(Module):
    """Randomized leaky ReLU: negative slopes drawn from ``U(lower, upper)`` in training, and
    ``(lower + upper) / 2`` in eval mode.

    Args:
        lower: the lower bound of the uniform distribution.
        upper: the upper bound of the uniform distribution.
        inplace: do the operation in place.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``.

    Args:
        min_val: the lower end of the linear region.
        max_val: the upper end of the linear region.
        inplace: do the operation in place.
        min_value, max_value: deprecated names of ``min_val`` and ``max_val``.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            import warnings

            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            import warnings

            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if not max_val > min_val:
            raise AssertionError
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``.

    Args:
        inplace: do the operation in place.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return fb.sigmoid(input)


class Tanh(Module):
    """The hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return fb.tanh(input)


class _InplaceActivation(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``.

    Args:
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``.

    Args:
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``.

    Args:
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``.

    Args:
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class SELU(_InplaceActivation):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with SELU's constants.

    Args:
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ELU(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha: the value the negative part saturates to (as ``-alpha``).
        inplace: do the operation in place.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha: the alpha value of the CELU formulation.
        inplace: do the operation in place.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves of the input along ``dim``.

    Args:
        dim: the dimension on which to split the input.
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """``x * Phi(x)``, or its tanh approximation when ``approximate='tanh'``.

    Args:
        approximate: ``'none'`` or ``'tanh'``.
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0.

    Args:
        lambd: the threshold.
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Args:
        lambd: the threshold (at least 0).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class LeakyReLU(Module):
    """``x`` where positive, else ``negative_slope * x``.

    Args:
        negative_slope: the slope for negative inputs.
        inplace: do the operation in place.
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class LogSigmoid(Module):
    """``log(1 / (1 + exp(-x)))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Args:
        beta: the beta value of the formulation.
        threshold: values of ``beta * x`` above this revert to the identity.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """``x`` where positive, else ``weight * x``, with a learnt slope (one, or one per channel).

    Args:
        num_parameters: how many slopes to learn: 1, or the number of channels (dim 1 of the input).
        init: the initial value of the slopes.
        device, dtype: where and in which dtype the weight is created.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(fb.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)
