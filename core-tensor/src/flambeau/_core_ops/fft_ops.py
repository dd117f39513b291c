"""Declarations of ``flambeau.fft``: discrete Fourier transforms, their frequencies and shifts.

Primitive ops (with kernels and gradients): ``fft_fft``, ``fft_ifft``, ``fft_rfft``, ``fft_irfft``
and their n-dimensional forms; the 2-D, Hermitian and shift functions are composites of those
(and of ``roll``). Dtypes follow PyTorch: integer and bool inputs become the default complex
dtype, float32 gives complex64, float64 complex128; half precision is refused on the CPU.
"""
from __future__ import annotations

from typing import Any, Sequence

from .. import _dtypes
from .._tensor import Tensor
from ..ops._decl import FACTORY, OpDecl
from ..ops.meta import type_name, wrap_dim
from .shape import result_of

NORMS = (None, "backward", "forward", "ortho")


def _fn(name: str) -> Any:
    from ..ops._registry import FUNCTIONS

    return FUNCTIONS[name]


def check_norm(norm: Any) -> None:
    if norm not in NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def complex_of(d: _dtypes.dtype) -> _dtypes.dtype:
    """The complex dtype a transform of ``d`` gives (integers and bool: the default complex dtype)."""
    if d._category < _dtypes._FLOAT:
        return _dtypes.default_complex_dtype()
    if d.itemsize < 4 or (d._category == _dtypes._COMPLEX and d.itemsize < 8):
        raise RuntimeError(f"Unsupported dtype {type_name(d)}")
    return d.to_complex()


def _check_n(n: Any) -> None:
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _one_dim(input: Tensor, dim: int) -> int:
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, input._data.ndim)


def _with(shape: Sequence[int], dims: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    out = list(shape)
    for d, s in zip(dims, sizes):
        out[d] = s
    return tuple(out)


# -- one dimension ---------------------------------------------------------------------------

def _c2c_meta(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> tuple:
    d = _one_dim(input, dim)
    _check_n(n)
    check_norm(norm)
    size = input._data.shape[d] if n is None else n
    return _with(input._data.shape, (d,), (size,)), complex_of(input._dtype)


def _rfft_meta(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> tuple:
    if input._dtype.is_complex:
        raise RuntimeError(f"rfft expects a real input tensor, but got {type_name(input._dtype)}")
    shape, dt = _c2c_meta(input, n, dim, norm)
    d = wrap_dim(dim, input._data.ndim)
    return _with(shape, (d,), (shape[d] // 2 + 1,)), dt


def irfft_length(m: int, n: Any) -> int:
    out = 2 * (m - 1) if n is None else n
    _check_n(out)
    return out


def _irfft_meta(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> tuple:
    d = _one_dim(input, dim)
    _check_n(n)
    check_norm(norm)
    size = irfft_length(input._data.shape[d], n)
    return _with(input._data.shape, (d,), (size,)), complex_of(input._dtype).to_real()


# -- n dimensions ---------------------------------------------------------------------------

def fft_dims(ndim: int, s: Any, dim: Any) -> tuple[int, ...]:
    """The transformed axes of an n-D transform whose ``s`` and ``dim`` :func:`fft_plan` has checked
    (for kernels: no dim means the last ``len(s)`` axes, or all of them)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        return tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    return tuple(d % ndim for d in dim)


def fft_plan(input: Tensor, s: Any, dim: Any) -> tuple[tuple[int, ...], list[Any]]:
    """The transformed dims and their requested sizes (None: keep the input's), PyTorch's rules."""
    ndim = input._data.ndim
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if s is not None and len(s) > ndim:
        raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
    if dim is None:
        dims = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    sizes: list[Any] = [None] * len(dims) if s is None else [None if v == -1 else v for v in s]
    for v in sizes:
        _check_n(v)
    return dims, sizes


def _c2c_n_meta(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> tuple:
    check_norm(norm)
    dims, sizes = fft_plan(input, s, dim)
    shape = input._data.shape
    return _with(shape, dims, [shape[d] if v is None else v for d, v in zip(dims, sizes)]), complex_of(input._dtype)


def _rfftn_meta(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> tuple:
    if input._dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {type_name(input._dtype)}")
    shape, dt = _c2c_n_meta(input, s, dim, norm)
    dims, _ = fft_plan(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    last = dims[-1]
    return _with(shape, (last,), (shape[last] // 2 + 1,)), dt


def _irfftn_meta(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> tuple:
    check_norm(norm)
    dims, sizes = fft_plan(input, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    shape = input._data.shape
    full = [shape[d] if v is None else v for d, v in zip(dims, sizes)]
    full[-1] = irfft_length(shape[dims[-1]], sizes[-1])
    return _with(shape, dims, full), complex_of(input._dtype).to_real()


# -- composites ---------------------------------------------------------------------------

def dual_norm(norm: Any) -> str:
    """The normalisation of the adjoint transform: 'backward' and 'forward' swap."""
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _fn("fft_fftn")(input, s, dim, norm)


def _ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _fn("fft_ifftn")(input, s, dim, norm)


def _rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _fn("fft_rfftn")(input, s, dim, norm)


def _irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _fn("fft_irfftn")(input, s, dim, norm)


def _hfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    # The transform of a Hermitian-symmetric signal: irfft of the conjugate with the dual scaling.
    check_norm(norm)
    x = input if input._dtype.is_complex else input.to(complex_of(input._dtype))
    return _fn("fft_irfft")(x.conj(), n, dim, dual_norm(norm))


def _ihfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    check_norm(norm)
    if input._dtype.is_complex:
        raise RuntimeError(f"ihfft expects a real input tensor, but got {type_name(input._dtype)}")
    return _fn("fft_rfft")(input, n, dim, dual_norm(norm)).conj_physical()  # a plain tensor, as PyTorch's


def _shift(input: Tensor, dim: Any, inverse: bool) -> Tensor:
    ndim = input._data.ndim
    dims = tuple(range(ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    dims = tuple(wrap_dim(d, ndim) for d in dims)
    sizes = input._data.shape
    shifts = tuple(-(sizes[d] // 2) if inverse else sizes[d] // 2 for d in dims)
    return _fn("roll")(input, shifts, dims)


def _fftshift(input: Tensor, dim: Any = None) -> Tensor:
    return _shift(input, dim, False)


def _ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    return _shift(input, dim, True)


# -- frequencies ---------------------------------------------------------------------------

def _freq_meta(name: str, count: Any) -> Any:
    def meta(n: int, d: float = 1.0, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> tuple:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{name}(): argument 'n' must be int, not {type(n).__name__}")
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
        dt = dtype or _dtypes.get_default_dtype()
        if dt._category != _dtypes._FLOAT:
            raise RuntimeError(f"{name} requires a floating point or complex dtype" if dt._category < _dtypes._FLOAT
                               else f"\"arange_cpu\" not implemented for '{type_name(dt)}'")
        return (count(n),), dt
    meta.__name__ = f"_{name}_meta"
    return meta


_FACTORY_KW = "*, dtype=None, device=None, requires_grad=False"


def declarations() -> list[OpDecl]:
    def prim(name: str, sig: str, meta: Any, doc: str) -> OpDecl:
        return OpDecl(name, sig, meta, method=False, export=False, doc=doc)

    def comp(name: str, sig: str, fn: Any, doc: str, **kw: Any) -> OpDecl:
        return OpDecl(name, sig, result_of(fn), composite=fn, method=False, export=False, doc=doc, **kw)

    one = "(input: Tensor, n=None, dim=-1, norm=None)"
    many = "(input: Tensor, s=None, dim=None, norm=None)"
    two = "(input: Tensor, s=None, dim=(-2, -1), norm=None)"
    return [
        prim("fft_fft", one, _c2c_meta, "The 1-D discrete Fourier transform along ``dim``."),
        prim("fft_ifft", one, _c2c_meta, "The 1-D inverse discrete Fourier transform along ``dim``."),
        prim("fft_rfft", one, _rfft_meta, "The 1-D Fourier transform of a real signal (the non-negative half)."),
        prim("fft_irfft", one, _irfft_meta, "The inverse of :func:`rfft`: a real signal of length ``n``."),
        prim("fft_fftn", many, _c2c_n_meta, "The n-dimensional discrete Fourier transform."),
        prim("fft_ifftn", many, _c2c_n_meta, "The n-dimensional inverse discrete Fourier transform."),
        prim("fft_rfftn", many, _rfftn_meta, "The n-dimensional Fourier transform of a real signal."),
        prim("fft_irfftn", many, _irfftn_meta, "The inverse of :func:`rfftn`."),
        comp("fft_fft2", two, _fft2, "The 2-D discrete Fourier transform over ``dim``."),
        comp("fft_ifft2", two, _ifft2, "The 2-D inverse discrete Fourier transform over ``dim``."),
        comp("fft_rfft2", two, _rfft2, "The 2-D Fourier transform of a real signal."),
        comp("fft_irfft2", two, _irfft2, "The inverse of :func:`rfft2`."),
        comp("fft_hfft", one, _hfft, "The Fourier transform of a Hermitian-symmetric signal (a real result)."),
        comp("fft_ihfft", one, _ihfft, "The inverse of :func:`hfft`: the non-negative half of a Hermitian spectrum."),
        comp("fft_fftshift", "(input: Tensor, dim=None)", _fftshift,
             "The spectrum reordered so that the zero frequency is in the middle."),
        comp("fft_ifftshift", "(input: Tensor, dim=None)", _ifftshift, "The inverse of :func:`fftshift`."),
        OpDecl("fft_fftfreq", f"(n, d=1.0, {_FACTORY_KW})", _freq_meta("fftfreq", lambda n: n), kind=FACTORY,
               method=False, export=False, differentiable=False,
               doc="The sample frequencies of an ``n``-point transform with sample spacing ``d``."),
        OpDecl("fft_rfftfreq", f"(n, d=1.0, {_FACTORY_KW})", _freq_meta("rfftfreq", lambda n: n // 2 + 1),
               kind=FACTORY, method=False, export=False, differentiable=False,
               doc="The non-negative sample frequencies of an ``n``-point real transform."),
    ]
