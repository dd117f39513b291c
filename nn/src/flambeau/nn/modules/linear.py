"""Modules: ``Identity``, ``Linear``, ``Bilinear``, ``LazyLinear``."""
from __future__ import annotations

import math
from typing import Any

import flambeau
from flambeau import Tensor

from .. import init
from ..functional.linear import _bilinear, _linear
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    r"""A placeholder that returns its input; its constructor takes (and ignores) any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


def _check_features(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {value}: [{value}]")
    return value


class Linear(Module):
    r"""Applies an affine map to the last dimension: :math:`y = xA^T + b`.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: whether to learn an additive bias (default ``True``).
        device, dtype: of the parameters (``device="meta"`` allocates nothing).

    Shape:
        input ``(*, in_features)``, output ``(*, out_features)``.

    Attributes:
        weight: ``(out_features, in_features)``, initialised from
            :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})` with :math:`k = 1/\text{in\_features}`.
        bias: ``(out_features,)``, from the same distribution.
    """

    in_features: int
    out_features: int
    weight: Tensor

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = _check_features("in_features", in_features)
        self.out_features = _check_features("out_features", out_features)
        self.weight = Parameter(flambeau.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(flambeau.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""PyTorch's default initialisation (kaiming-uniform with ``a=sqrt(5)``, bias from U(-1/sqrt(fan_in), ..))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return _linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    r"""Applies a bilinear map: :math:`y = x_1^T A x_2 + b`.

    Args:
        in1_features, in2_features: sizes of the two inputs' last dimension.
        out_features: size of the output's last dimension.
        bias: whether to learn an additive bias (default ``True``).

    Attributes:
        weight: ``(out_features, in1_features, in2_features)``, from
            :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})`, :math:`k = 1/\text{in1\_features}`; bias likewise.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = _check_features("in1_features", in1_features)
        self.in2_features = _check_features("in2_features", in2_features)
        self.out_features = _check_features("out_features", out_features)
        self.weight = Parameter(flambeau.empty((out_features, in1_features, in2_features), device=device,
                                               dtype=dtype))
        if bias:
            self.bias = Parameter(flambeau.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1)) if self.weight.size(1) > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return _bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    r"""A :class:`Linear` whose ``in_features`` is inferred from the first input's last dimension.

    Until then ``weight`` and ``bias`` are :class:`UninitializedParameter` s; after the first call the
    module becomes a :class:`Linear`.
    """

    cls_to_become = Linear
    weight: UninitializedParameter
    bias: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # Linear's __init__ with 0 input features allocates nothing; the parameters are then replaced.
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = _check_features("out_features", out_features)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with flambeau.no_grad():
                if input.ndim == 0:
                    raise RuntimeError("LazyLinear: the input must have at least one dimension")
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
