"""Bad arguments handed straight to the C++ kernels raise Python exceptions; they never crash or
touch memory outside the arrays (the dispatcher never passes these, but the checks are the kernels')."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from flambeau_cpu import _C

ADD, EXP, SUM = _C.BINARY_OPS["add"], _C.UNARY_OPS["exp"], _C.REDUCE_OPS["sum"]
f32 = lambda *shape: np.ones(shape, np.float32)  # noqa: E731


@pytest.mark.parametrize("a,b,out", [
    (np.ones(3, np.int64), np.ones(3, np.int64), np.empty(3, np.int64)),       # unsupported dtype
    (f32(3), np.ones(3, np.float64), f32(3)),                                   # mixed dtypes
    (f32(3), f32(3), np.empty(3, np.float64)),                                  # out of another dtype
    (f32(3), f32(3), np.empty(3, np.bool_)),                                    # bool out for arithmetic
    (f32(3), "two", f32(3)),                                                    # not a number
    (f32(3), 1j, f32(3)),                                                       # complex scalar
    (f32(3), f32(3), np.ones(3, ">f4")),                                        # byte-swapped out
])
def test_binary_wrong_types(a, b, out):
    with pytest.raises(TypeError):
        _C.binary(ADD, a, b, out)


@pytest.mark.parametrize("a,b,out", [
    (f32(4), f32(3), f32(4)),        # other does not broadcast
    (f32(3), f32(3), f32(2)),        # out too small
    (f32(2, 3), f32(3), f32(3)),     # out has fewer dims than input
    (f32(5, 3), f32(3), f32(4, 3)),  # input bigger than out
    (f32(3), f32(3), f32()),         # 0-d out for 1-d inputs
])
def test_binary_wrong_shapes(a, b, out):
    with pytest.raises(ValueError, match="broadcast"):
        _C.binary(ADD, a, b, out)


def test_comparison_needs_bool_out():
    with pytest.raises(TypeError):
        _C.binary(_C.BINARY_OPS["lt"], f32(3), f32(3), f32(3))


def test_bad_op_codes():
    with pytest.raises(ValueError):
        _C.binary(99, f32(3), f32(3), f32(3))
    with pytest.raises(ValueError):
        _C.unary(-1, f32(3), f32(3))
    with pytest.raises(ValueError):
        _C.reduce(17, f32(3), f32(), [0], False)


def test_read_only_out():
    out = f32(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _C.binary(ADD, f32(3), f32(3), out)
    with pytest.raises(ValueError, match="read-only"):
        _C.unary(EXP, f32(3), np.broadcast_to(f32(1), (3,)))


def test_views_reaching_outside_their_memory():
    """as_strided can describe memory the array does not own: the kernels refuse to follow it."""
    base = np.zeros(10, np.float32)
    too_far = as_strided(base, shape=(20,), strides=(4,))
    with pytest.raises(ValueError, match="outside"):
        _C.unary(EXP, too_far, np.empty(20, np.float32))
    with pytest.raises(ValueError, match="outside"):
        _C.unary(EXP, np.ones(20, np.float32), as_strided(base[5:], shape=(20,), strides=(4,)))
    backwards = as_strided(base[2:], shape=(5,), strides=(-4,))
    with pytest.raises(ValueError, match="outside"):
        _C.binary(ADD, backwards, 1.0, np.empty(5, np.float32))
    with pytest.raises(ValueError, match="outside"):
        _C.reduce(SUM, too_far, np.empty((), np.float32), [0], False)
    raw = bytearray(16)  # memory owned by a plain buffer object: its length is the bound
    on_bytes = np.frombuffer(raw, np.float32)
    assert _C.unary(EXP, as_strided(on_bytes, shape=(2,), strides=(8,)), np.empty(2, np.float32))
    with pytest.raises(ValueError, match="outside"):
        _C.unary(EXP, np.ones(8, np.float32), as_strided(on_bytes, shape=(8,), strides=(4,)))
    np.testing.assert_array_equal(on_bytes, 0)


def test_unary_wrong_arguments():
    with pytest.raises(TypeError):
        _C.unary(EXP, np.ones(3, np.int32), np.empty(3, np.int32))
    with pytest.raises(TypeError):
        _C.unary(EXP, f32(3), np.empty(3, np.float64))
    with pytest.raises(ValueError):
        _C.unary(EXP, f32(4), f32(3))
    with pytest.raises(TypeError):
        _C.unary(EXP, [1.0, 2.0], f32(2))  # not an array


@pytest.mark.parametrize("x,out,dims,keepdim,error", [
    (f32(3, 4), f32(3), [1], True, ValueError),          # keepdim wants (3, 1)
    (f32(3, 4), f32(4), [1], False, ValueError),         # wrong kept size
    (f32(3, 4), f32(3), [2], False, IndexError),         # dim out of range
    (f32(3, 4), f32(3), [-1], False, IndexError),        # the kernel takes normalised dims only
    (f32(3, 4), f32(), [1, 1], False, ValueError),       # repeated dim
    (f32(3, 4), np.empty(3, np.float64), [1], False, TypeError),
    (np.ones((3, 4), np.int64), np.empty(3, np.int64), [1], False, TypeError),
    (f32(2, 2), f32(), [0, 1], False, None),             # fine
])
def test_reduce_arguments(x, out, dims, keepdim, error):
    if error is None:
        assert _C.reduce(SUM, x, out, dims, keepdim)
        assert out == 4
        return
    with pytest.raises(error):
        _C.reduce(SUM, x, out, dims, keepdim)


def test_reduce_overlapping_out_is_left_to_numpy():
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert _C.reduce(SUM, x, x[:, 0], [1], False) is False


def test_strides_whose_span_overflows():
    base = np.zeros(4, np.float32)
    huge = as_strided(base, shape=(2**40,), strides=(2**30,))
    with pytest.raises(ValueError):
        _C.unary(EXP, huge, huge)
    with pytest.raises(ValueError):
        _C.reduce(SUM, huge, np.empty((), np.float32), [0], False)
