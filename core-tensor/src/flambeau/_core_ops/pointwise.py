"""Declarations of the rest of PyTorch's pointwise list: fused arithmetic, sign and float
bit manipulation, complex parts, binary math functions (``hypot``, ``logaddexp``, ``xlogy``...).

The special functions (``lgamma``, ``digamma``, Bessel...) are in :mod:`.pointwise_special`.
"""
from __future__ import annotations

from typing import Any

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import COMPUTE, VIEW, OpDecl
from ..ops.meta import (binary_result_type, broadcast, broadcast_shapes, checked_scalar, is_integral, result_type,
                        shape_of, to_float, type_name)


def _not_implemented(name: str, d: _dtypes.dtype) -> NotImplementedError:
    # PyTorch's dtype dispatch (TORCH_CHECK_NOT_IMPLEMENTED) names the kernel and the C++ type.
    return NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(d)}\'')


# -- fused arithmetic ------------------------------------------------------------------

def _addcmul_meta(input: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> tuple:
    dt = input._dtype
    shape = input._data.shape
    if tensor1._dtype is dt and tensor2._dtype is dt and tensor1._data.shape == shape \
            and tensor2._data.shape == shape and dt._category == _dtypes._FLOAT:
        return shape, dt  # the common case (optimizers' updates), without the general promotion
    dt = result_type(input, tensor1, tensor2)
    if dt is _dtypes.bool:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if isinstance(value, float) and is_integral(dt):
        raise RuntimeError("For integral input tensors, argument value must not be a floating point number.")
    checked_scalar(value, dt)  # value must fit an integer result's dtype, as in PyTorch
    return broadcast_shapes(shape_of(input), shape_of(tensor1), shape_of(tensor2)), dt


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
    "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
    "(input + value * flambeau.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
    "implementation: (input + value * tensor1 / tensor2), for all dtypes."
)


def _addcdiv_meta(input: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> tuple:
    if tensor1._dtype._category <= _dtypes._INT and tensor2._dtype._category <= _dtypes._INT:
        raise RuntimeError(_ADDCDIV_INT)
    return _addcmul_meta(input, tensor1, tensor2, value)


def _clamp_bound_meta(name: str):
    def meta(input: Tensor, bound: Any) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex types")
        if bound is None:
            raise TypeError(f"{name}(): argument '{name[-3:]}' must be Number or Tensor, not NoneType")
        dt = binary_result_type(input, bound)
        if dt._category == _dtypes._INT:  # a scalar bound must fit an integer result's dtype, as in PyTorch
            checked_scalar(bound, dt)
        return broadcast(input, bound), dt
    return meta


# -- unary -----------------------------------------------------------------------------

def _same(input: Tensor) -> tuple:
    return input._data.shape, input._dtype


def _sgn_meta(input: Tensor) -> tuple:
    if input._dtype is _dtypes.bool:
        raise RuntimeError('"sgn_cpu" not implemented for \'Bool\'')
    return _same(input)


def _signbit_meta(input: Tensor) -> tuple:
    if input._dtype.is_complex:
        raise RuntimeError("signbit is not implemented for complex tensors.")
    return input._data.shape, _dtypes.bool


def _angle_meta(input: Tensor) -> tuple:
    return input._data.shape, to_float(input._dtype.to_real())


def _real_float_meta(name: str):
    def meta(input: Tensor) -> tuple:
        if input._dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors")
        return input._data.shape, to_float(input._dtype)
    return meta


def _nan_to_num_meta(input: Tensor, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> tuple:
    for arg, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            raise TypeError(f"nan_to_num(): argument '{arg}' must be float, not {type(value).__name__}")
    return _same(input)


def _frexp_meta(input: Tensor) -> list:
    if not input._dtype.is_floating_point:
        raise RuntimeError("flambeau.frexp() only supports floating-point dtypes")
    return [(input._data.shape, input._dtype), (input._data.shape, _dtypes.int32)]


def _logit_meta(input: Tensor, eps: Any = None) -> tuple:
    if eps is not None and (not isinstance(eps, (int, float)) or isinstance(eps, bool)):
        raise TypeError(f"logit(): argument 'eps' must be float, not {type(eps).__name__}")
    return _real_float_meta("logit")(input)


# -- complex parts (views) -------------------------------------------------------------

def _real_meta(input: Tensor) -> None:
    return None


def _imag_meta(input: Tensor) -> None:
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


# -- binary ----------------------------------------------------------------------------

def _float_only_binary(name: str, allow_complex: bool = False):
    """Ops whose CPU kernels exist for floating dtypes only (PyTorch does not promote ints)."""
    def meta(input: Any, other: Any) -> tuple:
        dt = binary_result_type(input, other)
        if not dt.is_floating_point and not (allow_complex and dt.is_complex):
            raise _not_implemented(name, dt)
        return broadcast(input, other), dt
    return meta


def _to_float_binary(name: str):
    """Ops that promote integral operands to the default float dtype (``xlogy``, ``copysign``)."""
    def meta(input: Any, other: Any) -> tuple:
        dt = binary_result_type(input, other)
        if dt.is_complex:
            raise _not_implemented(name, dt)
        return broadcast(input, other), to_float(dt)
    return meta


def _xlogy_meta(input: Any, other: Any) -> tuple:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy(): at least one of 'input' and 'other' must be a Tensor")
    return _to_float_binary("xlogy")(input, other)


def _heaviside_meta(input: Tensor, values: Tensor) -> tuple:
    if input._dtype.is_complex or values._dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return broadcast(input, values), input._dtype


def _int_only_binary(name: str):
    def meta(input: Tensor, other: Tensor) -> tuple:
        dt = binary_result_type(input, other)
        if not is_integral(dt, include_bool=False):
            raise _not_implemented(name, dt)
        return broadcast(input, other), dt
    return meta


def _ldexp_meta(input: Tensor, other: Tensor) -> tuple:
    # ldexp is input * 2.0 ** other: the power is a float tensor of other's dims (an integral
    # exponent gives the default float), which then promotes with input as mul does.
    power = to_float(other._dtype)
    dims, zeros = [], []
    (dims if input._data.ndim else zeros).append(input._dtype)
    (dims if other._data.ndim else zeros).append(power)
    return broadcast(input, other), _dtypes.result_type_of(dims, zeros, [])


def _float_power_meta(input: Any, exponent: Any) -> tuple:
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): at least one of 'input' and 'exponent' must be a Tensor")
    complex_ = any((isinstance(x, Tensor) and x._dtype.is_complex) or isinstance(x, complex)
                   for x in (input, exponent))
    return broadcast(input, exponent), _dtypes.complex128 if complex_ else _dtypes.float64


def declarations() -> list[OpDecl]:
    decls = [
        OpDecl("addcmul", "(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1)", _addcmul_meta,
               inplace=True, doc="``input + value * tensor1 * tensor2``, elementwise, broadcasting."),
        OpDecl("addcdiv", "(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1)", _addcdiv_meta,
               inplace=True, doc="``input + value * tensor1 / tensor2``, elementwise, broadcasting."),
        OpDecl("clamp_min", "(input: Tensor, min: TensorOrScalar)", _clamp_bound_meta("clamp_min"), inplace=True,
               doc="Clamps every element to at least ``min``."),
        OpDecl("clamp_max", "(input: Tensor, max: TensorOrScalar)", _clamp_bound_meta("clamp_max"), inplace=True,
               doc="Clamps every element to at most ``max``."),
        OpDecl("sgn", "(input: Tensor)", _sgn_meta, inplace=True,
               doc="``input / abs(input)`` for complex tensors (0 where 0), ``sign`` for real ones."),
        OpDecl("signbit", "(input: Tensor)", _signbit_meta, differentiable=False,
               doc="Whether each element's sign bit is set (True for -0.0)."),
        OpDecl("angle", "(input: Tensor)", _angle_meta,
               doc="The argument of each element, in radians (0 or pi for real tensors)."),
        OpDecl("conj_physical", "(input: Tensor)", _same, inplace=True,
               doc="The complex conjugate, computed (a copy); the identity for real tensors."),
        OpDecl("deg2rad", "(input: Tensor)", _real_float_meta("deg2rad"), inplace=True,
               doc="Degrees to radians."),
        OpDecl("rad2deg", "(input: Tensor)", _real_float_meta("rad2deg"), inplace=True,
               doc="Radians to degrees."),
        OpDecl("nan_to_num", "(input: Tensor, nan=0.0, posinf=None, neginf=None)", _nan_to_num_meta, inplace=True,
               doc="Replaces NaN, +inf and -inf by ``nan``, ``posinf`` and ``neginf`` (by default 0, the "
                   "dtype's largest and its lowest finite value)."),
        OpDecl("frexp", "(input: Tensor)", _frexp_meta, output_names=("mantissa", "exponent"),
               doc="Splits each element into a mantissa in (-1, 1) and an int32 power of two."),
        OpDecl("logit", "(input: Tensor, eps=None)", _logit_meta, inplace=True,
               doc="``log(p / (1 - p))``, with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given."),
        OpDecl("real", "(input: Tensor)", _real_meta, kind=VIEW,
               doc="The real parts of a complex tensor, as a view (the tensor itself when real)."),
        OpDecl("imag", "(input: Tensor)", _imag_meta, kind=VIEW,
               doc="The imaginary parts of a complex tensor, as a view."),
        OpDecl("copysign", "(input: Tensor, other: TensorOrScalar)", _to_float_binary("copysign"), inplace=True,
               doc="The magnitude of ``input`` with the sign of ``other``."),
        OpDecl("hypot", "(input: Tensor, other: Tensor)", _float_only_binary("hypot"), inplace=True,
               doc="``sqrt(input ** 2 + other ** 2)`` without overflow."),
        OpDecl("logaddexp", "(input: Tensor, other: Tensor)", _float_only_binary("logaddexp"),
               doc="``log(exp(input) + exp(other))``, computed stably."),
        OpDecl("logaddexp2", "(input: Tensor, other: Tensor)", _float_only_binary("logaddexp2"),
               doc="``log2(2 ** input + 2 ** other)``, computed stably."),
        OpDecl("nextafter", "(input: Tensor, other: Tensor)", _float_only_binary("nextafter"), inplace=True,
               differentiable=False, doc="The next representable float after ``input`` towards ``other``."),
        OpDecl("xlogy", "(input: TensorOrScalar, other: TensorOrScalar)", _xlogy_meta, inplace=True,
               doc="``input * log(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN)."),
        OpDecl("heaviside", "(input: Tensor, values: Tensor)", _heaviside_meta, inplace=True, differentiable=False,
               doc="The Heaviside step: 0 below zero, 1 above, ``values`` at zero."),
        OpDecl("gcd", "(input: Tensor, other: Tensor)", _int_only_binary("gcd"), inplace=True, differentiable=False,
               doc="The greatest common divisor (non-negative), elementwise."),
        OpDecl("lcm", "(input: Tensor, other: Tensor)", _int_only_binary("lcm"), inplace=True, differentiable=False,
               doc="The least common multiple (non-negative), elementwise."),
        OpDecl("ldexp", "(input: Tensor, other: Tensor)", _ldexp_meta, inplace=True,
               doc="``input * 2 ** other``."),
        OpDecl("float_power", "(input: TensorOrScalar, exponent: TensorOrScalar)", _float_power_meta, inplace=True,
               doc="``input ** exponent`` computed in double precision (float64 or complex128)."),
    ]
    for decl in decls:  # the one-output compute ops here work element by element
        decl.elementwise = decl.kind == COMPUTE and not decl.output_names
    return decls
