/* digits.c's network trained on a CUDA device with th's THCUNN layers (THNN_Cuda*, THNN_CudaDouble*)
 * and THC tensors, using nothing but <TH/TH.h>:
 *
 *   conv 3x3 (1 -> 8, pad 1) - ReLU - max pool 2x2 - conv 3x3 (8 -> 16, pad 1) - ReLU
 *   - max pool 2x2 - linear (64 -> 10) - LogSoftMax - ClassNLL; plain SGD on mini-batches.
 *
 * Usage: digits_cuda DATA_DIR [EPOCHS [STEPS]]
 *   DATA_DIR as for digits.c (x.npy, y.npy). The initial weights are drawn on the host exactly as
 *   digits.c draws them (same generator, seed and order) and copied to the device, so both
 *   programs start from the same point: in Double their losses agree to rounding. Every step's
 *   loss is printed; EPOCHS (default 20) and STEPS (default: all) shorten the run. Build with
 *   -DDIGITS_DOUBLE for CudaDouble instead of Cuda (float). cunn has no Linear module: the
 *   classifier is THC's addmm/addr/addmv, as torch7's nn.Linear does it on the GPU.
 *
 * Runs on a GPU, or on th's CPU emulator (a library built with the cuda-emulator feature and
 * TH_CUDA_EMULATOR=1). Without a device it says so and exits with 77. Every call is checked: a
 * call that fails records an error and leaves its outputs alone, so the program reports the first
 * failure and stops. */
#include <TH/TH.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef DIGITS_DOUBLE
#define DT(name) THCudaDoubleTensor_##name /* device tensors */
#define HT(name) THDoubleTensor_##name     /* host tensors of the same type */
#define NN(name) THNN_CudaDouble##name
typedef THCudaDoubleTensor DTensor;
typedef THDoubleTensor HTensor;
typedef double acc;
#define COPY_IN THCudaDoubleTensor_copyDouble
#else
#define DT(name) THCudaTensor_##name
#define HT(name) THFloatTensor_##name
#define NN(name) THNN_Cuda##name
typedef THCudaTensor DTensor;
typedef THFloatTensor HTensor;
typedef float acc;
#define COPY_IN THCudaTensor_copyFloat
#endif

enum { BATCH = 32, EPOCHS = 20, SEED = 1234, C1 = 8, C2 = 16, CLASSES = 10 };
static const double LR = 0.1;
static THCState *S;

static void check(const char *what) {
  if (THGetLastErrorCode() != TH_OK) {
    fprintf(stderr, "%s failed: %s\n", what, THGetLastError());
    exit(1);
  }
}

/* A learnable device tensor and its gradient, drawn on the host as digits.c draws them. */
typedef struct {
  DTensor *w, *g;
} Param;

static Param param(THGenerator *gen, int64_t n0, int64_t n1, double fan_in) {
  HTensor *h = n1 ? HT(newWithSize2d)(n0, n1) : HT(newWithSize1d)(n0);
  HT(uniform)(h, gen, -1.0 / sqrt(fan_in), 1.0 / sqrt(fan_in));
  Param p;
  p.w = n1 ? DT(newWithSize2d)(S, n0, n1) : DT(newWithSize1d)(S, n0);
  p.g = n1 ? DT(newWithSize2d)(S, n0, n1) : DT(newWithSize1d)(S, n0);
  COPY_IN(S, p.w, h);
  DT(zero)(S, p.g);
  HT(free)(h);
  check("init");
  return p;
}

typedef struct {
  Param w1, b1, w2, b2, w3, b3;
  DTensor *h1, *r1, *p1, *h2, *r2, *p2, *flat, *logits, *logp, *loss, *total_weight, *ones;
  DTensor *g_logp, *g_logits, *g_flat, *g_p2, *g_r2, *g_h2, *g_p1, *g_r1, *g_h1, *columns, *ones_c;
  THCudaLongTensor *i1, *i2;
} Net;

/* logits = ones (x) b3 + flat @ w3^T, for a batch of b */
static void linear_forward(Net *n, int64_t b) {
  DTensor *wt = DT(newTranspose)(S, n->w3.w, 0, 1);
  DT(resize1d)(S, n->ones, b);
  DT(fill)(S, n->ones, 1);
  DT(resize2d)(S, n->logits, b, CLASSES);
  DT(zero)(S, n->logits);
  DT(addr)(S, n->logits, 1, n->logits, 1, n->ones, n->b3.w);
  DT(addmm)(S, n->logits, 1, n->logits, 1, n->flat, wt);
  DT(free)(S, wt);
}

/* g_flat = g_logits @ w3; w3.g += g_logits^T @ flat; b3.g += g_logits^T @ ones */
static void linear_backward(Net *n) {
  DTensor *gt = DT(newTranspose)(S, n->g_logits, 0, 1);
  DT(resizeAs)(S, n->g_flat, n->flat);
  DT(zero)(S, n->g_flat);
  DT(addmm)(S, n->g_flat, 0, n->g_flat, 1, n->g_logits, n->w3.w);
  DT(addmm)(S, n->w3.g, 1, n->w3.g, 1, gt, n->flat);
  DT(addmv)(S, n->b3.g, 1, n->b3.g, 1, gt, n->ones);
  DT(free)(S, gt);
}

static void forward(Net *n, DTensor *x, THCudaLongTensor *y) {
  NN(SpatialConvolutionMM_updateOutput)(S, x, n->h1, n->w1.w, n->b1.w, n->columns, n->ones_c, 3, 3, 1, 1, 1, 1);
  NN(Threshold_updateOutput)(S, n->h1, n->r1, 0, 0, 0);
  NN(SpatialMaxPooling_updateOutput)(S, n->r1, n->p1, n->i1, 2, 2, 2, 2, 0, 0, 0);
  NN(SpatialConvolutionMM_updateOutput)(S, n->p1, n->h2, n->w2.w, n->b2.w, n->columns, n->ones_c, 3, 3, 1, 1, 1, 1);
  NN(Threshold_updateOutput)(S, n->h2, n->r2, 0, 0, 0);
  NN(SpatialMaxPooling_updateOutput)(S, n->r2, n->p2, n->i2, 2, 2, 2, 2, 0, 0, 0);
  check("forward (features)");
  int64_t b = DT(size)(S, n->p2, 0);
  DT(set)(S, n->flat, n->p2); /* p2 is contiguous: flat views it as b x 64 */
  DT(resize2d)(S, n->flat, b, C2 * 2 * 2);
  linear_forward(n, b);
  NN(LogSoftMax_updateOutput)(S, n->logits, n->logp);
  if (y) NN(ClassNLLCriterion_updateOutput)(S, n->logp, y, n->loss, 1, NULL, n->total_weight, -100);
  check("forward");
}

static void backward(Net *n, DTensor *x, THCudaLongTensor *y) {
  NN(ClassNLLCriterion_updateGradInput)(S, n->logp, y, n->g_logp, 1, NULL, n->total_weight, -100);
  NN(LogSoftMax_updateGradInput)(S, n->logits, n->g_logp, n->g_logits, n->logp);
  linear_backward(n);
  DT(set)(S, n->g_p2, n->g_flat);
  DT(resizeAs)(S, n->g_p2, n->p2);
  check("backward (classifier)");
  NN(SpatialMaxPooling_updateGradInput)(S, n->r2, n->g_p2, n->g_r2, n->i2, 2, 2, 2, 2, 0, 0, 0);
  NN(Threshold_updateGradInput)(S, n->h2, n->g_r2, n->g_h2, 0, 0, 0);
  NN(SpatialConvolutionMM_accGradParameters)(S, n->p1, n->g_h2, n->w2.g, n->b2.g, n->columns, n->ones_c, 3, 3, 1, 1, 1, 1, 1);
  NN(SpatialConvolutionMM_updateGradInput)(S, n->p1, n->g_h2, n->g_p1, n->w2.w, n->columns, n->ones_c, 3, 3, 1, 1, 1, 1);
  NN(SpatialMaxPooling_updateGradInput)(S, n->r1, n->g_p1, n->g_r1, n->i1, 2, 2, 2, 2, 0, 0, 0);
  NN(Threshold_updateGradInput)(S, n->h1, n->g_r1, n->g_h1, 0, 0, 0);
  NN(SpatialConvolutionMM_accGradParameters)(S, x, n->g_h1, n->w1.g, n->b1.g, n->columns, n->ones_c, 3, 3, 1, 1, 1, 1, 1);
  check("backward");
}

static Param *params(Net *n, int i) {
  Param *all[] = {&n->w1, &n->b1, &n->w2, &n->b2, &n->w3, &n->b3};
  return i < 6 ? all[i] : NULL;
}

static void sgd_step(Net *n) {
  for (int i = 0; i < 6; i++) {
    Param *p = params(n, i);
    DT(cadd)(S, p->w, p->w, (acc)-LR, p->g);
    DT(zero)(S, p->g);
  }
  check("sgd");
}

/* Correct predictions on rows [lo, hi) (y: the labels on the host). */
static int64_t correct(Net *n, DTensor *x, THLongTensor *y, int64_t lo, int64_t hi) {
  DTensor *xb = DT(newNarrow)(S, x, 0, lo, hi - lo), *best = DT(new)(S);
  THCudaLongTensor *pred = THCudaLongTensor_new(S);
  THLongTensor *hp = THLongTensor_newWithSize1d(hi - lo);
  forward(n, xb, NULL);
  DT(max)(S, best, pred, n->logp, 1, 0);
  THLongTensor_copyCudaLong(S, hp, pred);
  check("predict");
  int64_t ok = 0;
  for (int64_t i = 0; i < hi - lo; i++) ok += THLongTensor_get1d(hp, i) == THLongTensor_get1d(y, lo + i);
  THLongTensor_free(hp);
  THCudaLongTensor_free(S, pred);
  DT(free)(S, best);
  DT(free)(S, xb);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR [EPOCHS [STEPS]]\n", argv[0]);
    return 2;
  }
  int epochs = argc > 2 ? atoi(argv[2]) : EPOCHS;
  long long max_steps = argc > 3 ? atoll(argv[3]) : -1;
  S = THCState_alloc();
  if (!S || THCState_getNumDevices(S) <= 0) {
    printf("no CUDA device\n");
    return 77;
  }
  THCudaInit(S);
  check("THCudaInit");
  char path[4096];
  snprintf(path, sizeof path, "%s/x.npy", argv[1]);
  THDoubleTensor *xd = THDoubleTensor_loadNpy(path);
  snprintf(path, sizeof path, "%s/y.npy", argv[1]);
  THLongTensor *y = THLongTensor_loadNpy(path);
  check("loading the data");
  int64_t count = THDoubleTensor_size(xd, 0), train = count - count / 5;
  /* the images in the network's type, count x 1 x 8 x 8, then on the device */
  HTensor *xh = HT(newWithSize4d)(count, 1, 8, 8);
  HTensor *xhflat = HT(newWithTensor)(xh);
  HT(resize2d)(xhflat, count, 64);
  HT(copyDouble)(xhflat, xd);
  DTensor *x = DT(newWithSize4d)(S, count, 1, 8, 8);
  COPY_IN(S, x, xh);
  THCudaLongTensor *yd = THCudaLongTensor_newWithSize1d(S, count);
  THCudaLongTensor_copyLong(S, yd, y);
  check("copying the data to the device");

  THGenerator *gen = THGenerator_new();
  THRandom_manualSeed(gen, SEED);
  Net n;
  n.w1 = param(gen, C1, 1 * 9, 1 * 9);
  n.b1 = param(gen, C1, 0, 1 * 9);
  n.w2 = param(gen, C2, C1 * 9, C1 * 9);
  n.b2 = param(gen, C2, 0, C1 * 9);
  n.w3 = param(gen, CLASSES, C2 * 4, C2 * 4);
  n.b3 = param(gen, CLASSES, 0, C2 * 4);
  DTensor **acts[] = {&n.h1, &n.r1, &n.p1, &n.h2, &n.r2, &n.p2, &n.flat, &n.logits, &n.logp, &n.loss,
                      &n.total_weight, &n.ones, &n.g_logp, &n.g_logits, &n.g_flat, &n.g_p2, &n.g_r2,
                      &n.g_h2, &n.g_p1, &n.g_r1, &n.g_h1, &n.columns, &n.ones_c};
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) *acts[i] = DT(new)(S);
  n.i1 = THCudaLongTensor_new(S);
  n.i2 = THCudaLongTensor_new(S);

  long long step = 0;
  for (int epoch = 0; epoch < epochs && step != max_steps; epoch++) {
    double sum = 0;
    int64_t batches = 0;
    for (int64_t lo = 0; lo < train && step != max_steps; lo += BATCH, step++, batches++) {
      int64_t hi = lo + BATCH < train ? lo + BATCH : train;
      DTensor *xb = DT(newNarrow)(S, x, 0, lo, hi - lo);
      THCudaLongTensor *yb = THCudaLongTensor_newNarrow(S, yd, 0, lo, hi - lo);
      forward(&n, xb, yb);
      double loss = DT(get1d)(S, n.loss, 0);
      printf("step %lld loss %.17g\n", step, loss);
      sum += loss;
      backward(&n, xb, yb);
      sgd_step(&n);
      THCudaLongTensor_free(S, yb);
      DT(free)(S, xb);
    }
    printf("epoch %d mean loss %.5f\n", epoch, sum / (double)(batches ? batches : 1));
  }
  int64_t ok = correct(&n, x, y, train, count);
  printf("held-out accuracy %.4f (%lld of %lld)\n", (double)ok / (double)(count - train), (long long)ok,
         (long long)(count - train));

  for (int i = 0; i < 6; i++) {
    Param *p = params(&n, i);
    DT(free)(S, p->w);
    DT(free)(S, p->g);
  }
  for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) DT(free)(S, *acts[i]);
  THCudaLongTensor_free(S, n.i1);
  THCudaLongTensor_free(S, n.i2);
  THCudaLongTensor_free(S, yd);
  DT(free)(S, x);
  THGenerator_free(gen);
  HT(free)(xhflat);
  HT(free)(xh);
  THLongTensor_free(y);
  THDoubleTensor_free(xd);
  THCState_free(S);
  return 0;
}
