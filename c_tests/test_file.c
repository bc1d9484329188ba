/* THFile.h / THDiskFile.h / THMemoryFile.h: for every dtype, storage, Raw and Scalar transfers
 * round-trip bit for bit through memory and disk files in binary and ASCII modes; the ASCII text
 * and binary byte order are checked against hand-written bytes; long size 4; quiet and pedantic
 * short reads; strings; pipes; misuse errors. Plus .npy corrupt-file errors (round trips with
 * numpy are in tests/python/test_npy.py). */
#include "th_test.h"

#include <TH/THDiskFile.h>
#include <TH/THFile.h>
#include <TH/THMemoryFile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 9

static char tmp_path[512];

static const char *tmpfile_name(const char *leaf) {
  const char *d = getenv("TH_TEST_TMPDIR");
  snprintf(tmp_path, sizeof tmp_path, "%s/th_test_file_%ld_%s", d ? d : "/tmp", (long)getpid(), leaf);
  return tmp_path;
}

/* Test values as doubles; each dtype keeps those it can hold exactly or rounds them once. */
static const double VALS[N] = {0, 1, -2, 100, 127, -128, 3.25, 0.1, -1e-3};

static uint8_t mk_Byte(int i) { return (uint8_t)(i * 29 + 3); }
static int8_t mk_Char(int i) { return (int8_t)(VALS[i] < 0 ? (int)VALS[i] : (int)VALS[i]); }
static int16_t mk_Short(int i) { return (int16_t)(i == 8 ? -32768 : (int)VALS[i] * 250); }
static int32_t mk_Int(int i) { return (int32_t)(i == 8 ? INT32_MIN : (int)VALS[i] * 16000000); }
static int64_t mk_Long(int i) { return i == 8 ? INT64_MIN : (int64_t)VALS[i] * 70000000000LL; }
static float mk_Float(int i) { return i == 0 ? 1e-40f : (float)VALS[i] * 1.1f; }
static double mk_Double(int i) { return i == 0 ? 5e-324 : VALS[i] / 3.0; }
static THHalf mk_Half(int i) { return TH_float2half((float)VALS[i]); }
static THBFloat16 mk_BFloat16(int i) { return TH_float2bfloat16((float)VALS[i] * 7.0f); }
static THBool mk_Bool(int i) { return (THBool)(i % 3 == 0); }

#define ROUNDTRIP(R, real)                                                                   \
  static void roundtrip_##R(THFile *f, int binary) {                                        \
    TH##R##Storage *s = TH##R##Storage_newWithSize(N);                                      \
    TH##R##Storage *back = TH##R##Storage_newWithSize(N);                                   \
    real raw[N], raw_back[N], one, zero;                                                    \
    int i;                                                                                  \
    memset(&zero, 0, sizeof zero);                                                          \
    for (i = 0; i < N; i++) {                                                               \
      raw[i] = mk_##R(i);                                                                   \
      TH##R##Storage_set(s, i, raw[i]);                                                     \
    }                                                                                       \
    if (binary) THFile_binary(f); else THFile_ascii(f);                                     \
    THFile_seek(f, 0);                                                                      \
    CHECK(THFile_write##R(f, s) == N);                                                      \
    THFile_write##R##Scalar(f, raw[3]);                                                     \
    CHECK(THFile_write##R##Raw(f, raw, N) == N);                                            \
    CHECK(THFile_write##R##Raw(f, raw, 0) == 0);                                            \
    THFile_seek(f, 0);                                                                      \
    TH##R##Storage_fill(back, zero);                                                        \
    CHECK(THFile_read##R(f, back) == N);                                                    \
    one = THFile_read##R##Scalar(f);                                                        \
    CHECK(THFile_read##R##Raw(f, raw_back, N) == N);                                        \
    CHECK(memcmp(TH##R##Storage_data(back), raw, sizeof raw) == 0);                         \
    CHECK(memcmp(&one, &raw[3], sizeof one) == 0);                                          \
    CHECK(memcmp(raw_back, raw, sizeof raw) == 0);                                          \
    CHECK(!THFile_hasError(f));                                                             \
    TH##R##Storage_free(s);                                                                 \
    TH##R##Storage_free(back);                                                              \
  }
ROUNDTRIP(Byte, uint8_t)
ROUNDTRIP(Char, int8_t)
ROUNDTRIP(Short, int16_t)
ROUNDTRIP(Int, int32_t)
ROUNDTRIP(Long, int64_t)
ROUNDTRIP(Float, float)
ROUNDTRIP(Double, double)
ROUNDTRIP(Half, THHalf)
ROUNDTRIP(BFloat16, THBFloat16)
ROUNDTRIP(Bool, THBool)

static void roundtrip_all(THFile *f, int binary) {
  roundtrip_Byte(f, binary);
  roundtrip_Char(f, binary);
  roundtrip_Short(f, binary);
  roundtrip_Int(f, binary);
  roundtrip_Long(f, binary);
  roundtrip_Float(f, binary);
  roundtrip_Double(f, binary);
  roundtrip_Half(f, binary);
  roundtrip_BFloat16(f, binary);
  roundtrip_Bool(f, binary);
}

/* The whole content of a memory file as a C string (borrowed from its storage). */
static const char *mem_text(THFile *f) { return (const char *)THCharStorage_data(THMemoryFile_storage(f)); }

static void test_roundtrips(void) {
  THFile *m = THMemoryFile_new("rw");
  THFile *d = THDiskFile_new(tmpfile_name("rt"), "rw", 0);
  int binary;
  CHECK(m != NULL && d != NULL);
  for (binary = 0; binary <= 1; binary++) {
    roundtrip_all(m, binary);
    roundtrip_all(d, binary);
    THDiskFile_bigEndianEncoding(d);
    roundtrip_all(d, binary);
    THDiskFile_littleEndianEncoding(d);
    roundtrip_all(d, binary);
    THDiskFile_nativeEndianEncoding(d);
  }
  THFile_free(m);
  THFile_free(d);
  remove(tmpfile_name("rt"));
}

static void test_ascii_text(void) {
  THFile *f = THMemoryFile_new("rw");
  int32_t iv[3] = {1, -2, 3};
  float fv[2] = {0.1f, 1e10f};
  double dv[1] = {0.1};
  uint8_t bv[3] = {'a', 'b', ' '};
  CHECK(THFile_isAutoSpacing(f) && !THFile_isBinary(f) && !THFile_isQuiet(f));
  THFile_writeIntRaw(f, iv, 3);
  THFile_writeFloatRaw(f, fv, 2);
  THFile_writeDoubleRaw(f, dv, 1);
  THFile_writeByteRaw(f, bv, 3);
  THFile_writeBoolScalar(f, 1);
  CHECK(strcmp(mem_text(f), "1 -2 3\n0.100000001 1e+10\n0.10000000000000001\nab \n1\n") == 0);
  THFile_noAutoSpacing(f);
  THFile_seekEnd(f);
  THFile_writeShortRaw(f, (int16_t[]){7, 8}, 2);
  CHECK(strcmp(mem_text(f) + strlen(mem_text(f)) - 2, "78") == 0);
  /* reading skips any white space between numbers */
  THFile_autoSpacing(f);
  THFile_seek(f, 0);
  {
    int64_t lv[3];
    CHECK(THFile_readLongRaw(f, lv, 3) == 3);
    CHECK(lv[0] == 1 && lv[1] == -2 && lv[2] == 3);
    CHECK(THFile_readFloatScalar(f) == 0.1f);
    CHECK(THFile_readDoubleScalar(f) == 1e10);
    CHECK(THFile_readDoubleScalar(f) == 0.1);
  }
  THFile_free(f);
}

static void test_byte_order(void) {
  const char *path = tmpfile_name("endian");
  THFile *f = THDiskFile_new(path, "w", 0);
  unsigned char buf[16];
  FILE *c;
  size_t n;
  THFile_binary(f);
  THDiskFile_bigEndianEncoding(f);
  THFile_writeIntScalar(f, 0x01020304);
  THDiskFile_littleEndianEncoding(f);
  THFile_writeShortScalar(f, 0x0506);
  THDiskFile_longSize(f, 4);
  THFile_writeLongScalar(f, -2);
  THDiskFile_bigEndianEncoding(f);
  THFile_writeLongScalar(f, 0x0708);
  THFile_free(f);
  c = fopen(path, "rb");
  n = fread(buf, 1, sizeof buf, c);
  fclose(c);
  CHECK(n == 14);
  {
    const unsigned char want[14] = {1, 2, 3, 4, 6, 5, 0xfe, 0xff, 0xff, 0xff, 0, 0, 7, 8};
    CHECK(memcmp(buf, want, 14) == 0);
  }
  f = THDiskFile_new(path, "r", 0);
  CHECK(strcmp(THDiskFile_name(f), path) == 0);
  THFile_binary(f);
  CHECK(THDiskFile_isLittleEndianCPU() + THDiskFile_isBigEndianCPU() == 1);
  THDiskFile_bigEndianEncoding(f);
  CHECK(THFile_readIntScalar(f) == 0x01020304);
  THDiskFile_littleEndianEncoding(f);
  CHECK(THFile_readShortScalar(f) == 0x0506);
  THDiskFile_longSize(f, 4);
  CHECK(THFile_readLongScalar(f) == -2);
  THDiskFile_bigEndianEncoding(f);
  CHECK(THFile_readLongScalar(f) == 0x0708);
  CHECK(THFile_position(f) == 14);
  THFile_seek(f, 0);
  THDiskFile_nativeEndianEncoding(f);
  if (THDiskFile_isLittleEndianCPU()) CHECK(THFile_readIntScalar(f) == 0x04030201);
  EXPECT_ERROR(THDiskFile_longSize(f, 3));
  THFile_free(f);
  remove(path);
}

static void test_errors(void) {
  THFile *f = THMemoryFile_new("rw");
  int32_t got[4] = {9, 9, 9, 9};
  char *s = NULL;
  THIntStorage *st;
  THFile_writeIntRaw(f, (int32_t[]){5, 6}, 2);
  THFile_seek(f, 0);
  /* pedantic: an error, destination untouched */
  EXPECT_ERROR(CHECK(THFile_readIntRaw(f, got, 4) == 0));
  CHECK(got[0] == 9 && got[1] == 9);
  CHECK(THFile_hasError(f));
  CHECK(strstr(THGetLastError(), "read 2 blocks instead of 4") != NULL);
  THFile_clearError(f);
  CHECK(!THFile_hasError(f));
  /* quiet: what could be read, and hasError */
  THFile_quiet(f);
  CHECK(THFile_isQuiet(f));
  THFile_seek(f, 0);
  EXPECT_OK(CHECK(THFile_readIntRaw(f, got, 4) == 2));
  CHECK(got[0] == 5 && got[1] == 6 && got[2] == 9);
  CHECK(THFile_hasError(f));
  THFile_clearError(f);
  EXPECT_OK(THFile_seek(f, 1000));
  CHECK(THFile_hasError(f));
  THFile_pedantic(f);
  EXPECT_ERROR(THFile_seek(f, 1000));
  EXPECT_ERROR(THFile_readStringRaw(f, "*x", &s));
  EXPECT_ERROR(THFile_readStringRaw(f, "*a", NULL));
  EXPECT_ERROR(THFile_readIntRaw(f, NULL, 2));
  THFile_close(f);
  CHECK(!THFile_isOpened(f));
  EXPECT_ERROR(THFile_readIntScalar(f));
  EXPECT_ERROR(THFile_close(f));
  EXPECT_ERROR(THDiskFile_name(f));
  THFile_free(f);

  f = THMemoryFile_new("w");
  CHECK(!THFile_isReadable(f) && THFile_isWritable(f));
  EXPECT_ERROR(THFile_readIntScalar(f));
  EXPECT_ERROR(THDiskFile_bigEndianEncoding(f));
  THFile_free(f);
  f = THMemoryFile_new("r");
  st = THIntStorage_newWithSize(1);
  EXPECT_ERROR(CHECK(THFile_writeInt(f, st) == 0));
  EXPECT_ERROR(CHECK(THFile_readInt(f, NULL) == 0));
  THIntStorage_free(st);
  THFile_free(f);

  EXPECT_ERROR(CHECK(THMemoryFile_new("x") == NULL));
  EXPECT_ERROR(CHECK(THDiskFile_new(tmpfile_name("m"), "rwx", 0) == NULL));
  EXPECT_ERROR(CHECK(THPipeFile_new("true", "rw", 0) == NULL));
  EXPECT_ERROR(CHECK(THDiskFile_new("/nonexistent/dir/file", "r", 0) == NULL));
  EXPECT_OK(CHECK(THDiskFile_new("/nonexistent/dir/file", "r", 1) == NULL));
  EXPECT_ERROR(THFile_isOpened(NULL));
  EXPECT_ERROR(THFile_seek(NULL, 0));
  THFile_free(NULL);
  THFile_retain(NULL);
}

static void test_strings_and_storage(void) {
  THCharStorage *cs = THCharStorage_newWithSize(8);
  const char text[8] = "12 34\nx";
  THFile *f;
  char *s = NULL;
  size_t n;
  memcpy(THCharStorage_data(cs), text, 8);
  f = THMemoryFile_newWithStorage(cs, "rw");
  CHECK(THFile_readIntScalar(f) == 12);
  CHECK(THFile_readIntScalar(f) == 34);
  n = THFile_readStringRaw(f, "*a", &s);
  CHECK(n == 1 && s && s[0] == 'x');
  THFree(s);
  THFile_seek(f, 0);
  n = THFile_readStringRaw(f, "*l", &s);
  CHECK(n == 5 && memcmp(s, "12 34", 5) == 0);
  THFree(s);
  n = THFile_readStringRaw(f, "*l", &s);
  CHECK(n == 1 && s[0] == 'x');
  THFree(s);
  EXPECT_ERROR(n = THFile_readStringRaw(f, "*l", &s));
  CHECK(n == 0 && s == NULL);
  THFile_seek(f, 3);
  n = THFile_readStringRaw(f, "*n", &s);
  CHECK(n == 2 && strcmp(s, "34") == 0);
  THFree(s);
  /* writes grow the user's storage and keep it NUL-terminated */
  THFile_seekEnd(f);
  CHECK(THFile_writeStringRaw(f, " and more", 9) == 9);
  CHECK(THMemoryFile_storage(f) == cs);
  CHECK(THCharStorage_size(cs) == 17);
  CHECK(strcmp((char *)THCharStorage_data(cs), "12 34\nx and more") == 0);
  THFile_free(f);
  THCharStorage_free(cs);

  /* a storage that is not NUL-terminated is rejected */
  cs = THCharStorage_newWithSize(2);
  THCharStorage_fill(cs, 'a');
  EXPECT_ERROR(CHECK(THMemoryFile_newWithStorage(cs, "r") == NULL));
  THCharStorage_free(cs);

  /* the storage outlives the file on a retain; THMemoryFile_longSize */
  f = THMemoryFile_new("rw");
  THFile_binary(f);
  THMemoryFile_longSize(f, 4);
  THFile_writeLongScalar(f, 123456);
  CHECK(THFile_position(f) == 4);
  cs = THMemoryFile_storage(f);
  THCharStorage_retain(cs);
  THFile_free(f);
  CHECK(THCharStorage_size(cs) == 5);
  THCharStorage_free(cs);
}

static void test_pipes(void) {
  THFile *p = THPipeFile_new("printf '1 2 3\\n4.5'", "r", 0);
  int32_t v[3] = {0, 0, 0};
  const char *path = tmpfile_name("pipe");
  char cmd[600];
  FILE *c;
  char buf[32] = {0};
  CHECK(p != NULL);
  CHECK(THFile_readIntRaw(p, v, 3) == 3);
  CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3);
  CHECK(THFile_readDoubleScalar(p) == 4.5);
  EXPECT_ERROR(THFile_seek(p, 0));
  THFile_free(p);
  snprintf(cmd, sizeof cmd, "cat > '%s'", path);
  p = THPipeFile_new(cmd, "w", 0);
  THFile_writeDoubleScalar(p, 2.5);
  THFile_writeStringRaw(p, "end", 3);
  THFile_close(p);
  THFile_free(p);
  c = fopen(path, "rb");
  CHECK(c != NULL);
  if (c) {
    CHECK(fread(buf, 1, sizeof buf - 1, c) == 7);
    fclose(c);
  }
  CHECK(strcmp(buf, "2.5\nend") == 0);
  remove(path);
}

static void test_npy_errors(void) {
  const char *path = tmpfile_name("bad.npy");
  FILE *c = fopen(path, "wb");
  THFloatTensor *t, *tt, *back;
  int i, j;
  /* a hostile header: shape far beyond the file */
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }\n";
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  pre[8] = (unsigned char)strlen(dict);
  fwrite(pre, 1, 10, c);
  fwrite(dict, 1, strlen(dict), c);
  fclose(c);
  EXPECT_ERROR(CHECK(THFloatTensor_loadNpy(path) == NULL));
  CHECK(strstr(THGetLastError(), "truncated") != NULL);
  EXPECT_ERROR(CHECK(THDoubleTensor_loadNpy(path) == NULL)); /* wrong dtype */
  c = fopen(path, "wb");
  fputs("not numpy at all", c);
  fclose(c);
  EXPECT_ERROR(CHECK(THFloatTensor_loadNpy(path) == NULL));
  EXPECT_ERROR(CHECK(THFloatTensor_loadNpy("/nonexistent/x.npy") == NULL));
  EXPECT_ERROR(CHECK(THFloatTensor_loadNpy(NULL) == NULL));
  EXPECT_ERROR(THFloatTensor_saveNpy(path, NULL));
  /* a transposed view is saved in its own row-major order */
  t = THFloatTensor_newWithSize2d(2, 3);
  for (i = 0; i < 2; i++)
    for (j = 0; j < 3; j++) THFloatTensor_set2d(t, i, j, (float)(i * 10 + j));
  tt = THFloatTensor_newTranspose(t, 0, 1);
  EXPECT_OK(THFloatTensor_saveNpy(path, tt));
  back = THFloatTensor_loadNpy(path);
  CHECK(back && THFloatTensor_nDimension(back) == 2 && THFloatTensor_size(back, 0) == 3);
  for (i = 0; back && i < 3; i++)
    for (j = 0; j < 2; j++) CHECK(THFloatTensor_get2d(back, i, j) == (float)(j * 10 + i));
  THFloatTensor_free(back);
  THFloatTensor_free(tt);
  THFloatTensor_free(t);
  remove(path);
}

int main(void) {
  th_test_install_handlers();
  test_roundtrips();
  test_ascii_text();
  test_byte_order();
  test_errors();
  test_strings_and_storage();
  test_pipes();
  test_npy_errors();
  return TH_TEST_DONE();
}
