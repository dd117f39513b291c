"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` (thread-local).

Each is a context manager and a decorator, as in PyTorch. The state lives here, in core-tensor,
so that the modes work (as no-ops: nothing records) without flambeau-core-autograd, and
core-autograd reads this same state rather than a copy of its own. The flags live in a
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

#: How many threads are inside ``inference_mode()`` now (process-wide). The dispatcher reads it
#: when it wraps a result: while it is 0 (nearly always) a tensor cannot be an inference tensor,
#: and the thread-local flag is not looked at.
INFERENCE_THREADS = [0]
_count_lock = threading.Lock()


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

    Tensors created inside are *inference tensors* (``Tensor.is_inference()``): they can never
    be saved for backward, nor written in place outside inference mode. Views of an inference
    tensor are inference tensors. ``inference_mode(False)`` turns inference mode off (and grad
    mode on) inside an enclosing ``inference_mode()`` block, as PyTorch's does. Thread-local;
    usable as a decorator.

    Args:
        mode (bool): whether to enable inference mode (default: ``True``).

    Example::

        >>> with flambeau.inference_mode():
        ...     y = x * 2
        >>> y.is_inference(), y.requires_grad
        (True, False)
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
        STATE.enabled = not self.mode
        _set_inference(bool(self.mode))

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled = self.prev[0]
        _set_inference(self.prev[1])

    def clone(self) -> "inference_mode":
        return self.__class__(self.mode)


def _set_inference(flag: bool) -> None:
    """Set this thread's inference flag, keeping the count of threads in inference mode."""
    if STATE.inference is flag:
        return
    with _count_lock:
        INFERENCE_THREADS[0] += 1 if flag else -1
    STATE.inference = flag


#: The second item of an inference tensor's version counter. The mark lives in the counter because
#: the counter is what a tensor shares with its views (and ``detach()`` aliases): views of an
#: inference tensor are inference tensors with no bookkeeping of their own.
INFERENCE_MARK = "inference"


def new_version_counter() -> list:
    """A fresh tensor's version counter: ``[0]``, or ``[0, INFERENCE_MARK]`` in inference mode."""
    return [0, INFERENCE_MARK] if STATE.inference else [0]


def is_inference_counter(counter: list) -> bool:
    return len(counter) != 1


INFERENCE_WRITE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)


def check_inference_write(counter: list) -> None:
    """Raise PyTorch's error for an in-place write to an inference tensor outside inference mode."""
    if len(counter) != 1 and not STATE.inference:
        raise RuntimeError(INFERENCE_WRITE_MESSAGE)
