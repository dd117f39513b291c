"""Op declarations: what an op is called, its signature, its meta function."""
from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

#: Annotations that mark a parameter as holding tensors (the dispatcher unwraps them).
TENSOR = "Tensor"
OPTIONAL_TENSOR = "Tensor?"
TENSOR_OR_SCALAR = "TensorOrScalar"
TENSOR_LIST = "TensorList"
OPTIONAL_TENSOR_LIST = "Tensor?[]"  # a sequence whose entries are tensors or None (indexing's indices)
TENSOR_KINDS = (TENSOR, OPTIONAL_TENSOR, TENSOR_OR_SCALAR, TENSOR_LIST, OPTIONAL_TENSOR_LIST)

#: How an op's outputs come to be.
COMPUTE = "compute"  # meta gives shapes and dtypes; the dispatcher allocates; the kernel fills ``out``
VIEW = "view"  # the kernel returns a native view of its first input; it shares the version counter
DYNAMIC = "dynamic"  # output shapes depend on the data: the kernel allocates and returns natives
FACTORY = "factory"  # no tensor inputs: device and dtype come from arguments; otherwise as COMPUTE
KINDS = (COMPUTE, VIEW, DYNAMIC, FACTORY)

#: The tier an op declares: "core" (every backend implements it) or "" (derived: see OpDecl.effective_tier).
TIERS = ("", "core")


@dataclass
class OpDecl:
    """One op, as a package declares it through the ``flambeau_declare_ops`` hook.

    Args:
        name: the op's name, unique across all installed packages (``"add"``).
        signature: its Python signature with the tensor parameters annotated, e.g.
            ``"(input: Tensor, other: TensorOrScalar, *, alpha=1)"``. Kernels take the same
            parameters, in the same order, with natives in place of tensors, plus ``out``
            for compute ops.
        meta: called with all of the op's arguments positionally, in declaration order (keyword-only
            ones too), tensors as Tensors; checks them and returns
            ``(shape, dtype)`` for each output (a list of them for several outputs) for compute and
            factory ops, or anything for view and dynamic ops (it is used only for its checks).
        kind: ``"compute"``, ``"view"``, ``"dynamic"`` or ``"factory"``.
        composite: an implementation written with other flambeau ops; used on any backend
            that has no kernel of its own for this op. An op with a composite is not primitive.
        method: also a ``Tensor`` method of the same name.
        export: also a function ``flambeau.NAME`` (for core-tensor's ops; other packages expose
            their ops themselves, through ``flambeau.ops.fn``).
        inplace: also an in-place form ``name_`` (a method, and an op writing into ``input``).
        differentiable: whether outputs can require grad (False for comparisons, argmax...).
        output_names: for several outputs, their names (the result is a named tuple).
        random: the op draws random numbers (never run through the CPU fallback).
        number_first: the first tensor parameter also takes a Python number, which then becomes a
            0-d tensor typed as the number's weak type against the second argument, as in
            ``torch.pow(2, t)`` or ``torch.sub(1, t)`` (the functional form only).
        zero_dim_common: a 0-d tensor operand meeting a tensor with dims, of a dtype category
            (bool < integer < floating < complex) no higher than that tensor's, is cast to the
            tensor's dtype before the kernel runs. PyTorch computes in that common dtype
            (``uint8_t == tensor(257)`` compares with 1, ``uint8_t // tensor(257)`` divides by 1);
            numpy would compute in the 0-d operand's wider dtype. Set for the ops where the two
            differ in more than rounding: comparisons, max/min, logical ops, clamp, floor_divide,
            remainder, fmod and pow. May instead be a predicate over the call's arguments
            saying when: ``div`` casts only with a ``rounding_mode``, since its true division of
            integers computes in floating point from the uncast values (``uint8_t / tensor(257)``
            is 2/257).
        elementwise: one output, each element computed from the inputs' elements at its index
            (after broadcasting): the output takes the inputs' memory layout, as PyTorch's
            TensorIterator gives it (``flambeau._layout.elementwise_strides``), so that an op on
            a transposed or channels_last tensor returns one laid out the same way.
        doc: the docstring of the generated function.
        tier: ``"core"`` for the ops of the core tier, the small set every backend implements
            (``python -m flambeau manifest --tier core``); empty for every other op, whose tier
            follows from its composite (:attr:`effective_tier`).
        uses: the ops its composite calls (other than itself), so that the registry can tell, per
            backend, whether the composite runs there (``flambeau.ops.coverage``) without running
            it. None: not declared (a composite written before tiers; taken to decompose onto
            the core tier).
        host: the composite computes on the host (a copy to numpy, numpy's routine, a copy
            back): for ops with no reasonable formulation on the core tier (factorizations,
            FFTs, sorting, special functions). Counted apart in ``coverage`` and ``info``.
    """

    name: str
    signature: str
    meta: Callable[..., Any]
    kind: str = COMPUTE
    composite: Callable[..., Any] | None = None
    method: bool = True
    export: bool = True
    inplace: bool = False
    differentiable: bool = True
    output_names: tuple[str, ...] = ()
    random: bool = False
    number_first: bool = False
    zero_dim_common: bool | Callable[..., bool] = False
    elementwise: bool = False
    doc: str = ""
    tier: str = ""
    uses: tuple[str, ...] | None = None
    host: bool = False
    provider: str = field(default="", compare=False)  # filled in by the loader: the distribution

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"op {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.tier not in TIERS:
            raise ValueError(f"op {self.name!r}: tier must be one of {TIERS}, got {self.tier!r}")
        self.parameters = parse_signature(self.name, self.signature)

    @property
    def primitive(self) -> bool:
        """Whether a backend must implement this op (it has no composite to fall back on)."""
        return self.composite is None

    @property
    def effective_tier(self) -> str:
        """``"core"``; ``"decomposed"`` (a composite on other ops); ``"host"`` (a composite through
        the host); or ``"extended"`` (neither: a backend needs a kernel of its own)."""
        if self.tier == "core":
            return "core"
        if self.composite is None:
            return "extended"
        return "host" if self.host else "decomposed"

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def returns_out(self) -> bool:
        return self.kind in (COMPUTE, FACTORY)


def parse_signature(name: str, text: str) -> list[inspect.Parameter]:
    """The parameters of a signature written as ``"(input: Tensor, dim=None)"``.

    Annotations are kept as strings: they name tensor kinds (``Tensor?``), not Python types.
    """
    cached = _PARSED.get(text)
    if cached is not None:
        return list(cached)  # Parameters are immutable: ops with one signature text share them
    params = _parse_plain(text)
    if params is None:  # anything beyond names, annotations and literal defaults: Python parses it
        try:
            namespace: dict[str, Any] = {}
            # dont_inherit: this module's `from __future__ import annotations` would re-quote them.
            exec(compile(f"def _sig{_strip_annotations_to_strings(text)}: pass", "<signature>", "exec",
                         dont_inherit=True), {}, namespace)
        except SyntaxError as exc:
            raise ValueError(f"op {name!r}: invalid signature {text!r}: {exc}") from None
        params = list(inspect.signature(namespace["_sig"]).parameters.values())
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"op {name!r}: *args and **kwargs are not allowed in a signature")
        if p.name == "out":
            raise ValueError(f"op {name!r}: 'out' is added by the dispatcher; do not declare it")
    _PARSED[text] = tuple(params)
    return params


_PARSED: dict[str, tuple[inspect.Parameter, ...]] = {}  # signature text -> its parameters (~360 ops, ~150 texts)


#: One parameter as ops write them: ``name``, ``name: Annotation``, ``name=default``, or both.
_PLAIN_PARAM = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::\s*([A-Za-z_][\w?\[\]]*)\s*)?(?:=\s*(.+?))?\s*")
_DEFAULTS: dict[str, Any] = {}  # default text -> value: ~25 distinct texts among ~1000 parameters


def _parse_plain(text: str) -> list[inspect.Parameter] | None:
    """``text`` parsed without compiling it, when it is a plain signature: parameters with
    optional annotations and literal defaults, one bare ``*``. None for anything else (which
    :func:`parse_signature` hands to Python, with its errors). ~4 µs rather than ~60 µs: ~360
    ops are declared at every import."""
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    inner = text[1:-1]
    pieces = _split_top_level(inner) if inner.strip() else []
    if pieces is None:
        return None
    params: list[inspect.Parameter] = []
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    seen_default = False
    for piece in pieces:
        if piece.strip() == "*":
            if kind is inspect.Parameter.KEYWORD_ONLY:
                return None
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        m = _PLAIN_PARAM.fullmatch(piece)
        if m is None:
            return None
        pname, annotation, default_text = m.groups()
        default: Any = inspect.Parameter.empty
        if default_text is not None:
            default = _literal(default_text)
            if default is _NOT_LITERAL:
                return None
            seen_default = True
        elif seen_default and kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return None  # a parameter without a default after one with: Python's SyntaxError
        try:
            params.append(inspect.Parameter(pname, kind, default=default,
                                            annotation=inspect.Parameter.empty if annotation is None else annotation))
        except ValueError:  # a keyword as a name, a duplicate...: Python says it
            return None
    if kind is inspect.Parameter.KEYWORD_ONLY and (not pieces or pieces[-1].strip() == "*"):
        return None  # a bare `*` must be followed by a parameter
    if len({p.name for p in params}) != len(params):
        return None
    return params


_NOT_LITERAL = object()


def _literal(text: str) -> Any:
    text = text.strip()
    try:
        return _DEFAULTS[text]
    except KeyError:
        pass
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_LITERAL
    if isinstance(value, (list, dict, set)):
        return _NOT_LITERAL  # mutable: cached here, one object would be shared by every op using the text
    _DEFAULTS[text] = value
    return value


def _split_top_level(text: str) -> list[str] | None:
    """``text`` split at the commas outside brackets and strings; None when unbalanced."""
    pieces, depth, start, quote, i = [], 0, 0, "", 0
    for m in _SPLIT_TOKENS.finditer(text):
        tok = m.group()
        i = m.start()
        if quote:
            if tok == quote:
                quote = ""
            continue
        if tok in ("'", '"'):
            quote = tok
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif tok == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
        elif tok == "\\":
            return None  # escapes: leave them to Python
    if depth or quote:
        return None
    last = text[start:]
    if last.strip():
        pieces.append(last)
    elif not pieces:
        return None  # "( , )"
    return pieces  # (a trailing comma, which Python allows, adds no piece)


_SPLIT_TOKENS = re.compile(r"[()\[\]{},'\"\\]")


def _strip_annotations_to_strings(text: str) -> str:
    """Quote each annotation so that ``Tensor?`` and friends parse as Python."""
    out, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == ":" and depth == 1:
            j = i + 1
            while j < len(text) and text[j] not in ",=)":
                j += 1
            out.append(f": {text[i + 1:j].strip()!r}")
            i = j
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        out.append(ch)
        i += 1
    return "".join(out)


def tensor_kind(param: inspect.Parameter) -> str | None:
    """The tensor annotation of a parameter, or None for a plain argument."""
    ann = param.annotation
    return ann if ann in TENSOR_KINDS else None
