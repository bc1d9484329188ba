"""Scatterv/Gatherv of a large th tensor on narrowed views with mpi4py: the Python twin of scatter.c.

1. Row blocks (narrow along dim 0) are contiguous: Scatterv sends from A itself, each block at
   its view's storage_offset(), into each rank's th tensor.
2. Column blocks (narrow along dim 1) are not contiguous. mpi4py refuses such a view as a
   buffer (th exports it through DLPack with its strides; mpi4py wants contiguous memory), and
   must: "count floats from the view's first element" would be the wrong elements. The way
   used: a derived datatype built from the view's stride (one column = a vector of `rows`
   floats `stride(0)` apart, resized to one float), sent from A itself: no copy on th's side.
3. The alternative, a contiguous copy (each view copied into its slot of one packed buffer:
   one extra pass over A on rank 0), must deliver the same blocks.

    TH_NUM_THREADS=1 mpirun -np 4 python scatter.py
"""

import sys

import numpy as np
from mpi4py import MPI

import th
from linreg import shard, uniform_pm1

ROWS, COLS = 2003, 1001


def column_type(rows, stride):
    """One column of a row-major matrix with rows `stride` floats apart, extent one float."""
    return MPI.FLOAT.Create_vector(rows, 1, stride).Create_resized(0, 4).Commit()


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    A = rowv = colv = None
    if rank == 0:
        A = th.from_numpy(uniform_pm1(7, np.arange(ROWS * COLS, dtype=np.uint64)).reshape(ROWS, COLS))
        rowv = [A.narrow(0, lo, hi - lo) for lo, hi in (shard(ROWS, r, size) for r in range(size))]
        colv = [A.narrow(1, lo, hi - lo) for lo, hi in (shard(COLS, r, size) for r in range(size))]
        assert all(v.is_contiguous() for v in rowv) and not any(v.is_contiguous() for v in colv)
        try:
            MPI.buffer.frombuffer(colv[0])
            raise AssertionError("mpi4py accepted a non-contiguous view as a flat buffer")
        except BufferError:
            pass

    # 1. row blocks: contiguous views, straight from A's storage
    lo, hi = shard(ROWS, rank, size)
    mine = th.empty(hi - lo, COLS)
    spec = None
    if rank == 0:
        spec = [A, [v.numel() for v in rowv], [v.storage_offset() for v in rowv], MPI.FLOAT]
    comm.Scatterv(spec, mine, root=0)
    mine *= 2.0
    mine += 1.0
    B = th.empty(ROWS, COLS) if rank == 0 else None
    if rank == 0:
        spec[0] = B
    comm.Gatherv(mine, spec, root=0)

    # 2. column blocks: a derived datatype from the views' stride, sent from A itself
    lo, hi = shard(COLS, rank, size)
    w = hi - lo
    cols = th.empty(ROWS, w)
    recv_col = column_type(ROWS, w)
    send_col = None
    if rank == 0:
        send_col = column_type(colv[0].size(0), colv[0].stride(0))
        spec = [A, [v.size(1) for v in colv], [v.storage_offset() for v in colv], send_col]
    comm.Scatterv(spec, [cols, w, recv_col], root=0)
    cols_in = cols.clone()
    cols *= 3.0
    cols -= 1.0
    C = th.empty(ROWS, COLS) if rank == 0 else None
    if rank == 0:
        spec[0] = C
    comm.Gatherv([cols, w, recv_col], spec, root=0)

    # 3. the same blocks by a contiguous copy of each view on rank 0
    if rank == 0:
        flat = th.empty(ROWS * COLS)  # the blocks one after the other, each row-major
        at, counts, displs = 0, [], []
        for v in colv:
            flat.narrow(0, at, v.numel()).view(*v.shape).copy_(v)  # one copy: strided -> contiguous
            counts.append(v.numel())
            displs.append(at)
            at += v.numel()
        spec = [flat, counts, displs, MPI.FLOAT]
    cols2 = th.empty(ROWS, w)
    comm.Scatterv(spec, cols2, root=0)
    ok = bool(np.array_equal(np.asarray(cols_in), np.asarray(cols2)))

    if rank == 0:
        a = np.asarray(A)
        rows_ok = np.array_equal(np.asarray(B), np.asarray(A * 2.0 + 1.0)) and np.isfinite(a).all()
        cols_ok = np.array_equal(np.asarray(C), np.asarray(A * 3.0 - 1.0))
        print(f"scatter.py: {size} ranks, {ROWS} x {COLS} float tensor")
        print(f"  row blocks (contiguous views, no copy): gathered result {'exact' if rows_ok else 'WRONG'}")
        print(f"  column blocks (derived datatype, no copy): gathered result {'exact' if cols_ok else 'WRONG'}")
        ok = ok and rows_ok and cols_ok
        send_col.Free()
    recv_col.Free()
    ok = comm.allreduce(ok, op=MPI.LAND)
    if rank == 0:
        print(f"  both routes delivered identical blocks: {'yes' if ok else 'NO (FAILED)'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
