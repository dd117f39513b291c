"""Telling a user's Ctrl-C from a plugin that raises ``KeyboardInterrupt`` (or any BaseException).

Plugin code (a module's import, a hook, a backend's factory) may raise anything, ``SystemExit``
and ``KeyboardInterrupt`` included; none of it may end ``import flambeau`` or the interpreter:
it is recorded like any other failure. The one exception is a real Ctrl-C: while plugin code
runs, a SIGINT handler chained in front of the program's own counts the signals that arrive,
and a ``KeyboardInterrupt`` seen after one arrived is the user's, so it propagates.
"""
from __future__ import annotations

import threading

try:
    # The C module behind `signal` has the four names used here; `signal` itself builds its
    # enums at import (~1% of `import flambeau`). SIGINT and the handlers are the same objects.
    import _signal as signal
except ImportError:  # pragma: no cover - an interpreter without it
    import signal  # type: ignore[no-redef]
from contextlib import contextmanager
from typing import Any, Iterator

#: how many SIGINTs arrived while a watch was on (only ever grows: callers compare marks)
_signals = 0
_depth = 0  # nested watches (the CPU backend loads inside ``load()``) install one handler


def mark() -> int:
    """The SIGINT count now; pass it to :func:`is_user_interrupt` after the plugin code ran."""
    return _signals


def is_user_interrupt(exc: BaseException, since: int) -> bool:
    """Whether ``exc`` is a KeyboardInterrupt from a real SIGINT that arrived after ``since``.

    Any other BaseException a plugin raises (SystemExit, GeneratorExit, its own KeyboardInterrupt)
    is a failure of that plugin.
    """
    return isinstance(exc, KeyboardInterrupt) and _signals != since


@contextmanager
def watching_sigint() -> Iterator[None]:
    """Count SIGINTs while plugins load, then restore the program's handler.

    Only the main thread receives signals, and only it may set handlers: elsewhere nothing is
    installed, and every KeyboardInterrupt is a plugin's own. A handler that is not a Python
    callable (``SIG_IGN``, ``SIG_DFL``) never raises KeyboardInterrupt, so it is left alone too.
    """
    global _depth
    previous: Any = None
    installed = None
    if _depth == 0 and threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):
            def counting(signum: int, frame: Any) -> Any:
                global _signals
                _signals += 1
                return previous(signum, frame)  # the program's own reaction (KeyboardInterrupt by default)

            try:
                signal.signal(signal.SIGINT, counting)
                installed = counting
            except (ValueError, OSError):  # e.g. an embedded interpreter without signal support
                installed = None
    start = _signals
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        # Restore only our own handler: one a plugin installed meanwhile is the plugin's business.
        if installed is not None and signal.getsignal(signal.SIGINT) is installed:
            signal.signal(signal.SIGINT, previous)
    if installed is not None and _signals != start and previous is signal.default_int_handler:
        # The user pressed Ctrl-C, and a plugin swallowed the KeyboardInterrupt (or turned it into
        # a failure of its own): the interrupt is the user's all the same.
        raise KeyboardInterrupt
