"""Python ints outside an integer tensor's dtype, as PyTorch treats them.

Arithmetic, bitwise and comparison operands wrap around into the tensor's dtype (two's
complement: ``uint8 + 1000`` adds 232, ``int8 < 200`` compares with -56). Values PyTorch stores
(fill values, clamp bounds, ``where``'s scalars, ``alpha``, scalar exponents) go through a checked
conversion instead: RuntimeError when they do not fit, with unsigned dtypes taking ints down to
``-max`` (-1 fills a uint8 with 255). Ints outside ``[-2**63, 2**64)`` are refused by the argument
parser with OverflowError. Expected values come from the arithmetic: the scalar wrapped by hand,
then numpy on in-range operands of the tensor's dtype.
"""
from __future__ import annotations

import operator

import flambeau as fb
import numpy as np
import pytest

INT_DTYPES = [fb.uint8, fb.int8, fb.int16, fb.int32, fb.int64]
C_NAMES = {fb.uint8: "uint8_t", fb.int8: "int8_t", fb.int16: "int16_t", fb.int32: "int", fb.int64: "int64_t"}
NP = {fb.uint8: np.dtype(np.uint8), fb.int8: np.dtype(np.int8), fb.int16: np.dtype(np.int16),
      fb.int32: np.dtype(np.int32), fb.int64: np.dtype(np.int64)}
SCALARS = [1000, -1, 300, 257, -255, 200, 40000, -40000, 2**31, 2**40 + 3, -(2**40), 2**63, 2**64 - 1, -(2**63)]
GRAIN = 32768  # the CPU kernels' small/large threshold (native.GRAIN): both paths are checked


def wrap(value: int, dtype: fb.dtype) -> int:
    """``value`` modulo 2**bits, read back as the dtype reads its bits."""
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def values(dtype: fb.dtype, n: int) -> np.ndarray:
    base = np.array([1, 2, 7, 100, 0, 5], dtype=np.int64) if not dtype.is_signed else \
        np.array([1, -2, 7, -100, 0, 5], dtype=np.int64)
    return np.resize(base, n).astype(NP[dtype])


ARITH = {
    "add": (operator.add, np.add), "sub": (operator.sub, np.subtract), "mul": (operator.mul, np.multiply),
    "and": (operator.and_, np.bitwise_and), "or": (operator.or_, np.bitwise_or), "xor": (operator.xor, np.bitwise_xor),
    "eq": (operator.eq, np.equal), "ne": (operator.ne, np.not_equal), "lt": (operator.lt, np.less),
    "le": (operator.le, np.less_equal), "gt": (operator.gt, np.greater), "ge": (operator.ge, np.greater_equal),
}


@pytest.mark.parametrize("n", [3, GRAIN + 5])
@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_arithmetic_bitwise_and_comparison_operands_wrap(dtype, name, n):
    op, ref = ARITH[name]
    x = values(dtype, n)
    a = fb.from_numpy(x)
    for s in SCALARS:
        got = op(a, s)
        want = ref(x, np.array(wrap(s, dtype), dtype=NP[dtype]))
        assert got.dtype is (fb.bool if want.dtype == np.bool_ else dtype), (name, s)
        assert np.array_equal(got.numpy(), want), (name, s)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_the_examples(dtype):
    u8 = fb.tensor([1, 2], dtype=fb.uint8)
    assert (u8 + 1000).tolist() == [233, 234]  # (1 + 1000) % 256
    assert (u8 + (-1)).tolist() == [0, 1]
    assert (u8 * 300).tolist() == [44, 88]  # 300 % 256 = 44
    assert (fb.tensor([1], dtype=fb.int8) + 200).tolist() == [-55]  # 201 - 256
    assert (u8 == 257).tolist() == [True, False]  # 257 wraps to 1
    assert (fb.tensor([1], dtype=fb.int8) < 200).tolist() == [False]  # 200 wraps to -56
    a = fb.tensor([1, 2], dtype=dtype)
    big = 2**63  # wraps to -2**63 in int64, to 0 in the narrower dtypes
    assert (a < big).tolist() == [False, False]


@pytest.mark.parametrize("n", [3, GRAIN + 5])
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_division_family_wraps_the_divisor(dtype, n):
    x = values(dtype, n)
    a = fb.from_numpy(x)
    for s in (1000, -1000, 300, -3, 40000, 2**40 + 3):
        d = wrap(s, dtype)
        if d == 0:
            continue
        dv = np.array(d, dtype=NP[dtype])
        assert np.array_equal((a // s).numpy(), np.floor_divide(x, dv)), s
        assert np.array_equal((a % s).numpy(), np.remainder(x, dv)), s
        assert np.array_equal(fb.fmod(a, s).numpy(), np.fmod(x, dv)), s
        assert np.array_equal(fb.div(a, s, rounding_mode="floor").numpy(), np.floor_divide(x, dv)), s
        trunc = np.trunc(x.astype(np.float64) / d).astype(NP[dtype])
        assert np.array_equal(fb.div(a, s, rounding_mode="trunc").numpy(), trunc), s
        # true division happens in float: the int is not wrapped
        assert np.allclose(fb.div(a, s).numpy(), x.astype(np.float32) / np.float32(s)), s


@pytest.mark.parametrize("dtype", [fb.uint8, fb.int8, fb.int16, fb.int32], ids=str)
def test_a_divisor_that_wraps_to_zero_divides_by_zero(dtype):
    a = fb.tensor([1, 2], dtype=dtype)
    zero = 1 << (dtype.itemsize * 8)  # 256 for uint8/int8...
    for f in (lambda: a // zero, lambda: a % zero, lambda: fb.fmod(a, zero),
              lambda: fb.div(a, zero, rounding_mode="trunc")):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            f()


def test_shifts_wrap_the_shift():
    assert (fb.tensor([1, 2], dtype=fb.uint8) << 257).tolist() == [2, 4]  # 257 wraps to 1
    assert (fb.tensor([8, 16], dtype=fb.int8) >> 258).tolist() == [2, 4]  # 258 wraps to 2
    assert (fb.tensor([1, 2], dtype=fb.uint8) >> 1000).tolist() == [0, 0]  # 232: past the width


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_in_place_out_and_reflected_forms_wrap(dtype):
    x = values(dtype, 4)
    w = np.array(wrap(1000, dtype), dtype=NP[dtype])
    a = fb.from_numpy(x.copy())
    a += 1000
    assert np.array_equal(a.numpy(), x + w)
    b = fb.from_numpy(x.copy())
    b.mul_(1000)
    assert np.array_equal(b.numpy(), x * w)
    out = fb.empty(4, dtype=dtype)
    fb.sub(fb.from_numpy(x), 1000, out=out)
    assert np.array_equal(out.numpy(), x - w)
    assert np.array_equal((1000 - fb.from_numpy(x)).numpy(), w - x)  # __rsub__
    assert np.array_equal((1000 + fb.from_numpy(x)).numpy(), w + x)
    nonzero = fb.tensor([1, 3], dtype=dtype)
    assert np.array_equal((1000 // nonzero).numpy(), np.floor_divide(w, np.array([1, 3], dtype=NP[dtype])))
    assert np.array_equal((300 ** fb.tensor([1, 2], dtype=dtype)).numpy(),
                          np.power(np.array(wrap(300, dtype), dtype=NP[dtype]),
                                   np.array([1, 2], dtype=NP[dtype])))


def test_bool_tensors_meet_ints_in_int64():
    t = fb.tensor([True, False])
    r = t + 1000
    assert r.dtype is fb.int64 and r.tolist() == [1001, 1000]
    assert (t < 1000).tolist() == [True, True]
    assert (t * -(2**63)).tolist() == [-(2**63), 0]
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        t + 2**63
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        fb.eq(t, 2**64 - 1)


@pytest.mark.parametrize("dtype", INT_DTYPES + [fb.bool], ids=str)
def test_ints_past_the_argument_parser_overflow(dtype):
    a = fb.tensor([1, 0], dtype=dtype)
    with pytest.raises(OverflowError, match="int too big to convert"):
        a + 2**64
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        a * (-(2**63) - 1)
    with pytest.raises(OverflowError, match="int too big to convert"):
        a.clone().fill_(2**64)


# -- checked conversions --------------------------------------------------------------

def _checked(dtype: fb.dtype) -> str:
    return f"value cannot be converted to type {C_NAMES[dtype]} without overflow"


def _too_big(dtype: fb.dtype) -> int:
    return (1 << (dtype.itemsize * 8 - (1 if dtype.is_signed else 0)))  # max + 1


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_stored_values_that_do_not_fit_raise(dtype):
    a = fb.tensor([1, 2, 0], dtype=dtype)
    v = _too_big(dtype)
    cases = {
        "fill_": lambda: a.clone().fill_(v),
        "full": lambda: fb.full((2,), v, dtype=dtype),
        "full_like": lambda: fb.full_like(a, v),
        "new_full": lambda: a.new_full((2,), v),
        "masked_fill": lambda: a.masked_fill(a > 0, v),
        "index_fill": lambda: a.index_fill(0, fb.tensor([0]), v),
        "scatter": lambda: a.scatter(0, fb.tensor([0]), v),
        "setitem": lambda: a.clone().__setitem__(0, v),
        "setitem_mask": lambda: a.clone().__setitem__(a > 0, v),
        "where": lambda: fb.where(a > 0, a, v),
        "where_first": lambda: fb.where(a > 0, v, a),
        "clamp": lambda: fb.clamp(a, 0, v),
        "clamp_min": lambda: fb.clamp(a, min=v),
        "clamp_min_fn": lambda: fb.clamp_min(a, v),
        "clamp_max_fn": lambda: fb.clamp_max(a, v),
        "clamp_": lambda: a.clone().clamp_(max=v),
        "pow": lambda: a ** v,
        "alpha": lambda: fb.add(a, a, alpha=v),
        "sub_alpha": lambda: fb.sub(a, 1, alpha=-v - 1 if dtype.is_signed else v),  # sub adds -alpha, which must fit
        "addcmul": lambda: fb.addcmul(a, a, a, value=v),
        "fill_float": lambda: a.clone().fill_(float(v) * 2),
        "fill_nan": lambda: a.clone().fill_(float("nan")),
    }
    if dtype is fb.int64:
        # -(-2**63 - 1) is past the argument parser; PyTorch's two-scalar clamp promotes 2**63 as uint64
        # and says that instead, and its __setitem__ refuses 2**63 with a ValueError of its own
        del cases["sub_alpha"], cases["clamp"], cases["setitem"], cases["setitem_mask"]
    for name, f in cases.items():
        try:
            f()
        except RuntimeError as e:
            assert _checked(dtype) in str(e), name
        else:
            pytest.fail(f"{name} did not raise")
    assert (a + v).dtype is dtype  # the same int as an operand wraps instead


@pytest.mark.parametrize("dtype", [fb.uint8, fb.int8, fb.int16], ids=str)
def test_negative_ints_below_the_range(dtype):
    a = fb.tensor([1, 2], dtype=dtype)
    # one below the dtype's min, or for unsigned dtypes one below -max (-256 for uint8)
    low = -_too_big(dtype) - 1 if dtype.is_signed else -_too_big(dtype)
    with pytest.raises(RuntimeError, match=_checked(dtype)):
        a.clone().fill_(low)
    with pytest.raises(RuntimeError, match=_checked(dtype)):
        fb.clamp(a, min=low)


def test_unsigned_dtypes_take_negative_ints_down_to_minus_max():
    a = fb.tensor([1, 2, 0], dtype=fb.uint8)
    assert a.clone().fill_(-1).tolist() == [255, 255, 255]
    assert a.clone().fill_(-255).tolist() == [1, 1, 1]
    b = a.clone()
    b[0] = -1
    b[a == 2] = -2
    assert b.tolist() == [255, 254, 0]
    assert fb.full((2,), -1, dtype=fb.uint8).tolist() == [255, 255]
    assert fb.full_like(a, -2).tolist() == [254, 254, 254]
    assert a.new_full((1,), -1).tolist() == [255]
    assert a.masked_fill(a > 0, -1).tolist() == [255, 255, 0]
    assert fb.where(a > 0, a, -1).tolist() == [1, 2, 255]
    assert fb.clamp(a, min=-5).tolist() == [251, 251, 251]  # -5 is 251
    assert fb.clamp(a, -5, 1).tolist() == [1, 1, 1]
    assert fb.clamp(a, max=-5).tolist() == [1, 2, 0]  # min(x, 251)
    assert fb.clamp_max(a, -5).tolist() == [1, 2, 0]
    assert fb.clamp_min(a, -5).tolist() == [251, 251, 251]
    assert a.clone().clamp_(min=-5).tolist() == [251, 251, 251]
    with pytest.raises(RuntimeError, match="uint8_t"):
        a.clone().fill_(-1.0)  # a float must fit as it is


def test_in_range_stored_values_and_bool_tensors():
    i64 = fb.tensor([1, 2])
    assert i64.clone().fill_(2**40).tolist() == [2**40, 2**40]
    assert i64.clone().fill_(1e10).tolist() == [10**10, 10**10]
    assert fb.full((1,), 2**40).tolist() == [2**40]
    assert (i64 ** (2**40)).tolist() == [1, 0]  # fits int64: computed (2 ** 2**40 wraps to 0)
    assert fb.where(i64 > 1, 1000, -1000).tolist() == [-1000, 1000]
    assert fb.clamp(fb.tensor([1, 2], dtype=fb.int16), 0, 1000).tolist() == [1, 2]
    b = fb.tensor([True, False])
    assert b.clone().fill_(2**63).tolist() == [True, True]  # bool takes any number
    assert b.masked_fill(b, 1000).tolist() == [True, False]
    assert fb.clamp(b, max=1000).tolist() == [1, 0]  # int64 result


def test_index_fill_and_scatter_store_in_range_negatives_for_unsigned():
    # In range for PyTorch's checked conversion (down to -255), stored wrapped: -1 -> 255.
    u = fb.zeros(3, dtype=fb.uint8)
    assert u.index_fill(0, fb.tensor([1]), -1).tolist() == [0, 255, 0]
    assert u.scatter(0, fb.tensor([1]), -1).tolist() == [0, 255, 0]
    assert fb.zeros(2, 3, dtype=fb.uint8).scatter(1, fb.tensor([[0], [1]]), -2).tolist() == [[254, 0, 0],
                                                                                             [0, 254, 0]]
