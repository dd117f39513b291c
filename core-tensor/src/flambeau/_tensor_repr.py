"""``repr(tensor)`` exactly as PyTorch prints it.

One formatter per tensor (two for complex: real and imaginary parts) picks a style and a width
from the values that will be shown: integers as they are; floats that are all integral as
``1.``; others with ``precision`` decimals; scientific notation when the nonzero finite values
span more than three orders of magnitude, exceed 1e8, or go below 1e-4. Tensors with more than
``threshold`` elements show only ``edgeitems`` at each end of every dim.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from . import _dtypes

__all__ = ["set_printoptions", "get_printoptions", "tensor_repr"]


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: tensors with more elements than this are summarised (default 1000).
        edgeitems: elements shown at each end of a summarised dim (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``: a preset, overridden by the other arguments.
        sci_mode: True or False forces scientific notation on or off; None (the default) chooses.

    Example::

        >>> fb.set_printoptions(precision=2)
        >>> fb.tensor([1.2345])
        tensor([1.23])
        >>> fb.set_printoptions(profile="default")
    """
    if profile is not None:
        presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}
        if profile not in presets:
            raise ValueError(f"unknown print profile {profile!r}: expected 'default', 'short' or 'full'")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode  # as PyTorch: not passing it resets it to automatic


def get_printoptions() -> dict[str, Any]:
    """The current print options, as a dict of :func:`set_printoptions`'s arguments."""
    return asdict(PRINT_OPTS)


class _Formatter:
    """One style and width for every element of a tensor (PyTorch's ``_Formatter``)."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        precision = PRINT_OPTS.precision
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)]
            if finite.size == 0:  # nothing to measure: zeros and non-finite values keep width 1
                return
            magnitudes = np.abs(finite).astype(np.float64)
            low, high = float(magnitudes.min()), float(magnitudes.max())
            values_list = finite.tolist()
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if PRINT_OPTS.sci_mode is None:
                self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
            else:
                self.sci_mode = PRINT_OPTS.sci_mode
            if self.sci_mode:
                self.max_width = max(len(f"{v:.{precision}e}") for v in values_list)
            elif self.int_mode:
                # integral floats print as "1." : one more character for the point
                self.max_width = max(len(f"{v:.0f}") + 1 for v in values_list)
            else:
                self.max_width = max(len(f"{v:.{precision}f}") for v in values_list)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = str(value)
        return (self.max_width - len(text)) * " " + text


def _summarized(array: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: ``edgeitems`` at each end of every dim."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        return np.concatenate((array[:edge], array[-edge:])) if array.shape[0] > 2 * edge else array
    if not edge:
        return array[(slice(0, 0),) * array.ndim]
    rows = range(array.shape[0])
    if array.shape[0] > 2 * edge:
        rows = [*range(edge), *range(array.shape[0] - edge, array.shape[0])]
    return np.stack([_summarized(array[i]) for i in rows])


def _complex_join(real: str, imag: str) -> str:
    imag = (imag + "j").lstrip()
    # the imaginary part's own sign (negative numbers, -0.) stands in for the "+"
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _element_formatter(fmt1: _Formatter, fmt2: _Formatter | None) -> Callable[[Any], str]:
    if fmt2 is None:
        return fmt1.format
    return lambda v: _complex_join(fmt1.format(v.real), fmt2.format(v.imag))


def _vector_str(array: np.ndarray, indent: int, summarize: bool, fmt1: _Formatter, fmt2: _Formatter | None) -> str:
    element_length = fmt1.width() + 2
    if fmt2 is not None:
        element_length += fmt2.width() + 1  # the imaginary part and its "j"
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    element = _element_formatter(fmt1, fmt2)
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        data = ([element(v) for v in array[:edge].tolist()] + [" ..."]
                + [element(v) for v in array[-edge:].tolist()])
    else:
        data = [element(v) for v in array.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(array: np.ndarray, indent: int, summarize: bool, fmt1: _Formatter,
                               fmt2: _Formatter | None) -> str:
    ndim = array.ndim
    if ndim == 0:
        return _element_formatter(fmt1, fmt2)(array.item())
    if ndim == 1:
        return _vector_str(array, indent, summarize, fmt1, fmt2)
    edge = PRINT_OPTS.edgeitems
    if summarize and array.shape[0] > 2 * edge:
        parts = ([_tensor_str_with_formatter(array[i], indent + 1, summarize, fmt1, fmt2) for i in range(edge)]
                 + ["..."]
                 + [_tensor_str_with_formatter(array[i], indent + 1, summarize, fmt1, fmt2)
                    for i in range(array.shape[0] - edge, array.shape[0])])
    else:
        parts = [_tensor_str_with_formatter(array[i], indent + 1, summarize, fmt1, fmt2)
                 for i in range(array.shape[0])]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_data(array: np.ndarray, dtype: _dtypes.dtype, indent: int) -> str:
    """The bracketed values of a non-empty host array, indented for a prefix of ``indent`` characters."""
    summarize = array.size > PRINT_OPTS.threshold
    if dtype in (_dtypes.float16, _dtypes.bfloat16):
        array = array.astype(np.float32)
    if dtype.is_complex:
        real = _Formatter(_summarized(array.real) if summarize else array.real, True)
        imag = _Formatter(_summarized(array.imag) if summarize else array.imag, True)
        return _tensor_str_with_formatter(array, indent, summarize, real, imag)
    fmt = _Formatter(_summarized(array) if summarize else array, dtype.is_floating_point)
    return _tensor_str_with_formatter(array, indent, summarize, fmt, None)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(tensor: Any) -> str:
    """``repr(tensor)``: ``tensor(<values>, <suffixes>)`` with PyTorch's suffix rules."""
    from .ops._dispatch import get_default_device

    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dev = tensor._device
    if dev.type != get_default_device().type:
        suffixes.append(f"device='{dev}'")
    default = _dtypes.get_default_dtype()
    has_default_dtype = tensor._dtype in (default, _dtypes.default_complex_dtype(), _dtypes.int64, _dtypes.bool)
    shape = tuple(tensor._data.shape)
    if dev.type == "meta":
        suffixes.append(f"size={shape}")
        if tensor._dtype is not default:
            suffixes.append(f"dtype={tensor._dtype!r}")
        body = "..."
    elif math.prod(shape) == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if tensor._dtype is not default:  # nothing to infer the dtype from: always shown
            suffixes.append(f"dtype={tensor._dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if not has_default_dtype:
            suffixes.append(f"dtype={tensor._dtype!r}")
        body = format_data(np.asarray(tensor._host()), tensor._dtype, indent)
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        name = grad_fn.name() if callable(getattr(grad_fn, "name", None)) else type(grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
