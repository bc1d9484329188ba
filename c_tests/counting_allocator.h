/* A THAllocator that counts its calls, for test_storage.c and test_allocator.c.
 *
 * The allocator context is a Counter. Every callback first checks that the context it was given
 * is a Counter made by counter_init (else counting_bad_ctx is bumped and nothing is touched),
 * then counts the call, remembers its arguments and result, and keeps the set of blocks it
 * handed out and has not seen freed (`live`). Freeing a pointer it never handed out is counted
 * in bad_frees and not passed to free(). */
#ifndef COUNTING_ALLOCATOR_H
#define COUNTING_ALLOCATOR_H

#include <TH/TH.h>
#include <stdlib.h>
#include <string.h>

#define COUNTER_MAX_LIVE 16

typedef struct Counter {
  int mallocs, reallocs, frees, null_frees;
  int bad_frees;
  int fail_malloc;  /* malloc returns NULL when set */
  int fail_realloc; /* realloc returns NULL (and keeps the block) when set */
  ptrdiff_t last_malloc_size, last_realloc_size;
  void *last_malloc, *last_realloc_in, *last_realloc_out, *last_free;
  int live;
  void *blocks[COUNTER_MAX_LIVE];
} Counter;

static Counter *counting_registry[64];
static int counting_nregistry = 0;
static int counting_bad_ctx = 0;

static inline void counter_init(Counter *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < counting_nregistry; i++)
    if (counting_registry[i] == c) return;
  if (counting_nregistry < 64) counting_registry[counting_nregistry++] = c;
}

static inline Counter *counter_of(void *ctx) {
  for (int i = 0; i < counting_nregistry; i++)
    if ((void *)counting_registry[i] == ctx) return counting_registry[i];
  counting_bad_ctx++;
  return NULL;
}

static inline void counter_track(Counter *c, void *p) {
  for (int i = 0; i < COUNTER_MAX_LIVE; i++)
    if (c->blocks[i] == NULL) {
      c->blocks[i] = p;
      c->live++;
      return;
    }
  abort(); /* more live blocks than a test ever makes */
}

static inline int counter_untrack(Counter *c, void *p) {
  for (int i = 0; i < COUNTER_MAX_LIVE; i++)
    if (c->blocks[i] == p) {
      c->blocks[i] = NULL;
      c->live--;
      return 1;
    }
  return 0;
}

/* Hands a malloc'd block to the counter, as if its malloc had made it. */
static inline void counter_adopt(Counter *c, void *p) {
  counter_track(c, p);
}

static void *counting_malloc(void *ctx, ptrdiff_t size) {
  Counter *c = counter_of(ctx);
  if (c == NULL) return NULL;
  c->mallocs++;
  c->last_malloc_size = size;
  void *p = NULL;
  if (!c->fail_malloc && size > 0) p = malloc((size_t)size);
  if (p != NULL) counter_track(c, p);
  c->last_malloc = p;
  return p;
}

static void *counting_realloc(void *ctx, void *ptr, ptrdiff_t size) {
  Counter *c = counter_of(ctx);
  if (c == NULL) return NULL;
  c->reallocs++;
  c->last_realloc_in = ptr;
  c->last_realloc_size = size;
  c->last_realloc_out = NULL;
  if (ptr != NULL && !counter_untrack(c, ptr)) {
    c->bad_frees++;
    return NULL;
  }
  if (c->fail_realloc && size > 0) {
    if (ptr != NULL) counter_track(c, ptr); /* still ours */
    return NULL;
  }
  if (size <= 0) {
    free(ptr);
    return NULL;
  }
  void *q = realloc(ptr, (size_t)size);
  if (q == NULL) {
    if (ptr != NULL) counter_track(c, ptr);
    return NULL;
  }
  counter_track(c, q);
  c->last_realloc_out = q;
  return q;
}

static void counting_free(void *ctx, void *ptr) {
  Counter *c = counter_of(ctx);
  if (c == NULL) return;
  c->frees++;
  c->last_free = ptr;
  if (ptr == NULL) {
    c->null_frees++;
    return;
  }
  if (!counter_untrack(c, ptr)) {
    c->bad_frees++;
    return;
  }
  free(ptr);
}

static THAllocator counting_allocator = {counting_malloc, counting_realloc, counting_free};

#endif
