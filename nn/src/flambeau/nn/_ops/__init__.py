"""The ops flambeau-nn declares, one module per family of layers, each with ``declarations()``.

An op's declaration lives here, its backward formula in ``flambeau.nn._formulas`` under the same
module name, and a backend's kernel in that backend (the CPU backend's in
``flambeau_cpu/kernels/nn_<family>.py``). The functional forms in ``flambeau.nn.functional`` call the
ops through ``flambeau.ops.function``; the modules call the functional forms.
"""
