"""core-autograd's formulas load with the first record of their op, not at ``import flambeau``:
the gradient hook registers stand-ins from a generated index (``_formulas/_index.py``)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import flambeau as fb
from flambeau.autograd import _formulas
from flambeau.autograd._formulas import DeferredFormula, all_formulas, index_source
from flambeau.autograd.formula import Formula
from flambeau.ops._registry import GRADIENTS


def test_index_is_up_to_date():
    # Regenerate with `python -m flambeau.autograd._formulas` after adding or moving a formula.
    index = Path(_formulas.__file__).with_name("_index.py")
    assert index.read_text(encoding="utf-8") == index_source()


def test_every_formula_is_registered_and_resolves_to_its_family_formula():
    real = all_formulas()
    assert set(real) <= set(GRADIENTS)
    for name, f in real.items():
        registered = GRADIENTS[name]
        if type(registered) is DeferredFormula:
            registered = registered.resolve()
        assert isinstance(registered, Formula)
        code = lambda fn: getattr(fn, "__code__", fn)  # noqa: E731 - some families build closures per call
        assert code(registered.fn) is code(f.fn), name
        assert (registered.save, registered.result, registered.nondiff_outputs) == (f.save, f.result,
                                                                                   f.nondiff_outputs), name


def test_import_flambeau_imports_no_formula_family_until_a_record():
    code = (
        "import sys, math; import flambeau as fb; from flambeau.ops._registry import GRADIENTS\n"
        "fam = lambda: sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('flambeau.autograd._formulas.')"
        " and not m.endswith(('._index', '._helpers', '._scatter')))\n"
        "print(fam(), type(GRADIENTS['mul']).__name__)\n"
        "x = fb.tensor([1.0, 2.0], requires_grad=True); (x * x).sum().backward()\n"
        "print(fam(), type(GRADIENTS['mul']).__name__, type(GRADIENTS['matmul']).__name__, x.grad.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], capture_output=True, text=True,
                         check=True)
    before, after = out.stdout.strip().splitlines()[-2:]
    assert before == "[] DeferredFormula"
    # mul's family (elementwise) and sum's (reductions) only; their formulas replace the stand-ins.
    assert after == "['elementwise', 'reductions'] Formula DeferredFormula [2.0, 4.0]"


def test_a_deferred_formula_called_directly_computes_the_gradient():
    # A program (or another engine) may call a registered formula without going through recording.
    deferred = DeferredFormula("neg", _formulas._index.FAMILY_OF["neg"])
    x = fb.tensor([1.0, -2.0], requires_grad=True)
    y = -x
    grads = deferred(y.grad_fn, fb.tensor([1.0, 3.0]))
    first = grads if isinstance(grads, fb.Tensor) else grads[0]
    assert first.tolist() == [-1.0, -3.0]
