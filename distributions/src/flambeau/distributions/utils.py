"""Helpers shared by the distributions: broadcasting parameters, probabilities and logits, lazy properties."""
from __future__ import annotations

import numbers
from functools import update_wrapper
from typing import Any, Callable

import flambeau as fb

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values: Any) -> tuple:
    """Broadcast tensors and numbers to one shape; numbers become tensors of the tensors' dtype and device
    (the default dtype when every value is a number)."""
    if not all(isinstance(v, (fb.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "flambeau.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, fb.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, fb.Tensor)), None)
        options = {"dtype": like.dtype, "device": like.device} if like is not None \
            else {"dtype": fb.get_default_dtype()}
        values = tuple(v if isinstance(v, fb.Tensor) else fb.tensor(v, **options) for v in values)
    return tuple(fb.broadcast_tensors(*values))


def _standard_normal(shape: Any, dtype: Any, device: Any) -> fb.Tensor:
    return fb.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: fb.Tensor, dim: int) -> fb.Tensor:
    """Sum out the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: fb.Tensor, is_binary: bool = False) -> fb.Tensor:
    """Probabilities from logits: the sigmoid for a binary variable, else the softmax over the last dimension."""
    if is_binary:
        return fb.sigmoid(logits)
    return (logits - logits.logsumexp(dim=-1, keepdim=True)).exp()


def clamp_probs(probs: fb.Tensor) -> fb.Tensor:
    """Clamp probabilities into ``[eps, 1 - eps]`` (eps of their dtype) so that their logs stay finite."""
    eps = fb.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: fb.Tensor, is_binary: bool = False) -> fb.Tensor:
    """Logits from probabilities: log-odds for a binary variable, else the log probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return fb.log(ps_clamped) - fb.log1p(-ps_clamped)
    return fb.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance (computed with grad enabled,
    so that a parameter derived lazily inside ``no_grad`` still keeps its graph)."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with fb.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a ``lazy_property`` looks like on the class: also a property, so that introspection sees one."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: fb.Tensor, diag: int = 0) -> fb.Tensor:
    """The lower triangle (to diagonal ``diag``) of the last two dimensions, read row by row into a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = fb.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def _tril_size(n: int, diag: int) -> int:
    """How many elements the lower triangle of an n x n matrix holds up to diagonal ``diag``."""
    return sum(max(0, min(n, i + diag + 1)) for i in range(n))


def vec_to_tril_matrix(vec: fb.Tensor, diag: int = 0) -> fb.Tensor:
    """The inverse of ``tril_matrix_to_vec``: a vector read row by row into the lower triangle of a matrix."""
    length = vec.shape[-1]
    n = 0
    while _tril_size(n, diag) < length:
        n += 1
    if _tril_size(n, diag) != length:
        raise ValueError(f"The size of last dimension is {length} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    rows, cols = fb.tril_indices(n, n, offset=diag, device=vec.device)
    batch = tuple(vec.shape[:-1])
    flat = fb.zeros(batch + (n * n,), dtype=vec.dtype, device=vec.device)
    index = (rows * n + cols).expand(batch + (length,))
    return flat.scatter(-1, index, vec).reshape(batch + (n, n))


def _softplus(x: fb.Tensor) -> fb.Tensor:
    """``log(1 + exp(x))`` without overflow (``nn.functional.softplus`` with beta 1, minus its threshold)."""
    return x.clamp(min=0) + fb.log1p(fb.exp(-x.abs()))


def _pad_last(x: fb.Tensor, before: int, after: int, value: float) -> fb.Tensor:
    """Pad the last dimension of ``x`` with ``before``/``after`` elements equal to ``value``."""
    parts = []
    batch = tuple(x.shape[:-1])
    if before:
        parts.append(fb.full(batch + (before,), value, dtype=x.dtype, device=x.device))
    parts.append(x)
    if after:
        parts.append(fb.full(batch + (after,), value, dtype=x.dtype, device=x.device))
    return fb.cat(parts, dim=-1)


def _logsigmoid(x: fb.Tensor) -> fb.Tensor:
    return -_softplus(-x)


def _bce_with_logits(logits: fb.Tensor, target: fb.Tensor) -> fb.Tensor:
    """Unreduced binary cross-entropy with logits: ``softplus(logits) - target * logits``."""
    return _softplus(logits) - target * logits


def _one_hot(indices: fb.Tensor, num_classes: int, dtype: Any) -> fb.Tensor:
    return (indices.unsqueeze(-1) == fb.arange(num_classes, device=indices.device)).to(dtype)


def _probs_or_logits(probs: Any, logits: Any) -> None:
    """PyTorch's check that exactly one parameterisation is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _standard_gamma(concentration: fb.Tensor) -> fb.Tensor:
    """Gamma(concentration, 1) draws through the ``dist_standard_gamma`` op (reparameterised)."""
    from flambeau.ops import fn

    return fn.dist_standard_gamma(concentration)


def _dirichlet_sample(concentration: fb.Tensor) -> fb.Tensor:
    """Dirichlet draws as normalised gammas; gradients flow through the gammas' implicit ones."""
    gammas = _standard_gamma(concentration)
    total = gammas.sum(-1, keepdim=True).clamp(min=fb.finfo(gammas.dtype).tiny)
    return (gammas / total).clamp(min=fb.finfo(gammas.dtype).tiny)
