/* Compress and decompress a vector field with the FaCTz C API (docs/python.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "factz/factz.h"

int main(void) {
  const int64_t nx = 200, ny = 100;
  float* u = malloc(nx * ny * sizeof(float));
  float* v = malloc(nx * ny * sizeof(float));
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      u[y * nx + x] = (float)(sin(x / 9.0) * cos(y / 7.0));
      v[y * nx + x] = (float)(-cos(x / 9.0) * sin(y / 7.0) + 0.1);
    }

  factz_options opt;
  factz_options_init(&opt); /* speculative mode, REL 1e-2, zstd, default coder */
  opt.mode = FACTZ_MODE_BLOCK;
  size_t capacity = factz_compress_bound(nx, ny), size = 0;
  void* stream = malloc(capacity);
  if (factz_compress(u, v, nx, ny, &opt, stream, capacity, &size) != FACTZ_OK) {
    fprintf(stderr, "compress: %s\n", factz_last_error());
    return 1;
  }

  int64_t sx = 0, sy = 0;
  float* u2 = NULL;
  float* v2 = NULL;
  if (factz_stream_dims(stream, size, &sx, &sy) == FACTZ_OK) {
    u2 = malloc(sx * sy * sizeof(float));
    v2 = malloc(sx * sy * sizeof(float));
  }
  if (!u2 || !v2 || factz_decompress(stream, size, u2, v2, sx, sy, 0) != FACTZ_OK) {
    fprintf(stderr, "decompress: %s\n", factz_last_error());
    return 1;
  }

  factz_comparison c;
  factz_compare(u, v, u2, v2, nx, ny, 0, &c);
  printf("%zu bytes, %lld critical points, %lld lost, %lld spurious, %lld changed type\n", size,
         (long long)c.cp_original, (long long)c.lost, (long long)c.spurious, (long long)c.type_changed);
  free(u), free(v), free(u2), free(v2), free(stream);
  return c.lost + c.spurious + c.type_changed == 0 ? 0 : 1;
}
