"""The :class:`PackedSequence` type, on its own so that the recurrent layers can import it.

``flambeau.nn.utils.rnn`` re-exports it (its public home, as ``torch.nn.utils.rnn``'s); importing it
from there would run ``flambeau.nn.utils``' package, whose parametrizations import the layers,
and close an import cycle through ``flambeau.nn.modules``.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import flambeau as fb
from flambeau import Tensor


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    r"""Holds the data and the list of ``batch_sizes`` of a packed sequence.

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, never directly.

    Attributes:
        data: the packed rows, ``(sum(lengths), *)``.
        batch_sizes: int64 CPU tensor, the number of sequences running at each time step.
        sorted_indices: how the batch was sorted by decreasing length (None when it already was).
        unsorted_indices: the inverse permutation, to restore the original order.
    """

    __slots__ = ()

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> "PackedSequence":
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                                 "created manually. They should be instantiated by functions like pack_sequence "
                                 "and pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data  # PackedSequence((data, batch_sizes)), as PyTorch accepts
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        r"""``self.data.to(*args, **kwargs)``, the indices following ``data`` to its device.

        Returns ``self`` when ``data`` is unchanged. ``batch_sizes`` stays on the CPU.
        """
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(data.device, **kwargs)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(data.device, **kwargs)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to(*args, device="cpu", **kwargs)

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to(*args, device="cuda", **kwargs)

    def double(self) -> "PackedSequence":
        return self.to(dtype=fb.float64)

    def float(self) -> "PackedSequence":
        return self.to(dtype=fb.float32)

    def half(self) -> "PackedSequence":
        return self.to(dtype=fb.float16)

    def long(self) -> "PackedSequence":
        return self.to(dtype=fb.int64)

    def int(self) -> "PackedSequence":
        return self.to(dtype=fb.int32)

    def short(self) -> "PackedSequence":
        return self.to(dtype=fb.int16)

    def char(self) -> "PackedSequence":
        return self.to(dtype=fb.int8)

    def byte(self) -> "PackedSequence":
        return self.to(dtype=fb.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a CUDA device."""
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        """Whether ``data`` is in pinned memory (never, on flambeau's CPU backend)."""
        pinned = getattr(self.data, "is_pinned", None)
        return bool(pinned()) if pinned is not None else False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    output = fb.empty_like(permutation)
    output.scatter_(0, permutation, fb.arange(0, permutation.numel(), device=permutation.device))
    return output


# Their public home, which pickles and reprs name.
PackedSequence.__module__ = invert_permutation.__module__ = "flambeau.nn.utils.rnn"
