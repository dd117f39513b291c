"""Python operators on tensors: arithmetic (reflected and in-place), comparisons, bitwise, unary."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import flambeau as fb


def check(t, values, dtype):
    assert isinstance(t, fb.Tensor)
    assert t.dtype is dtype, (t.dtype, dtype)
    np.testing.assert_allclose(t.numpy().astype(np.float64), np.asarray(values, dtype=np.float64), rtol=1e-6)


def test_binary_float():
    a, b = fb.tensor([1., 2., 3.]), fb.tensor([4., 5., 6.])
    na, nb = a.numpy(), b.numpy()
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
               operator.pow):
        check(op(a, b), op(na, nb), fb.float32)
    assert (a @ b).item() == 32.0 and (a @ b).shape == ()


def test_reflected_with_python_scalars():
    a = fb.tensor([1, 2, 3])
    check(2 - a, [1, 0, -1], fb.int64)
    check(2 * a, [2, 4, 6], fb.int64)
    check(2 + a, [3, 4, 5], fb.int64)
    check(2 / a, [2, 1, 2 / 3], fb.float32)
    check(2 // a, [2, 1, 0], fb.int64)
    check(7 % a, [0, 1, 1], fb.int64)
    check(2 ** a, [2, 4, 8], fb.int64)
    check(2.5 - a, [1.5, 0.5, -0.5], fb.float32)
    check(2.5 ** a, [2.5, 6.25, 15.625], fb.float32)
    check(True + a, [2, 3, 4], fb.int64)
    f = fb.tensor([1., 2.])
    check(2 ** f, [2, 4], fb.float32)
    check(1 - f, [0, -1], fb.float32)
    check(3 % f, [0, 1], fb.float32)
    assert ((1 + 1j) - f).dtype is fb.complex64


def test_matmul_shapes():
    m = fb.tensor([[1., 2.], [3., 4.]])
    assert (m @ m).tolist() == [[7., 10.], [15., 22.]]
    assert (m @ fb.tensor([1., 1.])).tolist() == [3., 7.]
    assert (fb.tensor([1., 1.]) @ m).tolist() == [4., 6.]
    with pytest.raises(TypeError):
        m @ 2


def test_inplace_keeps_identity_and_bumps_version():
    a = fb.tensor([1, 2])
    ident = id(a)
    a += 1
    a -= 1
    a *= 3
    a //= 2
    a %= 5
    a **= 2
    assert id(a) == ident and a.tolist() == [1, 9] and a._version_counter[0] == 6
    f = fb.tensor([1., 2.])
    ident = id(f)
    f += 1
    f /= 2
    assert id(f) == ident and f.tolist() == [1., 1.5]
    m = fb.tensor([True, False])
    m += True
    assert m.tolist() == [True, True]
    h = fb.tensor([1., 2.], dtype=fb.float16)
    h += fb.tensor(1., dtype=fb.float64)
    assert h.dtype is fb.float16


@pytest.mark.parametrize("make, message", [
    (lambda: fb.tensor([1, 2]).__iadd__(1.5), "result type Float can't be cast to the desired output type Long"),
    (lambda: fb.tensor([1, 2]).__itruediv__(2), "result type Float can't be cast to the desired output type Long"),
    (lambda: fb.tensor([1, 2], dtype=fb.int32).__imul__(fb.tensor([1.5, 2.5])),
     "result type Float can't be cast to the desired output type Int"),
    (lambda: fb.tensor([1.]).__iadd__(fb.tensor([1., 2.])),
     "output with shape [1] doesn't match the broadcast shape [2]"),
])
def test_inplace_errors(make, message):
    with pytest.raises(RuntimeError) as info:
        make()
    assert str(info.value) == message


def test_inplace_error_leaves_tensor_unchanged():
    a = fb.tensor([1, 2])
    with pytest.raises(RuntimeError):
        a += 1.5
    assert a.tolist() == [1, 2] and a._version_counter[0] == 0


def test_comparisons():
    a = fb.tensor([1, 2])
    check(a == 1, [True, False], fb.bool)
    check(a != 1, [False, True], fb.bool)
    check(a < 2, [True, False], fb.bool)
    check(a <= 2, [True, True], fb.bool)
    check(a > 1, [False, True], fb.bool)
    check(a >= 1, [True, True], fb.bool)
    check(a == fb.tensor([1, 3]), [True, False], fb.bool)
    check(1 == a, [True, False], fb.bool)
    check(2 > a, [True, False], fb.bool)
    assert (a == "x") is False and (a == None) is False  # noqa: E711 - Python's fallback, as in PyTorch


def test_bitwise_and_shifts():
    a, b = fb.tensor([True, False]), fb.tensor([True, True])
    check(~a, [False, True], fb.bool)
    check(a & b, [True, False], fb.bool)
    check(a | b, [True, True], fb.bool)
    check(a ^ b, [False, True], fb.bool)
    check(a & True, [True, False], fb.bool)
    check(True | a, [True, True], fb.bool)
    i = fb.tensor([5, 3])
    check(~i, [-6, -4], fb.int64)
    check(i & 1, [1, 1], fb.int64)
    check(i | 8, [13, 11], fb.int64)
    check(i ^ 1, [4, 2], fb.int64)
    check(i << 1, [10, 6], fb.int64)
    check(i >> 1, [2, 1], fb.int64)
    check(1 << i, [32, 8], fb.int64)
    check(3 & i, [1, 3], fb.int64)
    check(fb.tensor([1, 2], dtype=fb.uint8) << 2, [4, 8], fb.uint8)
    j = fb.tensor([5, 3])
    j <<= 1
    j >>= 2
    j &= 3
    j |= 4
    j ^= 1
    assert j.tolist() == [7, 4]


@pytest.mark.parametrize("make, error, message", [
    (lambda: fb.tensor([1.5]) & 1, NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"),
    (lambda: fb.tensor([1.5]) << 1, NotImplementedError, "\"lshift_cpu\" not implemented for 'Float'"),
    (lambda: ~fb.tensor([1.5]), TypeError,
     "~ (operator.invert) is only implemented on integer and Boolean-type tensors"),
    (lambda: -fb.tensor([True]), RuntimeError,
     "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
     "`~` or `logical_not()` operator instead."),
    (lambda: fb.tensor([True]) - fb.tensor([True]), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
     "operator instead."),
    (lambda: fb.tensor([True]) - 1, RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use "
     "the `~` or `logical_not()` operator instead."),
    (lambda: fb.tensor([1., 2.]) + fb.tensor([1., 2., 3.]), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda: fb.tensor([2]) ** -1, RuntimeError, "Integers to negative integer powers are not allowed."),
    (lambda: fb.tensor([1, 2]).add(1, alpha=0.5), RuntimeError,
     "For integral input tensors, argument alpha must not be a floating point number."),
    (lambda: fb.tensor([1, 2]) + None, TypeError, None),
    (lambda: fb.tensor([1, 2]) + "a", TypeError, None),
])
def test_operator_errors(make, error, message):
    with pytest.raises(error) as info:
        make()
    if message is not None:
        assert str(info.value) == message


def test_unary():
    check(-fb.tensor([1, -2]), [-1, 2], fb.int64)
    x = fb.tensor([1.])
    assert +x is x
    check(abs(fb.tensor([-1, 2])), [1, 2], fb.int64)
    check(abs(fb.tensor([3 + 4j])), [5.], fb.float32)
    check(-fb.tensor([1.], dtype=fb.float16), [-1.], fb.float16)


def test_integer_division_and_modulo():
    check(fb.tensor([1, 2]) / fb.tensor([2, 3]), [0.5, 2 / 3], fb.float32)
    check(fb.tensor([5, -5]) // 2, [2, -3], fb.int64)  # floor, like Python
    check(fb.tensor([5, -5]) % 3, [2, 1], fb.int64)  # the sign of the divisor
    check(fb.tensor([5., -5.]) % 3, [2., 1.], fb.float32)
    check(fb.tensor([-7]) // fb.tensor([2]), [-4], fb.int64)
    check(fb.tensor([-7]).div(2, rounding_mode="trunc"), [-3], fb.int64)
    check(fb.tensor([1., 2.]).div(3, rounding_mode="floor"), [0., 0.], fb.float32)
    inf = fb.tensor([1., -1., 0.]) / 0
    assert inf[0].item() == np.inf and inf[1].item() == -np.inf and np.isnan(inf[2].item())
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fb.tensor([1, 2]) // 0


def test_alpha_and_methods():
    a = fb.tensor([1., 2.])
    check(a.add(1, alpha=2), [3., 4.], fb.float32)
    check(a.sub(1, alpha=2), [-1., 0.], fb.float32)
    check(fb.add(a, a, alpha=0.5), [1.5, 3.], fb.float32)
    assert a.add_(1) is a and a._version_counter[0] == 1
    x = fb.tensor([1, 0, 2])
    check(x.eq(0), [False, True, False], fb.bool)
    check(x.gt(fb.tensor([0, 0, 1])), [True, False, True], fb.bool)


def test_scalar_does_not_widen():
    r = fb.tensor([1, 2], dtype=fb.int8) * fb.tensor(100)
    assert r.dtype is fb.int8 and r.tolist() == [100, -56]  # wraps like int8 arithmetic
    assert (fb.tensor([1.], dtype=fb.float16) * 100000.).dtype is fb.float16


def test_integer_pow_with_negative_exponent_tensor():
    # only a Python-scalar negative exponent is refused; a tensor of them follows C integer maths
    result = fb.tensor([2, 3, 1, -1, -1, 0]) ** fb.tensor([-1, 2, -5, -3, -2, 3])
    assert result.tolist() == [0, 9, 1, -1, 1, 0] and result.dtype is fb.int64


# -- properties: operators against numpy, in PyTorch's result dtype ---------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NUMERIC = [fb.uint8, fb.int8, fb.int16, fb.int32, fb.int64, fb.float16, fb.float32, fb.float64]
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


@st.composite
def operand_pairs(draw):
    shape_a = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    # b broadcasts against a: drop leading dims and set some to 1
    keep = draw(st.integers(0, len(shape_a)))
    shape_b = tuple(1 if draw(st.booleans()) else s for s in shape_a[len(shape_a) - keep:])
    if draw(st.booleans()):
        shape_a, shape_b = shape_b, shape_a
    dt_a, dt_b = draw(st.sampled_from(NUMERIC)), draw(st.sampled_from(NUMERIC))
    values = st.integers(0, 20)
    a = np.array(draw(st.lists(values, min_size=int(np.prod(shape_a)), max_size=int(np.prod(shape_a)))))
    b = np.array(draw(st.lists(values, min_size=int(np.prod(shape_b)), max_size=int(np.prod(shape_b)))))
    return a.reshape(shape_a), dt_a, b.reshape(shape_b), dt_b, draw(st.sampled_from(sorted(OPERATORS)))


@settings(max_examples=150, deadline=None)
@given(operand_pairs())
def test_tensor_tensor_operators_match_numpy(case):
    a, dt_a, b, dt_b, symbol = case
    ta, tb = fb.tensor(a, dtype=dt_a), fb.tensor(b, dtype=dt_b)
    result = OPERATORS[symbol](ta, tb)
    expected_dtype = fb.result_type(ta, tb)
    if ta.ndim and tb.ndim:
        assert expected_dtype is fb.promote_types(dt_a, dt_b)
    assert result.dtype is expected_dtype and result.shape == np.broadcast_shapes(a.shape, b.shape)
    np_dtype = expected_dtype.numpy_dtype
    with np.errstate(over="ignore"):
        expected = OPERATORS[symbol](a.astype(np_dtype), b.astype(np_dtype))
    np.testing.assert_allclose(result.numpy().astype(np.float64), expected.astype(np.float64), rtol=1e-3)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(NUMERIC), st.sampled_from([2, 3, 2.5, 0.5, True]), st.sampled_from(sorted(OPERATORS)),
       st.booleans())
def test_tensor_scalar_operators_keep_the_tensor_dtype_category(dtype, scalar, symbol, reflected):
    t = fb.tensor([1, 2, 3], dtype=dtype)
    if isinstance(scalar, bool) and symbol == "-":
        return  # bool subtraction is refused (tested above)
    result = OPERATORS[symbol](scalar, t) if reflected else OPERATORS[symbol](t, scalar)
    lifts = isinstance(scalar, float) and not dtype.is_floating_point
    assert result.dtype is (fb.float32 if lifts else dtype)
    values = np.array([1, 2, 3], dtype=np.float64)
    expected = OPERATORS[symbol](float(scalar), values) if reflected else OPERATORS[symbol](values, float(scalar))
    got = result.numpy().astype(np.float64)
    if not result.dtype.is_floating_point:
        expected = expected.astype(np.int64).astype(dtype.numpy_dtype).astype(np.float64)  # wraps like the dtype
    np.testing.assert_allclose(got, expected, rtol=1e-3)
