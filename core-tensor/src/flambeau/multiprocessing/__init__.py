"""flambeau.multiprocessing: :mod:`multiprocessing` with tensors sent through shared memory.

A drop-in replacement for the standard module, as ``torch.multiprocessing``: every name of
:mod:`multiprocessing` is here, and a CPU tensor put on a queue, sent through a pipe or passed to a
process is not copied: its storage moves to shared memory (see :meth:`flambeau.Tensor.share_memory_`)
and the receiving process maps the same memory. The reducers are registered with ``multiprocessing``'s
pickler when this module is imported (``import flambeau`` does not import it; the DataLoader does).

Example (Hogwild-style training: several processes update one set of parameters)::

    import flambeau.multiprocessing as mp

    def train(rank, model):
        ...  # optimizer steps on model.parameters() write to the shared memory

    model.share_memory()
    mp.spawn(train, args=(model,), nprocs=2)
"""
from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F401,F403 (the standard module's API, as torch.multiprocessing)

from . import _segments
from .reductions import init_reductions
from .spawn import (
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, spawn, start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn", "start_processes",
           "ProcessContext", "ProcessException", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]


def set_sharing_strategy(new_strategy: str) -> None:
    """Set how new shared segments are made: ``"file_descriptor"`` (default) or ``"file_system"``.

    ``file_descriptor`` segments have no name (nothing can be left in ``/dev/shm``) and each keeps
    one file descriptor open; ``file_system`` segments are named files in ``/dev/shm``, reference
    counted, for when the descriptor limit is too low. Storages shared already keep theirs.
    """
    if new_strategy not in _segments.ALL_STRATEGIES:
        raise AssertionError(f"unknown sharing strategy {new_strategy!r}; expected one of "
                             f"{sorted(_segments.ALL_STRATEGIES)}")
    if new_strategy == "file_system":
        # Start multiprocessing's resource tracker now, so that processes forked from here share it:
        # a child that started its own would unlink, when it exits, segments others still use.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    _segments.STRATEGY[0] = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors (see :func:`set_sharing_strategy`)."""
    return _segments.STRATEGY[0]


def get_all_sharing_strategies() -> set[str]:
    """The strategies this platform supports."""
    return set(_segments.ALL_STRATEGIES)


init_reductions()
