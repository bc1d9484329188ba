"""Data-parallel least squares with mpi4py on th tensors: the Python twin of linreg.c.

Each rank holds a shard of the rows of X (N x D) and y, computes its part of the gradient with th
ops, and `comm.Allreduce(MPI.IN_PLACE, g)` sums the parts in the th tensor `g` itself. The
parameters start on rank 0 and reach the others by `comm.Bcast(w)` into their th tensor.

mpi4py takes th tensors directly: th tensors have no Python buffer protocol (a Python class
can only offer one from Python 3.12, PEP 688), so mpi4py goes through `__dlpack__`, which th
exports without copying (a kDLCPU DLManagedTensorVersioned over the tensor's storage). The
checks below assert that the memory MPI sees is the tensor's own: the address mpi4py obtains
from the tensor equals `t.data_ptr()`, and the in-place Allreduce changes the tensor itself.

Tolerance: see linreg.c (every rank bit-identical; 1e-5 from the single-process run, which
differs only in the order the rows' gradient terms are summed).

    TH_NUM_THREADS=1 mpirun -np 4 python linreg.py
"""

import sys
import time

import numpy as np
from mpi4py import MPI

import th

D = 16  # features, the last one a constant 1 (the bias)
N = 10007  # rows: prime, so the shards are uneven
ITERS = 60
LR = 1.0  # X^T X / N has eigenvalues ~1/3 and ~1: lr * lambda < 2
TOL = 1e-5
SEED_X, SEED_NOISE, SEED_W, SEED_INIT = 1, 2, 3, 4
M64 = (1 << 64) - 1


def uniform_pm1(seed, idx):
    """common.h's formula (splitmix64, top 24 bits -> [-1, 1) on a 2^-23 grid), vectorized:
    the same float32 values as the C examples."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15) * (np.asarray(idx, dtype=np.uint64) + np.uint64(1))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 8388608.0) - np.float32(1.0)


W_TRUE = 2.0 * uniform_pm1(SEED_W, np.arange(D)).astype(np.float64)


def shard(n, rank, size):
    q, r = divmod(n, size)
    lo = rank * q + min(rank, r)
    return lo, lo + q + (1 if rank < r else 0)


def make_data(lo, hi):
    """Rows [lo, hi): a formula of the global row index, so a shard is those rows of the whole.
    The arrays are made in numpy and handed to th without a copy (th.from_numpy)."""
    i = np.arange(lo, hi, dtype=np.uint64)
    x = uniform_pm1(SEED_X, i[:, None] * np.uint64(D) + np.arange(D, dtype=np.uint64))
    x[:, D - 1] = 1.0
    y = (x.astype(np.float64) @ W_TRUE + 0.05 * uniform_pm1(SEED_NOISE, i)).astype(np.float32)
    return th.from_numpy(x), th.from_numpy(y)


def init_params():
    return th.from_numpy(0.1 * uniform_pm1(SEED_INIT, np.arange(D)))


def check_zero_copy(comm, g):
    """The memory mpi4py sees is g's own, and an in-place Allreduce changes g itself."""
    buf = MPI.buffer.frombuffer(g)  # mpi4py's own buffer acquisition (here through __dlpack__)
    assert buf.address == g.data_ptr() and buf.nbytes == g.numel() * g.itemsize and not buf.readonly, \
        (hex(buf.address), hex(g.data_ptr()))
    buf.release()
    local = g.clone()
    expect = th.empty(D)  # the same sum computed out of place, into another th tensor
    comm.Allreduce(local, expect, op=MPI.SUM)
    ptr = g.data_ptr()
    comm.Allreduce(MPI.IN_PLACE, g, op=MPI.SUM)
    assert g.data_ptr() == ptr
    np.testing.assert_allclose(np.asarray(g), np.asarray(expect), rtol=1e-6, atol=1e-3)
    if comm.size > 1:
        assert not np.array_equal(np.asarray(g), np.asarray(local)), "the in-place Allreduce left g unchanged"


def train(w, x, y, comm=None):
    """Gradient descent on the rows this process holds; with a communicator the gradient (and
    the loss) are summed over its ranks in place. Returns the final loss over all N rows."""
    for it in range(ITERS + 1):
        res = (x * w).sum(1) - y  # X w - y (w broadcasts over the rows)
        loss = (res * res).sum() / (2.0 * N)  # sumall: accumulated in double
        if comm is not None:
            loss = comm.allreduce(loss, op=MPI.SUM)
        if it == ITERS:
            return loss
        g = (x * res.unsqueeze(1)).sum(0)  # X^T res, with th's broadcasting and reduction
        if comm is not None:
            if it == 0:
                check_zero_copy(comm, g)
            else:
                comm.Allreduce(MPI.IN_PLACE, g, op=MPI.SUM)  # in g's own storage
        w -= g * (LR / N)  # in place (csub)


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    x, y = make_data(*shard(N, rank, size))

    # rank 0 initializes; the others start with NaN and receive w by Bcast into the tensor
    w = init_params() if rank == 0 else th.full((D,), float("nan"))
    ptr = w.data_ptr()
    comm.Bcast(w, root=0)
    assert w.data_ptr() == ptr and not np.isnan(np.asarray(w)).any()

    t0 = time.perf_counter()
    loss = train(w, x, y, comm)
    t_mpi = time.perf_counter() - t0

    every = th.empty(size, D) if rank == 0 else None  # every rank's w, gathered in place
    comm.Gather(w, every, root=0)
    ok = True
    if rank == 0:
        xa, ya = make_data(0, N)
        wref = init_params()
        t0 = time.perf_counter()
        loss_ref = train(wref, xa, ya)
        t_ref = time.perf_counter() - t0
        a, ref = np.asarray(every), np.asarray(wref)
        same = all(np.array_equal(a[r], a[0]) for r in range(size))
        diff = float(np.abs(a[0].astype(np.float64) - ref).max())
        err_true = float(np.abs(a[0] - W_TRUE).max())
        print(f"linreg.py: {size} ranks, N={N}, D={D}, {ITERS} steps")
        print(f"  loss {loss:.9g} (single process {loss_ref:.9g}), max |w - w_true| = {err_true:.3g}")
        print(f"  every rank's w identical: {'yes' if same else 'NO'}; "
              f"max |w_mpi - w_single| = {diff:.3g} (tolerance {TOL:.0e})")
        print(f"  time: {t_mpi:.3f} s on {size} ranks, {t_ref:.3f} s single process")
        print("  zero copy: the buffer mpi4py takes from a th tensor is the tensor's memory: yes")
        ok = same and diff <= TOL and err_true < 0.01
        if not ok:
            print("linreg.py: FAILED", file=sys.stderr)
    ok = comm.bcast(ok, root=0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
