/* Trains a small LeNet-style network on scikit-learn's 8x8 digits with th's THNN layers, using
 * nothing but <TH/TH.h>:
 *
 *   conv 3x3 (1 -> 8, pad 1) - ReLU - max pool 2x2 - conv 3x3 (8 -> 16, pad 1) - ReLU
 *   - max pool 2x2 - linear (64 -> 10) - LogSoftMax - ClassNLL; plain SGD on mini-batches.
 *
 * Usage: digits DATA_DIR [OUT_DIR [EPOCHS]]
 *   DATA_DIR holds x.npy (1797 x 64 float64, pixels / 16) and y.npy (1797 int64 labels 0..9),
 *   written by tests/nn/test_digits.py from the copy that scikit-learn ships (shuffled once,
 *   as the images come grouped by writer). The first four fifths train, the last fifth is held
 *   out. With OUT_DIR, the initial weights are saved there as .npy files (so another framework
 *   can start from the same point) and every step's loss is printed; EPOCHS (default 20)
 *   shortens the run. Build with -DDIGITS_DOUBLE for Double instead of Float.
 *
 * Every call is checked: a call that fails records an error (THGetLastErrorCode) and leaves its
 * outputs alone, so the program reports the first failure and stops. */
#include <TH/TH.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef DIGITS_DOUBLE
#define Real Double
#else
#define Real Float
#endif

enum { BATCH = 32, EPOCHS = 20, SEED = 1234, C1 = 8, C2 = 16, CLASSES = 10 };
static const double LR = 0.1;

static void check(const char *what) {
  if (THGetLastErrorCode() != TH_OK) {
    fprintf(stderr, "%s failed: %s\n", what, THGetLastError());
    exit(1);
  }
}

/* A learnable tensor and its gradient, initialized as torch7's reset(): uniform in
 * +-1/sqrt(fan_in). */
typedef struct {
  THTensor *w, *g;
  const char *name;
} Param;

static Param param(THGenerator *gen, const char *name, int64_t n0, int64_t n1, double fan_in) {
  Param p;
  p.name = name;
  p.w = n1 ? THTensor_(newWithSize2d)(n0, n1) : THTensor_(newWithSize1d)(n0);
  p.g = n1 ? THTensor_(newWithSize2d)(n0, n1) : THTensor_(newWithSize1d)(n0);
  THTensor_(uniform)(p.w, gen, -1.0 / sqrt(fan_in), 1.0 / sqrt(fan_in));
  THTensor_(zero)(p.g);
  check("init");
  return p;
}

/* The network's parameters, and the activations and gradients of one batch (resized by the
 * layers as the batch size changes). */
typedef struct {
  Param w1, b1, w2, b2, w3, b3;
  THTensor *h1, *r1, *p1, *h2, *r2, *p2, *flat, *logits, *logp, *loss, *total_weight;
  THTensor *g_logp, *g_logits, *g_flat, *g_p2, *g_r2, *g_h2, *g_p1, *g_r1, *g_h1;
  THTensor *finput, *fgrad, *ones;
  THLongTensor *i1, *i2;
} Net;

static THTensor *fresh(void) { return THTensor_(new)(); }

static void forward(Net *n, THTensor *x, THLongTensor *y) {
  THNN_(SpatialConvolutionMM_updateOutput)(NULL, x, n->h1, n->w1.w, n->b1.w, n->finput, n->fgrad, 3, 3, 1, 1, 1, 1);
  THNN_(Threshold_updateOutput)(NULL, n->h1, n->r1, 0, 0, 0);
  THNN_(SpatialMaxPooling_updateOutput)(NULL, n->r1, n->p1, n->i1, 2, 2, 2, 2, 0, 0, 0);
  THNN_(SpatialConvolutionMM_updateOutput)(NULL, n->p1, n->h2, n->w2.w, n->b2.w, n->finput, n->fgrad, 3, 3, 1, 1, 1, 1);
  THNN_(Threshold_updateOutput)(NULL, n->h2, n->r2, 0, 0, 0);
  THNN_(SpatialMaxPooling_updateOutput)(NULL, n->r2, n->p2, n->i2, 2, 2, 2, 2, 0, 0, 0);
  check("forward (features)");
  /* p2 is contiguous: flat views its elements as batch x 64 */
  int64_t b = THTensor_(size)(n->p2, 0);
  THTensor_(set)(n->flat, n->p2);
  THTensor_(resize2d)(n->flat, b, C2 * 2 * 2);
  THNN_(Linear_updateOutput)(NULL, n->flat, n->logits, n->w3.w, n->b3.w, n->ones);
  THNN_(LogSoftMax_updateOutput)(NULL, n->logits, n->logp);
  if (y) THNN_(ClassNLLCriterion_updateOutput)(NULL, n->logp, y, n->loss, 1, NULL, n->total_weight, -100);
  check("forward");
}

static void backward(Net *n, THTensor *x, THLongTensor *y) {
  THNN_(ClassNLLCriterion_updateGradInput)(NULL, n->logp, y, n->g_logp, 1, NULL, n->total_weight, -100);
  THNN_(LogSoftMax_updateGradInput)(NULL, n->logits, n->g_logp, n->g_logits, n->logp);
  THNN_(Linear_updateGradInput)(NULL, n->flat, n->g_logits, n->g_flat, n->w3.w);
  THNN_(Linear_accGradParameters)(NULL, n->flat, n->g_logits, n->g_flat, n->w3.w, n->b3.w, n->w3.g, n->b3.g, n->ones, 1);
  THTensor_(set)(n->g_p2, n->g_flat);
  THTensor_(resizeAs)(n->g_p2, n->p2);
  check("backward (classifier)");
  THNN_(SpatialMaxPooling_updateGradInput)(NULL, n->r2, n->g_p2, n->g_r2, n->i2, 2, 2, 2, 2, 0, 0, 0);
  THNN_(Threshold_updateGradInput)(NULL, n->h2, n->g_r2, n->g_h2, 0, 0, 0);
  THNN_(SpatialConvolutionMM_accGradParameters)(NULL, n->p1, n->g_h2, n->w2.g, n->b2.g, n->finput, n->fgrad, 3, 3, 1, 1, 1, 1, 1);
  THNN_(SpatialConvolutionMM_updateGradInput)(NULL, n->p1, n->g_h2, n->g_p1, n->w2.w, n->finput, n->fgrad, 3, 3, 1, 1, 1, 1);
  THNN_(SpatialMaxPooling_updateGradInput)(NULL, n->r1, n->g_p1, n->g_r1, n->i1, 2, 2, 2, 2, 0, 0, 0);
  THNN_(Threshold_updateGradInput)(NULL, n->h1, n->g_r1, n->g_h1, 0, 0, 0);
  THNN_(SpatialConvolutionMM_accGradParameters)(NULL, x, n->g_h1, n->w1.g, n->b1.g, n->finput, n->fgrad, 3, 3, 1, 1, 1, 1, 1);
  check("backward");
}

static Param *params(Net *n, int i) {
  Param *all[] = {&n->w1, &n->b1, &n->w2, &n->b2, &n->w3, &n->b3};
  return i < 6 ? all[i] : NULL;
}

static void sgd_step(Net *n) {
  for (int i = 0; i < 6; i++) {
    Param *p = params(n, i);
    THTensor_(cadd)(p->w, p->w, -LR, p->g);
    THTensor_(zero)(p->g);
  }
  check("sgd");
}

/* Correct predictions of the network on rows [lo, hi) of x / y. */
static int64_t correct(Net *n, THTensor *x, THLongTensor *y, int64_t lo, int64_t hi) {
  THTensor *xb = THTensor_(newNarrow)(x, 0, lo, hi - lo);
  THTensor *best = fresh();
  THLongTensor *pred = THLongTensor_new();
  forward(n, xb, NULL);
  THTensor_(max)(best, pred, n->logp, 1, 0);
  check("predict");
  int64_t ok = 0;
  for (int64_t i = 0; i < hi - lo; i++) ok += THLongTensor_get1d(pred, i) == THLongTensor_get1d(y, lo + i);
  THLongTensor_free(pred);
  THTensor_(free)(best);
  THTensor_(free)(xb);
  return ok;
}

static void save(const char *dir, Param *p) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, p->name);
  THTensor_(saveNpy)(path, p->w);
  check("saveNpy");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR [OUT_DIR [EPOCHS]]\n", argv[0]);
    return 2;
  }
  const char *out_dir = argc > 2 ? argv[2] : NULL;
  int epochs = argc > 3 ? atoi(argv[3]) : EPOCHS;
  char path[4096];
  snprintf(path, sizeof path, "%s/x.npy", argv[1]);
  THDoubleTensor *xd = THDoubleTensor_loadNpy(path);
  snprintf(path, sizeof path, "%s/y.npy", argv[1]);
  THLongTensor *y = THLongTensor_loadNpy(path);
  check("loading the data");
  int64_t count = THDoubleTensor_size(xd, 0), train = count - count / 5;
  /* images as count x 1 x 8 x 8 in the network's type */
  THTensor *x = THTensor_(newWithSize4d)(count, 1, 8, 8);
  THTensor *xflat = THTensor_(newWithTensor)(x);
  THTensor_(resize2d)(xflat, count, 64);
  THTensor_(copyDouble)(xflat, xd);
  check("converting the data");

  THGenerator *gen = THGenerator_new();
  THRandom_manualSeed(gen, SEED);
  Net n;
  n.w1 = param(gen, "w1", C1, 1 * 9, 1 * 9);
  n.b1 = param(gen, "b1", C1, 0, 1 * 9);
  n.w2 = param(gen, "w2", C2, C1 * 9, C1 * 9);
  n.b2 = param(gen, "b2", C2, 0, C1 * 9);
  n.w3 = param(gen, "w3", CLASSES, C2 * 4, C2 * 4);
  n.b3 = param(gen, "b3", CLASSES, 0, C2 * 4);
  THTensor **acts[] = {&n.h1, &n.r1, &n.p1, &n.h2, &n.r2, &n.p2, &n.flat, &n.logits, &n.logp, &n.loss,
                       &n.total_weight, &n.g_logp, &n.g_logits, &n.g_flat, &n.g_p2, &n.g_r2, &n.g_h2,
                       &n.g_p1, &n.g_r1, &n.g_h1, &n.finput, &n.fgrad, &n.ones};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) *acts[i] = fresh();
  n.i1 = THLongTensor_new();
  n.i2 = THLongTensor_new();
  if (out_dir)
    for (int i = 0; i < 6; i++) save(out_dir, params(&n, i));

  int64_t step = 0;
  for (int epoch = 0; epoch < epochs; epoch++) {
    double sum = 0;
    int64_t batches = 0;
    for (int64_t lo = 0; lo < train; lo += BATCH, step++, batches++) {
      int64_t hi = lo + BATCH < train ? lo + BATCH : train;
      THTensor *xb = THTensor_(newNarrow)(x, 0, lo, hi - lo);
      THLongTensor *yb = THLongTensor_newNarrow(y, 0, lo, hi - lo);
      forward(&n, xb, yb);
      double loss = THTensor_(get1d)(n.loss, 0);
      if (out_dir) printf("step %lld loss %.17g\n", (long long)step, loss);
      sum += loss;
      backward(&n, xb, yb);
      sgd_step(&n);
      THLongTensor_free(yb);
      THTensor_(free)(xb);
    }
    printf("epoch %d mean loss %.5f\n", epoch, sum / (double)batches);
  }
  int64_t ok = correct(&n, x, y, train, count);
  printf("held-out accuracy %.4f (%lld of %lld)\n", (double)ok / (double)(count - train), (long long)ok,
         (long long)(count - train));

  for (int i = 0; i < 6; i++) {
    Param *p = params(&n, i);
    THTensor_(free)(p->w);
    THTensor_(free)(p->g);
  }
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) THTensor_(free)(*acts[i]);
  THLongTensor_free(n.i1);
  THLongTensor_free(n.i2);
  THGenerator_free(gen);
  THTensor_(free)(xflat);
  THTensor_(free)(x);
  THLongTensor_free(y);
  THDoubleTensor_free(xd);
  return 0;
}
