"""Declarations of flambeau-nn's linear ops: ``nn_linear`` (``F.linear``) and ``nn_bilinear`` (``F.bilinear``).

Both are composites of core-tensor's products, so every backend runs them; a backend may register a
kernel under the same name (the backward formulas in ``flambeau.nn._formulas.linear`` then apply).
"""
from __future__ import annotations

from typing import Any

import flambeau
from flambeau import Tensor
from flambeau.ops import OpDecl


def _dtype_name(t: Tensor) -> str:
    from flambeau.ops.meta import type_name

    return type_name(t.dtype)


def _linear_meta(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> tuple:
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if input.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and "
                           f"{weight.ndim}D")
    in_features = weight.shape[-1]
    if input.shape[-1] != in_features:
        rows = _prod(input.shape[:-1])
        if weight.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{input.shape[-1]}), "
                               f"vec ({in_features})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dtype_name(input)} and "
                           f"{_dtype_name(weight)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f'"addmm_impl_cpu_" not implemented for \'{_dtype_name(input)}\'')
    shape = tuple(input.shape[:-1]) + ((weight.shape[0],) if weight.ndim == 2 else ())
    if bias is not None:
        if bias.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {_dtype_name(input)} but found {_dtype_name(bias)}")
        _check_broadcast(bias.shape, shape)
    return shape, input.dtype


def _prod(shape: Any) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _check_broadcast(small: Any, big: tuple) -> None:
    """The bias must broadcast to the output's shape (PyTorch's add error otherwise)."""
    if len(small) > len(big):
        raise RuntimeError(f"The size of tensor a ({small[0]}) must match the size of tensor b "
                           f"({big[0] if big else 1}) at non-singleton dimension 0")
    for i in range(1, len(small) + 1):
        a, b = small[-i], big[-i]
        if a != b and a != 1:
            raise RuntimeError(f"The size of tensor a ({b}) must match the size of tensor b ({a}) at "
                               f"non-singleton dimension {len(big) - i}")


def _linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: one ``addmm`` for a 2-D input, ``matmul`` (+ add) otherwise."""
    wt = weight.t()
    if bias is not None and input.ndim == 2 and weight.ndim == 2:
        return flambeau.addmm(bias, input, wt)
    out = input.matmul(wt)
    return out if bias is None else out + bias


def _bilinear_meta(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> tuple:
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    if input1.ndim == 0:
        raise RuntimeError("bilinear(): inputs must have at least one dimension")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
                           f"{weight.ndim}-D")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        got = bias.shape[0] if bias.ndim else 1
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {got} but expected "
                           f"{weight.shape[0]}")
    for t in (input2, weight) + ((bias,) if bias is not None else ()):
        if t.dtype != input1.dtype:
            raise RuntimeError(f"expected scalar type {_dtype_name(input1)} but found {_dtype_name(t)}")
    if not (input1.dtype.is_floating_point or input1.dtype.is_complex):
        raise RuntimeError(f'"bilinear" not implemented for \'{_dtype_name(input1)}\'')
    return tuple(input1.shape[:-1]) + (weight.shape[0],), input1.dtype


def _bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``: x1 @ W (per o), then · x2."""
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out_f, in1, in2 = weight.shape
    # (n, in1) @ (in1, out*in2) -> (n, out, in2), then contract in2 with x2
    t = x1.mm(weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = t.matmul(x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(tuple(lead) + (out_f,))


def declarations() -> list[OpDecl]:
    return [
        OpDecl("nn_linear", "(input: Tensor, weight: Tensor, bias: Tensor? = None)", _linear_meta,
               composite=_linear, method=False, export=False,
               doc="Affine map ``input @ weight.T + bias`` (flambeau-nn's F.linear)."),
        OpDecl("nn_bilinear", "(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor? = None)",
               _bilinear_meta, composite=_bilinear, method=False, export=False,
               doc="Bilinear map ``x1^T W x2 + b`` (flambeau-nn's F.bilinear)."),
    ]
