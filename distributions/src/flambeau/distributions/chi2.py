"""The chi-squared distribution."""
from __future__ import annotations

from typing import Any

import flambeau as fb

from . import constraints
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """A chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    Args:
        df (float or Tensor): shape parameter of the distribution (positive).
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, fb.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Chi2":
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]

    @property
    def df(self) -> fb.Tensor:
        return self.concentration * 2
