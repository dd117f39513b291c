"""Conformance cases of flambeau-nn's padding (F.pad's modes and the padding layers) ops.

References are numpy's ``np.pad`` (``reflect``, ``edge``, ``constant``) on the positive pads,
followed by a crop for the negative ones (PyTorch indexes reflect/replicate pads from the uncropped
input's boundaries), and ``np.add.at`` for the backward ops.
"""
from __future__ import annotations

import numpy as np

from flambeau.testing import Arg, ErrorCase, OpCase, Sample

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_ALL = _FLOATS + ("int64", "int32", "uint8", "bool")


def np_pad(x: np.ndarray, pad, mode: str, value=0) -> np.ndarray:
    """``F.pad``'s result for reflect/replicate/constant written with ``np.pad``: pad, then crop."""
    k = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - k) + [(max(pad[2 * i], 0), max(pad[2 * i + 1], 0)) for i in reversed(range(k))]
    np_mode = {"reflect": "reflect", "replicate": "edge", "constant": "constant"}[mode]
    extra = {"constant_values": value} if mode == "constant" else {}
    y = np.pad(x, widths, mode=np_mode, **extra)
    crop = [slice(None)] * (x.ndim - k)
    for i in reversed(range(k)):
        left, right = pad[2 * i], pad[2 * i + 1]
        size = y.shape[x.ndim - 1 - i]
        crop.append(slice(max(-left, 0), size - max(-right, 0)))
    return y[tuple(crop)]


def _pad_backward_ref(mode: str):
    def ref(g, x, pad):
        # push the positions of x through the same padding, then add g at the positions read
        index = np.arange(x.size).reshape(x.shape)
        read = np_pad(index, pad, mode)
        out = np.zeros(x.size, dtype=np.float64)
        np.add.at(out, read.ravel(), np.asarray(g, dtype=np.float64).ravel())
        return out.reshape(x.shape)
    return ref


def _constant_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 3), dtype), (1, 2), 0)),
        Sample((Arg((2, 3, 4), dtype, "transposed"), (1, 0, 2, 1, 0, 1), 1), note="three dims, strided"),
        Sample((Arg((3, 5), dtype), (-1, 2, 1, -2), 0), note="negative pads crop"),
        Sample((Arg((4,), dtype, "sliced"), (0, 0), 0), note="no padding"),
        Sample((Arg((2, 2, 3), dtype), (2, 2), 1)),
    ]


def _constant_errors() -> list[ErrorCase]:
    x = Arg((2, 3), "float32")
    return [
        ErrorCase((x, (1, 2, 3), 0), RuntimeError, "Length of pad must be even but instead it equals 3"),
        ErrorCase((x, (1, 1, 1, 1, 1, 1), 0), RuntimeError, "Length of pad should be no more than twice"),
        ErrorCase((x, (-2, -2), 0), RuntimeError, "resulted in a negative output size"),
    ]


def _pad_nd_samples(dtype: str) -> list[Sample]:
    return [
        Sample((Arg((2, 5), dtype), (2, 3))),
        Sample((Arg((2, 3, 6), dtype, "transposed"), (3, 1))),
        Sample((Arg((1, 2, 4, 5), dtype), (2, 1, 3, 0)), note="2-D"),
        Sample((Arg((2, 3, 3, 4), dtype), (1, 2, 2, 1, 0, 1)), note="3-D unbatched"),
        Sample((Arg((1, 1, 3, 3, 4), dtype), (1, 1, 2, 1, 1, 2)), note="3-D"),
        Sample((Arg((2, 6), dtype), (-2, 1)), note="negative pad"),
    ]


def _pad_nd_backward_samples(dtype: str) -> list[Sample]:
    out = []
    for shape, pad in (((2, 5), (2, 3)), ((1, 2, 4, 5), (2, 1, 3, 0)), ((1, 1, 3, 3, 4), (1, 1, 2, 1, 1, 2)),
                       ((2, 6), (-2, 1))):
        x = np.zeros(shape)
        gshape = np_pad(x, pad, "replicate").shape
        out.append(Sample((Arg(gshape, dtype), Arg(shape, dtype), pad)))
    return out


def _pad_nd_errors(reflect: bool):
    def errors() -> list[ErrorCase]:
        cases = [
            ErrorCase((Arg((3,), "float32"), (1, 1)), RuntimeError, "Expected 2D or 3D (batch mode) tensor"),
            ErrorCase((Arg((1, 0, 3), "float32"), (1, 1)), RuntimeError, "non-zero dimensions for input"),
            ErrorCase((Arg((1, 2, 3), "float32"), (1, 1, 1)), RuntimeError, "padding size is expected to be 2, 4"),
            ErrorCase((Arg((1, 1, 3), "float32"), (-2, -1)), RuntimeError,
                      "input (W: 3) is too small. Calculated output W: 0"),
        ]
        if reflect:
            cases.append(ErrorCase((Arg((1, 1, 3), "float32"), (3, 3)), RuntimeError,
                                   "Padding size should be less than the corresponding input dimension, but got: "
                                   "padding (3, 3) at dimension 2 of input [1, 1, 3]"))
        return cases
    return errors


def cases() -> list[OpCase]:
    same = lambda s: s.args[0].dtype  # noqa: E731
    out = [
        OpCase("nn_constant_pad_nd", _ALL, _constant_samples,
               lambda x, pad, value: np_pad(x, pad, "constant", value), same, errors=_constant_errors,
               upcast=False),
    ]
    for mode, name in (("reflect", "reflection"), ("replicate", "replication")):
        out += [
            OpCase(f"nn_{name}_pad", _ALL, _pad_nd_samples, lambda x, pad, m=mode: np_pad(x, pad, m), same,
                   errors=_pad_nd_errors(mode == "reflect"), upcast=False),
            OpCase(f"nn_{name}_pad_backward", _FLOATS, _pad_nd_backward_samples, _pad_backward_ref(mode), same,
                   tolerances={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
        ]
    return out
