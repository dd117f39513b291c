"""Datasets: map-style and iterable, their combinations, and :func:`random_split` (torch.utils.data's)."""
from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset", "TensorDataset",
           "random_split"]


class Dataset(Generic[T_co]):
    r"""A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    ``a + b`` concatenates two datasets into a :class:`ConcatDataset`.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    r"""A dataset that is a stream: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; use
    :func:`~flambeau.utils.data.get_worker_info` inside ``__iter__`` to split the work.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    r"""Samples ``(t[i] for t in tensors)``; every tensor has the same size in dimension 0.

    Args:
        *tensors (Tensor): tensors sharing their first dimension.
    """

    def __init__(self, *tensors: Any) -> None:
        if tensors and any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    r"""Zips datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        datasets = list(args) or list(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])  # type: ignore[arg-type]
        if any(self._length != len(d) for d in datasets):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    r"""The concatenation of map-style datasets.

    Args:
        datasets (sequence): the datasets, in order; none may be an :class:`IterableDataset`.
    """

    @staticmethod
    def cumsum(sequence: Sequence) -> list[int]:
        return list(accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    r"""The chaining of iterable datasets: iterates each in turn."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    r"""The samples of ``dataset`` at ``indices``, in that order.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence): indices into it.
    """

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float], generator: Any = None) -> list[Subset[T_co]]:
    r"""Split ``dataset`` at random into non-overlapping :class:`Subset` s of the given lengths.

    ``lengths`` are either integers summing to ``len(dataset)`` or fractions summing to 1; with
    fractions each length is ``floor(frac * len(dataset))`` and the remainder is handed out one by one,
    round-robin, from the first split on.

    Args:
        dataset (Dataset): the dataset to split.
        lengths (sequence): lengths or fractions of the splits.
        generator (Generator, optional): the generator of the permutation (default: the global one).

    Example::

        >>> train, test = random_split(range(10), [0.7, 0.3], generator=flambeau.Generator().manual_seed(42))
        >>> len(train), len(test)
        (7, 3)
    """
    import flambeau

    lengths = list(lengths)
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(n * frac)))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths  # type: ignore[assignment]
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if any(isinstance(x, float) for x in lengths) or any(x < 0 for x in lengths):
        raise ValueError(f"random_split expects non-negative integer lengths or fractions, got {lengths}")
    indices = flambeau.randperm(sum(lengths), generator=generator).tolist()  # type: ignore[arg-type]
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(accumulate(lengths), lengths)]  # type: ignore[arg-type]
