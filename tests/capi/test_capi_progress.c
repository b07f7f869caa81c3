/* Progress reports through the C API (1.3.0): factz_options.progress is called with every
 * stage of a compression, fractions increasing to 1.0, user data passed through; the
 * stream is the same with and without it; a program built against 1.2.0 (a smaller
 * factz_options whose bytes after fill_v are not its own) gets no call. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

enum { NX = 64, NY = 48, N = NX * NY, CAP = 1 << 20, MAX_CALLS = 32 };

/* sizeof(factz_options) of a program built against 1.2.0. */
#define OPTIONS_SIZE_120 offsetof(factz_options, progress)

typedef struct {
  int calls;
  char stages[MAX_CALLS][16];
  double fractions[MAX_CALLS];
} Reports;

static void record(const char* stage, double fraction, void* user) {
  Reports* r = (Reports*)user;
  if (r->calls < MAX_CALLS) {
    strncpy(r->stages[r->calls], stage, sizeof r->stages[0] - 1);
    r->stages[r->calls][sizeof r->stages[0] - 1] = '\0';
    r->fractions[r->calls] = fraction;
  }
  ++r->calls;
}

static void field(float* u, float* v) {
  for (int y = 0; y < NY; ++y)
    for (int x = 0; x < NX; ++x) {
      u[y * NX + x] = (float)(sin(0.21 * x) * cos(0.17 * y));
      v[y * NX + x] = (float)(-cos(0.21 * x) * sin(0.17 * y) + 0.05);
    }
  u[5] = NAN; /* a missing vertex: the mask stage reports too */
}

int main(void) {
  static float u[N], v[N];
  static unsigned char plain[CAP], reported[CAP];
  field(u, v);
  const int modes[3] = {FACTZ_MODE_NONE, FACTZ_MODE_BLOCK, FACTZ_MODE_SPECULATIVE};
  for (int m = 0; m < 3; ++m) {
    factz_options o;
    factz_options_init(&o);
    CHECK(o.progress == NULL && o.progress_user == NULL);
    o.mode = modes[m];
    size_t plain_size = 0, reported_size = 0;
    CHECK(factz_compress(u, v, NX, NY, &o, plain, CAP, &plain_size) == FACTZ_OK);
    Reports r;
    memset(&r, 0, sizeof r);
    o.progress = record;
    o.progress_user = &r;
    CHECK(factz_compress(u, v, NX, NY, &o, reported, CAP, &reported_size) == FACTZ_OK);
    CHECK(plain_size == reported_size && memcmp(plain, reported, plain_size) == 0);
    /* mask, frontend, [encode,] entropy, container */
    CHECK(r.calls == (modes[m] == FACTZ_MODE_SPECULATIVE ? 4 : 5));
    CHECK(r.calls > 0 && strcmp(r.stages[0], "mask") == 0);
    CHECK(r.calls > 1 && strcmp(r.stages[r.calls - 1], "container") == 0 && r.fractions[r.calls - 1] == 1.0);
    for (int k = 1; k < r.calls && k < MAX_CALLS; ++k) CHECK(r.fractions[k] > r.fractions[k - 1]);
    for (int k = 0; k < r.calls && k < MAX_CALLS; ++k) CHECK(r.fractions[k] > 0.0 && r.fractions[k] <= 1.0);
    /* A 1.2.0 program: the members past its struct are not read, whatever the bytes hold. */
    memset(&r, 0, sizeof r);
    o.struct_size = OPTIONS_SIZE_120;
    CHECK(factz_compress(u, v, NX, NY, &o, reported, CAP, &reported_size) == FACTZ_OK);
    CHECK(r.calls == 0);
    CHECK(plain_size == reported_size && memcmp(plain, reported, plain_size) == 0);
  }
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
