"""What runs inside a DataLoader worker process, and what the main process needs to talk to it."""
from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]

# How often a waiting worker checks that its parent is still alive (seconds).
_STATUS_CHECK_INTERVAL = 5.0


class WorkerInfo:
    r"""What :func:`get_worker_info` returns inside a worker: ``id``, ``num_workers``, ``seed`` and ``dataset``
    (this worker's copy). Read-only."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    r"""The :class:`WorkerInfo` of the current DataLoader worker process, or ``None`` in the main process.

    Use it in an :class:`IterableDataset`'s ``__iter__`` or a ``worker_init_fn`` to give each worker
    its share of the data.
    """
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError's str() would quote it and lose the newlines)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback as text."""

    def __init__(self, exc_info: tuple | None = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        try:  # an exception class defined in a function cannot travel: name it in a RuntimeError
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = RuntimeError
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that does not take one message argument
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of every epoch but the first; echoed back as an ack."""


class _MapDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        from ._collate import default_collate
        from .dataset import TensorDataset

        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        # A batch of a TensorDataset through default_collate is [t[index] for t in tensors]: one
        # gather per tensor instead of len(index) indexings and a stack (the same values and types).
        self.gather = (auto_collation and type(dataset) is TensorDataset and collate_fn is default_collate
                       and not hasattr(dataset, "__getitems__"))

    def fetch(self, index: Any) -> Any:
        if self.gather:
            import flambeau

            rows = flambeau.tensor(index, dtype=flambeau.int64)
            return [t[rows] for t in self.dataset.tensors]
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems is not None else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable: bool, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> Any:
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(seed: int, base_seed: int, worker_id: int) -> None:
    # As PyTorch: Python's random and flambeau's generator get base_seed + worker_id; numpy's legacy
    # global generator gets a state mixed from both, so that workers never draw the same numbers.
    import numpy as np

    import flambeau

    random.seed(seed)
    flambeau.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


#: A batch with at least this many bytes of tensor data travels through shared memory; a smaller
#: one is copied through the result queue's pipe, which costs less than making, passing and
#: mapping a segment (measured on 2 loaded cores: a 400 KB batch took 2.6x longer through shared
#: memory, a 1 MB one 2.7x less; docs/performance.md). The main process owns a batch either way.
SHARE_MIN_BYTES = 1 << 19


def _batch_bytes(data: Any, depth: int = 0) -> int:
    import flambeau

    if isinstance(data, flambeau.Tensor):
        return data.nbytes
    if depth < 8 and isinstance(data, (list, tuple)):
        return sum(_batch_bytes(d, depth + 1) for d in data)
    if depth < 8 and isinstance(data, dict):
        return sum(_batch_bytes(d, depth + 1) for d in data.values())
    return 0


def _pickled(data: Any, where: str) -> bytes:
    # Pickled here rather than in the queue's feeder thread, which would only print the error of an
    # unpicklable batch and leave the main process waiting for it. A large batch goes through
    # flambeau.multiprocessing's pickler: its tensors move to one shared-memory segment and the
    # main process maps it, instead of receiving a copy through the queue's pipe.
    try:
        if _batch_bytes(data) >= SHARE_MIN_BYTES:
            from flambeau.multiprocessing import reductions

            return reductions.dumps(data)
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps(ExceptionWrapper(where=where), protocol=pickle.HIGHEST_PROTOCOL)


def worker_loop(iterable: bool, dataset: Any, index_queue: Any, result_queue: Any, auto_collation: bool,
                collate_fn: Any, drop_last: bool, base_seed: int, init_fn: Any, worker_id: int,
                num_workers: int, parent_pid: int) -> None:
    """The body of a worker process: fetch the batches whose indices arrive on ``index_queue``."""
    global _worker_info
    try:
        import flambeau

        # One kernel thread per worker: the workers already use the cores, and the threads of the
        # parent's pool do not exist in a forked child.
        try:
            flambeau.set_num_threads(1)
        except Exception:
            pass
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:  # the main process is gone: do not linger
                    return
                continue
            if r is None:
                return
            if isinstance(r, _ResumeIteration):
                result_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    try:
                        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_exception = ExceptionWrapper(where=where)
                continue
            if iteration_end:
                continue
            idx, index = r
            data: Any
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)  # type: ignore[union-attr]
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            result_queue.put((idx, _pickled(data, where)))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
