/* Missing vertices of 3D fields in the analysis calls of the C API (1.7.0), from a C program:
 * factz_count_critical_points3d_masked and factz_compare3d_masked take a mask as the 2D
 * _masked functions do. A masked vertex is the same missing vertex as a NaN one (same count,
 * same comparison); a masked round trip has zero violations, no mask mismatch and the bound
 * held on the valid vertices; a reconstruction compared without its mask shows the mismatch;
 * bad input (null pointers, empty, negative and overflowing grids, small structs, fill
 * values, infinity at a valid vertex) is FACTZ_INVALID_ARGUMENT with a message that says
 * what is wrong. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

enum { NX = 17, NY = 15, NZ = 13, N = NX * NY * NZ };

/* The ABC flow of test_capi3d.c (critical points of several types inside the grid). */
static void abc_field(float* u, float* v, float* w) {
  const double k = 4.0 * 3.14159265358979 / 24.0;
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) {
        const int i = (z * NY + y) * NX + x;
        const double fx = k * (double)x, fy = k * (double)y + 0.3, fz = k * (double)z + 0.7;
        u[i] = (float)(sin(fz) + cos(fy));
        v[i] = (float)(sin(fx) + cos(fz));
        w[i] = (float)(sin(fy) + cos(fx) + 0.05 * (double)z);
      }
}

/* "Land": a ball, the plane x = 0 and scattered single vertices; byte values other than 1
 * (nonzero = missing) on purpose. */
static void land_mask(uint8_t* m) {
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) {
        const int dx = x - 9, dy = y - 7, dz = z - 6;
        const int ball = dx * dx + dy * dy + dz * dz < 10;
        m[(z * NY + y) * NX + x] = ball ? 0xFF : x == 0 ? 1 : (x * 7 + y * 13 + z * 5) % 41 == 0 ? 2 : 0;
      }
}

static int64_t count_set(const uint8_t* m, int64_t n) {
  int64_t c = 0;
  for (int64_t k = 0; k < n; ++k) c += m[k] != 0;
  return c;
}

static uint32_t bits_of(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static float* g_u;
static float* g_v;
static float* g_w;
static uint8_t* g_land;

static void test_version(void) {
  CHECK(FACTZ_C_API_VERSION >= 10700 && factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(FACTZ_FORMAT_VERSION >= 12); /* 1.7.0 changes no stream */
}

/* A mask marks the same missing vertices as NaN: the same count and the same comparison, in
 * the C++ extractor's semantics (tetrahedra touching a missing vertex hold no critical
 * point). A NULL mask is the unmasked count, and the mask removes critical points. */
static void test_a_mask_is_the_same_missing_vertex_as_nan(void) {
  float* nan_w = (float*)malloc(N * sizeof(float));
  memcpy(nan_w, g_w, N * sizeof(float));
  for (int k = 0; k < N; ++k)
    if (g_land[k]) nan_w[k] = NAN;
  int64_t plain = -1, masked = -1, with_nan = -1, null_mask = -1;
  CHECK(factz_count_critical_points3d(g_u, g_v, g_w, NX, NY, NZ, NULL, &plain) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &masked) == FACTZ_OK);
  CHECK(strcmp(factz_last_error(), "") == 0);
  CHECK(factz_count_critical_points3d(g_u, g_v, nan_w, NX, NY, NZ, NULL, &with_nan) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, NULL, NX, NY, NZ, NULL, &null_mask) == FACTZ_OK);
  CHECK(plain > 4 && null_mask == plain);
  CHECK(masked == with_nan && masked < plain && masked > 0);
  /* the threads of options never change the count */
  factz_options o;
  factz_options_init(&o);
  o.threads = 1;
  int64_t serial = -1;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &serial) == FACTZ_OK);
  CHECK(serial == masked);
  /* compare: the mask and NaN give the same report */
  factz_comparison3d a, b;
  memset(&a, 0xAB, sizeof a);
  memset(&b, 0xCD, sizeof b);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &a) == FACTZ_OK);
  CHECK(factz_compare3d(g_u, g_v, nan_w, g_u, g_v, nan_w, NX, NY, NZ, NULL, &b) == FACTZ_OK);
  CHECK(a.cp_original == masked && a.cp_decompressed == masked && b.cp_original == masked);
  CHECK(a.masked_vertices == count_set(g_land, N) && b.masked_vertices == a.masked_vertices);
  CHECK(a.lost + a.spurious + a.type_changed + a.mask_mismatch == 0 && isinf(a.psnr));
  CHECK(a.value_range == b.value_range && a.value_range > 1);
  /* both NULL masks: factz_compare3d */
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, NULL, g_u, g_v, g_w, NULL, NX, NY, NZ, NULL, &a) == FACTZ_OK);
  CHECK(a.cp_original == plain && a.masked_vertices == 0 && a.mask_mismatch == 0);
  free(nan_w);
}

/* factz_compress3d_masked, factz_decompress3d_masked and factz_compare3d_masked with the mask
 * the decoder returned: zero violations, the original's mask back, the bound on the valid
 * vertices; the same reconstruction compared without its mask mismatches at every masked
 * vertex that holds a number. */
static void test_masked_round_trip_has_zero_violations(void) {
  /* a NaN outside the mask, and an infinity and a fill value under it (stored as they are) */
  float* w = (float*)malloc(N * sizeof(float));
  memcpy(w, g_w, N * sizeof(float));
  uint8_t* missing = (uint8_t*)malloc(N);
  memcpy(missing, g_land, N);
  int first_masked = -1;
  for (int k = 0; k < N && first_masked < 0; ++k)
    if (g_land[k]) first_masked = k;
  CHECK(first_masked >= 0);
  w[first_masked] = INFINITY;
  w[first_masked + NX * NY] = 1e20f;
  CHECK(g_land[first_masked + NX * NY] != 0); /* x = 0 plane */
  w[5 * NX * NY + 3 * NX + 4] = NAN;
  CHECK(g_land[5 * NX * NY + 3 * NX + 4] == 0);
  missing[5 * NX * NY + 3 * NX + 4] = 1;
  const double eb = 1e-2;
  factz_options o;
  factz_options_init(&o);
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = eb;
  size_t cap = factz_compress_bound3d(NX, NY, NZ), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  float* back = (float*)malloc(3 * N * sizeof(float));
  float *u2 = back, *v2 = back + N, *w2 = back + 2 * N;
  uint8_t* mask_out = (uint8_t*)malloc(N);
  memset(mask_out, 0xEE, N);
  CHECK(factz_compress3d_masked(g_u, g_v, w, g_land, NX, NY, NZ, &o, buf, cap, &size) == FACTZ_OK);
  CHECK(factz_decompress3d_masked(buf, size, u2, v2, w2, mask_out, NX, NY, NZ, &o) == FACTZ_OK);
  int mask_ok = 1, bits_ok = 1, bound_ok = 1;
  for (int k = 0; k < N; ++k) {
    mask_ok &= mask_out[k] == (missing[k] != 0);
    if (missing[k])
      bits_ok &= bits_of(w2[k]) == bits_of(w[k]) && bits_of(u2[k]) == bits_of(g_u[k]);
    else
      bound_ok &= fabs((double)u2[k] - g_u[k]) <= eb && fabs((double)v2[k] - g_v[k]) <= eb &&
                  fabs((double)w2[k] - w[k]) <= eb;
  }
  CHECK(mask_ok && bits_ok && bound_ok);
  int64_t cp_orig = -1, cp_back = -1;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, w, g_land, NX, NY, NZ, NULL, &cp_orig) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked(u2, v2, w2, mask_out, NX, NY, NZ, NULL, &cp_back) == FACTZ_OK);
  CHECK(cp_orig > 0 && cp_back == cp_orig);
  factz_comparison3d c;
  memset(&c, 0xAB, sizeof c);
  CHECK(factz_compare3d_masked(g_u, g_v, w, g_land, u2, v2, w2, mask_out, NX, NY, NZ, NULL, &c) == FACTZ_OK);
  CHECK(c.cp_original == cp_orig && c.cp_decompressed == cp_back);
  CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0 && c.mask_mismatch == 0);
  CHECK(c.masked_vertices == count_set(missing, N));
  CHECK(c.max_abs_error_u <= eb && c.max_abs_error_v <= eb && c.max_abs_error_w <= eb);
  CHECK(c.value_range > 1 && c.value_range < 10); /* the valid vertices' range, not 1e20's */
  /* without mask2 the masked vertices of the reconstruction hold numbers: valid there */
  CHECK(factz_compare3d_masked(g_u, g_v, w, g_land, u2, v2, w2, NULL, NX, NY, NZ, NULL, &c) != FACTZ_OK);
  CHECK(strstr(factz_last_error(), "infinite") != NULL); /* the infinity under the mask is now valid */
  w2[first_masked] = 0.0f;
  CHECK(factz_compare3d_masked(g_u, g_v, w, g_land, u2, v2, w2, NULL, NX, NY, NZ, NULL, &c) == FACTZ_OK);
  CHECK(c.mask_mismatch == count_set(g_land, N)); /* the NaN vertex is missing in both */
  free(mask_out);
  free(back);
  free(buf);
  free(missing);
  free(w);
}

/* Degenerate grids: all vertices masked, a single vertex, a line. */
static void test_edge_grids(void) {
  uint8_t* all = (uint8_t*)malloc(N);
  memset(all, 1, N);
  int64_t count = -1;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, all, NX, NY, NZ, NULL, &count) == FACTZ_OK);
  CHECK(count == 0);
  factz_comparison3d c;
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, all, g_u, g_v, g_w, all, NX, NY, NZ, NULL, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == N && c.mask_mismatch == 0 && c.cp_original == 0);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, all, 1, 1, 1, NULL, &count) == FACTZ_OK && count == 0);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, NULL, NX, 1, 1, NULL, &count) == FACTZ_OK && count == 0);
  free(all);
}

/* Bad input: FACTZ_INVALID_ARGUMENT with a message naming the problem; nothing written. */
static void test_bad_input(void) {
  int64_t count = 77;
  factz_comparison3d c;
  /* null pointers */
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, NULL) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "count is null") != NULL);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, NULL, g_land, NX, NY, NZ, NULL, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "null field plane (u, v and w") != NULL && count == 77);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, NULL) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "result is null") != NULL);
  CHECK(factz_compare3d_masked(NULL, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &c) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, NULL, g_w, g_land, NX, NY, NZ, NULL, &c) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "null field plane (u2, v2 and w2") != NULL);
  /* a struct smaller than the 1.5.0 factz_comparison3d */
  CHECK(factz_compare3d_masked_sized(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &c, 64) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_compare3d_masked") != NULL);
  /* empty, negative and overflowing grids (the format's limit: 2^40 vertices) */
  const int64_t big = (int64_t)1 << 14, huge = INT64_MAX / 2;
  const int64_t dims[][3] = {{0, NY, NZ}, {NX, 0, NZ}, {NX, NY, 0}, {-NX, NY, NZ}, {NX, NY, -1},
                             {big, big, big}, {huge, 4, 4}, {4, huge, huge}, {INT64_MAX, INT64_MAX, INT64_MAX}};
  for (size_t k = 0; k < sizeof dims / sizeof dims[0]; ++k) {
    const int64_t nx = dims[k][0], ny = dims[k][1], nz = dims[k][2];
    count = 77;
    CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, nx, ny, nz, NULL, &count) ==
          FACTZ_INVALID_ARGUMENT);
    CHECK(strstr(factz_last_error(), "empty, negative or larger than 2^40 vertices") != NULL && count == 77);
    CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, nx, ny, nz, NULL, &c) ==
          FACTZ_INVALID_ARGUMENT);
  }
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, 0, NY, NZ, NULL, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "0x15x13") != NULL);
  /* options: bad threads, float64 fill values for float32 fields (float32 ones are read since
     1.8.0: tests/capi/test_capi3d_f64.c), a struct not initialized */
  factz_options o;
  factz_options_init(&o);
  o.threads = -1;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &c) ==
        FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_v64 = 1;
  o.fill_v64 = 1e20;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "fill values") != NULL);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &c) ==
        FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_u64 = 1;
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &c) ==
        FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.struct_size = 8;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, &o, &count) ==
        FACTZ_INVALID_ARGUMENT);
  /* infinity: an error at a valid vertex, allowed under the mask */
  int at = -1;
  for (int k = 0; k < N && at < 0; ++k)
    if (g_land[k]) at = k;
  const float keep = g_v[at];
  g_v[at] = -INFINITY;
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &count) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked(g_u, g_v, g_w, NULL, NX, NY, NZ, NULL, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, NULL, NX, NY, NZ, NULL, &c) ==
        FACTZ_INVALID_ARGUMENT);
  g_v[at] = keep;
  /* a success clears the message */
  CHECK(factz_compare3d_masked(g_u, g_v, g_w, g_land, g_u, g_v, g_w, g_land, NX, NY, NZ, NULL, &c) == FACTZ_OK);
  CHECK(strcmp(factz_last_error(), "") == 0);
}

int main(void) {
  g_u = (float*)malloc(N * sizeof(float));
  g_v = (float*)malloc(N * sizeof(float));
  g_w = (float*)malloc(N * sizeof(float));
  g_land = (uint8_t*)malloc(N);
  if (!g_u || !g_v || !g_w || !g_land) return 2;
  abc_field(g_u, g_v, g_w);
  land_mask(g_land);
  test_version();
  test_a_mask_is_the_same_missing_vertex_as_nan();
  test_masked_round_trip_has_zero_violations();
  test_edge_grids();
  test_bad_input();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  free(g_u);
  free(g_v);
  free(g_w);
  free(g_land);
  return g_failures == 0 ? 0 : 1;
}
