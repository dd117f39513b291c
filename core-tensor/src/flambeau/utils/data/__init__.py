"""flambeau.utils.data: datasets, samplers and the DataLoader, with torch.utils.data's API.

Pure Python on top of core-tensor: worker processes come from :mod:`multiprocessing`, batches are
built with :func:`flambeau.stack`, and nothing here is imported by ``import flambeau``.
"""
from __future__ import annotations

from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split",
]
