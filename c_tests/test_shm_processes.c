/* Sharing a tensor between two real processes through POSIX shared memory: the parent puts a
 * tensor in a THRefcountedMapAllocator segment (TH's share_memory_ story), a forked child opens
 * the segment by name, checks the parent's data and writes its own; the parent sees the child's
 * writes. The segment disappears from /dev/shm once both have freed it (the child first, then
 * the parent; and in the other order). */
#include "th_test.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int shm_exists(const char *name) {
  int fd = shm_open(name, O_RDONLY, 0);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* A 3 x 4 float tensor on a new shared segment `name` (fails if the name exists). */
static THFloatTensor *create_shared(const char *name) {
  THMapAllocatorContext *ctx =
      THMapAllocatorContext_new(name, TH_ALLOCATOR_MAPPED_SHAREDMEM | TH_ALLOCATOR_MAPPED_EXCLUSIVE);
  if (ctx == NULL) return NULL;
  THFloatStorage *s = THFloatStorage_newWithAllocator(12, &THRefcountedMapAllocator, ctx);
  if (s == NULL) {
    THMapAllocatorContext_free(ctx);
    return NULL;
  }
  THFloatTensor *t = THFloatTensor_newWithStorage2d(s, 0, 3, -1, 4, -1);
  THFloatStorage_free(s); /* the tensor holds it */
  return t;
}

/* Opens the existing segment `name` as a 3 x 4 float tensor. */
static THFloatTensor *open_shared(const char *name) {
  THMapAllocatorContext *ctx =
      THMapAllocatorContext_new(name, TH_ALLOCATOR_MAPPED_SHAREDMEM | TH_ALLOCATOR_MAPPED_NOCREATE);
  if (ctx == NULL) return NULL;
  THFloatStorage *s = THFloatStorage_newWithAllocator(0, &THRefcountedMapAllocator, ctx); /* whole segment */
  if (s == NULL) {
    THMapAllocatorContext_free(ctx);
    return NULL;
  }
  THFloatTensor *t = NULL;
  if (THFloatStorage_size(s) >= 12) t = THFloatTensor_newWithStorage2d(s, 0, 3, -1, 4, -1);
  THFloatStorage_free(s);
  return t;
}

/* The child: open, check the parent's values, write its own, exit with the failure count. */
static int child(const char *name, int rfd, int wfd) {
  THFloatTensor *t = open_shared(name);
  if (t == NULL) return 10;
  int bad = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      if (THFloatTensor_get2d(t, i, j) != (float)(i * 4 + j)) bad++;
  /* write through a transposed view: same memory */
  THFloatTensor *tt = THFloatTensor_newTranspose(t, 0, 1);
  for (int j = 0; j < 4; j++) THFloatTensor_set2d(tt, j, 2, -1.0f - (float)j);
  THFloatTensor_free(tt);
  if (rfd >= 0) {
    char c;
    /* stay alive until the parent has freed its reference */
    if (write(wfd, "w", 1) != 1) bad++;
    if (read(rfd, &c, 1) != 1) bad++;
    if (THFloatTensor_get2d(t, 0, 0) != 100.0f) bad++; /* the parent's last write */
  }
  THFloatTensor_free(t);
  return bad;
}

static void two_processes(int parent_frees_first) {
  char name[64];
  snprintf(name, sizeof name, "/th_test_procs_%ld_%d", (long)getpid(), parent_frees_first);
  shm_unlink(name);
  THFloatTensor *t = create_shared(name);
  CHECK(t != NULL);
  if (t == NULL) return;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) THFloatTensor_set2d(t, i, j, (float)(i * 4 + j));
  CHECK(shm_exists(name));

  /* pipes: p2c (parent -> child) and c2p (child -> parent) */
  int p2c[2], c2p[2];
  CHECK(pipe(p2c) == 0 && pipe(c2p) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    _exit(parent_frees_first ? child(name, p2c[0], c2p[1]) : child(name, -1, -1));
  }
  CHECK(pid > 0);
  int status = 0;
  if (parent_frees_first) {
    char c;
    CHECK(read(c2p[0], &c, 1) == 1); /* the child has opened and written */
    for (int j = 0; j < 4; j++) CHECK(THFloatTensor_get2d(t, 2, j) == -1.0f - (float)j);
    THFloatTensor_set2d(t, 0, 0, 100.0f);
    THFloatTensor_free(t); /* parent goes first: the child still maps it */
    t = NULL;
    CHECK(shm_exists(name));
    CHECK(write(p2c[1], "g", 1) == 1);
    CHECK(waitpid(pid, &status, 0) == pid);
  } else {
    CHECK(waitpid(pid, &status, 0) == pid); /* child done and gone first */
    for (int j = 0; j < 4; j++) CHECK(THFloatTensor_get2d(t, 2, j) == -1.0f - (float)j);
    CHECK(THFloatTensor_get2d(t, 1, 1) == 5.0f);
    CHECK(shm_exists(name)); /* the parent still uses it */
    THFloatTensor_free(t);
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(!shm_exists(name)); /* the last user removed it */
  close(p2c[0]);
  close(p2c[1]);
  close(c2p[0]);
  close(c2p[1]);
}

/* Opening a name that does not exist is an error, not a new segment. */
static void missing(void) {
  char name[64];
  snprintf(name, sizeof name, "/th_test_missing_%ld", (long)getpid());
  shm_unlink(name);
  THMapAllocatorContext *ctx =
      THMapAllocatorContext_new(name, TH_ALLOCATOR_MAPPED_SHAREDMEM | TH_ALLOCATOR_MAPPED_NOCREATE);
  EXPECT_ERROR(CHECK(THFloatStorage_newWithAllocator(0, &THRefcountedMapAllocator, ctx) == NULL));
  THMapAllocatorContext_free(ctx);
  CHECK(!shm_exists(name));
}

int main(void) {
  th_test_install_handlers();
  two_processes(0);
  two_processes(1);
  missing();
  return TH_TEST_DONE();
}
