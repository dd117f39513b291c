"""The ``flambeau`` command line, shipped by the meta-package ``flambeau``.

Subcommands:

- ``flambeau demo``: a short tour of the tensor library, then a small training run when
  ``flambeau-core-autograd`` and ``flambeau-optim`` are installed (with ``nn.Linear`` when
  ``flambeau-nn`` is too).
- ``flambeau train``: train a classifier on the bundled 8x8 digits (or MNIST-format IDX files),
  save a checkpoint and a plot; ``flambeau train --help`` lists the options.
- ``flambeau info [--ops]``: the environment report of ``python -m flambeau info``.
"""
from __future__ import annotations

from ._main import main

__all__ = ["main"]
