"""Declarations of core-tensor's pointwise ops: arithmetic, math functions, comparisons."""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import OpDecl
from ..ops.meta import (binary_result_type, broadcast, broadcast_shapes, check_parsable_int, checked_scalar,
                        is_integral, result_type, shape_of, to_float, type_name)

BINARY = "(input: Tensor, other: TensorOrScalar)"


# The fast path of _binary_meta and _add_meta, written out in each (a helper call is a sizeable
# part of a 1-element op): a tensor (``input`` always is one: the op function checked it) with a
# same-shape tensor of its dtype, or with a Python scalar of its category, gives input's shape and
# dtype with nothing to check. An int past PyTorch's parser range, [-2**63, 2**64), with a float or
# complex tensor takes the general path, which raises the parser's OverflowError (an integer
# tensor's kernel raises it as it wraps). A Tensor subclass as ``other``, other dtypes or shapes,
# and alpha take the general path with its errors.
def _binary_meta(input: Tensor, other: Any) -> tuple:
    dt = input._dtype  # the fast path (above)
    t = type(other)
    if t is Tensor:
        if other._dtype is dt:
            shape = input._data.shape
            if other._data.shape == shape:
                return shape, dt
    elif (t is float and dt._category == _dtypes._FLOAT) or (t is int and dt._category >= _dtypes._INT and (
            dt._category == _dtypes._INT or -0x8000000000000000 <= other < 0x10000000000000000)):
        return input._data.shape, dt
    return broadcast(input, other), binary_result_type(input, other)


def _add_meta(input: Tensor, other: Any, alpha: Any = 1) -> tuple:
    if alpha == 1:  # the fast path (above)
        dt = input._dtype
        t = type(other)
        if t is Tensor:
            if other._dtype is dt:
                shape = input._data.shape
                if other._data.shape == shape:
                    return shape, dt
        elif (t is float and dt._category == _dtypes._FLOAT) or (t is int and dt._category >= _dtypes._INT and (
                dt._category == _dtypes._INT or -0x8000000000000000 <= other < 0x10000000000000000)):
            return input._data.shape, dt
    dt = binary_result_type(input, other)
    if alpha != 1:
        if isinstance(alpha, float) and is_integral(dt):
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        if isinstance(alpha, bool) is False and dt is _dtypes.bool and isinstance(alpha, (int, float)):
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        checked_scalar(alpha, dt)  # alpha must fit the result's dtype (the scalar operand wraps)
    return broadcast(input, other), dt


def _sub_meta(input: Any, other: Any, alpha: Any = 1) -> tuple:
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(input) or _is_bool(other):  # a Python scalar counts as a tensor of its dtype, as in PyTorch
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if alpha == 1 or type(alpha) is not int:
        return _add_meta(input, other, alpha)
    # PyTorch subtracts by adding -alpha, so -alpha is what must fit (sub(int8, x, alpha=128) is fine);
    # the other alpha checks are for floats and bools.
    shape, dt = _add_meta(input, other)
    checked_scalar(-alpha, dt)
    return shape, dt


def _is_bool(x: Any) -> bool:
    return (isinstance(x, Tensor) and x._dtype is _dtypes.bool) or isinstance(x, bool)


def _div_meta(input: Any, other: Any, rounding_mode: str | None = None) -> tuple:
    dt = binary_result_type(input, other)
    if rounding_mode is None:
        dt = to_float(dt)
    elif rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    elif dt is _dtypes.bool or dt.is_complex:
        raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for \'{type_name(dt)}\'')
    return broadcast(input, other), dt


def _float_binary_meta(input: Any, other: Any) -> tuple:
    return broadcast(input, other), to_float(binary_result_type(input, other))


_KERNEL_NAMES = {"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}


def _integral_binary_meta(name: str):
    shift = name in _KERNEL_NAMES  # PyTorch shifts integers only; the logical bitwise ops take bool too

    def meta(input: Any, other: Any) -> tuple:
        dt = binary_result_type(input, other)
        if not is_integral(dt, include_bool=not shift):
            raise NotImplementedError(f'"{_KERNEL_NAMES.get(name, name)}_cpu" not implemented for \'{type_name(dt)}\'')
        return broadcast(input, other), dt
    return meta


def _numeric_binary_meta(kernel: str):
    """floor_divide, remainder, fmod: PyTorch has no bool or complex kernels for these."""
    def meta(input: Any, other: Any) -> tuple:
        dt = binary_result_type(input, other)
        if dt is _dtypes.bool or dt.is_complex:
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{type_name(dt)}\'')
        return broadcast(input, other), dt
    return meta


def _real_binary_meta(name: str):
    def meta(input: Any, other: Any) -> tuple:
        dt = binary_result_type(input, other)
        if dt.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return broadcast(input, other), dt
    return meta


def _pow_meta(input: Any, exponent: Any) -> tuple:
    dt = result_type(input, exponent)
    if dt is _dtypes.bool and isinstance(exponent, Tensor):  # a scalar exponent of a bool tensor is allowed
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if is_integral(dt, include_bool=False) and isinstance(exponent, int) and not isinstance(exponent, bool) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if type(exponent) is int and dt._category == _dtypes._INT:
        checked_scalar(exponent, dt)  # a scalar exponent must fit an integer result's dtype, as in PyTorch
    return broadcast(input, exponent), dt


def _compare_meta(input: Tensor, other: Any) -> tuple:
    if type(other) is Tensor:  # same shapes first, as in _binary_meta
        shape = input._data.shape
        if other._data.shape == shape:
            return shape, _dtypes.bool
    elif type(other) is int:
        check_parsable_int(other)
    return broadcast(input, other), _dtypes.bool


def _ordered_compare_meta(input: Tensor, other: Any) -> tuple:
    dt = input._dtype
    if type(other) is Tensor and other._dtype is dt and dt._category != _dtypes._COMPLEX:  # as in _binary_meta
        shape = input._data.shape
        if other._data.shape == shape:
            return shape, _dtypes.bool
    if binary_result_type(input, other).is_complex:
        raise RuntimeError("comparison is not supported for complex tensors")
    return broadcast(input, other), _dtypes.bool


def _unary_same(input: Tensor) -> tuple:
    return input._data.shape, input._dtype


def _unary_float(input: Tensor) -> tuple:
    return input._data.shape, to_float(input._dtype)


def _unary_real_float(name: str):
    def meta(input: Tensor) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors")
        return input._data.shape, to_float(input._dtype)
    return meta


def _unary_no_bool(name: str):
    def meta(input: Tensor) -> tuple:
        if input._dtype is _dtypes.bool:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Bool\'')
        return input._data.shape, input._dtype
    return meta


def _neg_meta(input: Tensor) -> tuple:
    if input._dtype is _dtypes.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return input._data.shape, input._dtype


def _abs_meta(input: Tensor) -> tuple:
    if input._dtype is _dtypes.bool:
        raise RuntimeError('"abs_cpu" not implemented for \'Bool\'')
    return input._data.shape, input._dtype.to_real()


def _rounding_meta(name: str):
    def meta(input: Tensor) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{type_name(input._dtype)}\'')
        if input._dtype is _dtypes.bool:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Bool\'')
        return input._data.shape, input._dtype
    return meta


def _round_meta(input: Tensor, decimals: int = 0) -> tuple:
    if decimals != 0 and is_integral(input._dtype):
        raise RuntimeError('"round_cpu" not implemented for \'' + type_name(input._dtype) + "' with decimals")
    return _rounding_meta("round")(input)


def _bool_out(input: Tensor) -> tuple:
    return input._data.shape, _dtypes.bool


def _bitwise_not_meta(input: Tensor) -> tuple:
    if not is_integral(input._dtype):
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{type_name(input._dtype)}\'')
    return input._data.shape, input._dtype


def _clamp_meta(input: Tensor, min: Any = None, max: Any = None) -> tuple:
    # The fast path (as _binary_meta's): a floating tensor with float bounds keeps its shape and
    # dtype; only the narrower float types check that the bounds fit. The general path below took
    # about two thirds of a 1-element clamp's time, a sixth of a 1M-element one's.
    dt = input._dtype
    if dt._category == _dtypes._FLOAT and (min is None or type(min) is float) and (
            max is None or type(max) is float) and (min is not None or max is not None):
        if dt.itemsize < 8:
            checked_scalar(min, dt)
            checked_scalar(max, dt)
        return input._data.shape, dt
    if min is None and max is None:
        raise RuntimeError("flambeau.clamp: At least one of 'min' or 'max' must not be None")
    if input._dtype.is_complex:
        raise RuntimeError("clamp is not supported for complex types")
    dt = result_type(input, min, max)
    if dt._category <= _dtypes._FLOAT:  # scalar bounds must fit the result's dtype, as in PyTorch
        checked_scalar(min, dt)
        checked_scalar(max, dt)
    return broadcast_shapes(*(shape_of(x) for x in (input, min, max))), dt


def _where_meta(condition: Tensor, input: Any, other: Any) -> tuple:
    if condition._dtype is not _dtypes.bool and condition._dtype is not _dtypes.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{type_name(condition._dtype)}")
    dt = result_type(input, other)
    if dt._category == _dtypes._INT:  # scalar branches must fit an integer result's dtype, as in PyTorch
        checked_scalar(input, dt)
        checked_scalar(other, dt)
    return broadcast_shapes(shape_of(condition), shape_of(input), shape_of(other)), dt


def _lerp_meta(input: Tensor, end: Tensor, weight: Any) -> tuple:
    if input._dtype is not end._dtype:
        raise RuntimeError(f"expected dtype {input._dtype} for `end` but got dtype {end._dtype}")
    return broadcast_shapes(shape_of(input), shape_of(end), shape_of(weight)), input._dtype


def _rounds(input, other, *, rounding_mode=None) -> bool:
    """div casts a 0-d operand to the common dtype only when it rounds (see OpDecl.zero_dim_common)."""
    return rounding_mode is not None


def declarations() -> list[OpDecl]:
    decls = [
        OpDecl("add", "(input: Tensor, other: TensorOrScalar, *, alpha=1)", _add_meta, inplace=True,
               number_first=True,
               doc="Adds ``other``, scaled by ``alpha``, to ``input``: ``out = input + alpha * other``."),
        OpDecl("sub", "(input: Tensor, other: TensorOrScalar, *, alpha=1)", _sub_meta, inplace=True,
               number_first=True,
               doc="Subtracts ``other``, scaled by ``alpha``, from ``input``."),
        OpDecl("mul", BINARY, _binary_meta, inplace=True, number_first=True,
               doc="Multiplies ``input`` by ``other`` elementwise."),
        OpDecl("div", "(input: Tensor, other: TensorOrScalar, *, rounding_mode=None)", _div_meta, inplace=True,
               number_first=True, zero_dim_common=_rounds,
               doc="Divides ``input`` by ``other`` (true division unless ``rounding_mode`` is 'trunc' or 'floor')."),
        OpDecl("floor_divide", BINARY, _numeric_binary_meta("div_floor"), inplace=True, number_first=True,
               zero_dim_common=True, doc="Division rounded down, elementwise."),
        OpDecl("remainder", BINARY, _numeric_binary_meta("remainder"), inplace=True, number_first=True,
               zero_dim_common=True, doc="Python's modulus: the remainder has the sign of the divisor."),
        OpDecl("fmod", BINARY, _numeric_binary_meta("fmod"), inplace=True,
               zero_dim_common=True, doc="C's fmod: the remainder has the sign of the dividend."),
        OpDecl("pow", "(input: Tensor, exponent: TensorOrScalar)", _pow_meta, inplace=True, number_first=True,
               zero_dim_common=True, doc="``input`` raised to the power ``exponent``, elementwise."),
        OpDecl("atan2", BINARY, _float_binary_meta, inplace=True, doc="The angle of the point (other, input)."),
        OpDecl("maximum", "(input: Tensor, other: Tensor)", _real_binary_meta("maximum"),
               zero_dim_common=True, doc="The elementwise maximum (NaN propagates)."),
        OpDecl("minimum", "(input: Tensor, other: Tensor)", _real_binary_meta("minimum"),
               zero_dim_common=True, doc="The elementwise minimum (NaN propagates)."),
        OpDecl("where", "(condition: Tensor, input: TensorOrScalar, other: TensorOrScalar)", _where_meta,
               method=False, doc="Elements of ``input`` where ``condition`` holds, else of ``other``."),
        OpDecl("clamp", "(input: Tensor, min: TensorOrScalar = None, max: TensorOrScalar = None)", _clamp_meta,
               inplace=True, zero_dim_common=True, doc="Clamps every element into [min, max]."),
        OpDecl("lerp", "(input: Tensor, end: Tensor, weight: TensorOrScalar)", _lerp_meta, inplace=True,
               doc="Linear interpolation: ``input + weight * (end - input)``."),
        OpDecl("neg", "(input: Tensor)", _neg_meta, inplace=True, doc="``-input``."),
        OpDecl("abs", "(input: Tensor)", _abs_meta, inplace=True, doc="The absolute value, elementwise."),
        OpDecl("sign", "(input: Tensor)", _unary_no_bool("sign"), inplace=True, doc="-1, 0 or 1 by the sign."),
        OpDecl("reciprocal", "(input: Tensor)", _unary_float, inplace=True, doc="``1 / input``."),
        OpDecl("square", "(input: Tensor)",
               lambda input: (input._data.shape, _dtypes.int64 if input._dtype is _dtypes.bool else input._dtype),
               inplace=True, doc="``input * input``."),
        OpDecl("round", "(input: Tensor, *, decimals=0)", _round_meta, inplace=True,
               doc="Rounds half to even, to ``decimals`` decimal places."),
        OpDecl("logical_not", "(input: Tensor)", _bool_out, inplace=True, differentiable=False,
               doc="Elementwise logical NOT."),
        OpDecl("bitwise_not", "(input: Tensor)", _bitwise_not_meta, inplace=True, differentiable=False,
               doc="Elementwise bitwise NOT (logical NOT for bool)."),
        OpDecl("isnan", "(input: Tensor)", _bool_out, differentiable=False, doc="Where the elements are NaN."),
        OpDecl("isinf", "(input: Tensor)", _bool_out, differentiable=False, doc="Where the elements are ±inf."),
        OpDecl("isfinite", "(input: Tensor)", _bool_out, differentiable=False, doc="Where the elements are finite."),
    ]
    for name in ("floor", "ceil", "trunc", "frac"):
        decls.append(OpDecl(name, "(input: Tensor)", _rounding_meta(name), inplace=True,
                            doc=f"Elementwise {name}."))
    for name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
                 "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid"):
        decls.append(OpDecl(name, "(input: Tensor)", _unary_float, inplace=True, doc=f"Elementwise {name}."))
    for name in ("erf", "erfc"):
        decls.append(OpDecl(name, "(input: Tensor)", _unary_real_float(name), inplace=True, doc=f"Elementwise {name}."))
    for name, meta in (("eq", _compare_meta), ("ne", _compare_meta), ("lt", _ordered_compare_meta),
                       ("le", _ordered_compare_meta), ("gt", _ordered_compare_meta), ("ge", _ordered_compare_meta)):
        # in place (``x.ge_(y)``), the bool result is cast into ``x``'s dtype, as in PyTorch
        decls.append(OpDecl(name, BINARY, meta, inplace=True, differentiable=False, zero_dim_common=True,
                            doc=f"Elementwise comparison ``{name}``; a bool tensor."))
    for name in ("logical_and", "logical_or", "logical_xor"):
        decls.append(OpDecl(name, BINARY, _compare_meta, inplace=True, differentiable=False, zero_dim_common=True,
                            doc=f"Elementwise {name}."))
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
        decls.append(OpDecl(name, BINARY, _integral_binary_meta(name), inplace=True, differentiable=False,
                            number_first=True, doc=f"Elementwise {name} of integral or bool tensors."))
    for decl in decls:  # each output element from the inputs' elements at its index
        decl.elementwise = True
    return decls

