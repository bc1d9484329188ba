/* The three variadic entry points of THGeneral.h. Stable Rust cannot define C-variadic
 * functions, so they are written here: each formats its message and hands it to the Rust
 * error machinery (THReportError), which records it and calls the installed handler once. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TH_ERR_USER 12
#define TH_MSG_LEN 2048

void THReportError(int code, int arg_number, const char *msg);

static void th_vformat(char *buf, const char *file, int line, const char *prefix, const char *fmt, va_list ap) {
  size_t n = 0;
  if (prefix) {
    n = (size_t)snprintf(buf, TH_MSG_LEN, "%s", prefix);
    if (n >= TH_MSG_LEN) n = TH_MSG_LEN - 1;
  }
  if (fmt) {
    int k = vsnprintf(buf + n, TH_MSG_LEN - n, fmt, ap);
    if (k > 0) n += (size_t)k;
    if (n >= TH_MSG_LEN) n = TH_MSG_LEN - 1;
  }
  if (file) snprintf(buf + n, TH_MSG_LEN - n, " at %s:%d", file, line);
}

void _THError(const char *file, const int line, const char *fmt, ...) {
  char buf[TH_MSG_LEN];
  va_list ap;
  va_start(ap, fmt);
  th_vformat(buf, file, line, NULL, fmt, ap);
  va_end(ap);
  THReportError(TH_ERR_USER, 0, buf);
}

void _THArgCheck(const char *file, int line, int condition, int argNumber, const char *fmt, ...) {
  char buf[TH_MSG_LEN];
  va_list ap;
  if (condition) return;
  va_start(ap, fmt);
  th_vformat(buf, file, line, NULL, fmt, ap);
  va_end(ap);
  THReportError(TH_ERR_USER, argNumber, buf);
}

void _THAssertionFailed(const char *file, const int line, const char *exp, const char *fmt, ...) {
  char buf[TH_MSG_LEN];
  char prefix[512];
  va_list ap;
  snprintf(prefix, sizeof prefix, "Assertion `%s' failed. ", exp ? exp : "");
  va_start(ap, fmt);
  th_vformat(buf, file, line, prefix, fmt, ap);
  va_end(ap);
  THReportError(TH_ERR_USER, 0, buf);
}
