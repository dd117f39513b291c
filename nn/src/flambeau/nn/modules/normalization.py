"""Modules: normalization (``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``,
``RMSNorm``, ``LocalResponseNorm``)."""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import flambeau
from flambeau import Tensor

from .. import init
from ..functional import normalization as F
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by batch and instance norm."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(flambeau.empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(flambeau.empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", flambeau.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", flambeau.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", flambeau.tensor(0, dtype=flambeau.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with flambeau.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with flambeau.no_grad():
                self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average of every batch so far
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        update = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if update else None, self.running_var if update else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch Normalization over a 2D or 3D input ``(N, C)`` or ``(N, C, L)``.

    :math:`y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} * \gamma + \beta`, the statistics per
    channel over the batch (and length). In training the running statistics are updated with
    ``momentum`` (``None``: a cumulative average); in evaluation they normalize.

    Args:
        num_features: C. eps: added to the variance. momentum: for the running statistics.
        affine: learnable ``weight`` (ones) and ``bias`` (zeros). track_running_stats: keep
            ``running_mean``, ``running_var`` and ``num_batches_tracked`` buffers (else batch
            statistics are used in evaluation too).
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch Normalization over a 4D input ``(N, C, H, W)``; see :class:`BatchNorm1d`."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch Normalization over a 5D input ``(N, C, D, H, W)``; see :class:`BatchNorm1d`."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        batched = self._spatial + 2
        if input.dim() not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.dim()}D input)")
        channel_dim = input.dim() - self._spatial - 1
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[channel_dim]}.")
        unbatched = input.dim() == batched - 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    r"""Instance Normalization over ``(N, C, L)`` or ``(C, L)``: each channel of each sample on its own.

    ``affine`` and ``track_running_stats`` default to False.
    """

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    r"""Instance Normalization over ``(N, C, H, W)`` or ``(C, H, W)``; see :class:`InstanceNorm1d`."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    r"""Instance Normalization over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see :class:`InstanceNorm1d`."""

    _spatial = 3


class LayerNorm(Module):
    r"""Layer Normalization over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: the trailing shape to normalize over (an int for the last dim).
        eps: added to the variance. elementwise_affine: learnable per-element ``weight`` (ones)
            and, when ``bias``, ``bias`` (zeros).
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(flambeau.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(flambeau.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    r"""Group Normalization: the C channels in ``num_groups`` groups, each normalized per sample.

    Args:
        num_groups: must divide ``num_channels``. eps: added to the variance.
        affine: learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(flambeau.empty(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(flambeau.empty(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    r"""Root Mean Square Layer Normalization over the trailing ``normalized_shape`` dims.

    ``eps=None`` uses ``flambeau.finfo(input.dtype).eps``. ``elementwise_affine``: a learnable
    ``weight`` (ones).
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(flambeau.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    r"""Local response normalization across channels; see :func:`flambeau.nn.functional.local_response_norm`."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


# -- lazy variants: num_features taken from the first input's dim 1 --------------------------------

class _LazyNormBase(LazyModuleMixin, _NormBase):
    weight: UninitializedParameter  # type: ignore[assignment]
    bias: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        # _NormBase with 0 features and nothing to allocate; the uninitialized tensors replace them.
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            # Stored as they are: register_buffer turns a Buffer (UninitializedBuffer is one here)
            # into a plain tensor, which could not be materialized later.
            self._buffers["running_mean"] = UninitializedBuffer(device=device, dtype=dtype)
            self._buffers["running_var"] = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = flambeau.tensor(0, dtype=flambeau.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1] if input.dim() > 1 else input.shape[0]
            with flambeau.no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm1d` whose ``num_features`` is inferred from the first input's dim 1."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm2d` whose ``num_features`` is inferred from the first input's dim 1."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    r"""A :class:`BatchNorm3d` whose ``num_features`` is inferred from the first input's dim 1."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            unbatched = input.dim() == self._spatial + 1
            channels = input.shape[0] if unbatched else input.shape[1]
            self.num_features = channels
            with flambeau.no_grad():
                if self.affine:
                    self.weight.materialize((channels,))
                    if self.bias is not None:
                        self.bias.materialize((channels,))
                if self.track_running_stats:
                    self.running_mean.materialize((channels,))
                    self.running_var.materialize((channels,))
                self.reset_parameters()


class LazyInstanceNorm1d(_LazyInstanceNorm):
    r"""An :class:`InstanceNorm1d` whose ``num_features`` is inferred from the first input."""

    cls_to_become = InstanceNorm1d
    _spatial = 1


class LazyInstanceNorm2d(_LazyInstanceNorm):
    r"""An :class:`InstanceNorm2d` whose ``num_features`` is inferred from the first input."""

    cls_to_become = InstanceNorm2d
    _spatial = 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    r"""An :class:`InstanceNorm3d` whose ``num_features`` is inferred from the first input."""

    cls_to_become = InstanceNorm3d
    _spatial = 3
