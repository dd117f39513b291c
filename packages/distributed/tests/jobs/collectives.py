"""Every collective on every dtype, contiguous and not, against numpy references; run by each rank of a job.

Each rank makes its inputs from its rank number, so every rank can compute every other rank's inputs
and the reference result locally. Prints ``rank R: N checks passed`` at the end; any failure raises.
"""
from __future__ import annotations

import sys
from datetime import timedelta

import ml_dtypes
import numpy as np

import flambeau as fb
import flambeau.distributed as dist

NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
      "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}
INTS = ("uint8", "int8", "int16", "int32", "int64")
HALF = ("float16", "bfloat16")
CHECKS = [0]


def data(rank: int, name: str, shape: tuple, salt: int = 0, small: bool = False) -> np.ndarray:
    rng = np.random.default_rng(1000 * rank + salt)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if name in INTS:
        lo, hi = (1, 3) if small else ((0, 20) if name == "uint8" else (-20, 20))
        return rng.integers(lo, hi, shape).astype(NP[name])
    if name.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(NP[name])
    values = rng.uniform(0.5, 1.5, shape) if small else rng.standard_normal(shape)
    return values.astype(NP[name])


def tensor(a: np.ndarray, contiguous: bool) -> tuple[fb.Tensor, np.ndarray]:
    """A tensor with ``a``'s values, contiguous or a transposed view of a fresh buffer (returned too)."""
    if contiguous or a.ndim != 2:
        base = a.copy()
        return fb.from_numpy(base), base
    base = np.ascontiguousarray(a.T)
    t = fb.from_numpy(base).t()
    assert not t.is_contiguous()
    return t, base


def values(t: fb.Tensor) -> np.ndarray:
    return np.array(t.contiguous()._data)


def close(got: np.ndarray, want: np.ndarray, name: str, what: str) -> None:
    CHECKS[0] += 1
    if name in HALF:
        ok = np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2)
    elif name in ("float32", "complex64"):
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    elif name in ("float64", "complex128"):
        ok = np.allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        ok = np.array_equal(got, want)
    if not ok or got.dtype != want.dtype:
        raise AssertionError(f"rank {dist.get_rank()}: {what} on {name}: got {got!r} ({got.dtype}), want {want!r} "
                             f"({want.dtype})")


def reference(inputs: list[np.ndarray], op: dist.ReduceOp, name: str) -> np.ndarray:
    stack = np.stack(inputs)
    if name in HALF:
        stack = stack.astype(np.float32)
    n = len(inputs)
    if name == "bool":
        r = {dist.ReduceOp.SUM: stack.any(0), dist.ReduceOp.AVG: stack.any(0), dist.ReduceOp.MAX: stack.any(0),
             dist.ReduceOp.BOR: stack.any(0), dist.ReduceOp.PRODUCT: stack.all(0), dist.ReduceOp.MIN: stack.all(0),
             dist.ReduceOp.BAND: stack.all(0), dist.ReduceOp.BXOR: np.logical_xor.reduce(stack, 0)}[op]
        return r
    if op is dist.ReduceOp.SUM:
        r = stack.sum(0, dtype=stack.dtype)
    elif op is dist.ReduceOp.AVG:
        s = stack.sum(0, dtype=stack.dtype)
        r = s / n if s.dtype.kind in "fc" else (np.sign(s) * (np.abs(s) // n)).astype(s.dtype)
    elif op is dist.ReduceOp.PRODUCT:
        r = stack.prod(0, dtype=stack.dtype)
    elif op is dist.ReduceOp.MIN:
        r = stack.min(0)
    elif op is dist.ReduceOp.MAX:
        r = stack.max(0)
    elif op is dist.ReduceOp.BAND:
        r = np.bitwise_and.reduce(stack, 0)
    elif op is dist.ReduceOp.BOR:
        r = np.bitwise_or.reduce(stack, 0)
    else:
        r = np.bitwise_xor.reduce(stack, 0)
    return r.astype(NP[name])


def ops_for(name: str) -> list[dist.ReduceOp]:
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.PRODUCT]
    if not name.startswith("complex"):
        ops += [dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    if name in INTS or name == "bool":
        ops += [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    return ops


def check_reductions(rank: int, n: int, name: str) -> None:
    for salt, op in enumerate(ops_for(name)):
        small = op is dist.ReduceOp.PRODUCT
        for contiguous in (True, False):
            shape = (3, 4)
            inputs = [data(r, name, shape, salt, small) for r in range(n)]
            want = reference(inputs, op, name)
            t, base = tensor(inputs[rank], contiguous)
            version = t._version
            work = dist.all_reduce(t, op=op, async_op=(salt % 2 == 1))
            if work is not None:
                work.wait()
                assert work.is_completed()
            close(values(t), want, name, f"all_reduce {op.name} contiguous={contiguous}")
            assert t._version > version, "all_reduce did not bump the version counter"
            if not contiguous:  # the result landed in the viewed storage
                close(np.ascontiguousarray(base.T), want, name, "all_reduce through a view")
            # reduce to the last rank: the others keep their input
            t, _ = tensor(inputs[rank], contiguous)
            dist.reduce(t, dst=n - 1, op=op)
            close(values(t), want if rank == n - 1 else inputs[rank], name, f"reduce {op.name}")
        # reduce_scatter / reduce_scatter_tensor: rank r keeps chunk r of the reduction
        chunks = [[data(r, name, (2, 3), 50 + salt + c, small) for c in range(n)] for r in range(n)]
        want = reference([np.stack(chunks[r]) for r in range(n)], op, name)[rank]
        out = fb.from_numpy(np.zeros((2, 3), NP[name]))
        dist.reduce_scatter(out, [tensor(c, True)[0] for c in chunks[rank]], op=op)
        close(values(out), want, name, f"reduce_scatter {op.name}")
        out, _ = tensor(np.zeros((3, 2), NP[name]).T, False)
        stacked = fb.from_numpy(np.concatenate(chunks[rank]).copy())
        w = dist.reduce_scatter_tensor(out, stacked, op=op, async_op=True)
        w.wait()
        close(values(out), want, name, f"reduce_scatter_tensor {op.name} into a view")


def check_movement(rank: int, n: int, name: str) -> None:
    shape = (3, 5)
    inputs = [data(r, name, shape, 7) for r in range(n)]
    for contiguous in (True, False):
        # broadcast from the last rank
        t, _ = tensor(inputs[rank], contiguous)
        dist.broadcast(t, src=n - 1)
        close(values(t), inputs[n - 1], name, f"broadcast contiguous={contiguous}")
        # all_gather into a list
        src, _ = tensor(inputs[rank], contiguous)
        outs = [fb.from_numpy(np.zeros(shape, NP[name])) for _ in range(n)]
        dist.all_gather(outs, src)
        for r in range(n):
            close(values(outs[r]), inputs[r], name, f"all_gather[{r}]")
        # all_gather_into_tensor: stacked
        big = fb.from_numpy(np.zeros((n * 3, 5), NP[name]))
        dist.all_gather_into_tensor(big, src)
        close(values(big), np.concatenate(inputs), name, "all_gather_into_tensor")
        # gather to rank 0
        lst = [fb.from_numpy(np.zeros(shape, NP[name])) for _ in range(n)] if rank == 0 else None
        dist.gather(src, lst, dst=0)
        if rank == 0:
            for r in range(n):
                close(values(lst[r]), inputs[r], name, f"gather[{r}]")
        # scatter from rank 0: rank r gets piece r
        pieces = [data(0, name, shape, 20 + r) for r in range(n)]
        out, _ = tensor(np.zeros(shape, NP[name]), contiguous)
        dist.scatter(out, [fb.from_numpy(p) for p in pieces] if rank == 0 else None, src=0)
        close(values(out), pieces[rank], name, "scatter")
    # all_to_all: rank s sends piece (s, r) to rank r; uneven sizes
    piece = {(s, r): data(s, name, (s + r + 1,), 30 + r) for s in range(n) for r in range(n)}
    outs = [fb.from_numpy(np.zeros(s + rank + 1, NP[name])) for s in range(n)]
    dist.all_to_all(outs, [fb.from_numpy(piece[(rank, r)]) for r in range(n)])
    for s in range(n):
        close(values(outs[s]), piece[(s, rank)], name, f"all_to_all from {s}")
    # all_to_all_single with split sizes: rank s sends rows[s][r] rows to rank r
    rows = [[(s + 2 * r) % 3 + 1 for r in range(n)] for s in range(n)]
    mine = data(rank, name, (sum(rows[rank]), 2), 40)
    theirs = [data(s, name, (sum(rows[s]), 2), 40) for s in range(n)]
    want = np.concatenate([theirs[s][sum(rows[s][:rank]):sum(rows[s][:rank + 1])] for s in range(n)])
    out = fb.from_numpy(np.zeros(want.shape, NP[name]))
    dist.all_to_all_single(out, fb.from_numpy(mine), output_split_sizes=[rows[s][rank] for s in range(n)],
                           input_split_sizes=rows[rank])
    close(values(out), want, name, "all_to_all_single")
    # send/recv around a ring, and isend/irecv the other way
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    got = fb.from_numpy(np.zeros(shape, NP[name]))
    if rank % 2 == 0:
        dist.send(fb.from_numpy(inputs[rank]), dst=nxt)
        sender = dist.recv(got, src=prv)
    else:
        sender = dist.recv(got, src=prv)
        dist.send(fb.from_numpy(inputs[rank]), dst=nxt)
    assert sender == prv
    close(values(got), inputs[prv], name, "send/recv")
    got, _ = tensor(np.zeros(shape, NP[name]), False)
    works = [dist.isend(tensor(inputs[rank], False)[0], dst=prv), dist.irecv(got, src=nxt)]
    for w in works:
        w.wait()
    close(values(got), inputs[nxt], name, "isend/irecv non-contiguous")


def _permuted(a: np.ndarray, perm: tuple | None) -> fb.Tensor:
    """A tensor with ``a``'s values: contiguous, or a permuted view of a buffer laid out another way."""
    if perm is None:
        return fb.from_numpy(a.copy())
    t = fb.from_numpy(np.ascontiguousarray(np.transpose(a, np.argsort(perm)))).permute(*perm)
    assert tuple(t.shape) == a.shape and not t.is_contiguous()
    return t


def check_shapes(rank: int, n: int) -> None:
    """0-d, empty, 1-d and permuted 3-d tensors through the collectives that move and reduce."""
    for name in ("float32", "int64", "bfloat16"):
        for shape, perm in (((), None), ((0,), None), ((5,), None), ((2, 0, 3), None), ((2, 3, 4), (2, 0, 1)),
                            ((3, 1, 2), (1, 2, 0))):
            inputs = [data(r, name, shape, 60) for r in range(n)]
            t = _permuted(inputs[rank], perm)
            dist.all_reduce(t)
            close(values(t), reference(inputs, dist.ReduceOp.SUM, name), name, f"all_reduce shape {shape} {perm}")
            t = _permuted(inputs[rank], perm)
            dist.broadcast(t, src=n - 1)
            close(values(t), inputs[n - 1], name, f"broadcast shape {shape} {perm}")
            big = fb.from_numpy(np.zeros((n, *shape), NP[name]))
            dist.all_gather_into_tensor(big, _permuted(inputs[rank], perm))
            close(values(big), np.stack(inputs), name, f"all_gather_into_tensor shape {shape}")


def check_objects(rank: int, n: int) -> None:
    objs = [{"rank": 0, "list": [1, 2.5, "x"]}, None, ("tuple", 3)]
    lst = objs if rank == 0 else [None, None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == objs, lst
    gathered = [None] * n
    dist.all_gather_object(gathered, {"r": rank, "pad": "y" * rank * 10})
    assert gathered == [{"r": r, "pad": "y" * r * 10} for r in range(n)], gathered
    out = [None] * n if rank == n - 1 else None
    dist.gather_object(("from", rank), out, dst=n - 1)
    if rank == n - 1:
        assert out == [("from", r) for r in range(n)], out
    got = [None]
    dist.scatter_object_list(got, [f"for {r}" * (r + 1) for r in range(n)] if rank == 0 else None, src=0)
    assert got == [f"for {rank}" * (rank + 1)], got
    CHECKS[0] += 4


def check_groups_and_errors(rank: int, n: int) -> None:
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    assert dist.get_world_size() == n and dist.get_rank() == rank
    assert dist.group.WORLD is not None
    # a group of the even ranks
    evens = list(range(0, n, 2))
    g = dist.new_group(evens)
    if rank in evens:
        t = fb.tensor([float(rank)])
        dist.all_reduce(t, group=g)
        assert t.item() == float(sum(evens)), t
        assert dist.get_rank(g) == evens.index(rank) and dist.get_world_size(g) == len(evens)
        assert dist.get_process_group_ranks(g) == evens
        b = fb.tensor([float(rank)])
        dist.broadcast(b, src=evens[-1], group=g)  # global rank of the root
        assert b.item() == float(evens[-1])
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(g) == -1
    # 0-d tensors and empty ones
    s = fb.tensor(float(rank + 1))
    dist.all_reduce(s)
    assert s.item() == n * (n + 1) / 2, s
    s = fb.tensor(rank, dtype=fb.int64)
    dist.broadcast(s, src=n - 1)
    assert s.item() == n - 1, s
    e = fb.zeros(0, 3)
    dist.all_reduce(e)
    dist.broadcast(e, src=0)
    CHECKS[0] += 4
    dist.barrier()
    # mismatched sizes: every rank raises, naming the ranks
    t = fb.zeros(3 + rank)
    try:
        dist.all_reduce(t)
    except ValueError as e:
        assert "rank 0: 12 bytes" in str(e) and "rank 1: 16 bytes" in str(e), str(e)
    else:
        raise AssertionError("mismatched all_reduce did not raise")
    # a mismatched dtype too
    t = fb.zeros(3, dtype=fb.float64 if rank == 1 else fb.float32)
    try:
        dist.broadcast(t, src=0)
    except ValueError as e:
        assert "flambeau.float64" in str(e), str(e)
    else:
        raise AssertionError("mismatched broadcast did not raise")
    # refused before anything is sent
    for bad, err in ((lambda: dist.all_reduce(fb.zeros(2), op=dist.ReduceOp.BAND), ValueError),
                     (lambda: dist.all_reduce(fb.zeros(2, dtype=fb.complex64), op=dist.ReduceOp.MAX), ValueError),
                     (lambda: dist.broadcast(fb.zeros(2), src=n), ValueError),
                     (lambda: dist.all_reduce([1, 2]), TypeError),
                     (lambda: dist.all_gather([fb.zeros(2)], fb.zeros(2)), ValueError),
                     (lambda: dist.send(fb.zeros(2), dst=rank), ValueError)):
        try:
            bad()
        except err:
            CHECKS[0] += 1
        else:
            raise AssertionError(f"no {err.__name__}")
    dist.barrier()
    # recv of a larger message than the buffer: a clear error, not a silent truncation
    if rank == 0:
        dist.send(fb.zeros(4), dst=1)
    elif rank == 1:
        try:
            dist.recv(fb.zeros(2), src=0)
        except dist.DistBackendError as e:
            assert "recv" in str(e), str(e)
        else:
            raise AssertionError("a truncated recv did not raise")
    dist.barrier()


def main() -> None:
    dist.init_process_group(timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    for name in NP:
        check_reductions(rank, n, name)
        check_movement(rank, n, name)
    check_shapes(rank, n)
    check_objects(rank, n)
    check_groups_and_errors(rank, n)
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {rank}: {CHECKS[0]} checks passed", flush=True)


if __name__ == "__main__":
    sys.exit(main())
