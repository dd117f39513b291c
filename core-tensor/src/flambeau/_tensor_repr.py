"""``repr(tensor)`` as PyTorch prints it: shared element width, 4 decimals, summarised when large."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _dtypes


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


options = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``."""
    if profile == "default":
        options.__init__()
    elif profile == "short":
        options.__init__(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        options.__init__(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(options, name, value)
    options.sci_mode = sci_mode


class _Formatter:
    """One width and style for all elements, chosen from the values that will be shown."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if values.size == 0:
            return
        if not floating:
            self.width = max(len(str(v)) for v in values.tolist())
            return
        finite = values[np.isfinite(values)]
        specials = [self._special(v) for v in values.tolist() if not math.isfinite(v)]
        nonzero = np.abs(finite[finite != 0])
        if finite.size == 0:
            self.width = max(len(s) for s in specials)
            return
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            if nonzero.size and nonzero.max() / nonzero.min() > 1000.0 or (nonzero.size and nonzero.max() > 1e8):
                self.sci_mode = True
                strs = [f"{v:.{options.precision}e}" for v in finite.tolist()]
            else:
                strs = [f"{v:.0f}." for v in finite.tolist()]
        else:
            ratio = nonzero.max() / nonzero.min() if nonzero.size else 0
            if nonzero.size and (ratio > 1000.0 or nonzero.max() > 1e8 or nonzero.min() < 1e-4):
                self.sci_mode = True
                strs = [f"{v:.{options.precision}e}" for v in finite.tolist()]
            else:
                strs = [f"{v:.{options.precision}f}" for v in finite.tolist()]
        if options.sci_mode is not None:
            self.sci_mode = options.sci_mode
            if self.sci_mode:
                strs = [f"{v:.{options.precision}e}" for v in finite.tolist()]
        self.width = max(len(s) for s in strs + specials)

    @staticmethod
    def _special(v: float) -> str:
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")

    def format(self, v) -> str:
        if not self.floating:
            return str(v).rjust(self.width)
        if not math.isfinite(v):
            text = self._special(v)
        elif self.sci_mode:
            text = f"{v:.{options.precision}e}"
        elif self.int_mode:
            text = f"{v:.0f}."
        else:
            text = f"{v:.{options.precision}f}"
        return text.rjust(self.width)


def _summarised(array: np.ndarray, edge: int) -> np.ndarray:
    """The elements that will be printed (edge items of every dim), flattened."""
    if array.ndim == 0:
        return array.reshape(1)
    if array.shape[0] > 2 * edge:
        parts = [array[:edge], array[-edge:]]
    else:
        parts = [array]
    return np.concatenate([_summarised(p[i], edge) if p.ndim > 1 else p.reshape(-1)
                           for p in parts for i in range(p.shape[0] if p.ndim > 1 else 1)] or [np.empty(0)]) \
        if array.ndim > 1 else np.concatenate(parts)


def _scalar_str(value, fmt: _Formatter, dtype) -> str:
    if dtype is _dtypes.bool:
        return str(bool(value))
    return fmt.format(value).strip() if array_is_scalar_like(value) else fmt.format(value)


def array_is_scalar_like(value) -> bool:
    return True


def _format_complex(array: np.ndarray, summarize: bool, indent: int) -> str:
    real = _Formatter(_summarised(array.real, options.edgeitems) if summarize else array.real.reshape(-1), True)
    imag = _Formatter(_summarised(array.imag, options.edgeitems) if summarize else array.imag.reshape(-1), True)

    def element(v) -> str:
        im = imag.format(abs(v.imag)).lstrip()
        sign = "-" if v.imag < 0 or (v.imag == 0 and math.copysign(1, v.imag) < 0) else "+"
        return f"{real.format(v.real)}{sign}{im.rjust(imag.width)}j"

    return _nested(array, element, summarize, indent, real.width + imag.width + 2)


def _nested(array: np.ndarray, element, summarize: bool, indent: int, width: int) -> str:
    edge = options.edgeitems
    if array.ndim == 0:
        return element(array.item() if array.dtype.kind != "c" else array[()])
    if array.ndim == 1:
        items = [element(v) for v in (array.tolist() if array.dtype.kind != "c" else array)]
        if summarize and array.shape[0] > 2 * edge:
            items = items[:edge] + ["..."] + items[-edge:]
        per_line = max(1, (options.linewidth - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(array.shape[0])
    if summarize and array.shape[0] > 2 * edge:
        chosen = list(range(edge)) + [None] + list(range(array.shape[0] - edge, array.shape[0]))
    else:
        chosen = list(rows)
    parts = ["..." if i is None else _nested(array[i], element, summarize, indent + 1, width) for i in chosen]
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def format_data(array: np.ndarray, dtype, indent: int) -> str:
    summarize = array.size > options.threshold
    if array.dtype.kind == "c":
        return _format_complex(array, summarize, indent)
    if dtype is _dtypes.bool:
        return _nested(array, lambda v: str(bool(v)).rjust(5 if not all_same_bool(array) else len(str(bool(v)))),
                       summarize, indent, 5)
    floating = dtype.is_floating_point
    values = array.astype(np.float64) if floating else array
    shown = _summarised(values, options.edgeitems) if summarize else values.reshape(-1)
    fmt = _Formatter(shown, floating)
    if array.ndim == 0:
        return fmt.format(values.item()).strip()
    return _nested(values, fmt.format, summarize, indent, fmt.width)


def all_same_bool(array: np.ndarray) -> bool:
    return bool(array.all() or not array.any())


def tensor_repr(tensor) -> str:
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dev = tensor._device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    shape = tuple(tensor._data.shape)
    numel = math.prod(shape)
    default_dtypes = (_dtypes.get_default_dtype(), _dtypes.default_complex_dtype(), _dtypes.int64, _dtypes.bool)
    if dev.type == "meta":
        body = "..."
        suffixes.append(f"size={shape}")
    elif numel == 0:
        body = "[]"
        if shape != (0,):
            suffixes.append(f"size={shape}")
    else:
        host = tensor._host()
        if tensor._dtype is _dtypes.bfloat16:
            host = host.astype(np.float32)
        body = format_data(host, tensor._dtype, indent)
    if tensor._dtype not in default_dtypes or (numel == 0 and tensor._dtype is not _dtypes.get_default_dtype()
                                               and dev.type != "meta") or dev.type == "meta" and tensor._dtype not in default_dtypes:
        suffixes.append(f"dtype={tensor._dtype!r}")
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    text = prefix + body
    for suffix in suffixes:
        text += ", " + suffix
    return text + ")"
