/* Data-parallel least squares with MPI: each rank holds a shard of the rows of X (N x D) and y,
 * computes its part of the gradient with th ops, and MPI_Allreduce sums the parts IN PLACE in
 * the gradient tensor's own storage (THFloatTensor_data: no copy in or out). The parameters
 * start on rank 0 and reach the other ranks by MPI_Bcast straight into their tensor.
 *
 * Model: y ~ X w, loss = |X w - y|^2 / (2N), full-batch gradient descent
 *   g = X^T (X w - y)          (th: addmv for the residual, addmv with X^T for g)
 *   w = w - (lr / N) * g       (after the allreduce: every rank applies the same update)
 *
 * Check: rank 0 gathers every rank's final w (MPI_Gather into a P x D tensor) and also trains
 * in-process on the whole data (the same function, no communicator). Every rank's w must be
 * bit-identical to rank 0's (MPI gives every rank the same reduced sums), and within TOL of the
 * single-process run. The two runs differ only in the grouping of the float sum of the N rows'
 * terms of each gradient component (each rank's partial sums, then MPI's sum of those, versus
 * th's own order over all N rows): a rounding difference of typically ~sqrt(N) float ulp of the
 * terms' size. Gradient descent with lr * eigenvalue in (0, 2) damps a difference in w by
 * |1 - lr * eigenvalue| < 1 per step, so differences do not pile up: measured on 2, 3 and 4
 * ranks they are largest after the first steps (up to 1.7e-6 after 1-5 steps), ~1e-7 after 10,
 * and 0 from 20-40 steps on, as the gradient goes to zero. TOL = 1e-5 covers the worst step
 * with room, whatever ITERS is.
 * The run must also have learned: max |w - w_true| < 0.01 (the noise moves the least-squares
 * solution by ~1e-3).
 *
 *   mpicc -std=c99 -O2 linreg.c $(pkg-config --cflags --libs th) -o linreg
 *   TH_NUM_THREADS=1 mpirun -np 4 ./linreg
 *
 * Exit status 0 on every rank when the checks pass. */
#include <TH/TH.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

enum { D = 16 };                     /* features, the last one a constant 1 (the bias) */
static const int64_t N = 10007;      /* rows: prime, so the shards are uneven */
static const int ITERS = 60;
static const float LR = 1.0f;        /* X^T X / N has eigenvalues ~1/3 and ~1: lr * lambda < 2 */
static const double TOL = 1e-5;      /* |w_mpi - w_single| (see above) */
static const uint64_t SEED_X = 1, SEED_NOISE = 2, SEED_W = 3, SEED_INIT = 4;

static float w_true(int j) { return 2.0f * uniform_pm1(SEED_W, (uint64_t)j); }

/* Rows [lo, hi) of the data: a formula of the global row index, so a shard is the same numbers
 * as those rows of the whole. */
static void make_data(int64_t lo, int64_t hi, THFloatTensor **X, THFloatTensor **y) {
  *X = THFloatTensor_newWithSize2d(hi - lo, D);
  *y = THFloatTensor_newWithSize1d(hi - lo);
  float *x = THFloatTensor_data(*X), *yy = THFloatTensor_data(*y);
  for (int64_t i = lo; i < hi; i++) {
    float *row = x + (i - lo) * D;
    double dotv = 0;
    for (int j = 0; j < D; j++) {
      row[j] = j == D - 1 ? 1.0f : uniform_pm1(SEED_X, (uint64_t)(i * D + j));
      dotv += (double)row[j] * w_true(j);
    }
    yy[i - lo] = (float)(dotv + 0.05 * uniform_pm1(SEED_NOISE, (uint64_t)i));
  }
}

/* Gradient descent on the rows this process holds; with a communicator the gradient (and the
 * loss) are summed over its ranks in place. Returns the final loss over all N rows. */
static double train(THFloatTensor *w, THFloatTensor *X, THFloatTensor *y, MPI_Comm comm) {
  THFloatTensor *res = THFloatTensor_newWithSize1d(THFloatTensor_size(X, 0));
  THFloatTensor *g = THFloatTensor_newWithSize1d(D);
  THFloatTensor *Xt = THFloatTensor_newTranspose(X, 0, 1); /* a view: no copy */
  double loss = 0;
  for (int it = 0; it <= ITERS; it++) {
    THFloatTensor_addmv(res, -1.0f, y, 1.0f, X, w);        /* res = X w - y */
    loss = THFloatTensor_dot(res, res) / (2.0 * (double)N); /* accumulated in double */
    if (comm != MPI_COMM_NULL) MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (it == ITERS) break;
    THFloatTensor_addmv(g, 0.0f, g, 1.0f, Xt, res); /* g = X^T res (beta 0: g is not read) */
    if (comm != MPI_COMM_NULL) /* the sum over ranks, in the tensor's own storage */
      MPI_Allreduce(MPI_IN_PLACE, THFloatTensor_data(g), D, MPI_FLOAT, MPI_SUM, comm);
    THFloatTensor_cadd(w, w, -LR / (float)N, g); /* w -= lr/N * g */
  }
  THFloatTensor_free(Xt);
  THFloatTensor_free(g);
  THFloatTensor_free(res);
  return loss;
}

static void init_params(THFloatTensor *w) {
  float *p = THFloatTensor_data(w);
  for (int j = 0; j < D; j++) p[j] = 0.1f * uniform_pm1(SEED_INIT, (uint64_t)j);
}

int main(int argc, char **argv) {
  /* th's worker threads never call MPI: FUNNELED is enough (see the README's section). */
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int64_t lo, hi;
  shard(N, rank, size, &lo, &hi);
  THFloatTensor *X, *y;
  make_data(lo, hi, &X, &y);

  /* Parameters: rank 0 initializes, the others start with NaN and receive them by MPI_Bcast
   * straight into the tensor's storage (NaN left anywhere would fail the checks below). */
  THFloatTensor *w = THFloatTensor_newWithSize1d(D);
  if (rank == 0) init_params(w);
  else THFloatTensor_fill(w, NAN);
  MPI_Bcast(THFloatTensor_data(w), D, MPI_FLOAT, 0, MPI_COMM_WORLD);

  double t0 = MPI_Wtime();
  double loss = train(w, X, y, MPI_COMM_WORLD);
  double t_mpi = MPI_Wtime() - t0;

  /* Every rank's parameters into one P x D tensor on rank 0 (received in place too). */
  THFloatTensor *all = THFloatTensor_newWithSize2d(rank == 0 ? size : 1, D);
  MPI_Gather(THFloatTensor_data(w), D, MPI_FLOAT, THFloatTensor_data(all), D, MPI_FLOAT, 0,
             MPI_COMM_WORLD);

  int ok = THGetLastErrorCode() == TH_OK;
  if (!ok) fprintf(stderr, "rank %d: th error: %s\n", rank, THGetLastError());
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    /* The single-process run: the whole data, the same code, no communicator. */
    THFloatTensor *Xa, *ya;
    make_data(0, N, &Xa, &ya);
    THFloatTensor *wref = THFloatTensor_newWithSize1d(D);
    init_params(wref);
    t0 = MPI_Wtime();
    double loss_ref = train(wref, Xa, ya, MPI_COMM_NULL);
    double t_ref = MPI_Wtime() - t0;

    int same = 1;
    for (int r = 1; r < size; r++) {
      THFloatTensor *wr = THFloatTensor_newSelect(all, 0, r);
      same &= THFloatTensor_equal(wr, w);
      THFloatTensor_free(wr);
    }
    THFloatTensor *d = THFloatTensor_new();
    THFloatTensor_csub(d, w, 1.0f, wref);
    THFloatTensor_abs(d, d);
    double diff = THFloatTensor_maxall(d);
    double err_true = 0; /* distance to the generating weights: did it learn? */
    for (int j = 0; j < D; j++)
      err_true = fmax(err_true, fabs((double)THFloatTensor_get1d(w, j) - w_true(j)));

    printf("linreg: %d ranks, N=%lld, D=%d, %d steps (MPI thread level %d)\n", size, (long long)N, D,
           ITERS, provided);
    printf("  loss %.9g (single process %.9g), max |w - w_true| = %.3g\n", loss, loss_ref, err_true);
    printf("  every rank's w identical: %s; max |w_mpi - w_single| = %.3g (tolerance %.0e)\n",
           same ? "yes" : "NO", diff, TOL);
    printf("  time: %.3f s on %d ranks, %.3f s single process\n", t_mpi, size, t_ref);
    ok = ok && same && diff <= TOL && err_true < 0.01 && THGetLastErrorCode() == TH_OK;
    if (!ok) fprintf(stderr, "linreg: FAILED\n");
    THFloatTensor_free(d);
    THFloatTensor_free(wref);
    THFloatTensor_free(ya);
    THFloatTensor_free(Xa);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);

  THFloatTensor_free(all);
  THFloatTensor_free(w);
  THFloatTensor_free(y);
  THFloatTensor_free(X);
  MPI_Finalize();
  return ok ? 0 : 1;
}
