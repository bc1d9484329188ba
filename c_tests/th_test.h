/* A tiny assertion harness for the C tests: CHECK counts failures and keeps going;
 * TH_TEST_DONE() prints a summary and yields the exit status. Also a counting error handler
 * and EXPECT_ERROR to assert "exactly one handler call, an error recorded". */
#ifndef TH_TEST_H
#define TH_TEST_H

#include <TH/TH.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int th_test_checks = 0;
static int th_test_failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    th_test_checks++;                                                            \
    if (!(cond)) {                                                               \
      th_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                            \
  } while (0)

#define CHECK_CLOSE(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static int th_test_handler_calls = 0;
static int th_test_last_arg = 0;

static void th_test_count_handler(const char *msg, void *data) {
  (void)data;
  (void)msg;
  th_test_handler_calls++;
}

static void th_test_count_arg_handler(int arg, const char *msg, void *data) {
  (void)data;
  (void)msg;
  th_test_handler_calls++;
  th_test_last_arg = arg;
}

/* Installs the counting handlers on this thread. */
static void th_test_install_handlers(void) {
  THSetErrorHandler(th_test_count_handler, NULL);
  THSetArgErrorHandler(th_test_count_arg_handler, NULL);
}

/* Runs `call` and checks it failed with exactly one handler call and a message. */
#define EXPECT_ERROR(call)                                                                      \
  do {                                                                                          \
    int before_ = th_test_handler_calls;                                                        \
    THClearLastError();                                                                         \
    call;                                                                                       \
    th_test_checks++;                                                                           \
    if (th_test_handler_calls != before_ + 1 || THGetLastErrorCode() == TH_OK ||                \
        THGetLastError() == NULL) {                                                             \
      th_test_failures++;                                                                       \
      fprintf(stderr, "%s:%d: expected one error from %s (handler calls %d, code %d)\n",       \
              __FILE__, __LINE__, #call, th_test_handler_calls - before_, THGetLastErrorCode()); \
    }                                                                                           \
  } while (0)

/* Runs `call` and checks no error was raised. */
#define EXPECT_OK(call)                                                                  \
  do {                                                                                   \
    int before_ = th_test_handler_calls;                                                 \
    THClearLastError();                                                                  \
    call;                                                                                \
    th_test_checks++;                                                                    \
    if (th_test_handler_calls != before_ || THGetLastErrorCode() != TH_OK) {             \
      th_test_failures++;                                                                \
      fprintf(stderr, "%s:%d: unexpected error from %s: %s\n", __FILE__, __LINE__, #call, \
              THGetLastError() ? THGetLastError() : "(none)");                           \
    }                                                                                    \
  } while (0)

#define TH_TEST_DONE()                                                                     \
  (printf("%s: %d checks, %d failed\n", __FILE__, th_test_checks, th_test_failures), \
   th_test_failures == 0 ? 0 : 1)

#endif
