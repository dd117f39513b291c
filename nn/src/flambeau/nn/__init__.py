"""flambeau.nn: modules, layers, functional ops, losses and initialisation (torch.nn's API).

Install ``flambeau-nn``. Layers are ``Module`` s built on the functional forms in
:mod:`flambeau.nn.functional`, which call ops that this package declares through flambeau's op hooks
(so every backend runs them, and a backend may register faster kernels for them).
"""
from __future__ import annotations

from . import functional, utils  # noqa: F401
from ._version import __version__
from .modules import *  # noqa: F401,F403
