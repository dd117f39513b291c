"""Ops, kernels and gradients registered through the pluggy hooks; the primitive-op manifest."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_dists import fake_backend, fake_plugin, install, run_json, run_python

import flambeau as fb


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("ops") / "site", fake_backend(), fake_plugin())


def test_declared_ops_kernels_and_gradients(site):
    out = run_json("""
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import flambeau as fb
        decls = fb.ops.declarations()
        rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
        x = fb.tensor([1.0, -2.0])
        cpu = fb.ops.kernel_table("cpu")
        print(json.dumps({
            "ops": rec.ops, "provider": decls["fake_double"].provider, "status": rec.status,
            "double": fb.ops.fn.fake_double(x).tolist(), "method": x.fake_double().tolist(),
            "not_exported": hasattr(fb, "fake_double"),
            "in_table": sorted(k for k in cpu if k.startswith("fake_")),
            "undeclared_ignored": "fake_undeclared" not in cpu and "fake_undeclared" not in decls,
            "refused": fb.ops._registry.TABLES["cpu"].refused.get("fake_scale", ""),
            "warned": [str(w.message) for w in caught if "fake_scale" in str(w.message)],
            "grad": "fake_double" in fb.ops.gradients(),
            "grad_is": fb.ops.gradients()["fake_double"].__name__,
        }))
    """, site)
    assert out["ops"] == ["fake_double", "fake_triple", "fake_scale", "fake_alias", "fake_noise", "fake_nothing"]
    assert out["provider"] == "flambeau-fakeops" and out["status"] == "loaded"
    assert out["double"] == [2.0, -4.0] and out["method"] == [2.0, -4.0]
    assert out["not_exported"] is False
    assert out["in_table"] == ["fake_alias", "fake_double", "fake_noise", "fake_nothing"]
    assert out["undeclared_ignored"]
    # A kernel whose parameters differ from the declaration is refused at load, with a warning.
    assert "(x, f)" in out["refused"] and "(input, factor)" in out["refused"] and "flambeau-fakeops" in out["refused"]
    assert len(out["warned"]) == 1 and "flambeau-fakeops" in out["warned"][0]
    assert out["grad"] and out["grad_is"] == "double_backward"


def test_refused_kernel_op_without_kernel_says_why(site):
    out = run_json("""
        import json
        import warnings; warnings.simplefilter("ignore")
        import flambeau as fb
        try:
            fb.ops.fn.fake_scale(fb.ones(2))
        except NotImplementedError as exc:
            print(json.dumps(str(exc)))
    """, site)
    assert "fake_scale" in out and "refused" in out and "(x, f)" in out


def test_backend_own_kernel_for_undeclared_op_is_dropped(site):
    out = run_json("""
        import json
        import flambeau as fb
        table = fb.ops.kernel_table("fakedev")
        print(json.dumps(sorted(table)))
    """, site)
    assert "not_an_op_anywhere" not in out
    assert out == ["add", "clone", "copy", "fake_double", "fill", "to_dtype"]


def test_kernel_table_is_frozen():
    table = fb.ops._registry.TABLES["cpu"]
    for write in (lambda: table.__setitem__("add", None), lambda: table.update({}), lambda: table.pop("add"),
                  lambda: table.__delitem__("add"), lambda: table.setdefault("x", 1), table.clear, table.popitem):
        with pytest.raises(TypeError, match="frozen"):
            write()
    assert "add" in table


def test_signature_check():
    from flambeau.ops._registry import kernel_mismatch

    decl = fb.ops.declarations()["add"]
    assert kernel_mismatch(decl, lambda input, other, alpha, out: None) is None
    assert kernel_mismatch(decl, lambda input, other, alpha, **kw: None) is None
    assert kernel_mismatch(decl, lambda *args, **kw: None) is None
    assert "must take the keyword argument 'out'" in kernel_mismatch(decl, lambda input, other, alpha: None)
    assert "(a, b, alpha)" in kernel_mismatch(decl, lambda a, b, alpha, out: None)
    assert "(input, other)" in kernel_mismatch(decl, lambda input, other, out: None)


# -- misbehaving plugins: each is dropped whole, the rest of flambeau goes on -------------

HEADER = '''
import numpy as np
import flambeau
from flambeau.ops import OpDecl
from flambeau.plugins import hookimpl

def _same(input):
    return tuple(input.shape), input.dtype
'''

BAD_PLUGINS = {
    "declare_raises": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    raise ValueError("bad declarations")
''',
    "kernels_raise_after_declaring": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same)]

@hookimpl
def flambeau_register_kernels():
    raise KeyError("no kernels today")
''',
    "gradients_raise": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same)]

@hookimpl
def flambeau_register_gradients():
    raise RuntimeError("formula table broken")
''',
    "duplicates_core_op": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same), OpDecl("add", "(input: Tensor)", _same)]
''',
    "duplicates_core_inplace_name": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same), OpDecl("add_", "(input: Tensor)", _same)]
''',
    "duplicate_within_plugin": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same), OpDecl("fake_half_done", "(input: Tensor)", _same)]
''',
    "not_an_opdecl": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same), "add"]
''',
    "replaces_tensor_method": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same), OpDecl("numel", "(input: Tensor)", _same)]
''',
    "bad_kernel_key": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same)]

@hookimpl
def flambeau_register_kernels():
    return {"fake_half_done": lambda input, out: None}
''',
    "unknown_hook": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", _same)]

@hookimpl
def flambeau_register_kernel():  # a typo: would silently do nothing
    return {}
''',
    "hookimpl_bad_args": HEADER + '''
@hookimpl
def flambeau_declare_ops(registry):
    return []
''',
    "compute_without_meta": HEADER + '''
@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_half_done", "(input: Tensor)", None)]
''',
    "engine_install_raises": HEADER + '''
class Engine:
    def install(self):
        raise RuntimeError("engine install failed")

@hookimpl
def flambeau_autograd_engine():
    return Engine()
''',
}

EXPECT = {
    "declare_raises": "bad declarations", "kernels_raise_after_declaring": "no kernels today",
    "gradients_raise": "formula table broken", "duplicates_core_op": "'add', which flambeau-core-tensor",
    "duplicates_core_inplace_name": "'add_', which flambeau-core-tensor",
    "duplicate_within_plugin": "'fake_half_done', which flambeau-fakeops",
    "not_an_opdecl": "not a flambeau.ops.OpDecl", "replaces_tensor_method": "flambeau.Tensor.numel",
    "bad_kernel_key": "is not (backend name, op name)", "unknown_hook": "flambeau_register_kernel",
    "hookimpl_bad_args": "registry", "compute_without_meta": "needs a meta function",
    "engine_install_raises": "engine install failed",
}


@pytest.mark.parametrize("case", sorted(BAD_PLUGINS))
def test_misbehaving_plugin_is_dropped_whole(tmp_path, case):
    site = install(tmp_path / "site", fake_plugin(source=BAD_PLUGINS[case]))
    out = run_json("""
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import flambeau as fb
        rec = [r for r in fb.plugins.plugins() if r.name == "fakeops"][0]
        x = fb.tensor([1.0, 2.0])
        print(json.dumps({
            "status": rec.status, "reason": rec.reason,
            "w": [str(w.message) for w in caught if issubclass(w.category, fb.plugins.PluginWarning)],
            "half": "fake_half_done" in fb.ops.declarations(),
            "add": fb.add(x, x).tolist(), "numel": x.numel(),
            "engine": type(fb.ops._dispatch.autograd_engine()).__module__,
        }))
    """, site)
    assert out["status"] == "failed", out
    assert EXPECT[case] in out["reason"], out["reason"]
    assert len(out["w"]) == 1 and "flambeau-fakeops 0.2.0" in out["w"][0]
    if case != "engine_install_raises":
        assert out["half"] is False  # nothing of a failed plugin enters the registry
    assert out["add"] == [2.0, 4.0] and out["numel"] == 2  # core ops untouched
    assert out["engine"] != "flambeau_fakeops"


def test_core_wins_whatever_the_plugin_order(tmp_path):
    # A plugin declaring "add" never replaces the core's (core registers first).
    site = install(tmp_path / "site", fake_plugin(source=BAD_PLUGINS["duplicates_core_op"]))
    out = run_json("""
        import json, warnings; warnings.simplefilter("ignore")
        import flambeau as fb
        print(json.dumps([fb.ops.declarations()["add"].provider,
                          [r.status for r in fb.plugins.plugins() if r.name == "core"][0]]))
    """, site)
    assert out == ["flambeau-core-tensor", "loaded"]


SECOND_PLUGIN = HEADER + '''
def other_double(input, out):
    np.multiply(input, 100, out=out)

@hookimpl
def flambeau_declare_ops():
    return [OpDecl("fake_other", "(input: Tensor)", _same)]

@hookimpl
def flambeau_register_kernels():
    return {("cpu", "fake_double"): other_double, ("cpu", "fake_other"): other_double}

@hookimpl
def flambeau_register_gradients():
    return {"fake_double": lambda grad: grad, "fake_other": lambda grad: grad}
'''


def test_conflicting_kernels_and_gradients_first_wins_with_warning(tmp_path):
    site = install(tmp_path / "site", fake_plugin(),
                   fake_plugin(name="zz-second", module="zz_second", ep_name="second", source=SECOND_PLUGIN))
    out = run_json("""
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import flambeau as fb
        x = fb.ones(1)
        print(json.dumps({"w": [str(w.message) for w in caught if "already registers" in str(w.message)],
                          "double": fb.ops.fn.fake_double(x).tolist(), "other": fb.ops.fn.fake_other(x).tolist(),
                          "grad": fb.ops.gradients()["fake_double"].__name__}))
    """, site)
    assert out["double"] == [2.0] and out["other"] == [100.0] and out["grad"] == "double_backward"
    assert len(out["w"]) == 2 and all("zz-second" in w and "flambeau-fakeops" in w for w in out["w"])


# -- the primitive-op manifest --------------------------------------------------------------

def test_manifest_lists_primitive_ops_only():
    m = fb.ops.manifest()
    assert m["core_api_version"] == fb.plugins.CORE_API_VERSION
    decls = fb.ops.declarations()
    composites = {n for n, d in decls.items() if d.composite is not None}
    assert composites and not composites & set(m["primitive_ops"])  # e.g. reshape, flatten
    assert {"reshape", "flatten"} <= composites
    assert set(m["primitive_ops"]) == set(decls) - composites
    add = m["primitive_ops"]["add"]
    assert add == {"signature": decls["add"].signature, "kind": "compute", "declared_by": "flambeau-core-tensor"}


def test_manifest_command_includes_plugin_primitives(site):
    proc = run_python("", site, args=("-m", "flambeau", "manifest"))
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)
    assert m["core_api_version"] == fb.plugins.CORE_API_VERSION
    assert "fake_double" in m["primitive_ops"]
    assert m["primitive_ops"]["fake_double"]["declared_by"] == "flambeau-fakeops"
    assert "fake_triple" not in m["primitive_ops"]  # a composite
    assert "add" in m["primitive_ops"] and "reshape" not in m["primitive_ops"]


ENGINE_PLUGIN = HEADER + '''
class Engine:
    installed = 0

    def install(self):
        Engine.installed += 1

@hookimpl
def flambeau_autograd_engine():
    return Engine()
'''


def test_autograd_engine_from_hook_fills_the_slot_once(tmp_path):
    site = install(tmp_path / "site", fake_plugin(source=ENGINE_PLUGIN),
                   fake_plugin(name="zz-engine", module="zz_engine", ep_name="zzengine", source=ENGINE_PLUGIN))
    out = run_json("""
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import flambeau as fb
        import flambeau_fakeops, zz_engine
        engine = fb.ops._dispatch.autograd_engine()
        print(json.dumps([type(engine).__module__, flambeau_fakeops.Engine.installed, zz_engine.Engine.installed,
                          [str(w.message) for w in caught if "autograd engine" in str(w.message)]]))
    """, site)
    module, installed, other_installed, warned = out
    assert module == "flambeau_fakeops" and installed == 1 and other_installed == 0
    assert len(warned) == 1 and "zz-engine" in warned[0] and "flambeau-fakeops" in warned[0]


OVERRIDE_PLUGIN = HEADER + '''
CALLS = []

def flatten_cpu(input, start_dim, end_dim):
    CALLS.append(input.shape)
    return input.reshape(-1)

@hookimpl
def flambeau_register_kernels():
    # core-tensor declares flatten as a composite view without a meta function
    return {("cpu", "flatten"): flatten_cpu}
'''


def test_backend_kernel_overrides_a_composite_declared_without_meta(tmp_path):
    site = install(tmp_path / "site", fake_plugin(source=OVERRIDE_PLUGIN))
    out = run_json("""
        import json
        import flambeau as fb, flambeau_fakeops
        x = fb.ones(2, 3)
        y = fb.flatten(x)
        print(json.dumps([list(y.shape), flambeau_fakeops.CALLS, y._base is x,
                          "flatten" in fb.ops.manifest()["primitive_ops"]]))
    """, site)
    assert out == [[6], [[2, 3]], True, False]
