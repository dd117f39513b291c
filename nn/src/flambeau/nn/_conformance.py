"""Conformance cases for flambeau-nn's ops (entry point ``flambeau.testing: nn``).

The backend conformance kit (``pytest --pyargs flambeau.testing --flambeau-backend NAME``) runs every
declared op against a numpy reference; these are nn's cases, one family per helper function.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _linear_ref(x: Any, w: Any, b: Any = None) -> Any:
    out = x @ w.T
    return out if b is None else out + b


def _linear_samples(dtype: str) -> list[Sample]:
    a = lambda *shape, layout="contiguous": Arg(shape, dtype, layout)  # noqa: E731
    return [
        Sample((a(3, 4), a(5, 4), a(5))),
        Sample((a(2, 3, 4), a(5, 4, layout="transposed"), None), note="3-D input, transposed weight"),
        Sample((a(4), a(5, 4), a(5, layout="sliced")), note="1-D input"),
        Sample((a(3, 4), a(4), a())), Sample((a(0, 4), a(2, 4), a(2)), note="empty batch"),
        Sample((a(3, 0), a(2, 0), a(2)), note="no input features"),
    ]


def _linear_errors() -> list[ErrorCase]:
    f = lambda *shape, dtype="float32": Arg(shape, dtype)  # noqa: E731
    return [
        ErrorCase((f(2, 3), f(5, 4)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        ErrorCase((f(2, 3), f(5, 3, dtype="float64")), RuntimeError, "mat1 and mat2 must have the same dtype"),
        ErrorCase((f(2, 3), f(5, 3), f(4)), RuntimeError, "must match the size of tensor b"),
    ]


def _bilinear_ref(x1: Any, x2: Any, w: Any, b: Any = None) -> Any:
    out = np.einsum("...i,oij,...j->...o", x1, w, x2)
    return out if b is None else out + b


def _bilinear_samples(dtype: str) -> list[Sample]:
    a = lambda *shape, layout="contiguous": Arg(shape, dtype, layout)  # noqa: E731
    return [
        Sample((a(3, 4), a(3, 2), a(5, 4, 2), a(5))),
        Sample((a(2, 3, 4), a(2, 3, 2, layout="sliced"), a(5, 4, 2), None), note="3-D inputs"),
    ]


def _bilinear_errors() -> list[ErrorCase]:
    f = lambda *shape: Arg(shape, "float32")  # noqa: E731
    return [ErrorCase((f(2, 3), f(2, 3), f(1, 4, 3)), RuntimeError,
                      "input1 size does not match weight size: got 3 but expected 4")]


def _linear_cases() -> list[OpCase]:
    tol = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
    return [
        OpCase("nn_linear", _FLOATS, _linear_samples, _linear_ref, lambda s: s.args[0].dtype,
               errors=_linear_errors, tolerances=tol),
        OpCase("nn_bilinear", _FLOATS, _bilinear_samples, _bilinear_ref, lambda s: s.args[0].dtype,
               errors=_bilinear_errors, tolerances={"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1)}),
    ]


def cases() -> list[OpCase]:
    """flambeau-nn's conformance cases (the ``flambeau.testing`` entry point)."""
    return [*_linear_cases()]
