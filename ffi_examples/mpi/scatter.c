/* Scatter a large tensor from rank 0 across the ranks with MPI_Scatterv, work on the pieces with
 * th, and gather them back with MPI_Gatherv, all on narrowed views of th tensors:
 *
 * 1. Row blocks, narrow(A, 0, ...): each block is contiguous, so Scatterv sends straight from
 *    A's storage (displacement = the view's storageOffset) into each rank's tensor, no copy.
 * 2. Column blocks, narrow(A, 1, ...): NOT contiguous (rows are COLS floats apart), so a plain
 *    Scatterv of "count floats from the view's data pointer" would send the wrong elements.
 *    The way used here: an MPI derived datatype built from the view's stride. One column of A
 *    is MPI_Type_vector(rows, 1, stride(0)) resized to the extent of one float, so a block of
 *    w columns is `w` of them at displacement storageOffset: still no copy on th's side (MPI
 *    walks the strides). The receiver describes its contiguous rows x w tensor the same way
 *    (stride w), so column k lands in column k.
 * 3. The alternative, a contiguous copy: rank 0 copies each column view into a packed buffer
 *    (THFloatTensor_copy into a contiguous view of it: one extra pass over A) and sends plain
 *    floats. Both routes must deliver bit-identical blocks.
 * Rank 0 checks the gathered results element for element (exact: the work is elementwise).
 *
 *   mpicc -std=c99 -O2 scatter.c $(pkg-config --cflags --libs th) -o scatter
 *   TH_NUM_THREADS=1 mpirun -np 4 ./scatter */
#include <TH/TH.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

static const int64_t ROWS = 2003, COLS = 1001; /* 8 MB of float; uneven splits both ways */

/* Where each view starts in its storage, in elements: the displacements of Scatterv/Gatherv
 * (for a datatype whose extent is one element). */
static void displacements(THFloatTensor **views, int n, int *displs) {
  for (int r = 0; r < n; r++) displs[r] = (int)THFloatTensor_storageOffset(views[r]);
}

/* One column of a row-major matrix whose rows are `stride` floats apart, as an MPI datatype
 * whose extent is one float, so consecutive columns are consecutive items. */
static MPI_Datatype column_type(int64_t rows, int64_t stride) {
  MPI_Datatype v, col;
  MPI_Type_vector((int)rows, 1, (int)stride, MPI_FLOAT, &v);
  MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(float), &col);
  MPI_Type_commit(&col);
  MPI_Type_free(&v);
  return col;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = 1;

  /* Rank 0 holds A and the narrowed views that split it; the others hold 1 x 1 placeholders. */
  THFloatTensor *A = THFloatTensor_newWithSize2d(rank == 0 ? ROWS : 1, rank == 0 ? COLS : 1);
  THFloatTensor **rowv = calloc((size_t)size, sizeof *rowv), **colv = calloc((size_t)size, sizeof *colv);
  int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
  if (rank == 0) {
    float *a = THFloatTensor_data(A);
    for (int64_t i = 0; i < ROWS * COLS; i++) a[i] = uniform_pm1(7, (uint64_t)i);
    for (int r = 0; r < size; r++) {
      int64_t lo, hi;
      shard(ROWS, r, size, &lo, &hi);
      rowv[r] = THFloatTensor_newNarrow(A, 0, lo, hi - lo);
      shard(COLS, r, size, &lo, &hi);
      colv[r] = THFloatTensor_newNarrow(A, 1, lo, hi - lo);
      ok &= THFloatTensor_isContiguous(rowv[r]) && !THFloatTensor_isContiguous(colv[r]);
    }
  }
  float *base = THFloatStorage_data(THFloatTensor_storage(A)); /* displacements count from here */

  /* ---- 1. row blocks: contiguous views, sent as they are ---- */
  int64_t lo, hi;
  shard(ROWS, rank, size, &lo, &hi);
  THFloatTensor *mine = THFloatTensor_newWithSize2d(hi - lo, COLS);
  if (rank == 0) {
    displacements(rowv, size, displs);
    for (int r = 0; r < size; r++) counts[r] = (int)THFloatTensor_nElement(rowv[r]); /* floats */
  }
  MPI_Scatterv(base, counts, displs, MPI_FLOAT, THFloatTensor_data(mine), (int)THFloatTensor_nElement(mine),
               MPI_FLOAT, 0, MPI_COMM_WORLD);
  THFloatTensor_mul(mine, mine, 2.0f); /* the work: 2x + 1, in place */
  THFloatTensor_add(mine, mine, 1.0f);
  THFloatTensor *B = THFloatTensor_newWithSize2d(rank == 0 ? ROWS : 1, rank == 0 ? COLS : 1);
  MPI_Gatherv(THFloatTensor_data(mine), (int)THFloatTensor_nElement(mine), MPI_FLOAT,
              THFloatTensor_data(B), counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);

  /* ---- 2. column blocks: non-contiguous views, described by a derived datatype ---- */
  shard(COLS, rank, size, &lo, &hi);
  int64_t w = hi - lo;
  THFloatTensor *cols = THFloatTensor_newWithSize2d(ROWS, w);
  MPI_Datatype send_col = MPI_DATATYPE_NULL, recv_col = column_type(ROWS, w);
  if (rank == 0) {
    send_col = column_type(THFloatTensor_size(colv[0], 0), THFloatTensor_stride(colv[0], 0));
    displacements(colv, size, displs); /* the first column of each block */
    for (int r = 0; r < size; r++) counts[r] = (int)THFloatTensor_size(colv[r], 1); /* columns */
  }
  double t0 = MPI_Wtime();
  MPI_Scatterv(base, counts, displs, send_col, THFloatTensor_data(cols), (int)w, recv_col, 0,
               MPI_COMM_WORLD);
  double t_dtype = MPI_Wtime() - t0;
  THFloatTensor *cols_in = THFloatTensor_newClone(cols); /* kept to compare with route 3 */
  THFloatTensor_mul(cols, cols, 3.0f); /* the work: 3x - 1 */
  THFloatTensor_add(cols, cols, -1.0f);
  THFloatTensor *C = THFloatTensor_newWithSize2d(rank == 0 ? ROWS : 1, rank == 0 ? COLS : 1);
  MPI_Gatherv(THFloatTensor_data(cols), (int)w, recv_col, THFloatTensor_data(C), counts, displs,
              send_col, 0, MPI_COMM_WORLD);

  /* ---- 3. the same column blocks by a contiguous copy on rank 0 ---- */
  THFloatTensor *packed = THFloatTensor_newWithSize1d(rank == 0 ? ROWS * COLS : 1);
  if (rank == 0) {
    t0 = MPI_Wtime();
    int64_t at = 0;
    for (int r = 0; r < size; r++) {
      int64_t wr = THFloatTensor_size(colv[r], 1);
      THFloatTensor *dst = THFloatTensor_newWithStorage2d(THFloatTensor_storage(packed), at, ROWS, wr, wr, 1);
      THFloatTensor_copy(dst, colv[r]); /* strided -> contiguous */
      THFloatTensor_free(dst);
      counts[r] = (int)(ROWS * wr);
      displs[r] = (int)at;
      at += ROWS * wr;
    }
  }
  THFloatTensor *cols2 = THFloatTensor_newWithSize2d(ROWS, w);
  MPI_Scatterv(THFloatTensor_data(packed), counts, displs, MPI_FLOAT, THFloatTensor_data(cols2),
               (int)(ROWS * w), MPI_FLOAT, 0, MPI_COMM_WORLD);
  double t_copy = MPI_Wtime() - t0;
  ok &= THFloatTensor_equal(cols_in, cols2);

  if (rank == 0) { /* the gathered results, computed again on A by th */
    THFloatTensor *want = THFloatTensor_new();
    THFloatTensor_mul(want, A, 2.0f);
    THFloatTensor_add(want, want, 1.0f);
    int rows_ok = THFloatTensor_equal(B, want);
    THFloatTensor_mul(want, A, 3.0f);
    THFloatTensor_add(want, want, -1.0f);
    int cols_ok = THFloatTensor_equal(C, want);
    printf("scatter: %d ranks, %lld x %lld float tensor\n", size, (long long)ROWS, (long long)COLS);
    printf("  row blocks (contiguous views, no copy): gathered result %s\n", rows_ok ? "exact" : "WRONG");
    printf("  column blocks (derived datatype, no copy): gathered result %s\n", cols_ok ? "exact" : "WRONG");
    printf("  scatter of column blocks: %.4f s by datatype, %.4f s by contiguous copy + send\n", t_dtype, t_copy);
    ok &= rows_ok && cols_ok;
    THFloatTensor_free(want);
  }
  ok &= THGetLastErrorCode() == TH_OK;
  if (THGetLastErrorCode() != TH_OK) fprintf(stderr, "rank %d: th error: %s\n", rank, THGetLastError());
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("  both routes delivered identical blocks: %s\n", ok ? "yes" : "NO (FAILED)");

  for (int r = 0; r < size; r++) {
    if (rowv[r]) THFloatTensor_free(rowv[r]);
    if (colv[r]) THFloatTensor_free(colv[r]);
  }
  if (send_col != MPI_DATATYPE_NULL) MPI_Type_free(&send_col);
  MPI_Type_free(&recv_col);
  THFloatTensor_free(cols2);
  THFloatTensor_free(packed);
  THFloatTensor_free(C);
  THFloatTensor_free(cols_in);
  THFloatTensor_free(cols);
  THFloatTensor_free(B);
  THFloatTensor_free(mine);
  THFloatTensor_free(A);
  free(displs);
  free(counts);
  free(colv);
  free(rowv);
  MPI_Finalize();
  return ok ? 0 : 1;
}
