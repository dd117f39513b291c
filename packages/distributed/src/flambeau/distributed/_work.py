"""``Work``: the handle of an asynchronous operation (``async_op=True``, ``isend``/``irecv``).

A Work holds the engine's requests and what to do once they complete (copy a non-contiguous
result back, divide for AVG, unpack a list). Waiting polls the requests against a deadline, so that
a peer that died makes ``wait`` raise a clear error instead of hanging forever.
"""
from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any, Callable, Sequence

from ._types import DistBackendError

# How a waiter polls: the engine progresses only while it is polled, so a sleeping waiter slows a large
# transfer; but a waiter that spins takes the core its peer may need (several ranks on few cores, or a
# loaded machine). So: spin briefly, then yield the core between polls (the peer runs if it was waiting
# for this core, else the poll goes on at once), then, after a while, sleep between polls.
_SPIN_SECONDS = 50e-6
_YIELD_SECONDS = 2.0
_SLEEP_SECONDS = 0.0002


class Work:
    """An operation in flight; ``wait()`` blocks until it is done (``torch.distributed.Work``)."""

    def __init__(self, requests: Sequence[Any], *, test: Callable[[Sequence[Any]], bool],
                 on_complete: Callable[[], None] | None = None, timeout: timedelta, what: str,
                 result: list | None = None, on_timeout: Callable[[], None] | None = None) -> None:
        self._requests = list(requests)
        self._test = test
        self._on_complete = on_complete
        self._timeout = timeout
        self._what = what
        self._result = result if result is not None else []
        self._on_timeout = on_timeout
        self._done = False
        self._exception: BaseException | None = None
        self._started = time.monotonic()

    def __repr__(self) -> str:
        return f"<Work {self._what}: {'completed' if self._done else 'in flight'}>"

    def _finish(self) -> None:
        self._done = True
        if self._on_complete is not None:
            callback, self._on_complete = self._on_complete, None
            callback()

    def _poll(self) -> bool:
        if self._done:
            return True
        if self._exception is not None:
            raise self._exception
        try:
            done = self._test(self._requests) if self._requests else True
        except Exception as e:  # the engine's own error (a dead peer, a message that did not fit)
            self._exception = DistBackendError(f"{self._what} failed: {e}")
            self._exception.__cause__ = e
            raise self._exception from e
        if done:
            self._finish()
        return done

    def is_completed(self) -> bool:
        """Whether the operation has finished (never blocks)."""
        return self._poll()

    def is_success(self) -> bool:
        """Whether the operation finished without an error."""
        return self._done and self._exception is None

    def exception(self) -> BaseException | None:
        """The error that the operation ended with, if any."""
        return self._exception

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the operation is done; raise ``DistBackendError`` when it takes longer than the
        group's timeout (or ``timeout``), naming the operation and the ranks it waited for."""
        if self._poll():
            return True
        limit = (timeout or self._timeout).total_seconds()
        deadline = self._started + limit if timeout is None else time.monotonic() + limit
        began = time.monotonic()
        spin_until, yield_until = began + _SPIN_SECONDS, began + _YIELD_SECONDS
        while not self._poll():
            now = time.monotonic()
            if now < spin_until:
                continue
            if now < yield_until:
                os.sched_yield()
                continue
            if now > deadline:
                self._exception = DistBackendError(
                    f"{self._what} timed out after {limit:g} s: a peer did not take part (it may have died, "
                    "or the ranks called different collectives); the process group cannot be used any more")
                if self._on_timeout is not None:
                    self._on_timeout()
                raise self._exception
            time.sleep(_SLEEP_SECONDS)
        return True

    def result(self) -> list:
        """The output tensors of the operation (after ``wait``)."""
        self.wait()
        return self._result

    def synchronize(self) -> None:
        self.wait()

    def get_future(self) -> "_Future":
        """A future that completes with ``result()`` when waited on."""
        return _Future(self)


class _Future:
    """The little of ``torch.futures.Future`` that users of Work reach for: ``wait``, ``value``, ``done``."""

    def __init__(self, work: Work) -> None:
        self._work = work

    def done(self) -> bool:
        return self._work.is_completed()

    def wait(self) -> list:
        return self._work.result()

    def value(self) -> list:
        return self._work.result()


def completed_work(what: str, result: list | None = None) -> Work:
    """A Work that is already done (a rank outside the group, an empty operation)."""
    w = Work([], test=lambda r: True, timeout=timedelta(seconds=1), what=what, result=result)
    w._done = True
    return w
