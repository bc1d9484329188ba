/* DLPack export and import (TH{Real}Tensor_toDLPack / _fromDLPack and the Unversioned pair):
 * struct layout, round trips for every dtype, zero-copy (same addresses, writes visible both
 * ways), strides and byte offsets, the producer's deleter running exactly once, and every
 * refused input leaving the managed tensor with the caller. */
#include "th_test.h"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- a C producer: a malloc'ed buffer with a counting deleter ---- */

static int deleted = 0;

typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape[4];
  int64_t strides[4];
  void *buf;
} Producer;

static void producer_delete(DLManagedTensorVersioned *m) {
  Producer *p = (Producer *)m->manager_ctx;
  free(p->buf);
  free(p);
  deleted++;
}

/* A versioned tensor of `ndim` dims over a fresh buffer of `nbytes` bytes (bytes 0, 1, 2, ...). */
static DLManagedTensorVersioned *produce(DLDataType dt, int ndim, const int64_t *shape, const int64_t *strides,
                                         size_t nbytes) {
  Producer *p = (Producer *)calloc(1, sizeof(Producer));
  p->buf = malloc(nbytes ? nbytes : 1);
  for (size_t i = 0; i < nbytes; i++) ((unsigned char *)p->buf)[i] = (unsigned char)i;
  for (int d = 0; d < ndim; d++) {
    p->shape[d] = shape[d];
    if (strides) p->strides[d] = strides[d];
  }
  p->m.version.major = DLPACK_MAJOR_VERSION;
  p->m.version.minor = DLPACK_MINOR_VERSION;
  p->m.manager_ctx = p;
  p->m.deleter = producer_delete;
  p->m.flags = 0;
  p->m.dl_tensor.data = p->buf;
  p->m.dl_tensor.device.device_type = kDLCPU;
  p->m.dl_tensor.device.device_id = 0;
  p->m.dl_tensor.ndim = ndim;
  p->m.dl_tensor.dtype = dt;
  p->m.dl_tensor.shape = ndim ? p->shape : NULL;
  p->m.dl_tensor.strides = strides ? p->strides : NULL;
  p->m.dl_tensor.byte_offset = 0;
  return &p->m;
}

/* The legacy form of the same producer. */
typedef struct {
  DLManagedTensor m;
  int64_t shape[2];
  float data[6];
} LegacyProducer;

static void legacy_delete(DLManagedTensor *m) {
  free(m->manager_ctx);
  deleted++;
}

static DLDataType dt(uint8_t code, uint8_t bits) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = 1;
  return t;
}

/* ---- tests ---- */

static void layout(void) {
  CHECK(sizeof(DLPackVersion) == 8);
  CHECK(sizeof(DLDevice) == 8);
  CHECK(sizeof(DLDataType) == 4);
  CHECK(sizeof(DLTensor) == 48);
  CHECK(offsetof(DLTensor, device) == 8);
  CHECK(offsetof(DLTensor, ndim) == 16);
  CHECK(offsetof(DLTensor, dtype) == 20);
  CHECK(offsetof(DLTensor, shape) == 24);
  CHECK(offsetof(DLTensor, strides) == 32);
  CHECK(offsetof(DLTensor, byte_offset) == 40);
  CHECK(sizeof(DLManagedTensor) == 64);
  CHECK(offsetof(DLManagedTensor, manager_ctx) == 48);
  CHECK(offsetof(DLManagedTensor, deleter) == 56);
  CHECK(sizeof(DLManagedTensorVersioned) == 80);
  CHECK(offsetof(DLManagedTensorVersioned, manager_ctx) == 8);
  CHECK(offsetof(DLManagedTensorVersioned, deleter) == 16);
  CHECK(offsetof(DLManagedTensorVersioned, flags) == 24);
  CHECK(offsetof(DLManagedTensorVersioned, dl_tensor) == 32);
  CHECK(sizeof(DLDeviceType) == 4);
  CHECK(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2);
}

/* Export a transposed, narrowed view: fields, zero-copy, the storage outliving the tensor. */
static void export_float(void) {
  THFloatTensor *a = THFloatTensor_newWithSize2d(3, 4);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) THFloatTensor_set2d(a, i, j, (float)(10 * i + j));
  THFloatTensor *v = THFloatTensor_newTranspose(a, 0, 1); /* 4 x 3, strides (1, 4) */
  THFloatTensor_narrow(v, NULL, 0, 1, 2);                 /* rows 1..2: 2 x 3, offset 1 */
  DLManagedTensorVersioned *m = THFloatTensor_toDLPack(v);
  CHECK(m != NULL);
  if (m == NULL) return;
  CHECK(m->version.major == 1 && m->version.minor == DLPACK_MINOR_VERSION);
  CHECK(m->flags == 0);
  CHECK(m->deleter != NULL);
  DLTensor *t = &m->dl_tensor;
  CHECK(t->device.device_type == kDLCPU && t->device.device_id == 0);
  CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1);
  CHECK(t->ndim == 2);
  CHECK(t->shape[0] == 2 && t->shape[1] == 3);
  CHECK(t->strides != NULL && t->strides[0] == 1 && t->strides[1] == 4);
  CHECK(t->byte_offset == 0);
  CHECK(t->data == (void *)THFloatTensor_data(v));
  CHECK(t->data == (void *)(THFloatTensor_data(a) + 1));
  float *p = (float *)((char *)t->data + t->byte_offset);
  CHECK(p[1 * 1 + 2 * 4] == 22.0f); /* element (1, 2) of the view = a[2][2] */
  p[0] = -5.0f;                     /* writes through DLPack reach the tensor */
  CHECK(THFloatTensor_get2d(a, 0, 1) == -5.0f);
  THFloatTensor_set2d(a, 2, 1, 99.0f); /* and the other way */
  CHECK(p[2 * 4] == 99.0f);
  /* the managed tensor keeps the storage alive after every tensor is gone (valgrind checks) */
  THFloatTensor_free(v);
  THFloatTensor_free(a);
  CHECK(p[0] == -5.0f && p[1 * 1 + 2 * 4] == 22.0f);
  m->deleter(m);
}

/* Import a C producer's strided tensor with a byte offset; the deleter waits for the last view. */
static void import_float(void) {
  deleted = 0;
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 4}; /* column-major within a 4-wide buffer */
  DLManagedTensorVersioned *m = produce(dt(kDLFloat, 32), 2, shape, strides, 16 * sizeof(float));
  float *buf = (float *)m->dl_tensor.data;
  for (int i = 0; i < 16; i++) buf[i] = (float)i;
  m->dl_tensor.byte_offset = 2 * sizeof(float); /* first element is buf[2] */
  THFloatTensor *t = THFloatTensor_fromDLPack(m);
  CHECK(t != NULL);
  if (t == NULL) return;
  CHECK(THFloatTensor_nDimension(t) == 2);
  CHECK(THFloatTensor_size(t, 0) == 3 && THFloatTensor_size(t, 1) == 2);
  CHECK(THFloatTensor_stride(t, 0) == 1 && THFloatTensor_stride(t, 1) == 4);
  CHECK(THFloatTensor_data(t) == buf + 2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) CHECK(THFloatTensor_get2d(t, i, j) == (float)(2 + i + 4 * j));
  THFloatTensor_set2d(t, 2, 1, -1.0f);
  CHECK(buf[2 + 2 + 4] == -1.0f);
  /* not resizable beyond what the producer gave */
  EXPECT_ERROR(THFloatStorage_resize(THFloatTensor_storage(t), 100));
  THFloatTensor *view = THFloatTensor_newSelect(t, 1, 1);
  THFloatTensor *c = THFloatTensor_newClone(t);
  THFloatTensor_free(t);
  CHECK(deleted == 0);
  CHECK(THFloatTensor_get1d(view, 0) == 6.0f);
  THFloatTensor_free(view);
  CHECK(deleted == 1); /* exactly once, when the last tensor on it went */
  THFloatTensor_free(c);
  CHECK(deleted == 1);
}

/* Round trip through our own export: same memory; the deleter of the export runs once. */
static void round_trip(void) {
  THDoubleTensor *a = THDoubleTensor_newWithSize2d(2, 5);
  for (int i = 0; i < 10; i++) THDoubleTensor_data(a)[i] = i * 0.5;
  DLManagedTensorVersioned *m = THDoubleTensor_toDLPack(a);
  THDoubleTensor *b = THDoubleTensor_fromDLPack(m);
  CHECK(b != NULL);
  CHECK(THDoubleTensor_data(b) == THDoubleTensor_data(a));
  CHECK(THDoubleTensor_isSameSizeAs(a, b));
  THDoubleTensor_free(a);
  CHECK(THDoubleTensor_get2d(b, 1, 4) == 4.5);
  THDoubleTensor_free(b); /* frees m (its deleter), which frees the storage */

  /* legacy pair */
  THIntTensor *x = THIntTensor_newWithSize1d(7);
  for (int i = 0; i < 7; i++) THIntTensor_set1d(x, i, i * i);
  DLManagedTensor *lm = THIntTensor_toDLPackUnversioned(x);
  CHECK(lm != NULL && lm->dl_tensor.dtype.code == kDLInt && lm->dl_tensor.dtype.bits == 32);
  CHECK(lm->dl_tensor.ndim == 1 && lm->dl_tensor.shape[0] == 7 && lm->dl_tensor.strides[0] == 1);
  THIntTensor *y = THIntTensor_fromDLPackUnversioned(lm);
  CHECK(THIntTensor_data(y) == THIntTensor_data(x));
  THIntTensor_free(x);
  CHECK(THIntTensor_get1d(y, 6) == 36);
  THIntTensor_free(y);

  /* legacy import from a C producer */
  deleted = 0;
  LegacyProducer *lp = (LegacyProducer *)calloc(1, sizeof(LegacyProducer));
  for (int i = 0; i < 6; i++) lp->data[i] = (float)i;
  lp->shape[0] = 2;
  lp->shape[1] = 3;
  lp->m.dl_tensor.data = lp->data;
  lp->m.dl_tensor.device.device_type = kDLCPU;
  lp->m.dl_tensor.ndim = 2;
  lp->m.dl_tensor.dtype = dt(kDLFloat, 32);
  lp->m.dl_tensor.shape = lp->shape;
  lp->m.dl_tensor.strides = NULL; /* pre-1.2 producers: C-contiguous */
  lp->m.manager_ctx = lp;
  lp->m.deleter = legacy_delete;
  THFloatTensor *f = THFloatTensor_fromDLPackUnversioned(&lp->m);
  CHECK(f != NULL && THFloatTensor_stride(f, 0) == 3 && THFloatTensor_get2d(f, 1, 2) == 5.0f);
  THFloatTensor_free(f);
  CHECK(deleted == 1);
}

/* Every dtype: codes, bits, export/import sharing memory, deleter once. */
#define DTYPE_CASE(Real, CODE, BITS)                                                           \
  do {                                                                                         \
    TH##Real##Tensor *t = TH##Real##Tensor_newWithSize2d(3, 5);                                \
    unsigned char *bytes = (unsigned char *)TH##Real##Tensor_data(t);                          \
    size_t es = TH##Real##Storage_elementSize();                                               \
    CHECK(es * 8 == BITS);                                                                     \
    for (size_t i = 0; i < 15 * es; i++) bytes[i] = (unsigned char)((i * 7) & 1);              \
    DLManagedTensorVersioned *m = TH##Real##Tensor_toDLPack(t);                                \
    CHECK(m != NULL && m->dl_tensor.dtype.code == CODE && m->dl_tensor.dtype.bits == BITS &&   \
          m->dl_tensor.dtype.lanes == 1);                                                      \
    CHECK(m->dl_tensor.data == (void *)bytes);                                                 \
    CHECK(m->dl_tensor.strides[0] == 5 && m->dl_tensor.strides[1] == 1);                       \
    TH##Real##Tensor *u = TH##Real##Tensor_fromDLPack(m);                                      \
    CHECK(u != NULL && (void *)TH##Real##Tensor_data(u) == (void *)bytes);                     \
    CHECK(TH##Real##Tensor_nElement(u) == 15);                                                 \
    TH##Real##Tensor_free(t);                                                                  \
    TH##Real##Tensor_free(u);                                                                  \
    /* a C producer's buffer of this dtype, deleter once */                                    \
    deleted = 0;                                                                               \
    int64_t shp[1] = {6};                                                                      \
    DLManagedTensorVersioned *pm = produce(dt(CODE, BITS), 1, shp, NULL, 6 * es);              \
    void *buf = pm->dl_tensor.data;                                                            \
    TH##Real##Tensor *w = TH##Real##Tensor_fromDLPack(pm);                                     \
    CHECK(w != NULL && (void *)TH##Real##Tensor_data(w) == buf);                               \
    TH##Real##Tensor_free(w);                                                                  \
    CHECK(deleted == 1);                                                                       \
    /* a wrong dtype for this tensor type is refused and stays the caller's */                 \
    pm = produce(dt(CODE == kDLInt ? kDLUInt : kDLInt, BITS), 1, shp, NULL, 6 * es);           \
    EXPECT_ERROR(CHECK(TH##Real##Tensor_fromDLPack(pm) == NULL));                              \
    CHECK(deleted == 1);                                                                       \
    pm->deleter(pm);                                                                           \
    CHECK(deleted == 2);                                                                       \
  } while (0)

static void every_dtype(void) {
  DTYPE_CASE(Byte, kDLUInt, 8);
  DTYPE_CASE(Char, kDLInt, 8);
  DTYPE_CASE(Short, kDLInt, 16);
  DTYPE_CASE(Int, kDLInt, 32);
  DTYPE_CASE(Long, kDLInt, 64);
  DTYPE_CASE(Float, kDLFloat, 32);
  DTYPE_CASE(Double, kDLFloat, 64);
  DTYPE_CASE(Half, kDLFloat, 16);
  DTYPE_CASE(BFloat16, kDLBfloat, 16);
  DTYPE_CASE(Bool, kDLBool, 8);
}

/* Empty and 0-d tensors. */
static void edge_shapes(void) {
  THFloatTensor *e = THFloatTensor_new();
  DLManagedTensorVersioned *m = THFloatTensor_toDLPack(e);
  CHECK(m != NULL && m->dl_tensor.ndim == 1 && m->dl_tensor.shape[0] == 0 && m->dl_tensor.data == NULL);
  THFloatTensor *e2 = THFloatTensor_fromDLPack(m);
  CHECK(e2 != NULL && THFloatTensor_nElement(e2) == 0 && THFloatTensor_nDimension(e2) == 0);
  THFloatTensor_free(e2);
  THFloatTensor_free(e);

  deleted = 0;
  int64_t shape[2] = {0, 3};
  m = produce(dt(kDLFloat, 32), 2, shape, NULL, 0);
  THFloatTensor *z = THFloatTensor_fromDLPack(m);
  CHECK(z != NULL && THFloatTensor_nElement(z) == 0);
  THFloatTensor_free(z);
  CHECK(deleted == 1);

  /* a DLPack scalar (ndim 0, shape NULL) becomes one element in one dimension */
  m = produce(dt(kDLInt, 64), 0, NULL, NULL, 8);
  *(int64_t *)m->dl_tensor.data = 42;
  THLongTensor *s = THLongTensor_fromDLPack(m);
  CHECK(s != NULL && THLongTensor_nDimension(s) == 1 && THLongTensor_get1d(s, 0) == 42);
  THLongTensor_free(s);
  CHECK(deleted == 2);

  /* stride 0 (broadcast) and size-1 dims with any stride */
  int64_t bshape[2] = {4, 3}, bstrides[2] = {0, 1};
  m = produce(dt(kDLFloat, 64), 2, bshape, bstrides, 3 * sizeof(double));
  double *d = (double *)m->dl_tensor.data;
  d[0] = 1;
  d[1] = 2;
  d[2] = 3;
  THDoubleTensor *b = THDoubleTensor_fromDLPack(m);
  CHECK(b != NULL && THDoubleTensor_get2d(b, 3, 2) == 3.0 && THDoubleTensor_sumall(b) == 24.0);
  THDoubleTensor_free(b);
  CHECK(deleted == 3);
}

/* Every refusal: an error with a message, NULL, and the managed tensor still the caller's. */
static void refusals(void) {
  deleted = 0;
  int64_t shape[2] = {2, 3};
  int64_t neg[2] = {3, -1};
  DLManagedTensorVersioned *m = produce(dt(kDLFloat, 32), 2, shape, NULL, 6 * sizeof(float));

  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(NULL) == NULL));
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPackUnversioned(NULL) == NULL));
  EXPECT_ERROR(CHECK(THFloatTensor_toDLPack(NULL) == NULL));
  EXPECT_ERROR(CHECK(THFloatTensor_toDLPackUnversioned(NULL) == NULL));

  EXPECT_ERROR(CHECK(THDoubleTensor_fromDLPack(m) == NULL)); /* dtype */
  CHECK(strstr(THGetLastError(), "float32") != NULL && strstr(THGetLastError(), "THDoubleTensor") != NULL);

  m->dl_tensor.dtype.lanes = 4; /* vector lanes */
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.dtype.lanes = 1;

  m->dl_tensor.device.device_type = kDLCUDA;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  CHECK(strstr(THGetLastError(), "kDLCUDA") != NULL);
  m->dl_tensor.device.device_type = kDLCPU;

  m->version.major = 2;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  CHECK(strstr(THGetLastError(), "version") != NULL);
  m->version.major = 1;

  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  CHECK(strstr(THGetLastError(), "read-only") != NULL);
  m->flags = 0;

  m->dl_tensor.strides = neg; /* negative strides: TH has none */
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  CHECK(strstr(THGetLastError(), "negative") != NULL);
  m->dl_tensor.strides = NULL;

  m->dl_tensor.byte_offset = 2; /* not a whole element */
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.byte_offset = 0;

  m->dl_tensor.ndim = -1;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.ndim = 2;

  m->dl_tensor.shape = NULL;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.shape = shape;

  int64_t bad_shape[2] = {2, -3};
  m->dl_tensor.shape = bad_shape;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  int64_t huge[2] = {INT64_MAX, 3};
  m->dl_tensor.shape = huge;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.shape = shape;

  void *data = m->dl_tensor.data;
  m->dl_tensor.data = NULL;
  EXPECT_ERROR(CHECK(THFloatTensor_fromDLPack(m) == NULL));
  m->dl_tensor.data = data;

  CHECK(deleted == 0); /* nothing was taken */
  /* after all that, the same tensor is still importable */
  THFloatTensor *t = THFloatTensor_fromDLPack(m);
  CHECK(t != NULL && THFloatTensor_nElement(t) == 6);
  THFloatTensor_free(t);
  CHECK(deleted == 1);
}

/* A NULL deleter ("no reasonable destructor") is allowed. */
static float static_data[4] = {1, 2, 3, 4};
static void null_deleter(void) {
  DLManagedTensorVersioned m;
  int64_t shape[1] = {4};
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.dl_tensor.data = static_data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = dt(kDLFloat, 32);
  m.dl_tensor.shape = shape;
  THFloatTensor *t = THFloatTensor_fromDLPack(&m);
  CHECK(t != NULL && THFloatTensor_sumall(t) == 10.0);
  THFloatTensor_free(t);
}

int main(void) {
  th_test_install_handlers();
  layout();
  export_float();
  import_float();
  round_trip();
  every_dtype();
  edge_shapes();
  refusals();
  null_deleter();
  return TH_TEST_DONE();
}
