/* File and POSIX shared-memory mappings (TH_API.md section 9): newWithMapping (shared, private,
 * whole-file, missing files), shared memory, THRefcountedMapAllocator, THMapAllocatorContext.
 * Every file and shm object made here is removed at the end. */
#include "th_test.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];
static char path_a[600], path_b[600], path_c[600], path_missing[600];
static char shm_name[64], shm_rc_name[64], shm_x_name[64];

/* The size of a file, or -1 when it does not exist. */
static long file_size(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  return (long)st.st_size;
}

static int write_file(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return 0;
  size_t w = fwrite(bytes, 1, n, f);
  return fclose(f) == 0 && w == n;
}

static int read_file(const char *path, void *bytes, size_t n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  size_t r = fread(bytes, 1, n, f);
  fclose(f);
  return r == n;
}

/* 1 if a shm object with this name exists. */
static int shm_exists(const char *name) {
  int fd = shm_open(name, O_RDONLY, 0);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* Two storages mapping one file with TH_ALLOCATOR_MAPPED_SHARED see each other's writes, and the
 * writes reach the file. */
static void shared_file(void) {
  unlink(path_a);
  THFloatStorage *s1 = THFloatStorage_newWithMapping(path_a, 8, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(s1 != NULL);
  if (s1 == NULL) return;
  CHECK(THFloatStorage_size(s1) == 8);
  CHECK(file_size(path_a) == 32); /* created and grown to 8 floats */
  THFloatStorage *s2 = THFloatStorage_newWithMapping(path_a, 8, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(s2 != NULL);
  if (s2 == NULL) {
    THFloatStorage_free(s1);
    return;
  }
  CHECK(THFloatStorage_size(s2) == 8);
  CHECK(THFloatStorage_data(s1) != THFloatStorage_data(s2)); /* two mappings */

  for (int i = 0; i < 8; i++) THFloatStorage_set(s1, i, 1.5f * (float)i);
  for (int i = 0; i < 8; i++) CHECK(THFloatStorage_get(s2, i) == 1.5f * (float)i);
  THFloatStorage_set(s2, 3, -42.0f);
  CHECK(THFloatStorage_get(s1, 3) == -42.0f);
  THFloatStorage_fill(s2, 0.0f);
  CHECK(THFloatStorage_get(s1, 7) == 0.0f);
  for (int i = 0; i < 8; i++) THFloatStorage_data(s2)[i] = (float)(i + 1);
  CHECK(THFloatStorage_get(s1, 0) == 1.0f && THFloatStorage_get(s1, 7) == 8.0f);

  /* mappings are not resizable */
  EXPECT_ERROR(THFloatStorage_resize(s1, 100));
  CHECK(THFloatStorage_size(s1) == 8);
  CHECK(THFloatStorage_get(s1, 7) == 8.0f);

  /* a smaller mapping of the same file sees the prefix and does not shrink the file */
  THFloatStorage *s3 = THFloatStorage_newWithMapping(path_a, 2, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(s3 != NULL && THFloatStorage_size(s3) == 2);
  if (s3) CHECK(THFloatStorage_get(s3, 1) == 2.0f);
  CHECK(file_size(path_a) == 32);
  THFloatStorage_free(s3);

  THFloatStorage_free(s1);
  THFloatStorage_free(s2);

  /* the writes are in the file */
  float back[8] = {0};
  CHECK(read_file(path_a, back, sizeof back));
  for (int i = 0; i < 8; i++) CHECK(back[i] == (float)(i + 1));
  CHECK(file_size(path_a) == 32);
}

/* size 0 maps the whole existing file: size = file bytes / element size. */
static void whole_file(void) {
  /* path_a holds the 8 floats 1..8 (32 bytes) */
  THDoubleStorage *d = THDoubleStorage_newWithMapping(path_a, 0, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(d != NULL);
  if (d) {
    CHECK(THDoubleStorage_size(d) == 4);
    float f[2];
    memcpy(f, THDoubleStorage_data(d), sizeof f);
    CHECK(f[0] == 1.0f && f[1] == 2.0f);
  }
  THDoubleStorage_free(d);

  THByteStorage *b = THByteStorage_newWithMapping(path_a, 0, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(b != NULL);
  if (b) CHECK(THByteStorage_size(b) == 32);
  THByteStorage_free(b);

  THShortStorage *sh = THShortStorage_newWithMapping(path_a, 0, 0);
  CHECK(sh != NULL);
  if (sh) CHECK(THShortStorage_size(sh) == 16);
  THShortStorage_free(sh);

  THFloatStorage *f = THFloatStorage_newWithMapping(path_a, -1, 0); /* size <= 0: whole file */
  CHECK(f != NULL);
  if (f) {
    CHECK(THFloatStorage_size(f) == 8);
    CHECK(THFloatStorage_get(f, 5) == 6.0f);
  }
  THFloatStorage_free(f);

  /* a partial trailing element is not counted: 10 bytes are 2 ints */
  const uint8_t ten[10] = {1, 0, 0, 0, 2, 0, 0, 0, 9, 9};
  CHECK(write_file(path_c, ten, sizeof ten));
  THIntStorage *i = THIntStorage_newWithMapping(path_c, 0, 0);
  CHECK(i != NULL);
  if (i) {
    CHECK(THIntStorage_size(i) == 2);
    CHECK(THIntStorage_get(i, 0) == 1 && THIntStorage_get(i, 1) == 2);
  }
  THIntStorage_free(i);
  CHECK(file_size(path_c) == 10);
}

/* flags 0: a private (copy-on-write) mapping of an existing file. */
static void private_file(void) {
  const int32_t vals[4] = {11, -22, 33, -44};
  CHECK(write_file(path_b, vals, sizeof vals));
  THIntStorage *p = THIntStorage_newWithMapping(path_b, 0, 0);
  CHECK(p != NULL);
  if (p == NULL) return;
  CHECK(THIntStorage_size(p) == 4);
  for (int k = 0; k < 4; k++) CHECK(THIntStorage_get(p, k) == vals[k]);

  EXPECT_OK(THIntStorage_set(p, 0, 99));
  THIntStorage_data(p)[3] = 7;
  CHECK(THIntStorage_get(p, 0) == 99 && THIntStorage_get(p, 3) == 7);

  /* the file and other mappings do not see the writes */
  int32_t back[4] = {0};
  CHECK(read_file(path_b, back, sizeof back));
  CHECK(back[0] == 11 && back[3] == -44);
  THIntStorage *q = THIntStorage_newWithMapping(path_b, 4, 0);
  CHECK(q != NULL);
  if (q) CHECK(THIntStorage_get(q, 0) == 11 && THIntStorage_get(q, 3) == -44);
  THIntStorage_free(q);

  /* a prefix mapping */
  q = THIntStorage_newWithMapping(path_b, 2, 0);
  CHECK(q != NULL);
  if (q) CHECK(THIntStorage_size(q) == 2 && THIntStorage_get(q, 1) == -22);
  THIntStorage_free(q);

  /* a private mapping larger than the file is an error (the file is not grown) */
  THIntStorage *big = (THIntStorage *)&big;
  EXPECT_ERROR(big = THIntStorage_newWithMapping(path_b, 100, 0));
  CHECK(big == NULL);
  CHECK(file_size(path_b) == 16);

  THIntStorage_free(p);
  CHECK(read_file(path_b, back, sizeof back));
  CHECK(back[0] == 11 && back[1] == -22 && back[2] == 33 && back[3] == -44);
}

/* Errors: a missing file read-only, NOCREATE, EXCLUSIVE on an existing file. */
static void mapping_errors(void) {
  unlink(path_missing);
  THFloatStorage *s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(path_missing, 4, 0));
  CHECK(s == NULL);
  s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(path_missing, 0, 0));
  CHECK(s == NULL);
  CHECK(file_size(path_missing) == -1); /* not created */

  s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(path_missing, 4,
                                                 TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_NOCREATE));
  CHECK(s == NULL);
  CHECK(file_size(path_missing) == -1);

  /* EXCLUSIVE: the file must not exist yet */
  s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(path_a, 4,
                                                 TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_EXCLUSIVE));
  CHECK(s == NULL);
  CHECK(file_size(path_a) == 32);
  s = THFloatStorage_newWithMapping(path_missing, 4, TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_EXCLUSIVE);
  CHECK(s != NULL);
  if (s) CHECK(THFloatStorage_size(s) == 4);
  CHECK(file_size(path_missing) == 16);
  THFloatStorage_free(s);
  unlink(path_missing);

  /* a byte size that overflows: an error, and the file is left alone */
  THDoubleStorage *huge = (THDoubleStorage *)&huge;
  EXPECT_ERROR(huge = THDoubleStorage_newWithMapping(path_a, PTRDIFF_MAX, TH_ALLOCATOR_MAPPED_SHARED));
  CHECK(huge == NULL);
  CHECK(file_size(path_a) == 32);

  /* EXCLUSIVE alone is not a valid mode */
  s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(path_missing, 4, TH_ALLOCATOR_MAPPED_EXCLUSIVE));
  CHECK(s == NULL);
  CHECK(file_size(path_missing) == -1);

  /* an empty file cannot be mapped whole */
  CHECK(write_file(path_c, "", 0));
  THByteStorage *e = (THByteStorage *)&e;
  EXPECT_ERROR(e = THByteStorage_newWithMapping(path_c, 0, 0));
  CHECK(e == NULL);

  s = (THFloatStorage *)&s;
  EXPECT_ERROR(s = THFloatStorage_newWithMapping(NULL, 4, TH_ALLOCATOR_MAPPED_SHARED));
  CHECK(s == NULL);
}

/* POSIX shared memory shared by two storages; freeing a SHAREDMEM mapping unlinks the name. */
static void shared_memory(void) {
  shm_unlink(shm_name);
  const int flags = TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_SHAREDMEM;
  THLongStorage *a = THLongStorage_newWithMapping(shm_name, 16, flags);
  CHECK(a != NULL);
  if (a == NULL) return;
  CHECK(THLongStorage_size(a) == 16);
  CHECK(shm_exists(shm_name));
  THLongStorage *b = THLongStorage_newWithMapping(shm_name, 0, flags); /* the whole object */
  CHECK(b != NULL);
  if (b == NULL) {
    THLongStorage_free(a);
    shm_unlink(shm_name);
    return;
  }
  CHECK(THLongStorage_size(b) == 16);

  for (int i = 0; i < 16; i++) THLongStorage_set(a, i, (int64_t)i * 1000000007LL);
  for (int i = 0; i < 16; i++) CHECK(THLongStorage_get(b, i) == (int64_t)i * 1000000007LL);
  THLongStorage_set(b, 15, -5);
  CHECK(THLongStorage_get(a, 15) == -5);

  /* the object is 16 longs */
  int fd = shm_open(shm_name, O_RDONLY, 0);
  CHECK(fd >= 0);
  if (fd >= 0) {
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 16 * 8);
    close(fd);
  }

  THLongStorage_free(a); /* unlinks the name; b's mapping stays valid */
  CHECK(!shm_exists(shm_name));
  CHECK(THLongStorage_get(b, 1) == 1000000007LL && THLongStorage_get(b, 15) == -5);
  THLongStorage_set(b, 0, 3);
  CHECK(THLongStorage_get(b, 0) == 3);
  THLongStorage_free(b);
  CHECK(!shm_exists(shm_name));
  shm_unlink(shm_name);
}

/* THRefcountedMapAllocator: a user count in the segment; the last free unlinks it. */
static void refcounted_shm(void) {
  shm_unlink(shm_rc_name);
  const int flags = TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_SHAREDMEM;
  THMapAllocatorContext *ctx1 = THMapAllocatorContext_new(shm_rc_name, flags);
  CHECK(ctx1 != NULL);
  CHECK(THMapAllocatorContext_size(ctx1) == 0);
  THFloatStorage *s1 = THFloatStorage_newWithAllocator(10, &THRefcountedMapAllocator, ctx1);
  CHECK(s1 != NULL);
  if (s1 == NULL) {
    shm_unlink(shm_rc_name);
    return;
  }
  CHECK(THFloatStorage_size(s1) == 10);
  CHECK(THMapAllocatorContext_size(ctx1) == 40);
  CHECK(shm_exists(shm_rc_name));
  int fd = shm_open(shm_rc_name, O_RDONLY, 0);
  if (fd >= 0) {
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 40 + 64); /* data + the 64-byte count header */
    close(fd);
  }

  THMapAllocatorContext *ctx2 = THMapAllocatorContext_new(shm_rc_name, flags);
  THFloatStorage *s2 = THFloatStorage_newWithAllocator(0, &THRefcountedMapAllocator, ctx2);
  CHECK(s2 != NULL);
  if (s2 == NULL) {
    THFloatStorage_free(s1);
    shm_unlink(shm_rc_name);
    return;
  }
  CHECK(THFloatStorage_size(s2) == 10); /* size 0: the existing segment, header excluded */
  CHECK(THMapAllocatorContext_size(ctx2) == 40);

  for (int i = 0; i < 10; i++) THFloatStorage_set(s1, i, (float)i - 4.5f);
  for (int i = 0; i < 10; i++) CHECK(THFloatStorage_get(s2, i) == (float)i - 4.5f);
  THFloatStorage_set(s2, 9, 123.0f);
  CHECK(THFloatStorage_get(s1, 9) == 123.0f);

  /* not resizable */
  EXPECT_ERROR(THFloatStorage_resize(s2, 20));
  CHECK(THFloatStorage_size(s2) == 10);

  /* two users: freeing one keeps the segment */
  THFloatStorage_free(s1);
  CHECK(shm_exists(shm_rc_name));
  CHECK(THFloatStorage_get(s2, 0) == -4.5f && THFloatStorage_get(s2, 9) == 123.0f);

  /* incref/decref on the count (one user left): decref reports 1 when it reaches zero */
  void *data = THFloatStorage_data(s2);
  int r = -1;
  EXPECT_OK(THRefcountedMapAllocator_incref(ctx2, data)); /* 2 */
  EXPECT_OK(r = THRefcountedMapAllocator_decref(ctx2, data)); /* 1 */
  CHECK(r == 0);
  EXPECT_OK(r = THRefcountedMapAllocator_decref(ctx2, data)); /* 0 */
  CHECK(r == 1);
  THRefcountedMapAllocator_incref(ctx2, data); /* back to 1: s2's own */
  THRefcountedMapAllocator_incref(ctx2, data); /* 2 */
  CHECK(THRefcountedMapAllocator_decref(ctx2, data) == 0); /* 1 */
  CHECK(shm_exists(shm_rc_name));

  /* the last user frees: the segment is gone */
  THFloatStorage_free(s2);
  CHECK(!shm_exists(shm_rc_name));
  errno = 0;
  int gone = shm_open(shm_rc_name, O_RDONLY, 0);
  CHECK(gone < 0 && errno == ENOENT);
  if (gone >= 0) close(gone);
  shm_unlink(shm_rc_name);

  /* the refcounted allocator needs SHAREDMEM; on failure the context stays the caller's */
  THMapAllocatorContext *plain = THMapAllocatorContext_new(path_c, TH_ALLOCATOR_MAPPED_SHARED);
  THFloatStorage *bad = (THFloatStorage *)&bad;
  EXPECT_ERROR(bad = THFloatStorage_newWithAllocator(4, &THRefcountedMapAllocator, plain));
  CHECK(bad == NULL);
  THMapAllocatorContext_free(plain);
}

/* THMapAllocatorContext_new/filename/fd/size/free and KEEPFD. */
static void context(void) {
  char name[] = "some/file.bin";
  THMapAllocatorContext *ctx = THMapAllocatorContext_new(name, TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(ctx != NULL);
  if (ctx) {
    char *fn = THMapAllocatorContext_filename(ctx);
    CHECK(fn != NULL && strcmp(fn, "some/file.bin") == 0);
    CHECK(fn != name); /* a copy */
    name[0] = 'X';
    CHECK(strcmp(THMapAllocatorContext_filename(ctx), "some/file.bin") == 0);
    CHECK(THMapAllocatorContext_fd(ctx) == -1);
    CHECK(THMapAllocatorContext_size(ctx) == 0);
  }
  THMapAllocatorContext_free(ctx);

  ctx = THMapAllocatorContext_new(NULL, 0);
  CHECK(ctx != NULL);
  if (ctx) CHECK(strcmp(THMapAllocatorContext_filename(ctx), "filename not specified") == 0);
  THMapAllocatorContext_free(ctx);
  EXPECT_OK(THMapAllocatorContext_free(NULL));

  /* EXCLUSIVE alone is an error; with SHARED it is fine */
  THMapAllocatorContext *bad = (THMapAllocatorContext *)&bad;
  EXPECT_ERROR(bad = THMapAllocatorContext_new(path_a, TH_ALLOCATOR_MAPPED_EXCLUSIVE));
  CHECK(bad == NULL);
  ctx = THMapAllocatorContext_new(path_a, TH_ALLOCATOR_MAPPED_EXCLUSIVE | TH_ALLOCATOR_MAPPED_SHARED);
  CHECK(ctx != NULL);
  THMapAllocatorContext_free(ctx);
  ctx = THMapAllocatorContext_new(shm_x_name, TH_ALLOCATOR_MAPPED_EXCLUSIVE | TH_ALLOCATOR_MAPPED_SHAREDMEM);
  CHECK(ctx != NULL);
  THMapAllocatorContext_free(ctx);

  /* a context given to a storage through THMapAllocator: size and (with KEEPFD) fd are known */
  unlink(path_c);
  ctx = THMapAllocatorContext_new(path_c, TH_ALLOCATOR_MAPPED_SHARED | TH_ALLOCATOR_MAPPED_KEEPFD);
  THByteStorage *s = THByteStorage_newWithAllocator(100, &THMapAllocator, ctx);
  CHECK(s != NULL);
  if (s) {
    CHECK(THByteStorage_size(s) == 100);
    CHECK(THMapAllocatorContext_size(ctx) == 100);
    CHECK(file_size(path_c) == 100);
    int fd = THMapAllocatorContext_fd(ctx);
    CHECK(fd >= 0);
    struct stat by_fd, by_path;
    CHECK(fd >= 0 && fstat(fd, &by_fd) == 0 && stat(path_c, &by_path) == 0 && by_fd.st_ino == by_path.st_ino &&
          by_fd.st_dev == by_path.st_dev);
    memset(THByteStorage_data(s), 0x7e, 100);
    THByteStorage_free(s); /* unmaps, closes the kept fd, frees the context */
    errno = 0;
    CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
    uint8_t back[100];
    CHECK(read_file(path_c, back, sizeof back));
    CHECK(back[0] == 0x7e && back[99] == 0x7e);
  }

  /* without KEEPFD the descriptor is not kept */
  ctx = THMapAllocatorContext_new(path_c, TH_ALLOCATOR_MAPPED_SHARED);
  THByteStorage *t = THByteStorage_newWithAllocator(0, &THMapAllocator, ctx);
  CHECK(t != NULL);
  if (t) {
    CHECK(THByteStorage_size(t) == 100);
    CHECK(THMapAllocatorContext_size(ctx) == 100);
    CHECK(THMapAllocatorContext_fd(ctx) == -1);
    CHECK(THByteStorage_get(t, 50) == 0x7e);
  }
  THByteStorage_free(t);
}

int main(void) {
  th_test_install_handlers();
  const char *d = getenv("TH_TEST_TMPDIR");
  snprintf(dir, sizeof dir, "%s", (d != NULL && d[0] != '\0') ? d : "/tmp");
  long pid = (long)getpid();
  snprintf(path_a, sizeof path_a, "%s/th_test_map_%ld_a.bin", dir, pid);
  snprintf(path_b, sizeof path_b, "%s/th_test_map_%ld_b.bin", dir, pid);
  snprintf(path_c, sizeof path_c, "%s/th_test_map_%ld_c.bin", dir, pid);
  snprintf(path_missing, sizeof path_missing, "%s/th_test_map_%ld_missing.bin", dir, pid);
  snprintf(shm_name, sizeof shm_name, "/th_test_%ld", pid);
  snprintf(shm_rc_name, sizeof shm_rc_name, "/th_test_rc_%ld", pid);
  snprintf(shm_x_name, sizeof shm_x_name, "/th_test_x_%ld", pid);

  shared_file();
  whole_file();
  private_file();
  mapping_errors();
  shared_memory();
  refcounted_shm();
  context();

  unlink(path_a);
  unlink(path_b);
  unlink(path_c);
  unlink(path_missing);
  shm_unlink(shm_name);
  shm_unlink(shm_rc_name);
  shm_unlink(shm_x_name);
  CHECK(file_size(path_a) == -1 && file_size(path_b) == -1 && file_size(path_c) == -1);
  return TH_TEST_DONE();
}
