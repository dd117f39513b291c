"""flambeau.optim: optimizers with torch.optim's API and numerics.

Install ``flambeau-optim``. Each algorithm lives in its own module (``flambeau.optim.adam``...),
with its update rule in the module docstring; learning-rate schedules are in
:mod:`flambeau.optim.lr_scheduler` and weight averaging in :mod:`flambeau.optim.swa_utils`.
"""
from __future__ import annotations

from . import lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
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
