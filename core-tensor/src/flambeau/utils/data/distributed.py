"""DistributedSampler: each process of a data-parallel job reads its own share of a dataset."""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _distributed() -> Any:
    """``flambeau.distributed``, initialised, or a clear error (it is a separate distribution)."""
    try:
        import flambeau.distributed as dist
    except ImportError as exc:
        raise RuntimeError("DistributedSampler needs num_replicas and rank, or flambeau.distributed to find them: "
                           "install flambeau-distributed (pip install flambeau-distributed)") from exc
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    if not dist.is_initialized():
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group, or pass num_replicas and rank to DistributedSampler.")
    return dist


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} should be an integer, but got {name}={value!r}")


class DistributedSampler(Sampler[int]):
    r"""Restricts data loading to the share of the dataset that belongs to one process.

    Use it with :class:`flambeau.nn.parallel.DistributedDataParallel`: each of the
    ``num_replicas`` processes passes its own ``rank`` and reads ``len(dataset) / num_replicas``
    samples. The processes draw the same permutation each epoch (a generator seeded with
    ``seed + epoch``) and take every ``num_replicas``-th index of it from their ``rank`` on; the
    indices are padded by repeating the first ones so that every process gets the same count, or
    the tail is dropped with ``drop_last``.

    Args:
        dataset: the map-style dataset to sample from.
        num_replicas (int, optional): how many processes take part (default: the world size of
            the initialised ``flambeau.distributed`` process group).
        rank (int, optional): this process's rank in ``[0, num_replicas)`` (default: its rank in
            the process group).
        shuffle (bool): a new permutation every epoch (default ``True``).
        seed (int): the seed of that permutation, the same on every process (default ``0``).
        drop_last (bool): drop the tail so that the dataset divides evenly instead of padding
            (default ``False``).

    .. warning::
        Call :meth:`set_epoch` at the start of every epoch, before creating the DataLoader
        iterator; otherwise every epoch uses the same order.

    Example::

        >>> sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
        >>> loader = DataLoader(dataset, sampler=sampler, batch_size=32)
        >>> for epoch in range(epochs):
        ...     sampler.set_epoch(epoch)
        ...     for batch in loader:
        ...         ...
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _distributed().get_world_size()
        if rank is None:
            rank = _distributed().get_rank()
        _check_int("num_replicas", num_replicas)
        _check_int("rank", rank)
        _check_int("seed", seed)
        if num_replicas < 1:
            raise ValueError(f"num_replicas should be a positive integer, but got num_replicas={num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # Drop the tail so that every process gets the same number of samples.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            import flambeau

            g = flambeau.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = flambeau.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            elif indices:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        # Every num_replicas-th index from this rank on: the shares are disjoint and cover it all.
        return iter(indices[self.rank: self.total_size: self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        r"""Set the epoch, which seeds the next permutation (``seed + epoch``) on every process alike.

        Args:
            epoch (int): the epoch number.
        """
        self.epoch = epoch
