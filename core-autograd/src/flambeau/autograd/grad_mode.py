"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` (thread-local).

Each is a context manager and a decorator, as in PyTorch. The flag lives in a
``threading.local`` so that one thread's ``no_grad`` does not leak into another's.
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False


STATE = _State()

#: Anomaly detection is process-wide, as in PyTorch: ``[enabled, check_nan]`` (a list, so that
#: the recording path reads it without an attribute lookup).
ANOMALY = [False, True]


def is_grad_enabled() -> bool:
    """Whether operations are recorded for autograd in this thread."""
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode()``."""
    return STATE.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators) with itself."""

    def __call__(self, func: F) -> F:
        if inspect.isclass(func):
            raise RuntimeError("grad mode decorators cannot decorate classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                response = None
                while True:
                    with self.clone():
                        try:
                            item = gen.send(response)
                        except StopIteration as stop:
                            return stop.value
                    response = yield item
            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def clone(self) -> "_DecoratorContextManager":
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disables gradient recording inside its block.

    Results computed inside ``no_grad`` have ``requires_grad=False`` even when their inputs
    require grad. Thread-local; usable as a decorator.

    Example::

        >>> x = flambeau.tensor([1.], requires_grad=True)
        >>> with flambeau.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = STATE.enabled
        STATE.enabled = False

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside its block (for example inside a ``no_grad`` block)."""

    def __init__(self) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = STATE.enabled
        STATE.enabled = True

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets gradient recording on or off: at once when called, restored when used as a context manager.

    Args:
        mode (bool): whether to enable recording.

    Example::

        >>> with flambeau.set_grad_enabled(False):
        ...     y = x * 2
        >>> _ = flambeau.set_grad_enabled(True)  # as a function
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.prev = STATE.enabled
        self.mode = mode
        STATE.enabled = mode

    def __call__(self, func: F) -> F:  # used as a decorator: undo the eager switch
        STATE.enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        STATE.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self.prev

    def clone(self) -> "set_grad_enabled":
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for code that will never need gradients (``inference_mode(mode=True)``).

    Args:
        mode (bool): whether to enable inference mode (``False`` makes it a no-op).
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False)

    def __call__(self, func: Any) -> Any:
        if isinstance(func, bool):  # @inference_mode(False) written as a call on a bool
            return self.__class__(func)
        return super().__call__(func)

    def __enter__(self) -> None:
        self.prev = (STATE.enabled, STATE.inference)
        if self.mode:
            STATE.enabled = False
            STATE.inference = True

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled, STATE.inference = self.prev

    def clone(self) -> "inference_mode":
        return self.__class__(self.mode)
