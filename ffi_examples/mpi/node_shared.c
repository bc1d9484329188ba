/* One copy of a data set per node instead of one per rank: th's shared-memory storages across
 * the MPI ranks of a node.
 *
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks that share a node. The first rank
 * of each node creates a THRefcountedMapAllocator storage on a POSIX shared-memory segment
 * (TH_ALLOCATOR_MAPPED_SHAREDMEM | EXCLUSIVE), fills it, and broadcasts the segment's name on
 * the node communicator; the others open the same bytes (SHAREDMEM | NOCREATE, size 0 = the
 * whole segment). Every rank then works on a narrowed view of its rows of the one shared
 * tensor: column sums by th, summed over all ranks by MPI_Allreduce in place, must equal the
 * node leader's column sums of the whole tensor (tolerance: only the order of the float sums
 * differs, see linreg.c). A write by one rank is seen by the others (the same memory), and the
 * segment leaves /dev/shm when the last rank frees its tensor.
 *
 *   mpicc -std=c99 -O2 node_shared.c $(pkg-config --cflags --libs th) -o node_shared
 *   TH_NUM_THREADS=1 mpirun -np 4 ./node_shared */
#define _POSIX_C_SOURCE 200809L
#include <TH/TH.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

static const int64_t ROWS = 50021, COLS = 64; /* 12.8 MB, once per node */

static THFloatTensor *shared_tensor(const char *name, int create) {
  int flags = TH_ALLOCATOR_MAPPED_SHAREDMEM | (create ? TH_ALLOCATOR_MAPPED_EXCLUSIVE : TH_ALLOCATOR_MAPPED_NOCREATE);
  THMapAllocatorContext *ctx = THMapAllocatorContext_new(name, flags);
  if (ctx == NULL) return NULL;
  THFloatStorage *s = THFloatStorage_newWithAllocator(create ? ROWS * COLS : 0, &THRefcountedMapAllocator, ctx);
  if (s == NULL) {
    THMapAllocatorContext_free(ctx);
    return NULL;
  }
  THFloatTensor *t = THFloatStorage_size(s) >= ROWS * COLS ? THFloatTensor_newWithStorage2d(s, 0, ROWS, -1, COLS, -1) : NULL;
  THFloatStorage_free(s); /* the tensor holds it */
  return t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, nrank, nsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);

  char name[64] = {0};
  THFloatTensor *X = NULL;
  if (nrank == 0) {
    snprintf(name, sizeof name, "/th_mpi_%ld_%d", (long)getpid(), rank);
    X = shared_tensor(name, 1);
    if (X != NULL) {
      float *x = THFloatTensor_data(X);
      for (int64_t i = 0; i < ROWS * COLS; i++) x[i] = uniform_pm1(11, (uint64_t)i);
    } else {
      name[0] = 0; /* tells the others */
    }
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, node);
  if (nrank != 0 && name[0]) X = shared_tensor(name, 0);
  int ok = X != NULL;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (rank == 0) fprintf(stderr, "node_shared: could not create/open the segment: %s\n", THGetLastError());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Each rank's rows of the node's tensor (the ranks of the world split all rows; with
   * several nodes each node holds the whole tensor and its ranks use their part of it). */
  int64_t lo, hi;
  shard(ROWS, rank, size, &lo, &hi);
  THFloatTensor *mine = THFloatTensor_newNarrow(X, 0, lo, hi - lo); /* a view of shared memory */
  THFloatTensor *colsum = THFloatTensor_new();
  THFloatTensor_sum(colsum, mine, 0, 0);
  MPI_Allreduce(MPI_IN_PLACE, THFloatTensor_data(colsum), (int)COLS, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

  /* Same memory: the last rank of the node writes, after a barrier everyone reads it. */
  MPI_Barrier(node);
  if (nrank == nsize - 1) THFloatTensor_set2d(X, ROWS - 1, COLS - 1, 1234.5f);
  MPI_Barrier(node);
  ok = THFloatTensor_get2d(X, ROWS - 1, COLS - 1) == 1234.5f;
  MPI_Barrier(node); /* everyone has read it */

  if (rank == 0) {
    /* The leader's column sums of the whole tensor (before the write above changed one value). */
    THFloatTensor_set2d(X, ROWS - 1, COLS - 1, uniform_pm1(11, (uint64_t)(ROWS * COLS - 1)));
    THFloatTensor *whole = THFloatTensor_new(), *d = THFloatTensor_new();
    THFloatTensor_sum(whole, X, 0, 0);
    THFloatTensor_csub(d, colsum, 1.0f, whole);
    THFloatTensor_abs(d, d);
    double diff = THFloatTensor_maxall(d);
    /* th sums in double and rounds once; the sharded route rounds each rank's partial sum to
     * float and MPI adds those in float: a few float ulp of |column sum| <~ 3 sqrt(ROWS) ~ 700,
     * i.e. ~1e-4. */
    printf("node_shared: %d ranks, %d on this node share one %lld x %lld segment (%s)\n", size, nsize,
           (long long)ROWS, (long long)COLS, name);
    printf("  a write by one rank seen by all: %s; column sums by shard vs whole: max diff %.3g (tolerance 1e-3)\n",
           ok ? "yes" : "NO", diff);
    ok = ok && diff <= 1e-3;
    THFloatTensor_free(d);
    THFloatTensor_free(whole);
  }
  THFloatTensor_free(colsum);
  THFloatTensor_free(mine);
  THFloatTensor_free(X);
  MPI_Barrier(node); /* every rank of the node has freed its tensor: the segment is gone */
  if (nrank == 0) {
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd >= 0) close(fd);
    if (rank == 0) printf("  segment removed after the last rank freed it: %s\n", fd < 0 ? "yes" : "NO");
    ok = ok && fd < 0;
  }
  ok = ok && THGetLastErrorCode() == TH_OK;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return ok ? 0 : 1;
}
