/* CHECK for the C API test programs (C99): counts checks and failures and prints each
 * failure with the calling thread's factz_last_error(). One program per translation unit. */
#ifndef FACTZ_TESTS_CAPI_CHECK_H
#define FACTZ_TESTS_CAPI_CHECK_H

#include <stdio.h>

#include "factz/factz.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    ++g_checks;                                                              \
    if (!(cond)) {                                                           \
      ++g_failures;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, \
              __LINE__, #cond, factz_last_error());                          \
    }                                                                        \
  } while (0)

#endif /* FACTZ_TESTS_CAPI_CHECK_H */
