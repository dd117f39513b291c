"""``flambeau.fft``: discrete Fourier transforms with the names and arguments of ``torch.fft``.

``n``/``s`` pad with zeros or trim each transformed dim to that length; ``norm`` is
``"backward"`` (the default: no scaling forward, ``1/n`` inverse), ``"ortho"`` (``1/sqrt(n)`` both
ways) or ``"forward"`` (``1/n`` forward). Real and integer inputs give complex results
(float32 and integers: complex64; float64: complex128).

Example::

    >>> import flambeau as fb
    >>> fb.fft.fft(fb.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..ops._registry import FUNCTIONS

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_ONE_DOC = """{what}

    Args:
        input: the signal.
        n: the transform's length along ``dim`` (the input is zero-padded or trimmed to it).
        dim: the dim to transform.
        norm: ``"backward"`` (default), ``"ortho"`` or ``"forward"``.

    Shape:
        {shape}

    Example::

        >>> fb.fft.{name}(fb.tensor([1.0, 2.0, 3.0, 4.0])).shape
        flambeau.Size([{example}])
    """

_N_DOC = """{what}

    Args:
        input: the signal.
        s: the transform's length along each dim of ``dim`` (-1 keeps the input's).
        dim: the dims to transform ({dims}).
        norm: ``"backward"`` (default), ``"ortho"`` or ``"forward"``.

    Example::

        >>> fb.fft.{name}(fb.ones(4, 4)).shape
        flambeau.Size([{example}])
    """


def _one(name: str, what: str, shape: str, example: str) -> Any:
    op = FUNCTIONS[f"fft_{name}"]

    def transform(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None, *, out: Any = None) -> Tensor:
        # (out= only when given: the generated op's plain call is its fastest path)
        return op(input, n, dim, norm) if out is None else op(input, n, dim, norm, out=out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = _ONE_DOC.format(what=what, shape=shape, name=name, example=example)
    return transform


def _many(name: str, what: str, example: str, two: bool) -> Any:
    op = FUNCTIONS[f"fft_{name}"]
    default = (-2, -1) if two else None

    def transform(input: Tensor, s: Any = None, dim: Any = default, norm: Any = None, *, out: Any = None) -> Tensor:
        return op(input, s, dim, norm) if out is None else op(input, s, dim, norm, out=out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = _N_DOC.format(what=what, name=name, example=example,
                                      dims="the last two by default" if two else "all by default, or the last "
                                      "``len(s)``")
    return transform


_SAME = "the input's, with ``n`` along ``dim``."
fft = _one("fft", "The 1-D discrete Fourier transform.", _SAME, "4")
ifft = _one("ifft", "The 1-D inverse discrete Fourier transform.", _SAME, "4")
rfft = _one("rfft", "The 1-D Fourier transform of a real signal: the ``n // 2 + 1`` non-negative frequencies.",
            "the input's, with ``n // 2 + 1`` along ``dim``.", "3")
irfft = _one("irfft", "The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``).",
             "the input's, with ``n`` along ``dim``.", "6")
hfft = _one("hfft", "The transform of a signal with Hermitian symmetry, given by its first half: a real result.",
            "the input's, with ``n`` (default ``2 * (m - 1)``) along ``dim``.", "6")
ihfft = _one("ihfft", "The inverse of :func:`hfft`: the ``n // 2 + 1`` first values of a real signal's inverse "
             "transform.", "the input's, with ``n // 2 + 1`` along ``dim``.", "3")
fft2 = _many("fft2", "The 2-D discrete Fourier transform.", "4, 4", True)
ifft2 = _many("ifft2", "The 2-D inverse discrete Fourier transform.", "4, 4", True)
rfft2 = _many("rfft2", "The 2-D Fourier transform of a real signal (the last dim halved).", "4, 3", True)
irfft2 = _many("irfft2", "The inverse of :func:`rfft2`.", "4, 6", True)
fftn = _many("fftn", "The n-dimensional discrete Fourier transform.", "4, 4", False)
ifftn = _many("ifftn", "The n-dimensional inverse discrete Fourier transform.", "4, 4", False)
rfftn = _many("rfftn", "The n-dimensional Fourier transform of a real signal (the last dim halved).", "4, 3", False)
irfftn = _many("irfftn", "The inverse of :func:`rfftn`.", "4, 6", False)


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies ``[0, 1, ..., -1] / (d * n)`` of an ``n``-point transform.

    Args:
        n: the transform's length.
        d: the sample spacing.

    Example::

        >>> fb.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return FUNCTIONS["fft_fftfreq"](n, d, dtype=dtype, device=device, requires_grad=requires_grad, out=out)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies ``[0, 1, ..., n // 2] / (d * n)`` of an ``n``-point real transform.

    Example::

        >>> fb.fft.rfftfreq(4)
        tensor([0.0000, 0.2500, 0.5000])
    """
    return FUNCTIONS["fft_rfftfreq"](n, d, dtype=dtype, device=device, requires_grad=requires_grad, out=out)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The spectrum rolled so that the zero frequency sits in the middle of each of ``dim`` (all by default).

    Example::

        >>> fb.fft.fftshift(fb.fft.fftfreq(4))
        tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return FUNCTIONS["fft_fftshift"](input, dim)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift`.

    Example::

        >>> fb.fft.ifftshift(fb.fft.fftshift(fb.arange(5)))
        tensor([0, 1, 2, 3, 4])
    """
    return FUNCTIONS["fft_ifftshift"](input, dim)
