"""Samplers: the order in which a DataLoader visits a map-style dataset (torch.utils.data's)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]


def _fresh_generator(generator: Any) -> Any:
    # PyTorch draws a seed from the global generator when none is given, so that manual_seed makes
    # the order reproducible while two epochs still differ.
    import flambeau

    if generator is not None:
        return generator
    seed = int(flambeau.empty((), dtype=flambeau.int64).random_().item())
    return flambeau.Generator().manual_seed(seed)


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler(Generic[T_co]):
    r"""Base class of samplers: ``__iter__`` yields indices (or lists of them), ``__len__`` is optional."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    r"""``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    r"""Random indices: a fresh permutation per pass, or draws with replacement.

    Args:
        data_source (Dataset): the dataset to sample from.
        replacement (bool): draw with replacement (default ``False``).
        num_samples (int, optional): how many to draw (default ``len(data_source)``); without
            replacement more than ``len(data_source)`` concatenates permutations.
        generator (Generator, optional): the source of randomness.
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        _positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        import flambeau

        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            for start in range(0, self.num_samples, 32):
                count = min(32, self.num_samples - start)
                yield from flambeau.randint(high=n, size=(count,), dtype=flambeau.int64,
                                            generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from flambeau.randperm(n, generator=generator).tolist()
        yield from flambeau.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    r"""The given ``indices`` in a random order, a fresh one per pass."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import flambeau

        for i in flambeau.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    r"""``num_samples`` indices in ``[0, len(weights))`` drawn with probabilities proportional to ``weights``.

    Args:
        weights (sequence): non-negative weights, not necessarily summing to one.
        num_samples (int): how many indices to draw.
        replacement (bool): draw with replacement (default ``True``); without it ``num_samples``
            cannot exceed the number of non-zero weights.
        generator (Generator, optional): the source of randomness.
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        import flambeau

        _positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = flambeau.as_tensor(weights, dtype=flambeau.double)
        if weights_tensor.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import flambeau

        rand = flambeau.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from rand.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    r"""Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler (Sampler or iterable): the indices.
        batch_size (int): the size of a batch.
        drop_last (bool): drop the last batch when it is smaller than ``batch_size``.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
