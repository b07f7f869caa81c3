/* The C API from an installed FaCTz: compresses and decompresses a small field, checks the
 * bound; prints "ok" and exits 0 when it held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <factz/factz.h>

int main(void) {
  enum { NX = 40, NY = 30, N = NX * NY };
  static float u[N], v[N], u2[N], v2[N];
  for (int i = 0; i < N; ++i) {
    u[i] = (float)sin(0.3 * (i % NX)) + 0.01f * (float)(i / NX);
    v[i] = (float)cos(0.2 * (i / NX)) - 0.02f * (float)(i % NX);
  }
  factz_options o;
  factz_options_init(&o);
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = 1e-3;
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  void* buf = malloc(cap);
  if (!buf || factz_compress(u, v, NX, NY, &o, buf, cap, &size) != FACTZ_OK) {
    printf("compress: %s\n", factz_last_error());
    return 1;
  }
  if (factz_decompress(buf, size, u2, v2, NX, NY, 0) != FACTZ_OK) {
    printf("decompress: %s\n", factz_last_error());
    return 1;
  }
  for (int i = 0; i < N; ++i)
    if (fabsf(u[i] - u2[i]) > 1e-3f || fabsf(v[i] - v2[i]) > 1e-3f) {
      printf("bound broken at %d\n", i);
      return 1;
    }
  printf("ok: %s, %zu bytes\n", factz_version_string(), size);
  free(buf);
  return 0;
}
