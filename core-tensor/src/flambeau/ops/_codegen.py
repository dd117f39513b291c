"""Turning an OpDecl into a Python function with the op's exact signature.

The generated function does only what cannot be known in advance: it checks that tensor
arguments are tensors, picks the device, unwraps natives, notes whether any input requires
grad, and hands over to ``_dispatch.run_*``. Writing it out per op (rather than looping over
``*args`` at call time) keeps the per-op path short.

Compiling ~470 such functions at every import would cost a third of ``import flambeau``, and
caching their code on disk fails wherever bytecode cannot be written. So the source is written
with placeholder names (``_a0, _a1...`` for the parameters, ``_op`` for the function): ops of
the same shape (every unary pointwise op, every binary one with ``alpha``...) then share one
source text, which is compiled once per process, and each op gets that code object with its own
names put back (:func:`instantiate`). The bytecode is the one a per-op compile would give, so the
per-op path is unchanged.
"""
from __future__ import annotations

import functools
import inspect
from types import CodeType, FunctionType
from typing import Any, Callable

from .. import _grad_mode
from .._creation import scalar_tensor_like
from .._tensor import Tensor
from . import _dispatch
from ._decl import (COMPUTE, DYNAMIC, FACTORY, OPTIONAL_TENSOR, OPTIONAL_TENSOR_LIST, TENSOR, TENSOR_LIST,
                    VIEW, OpDecl, tensor_kind)


#: The generated function's own name in its source; ``_a{i}`` is its i-th parameter's.
_NAME = "_op"



def _seed() -> tuple[dict[str, CodeType], dict[tuple, str]]:
    """The templates of core-tensor's own ops, compiled when the package was installed (see
    :mod:`._templates`), and their sources by render key; any other source is rendered and
    compiled at its first use in the process."""
    try:
        from ._templates import RENDERED, TEMPLATES
    except ImportError:  # a source tree mid-regeneration: everything compiles, correctly, more slowly
        return {}, {}
    sources = list(TEMPLATES)
    return dict(TEMPLATES), {key: sources[i] for key, i in RENDERED.items()}


def _compile_one(source: str) -> CodeType:
    module = compile(source, "<generated>", "exec", dont_inherit=True)
    return next(c for c in module.co_consts if isinstance(c, CodeType))


def _render_params(params: list[_Placeholder], add_out: bool) -> str:
    """The parameter list, without defaults: those are set on the function object
    (``__defaults__``/``__kwdefaults__``), so that ops differing only in defaults share a source."""
    parts, star_seen = [], False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star_seen:
            parts.append("*")
            star_seen = True
        parts.append(p.name)
    if add_out:
        if not star_seen:
            parts.append("*")
        parts.append("out")
    return ", ".join(parts)


class _Placeholder:
    """A parameter under its placeholder name: what :func:`render` reads of an ``inspect.Parameter``
    (made ~1000 times at import; ``Parameter.replace`` costs ten times more)."""

    __slots__ = ("name", "kind", "default", "annotation")
    empty = inspect.Parameter.empty
    POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
    KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY

    def __init__(self, index: int, param: inspect.Parameter) -> None:
        self.name = f"_a{index}"
        self.kind, self.default, self.annotation = param.kind, param.default, param.annotation


def _placeholders(params: list[inspect.Parameter]) -> list[_Placeholder]:
    """``params`` renamed ``_a0, _a1...``: the names the source is written with."""
    return [_Placeholder(i, p) for i, p in enumerate(params)]


def instantiate(source: str | Callable[[], str], names: dict[str, str], namespace: dict[str, Any],
                defaults: tuple | None = None,
                kwdefaults: dict[str, Any] | None = None, filename: str = "<generated>") -> FunctionType:
    """The function that ``source`` defines, as if compiled with each placeholder in ``names``
    replaced by its real name: its parameters (and the function's own name) in ``co_varnames``
    and ``co_name``, and the same names where they appear as string constants (argument names
    in messages, keyword names of calls). ``source`` defines one function, called ``_op``, with
    no nested function or comprehension; it is compiled once per process, whatever the names.

    A source that is not precompiled (:mod:`._templates`) is compiled at the function's first
    call, not now (see :class:`_Deferred`): ``namespace`` must then be the function's own, not
    shared with another function, and until that call the function's ``__code__`` is a stand-in
    taking ``(*args, **kwargs)`` (:func:`compiled` gives the real one).

    Args:
        source: the text of one ``def _op(...)``, its parameters placeholders.
        names: placeholder -> real name, ``"_op"`` included.
        namespace: the function's globals.
        defaults, kwdefaults: the function's ``__defaults__`` and ``__kwdefaults__``.
        filename: its ``co_filename`` (shown in tracebacks).
    """
    # A callable source renders it: only for a source known not to be precompiled (it is then
    # rendered at the first call with the rest of the work, or now if it cannot be deferred).
    code = _TEMPLATES.get(source) if type(source) is str else None
    name = names.get(_NAME, _NAME)
    if code is None:
        if _DEFERRED in namespace:  # shared with another deferred function: compile now
            source = source if type(source) is str else source()
            code = _TEMPLATES[source] = _compile_one(source)
        else:
            stand_in = _STAND_IN.replace(co_name=name, co_qualname=name, co_filename=filename)
            fn = FunctionType(stand_in, namespace, name, defaults)
            fn.__kwdefaults__ = kwdefaults
            namespace[_DEFERRED] = _Deferred(fn, source, names, name, filename)
            return fn
    fn = FunctionType(_named(code, names, name, filename), namespace, name, defaults)
    fn.__kwdefaults__ = kwdefaults
    return fn


def _named(code: CodeType, names: dict[str, str], name: str, filename: str) -> CodeType:
    """A template's code with its placeholders given their real names (see :func:`instantiate`)."""
    return code.replace(
        co_name=name, co_qualname=name, co_filename=filename, co_firstlineno=1,
        co_varnames=tuple([names.get(v, v) for v in code.co_varnames]),
        co_consts=tuple([_renamed(c, names) for c in code.co_consts]),
    )


#: The global through which a deferred function's stand-in reaches its :class:`_Deferred`.
_DEFERRED = "_deferred_compile"
_STAND_IN = next(c for c in compile(f"def _op(*args, **kwargs):\n    return {_DEFERRED}(args, kwargs)\n",
                                    "<deferred>", "exec", dont_inherit=True).co_consts if isinstance(c, CodeType))


class _Deferred:
    """Compiles a function's source at its first call and puts the code in place.

    Other packages' ops (optim's, nn's...) and the CPU backend's kernel wrappers are not in
    :mod:`._templates`: compiling their ~25 (~55 with nn and distributions) distinct sources at
    every import cost 10-30 ms of it, for functions a program mostly never calls. The function
    object is created at once (it goes into the registry, the namespaces and the kernel tables)
    with a stand-in code; its first call compiles the source, sets ``__code__`` (the globals,
    defaults and attributes stay), and calls it. From then on the function is exactly what an
    eager :func:`instantiate` makes. Two threads making the first call at once compile twice,
    harmlessly.
    """

    __slots__ = ("fn", "source", "names", "name", "filename")

    def __init__(self, fn: FunctionType, source: str, names: dict[str, str], name: str, filename: str) -> None:
        self.fn, self.source, self.names, self.name, self.filename = fn, source, names, name, filename

    def compile(self) -> None:
        if type(self.source) is not str:  # rendered only now (see build)
            self.source = self.source()
            self.fn._source = self.source  # type: ignore[attr-defined]
        code = _TEMPLATES.get(self.source)
        if code is None:
            code = _TEMPLATES[self.source] = _compile_one(self.source)
        self.fn.__code__ = _named(code, self.names, self.name, self.filename)
        self.fn.__globals__.pop(_DEFERRED, None)

    def __call__(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        if self.fn.__globals__.get(_DEFERRED) is self:
            self.compile()
        return self.fn(*args, **kwargs)


def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its real code in place (compiled now if :func:`instantiate` deferred it)."""
    deferred = getattr(fn, "__globals__", {}).get(_DEFERRED)
    if isinstance(deferred, _Deferred) and deferred.fn is fn:
        deferred.compile()
    return fn


def _renamed(const: Any, names: dict[str, str]) -> Any:
    if type(const) is str:
        return names.get(const, const)
    if type(const) is tuple and const and all(type(c) is str for c in const):  # a call's keyword names
        return tuple([names.get(c, c) for c in const])
    return const


def build(decl: OpDecl, inplace: bool = False) -> Callable[..., Any]:
    """The public function for ``decl`` (or its in-place form ``name_``)."""
    key = _render_key(decl, inplace)
    source: str | Callable[[], str] | None = _SOURCES.get(key)
    if source is None:
        # Not rendered before, so not precompiled either: the function compiles at its first call
        # (see instantiate), and its source is rendered then too (~70 sources with nn installed).
        source = functools.partial(_render_once, decl, inplace, key)
    name = decl.name + ("_" if inplace else "")
    real = decl.parameters
    namespace = dict(_shared_namespace(), _OP=decl, _zero_dim_when=decl.zero_dim_common, _KC={}, _meta=decl.meta,
                     _composite=decl.composite)
    names = {f"_a{i}": p.name for i, p in enumerate(real)}
    names[_NAME] = name
    positional = [p for p in real if p.kind is not p.KEYWORD_ONLY]
    defaults = tuple(p.default for p in positional if p.default is not p.empty) or None
    kwdefaults = {p.name: p.default for p in real if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
    if decl.returns_out and not inplace:
        kwdefaults["out"] = None
    fn = instantiate(source, names, namespace, defaults, kwdefaults or None, f"<flambeau op {name}>")
    if _DEFERRED in namespace:  # compiled at its first call: its signature meanwhile, for inspect and help()
        fn.__signature__ = _signature(decl, inplace)  # type: ignore[attr-defined]
    namespace["_SELF"] = fn  # number_first ops call themselves again with the number made a tensor
    namespace["_SELF_ARGS"] = _by_position(decl, fn, inplace)  # and conjugated inputs, resolved
    fn.__doc__ = decl.doc or None
    fn.__module__ = "flambeau"
    fn._op = decl  # type: ignore[attr-defined]
    if type(source) is str:  # else set by the first call (see source_of)
        fn._source = source  # type: ignore[attr-defined]
    return fn


def _render_once(decl: OpDecl, inplace: bool, key: tuple) -> str:
    source = _SOURCES.get(key)
    if source is None:
        source = _SOURCES[key] = render(decl, inplace)
    return source


def source_of(fn: Callable[..., Any]) -> str:
    """The source (placeholder names) an op function was made from, rendered now if its first
    call has not done it yet."""
    source = getattr(fn, "_source", None)
    if source is None:
        deferred = fn.__globals__[_DEFERRED]
        source = deferred.source if type(deferred.source) is str else deferred.source()
    return source


def _signature(decl: OpDecl, inplace: bool) -> inspect.Signature:
    """The signature of ``decl``'s function as its code has it: no annotations, ``out`` added."""
    params = [p.replace(annotation=p.empty) for p in decl.parameters]
    if decl.returns_out and not inplace:
        params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _render_key(decl: OpDecl, inplace: bool) -> tuple:
    """Everything of ``decl`` that :func:`render` reads: ops equal in these have one source (~470
    functions, ~250 keys). ``test_codegen_templates`` checks the cached sources against render."""
    zdc = decl.zero_dim_common
    return (decl.signature, decl.kind, inplace, bool(decl.number_first), bool(zdc), callable(zdc),
            decl.differentiable, decl.composite is not None, decl.elementwise, decl.name == CONJ_OP)


_TEMPLATES: dict[str, CodeType]  # source text -> the code object of the function it defines
_SOURCES: dict[tuple, str]  # render key -> source text
_TEMPLATES, _SOURCES = _seed()


def number_first(op: OpDecl, fn: Callable[..., Any], first: Any, second: Any, *rest: Any, **kwargs: Any) -> Any:
    """``fn(number, tensor, ...)`` for an op declared ``number_first``: the number becomes a 0-d tensor
    on the tensor's device, of the dtype PyTorch gives a Python scalar against it (``torch.pow(2, t)``)."""
    if type(first) in (bool, int, float, complex) and isinstance(second, Tensor):
        true_division = op.name == "div" and kwargs.get("rounding_mode") is None
        return fn(scalar_tensor_like(first, second, true_division), second, *rest, **kwargs)
    raise _dispatch.type_error(op, op.param_names[0], first)


def _shared_namespace() -> dict[str, Any]:
    """The globals every op function shares (copied into each op's own namespace)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = {
            "_T": Tensor,
            "_type_error": _dispatch.type_error,
            "_number_first": number_first,
            "_zero_dim_common": _dispatch.zero_dim_common,
            "_no_tensor_error": _dispatch.no_tensor_error,
            "_unify": _dispatch.unify_devices,
            "_cross": _dispatch.cross_device,
            "_factory_device": _dispatch.factory_device,
            "_run_compute": _dispatch.run_compute,
            "_run_view": _dispatch.run_view,
            "_run_dynamic": _dispatch.run_dynamic,
            "_TABLES": _dispatch.TABLES,
            "_entry_for": _dispatch.kernel_entry,
            "_new": object.__new__,
            "_wrap": _dispatch.wrap,
            "_finish": _dispatch.finish_compute,
            "_into": _dispatch._run_into,
            "_D": _dispatch,
            "_DT": _dispatch._dtypes,
            "_conj_call": _dispatch.conj_call,
            "_elementwise_out": _dispatch.elementwise_out,
            "_conj_view": _dispatch.conj_view,
            "_IT": _grad_mode.INFERENCE_THREADS,
            "_new_vc": _grad_mode.new_version_counter,
        }
    return _SHARED


_SHARED: dict[str, Any] | None = None


def render(decl: OpDecl, inplace: bool = False) -> str:
    """The source of ``decl``'s function (or of its in-place form), with placeholder names."""
    real = decl.parameters
    params = _placeholders(real)
    lines = [f"def {_NAME}({_render_params(params, add_out=decl.returns_out and not inplace)}):"]
    body: list[str] = []
    dev_state = "unset"  # "unset": no `_dev` yet; "maybe": `_dev` may be None; "known": set
    natives = []
    first_tensor = None  # the first Tensor parameter's name, for zero_dim_common
    args_tuple = f"({', '.join(p.name for p in params)},)" if params else "()"
    conj_exit = _conj_exit(decl, args_tuple, inplace)  # see _conj_exit
    cross = _cross_exit(decl, args_tuple, inplace)  # see _cross_exit
    lists = False  # whether a tensor list's loop sets `_cj`
    for p in params:
        kind = tensor_kind(p)
        n = p.name
        if kind is None:
            natives.append(n)
            continue
        if dev_state == "unset":
            body += ["_dev = None", "_rg = False"] if kind != TENSOR else []
        if kind == TENSOR:
            if decl.number_first and not inplace and not natives:
                # Off the hot path: only a non-tensor first argument reaches the call.
                body.append(f"if not isinstance({n}, _T): return _number_first(_OP, _SELF, {_call_args(decl, params)})")
            else:
                body.append(f"if not isinstance({n}, _T): raise _type_error(_OP, {n!r}, {n})")
            body += _zero_dim_lines(decl, params, first_tensor, n, "")
            first_tensor = first_tensor or n
            if dev_state == "unset":
                body += [f"_dev = {n}._device", f"_rg = {n}._requires_grad"]
            else:
                body += _device_lines(n, dev_state, "", cross)
                body.append(f"_rg = _rg or {n}._requires_grad")
            natives.append(f"{n}._data")
            body += conj_exit(f"{n}._conj", "")
            dev_state = "known"
            continue
        if kind in (TENSOR_LIST, OPTIONAL_TENSOR_LIST) and not lists:
            body.append("_cj = False")
            lists = True
        if kind == TENSOR_LIST:
            body.append(f"_n_{n} = []")
            body.append(f"for _t in {n}:")
            body.append(f"    if not isinstance(_t, _T): raise _type_error(_OP, {n!r}, _t)")
            body += _device_lines("_t", dev_state if dev_state == "known" else "maybe", "    ", cross)
            body.append("    _rg = _rg or _t._requires_grad")
            body.append("    if _t._conj: _cj = True")
            body.append(f"    _n_{n}.append(_t._data)")
        elif kind == OPTIONAL_TENSOR_LIST:
            body.append(f"_n_{n} = []")
            body.append(f"for _t in {n}:")
            body.append(f"    if _t is None: _n_{n}.append(None); continue")
            body.append(f"    if not isinstance(_t, _T): raise _type_error(_OP, {n!r}, _t)")
            body += _device_lines("_t", dev_state if dev_state == "known" else "maybe", "    ", cross)
            body.append("    _rg = _rg or _t._requires_grad")
            body.append("    if _t._conj: _cj = True")
            body.append(f"    _n_{n}.append(_t._data)")
        else:  # a tensor or a scalar (or None)
            body.append(f"if isinstance({n}, _T):")
            body += _zero_dim_lines(decl, params, first_tensor, n, "    ")
            body += _device_lines(n, dev_state if dev_state == "known" else "maybe", "    ", cross)
            body.append(f"    _rg = _rg or {n}._requires_grad")
            body.append(f"    _n_{n} = {n}._data")
            body += conj_exit(f"{n}._conj", "    ")
            body.append("else:")
            if kind == OPTIONAL_TENSOR:
                body.append(f"    if {n} is not None: raise _type_error(_OP, {n!r}, {n})")
            body.append(f"    _n_{n} = {n}")
        natives.append(f"_n_{n}")
        if dev_state == "unset":
            dev_state = "maybe"
    alias = {p.name: c.name for p, c in zip(real, params)}
    if decl.kind == FACTORY:
        body.append(f"_dev = _factory_device({alias['device']})")
    elif dev_state == "maybe":
        body.append("if _dev is None: raise _no_tensor_error(_OP)")
    elif dev_state == "unset":
        raise ValueError(f"op {decl.name!r}: a {decl.kind} op needs a tensor parameter")
    if dev_state == "unset" or not decl.differentiable:
        body.append("_rg = False")
    natives_tuple = f"({', '.join(natives)},)" if natives else "()"
    if lists:
        body += conj_exit("_cj", "")
    if decl.kind == COMPUTE:
        body += _compute_lines(decl, params, args_tuple, natives_tuple, inplace)
    elif decl.kind == FACTORY:
        body += _factory_lines(decl, alias, args_tuple, natives_tuple)
    if decl.kind in (COMPUTE, FACTORY):
        out = params[0].name if inplace else "out"
        body.append(f"return _run_compute(_OP, _dev, {args_tuple}, {natives_tuple}, {out}, _rg, {inplace})")
    elif decl.kind == VIEW:
        body += _view_lines(decl, params, args_tuple, natives_tuple)
        body.append(f"return _run_view(_OP, _dev, {args_tuple}, {natives_tuple}, _rg)")
    elif decl.kind == DYNAMIC:
        body.append(f"return _run_dynamic(_OP, _dev, {args_tuple}, {natives_tuple}, _rg)")
    lines += ["    " + b for b in body if b]
    if decl.kind == FACTORY and "requires_grad" in decl.param_names:
        lines[-1] = lines[-1].replace("return ", "_result = ")
        lines += [f"    if {alias['requires_grad']}: _result.requires_grad_(True)", "    return _result"]
    return "\n".join(lines)


def _conj_exit(decl: OpDecl, args_tuple: str, inplace: bool) -> Callable[[str, str], list[str]]:
    """The conjugate bit's test, written after each tensor argument is unwrapped: one attribute
    read on the per-op path. A conjugated view leaves for ``_dispatch.conj_call`` (or ``conj_view``
    for a view op), which calls this function again on resolved inputs, through ``_SELF_ARGS``
    (:func:`_by_position`), so with the op's own argument rules and checks."""
    if decl.name == CONJ_OP:
        return lambda test, indent: []  # the op that sets the bit: its view lines toggle it
    if decl.kind == VIEW:
        line = f"return _conj_view(_OP, _SELF_ARGS, {args_tuple})"
    else:
        with_out = decl.returns_out and not inplace
        line = f"return _conj_call(_OP, _SELF_ARGS, {args_tuple}, {'out' if with_out else 'None'}, {inplace})"
    return lambda test, indent: [f"{indent}if {test}: {line}"]


#: The view op that flips the conjugate bit (``Tensor.conj`` of a complex tensor).
CONJ_OP = "_conj"


def _by_position(decl: OpDecl, fn: Callable[..., Any], inplace: bool) -> Callable[..., Any]:
    """``fn`` called with every parameter by position, in declaration order (``out`` last, where
    the op has it): how ``_dispatch.conj_call`` and ``conj_view`` pass resolved arguments back.
    Keyword-only parameters are passed on by keyword."""
    keywords = [p.name for p in decl.parameters if p.kind is p.KEYWORD_ONLY]
    n_positional = len(decl.parameters) - len(keywords)
    with_out = decl.returns_out and not inplace

    def call(*args: Any) -> Any:
        named = dict(zip(keywords, args[n_positional:n_positional + len(keywords)]))
        if with_out and len(args) > len(decl.parameters):
            named["out"] = args[len(decl.parameters)]
        return fn(*args[:n_positional], **named)

    return call


def _zero_dim_lines(decl: OpDecl, params: list[_Placeholder], first: str | None, n: str,
                    indent: str) -> list[str]:
    """For a ``zero_dim_common`` op, the check that casts a 0-d operand to the other's dtype: one
    identity test on the common path (same dtypes), the helper only when they differ."""
    if not decl.zero_dim_common or first is None:
        return []
    when = f" and _zero_dim_when({_call_args(decl, params, with_out=False)})" if callable(decl.zero_dim_common) \
        else ""
    return [f"{indent}if {n}._dtype is not {first}._dtype{when}: {first}, {n} = _zero_dim_common({first}, {n})"]


def _call_args(decl: OpDecl, params: list[_Placeholder], with_out: bool = True) -> str:
    """The generated function's own arguments, written as a call passes them on (``a, b, alpha=alpha``);
    ``out=out`` too when the op has it and ``with_out`` (an in-place form has no ``out``)."""
    parts = [p.name if p.kind is p.POSITIONAL_OR_KEYWORD else f"{p.name}={p.name}" for p in params]
    if decl.returns_out and with_out:
        parts.append("out=out")
    return ", ".join(parts)


def _wrap_lines(indent: str) -> list[str]:
    """``_r = wrap(_o, _dt, _dev)`` written out: a Python call is a tenth of a 1-element op."""
    return [
        f"{indent}_r = _new(_T)",
        f"{indent}_r._data = _o; _r._dtype = _dt; _r._device = _dev; _r._base = None",
        # an inference tensor's counter carries a mark; the count of threads in inference mode
        # keeps the thread-local flag off this path while no thread is in one
        f"{indent}_r._version_counter = [0] if not _IT[0] else _new_vc()",
        f"{indent}_r._requires_grad = False; _r._grad = None; _r.grad_fn = None; _r._autograd = None; _r._conj = False",
    ]


def _factory_lines(decl: OpDecl, alias: dict[str, str], args_tuple: str, natives_tuple: str) -> list[str]:
    """A factory's common call (one output, no ``out=``) written out, as ``_compute_lines`` does for
    compute ops: ``randn(100)`` is mostly overhead. Anything else falls through to ``run_compute``."""
    names = args_tuple[1:-2]
    grad = [f"        if {alias['requires_grad']}: _r.requires_grad_(True)"] if "requires_grad" in alias else []
    return [
        "_entry = _KC.get(_dev.type) or _entry_for(_OP, _KC, _dev.type)",
        "_k = _entry[0]",
        "if _k is not None and out is None:",
        f"    _spec = _meta({names})",
        "    if type(_spec) is tuple:",
        "        _shape, _dt = _spec",
        "        _o = _entry[1](_shape, _dt, _dev)",
        f"        _k({natives_tuple[1:-2]}, out=_o)",
        *_wrap_lines("        "),
        *grad,
        "        return _r",
    ]


def _compute_lines(decl: OpDecl, params: list[_Placeholder], args_tuple: str, natives_tuple: str,
                   inplace: bool) -> list[str]:
    """``run_compute`` written out in the op's own function when the device has a kernel.

    The functional one-output case is inlined whole (allocate, kernel, wrap, record); ``out=``
    and in-place forms go straight to ``_run_into``, several outputs to ``finish_compute``.
    This saves a call with seven arguments, the packing and unpacking of ``*args`` for the meta
    and the kernel, and a try/except: about a quarter of the overhead of a 1-element ``a + b``.
    Without a kernel, everything falls through to ``run_compute`` (composite, fallback, error).
    """
    names = args_tuple[1:-2]
    natives = natives_tuple[1:-2]
    head = [
        # One dict lookup per call: this op's (kernel, allocator, table) for the device type,
        # cached from the frozen kernel table the first time the op runs on that type.
        "_entry = _KC.get(_dev.type) or _entry_for(_OP, _KC, _dev.type)",
        "_k = _entry[0]",
        "if _k is not None:",
        f"    _spec = _meta({names})",
    ]
    if inplace:
        first = params[0].name
        return head + [f"    return _into(_OP, _k, _dev, {args_tuple}, {natives_tuple}, _spec, {first}, _rg, True)"]
    return head + [
        f"    if out is not None: return _into(_OP, _k, _dev, {args_tuple}, {natives_tuple}, _spec, out, _rg, False)",
        "    if type(_spec) is not tuple:",
        f"        return _finish(_OP, _dev, _entry[2], _k, {args_tuple}, {natives_tuple}, _spec, _rg)",
        "    _shape, _dt = _spec",
        *_allocation_lines(decl, params, args_tuple),
        f"    _k({natives}, out=_o)",
        *_wrap_lines("    "),
        f"    if _rg: _D._engine.record(_OP, {args_tuple}, (_r,), 'functional', None)",
        "    return _r",
    ]


def _allocation_lines(decl: OpDecl, params: list[_Placeholder], args_tuple: str) -> list[str]:
    """The output's allocation. An elementwise op's output takes its inputs' layout; the test that
    sends the common case (a first input of the output's shape, row-major: the output is too) to
    the plain allocator reads the native's own flag, where the backend's natives have numpy's
    ``flags`` (``_entry[3]``); everything else asks ``_dispatch.elementwise_out``."""
    plain = "    _o = _entry[1](_shape, _dt, _dev)"
    if not decl.elementwise:
        return [plain]
    first = next((p.name for p in params if tensor_kind(p) == TENSOR), None)
    quick = "len(_shape) < 2"  # a result of at most one dim has one layout
    if first is not None:
        quick += f" or _entry[3] and {first}._data.flags.c_contiguous and {first}._data.shape == _shape"
    return [
        f"    if {quick}:",
        "    " + plain,
        f"    else: _o = _elementwise_out(_entry, _shape, _dt, _dev, {args_tuple})",
    ]


def _view_lines(decl: OpDecl, params: list[_Placeholder], args_tuple: str, natives_tuple: str) -> list[str]:
    """``run_view`` written out in the op's own function when the device has a kernel (a few
    percent of a small view op; the view's meta is most of the rest)."""
    base = params[0].name
    return [
        "_table = _TABLES[_dev.type]",
        f"_k = _table.get({_NAME!r})",  # the op's name, put in by instantiate
        "if _k is not None:",
        f"    _meta({args_tuple[1:-2]})",
        f"    _n = _k({natives_tuple[1:-2]})",
        "    _r = _wrap(_n, _DT._FROM_NUMPY.get(_n.dtype) or _DT.from_numpy_dtype(_n.dtype), _dev)",
        f"    _r._version_counter = {base}._version_counter",
        f"    _r._base = {base} if {base}._base is None else {base}._base",
        *([f"    _r._conj = not {base}._conj"] if decl.name == CONJ_OP else []),
        f"    if _rg: _D._engine.record(_OP, {args_tuple}, (_r,), 'view', None)",
        "    return _r",
    ] + ([  # a composite view (reshape, flatten...): its checks, then its body, with no detour through run_view
        f"_meta({args_tuple[1:-2]})",
        f"return _composite({args_tuple[1:-2]})",
    ] if decl.composite is not None else [])


def _device_lines(n: str, dev_state: str, indent: str, cross: str) -> list[str]:
    cross = cross.replace("{n}", n)
    if dev_state == "maybe":
        return [
            f"{indent}if _dev is None: _dev = {n}._device",
            f"{indent}elif {n}._device is not _dev: {cross}",
        ]
    return [f"{indent}if {n}._device is not _dev: {cross}"]


def _cross_exit(decl: OpDecl, args_tuple: str, inplace: bool) -> str:
    """What a tensor on another device than the first does: a view op raises PyTorch's error
    (``_unify``); any other op leaves for ``_dispatch.cross_device``, which moves what PyTorch
    moves (a 0-dim CPU tensor, ``copy_``'s source) and calls this function again, or raises."""
    if decl.kind == VIEW:
        return "_dev = _unify(_OP, _dev, {n})"
    with_out = decl.returns_out and not inplace
    return f"return _cross(_OP, _SELF_ARGS, {args_tuple}, {'out' if with_out else 'None'}, {inplace})"
