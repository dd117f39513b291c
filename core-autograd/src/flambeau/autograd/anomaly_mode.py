"""Anomaly detection: name the forward op behind a failing or NaN-producing backward step."""
from __future__ import annotations

import warnings
from typing import Any

from .grad_mode import ANOMALY, _DecoratorContextManager


class detect_anomaly(_DecoratorContextManager):
    """Inside this block, nodes remember the traceback of the forward call that created them.

    When a backward step raises, a warning shows that traceback; with ``check_nan=True`` a step
    that returns NaN raises ``RuntimeError("Function 'XBackward0' returned nan values in its 0th
    output.")``. Slows everything down: for debugging only.

    Args:
        check_nan (bool): raise when a backward step produces NaN. Default: ``True``.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = (False, True)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (ANOMALY[0], ANOMALY[1])
        ANOMALY[0] = True
        ANOMALY[1] = self.check_nan

    def __exit__(self, *exc: Any) -> None:
        ANOMALY[0], ANOMALY[1] = self.prev

    def clone(self) -> "detect_anomaly":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off: at once when called, restored at the end of a ``with`` block.

    Args:
        mode (bool): whether to enable it.
        check_nan (bool): raise when a backward step produces NaN. Default: ``True``.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (ANOMALY[0], ANOMALY[1])
        self.mode = mode
        self.check_nan = check_nan
        ANOMALY[0] = mode
        ANOMALY[1] = check_nan

    def __enter__(self) -> None:
        ANOMALY[0] = self.mode
        ANOMALY[1] = self.check_nan

    def __exit__(self, *exc: Any) -> None:
        ANOMALY[0], ANOMALY[1] = self.prev

    def clone(self) -> "set_detect_anomaly":
        return self.__class__(self.mode, self.check_nan)


def is_anomaly_enabled() -> bool:
    return ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY[1]
