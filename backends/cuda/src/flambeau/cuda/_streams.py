"""Streams and events: ``flambeau.cuda.Stream``, ``Event``, ``current_stream`` and ``stream``, over CuPy's.

flambeau's kernels launch on CuPy's current stream, so making a stream current (``with
fb.cuda.stream(s):``) puts every op inside the block on it, as in PyTorch.
"""
from __future__ import annotations

from typing import Any


def _xp() -> Any:
    from . import _xp

    return _xp()


class Stream:
    """A CUDA stream: kernels queued on it run in order; different streams may overlap.

    Args:
        device: the GPU it belongs to (default: the current one).
        priority: lower numbers run first where the GPU supports priorities.
    """

    def __init__(self, device: Any = None, priority: int = 0, *, _native: Any = None) -> None:
        from . import _checked, _index

        xp = _xp()
        self.device_index = _checked(_index(device))
        if _native is None:
            with xp.cuda.Device(self.device_index):
                _native = xp.cuda.Stream(non_blocking=False, priority=priority)
        self._native = _native
        self.priority = priority

    @property
    def cuda_stream(self) -> int:
        """The ``cudaStream_t`` as an int (0 for the legacy default stream)."""
        return int(self._native.ptr)

    @property
    def device(self) -> Any:
        import flambeau as fb

        return fb.device("cuda", self.device_index)

    def synchronize(self) -> None:
        """Wait until every kernel queued on this stream has finished."""
        self._native.synchronize()

    def query(self) -> bool:
        """Whether everything queued on this stream has finished."""
        return bool(self._native.done) if hasattr(self._native, "done") else bool(self._native.query())

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait for ``event``."""
        self._native.wait_event(event._native)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work on this stream wait for what is queued on ``stream`` now."""
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one by default) on this stream and return it."""
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<flambeau.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a point in a stream's work, to wait on or to time.

    Args:
        enable_timing: whether :meth:`elapsed_time` can measure from it.
        blocking: whether :meth:`synchronize` sleeps instead of spinning.
        interprocess: whether it can be shared with other processes.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        xp = _xp()
        self.enable_timing = enable_timing
        self._native = xp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        stream = stream or current_stream()
        self._native.record(stream._native)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        return bool(self._native.done) if hasattr(self._native, "done") else bool(self._native.query())

    def synchronize(self) -> None:
        """Wait until the work recorded before the event has finished."""
        self._native.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, both timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        end_event.synchronize()
        return float(_xp().cuda.get_elapsed_time(self._native, end_event._native))

    def __repr__(self) -> str:
        return f"<flambeau.cuda.Event enable_timing={self.enable_timing}>"


def current_stream(device: Any = None) -> Stream:
    """The stream flambeau's kernels launch on now (CuPy's current stream)."""
    from . import _checked, _index

    xp = _xp()
    index = _checked(_index(device))
    with xp.cuda.Device(index):
        return Stream(index, _native=xp.cuda.get_current_stream())


def default_stream(device: Any = None) -> Stream:
    """The legacy default stream of a GPU."""
    from . import _checked, _index

    xp = _xp()
    return Stream(_checked(_index(device)), _native=xp.cuda.Stream.null)


class stream:  # noqa: N801 - PyTorch's name
    """Context manager that makes ``stream`` current; ``None`` changes nothing.

    Example::

        >>> s = fb.cuda.Stream()
        >>> with fb.cuda.stream(s):
        ...     y = x * 2             # queued on s
        >>> s.synchronize()
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        if self.stream is not None:
            _xp()
            self.stream._native.__enter__()
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            self.stream._native.__exit__(*exc)
