"""Packed and padded batches of variable-length sequences (``torch.nn.utils.rnn``).

A :class:`PackedSequence` stores a batch of sequences sorted by decreasing length, time step by
time step: ``data`` holds the rows of every sequence still running at step 0, then at step 1, and
so on; ``batch_sizes[t]`` is how many sequences run at step ``t``. The recurrent layers take and
return packed sequences as PyTorch's do.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import flambeau as fb
from flambeau import Tensor
from flambeau.ops.meta import type_name

from .._packed_sequence import PackedSequence, invert_permutation

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _lengths_list(lengths: Tensor) -> list[int]:
    return [int(v) for v in lengths.tolist()]


def _check_lengths(lengths: Tensor) -> None:
    if lengths.device.type != "cpu" or lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device.type} {type_name(lengths.dtype)} tensor")


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    r"""Packs a Tensor containing padded sequences of variable length.

    Args:
        input: padded batch, ``(T, B, *)`` or ``(B, T, *)`` when ``batch_first``.
        lengths: the length of each sequence (a CPU tensor or a list of ints).
        batch_first: whether ``input`` is ``(B, T, *)``.
        enforce_sorted: if True, ``lengths`` must be in decreasing order; if False, the batch is
            sorted here and ``sorted_indices``/``unsorted_indices`` remember the permutation.

    Returns:
        a :class:`PackedSequence`.
    """
    if not isinstance(lengths, Tensor):
        lengths = fb.as_tensor(lengths, dtype=fb.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=fb.int64)
    _check_lengths(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = fb.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """``(data, batch_sizes)`` of a padded batch whose lengths are sorted in decreasing order."""
    if batch_first:
        input = input.transpose(0, 1)
    if input.dim() < 2 or input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[1]
    lens = _lengths_list(lengths)
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    for i in range(batch - 1):
        if lens[i + 1] > lens[i]:
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > input.shape[0]:
        raise RuntimeError(f"Expected all lengths to be at most the sequence length {input.shape[0]}, but got a "
                           f"length of {lens[0]}")
    sizes = _batch_sizes(lens)
    pieces = [input[t, :bs] for t, bs in enumerate(sizes)]
    data = fb.cat(pieces, 0)
    return data, fb.tensor(sizes, dtype=fb.int64)


def _batch_sizes(lengths: Sequence[int]) -> list[int]:
    """How many of the (decreasing) ``lengths`` exceed each time step."""
    sizes = []
    count = len(lengths)
    for t in range(lengths[0] if lengths else 0):
        while count and lengths[count - 1] <= t:
            count -= 1
        sizes.append(count)
    return sizes


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    r"""Pads a packed batch of variable length sequences; the inverse of :func:`pack_padded_sequence`.

    Args:
        sequence: the batch to pad.
        batch_first: return ``(B, T, *)`` rather than ``(T, B, *)``.
        padding_value: the value of the padded elements.
        total_length: pad to this many steps (at least the longest sequence's length).

    Returns:
        ``(padded, lengths)``, ``lengths`` an int64 CPU tensor in the batch's original order.
    """
    sizes = _lengths_list(sequence.batch_sizes)
    max_seq_length = len(sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = sizes[0] if sizes else 0
    rest = tuple(data.shape[1:])
    padded = fb.full((max_seq_length, batch) + rest, padding_value, dtype=data.dtype, device=data.device)
    lengths = [0] * batch
    offset = 0
    rows = []
    for t, bs in enumerate(sizes):
        rows.append(data[offset:offset + bs])
        for b in range(bs):
            lengths[b] = t + 1
        offset += bs
    padded = _fill_steps(padded, rows, sizes)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths_t = fb.tensor(lengths, dtype=fb.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        return padded, lengths_t[sequence.unsorted_indices.cpu()]
    return padded, lengths_t


def _fill_steps(padded: Tensor, rows: list[Tensor], sizes: list[int]) -> Tensor:
    """``padded`` with ``rows[t]`` written over ``padded[t, :sizes[t]]``, differentiably."""
    steps = []
    for t in range(padded.shape[0]):
        bs = sizes[t] if t < len(sizes) else 0
        if bs == padded.shape[1]:
            steps.append(rows[t])
        elif bs == 0:
            steps.append(padded[t])
        else:
            steps.append(fb.cat([rows[t], padded[t, bs:]], 0))
    return fb.stack(steps, 0) if steps else padded


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    r"""Pads a list of variable length tensors with ``padding_value``.

    Args:
        sequences: tensors of shape ``(L_i, *)`` with the same trailing dims.
        batch_first: return ``(B, T, *)`` rather than ``(T, B, *)``.
        padding_value: the value of the padded elements.
        padding_side: pad on the ``"right"`` (default) or the ``"left"``.

    Returns:
        ``(T, B, *)`` (or ``(B, T, *)``) with ``T`` the longest length.
    """
    if not isinstance(sequences, (Iterable, Tensor)):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"The size of tensor a ({trailing[0] if trailing else 0}) must match the size of "
                               f"tensor b ({s.shape[1] if s.dim() > 1 else 0}) at non-singleton dimension 1")
    max_len = max(s.shape[0] for s in sequences)
    ref = sequences[0]
    columns = []
    for s in sequences:
        pad = max_len - s.shape[0]
        if pad:
            filler = fb.full((pad,) + trailing, padding_value, dtype=ref.dtype, device=ref.device)
            s = fb.cat([s.to(ref.dtype), filler] if padding_side == "right" else [filler, s.to(ref.dtype)], 0)
        columns.append(s)
    return fb.stack(columns, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    r"""Splits a padded batch back into its sequences (the inverse of :func:`pad_sequence`).

    Args:
        padded_sequences: ``(T, B, *)`` or ``(B, T, *)`` when ``batch_first``.
        lengths: the length of each sequence.
        batch_first: whether the batch dim comes first.

    Returns:
        a list of ``B`` tensors of shape ``(L_i, *)``. Unlike PyTorch's, ``padded_sequences``
        is not transposed in place.
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_list(lengths) if isinstance(lengths, Tensor) else [int(v) for v in lengths]
    return [padded_sequences[b, :n] for b, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    r"""Packs a list of variable length tensors (``(L_i, *)`` each).

    ``enforce_sorted=True`` requires them in decreasing order of length.
    """
    lengths = fb.tensor([v.size(0) for v in sequences], dtype=fb.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    r"""Unpacks a :class:`PackedSequence` into a list of variable length tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
