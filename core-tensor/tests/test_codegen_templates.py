"""Generated op functions without an on-disk cache: shared templates (ops/_codegen.instantiate),
precompiled for core-tensor's ops in ops/_templates.py, and op signatures parsed without compile."""
from __future__ import annotations

import dis
import inspect
import keyword
import os
import re
import subprocess
import sys

import flambeau as fb
import pytest
from flambeau.ops import _codegen, _templates, _write_templates
from flambeau.ops._decl import _parse_plain, parse_signature
from flambeau.ops._registry import FUNCTIONS
from flambeau.plugins._discovery import CORE_DISTRIBUTION
from hypothesis import given, settings
from hypothesis import strategies as st


def _ops():
    return sorted(FUNCTIONS.items())


def test_templates_module_is_current():
    # Fails after a declaration or the generator changes: run `python -m flambeau.ops._write_templates`.
    with open(_write_templates.path(), encoding="utf-8") as f:
        assert f.read() == _write_templates.module_text(_write_templates.core_sources()), \
            "flambeau/ops/_templates.py is not current: run `python -m flambeau.ops._write_templates`"


def test_cached_sources_are_what_render_writes():
    # build() reuses the source of an op equal in every field render reads (_render_key): a field
    # render starts reading without joining the key shows here.
    for name, fn in _ops():
        assert _codegen.source_of(fn) == _codegen.render(fn._op, inplace=name != fn._op.name), name


def test_core_ops_use_the_precompiled_templates():
    for name, fn in _ops():
        if fn._op.provider == CORE_DISTRIBUTION:
            assert _codegen.source_of(fn) in _templates.TEMPLATES, name


def _with_real_names(fn) -> str:
    """The op's source as a per-op compile would have written it: real names in place of placeholders."""
    params = fn._op.parameters
    names = {f"_a{i}": p.name for i, p in enumerate(params)}
    text = re.sub(r"\b_a\d+\b", lambda m: names[m.group()], _codegen.source_of(fn))
    text = text.replace(f"def {_codegen._NAME}(", f"def {fn.__name__}(", 1)
    return text.replace(f"'{_codegen._NAME}'", repr(fn.__name__))


@pytest.mark.parametrize("name,fn", _ops(), ids=[n for n, _ in _ops()])
def test_each_op_has_the_code_a_compile_of_its_own_source_gives(name, fn):
    # The per-op path is unchanged: the same instructions on the same values, locals and globals as
    # compiling the op's source written out with its own names. (Constant indices may differ: a
    # compile merges equal constants, such as the op name 'view' and the mode 'view'.)
    module = compile(_with_real_names(fn), "<x>", "exec", dont_inherit=True)
    own = next(c for c in module.co_consts if inspect.iscode(c))
    code = _codegen.compiled(fn).__code__  # other packages' ops compile at their first call
    assert [(i.opname, i.argval) for i in dis.get_instructions(code)] == \
        [(i.opname, i.argval) for i in dis.get_instructions(own)]
    assert len(code.co_code) == len(own.co_code)
    assert code.co_varnames == own.co_varnames
    assert code.co_names == own.co_names
    assert (code.co_name, code.co_argcount, code.co_kwonlyargcount) == (name, own.co_argcount, own.co_kwonlyargcount)


@pytest.mark.parametrize("name,fn", _ops(), ids=[n for n, _ in _ops()])
def test_each_op_has_its_declared_signature(name, fn):
    decl = fn._op
    expected = [p.replace(annotation=p.empty) for p in decl.parameters]
    if decl.returns_out and name == decl.name:  # the functional form; an in-place `name_` has no out=
        expected.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    got = list(inspect.signature(fn).parameters.values())
    assert got == expected


def test_messages_and_keywords_carry_the_real_names():
    with pytest.raises(TypeError, match=r"add\(\): argument 'input' \(position 1\) must be Tensor, not str"):
        fb.add("x", fb.ones(1))
    with pytest.raises(TypeError, match=r"lerp\(\): argument 'end' \(position 2\)"):
        fb.lerp(fb.ones(1), "x", 0.5)
    # number_first re-calls the op with its keyword arguments by their real names
    assert fb.sub(1, fb.ones(2), alpha=3).tolist() == [-2.0, -2.0]
    assert fb.add.__name__ == "add" and fb.add.__code__.co_filename == "<flambeau op add>"


names_st = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and not s.startswith("_a")), min_size=1, max_size=5, unique=True)


@settings(max_examples=60, deadline=None)
@given(names=names_st, n_kw=st.integers(0, 5), data=st.data())
def test_instantiate_renames_parameters_messages_and_keywords(names, n_kw, data):
    n_kw = min(n_kw, len(names))
    pos, kw = names[:len(names) - n_kw], names[len(names) - n_kw:]
    ph = [f"_a{i}" for i in range(len(names))]
    head = ", ".join(ph[:len(pos)] + (["*"] + ph[len(pos):] if kw else []))
    call = ", ".join(ph[:len(pos)] + [f"{p}={p}" for p in ph[len(pos):]])
    source = (f"def _op({head}):\n"
              f"    if _a0 is None: return ('_op', '_a0')\n"
              f"    return _echo({call})\n")
    mapping = dict(zip(ph, names), _op="my_fn")

    def echo(*args, **kwargs):
        return args, kwargs

    fn = _codegen.instantiate(source, mapping, {"_echo": echo})
    values = data.draw(st.lists(st.integers(), min_size=len(names), max_size=len(names)))
    call_kwargs = dict(zip(names, values))
    assert fn(**call_kwargs) == (tuple(values[:len(pos)]), dict(zip(kw, values[len(pos):])))
    assert [p.name for p in inspect.signature(fn).parameters.values()] == names
    assert fn.__name__ == fn.__qualname__ == "my_fn"
    assert fn(**dict(call_kwargs, **{names[0]: None})) == ("my_fn", names[0])


def test_same_shaped_ops_share_one_compile(monkeypatch):
    calls = []
    real = _codegen._compile_one
    monkeypatch.setattr(_codegen, "_compile_one", lambda source: calls.append(source) or real(source))
    source = "def _op(_a0, _a1):\n    return _a0 * 2 + _a1\n"
    f = _codegen.instantiate(source, {"_a0": "x", "_a1": "y", "_op": "f"}, {})
    g = _codegen.instantiate(source, {"_a0": "p", "_a1": "q", "_op": "g"}, {})
    assert len(calls) <= 1 and f(x=1, y=2) == 4 and g(p=3, q=1) == 7 and f.__code__ is not g.__code__


def test_import_compiles_no_op_and_writes_nothing(tmp_path):
    # With bytecode writing off (tox, CI, read-only installs) `import flambeau` compiles no generated
    # function (core-tensor's are precompiled, other packages' ops and the backend's kernel wrappers
    # compile at their first call), and nothing is written next to the package. compile() is
    # watched from before flambeau's first module is imported.
    pkg = os.path.dirname(fb.__file__)
    before = {os.path.join(d, f) for d, _, files in os.walk(pkg) for f in files}
    code = ("import builtins, sys; n = []; real = builtins.compile\n"
            "def watch(source, filename, *a, **k):\n"
            "    n.append(filename); return real(source, filename, *a, **k)\n"
            "builtins.compile = watch; import flambeau as fb; builtins.compile = real\n"
            "from flambeau.ops._registry import FUNCTIONS\n"
            "print(n.count('<generated>'), len(FUNCTIONS), (fb.ones(2) + 1).tolist())")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    compiles, n_functions, result = out.stdout.strip().splitlines()[-1].split(" ", 2)
    assert (compiles, result) == ("0", "[2.0, 2.0]") and int(n_functions) > 400
    after = {os.path.join(d, f) for d, _, files in os.walk(pkg) for f in files}
    assert after - before == set()


def test_a_source_not_precompiled_compiles_at_the_first_call(monkeypatch):
    calls = []
    real = _codegen._compile_one
    monkeypatch.setattr(_codegen, "_compile_one", lambda source: calls.append(source) or real(source))
    source = "def _op(_a0, *, _a1):\n    return ('_a0', _a0 * 3 + _a1)\n"
    namespace: dict = {}
    f = _codegen.instantiate(source, {"_a0": "x", "_a1": "y", "_op": "f"}, namespace, None, {"y": 1}, "<f>")
    assert calls == [] and f.__code__.co_varnames == ("args", "kwargs") and f.__name__ == "f"
    assert _codegen._DEFERRED in namespace
    assert f(2) == ("x", 7) and f(x=1, y=0) == ("x", 3)
    assert calls == [source] and _codegen._DEFERRED not in namespace
    assert f.__code__.co_varnames == ("x", "y") and f.__code__.co_name == "f" and f.__code__.co_filename == "<f>"
    assert str(inspect.signature(f)) == "(x, *, y=1)"
    # Another function of the same source reuses the compile, and `compiled` gives the real code at once.
    g = _codegen.compiled(_codegen.instantiate(source, {"_a0": "p", "_a1": "q", "_op": "g"}, {}, None, {"q": 0}))
    assert g.__code__.co_varnames == ("p", "q") and g(p=1) == ("p", 3) and calls == [source]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        f(1, z=2)


def test_deferred_op_functions_show_their_signature_before_the_first_call():
    from flambeau.ops._decl import OpDecl

    def meta(a, b, input, c, d=0.0, e=1, f=2):
        return [(input.shape, input.dtype)]

    signature = "(a, b, input: Tensor, c, *, d=0.0, e=1, f=2)"  # a shape no other op has
    decl = OpDecl("_test_deferred_sig", signature, meta,
                  composite=lambda a, b, input, c, d=0.0, e=1, f=2: input * a + d)
    assert _codegen.render(decl) not in _codegen._TEMPLATES
    fn = _codegen.build(decl)
    assert fn.__code__.co_varnames == ("args", "kwargs")  # deferred
    assert str(inspect.signature(fn)) == "(a, b, input, c, *, d=0.0, e=1, f=2, out=None)"
    assert fn(2.0, None, fb.ones(2), None, d=1.0).tolist() == [3.0, 3.0]
    assert fn.__code__.co_varnames[:7] == ("a", "b", "input", "c", "d", "e", "f")


def test_a_source_not_rendered_before_is_rendered_at_the_first_call(monkeypatch):
    # Other packages' ops (~70 sources with nn) are neither precompiled nor rendered at import:
    # the source is rendered with the compile, and source_of gives it meanwhile.
    from flambeau.ops._decl import OpDecl

    renders = []
    real = _codegen.render
    monkeypatch.setattr(_codegen, "render", lambda *a: renders.append(a) or real(*a))
    decl = OpDecl("_test_deferred_render", "(a, input: Tensor, *, b=3, c=(1,), d='x')",
                  lambda a, input, b=3, c=(1,), d="x": [(input.shape, input.dtype)],
                  composite=lambda a, input, b=3, c=(1,), d="x": input * a + b)
    fn = _codegen.build(decl)
    assert renders == [] and "_source" not in fn.__dict__
    source = _codegen.source_of(fn)
    assert source == real(decl) and len(renders) == 1
    assert fn(2.0, fb.ones(2)).tolist() == [5.0, 5.0]
    assert fn._source == source and len(renders) == 1  # rendered once, cached by its render key


# -- signatures parsed without compile ----------------------------------------------------------

DEFAULTS = ["None", "False", "True", "0", "-1", "1.0", "1e-05", "(-2, -1)", "()", "'fro'", '"L"', "(0, (1, 2))"]
ANNOTATIONS = ["Tensor", "Tensor?", "TensorOrScalar", "TensorList", "Tensor?[]", "int"]


@st.composite
def signatures(draw):
    names = draw(names_st)
    parts, seen_default = [], False
    star_at = draw(st.integers(0, len(names)))
    for i, n in enumerate(names):
        if i == star_at:  # a bare `*` before parameter i (none when star_at == len(names))
            parts.append("*")
        text = n
        if draw(st.booleans()):
            text += ": " + draw(st.sampled_from(ANNOTATIONS))
        if (seen_default and i < star_at) or draw(st.booleans()):
            text += "=" + draw(st.sampled_from(DEFAULTS))
            seen_default = True
        parts.append(text)
    sep = draw(st.sampled_from([", ", ",", " , "]))
    return "(" + sep.join(parts) + ")"


def _by_compile(text):
    from flambeau.ops._decl import _strip_annotations_to_strings

    ns: dict = {}
    exec(compile(f"def _sig{_strip_annotations_to_strings(text)}: pass", "<s>", "exec", dont_inherit=True), {}, ns)
    return list(inspect.signature(ns["_sig"]).parameters.values())


@settings(max_examples=200, deadline=None)
@given(signatures())
def test_plain_parser_agrees_with_python(text):
    fast = _parse_plain(text)
    assert fast is not None, text
    slow = _by_compile(text)
    assert [(p.name, p.kind, p.default, p.annotation) for p in fast] == \
        [(p.name, p.kind, p.default, p.annotation) for p in slow]


@pytest.mark.parametrize("text", [
    "(a=1, b)", "(a, *)", "(*, *, a)", "(a, a)", "(lambda)", "(a=[1])", "(a=x)", "(a=1+2)", "(a: Tensor = f(1))",
    "(,)", "(a,,b)", "(a=(1, 2)", "(a='x\\'')", "(*args)", "(**kw)", "(a, /, b)", "()", "(a,)", "(a=-1, *, b)",
])
def test_anything_else_goes_to_python_with_its_errors(text):
    # The fast parser answers only what it is sure of; parse_signature then agrees with Python.
    try:
        slow = _by_compile(text)
    except SyntaxError:
        with pytest.raises(ValueError, match="invalid signature"):
            parse_signature("op", text)
        return
    except NameError:  # a default naming something: as before, Python's error
        with pytest.raises(NameError):
            parse_signature("op", text)
        return
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in slow):
        with pytest.raises(ValueError, match=r"\*args"):
            parse_signature("op", text)
        return
    assert [(p.name, p.kind, p.default) for p in parse_signature("op", text)] == \
        [(p.name, p.kind, p.default) for p in slow]
