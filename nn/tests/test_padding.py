"""Padding: F.pad in every mode and the padding layers.

References are numpy's ``np.pad`` (``constant``, ``reflect``, ``edge``, ``wrap``) on the positive
pads with the negative pads cropped as PyTorch does (reflect/replicate from the uncropped input's
boundaries, circular from the cropped one). The CPU backend runs the kernels; the composites,
which every other backend runs, are checked against the same references.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.autograd import gradcheck, gradgradcheck
from flambeau.nn._conformance_padding import np_pad
from flambeau.nn._ops import padding as P

RNG = np.random.default_rng(0)


def t(a, dtype=fb.float64, requires_grad=False):
    x = fb.tensor(np.asarray(a), dtype=dtype)
    return x.requires_grad_() if requires_grad else x


def ref_circular(x: np.ndarray, pad) -> np.ndarray:
    """Crop the negative pads, then wrap the rest around (np.pad's ``wrap``)."""
    k = len(pad) // 2
    crop = [slice(None)] * (x.ndim - k)
    for i in reversed(range(k)):
        size = x.shape[x.ndim - 1 - i]
        crop.append(slice(max(-pad[2 * i], 0), size - max(-pad[2 * i + 1], 0)))
    x = x[tuple(crop)]
    widths = [(0, 0)] * (x.ndim - k) + [(max(pad[2 * i], 0), max(pad[2 * i + 1], 0)) for i in reversed(range(k))]
    return np.pad(x, widths, mode="wrap")


def ref(x, pad, mode, value=0):
    return ref_circular(x, pad) if mode == "circular" else np_pad(x, pad, mode, value)


CASES = [
    ((2, 5), (2, 3)),
    ((1, 3, 6), (3, 1)),
    ((2, 3, 6), (-2, 1)),
    ((2, 4, 5), (1, 2, 3, 0)),
    ((1, 2, 4, 5), (2, 1, -1, 3)),
    ((2, 3, 3, 4), (1, 2, 2, 1, 0, 1)),
    ((1, 1, 3, 3, 4), (1, 1, 2, 1, 1, 2)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", CASES)
@pytest.mark.parametrize("dtype", [fb.float32, fb.float64])
def test_pad_matches_numpy(mode, shape, pad, dtype):
    x = RNG.standard_normal(shape)
    got = F.pad(t(x, dtype), pad, mode)
    expected = ref(x, pad, mode)
    assert got.dtype == dtype and tuple(got.shape) == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.astype(got.numpy().dtype), rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", CASES)
def test_pad_composite_matches_kernel(mode, shape, pad):
    x = t(RNG.standard_normal(shape))
    name = "reflection" if mode == "reflect" else "replication"
    decl = {d.name: d for d in P.declarations()}
    composite = decl[f"nn_{name}_pad"].composite(x, pad)
    np.testing.assert_array_equal(composite.numpy(), F.pad(x, pad, mode).numpy())
    g = t(RNG.standard_normal(tuple(composite.shape)))
    got = decl[f"nn_{name}_pad_backward"].composite(g, x, pad)
    kernel = fb.ops.function(f"nn_{name}_pad_backward")(g, x, pad)
    np.testing.assert_allclose(got.numpy(), kernel.numpy(), rtol=1e-12, atol=1e-12)


def test_constant_pad_any_number_of_dims_and_value():
    x = RNG.standard_normal((2, 3, 4, 2, 3))
    pad = (1, 0, 0, 2, 1, 1, -1, 2, 1, 1)
    got = F.pad(t(x), pad, value=2.5)
    np.testing.assert_array_equal(got.numpy(), np_pad(x, pad, "constant", 2.5))
    assert F.pad(t(x), (0, 0)).numpy().tolist() == x.tolist()


@pytest.mark.parametrize("dtype", [fb.int64, fb.uint8, fb.bool, fb.float16, fb.bfloat16])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_other_dtypes(dtype, mode):
    x = RNG.integers(0, 2, (2, 3, 4))
    got = F.pad(t(x, dtype), (1, 2, 2, 1), mode)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.to(fb.float64).numpy(), ref(x.astype(np.float64), (1, 2, 2, 1), mode))


def test_pad_non_contiguous_input():
    x = RNG.standard_normal((4, 3, 5))
    xt = t(x).transpose(0, 2)
    for mode in ("constant", "reflect", "replicate", "circular"):
        np.testing.assert_array_equal(F.pad(xt, (1, 2), mode).numpy(), ref(x.transpose(2, 1, 0), (1, 2), mode))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((2, 5), (2, 3)), ((1, 2, 4, 5), (2, 1, -1, 3)),
                                       ((1, 1, 3, 3, 4), (1, 1, 2, 1, 1, 2)), ((2, 3, 6), (-2, 1))])
def test_pad_gradcheck(mode, shape, pad):
    x = t(RNG.standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda v: F.pad(v, pad, mode), (x,))
    assert gradgradcheck(lambda v: F.pad(v, pad, mode), (x,))


def test_reflect_gradient_sums_reflected_positions():
    x = t([[[1.0, 2.0, 3.0, 4.0]]], requires_grad=True)
    F.pad(x, (2, 3), "reflect").sum().backward()
    # output reads positions 2 1 | 0 1 2 3 | 2 1 0
    assert x.grad.numpy().tolist() == [[[2.0, 3.0, 3.0, 1.0]]]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_pad_property(data):
    k = data.draw(st.integers(1, 3))
    batched = data.draw(st.booleans())
    spatial = [data.draw(st.integers(1, 6)) for _ in range(k)]
    shape = ([2] if batched else []) + [data.draw(st.integers(1, 3))] + spatial
    mode = data.draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    pad = []
    for size in reversed(spatial):
        hi = {"reflect": size - 1, "circular": size}.get(mode, 4)
        for _ in range(2):
            pad.append(data.draw(st.integers(-(size // 2) if mode != "circular" else 0, hi)))
    pad = tuple(pad)
    x = RNG.standard_normal(shape)
    expected = ref(x, pad, mode)
    if 0 in expected.shape:
        return
    np.testing.assert_array_equal(F.pad(t(x), pad, mode).numpy(), expected)


# -- errors -------------------------------------------------------------------------------------------

def test_pad_errors():
    x = t(np.zeros((1, 1, 3)))
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding input dimension, "
                                           r"but got: padding \(3, 3\) at dimension 2 of input \[1, 1, 3\]"):
        F.pad(x, (3, 3), "reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two times the input "
                                           "dimension but got padding length 8 and input of dimension 3"):
        F.pad(x, (1,) * 8)
    with pytest.raises(NotImplementedError, match="Padding size 6 is not supported for 3D input tensor.\n"
                                                  "Supported combinations for non-constant padding:"):
        F.pad(x, (1, 1, 1, 1, 1, 1), "reflect")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input tensor"):
        F.pad(t(np.zeros(4)), (1, 1), "replicate")
    with pytest.raises(RuntimeError, match="Negative padding value is resulting in an empty dimension"):
        F.pad(x, (-3, -1), "circular")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode wrap"):
        F.pad(x, (1, 1), "wrap")
    with pytest.raises(RuntimeError, match='Padding mode "reflect" doesn\'t take in value argument'):
        F.pad(x, (1, 1), "reflect", 2.0)
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once."):
        F.pad(x, (4, 0), "circular")
    with pytest.raises(RuntimeError, match=r"input \(W: 3\) is too small. Calculated output W: 0"):
        F.pad(x, (-2, -1), "replicate")
    with pytest.raises(RuntimeError, match="resulted in a negative output size"):
        F.pad(x, (-2, -2))
    with pytest.raises(TypeError, match="must be tuple of ints"):
        F.pad(x, 1)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        F.pad(x, (1.5, 1))


# -- modules ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,arg,text", [
    (nn.ReflectionPad1d, 2, "ReflectionPad1d((2, 2))"),
    (nn.ReflectionPad2d, (1, 0, 2, 1), "ReflectionPad2d((1, 0, 2, 1))"),
    (nn.ReflectionPad3d, 1, "ReflectionPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.ReplicationPad1d, (1, 3), "ReplicationPad1d((1, 3))"),
    (nn.ReplicationPad2d, 2, "ReplicationPad2d((2, 2, 2, 2))"),
    (nn.ReplicationPad3d, 1, "ReplicationPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.ZeroPad1d, 1, "ZeroPad1d((1, 1))"),
    (nn.ZeroPad2d, (1, 1, 2, 0), "ZeroPad2d((1, 1, 2, 0))"),
    (nn.ZeroPad3d, 2, "ZeroPad3d((2, 2, 2, 2, 2, 2))"),
    (nn.CircularPad1d, 1, "CircularPad1d((1, 1))"),
    (nn.CircularPad2d, (1, 0, 2, 1), "CircularPad2d((1, 0, 2, 1))"),
    (nn.CircularPad3d, 1, "CircularPad3d((1, 1, 1, 1, 1, 1))"),
])
def test_module_repr_and_forward(cls, arg, text):
    m = cls(arg)
    assert repr(m) == text
    assert m.state_dict() == {} or len(m.state_dict()) == 0
    k = len(m.padding) // 2
    x = RNG.standard_normal((2, 3) + (4,) * k)
    mode = {"Reflection": "reflect", "Replication": "replicate", "Zero": "constant", "Circular": "circular"}
    expected = ref(x, m.padding, next(v for key, v in mode.items() if cls.__name__.startswith(key)))
    np.testing.assert_array_equal(m(t(x)).numpy(), expected)


@pytest.mark.parametrize("cls,k", [(nn.ConstantPad1d, 1), (nn.ConstantPad2d, 2), (nn.ConstantPad3d, 3)])
def test_constant_pad_modules(cls, k):
    m = cls(2, 3.5)
    assert repr(m) == f"{cls.__name__}(padding={(2,) * (2 * k)}, value=3.5)"
    assert m.value == 3.5 and m.padding == (2,) * (2 * k)
    x = RNG.standard_normal((3,) + (2,) * k)
    np.testing.assert_array_equal(m(t(x)).numpy(), np_pad(x, m.padding, "constant", 3.5))


def test_circular_module_checks_rank():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(t(np.zeros((3, 3))))


def test_pad_empty_batch_and_empty_dims():
    for mode in ("reflect", "replicate", "circular", "constant"):
        out = F.pad(t(np.zeros((0, 2, 3))), (1, 1), mode)
        assert tuple(out.shape) == (0, 2, 5)
    for mode in ("reflect", "replicate"):
        with pytest.raises(RuntimeError, match=r"non-zero dimensions for input, but got: \[0, 3\]"):
            F.pad(t(np.zeros((0, 3))), (1, 1), mode)
        with pytest.raises(RuntimeError, match=r"non-zero dimensions for input, but got: \[2, 0, 3\]"):
            F.pad(t(np.zeros((2, 0, 3))), (1, 1), mode)
