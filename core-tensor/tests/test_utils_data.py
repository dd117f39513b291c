"""flambeau.utils.data: datasets, samplers, collation and the DataLoader (PyTorch's semantics)."""
from __future__ import annotations

import collections
import math
import os
import random
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import flambeau as fb
from flambeau.utils.data import (
    BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler, SequentialSampler, Subset,
    SubsetRandomSampler, TensorDataset, WeightedRandomSampler, default_collate, default_convert, get_worker_info,
    random_split,
)


# -- datasets ----------------------------------------------------------------------------------

def test_tensor_dataset_and_size_mismatch():
    ds = TensorDataset(fb.arange(5), fb.arange(5) * 10)
    assert len(ds) == 5
    x, y = ds[3]
    assert (x.item(), y.item()) == (3, 30)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(fb.arange(5), fb.arange(4))


def test_concat_dataset_indexing_and_errors():
    a, b = list(range(3)), list(range(10, 15))

    class L(Dataset):
        def __init__(self, xs):
            self.xs = xs

        def __len__(self):
            return len(self.xs)

        def __getitem__(self, i):
            return self.xs[i]

    ds = L(a) + L(b)
    assert isinstance(ds, ConcatDataset)
    assert [ds[i] for i in range(len(ds))] == a + b
    assert ds[-1] == 14 and ds.cumulative_sizes == [3, 8]
    with pytest.raises(ValueError, match="absolute value of index"):
        ds[-9]
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])


def test_subset_list_index():
    s = Subset(list(range(10)), [9, 7, 5])
    assert len(s) == 3 and s[1] == 7


@given(n=st.integers(0, 200), fracs=st.lists(st.integers(1, 100), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_random_split_fractions_remainder_rule(n, fracs):
    total = sum(fracs)
    fractions = [f / total for f in fracs]
    if not math.isclose(sum(fractions), 1) or sum(fractions) > 1:
        return  # rounding put the sum just above 1: PyTorch treats these as lengths, not fractions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a split of length 0 warns
        parts = random_split(range(n), fractions, generator=fb.Generator().manual_seed(0))
    expected = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(expected)):
        expected[i % len(expected)] += 1
    assert [len(p) for p in parts] == expected
    everything = sorted(i for p in parts for i in (p[j] for j in range(len(p))))
    assert everything == list(range(n))


def test_random_split_errors_and_reproducibility():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 2 is not between 0 and 1"):
        random_split(range(10), [0.5, 0.7, -0.2])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(1), [0.5, 0.5])
    a = [list(p) for p in random_split(range(20), [5, 15], generator=fb.Generator().manual_seed(3))]
    b = [list(p) for p in random_split(range(20), [5, 15], generator=fb.Generator().manual_seed(3))]
    assert a == b


# -- samplers ----------------------------------------------------------------------------------

@given(n=st.integers(1, 100), bs=st.integers(1, 20), drop_last=st.booleans())
@settings(max_examples=80, deadline=None)
def test_batch_sampler_partitions_in_order(n, bs, drop_last):
    batches = list(BatchSampler(SequentialSampler(range(n)), bs, drop_last))
    assert len(batches) == len(BatchSampler(range(n), bs, drop_last))
    assert len(batches) == (n // bs if drop_last else math.ceil(n / bs))
    flat = [i for b in batches for i in b]
    assert flat == list(range(len(flat)))
    assert all(len(b) == bs for b in batches[:-1])
    if drop_last:
        assert all(len(b) == bs for b in batches)


@given(n=st.integers(1, 60), num_samples=st.one_of(st.none(), st.integers(1, 150)), seed=st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_random_sampler_without_replacement_is_permutations(n, num_samples, seed):
    s = RandomSampler(range(n), num_samples=num_samples, generator=fb.Generator().manual_seed(seed))
    got = list(s)
    k = n if num_samples is None else num_samples
    assert len(got) == len(s) == k
    for start in range(0, k - k % n, n):  # every full pass is a permutation
        assert sorted(got[start:start + n]) == list(range(n))
    assert len(set(got[k - k % n:])) == k % n


def test_random_sampler_replacement_range_and_errors():
    got = list(RandomSampler(range(7), replacement=True, num_samples=100, generator=fb.Generator().manual_seed(1)))
    assert len(got) == 100 and set(got) <= set(range(7)) and len(set(got)) > 1
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler([])


def test_random_sampler_follows_manual_seed_and_differs_between_epochs():
    s = RandomSampler(range(50))
    fb.manual_seed(5)
    first, second = list(s), list(s)
    fb.manual_seed(5)
    assert list(s) == first and first != second


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


def test_weighted_and_subset_random_samplers():
    got = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=fb.Generator().manual_seed(0)))
    assert len(got) == 200 and set(got) == {1, 3}
    assert got.count(3) > got.count(1)
    no_rep = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=fb.Generator().manual_seed(0)))
    assert sorted(no_rep) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence but given weights have shape"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], -1)
    s = SubsetRandomSampler([10, 20, 30], generator=fb.Generator().manual_seed(0))
    assert sorted(s) == [10, 20, 30] and len(s) == 3


# -- collation ---------------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


def test_default_collate_structures():
    out = default_collate([(0, "a", {"v": 1.5, "n": np.arange(2)}), (1, "b", {"v": 2.5, "n": np.arange(2) + 2})])
    assert isinstance(out, list) and len(out) == 3
    assert out[0].dtype == fb.int64 and out[0].tolist() == [0, 1]
    assert out[1] == ["a", "b"]
    assert out[2]["v"].dtype == fb.float64 and out[2]["v"].tolist() == [1.5, 2.5]
    assert out[2]["n"].tolist() == [[0, 1], [2, 3]]
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict) and od["a"].tolist() == [1, 2]
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3] and p.y.dtype == fb.float64
    assert default_collate([True, False]).dtype == fb.bool
    assert default_collate([np.float32(1), np.float32(2)]).dtype == fb.float32
    t = default_collate([fb.ones(2, 3), fb.zeros(2, 3)])
    assert tuple(t.shape) == (2, 2, 3)
    assert default_collate([[1, 2], [3, 4]])[1].tolist() == [2, 4]


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": (np.float64(2.0), "s")})
    assert isinstance(out["a"], fb.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"], list) and out["b"][0].dtype == fb.float64 and out["b"][1] == "s"


# -- DataLoader, main process ------------------------------------------------------------------

@given(n=st.integers(0, 60), bs=st.integers(1, 16), drop_last=st.booleans(), shuffle=st.booleans())
@settings(max_examples=50, deadline=None)
def test_dataloader_len_and_batches(n, bs, drop_last, shuffle):
    ds = TensorDataset(fb.arange(n))
    if n == 0 and shuffle:  # PyTorch's RandomSampler refuses an empty dataset
        with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
            DataLoader(ds, batch_size=bs, shuffle=True)
        return
    dl = DataLoader(ds, batch_size=bs, drop_last=drop_last, shuffle=shuffle,
                    generator=fb.Generator().manual_seed(0))
    batches = [b[0].tolist() for b in dl]
    assert len(batches) == len(dl) == (n // bs if drop_last else math.ceil(n / bs))
    flat = [i for b in batches for i in b]
    assert len(set(flat)) == len(flat) and set(flat) <= set(range(n))
    if not drop_last:
        assert sorted(flat) == list(range(n))
    if not shuffle:
        assert flat == list(range(len(flat)))


def test_dataloader_batch_size_none_and_batch_sampler():
    ds = [np.arange(2) + i for i in range(3)]
    out = list(DataLoader(ds, batch_size=None))
    assert [o.tolist() for o in out] == [[0, 1], [1, 2], [2, 3]]
    dl = DataLoader(list(range(6)), batch_sampler=[[0, 5], [1]])
    assert [b.tolist() for b in dl] == [[0, 5], [1]] and len(dl) == 2


def test_dataloader_argument_errors():
    ds = list(range(4))
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=range(4), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        DataLoader(ds, multiprocessing_context="spawn")
    dl = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_dataset_main_process_and_errors():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(7), batch_size=3)) == 3
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=range(3))


def test_get_worker_info_is_none_in_main_process():
    assert get_worker_info() is None


# -- DataLoader, worker processes --------------------------------------------------------------

def _children() -> set[int]:
    import multiprocessing

    return {p.pid for p in multiprocessing.active_children()}


def test_workers_match_single_process_and_leave_nothing_behind():
    ds = TensorDataset(fb.arange(23), fb.arange(23).float())
    before = _children()
    single = [[t.tolist() for t in b] for b in DataLoader(ds, batch_size=4)]
    multi = [[t.tolist() for t in b] for b in DataLoader(ds, batch_size=4, num_workers=2, prefetch_factor=1)]
    assert multi == single
    assert _children() <= before


def _random_sample(i):
    import numpy as np

    info = get_worker_info()
    return (info.id, info.seed, fb.rand(1).item(), float(np.random.rand()), random.random())


class RandomDS(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return _random_sample(i)


def test_workers_are_seeded_base_seed_plus_id_and_differ():
    dl = DataLoader(RandomDS(), batch_size=2, num_workers=2, generator=fb.Generator().manual_seed(7))
    rows = [tuple(x.tolist() if hasattr(x, "tolist") else x for x in b) for b in dl]
    ids = [r[0] for r in rows]
    seeds = [r[1] for r in rows]
    assert sorted(set(i for b in ids for i in b)) == [0, 1]
    by_worker = {}
    for b_ids, b_seeds in zip(ids, seeds):
        for w, s in zip(b_ids, b_seeds):
            by_worker.setdefault(w, set()).add(s)
    assert len(by_worker[0]) == len(by_worker[1]) == 1
    assert by_worker[1].pop() - by_worker[0].pop() == 1  # base_seed + worker_id
    # first batch of each worker: the flambeau, numpy and python draws differ between workers
    w0, w1 = rows[0], rows[1]
    for k in (2, 3, 4):
        assert w0[k][0] != w1[k][0]
    # the same generator seed gives the same numbers again
    again = [tuple(x.tolist() if hasattr(x, "tolist") else x for x in b)
             for b in DataLoader(RandomDS(), batch_size=2, num_workers=2, generator=fb.Generator().manual_seed(7))]
    assert again == rows


def _init_fn(worker_id):
    os.environ["FLAMBEAU_TEST_WORKER"] = str(worker_id)


class EnvDS(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return int(os.environ["FLAMBEAU_TEST_WORKER"])


def test_worker_init_fn_runs_in_each_worker():
    got = [b.tolist() for b in DataLoader(EnvDS(), batch_size=1, num_workers=2, worker_init_fn=_init_fn)]
    assert sorted({x for b in got for x in b}) == [0, 1]


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("bad sample 3")
        return i


def test_worker_error_reraised_with_traceback():
    dl = DataLoader(Failing(), batch_size=2, num_workers=2)
    it = iter(dl)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError) as info:
        next(it)
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 1" in msg
    assert "bad sample 3" in msg and "__getitem__" in msg and "Traceback" in msg
    it._shutdown_workers()


class KeyFailing(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return {}["missing"]


def test_worker_key_error_keeps_its_type():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(KeyFailing(), num_workers=1))


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(10)
        return i


def test_timeout():
    dl = DataLoader(Slow(), num_workers=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        next(iter(dl))
    assert time.monotonic() - start < 5


class Dies(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        os._exit(3)


def test_worker_that_dies_is_reported():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Dies(), num_workers=1))


def test_iterable_dataset_split_by_workers():
    got = sorted(x for b in DataLoader(Stream(10), batch_size=2, num_workers=2) for x in b.tolist())
    assert got == list(range(10))


def test_persistent_workers_reuse_processes_and_give_every_epoch():
    dl = DataLoader(TensorDataset(fb.arange(10)), batch_size=3, num_workers=2, persistent_workers=True)
    first = [b[0].tolist() for b in dl]
    pids = {w.pid for w in dl._iterator._workers}
    it = iter(dl)
    next(it)  # an epoch left unfinished, then a new one
    second = [b[0].tolist() for b in dl]
    assert first == second == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert {w.pid for w in dl._iterator._workers} == pids
    workers = dl._iterator._workers
    del dl, it
    import gc

    gc.collect()
    for w in workers:
        w.join(timeout=10)
        assert not w.is_alive()


def test_spawn_context():
    dl = DataLoader(TensorDataset(fb.arange(4)), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert [b[0].tolist() for b in dl] == [[0, 1], [2, 3]]


def test_pin_memory_accepted():
    with pytest.warns(UserWarning, match="pin_memory"):
        dl = DataLoader(list(range(3)), batch_size=2, pin_memory=True)
    assert [b.tolist() for b in dl] == [[0, 1], [2]]


@given(n=st.integers(1, 40), bs=st.integers(1, 9), seed=st.integers(0, 100))
@settings(max_examples=30, deadline=None)
def test_tensor_dataset_batches_equal_collated_samples(n, bs, seed):
    # the gather that batches a TensorDataset gives what default_collate of its samples gives
    ds = TensorDataset(fb.arange(n * 3, dtype=fb.float32).reshape(n, 3), fb.arange(n))
    fast = DataLoader(ds, batch_size=bs, shuffle=True, generator=fb.Generator().manual_seed(seed))
    slow = DataLoader(ds, batch_size=bs, shuffle=True, generator=fb.Generator().manual_seed(seed),
                      collate_fn=lambda b: default_collate(b))
    for a, b in zip(fast, slow, strict=True):
        assert type(a) is type(b) is list
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.tolist() == y.tolist()


# -- DistributedSampler -------------------------------------------------------------------------
def _shares(n, replicas, **kw):
    from flambeau.utils.data import DistributedSampler

    samplers = [DistributedSampler(list(range(n)), num_replicas=replicas, rank=r, **kw) for r in range(replicas)]
    return samplers, [list(s) for s in samplers]


@given(n=st.integers(0, 40), replicas=st.integers(1, 7), drop_last=st.booleans(), shuffle=st.booleans(),
       seed=st.integers(0, 2**31), epoch=st.integers(0, 5))
@settings(max_examples=60, deadline=None)
def test_distributed_sampler_padding_dropping_and_shared_permutation(n, replicas, drop_last, shuffle, seed, epoch):
    samplers, shares = _shares(n, replicas, drop_last=drop_last, shuffle=shuffle, seed=seed)
    for s in samplers:
        s.set_epoch(epoch)
    shares = [list(s) for s in samplers]
    # PyTorch's arithmetic: every rank gets ceil(n / replicas) samples, or floor with drop_last.
    per_rank = n // replicas if drop_last else -(-n // replicas)
    assert [len(s) for s in samplers] == [per_rank] * replicas
    assert [len(share) for share in shares] == [per_rank] * replicas
    # Interleaving the shares gives the epoch's order: one permutation (seed + epoch) on every rank,
    # padded by repeating its head, or cut to a multiple of replicas.
    order = [shares[k % replicas][k // replicas] for k in range(per_rank * replicas)]
    base = (fb.randperm(n, generator=fb.Generator().manual_seed(seed + epoch)).tolist() if shuffle
            else list(range(n)))
    expected = (base * (per_rank * replicas // max(n, 1) + 1))[: per_rank * replicas]
    assert order == expected
    if drop_last:
        assert len(set(order)) == len(order)  # disjoint shares
    elif n:
        assert set(order) == set(range(n))  # nothing left out


def test_distributed_sampler_known_values_and_epochs():
    _, shares = _shares(10, 4, shuffle=False)
    assert shares == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    _, shares = _shares(2, 5, shuffle=False)  # more padding than data: the data repeats
    assert shares == [[0], [1], [0], [1], [0]]
    _, shares = _shares(10, 4, shuffle=False, drop_last=True)
    assert shares == [[0, 4], [1, 5], [2, 6], [3, 7]]
    samplers, first = _shares(50, 2, seed=3)
    assert [list(s) for s in samplers] == first  # the same epoch gives the same order
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != first and samplers[0].epoch == 1
    other, _ = _shares(50, 2, seed=4)
    assert list(other[0]) != first[0]


def test_distributed_sampler_with_a_dataloader():
    from flambeau.utils.data import DistributedSampler
    from flambeau.utils.data.distributed import DistributedSampler as same

    assert DistributedSampler is same
    ds = TensorDataset(fb.arange(10))
    sampler = DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)
    assert [b[0].tolist() for b in DataLoader(ds, batch_size=2, sampler=sampler)] == [[1, 4], [7, 0]]


def test_distributed_sampler_errors(monkeypatch):
    import sys
    import types

    from flambeau.utils.data import DistributedSampler

    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match=r"Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    with pytest.raises(ValueError, match="num_replicas should be a positive integer"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    with pytest.raises(TypeError, match="rank should be an integer"):
        DistributedSampler(range(4), num_replicas=2, rank=0.5)
    # Without num_replicas/rank it asks flambeau.distributed: missing, not initialised, initialised.
    monkeypatch.setitem(sys.modules, "flambeau.distributed", None)
    with pytest.raises(RuntimeError, match="install flambeau-distributed"):
        DistributedSampler(range(4))
    fake = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: False, get_world_size=lambda: 3,
                                 get_rank=lambda: 2)
    monkeypatch.setitem(sys.modules, "flambeau.distributed", fake)
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        DistributedSampler(range(4), rank=0)
    fake.is_initialized = lambda: True
    sampler = DistributedSampler(range(7))
    assert (sampler.num_replicas, sampler.rank, len(sampler)) == (3, 2, 3)


# -- worker batches in shared memory ---------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_worker_batches_arrive_in_shared_memory(strategy, monkeypatch):
    import gc

    import flambeau.multiprocessing as mp
    from flambeau.utils.data import _worker

    monkeypatch.setattr(_worker, "SHARE_MIN_BYTES", 0)  # (the workers are forked: they see it)
    mine = f"flambeau_{os.getpid()}_"
    mp.set_sharing_strategy(strategy)
    try:
        ds = TensorDataset(fb.arange(24.0).reshape(12, 2), fb.arange(12))
        batches = list(DataLoader(ds, batch_size=5, num_workers=2, collate_fn=lambda b: default_collate(b)))
        # mapped from the workers' shared memory, not copied through the queue's pipe
        assert all(x.is_shared() and y.is_shared() for x, y in batches)
        assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
        assert batches[2][0].tolist() == [[20.0, 21.0], [22.0, 23.0]]
        batches[0][0].add_(1)  # the memory is the main process's to use now that the worker is gone
        assert batches[0][0][0].tolist() == [1.0, 2.0]
    finally:
        mp.set_sharing_strategy("file_descriptor")
    del batches
    gc.collect()
    leftover = [n for n in os.listdir("/dev/shm") if n.startswith("flambeau_")
                and not n.startswith(mine) and int(n.split("_")[1]) not in _live_pids()]
    assert leftover == []


def _live_pids() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def test_small_worker_batches_are_copied_large_ones_shared():
    from flambeau.utils.data import _worker

    small = TensorDataset(fb.zeros(8, 2))
    assert not any(b[0].is_shared() for b in DataLoader(small, batch_size=4, num_workers=1))
    rows = _worker.SHARE_MIN_BYTES // (4 * 64) + 1  # float32 rows of 64: just over the threshold
    large = TensorDataset(fb.ones(rows, 64))
    (batch,) = DataLoader(large, batch_size=rows, num_workers=1)
    assert batch[0].is_shared() and batch[0].shape == (rows, 64) and batch[0].sum().item() == rows * 64
