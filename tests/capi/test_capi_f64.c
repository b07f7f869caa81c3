/* float64 fields through the C API (1.4.0): the _f64 functions compress doubles as doubles
 * (a field whose detail lies below float32 precision keeps it: the bound of 1e-9 holds where
 * a float32 round trip misses it by far), write format version 6 streams that are the C++
 * API's bytes, keep every critical point and the 64 bits of NaN, masked and fill
 * values; factz_stream_info tells the type; the float32 and float64 functions refuse each
 * other's streams and fill values with messages naming the right ones; a 1.3.0-sized
 * factz_options declares no float64 fill value; the size bound holds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

enum { NX = 97, NY = 61, N = NX * NY };

/* sizeof(factz_options) of a program built against 1.3.0. */
#define OPTIONS_SIZE_130 offsetof(factz_options, has_fill_u64)

static const char* g_cpp = NULL;
static const char* g_tmp = NULL;

static uint64_t bits_of(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static double double_of(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* A smooth field with saddles and centers, plus detail of 1e-9 that float32 (spacing about
 * 6e-8 near 1) cannot hold. */
static void field_f64(double* u, double* v) {
  for (int y = 0; y < NY; ++y)
    for (int x = 0; x < NX; ++x) {
      const int k = y * NX + x;
      u[k] = sin(0.21 * x) * cos(0.17 * y) + 1e-9 * sin((double)k);
      v[k] = -cos(0.21 * x) * sin(0.17 * y) + 0.1 + 1e-9 * cos(1.7 * (double)k);
    }
}

static double max_abs_diff(const double* a, const double* b, int64_t n) {
  double m = 0;
  for (int64_t k = 0; k < n; ++k) m = fmax(m, fabs(a[k] - b[k]));
  return m;
}

/* The largest error a float32 round trip makes: what a float32 shortcut could not beat. */
static double float32_error(const double* a, int64_t n) {
  double m = 0;
  for (int64_t k = 0; k < n; ++k) m = fmax(m, fabs((double)(float)a[k] - a[k]));
  return m;
}

/* Values of a plane that no float32 holds: a float32 shortcut would make this 0. */
static int64_t non_float_values(const double* a, int64_t n) {
  int64_t c = 0;
  for (int64_t k = 0; k < n; ++k) c += (double)(float)a[k] != a[k];
  return c;
}

static double value_range(const double* u, const double* v, int64_t n) {
  double lo = u[0], hi = u[0];
  for (int64_t k = 0; k < n; ++k) {
    lo = fmin(lo, fmin(u[k], v[k]));
    hi = fmax(hi, fmax(u[k], v[k]));
  }
  return hi - lo;
}

static void test_version_and_defaults(void) {
  CHECK(FACTZ_C_API_VERSION >= 10400 && factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(FACTZ_FORMAT_VERSION >= 9); /* 9: the version of float64 speculative streams; tests/capi/test_capi3d.c pins the newest */
  factz_options o;
  memset(&o, 0xAB, sizeof o);
  factz_options_init(&o);
  CHECK(o.struct_size == sizeof(factz_options));
  CHECK(o.has_fill_u64 == 0 && o.has_fill_v64 == 0 && o.fill_u64 == 0.0 && o.fill_v64 == 0.0);
  CHECK(o.has_fill_u == 0 && o.has_fill_v == 0);
  CHECK(FACTZ_DTYPE_FLOAT32 == 1 && FACTZ_DTYPE_FLOAT64 == 2);
}

/* Every mode and coder, ABS and REL: the double bound holds (below float32 precision), the
 * values keep their sub-float32 detail, block and speculative keep every critical point of
 * the float64 mesh, the stream is version 6 (7 in mode speculative: the predictor byte) with
 * data type 2, and the thread count and the threads argument do not change the bytes. */
static void test_modes_keep_the_double_bound_and_the_critical_points(void) {
  static double u[N], v[N], u2[N], v2[N];
  field_f64(u, v);
  const double range = value_range(u, v, N);
  int64_t cps = -1;
  CHECK(factz_count_critical_points_f64(u, v, NX, NY, 0, &cps) == FACTZ_OK);
  CHECK(cps > 4);
  size_t cap = factz_compress_bound(NX, NY);
  unsigned char* buf = (unsigned char*)malloc(cap);
  unsigned char* again = (unsigned char*)malloc(cap);
  for (int mode = 0; mode <= 2; ++mode)
    for (int coder = 0; coder <= 1; ++coder)
      for (int rel = 0; rel <= 1; ++rel) {
        factz_options o;
        factz_options_init(&o);
        o.mode = mode;
        o.coder = coder;
        o.bound_mode = rel ? FACTZ_BOUND_REL : FACTZ_BOUND_ABS;
        o.bound = rel ? 1e-9 : 2e-9;
        const double eb = rel ? 1e-9 * range : 2e-9;
        CHECK(float32_error(u, N) > 10 * eb); /* the field has detail float32 cannot keep */
        size_t size = 0, size2 = 0;
        CHECK(factz_compress_f64(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
        CHECK(size > 64 && size <= cap);
        /* version 18 (the compact container; 23 where the exact values are stored byte-shuffled),
           sections of version 6 (9), data type float64 */
        CHECK((buf[4] == 18 || buf[4] == 23) && buf[5] == 0 && buf[6] == (mode == 2 ? 9 : 6) && buf[7] == 2);
        int64_t sx = 0, sy = 0;
        factz_dtype t = FACTZ_DTYPE_FLOAT32;
        CHECK(factz_stream_info(buf, size, &sx, &sy, &t) == FACTZ_OK);
        CHECK(sx == NX && sy == NY && t == FACTZ_DTYPE_FLOAT64);
        CHECK(factz_stream_dims(buf, size, &sx, &sy) == FACTZ_OK && sx == NX && sy == NY);
        CHECK(factz_decompress_f64(buf, size, u2, v2, NX, NY, 0) == FACTZ_OK);
        CHECK(max_abs_diff(u, u2, N) <= eb && max_abs_diff(v, v2, N) <= eb);
        CHECK(non_float_values(u2, N) > N / 2 && non_float_values(v2, N) > N / 2);
        factz_comparison c;
        CHECK(factz_compare_f64(u, v, u2, v2, NX, NY, 0, &c) == FACTZ_OK);
        CHECK(c.cp_original == cps && c.max_abs_error_u <= eb && c.max_abs_error_v <= eb);
        CHECK(fabs(c.value_range - range) <= 1e-15);
        if (mode != FACTZ_MODE_NONE) CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
        o.threads = 1;
        CHECK(factz_compress_f64(u, v, NX, NY, &o, again, cap, &size2) == FACTZ_OK);
        CHECK(size2 == size && memcmp(buf, again, size) == 0);
        CHECK(factz_decompress_with_options_f64(buf, size, u2, v2, NX, NY, &o) == FACTZ_OK);
        CHECK(max_abs_diff(u, u2, N) <= eb);
      }
  free(buf);
  free(again);
}

/* The C API's float64 bytes equal the C++ API's (tests/capi/cpp_compress.cpp f64). */
static void test_bytes_equal_the_cpp_api(void) {
  static double u[N], v[N];
  field_f64(u, v);
  char up[1024], vp[1024], out[1024], cmd[4096];
  snprintf(up, sizeof up, "%s/capi_f64_u.f64", g_tmp);
  snprintf(vp, sizeof vp, "%s/capi_f64_v.f64", g_tmp);
  snprintf(out, sizeof out, "%s/capi_f64.fz", g_tmp);
  FILE* f = fopen(up, "wb");
  CHECK(f && fwrite(u, sizeof(double), N, f) == N);
  if (f) fclose(f);
  f = fopen(vp, "wb");
  CHECK(f && fwrite(v, sizeof(double), N, f) == N);
  if (f) fclose(f);
  const char* modes[] = {"none", "block", "speculative"};
  size_t cap = factz_compress_bound(NX, NY);
  unsigned char* mine = (unsigned char*)malloc(cap);
  unsigned char* theirs = (unsigned char*)malloc(cap);
  for (int mode = 0; mode <= 2; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    o.bound = 1e-9;
    snprintf(cmd, sizeof cmd, "'%s' %d %d '%s' '%s' '%s' %s %s rel 1e-9 1 4096 f64", g_cpp, NX, NY, up, vp, out,
             modes[mode], o.coder == FACTZ_CODER_ANS ? "ans" : "huffman");
    CHECK(system(cmd) == 0);
    f = fopen(out, "rb");
    CHECK(f != NULL);
    if (!f) continue;
    size_t got = fread(theirs, 1, cap, f), size = 0;
    fclose(f);
    CHECK(factz_compress_f64(u, v, NX, NY, &o, mine, cap, &size) == FACTZ_OK);
    CHECK(got == size && memcmp(mine, theirs, size) == 0);
  }
  remove(up);
  remove(vp);
  remove(out);
  free(mine);
  free(theirs);
}

/* NaN with payloads, a mask and float64 fill values (one no float32 equals): missing, with
 * all 64 bits back, in the mask of factz_decompress_masked_f64, outside the mesh and the
 * bound, and compared without mismatch. */
static void test_missing_values_keep_64_bits(void) {
  static double u[N], v[N], u2[N], v2[N];
  static uint8_t mask[N], want[N], got[N];
  field_f64(u, v);
  const uint64_t payload = 0x7FF8000000012345ull;
  memset(mask, 0, sizeof mask);
  memset(want, 0, sizeof want);
  u[10] = double_of(payload); /* NaN: missing, payload kept */
  want[10] = 1;
  v[200] = 1e20; /* the declared fill value of v: 1e20 as a double, not 1e20f */
  want[200] = 1;
  v[201] = (double)1e20f; /* 1e20f widened is not the fill value 1e20: data (stored exactly) */
  u[300] = 9.969209968386869e36; /* netCDF's NC_FILL_DOUBLE as the fill value of u */
  want[300] = 1;
  for (int k = 1000; k < 1040; ++k) { /* masked: whatever the planes hold there */
    mask[k] = 1;
    want[k] = 1;
    u[k] = 12345.678901234567;
  }
  factz_options o;
  factz_options_init(&o);
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = 1e-9;
  o.has_fill_u64 = o.has_fill_v64 = 1;
  o.fill_u64 = 9.969209968386869e36;
  o.fill_v64 = 1e20;
  size_t cap = factz_compress_bound(NX, NY);
  unsigned char* buf = (unsigned char*)malloc(cap);
  for (int mode = 0; mode <= 2; ++mode) {
    o.mode = mode;
    size_t size = 0;
    CHECK(factz_compress_masked_f64(u, v, mask, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
    memset(got, 0xEE, sizeof got);
    CHECK(factz_decompress_masked_f64(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK);
    int same_mask = 1, bits_kept = 1;
    double err = 0;
    for (int k = 0; k < N; ++k) {
      same_mask &= got[k] == want[k];
      if (want[k]) bits_kept &= bits_of(u[k]) == bits_of(u2[k]) && bits_of(v[k]) == bits_of(v2[k]);
      else err = fmax(err, fmax(fabs(u[k] - u2[k]), fabs(v[k] - v2[k])));
    }
    CHECK(same_mask && bits_kept);
    CHECK(err <= 1e-9);
    CHECK(bits_of(u2[10]) == payload && v2[201] == (double)1e20f);
    factz_comparison c;
    CHECK(factz_compare_masked_f64(u, v, mask, u2, v2, got, NX, NY, &o, &c) == FACTZ_OK);
    CHECK(c.masked_vertices == 43 && c.mask_mismatch == 0);
    if (mode != FACTZ_MODE_NONE) CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
  }
  /* the same missing vertices marked by the mask alone give the same stream */
  size_t by_fill = 0, by_mask = 0;
  unsigned char* other = (unsigned char*)malloc(cap);
  CHECK(factz_compress_masked_f64(u, v, mask, NX, NY, &o, buf, cap, &by_fill) == FACTZ_OK);
  factz_options plain = o;
  plain.has_fill_u64 = plain.has_fill_v64 = 0;
  CHECK(factz_compress_masked_f64(u, v, want, NX, NY, &plain, other, cap, &by_mask) == FACTZ_OK);
  CHECK(by_fill == by_mask && memcmp(buf, other, by_fill) == 0);
  /* critical points: a triangle touching a missing vertex holds none */
  int64_t with_mask = -1, without = -1;
  CHECK(factz_count_critical_points_masked_f64(u, v, want, NX, NY, NULL, &with_mask) == FACTZ_OK);
  field_f64(u2, v2);
  CHECK(factz_count_critical_points_f64(u2, v2, NX, NY, 0, &without) == FACTZ_OK);
  CHECK(with_mask >= 0 && with_mask <= without);
  free(buf);
  free(other);
}

/* Types never mix: each decoder refuses the other type's stream, naming the functions to
 * use; float32 fill values are refused by the _f64 functions and the reverse. */
static void test_types_never_mix(void) {
  static double u[N], v[N], u2[N], v2[N];
  static float uf[N], vf[N], uf2[N], vf2[N];
  static uint8_t m[N];
  field_f64(u, v);
  for (int k = 0; k < N; ++k) uf[k] = (float)u[k], vf[k] = (float)v[k];
  size_t cap = factz_compress_bound(NX, NY), s64 = 0, s32 = 0;
  unsigned char* b64 = (unsigned char*)malloc(cap);
  unsigned char* b32 = (unsigned char*)malloc(cap);
  CHECK(factz_compress_f64(u, v, NX, NY, NULL, b64, cap, &s64) == FACTZ_OK);
  CHECK(factz_compress(uf, vf, NX, NY, NULL, b32, cap, &s32) == FACTZ_OK);
  CHECK(b32[7] == 1 && b64[7] == 2); /* the compact header's data type byte */

  CHECK(factz_decompress(b64, s64, uf2, vf2, NX, NY, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "float64") != NULL && strstr(factz_last_error(), "factz_decompress_f64") != NULL);
  CHECK(factz_decompress_masked(b64, s64, uf2, vf2, m, NX, NY, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_with_options(b64, s64, uf2, vf2, NX, NY, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_f64(b32, s32, u2, v2, NX, NY, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "float32") != NULL && strstr(factz_last_error(), "factz_decompress,") != NULL);
  CHECK(factz_decompress_masked_f64(b32, s32, u2, v2, m, NX, NY, NULL) == FACTZ_INVALID_ARGUMENT);
  int64_t sx = 0, sy = 0;
  factz_dtype t = FACTZ_DTYPE_FLOAT64;
  CHECK(factz_stream_info(b32, s32, &sx, &sy, &t) == FACTZ_OK && t == FACTZ_DTYPE_FLOAT32);
  CHECK(factz_stream_info(b32, s32, &sx, &sy, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_info(b32, 10, &sx, &sy, &t) == FACTZ_CORRUPT_STREAM);

  factz_options o;
  factz_options_init(&o);
  o.has_fill_u = 1;
  o.fill_u = 1e20f;
  size_t size = 0;
  CHECK(factz_compress_f64(u, v, NX, NY, &o, b64, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "has_fill_u64") != NULL);
  int64_t count = 0;
  CHECK(factz_count_critical_points_masked_f64(u, v, NULL, NX, NY, &o, &count) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_v64 = 1;
  o.fill_v64 = 1e20;
  CHECK(factz_compress(uf, vf, NX, NY, &o, b32, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "has_fill_v64") != NULL);
  factz_comparison c;
  CHECK(factz_compare_masked(uf, vf, NULL, uf, vf, NULL, NX, NY, &o, &c) == FACTZ_INVALID_ARGUMENT);
  free(b64);
  free(b32);
}

/* A program built against 1.3.0: the float64 fill members lie beyond its struct and are not
 * read (whatever the bytes there hold); the same struct read whole declares them. */
static void test_programs_built_against_130(void) {
  static double u[N], v[N];
  field_f64(u, v);
  u[40] = -9999.0;
  size_t cap = factz_compress_bound(NX, NY), ref = 0, size = 0;
  unsigned char* plain = (unsigned char*)malloc(cap);
  unsigned char* buf = (unsigned char*)malloc(cap);
  factz_options o;
  factz_options_init(&o);
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = 1e-6;
  CHECK(factz_compress_f64(u, v, NX, NY, &o, plain, cap, &ref) == FACTZ_OK);
  o.has_fill_u64 = 1;
  o.fill_u64 = -9999.0;
  o.struct_size = OPTIONS_SIZE_130;
  CHECK(factz_compress_f64(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
  CHECK(size == ref && memcmp(buf, plain, size) == 0);
  o.struct_size = sizeof o;
  CHECK(factz_compress_f64(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
  CHECK(!(size == ref && memcmp(buf, plain, size) == 0));
  static uint8_t got[N];
  static double u2[N], v2[N];
  CHECK(factz_decompress_masked_f64(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK);
  int64_t missing = 0;
  for (int k = 0; k < N; ++k) missing += got[k];
  CHECK(missing == 1 && got[40] == 1 && u2[40] == -9999.0);
  free(plain);
  free(buf);
}

/* Bad input and damaged streams: clear statuses, never a crash; the size bound holds for
 * float64 noise stored exactly. */
static void test_bad_input_and_the_size_bound(void) {
  static double u[N], v[N], u2[N], v2[N];
  field_f64(u, v);
  size_t cap = factz_compress_bound(NX, NY), size = 0, needed = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress_f64(NULL, v, NX, NY, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress_f64(u, v, 0, NY, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress_f64(u, v, NX, NY, NULL, buf, cap, NULL) == FACTZ_INVALID_ARGUMENT);
  const double saved = u[45];
  u[45] = INFINITY;
  CHECK(factz_compress_f64(u, v, NX, NY, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  u[45] = saved;
  factz_options o;
  factz_options_init(&o);
  o.policy = FACTZ_POLICY_CUDA; /* on a GPU the CPU's bytes; elsewhere refused, never run on the CPU silently */
  unsigned char* gpu = (unsigned char*)malloc(cap);
  size_t gpu_size = 0;
  const factz_status on_gpu = factz_compress_f64(u, v, NX, NY, &o, gpu, cap, &gpu_size);
  if (on_gpu != FACTZ_OK) CHECK(strstr(factz_last_error(), "backend_unavailable") != NULL);
  CHECK(factz_compress_f64(u, v, NX, NY, NULL, buf, cap, &size) == FACTZ_OK);
  if (on_gpu == FACTZ_OK) CHECK(gpu_size == size && memcmp(gpu, buf, size) == 0);
  free(gpu);
  CHECK(factz_compress_f64(u, v, NX, NY, NULL, buf, size - 1, &needed) == FACTZ_BUFFER_TOO_SMALL);
  CHECK(needed == size);
  CHECK(factz_decompress_f64(buf, size, u2, v2, NX + 1, NY, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_f64(buf, size, u2, NULL, NX, NY, 0) == FACTZ_INVALID_ARGUMENT);
  int refused = 0;
  for (size_t k = 0; k < size; k += 7) {
    buf[k] ^= 0x5A;
    factz_status s = factz_decompress_f64(buf, size, u2, v2, NX, NY, 0);
    refused += s == FACTZ_CORRUPT_STREAM || s == FACTZ_UNSUPPORTED_VERSION || s == FACTZ_INVALID_ARGUMENT;
    buf[k] ^= 0x5A;
  }
  CHECK(refused == (int)((size + 6) / 7));
  for (size_t k = 0; k < size; k += 13) CHECK(factz_decompress_f64(buf, k, u2, v2, NX, NY, 0) != FACTZ_OK);
  CHECK(factz_decompress_f64(buf, size, u2, v2, NX, NY, 0) == FACTZ_OK);

  unsigned state = 12345u; /* noise of every magnitude, stored exactly at bound 0 */
  for (int k = 0; k < N; ++k) {
    state = state * 1103515245u + 12345u;
    u[k] = ((int)(state >> 8) - (1 << 23)) * 1e-3 + 1e-12 * k;
    state = state * 1103515245u + 12345u;
    v[k] = ((int)(state >> 8) - (1 << 23)) * 1e200;
  }
  for (int mode = 0; mode <= 2; ++mode)
    for (int coder = 0; coder <= 1; ++coder) {
      factz_options_init(&o);
      o.mode = mode;
      o.coder = coder;
      o.bound = 0;
      CHECK(factz_compress_f64(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
      CHECK(size <= cap);
      CHECK(factz_decompress_f64(buf, size, u2, v2, NX, NY, 0) == FACTZ_OK);
      CHECK(memcmp(u, u2, sizeof u) == 0 && memcmp(v, v2, sizeof v) == 0); /* bound 0: every bit */
    }
  free(buf);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FACTZ_CPP_COMPRESS TMP_DIR\n", argv[0]);
    return 2;
  }
  g_cpp = argv[1];
  g_tmp = argv[2];
  test_version_and_defaults();
  test_modes_keep_the_double_bound_and_the_critical_points();
  test_bytes_equal_the_cpp_api();
  test_missing_values_keep_64_bits();
  test_types_never_mix();
  test_programs_built_against_130();
  test_bad_input_and_the_size_bound();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
