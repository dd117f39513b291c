"""Kernel wrappers written out with the wrapped kernel's own parameters.

A ``def run(*args, **kwargs)`` wrapper costs about 0.2 µs a call (packing the arguments, ``out``
by keyword); one with the kernel's parameter list costs a third of that, which matters on small
tensors. :func:`with_signature` writes such a wrapper from a body template, as the op functions
themselves are generated (``flambeau.ops._codegen``); a kernel with defaults, ``*args`` or
keyword-only parameters gets the generic form. The source is written with placeholder names and
compiled once per body and arity (``flambeau.ops._codegen.instantiate``): ~190 kernels are
wrapped when the backend loads, and compiling each wrapper was a tenth of ``import flambeau``.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from flambeau.ops._codegen import instantiate
from flambeau.ops._registry import code_parameters

_PLAIN = inspect.Parameter.POSITIONAL_OR_KEYWORD


def with_signature(kernel: Callable[..., Any], body: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """A function calling ``kernel`` through ``body``, with ``kernel``'s parameters.

    ``body`` is the function's body, indented four spaces; in it ``{args}`` stands for the
    arguments passed on (``input, other, out``, or ``*args, **kwargs`` in the generic form),
    ``{NAME}`` for the parameter NAME (the plain form only) and ``_kernel`` for the kernel.
    ``namespace`` gives the body's other names.
    """
    fast = code_parameters(kernel)
    if fast is not None:
        plain = fast[0] if fast[3] else None
    else:
        params = list(inspect.signature(kernel).parameters.values())
        plain = [p.name for p in params] if all(p.kind is _PLAIN and p.default is p.empty for p in params) else None
    names = {"_op": "run"}
    fields = {}
    if plain is not None:
        names.update((f"_a{i}", name) for i, name in enumerate(plain))
        fields = {name: f"_a{i}" for i, name in enumerate(plain)}
        signature = args = ", ".join(f"_a{i}" for i in range(len(plain)))
    else:
        signature, args = "*args, **kwargs", "*args, **kwargs"
    source = f"def _op({signature}):\n" + body.format(args=args, **fields)
    run = instantiate(source, names, dict(namespace, _kernel=kernel),
                      filename=f"<{getattr(kernel, '__name__', 'kernel')} wrapper>")
    return functools.update_wrapper(run, kernel)
