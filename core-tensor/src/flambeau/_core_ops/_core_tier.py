"""The core tier: the ops every backend implements; everything else decomposes onto them.

Chosen so that a vendor writes each in a few lines over an array library: elementwise arithmetic
and a handful of transcendental functions (the rest are formulas over these), comparisons,
``where`` and ``clamp``, bitwise logic (bool masks combine with it), reductions along dims and one scan, two
matrix products, the strided views, copy/fill/cast, a gather and two scatters along a dim, two
random sources, one factory and the one data-dependent op (``nonzero``) that masks need. Host
transfers are the Backend's own methods (``to_numpy``/``from_numpy``), not ops.
"""
from __future__ import annotations

CORE_OPS: tuple[str, ...] = (
    # elementwise arithmetic and math (16)
    "add", "sub", "mul", "div", "neg", "abs", "pow", "exp", "log", "sqrt", "sin", "cos", "atan2", "erf",
    "floor", "round",
    # comparisons and selection (8); ``clamp`` is one pass where a compare-and-select takes two per
    # bound, and maximum/minimum/clamp_min/clamp_max decompose onto it
    "eq", "ne", "lt", "le", "gt", "ge", "where", "clamp",
    # bitwise logic, also on bool (4)
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    # reductions along dims, and the scan (7)
    "sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum",
    # matrix products (2)
    "mm", "bmm",
    # views (13; ``_conj`` flips the conjugate bit: its kernel returns an alias)
    "_conj", "view", "as_strided", "basic_index", "expand", "permute", "transpose", "squeeze", "unsqueeze", "select",
    "unfold", "view_as_real", "view_as_complex",
    # copy, fill, cast (3)
    "copy", "fill", "to_dtype",
    # gather and scatter along a dim (3)
    "gather", "scatter", "scatter_add",
    # random sources (2): uniform floats, and uniform integers (random bits)
    "uniform", "random",
    # a factory, and the data-dependent op masks need (2)
    "arange", "nonzero",
)
