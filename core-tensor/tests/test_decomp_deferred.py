"""The decompositions onto the core tier load at their first call, not at ``import flambeau``: the
core plugin attaches stand-ins read from a generated index (``_core_ops/decomp/_index.py``)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import flambeau as fb
from flambeau._core_ops import decomp
from flambeau._core_ops.decomp import DECOMPOSITIONS, DeferredDecomposition, all_decompositions, index_source
from flambeau.ops._registry import FUNCTIONS, OPS


def test_index_is_up_to_date():
    # Regenerate with `python -m flambeau.ops._write_templates` after adding or moving a decomposition.
    assert Path(decomp.index_path()).read_text(encoding="utf-8") == index_source()


def test_every_decomposition_resolves_to_its_module_composite():
    real = all_decompositions()
    from flambeau._core_ops.decomp._index import DECOMPOSED

    assert set(DECOMPOSED) == set(real)
    for name, (composite, uses, host) in real.items():
        decl = OPS.get(name)
        if decl is None or decl.tier == "core":
            continue
        attached = decl.composite
        if type(attached) is DeferredDecomposition:
            attached = attached.resolve()
        if attached.__name__ != f"{name}_decomposition":  # the op declares its own composite
            continue
        assert attached is composite, name
        assert (decl.uses, decl.host) == (uses, host), name


def test_each_module_registers_the_ops_the_index_gives_it():
    # In a fresh process, importing a module must register every op the index assigns to it (what
    # a stand-in's first call relies on), in the index's own module order.
    code = (
        "import importlib, flambeau\n"
        "from flambeau._core_ops.decomp import DECOMPOSITIONS, MODULES\n"
        "from flambeau._core_ops.decomp._index import DECOMPOSED\n"
        "for m in MODULES:\n"
        "    importlib.import_module('flambeau._core_ops.decomp.' + m)\n"
        "    missing = [n for n, e in DECOMPOSED.items() if e[0] == m and n not in DECOMPOSITIONS]\n"
        "    assert not missing, (m, missing)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "ok"


def test_import_flambeau_imports_no_decomposition_until_one_runs():
    code = (
        "import sys; import flambeau as fb\n"
        "from flambeau.ops._registry import OPS, FUNCTIONS\n"
        "from flambeau.ops._dispatch import _without_kernel\n"
        "mods = lambda: sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith(\n"
        "    'flambeau._core_ops.decomp.') and not m.endswith(('._index', '._util')))\n"
        "print(mods(), type(OPS['erfc'].composite).__name__)\n"
        "x = fb.tensor([0.5, 4.0], dtype=fb.float64)\n"
        "print(fb.erfc(x).tolist() == _without_kernel(OPS['erfc'], x.device, (x,), None, False).tolist())\n"
        "print(mods(), OPS['erfc'].composite.__name__, FUNCTIONS['erfc'].__globals__['_composite'].__name__,\n"
        "      type(OPS['acos'].composite).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, same, after = out.stdout.strip().splitlines()[-3:]
    assert before == "[] DeferredDecomposition"
    assert same == "True"
    # erfc's module (special) only; its stand-ins are replaced, on the declaration and in the op
    # function's namespace; another module's (acos: pointwise) stays deferred.
    assert after == "['special'] erfc_decomposition erfc_decomposition DeferredDecomposition"


def test_a_stand_in_called_directly_computes_the_op():
    stand_in = DeferredDecomposition("sinc", "special")
    x = fb.tensor([0.0, 0.5, 2.0], dtype=fb.float64)
    np.testing.assert_allclose(stand_in(x).numpy(), np.sinc(x.numpy()), rtol=1e-12)
    assert OPS["sinc"].composite is DECOMPOSITIONS["sinc"][0]
    assert FUNCTIONS["sinc"].__globals__["_composite"] is DECOMPOSITIONS["sinc"][0]
