"""The ``flambeau`` command line, shipped by the meta-package ``flambeau``.

Subcommands:

- ``flambeau demo``: a short tour of the tensor library (and a small training run when
  ``flambeau-nn`` and ``flambeau-optim`` are installed).
- ``flambeau info [--ops]``: the environment report of ``python -m flambeau info``.
"""
from __future__ import annotations

from ._main import main

__all__ = ["main"]
