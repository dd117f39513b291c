"""Kernel wrappers written out with the wrapped kernel's own parameters.

A ``def run(*args, **kwargs)`` wrapper costs about 0.2 µs a call (packing the arguments, ``out``
by keyword); one with the kernel's parameter list costs a third of that, which matters on small
tensors. :func:`with_signature` writes such a wrapper from a body template, as the op functions
themselves are generated (``flambeau.ops._codegen``); a kernel with defaults, ``*args`` or
keyword-only parameters gets the generic form.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

_PLAIN = inspect.Parameter.POSITIONAL_OR_KEYWORD


def with_signature(kernel: Callable[..., Any], body: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """A function calling ``kernel`` through ``body``, with ``kernel``'s parameters.

    ``body`` is the function's body, indented four spaces; in it ``{args}`` stands for the
    arguments passed on (``input, other, out``, or ``*args, **kwargs`` in the generic form) and
    ``_kernel`` for the kernel. ``namespace`` gives the body's other names.
    """
    params = list(inspect.signature(kernel).parameters.values())
    if all(p.kind is _PLAIN and p.default is p.empty for p in params):
        signature = args = ", ".join(p.name for p in params)
    else:
        signature, args = "*args, **kwargs", "*args, **kwargs"
    source = f"def run({signature}):\n" + body.format(args=args)
    scope = dict(namespace, _kernel=kernel)
    exec(compile(source, f"<{getattr(kernel, '__name__', 'kernel')} wrapper>", "exec"), scope)
    return functools.update_wrapper(scope["run"], kernel)
