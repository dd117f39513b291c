"""``spawn``/``start_processes``: run a function in N processes and report the first failure."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from typing import Any, Callable

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "start_processes"]


class ProcessException(Exception):
    """A process started by :func:`spawn` failed; ``error_index`` is its index, ``pid`` its process id."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process raised an exception; the message holds its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg, error_index, error_pid)


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code or was killed by a signal (``exit_code``, ``signal_name``)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """The body of each process: ``fn(i, *args)``; an exception's traceback goes to ``error_file``."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent after another process failed
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes :func:`start_processes` started; :meth:`join` waits for them.

    Attributes:
        processes: the ``multiprocessing.Process`` objects, by index.
        error_files: where each process writes the traceback of an exception.
    """

    def __init__(self, processes: list, error_files: list[str], error_dir: str | None = None) -> None:
        self.processes = processes
        self.error_files = error_files
        self._error_dir = error_dir
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        """The process ids, by index."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (forever if None) for one process to end.

        Returns True when all processes ended successfully, False while some still run. When one
        fails, the others are sent SIGTERM (and SIGKILL after ``grace_period`` seconds, default 5)
        and :class:`ProcessRaisedException` (it raised) or :class:`ProcessExitedException` (it
        exited with a non-zero code or a signal) is raised.
        """
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            if not self.sentinels:
                self._cleanup()
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + (5.0 if grace_period is None else grace_period)
        for process in self.processes:
            process.join(timeout=max(deadline - time.monotonic(), 0.0))
            if process.is_alive():
                process.kill()
                process.join()
        self.sentinels.clear()
        failed = self.processes[error_index]
        try:
            with open(self.error_files[error_index], "rb") as fh:
                original_trace = pickle.load(fh)
        except OSError:
            original_trace = None
        finally:
            self._cleanup()
        if original_trace is None:
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {error_index} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=code,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index} terminated with exit code {code}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=code)
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{original_trace}"
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _cleanup(self) -> None:
        if self._error_dir is not None:
            shutil.rmtree(self._error_dir, ignore_errors=True)
            self._error_dir = None


def _check_nprocs(nprocs: Any) -> None:
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"nprocs must be a positive integer, got {nprocs!r}")


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    r"""Start ``nprocs`` processes running ``fn(i, *args)`` (``i`` from 0 to ``nprocs - 1``).

    Args:
        fn (callable): the entry point, a module-level function (it is pickled under ``spawn``).
        args (tuple): arguments passed after the process index.
        nprocs (int): how many processes.
        join (bool): wait for all of them (default); else return the :class:`ProcessContext`.
        daemon (bool): make them daemonic.
        start_method (str): ``"spawn"``, ``"fork"`` or ``"forkserver"``.

    Raises:
        ProcessRaisedException: a process raised; the message holds its traceback.
        ProcessExitedException: a process exited with a non-zero code or was killed.
    """
    _check_nprocs(nprocs)
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    from . import get_context

    mp = get_context(start_method)
    error_dir = tempfile.mkdtemp(prefix="flambeau-spawn-")
    error_files, processes = [], []
    try:
        for i in range(nprocs):
            error_file = os.path.join(error_dir, f"{i}.pickle")
            process = mp.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
            process.start()
            error_files.append(error_file)
            processes.append(process)
    except BaseException:
        for process in processes:
            process.terminate()
            process.join()
        shutil.rmtree(error_dir, ignore_errors=True)
        raise
    context = ProcessContext(processes, error_files, error_dir)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    r"""Spawn ``nprocs`` processes that run ``fn(i, *args)``; :func:`start_processes` with ``spawn``.

    Example::

        >>> def work(i, shared):
        ...     shared[i] = i + 1
        >>> t = flambeau.zeros(2).share_memory_()
        >>> flambeau.multiprocessing.spawn(work, args=(t,), nprocs=2)
        >>> t
        tensor([1., 2.])
    """
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t flambeau.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
