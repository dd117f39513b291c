"""The DataLoader: batches from a dataset, in the main process or in worker processes (torch.utils.data's)."""
from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import queue
import time
import warnings
from collections.abc import Iterator
from typing import Any, Callable

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

# How often the main process, while waiting for a batch, checks that its workers are alive (seconds).
_STATUS_CHECK_INTERVAL = 1.0
# How long workers get to finish on their own when an iterator shuts them down (seconds, all together).
_SHUTDOWN_WAIT = 2.0


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the 'indices' of an IterableDataset, which ignores them."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    r"""Iterates over a dataset in batches, optionally shuffled and loaded by worker processes.

    Args:
        dataset (Dataset): map-style (``__getitem__``/``__len__``) or an :class:`IterableDataset`.
        batch_size (int, optional): samples per batch (default 1); ``None`` turns batching off.
        shuffle (bool, optional): a new random order every epoch (default ``False``).
        sampler (Sampler or iterable, optional): the order of the indices; excludes ``shuffle``.
        batch_sampler (Sampler or iterable, optional): yields lists of indices; excludes
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): worker processes (default 0: load in the main process).
        collate_fn (callable, optional): merges a list of samples into a batch
            (default :func:`default_collate`, or :func:`default_convert` without batching).
        pin_memory (bool): accepted for PyTorch compatibility; flambeau's CPU tensors need no pinning.
        drop_last (bool): drop the last, incomplete batch (default ``False``).
        timeout (float): seconds to wait for a batch from the workers before raising (0: forever).
        worker_init_fn (callable, optional): called as ``worker_init_fn(worker_id)`` in each worker
            after seeding and before loading.
        multiprocessing_context (str or context, optional): ``"fork"``, ``"spawn"``, ``"forkserver"``
            or a context of :mod:`multiprocessing` (default: the platform's default).
        generator (Generator, optional): draws the base seed of the workers and, for ``shuffle``,
            the order.
        prefetch_factor (int, optional): batches loaded in advance per worker (default 2 with workers).
        persistent_workers (bool): keep the workers alive between epochs (default ``False``).

    Each worker seeds Python's :mod:`random` and flambeau's default generator with ``base_seed +
    worker_id`` (``base_seed`` drawn from ``generator`` or the global generator at each epoch), and
    numpy's global generator with a state mixed from both, so workers never share random numbers.
    An exception in a worker is raised again in the main process with the worker's traceback.

    Example::

        >>> ds = TensorDataset(flambeau.arange(10))
        >>> [b[0].tolist() for b in DataLoader(ds, batch_size=4)]
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    dataset: Dataset
    batch_size: int | None
    num_workers: int
    drop_last: bool
    sampler: Any
    batch_sampler: Any
    __initialized = False

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Any = None, batch_sampler: Sampler | Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 0):
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                                 f"batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
        self.__initialized = True
        self._iterator: _BaseIter | None = None

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None and self.num_workers > 0:
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not hasattr(context, "Process"):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        elif context is not None:
            raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                             f"but got num_workers={self.num_workers}")
        self.__multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _draw_base_seed(self) -> int:
        import flambeau

        return int(flambeau.empty((), dtype=flambeau.int64).random_(generator=self.generator).item())

    def __iter__(self) -> "_BaseIter":
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def __del__(self) -> None:
        it = self.__dict__.get("_iterator")
        if it is not None:
            it._shutdown_workers()


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = loader._draw_base_seed()
        self._num_yielded = 0

    def __iter__(self) -> "_BaseIter":
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        return data

    def _shutdown_workers(self) -> None:
        pass


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessIter(_BaseIter):
    """Workers each have an index queue; all share one result queue. Up to ``prefetch_factor`` tasks
    per worker are in flight; results are put back in order before they are returned."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._shutdown = False
        self._workers: list[Any] = []
        self._index_queues: list[Any] = []
        self._result_queue = ctx.Queue()
        try:
            for worker_id in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()  # never block interpreter exit on unsent indices
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(self._iterable, self._dataset, index_queue, self._result_queue, self._auto_collation,
                          self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                          self._num_workers, os.getpid()),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: a new epoch. Drain what the last one left in flight until every
            # worker has acknowledged the restart.
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            acks = self._num_workers
            while acks > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    acks -= 1
        for _ in range(self._prefetch_factor * self._num_workers):  # type: ignore[operator]
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has finished its iterable dataset
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self) -> tuple[Any, Any]:
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            try:
                idx, payload = self._result_queue.get(timeout=wait)
            except queue.Empty:
                failed = [w for w, up in zip(self._workers, self._workers_status) if up and not w.is_alive()]
                if failed:
                    pids = ", ".join(str(w.pid) for w in failed)
                    codes = ", ".join(str(w.exitcode) for w in failed)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly "
                                       f"(exit code(s) {codes})") from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                continue
            data = pickle.loads(payload) if isinstance(payload, bytes) else payload
            return idx, data

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]  # its worker ran out of data: nothing will come
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                return self._process_data(data)

    def _process_data(self, data: Any) -> Any:
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        if getattr(self, "_shutdown", True):  # True too when __init__ failed before starting any worker
            return
        self._shutdown = True
        for q in self._index_queues:
            try:
                q.put(None)
            except Exception:
                pass
        # A worker busy with a batch sees the None only when done: wait a little, then stop it.
        deadline = time.monotonic() + _SHUTDOWN_WAIT
        for w in self._workers:
            w.join(timeout=max(deadline - time.monotonic(), 0.0))
        for w in self._workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self) -> None:
        self._shutdown_workers()
