"""flambeau-nn's formulas load with the first record of their op, not at ``import flambeau``: the
gradient hook registers core-autograd's stand-ins from a generated index (``_formulas/_index.py``)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from flambeau.autograd._formulas import DeferredFormula
from flambeau.autograd.formula import Formula
from flambeau.nn import _formulas
from flambeau.nn._formulas import all_formulas, index_source
from flambeau.ops._registry import GRADIENTS


def test_index_is_up_to_date():
    # Regenerate with `python -m flambeau.nn._formulas` after adding or moving a formula.
    assert Path(_formulas.__file__).with_name("_index.py").read_text(encoding="utf-8") == index_source()


def test_every_formula_is_registered_and_resolves_to_its_family_formula():
    real = all_formulas()
    assert set(real) <= set(GRADIENTS)
    for name, f in real.items():
        registered = GRADIENTS[name]
        if type(registered) is DeferredFormula:
            registered = registered.resolve()
        assert isinstance(registered, Formula), name
        code = lambda fn: getattr(fn, "__code__", fn)  # noqa: E731 - a family may build closures per call
        assert code(registered.fn) is code(f.fn), name


def test_import_flambeau_imports_no_formula_family_until_a_record():
    code = (
        "import sys; import flambeau as fb; import flambeau.nn.functional as F\n"
        "from flambeau.ops._registry import GRADIENTS\n"
        "fam = lambda: sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('flambeau.nn._formulas.')"
        " and not m.endswith('._index'))\n"
        "print(fam(), type(GRADIENTS['nn_linear']).__name__)\n"
        "x = fb.ones(2, 3, requires_grad=True); w = fb.ones(4, 3, requires_grad=True)\n"
        "F.linear(x, w).sum().backward()\n"
        "print(fam(), type(GRADIENTS['nn_linear']).__name__, x.grad.tolist()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.strip().splitlines()[-2:]
    assert before == "[] DeferredFormula"
    assert after == "['linear'] Formula [4.0, 4.0, 4.0]"
