"""flambeau.optim: optimizers with torch.optim's API and numerics.

Install ``flambeau-optim``. Each algorithm lives in its own module (``flambeau.optim.adam``...),
with its update rule in the module docstring; learning-rate schedules are in
:mod:`flambeau.optim.lr_scheduler` and weight averaging in :mod:`flambeau.optim.swa_utils`.
"""
from __future__ import annotations

from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

from ._version import __version__

__all__ = [
    "Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "NAdam",
    "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "swa_utils",
]


#: Loaded at first use, not by ``import flambeau`` (which imports this package for its op
#: plugin): the schedulers and weight averaging are ~60 kB of source a program may never touch.
_LAZY = {"lr_scheduler": ("lr_scheduler", None), "swa_utils": ("swa_utils", None), "LBFGS": ("lbfgs", "LBFGS")}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
