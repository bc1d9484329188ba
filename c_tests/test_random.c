/* Random generators: lifetime (new, copy, free), torch7's streams, errors (exactly one handler
 * call, outputs and generator untouched), RNG state round trip, one generator shared by threads. */
#include <pthread.h>

#include "th_test.h"

#define NTHREADS 4
#define DRAWS 20000

static void *hammer(void *arg) {
  THGenerator *g = (THGenerator *)arg;
  THDoubleTensor *t = THDoubleTensor_newWithSize1d(100);
  for (int i = 0; i < DRAWS / 2; i++) THRandom_random(g);
  for (int i = 0; i < DRAWS / 200; i++) THDoubleTensor_uniform(t, g, 0, 1); /* 100 draws each */
  THDoubleTensor_free(t);
  return NULL;
}

int main(void) {
  th_test_install_handlers();

  /* lifetime and torch7's outputs */
  THGenerator *g = THGenerator_new();
  CHECK(g != NULL);
  CHECK(THGenerator_isValid(g) == 1);
  THRandom_manualSeed(g, 42);
  CHECK(THRandom_initialSeed(g) == 42);
  CHECK(THRandom_random(g) == 1608637542UL);
  CHECK(THRandom_random(g) == 3421126067UL);
  CHECK(THRandom_random(g) == 4083286876UL);
  THRandom_manualSeed(g, 42);
  CHECK(THRandom_uniform(g, 0, 1) == 0.37454011430963874);
  CHECK(THRandom_normal(g, 0, 1) == 0.70734813624035553);

  THGenerator *c = THGenerator_new();
  CHECK(THGenerator_copy(c, g) == c); /* copies the cached normal too */
  CHECK(THGenerator_copy(g, g) == g);
  double from_g = THRandom_normal(g, 0, 1);
  CHECK(from_g == -2.3494471019969621);
  CHECK(THRandom_normal(c, 0, 1) == from_g);
  CHECK(THRandom_random(c) == THRandom_random(g));
  THGenerator_free(c); /* g is independent of the copy */
  CHECK(THGenerator_isValid(g) == 1);
  THGenerator_free(NULL);
  unsigned long s = THRandom_seed(g);
  CHECK(THRandom_initialSeed(g) == s);

  /* RNG state round trip, also onto another generator */
  THRandom_manualSeed(g, 7);
  for (int i = 0; i < 1000; i++) THRandom_random(g);
  THByteTensor *st = THByteTensor_new();
  THByteTensor_getRNGState(g, st);
  CHECK(THByteTensor_nElement(st) == 5048);
  double a[4];
  for (int i = 0; i < 4; i++) a[i] = THRandom_normal(g, 0, 1);
  THByteTensor_setRNGState(g, st);
  for (int i = 0; i < 4; i++) CHECK(THRandom_normal(g, 0, 1) == a[i]);
  THGenerator *h = THGenerator_new();
  THByteTensor_setRNGState(h, st);
  CHECK(THRandom_normal(h, 0, 1) == a[0]);
  THGenerator_free(h);

  /* errors: exactly one handler call, the argument number, nothing changed */
  THByteTensor_getRNGState(g, st);
  THByteTensor *after = THByteTensor_new();
  THFloatTensor *t = THFloatTensor_newWithSize1d(5);
  THFloatTensor_fill(t, 3.0f);
  EXPECT_ERROR(CHECK(isnan(THRandom_normal(g, 0, 0))));
  CHECK(th_test_last_arg == 3);
  EXPECT_ERROR(CHECK(THRandom_bernoulli(g, 1.5) == 0));
  CHECK(th_test_last_arg == 2);
  EXPECT_ERROR(THRandom_geometric(g, 1.0));
  EXPECT_ERROR(THFloatTensor_normal(t, g, 0, -1));
  CHECK(th_test_last_arg == 4);
  EXPECT_ERROR(THFloatTensor_uniform(t, NULL, 0, 1));
  CHECK(th_test_last_arg == 2);
  EXPECT_ERROR(THFloatTensor_exponential(t, g, 0));
  EXPECT_ERROR(THFloatTensor_clampedRandom(t, g, 5, 1));
  EXPECT_ERROR(THFloatTensor_randperm(t, g, 0));
  CHECK(THFloatTensor_nDimension(t) == 1 && THFloatTensor_size(t, 0) == 5);
  for (int i = 0; i < 5; i++) CHECK(THFloatTensor_get1d(t, i) == 3.0f);
  THLongTensor *idx = THLongTensor_newWithSize1d(2);
  THLongTensor_fill(idx, -1);
  THFloatTensor *probs = THFloatTensor_newWithSize1d(3);
  THFloatTensor_fill(probs, 1.0f);
  EXPECT_ERROR(THFloatTensor_multinomial(idx, g, probs, 4, 0)); /* more than 3 without replacement */
  CHECK(th_test_last_arg == 4);
  THFloatTensor_set1d(probs, 1, -1.0f);
  EXPECT_ERROR(THFloatTensor_multinomial(idx, g, probs, 1, 1));
  CHECK(th_test_last_arg == 3);
  CHECK(THLongTensor_size(idx, 0) == 2 && THLongTensor_get1d(idx, 0) == -1);
  THByteTensor *small = THByteTensor_newWithSize1d(10);
  EXPECT_ERROR(THByteTensor_setRNGState(g, small));
  THByteTensor_free(small);
  THByteTensor_getRNGState(g, after);
  CHECK(THByteTensor_nElement(after) == 5048 &&
        memcmp(THByteTensor_data(st), THByteTensor_data(after), 5048) == 0);
  THFloatTensor_set1d(probs, 1, 0.0f); /* category 1 can never be drawn */
  EXPECT_OK(THFloatTensor_multinomial(idx, g, probs, 2, 0));
  CHECK(THLongTensor_size(idx, 0) == 2);
  CHECK(THLongTensor_get1d(idx, 0) != 1 && THLongTensor_get1d(idx, 1) != 1);
  CHECK(THLongTensor_get1d(idx, 0) != THLongTensor_get1d(idx, 1));

  /* a tampered state is rejected */
  THByteTensor_set1d(st, 12, 0); /* the "seeded" flag */
  EXPECT_ERROR(THByteTensor_setRNGState(g, st));

  /* one generator from several threads: every draw is atomic, so the total is sequential */
  THRandom_manualSeed(g, 99);
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, hammer, g);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  THGenerator *ref = THGenerator_new();
  THRandom_manualSeed(ref, 99);
  for (long i = 0; i < (long)NTHREADS * DRAWS; i++) THRandom_random(ref);
  CHECK(THRandom_random(g) == THRandom_random(ref));
  THGenerator_free(ref);

  THFloatTensor_free(probs);
  THLongTensor_free(idx);
  THFloatTensor_free(t);
  THByteTensor_free(after);
  THByteTensor_free(st);
  THGenerator_free(g);
  return TH_TEST_DONE();
}
