"""Modules: ``Softmin``, ``Softmax``, ``Softmax2d``, ``LogSoftmax``."""
from __future__ import annotations

from flambeau import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


class _AlongDim(Module):
    """A normalisation along ``dim`` (None: PyTorch's implicit choice, with its warning); the subclass's
    ``forward`` calls its functional form."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):  # modules pickled before ``dim`` existed, as PyTorch keeps them loading
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_AlongDim):
    r"""Applies :math:`\text{Softmin}(x_i) = \frac{\exp(-x_i)}{\sum_j \exp(-x_j)}` along ``dim``.

    Args:
        dim (int): the dimension along which Softmin is computed (every slice along it sums to 1).

    Shape:
        - Input: :math:`(*)`. Output: the input's shape, values in [0, 1].
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_AlongDim):
    r"""Applies :math:`\text{Softmax}(x_i) = \frac{\exp(x_i)}{\sum_j \exp(x_j)}` along ``dim``.

    Args:
        dim (int): the dimension along which Softmax is computed (every slice along it sums to 1).

    Shape:
        - Input: :math:`(*)`. Output: the input's shape, values in [0, 1].

    Example::

        >>> m = nn.Softmax(dim=1)
        >>> m(flambeau.randn(2, 3)).sum(1)
        tensor([1.0000, 1.0000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    r"""Applies Softmax over the channels at each spatial location of a ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`. Output: the input's shape.
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_AlongDim):
    r"""Applies :math:`\log(\text{Softmax}(x))` along ``dim``.

    Args:
        dim (int): the dimension along which LogSoftmax is computed.

    Shape:
        - Input: :math:`(*)`. Output: the input's shape, values in [-inf, 0).
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)
