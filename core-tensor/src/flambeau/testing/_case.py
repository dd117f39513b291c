"""What a conformance case is: an op, the inputs to try it on, a numpy reference, and its errors.

Cases describe inputs abstractly (:class:`Arg`: a shape, a dtype, a layout, a value range);
the runner (:mod:`flambeau.testing._runner`) draws the values, builds the tensors on the CPU,
moves them to the device under test, and compares the op's results with the reference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

#: Where a sample wants the device under test (factory ops' ``device=`` argument).
DEVICE = "<device under test>"

#: How an input is laid out on the device: a plain tensor, the transpose of one (its last two
#: dims swapped), or every other element of a twice-as-long last dim (a step-sliced view).
LAYOUTS = ("contiguous", "transposed", "sliced")


@dataclass(frozen=True)
class Arg:
    """A tensor input to draw: ``shape``, ``dtype`` (a name), layout and value range.

    Args:
        shape: the shape the op sees.
        dtype: a dtype name (``"float32"``).
        layout: ``"contiguous"``, ``"transposed"`` (needs 2 dims) or ``"sliced"`` (needs 1 dim).
        low, high: the range values are drawn from (clipped to the dtype's range).
        nonzero: draw no zeros (divisors).
        values: explicit values (a nested list or array) instead of random ones.
        on_cpu: leave this input on the CPU (to check the error for mixed devices).
    """

    shape: tuple[int, ...]
    dtype: str
    layout: str = "contiguous"
    low: float = -4.0
    high: float = 4.0
    nonzero: bool = False
    values: Any = None
    on_cpu: bool = False

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; expected one of {LAYOUTS}")
        if self.layout == "transposed" and len(self.shape) < 2:
            raise ValueError("a transposed input needs at least 2 dims")
        if self.layout == "sliced" and len(self.shape) < 1:
            raise ValueError("a sliced input needs at least 1 dim")

    def describe(self) -> str:
        text = f"{self.dtype}{list(self.shape)}"
        text = text if self.layout == "contiguous" else f"{text}/{self.layout}"
        return f"{text}@cpu" if self.on_cpu else text


@dataclass
class Sample:
    """One call of an op: positional and keyword arguments, :class:`Arg` in place of tensors."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""
    #: The result's shape depends on values (a bool mask): a backend that computes no data skips it.
    data_dependent: bool = False

    def describe(self) -> str:
        def show(x: Any) -> str:
            if isinstance(x, Arg):
                return x.describe()
            if isinstance(x, (list, tuple)) and any(isinstance(i, Arg) for i in x):
                return "[" + ", ".join(show(i) for i in x) + "]"
            return repr(x) if x != DEVICE else "device"
        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})" + (f" [{self.note}]" if self.note else "")


@dataclass
class ErrorCase:
    """A call that must raise ``exc`` (that exact type) with ``match`` in its message.

    Args:
        args, kwargs: as in :class:`Sample`.
        exc: the exception type PyTorch raises.
        match: a fragment of the message (plain text, not a regex).
        call: the function to call, when not the op's own (``"add_"`` for the in-place form).
        data_dependent: the error depends on values (integer division by zero), so a backend
            that computes no data cannot raise it.
    """

    args: tuple
    exc: type
    match: str
    kwargs: dict = field(default_factory=dict)
    call: str | None = None
    data_dependent: bool = False

    def describe(self) -> str:
        return f"{self.call or ''}{Sample(self.args, self.kwargs).describe()} -> {self.exc.__name__}"


def _no_errors() -> Iterable[ErrorCase]:
    return ()


@dataclass
class OpCase:
    """How the kit checks one op.

    Args:
        op: the declared op's name.
        dtypes: the dtype names the op accepts (each is one test: ``op:dtype``).
        samples: ``samples(dtype)`` gives the calls to try for that dtype.
        ref: the numpy reference, called like the op with numpy arrays in place of tensors
            (float and complex inputs upcast to float64/complex128 when ``upcast``). It returns
            an array, or a tuple of them for several outputs.
        result_dtype: ``result_dtype(sample)`` gives the expected dtype name of each output
            (a string, or a tuple of them).
        errors: ``errors()`` gives the error cases.
        upcast: pass float inputs to ``ref`` in float64 (else in their own dtype, views intact).
        check_strides: compare the result's strides with those of ``ref``'s result (view ops).
        tolerances: per dtype name, ``(rtol, atol)`` overriding the defaults.
        mutates: positions of arguments the op writes in place (a tensor, or a list of them, as
            optimizer updates do). ``ref`` must update its numpy copies of them the same way;
            after the call, the device tensors are compared with those copies. An op that
            returns nothing has a ``ref`` that returns None.
    """

    op: str
    dtypes: Sequence[str]
    samples: Callable[[str], Iterable[Sample]]
    ref: Callable[..., Any]
    result_dtype: Callable[[Sample], Any]
    errors: Callable[[], Iterable[ErrorCase]] = _no_errors
    upcast: bool = True
    check_strides: bool = False
    tolerances: dict = field(default_factory=dict)
    mutates: tuple[int, ...] = ()
