/* float64 3D fields and the fill values of 3D fields through the C API (1.8.0), from a C program:
 * round trips of float64 3D fields in modes speculative, block and none with zero violations
 * (factz_compare3d_f64) and the bound held exactly in double, the C++ API's bytes, missing
 * vertices (NaN with payloads, a mask, fill values of u, v and w) back bit for bit with their
 * mask, the float32 3D functions honouring has_fill_u / _v / _w as factz::mark_missing does,
 * fill values of the other type refused, decoders of the other value type refused with a
 * message naming the function to use, factz_stream_info3d, 1.7.0-sized option structs, bad
 * input and the size bound.
 * Usage: factz_capi3d_f64_tests FACTZ_CPP_COMPRESS TMP_DIR (the first is
 * tests/capi/cpp_compress.cpp: factz::compress of the C++ API). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

/* sizeof(factz_options) of C API 1.4.0 to 1.7.0: it ends with fill_v64. */
#define OPTIONS_SIZE_170 offsetof(factz_options, has_fill_w)

static const char* g_cpp = NULL;
static const char* g_tmp = NULL;

enum { NX = 17, NY = 14, NZ = 11, N = NX * NY * NZ };

/* The ABC flow of test_capi3d.c in double, plus a term no float can hold (1e-9 x), so that
 * a float64 field that went through float would show it. */
static void abc_field64(double* u, double* v, double* w) {
  const double k = 4.0 * 3.14159265358979 / 24.0;
  for (int z = 0; z < NZ; ++z)
    for (int y = 0; y < NY; ++y)
      for (int x = 0; x < NX; ++x) {
        const int i = (z * NY + y) * NX + x;
        const double fx = k * (double)x, fy = k * (double)y + 0.3, fz = k * (double)z + 0.7;
        u[i] = sin(fz) + cos(fy) + 1e-9 * (double)x;
        v[i] = sin(fx) + cos(fz) + 1e-9 * (double)y;
        w[i] = sin(fy) + cos(fx) + 0.05 * (double)z + 1e-9 * (double)z;
      }
}

static uint64_t bits64(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static double nan_with_payload(uint64_t payload) {
  const uint64_t b = UINT64_C(0x7FF8000000000000) | payload;
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static uint32_t bits32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

typedef struct {
  double *u, *v, *w;
} planes64;

static planes64 new_planes64(void) {
  planes64 p;
  p.u = (double*)malloc(N * sizeof(double));
  p.v = (double*)malloc(N * sizeof(double));
  p.w = (double*)malloc(N * sizeof(double));
  CHECK(p.u && p.v && p.w);
  return p;
}

static void free_planes64(planes64* p) {
  free(p->u);
  free(p->v);
  free(p->w);
}

static size_t g_cap = 0;

/* max |a - b| over the vertices where mask is 0 (mask NULL: all). */
static double max_error(const double* a, const double* b, const uint8_t* mask) {
  double e = 0;
  for (int k = 0; k < N; ++k)
    if (!mask || !mask[k]) {
      const double d = fabs(a[k] - b[k]);
      if (d > e) e = d;
    }
  return e;
}

static void test_version_and_defaults(void) {
  CHECK(FACTZ_C_API_VERSION == 10800 && factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(FACTZ_FORMAT_VERSION == 13);
  factz_options o;
  memset(&o, 0xAB, sizeof o);
  factz_options_init(&o);
  CHECK(o.struct_size == sizeof(factz_options));
  CHECK(o.has_fill_w == 0 && o.fill_w == 0.0f && o.has_fill_w64 == 0 && o.fill_w64 == 0.0);
  CHECK(o.has_fill_u == 0 && o.has_fill_v == 0 && o.has_fill_u64 == 0 && o.has_fill_v64 == 0);
  if (sizeof(void*) == 8) CHECK(sizeof(factz_options) == 136 && OPTIONS_SIZE_170 == 112);
  /* a 1.7.0 program's struct: the library writes nothing beyond it */
  unsigned char raw[sizeof(factz_options) + 16];
  memset(raw, 0xCD, sizeof raw);
  factz_options_init_sized((factz_options*)raw, OPTIONS_SIZE_170);
  CHECK(((factz_options*)raw)->struct_size == OPTIONS_SIZE_170);
  int untouched = 1;
  for (size_t k = OPTIONS_SIZE_170; k < sizeof raw; ++k) untouched = untouched && raw[k] == 0xCD;
  CHECK(untouched);
}

/* Round trips in every mode and coder, ABS and REL: the stream is format version 13 with the
 * float64 value type, decodes to doubles within the bound (checked in double), and modes
 * speculative and block keep every critical point of the float64 mesh. */
static void test_round_trips(const planes64* f) {
  int64_t cps = -1;
  CHECK(factz_count_critical_points3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, &cps) == FACTZ_OK);
  CHECK(cps > 0);
  unsigned char* buf = (unsigned char*)malloc(g_cap);
  planes64 r = new_planes64();
  const double bounds[2] = {1e-2, 1e-5};
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_SPECULATIVE; ++mode)
    for (int coder = 0; coder <= 1; ++coder)
      for (int bm = 0; bm <= 1; ++bm)
        for (int b = 0; b < 2; ++b) {
          factz_options o;
          factz_options_init(&o);
          o.mode = mode;
          o.coder = coder;
          o.bound_mode = bm;
          o.bound = bounds[b];
          o.anchor_stride = 8;
          size_t size = 0;
          factz_status st = factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, buf, g_cap, &size);
          CHECK(st == FACTZ_OK);
          if (st != FACTZ_OK) {
            fprintf(stderr, "  mode %d coder %d bound mode %d bound %g\n", mode, coder, bm, bounds[b]);
            continue;
          }
          CHECK(size > 16 && size <= g_cap && buf[4] == 18 && buf[6] == 13); /* compact container, sections of version 13 */
          int64_t sx = 0, sy = 0, sz = 0;
          factz_dtype dt = FACTZ_DTYPE_FLOAT32;
          CHECK(factz_stream_info3d(buf, size, &sx, &sy, &sz, &dt) == FACTZ_OK);
          CHECK(sx == NX && sy == NY && sz == NZ && dt == FACTZ_DTYPE_FLOAT64);
          CHECK(factz_stream_dims3d(buf, size, &sx, &sy, &sz) == FACTZ_OK && sx == NX && sz == NZ);
          CHECK(factz_decompress3d_f64(buf, size, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_OK);
          factz_comparison3d c;
          CHECK(factz_compare3d_f64(f->u, f->v, f->w, r.u, r.v, r.w, NX, NY, NZ, NULL, &c) == FACTZ_OK);
          const double eb = bm == FACTZ_BOUND_ABS ? bounds[b] : bounds[b] * c.value_range;
          CHECK(c.value_range > 1);
          CHECK(max_error(f->u, r.u, NULL) <= eb && max_error(f->v, r.v, NULL) <= eb &&
                max_error(f->w, r.w, NULL) <= eb);
          CHECK(c.max_abs_error_u <= eb && c.max_abs_error_v <= eb && c.max_abs_error_w <= eb);
          CHECK(c.cp_original == cps && c.masked_vertices == 0 && c.mask_mismatch == 0);
          if (mode != FACTZ_MODE_NONE) {
            CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0 && c.cp_decompressed == cps);
            int64_t back = -1;
            CHECK(factz_count_critical_points3d_f64(r.u, r.v, r.w, NX, NY, NZ, NULL, &back) == FACTZ_OK &&
                  back == cps);
          }
          /* bytes independent of the thread count */
          o.threads = 1;
          unsigned char* again = (unsigned char*)malloc(g_cap);
          size_t size2 = 0;
          CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, again, g_cap, &size2) == FACTZ_OK);
          CHECK(size2 == size && memcmp(again, buf, size) == 0);
          free(again);
        }
  free_planes64(&r);
  free(buf);
}

static int write_file(const char* path, const void* data, size_t bytes) {
  FILE* out = fopen(path, "wb");
  if (!out) return 0;
  const size_t wrote = fwrite(data, 1, bytes, out);
  return fclose(out) == 0 && wrote == bytes;
}

/* factz_compress3d_f64 writes the bytes of factz::compress(const VectorField3D64&, ...). */
static void test_the_cpp_api_bytes(const planes64* f) {
  char pu[1024], pv[1024], pw[1024], out[1024], cmd[8192];
  snprintf(pu, sizeof pu, "%s/capi3d64_u.f64", g_tmp);
  snprintf(pv, sizeof pv, "%s/capi3d64_v.f64", g_tmp);
  snprintf(pw, sizeof pw, "%s/capi3d64_w.f64", g_tmp);
  snprintf(out, sizeof out, "%s/capi3d64_cpp.fz", g_tmp);
  const size_t bytes = (size_t)N * sizeof(double);
  CHECK(write_file(pu, f->u, bytes) && write_file(pv, f->v, bytes) && write_file(pw, f->w, bytes));
  const char* modes[3] = {"none", "block", "speculative"};
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_SPECULATIVE; ++mode) {
    snprintf(cmd, sizeof cmd, "'%s' 3d %d %d %d '%s' '%s' '%s' '%s' %s ans abs 0.01 1 8 f64", g_cpp, NX, NY, NZ, pu,
             pv, pw, out, modes[mode]);
    CHECK(system(cmd) == 0);
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    o.coder = FACTZ_CODER_ANS;
    o.bound_mode = FACTZ_BOUND_ABS;
    o.bound = 0.01;
    o.anchor_stride = 8;
    unsigned char* mine = (unsigned char*)malloc(g_cap);
    unsigned char* theirs = (unsigned char*)malloc(g_cap);
    size_t size = 0;
    CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, mine, g_cap, &size) == FACTZ_OK);
    FILE* in = fopen(out, "rb");
    CHECK(in != NULL && theirs != NULL);
    const size_t got = in && theirs ? fread(theirs, 1, g_cap, in) : 0;
    if (in) fclose(in);
    CHECK(got == size && memcmp(mine, theirs, size) == 0);
    free(mine);
    free(theirs);
  }
  remove(pu);
  remove(pv);
  remove(pw);
  remove(out);
}

/* Missing vertices of a float64 3D field: NaN with payloads, a caller's mask, and a float64
 * fill value in each component (one no float equals). Each marks its vertex (a fill value of
 * one component alone suffices), the stream keeps their 64 bits, mask_out names exactly
 * them, the valid vertices hold the bound, and the comparison has zero violations. */
static void test_missing_vertices(const planes64* f0) {
  planes64 f = new_planes64();
  memcpy(f.u, f0->u, N * sizeof(double));
  memcpy(f.v, f0->v, N * sizeof(double));
  memcpy(f.w, f0->w, N * sizeof(double));
  uint8_t* mask = (uint8_t*)calloc(N, 1);
  uint8_t* expect = (uint8_t*)calloc(N, 1);
  /* 1e20 is no float (NC_FILL_DOUBLE is one); 1e300 is beyond float's range */
  const double fill_u = 1e20, fill_v = -9999.0, fill_w = 1e300;
  for (int k = 0; k < N; ++k) {
    if (k % 53 == 3) {
      f.u[k] = fill_u;
      expect[k] = 1;
    } else if (k % 59 == 5) {
      f.v[k] = fill_v;
      expect[k] = 1;
    } else if (k % 61 == 7) {
      f.w[k] = fill_w;
      expect[k] = 1;
    } else if (k % 67 == 11) {
      f.w[k] = nan_with_payload((uint64_t)k);
      expect[k] = 1;
    } else if (k % 71 == 13) {
      mask[k] = (uint8_t)(0x10 + k % 7); /* any nonzero byte; the values stay as they are */
      f.u[k] = 123456.789;
      expect[k] = 1;
    }
  }
  /* a value equal to the float32 rounding of a fill value is not missing: types never mix */
  f.u[1] = (double)(float)fill_u;
  CHECK(f.u[1] != fill_u);
  int64_t expected = 0;
  for (int k = 0; k < N; ++k) expected += expect[k];
  CHECK(expected > 40);
  unsigned char* buf = (unsigned char*)malloc(g_cap);
  planes64 r = new_planes64();
  uint8_t* mask_out = (uint8_t*)malloc(N);
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_SPECULATIVE; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    o.bound_mode = FACTZ_BOUND_ABS;
    o.bound = 1e-3;
    o.anchor_stride = 8;
    o.has_fill_u64 = o.has_fill_v64 = o.has_fill_w64 = 1;
    o.fill_u64 = fill_u;
    o.fill_v64 = fill_v;
    o.fill_w64 = fill_w;
    size_t size = 0;
    CHECK(factz_compress3d_masked_f64(f.u, f.v, f.w, mask, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_OK);
    CHECK(size > 16 && buf[4] == 18 && buf[6] == 13); /* compact container, sections of version 13 */
    memset(mask_out, 0x77, N);
    CHECK(factz_decompress3d_masked_f64(buf, size, r.u, r.v, r.w, mask_out, NX, NY, NZ, NULL) == FACTZ_OK);
    int same_mask = 1, same_bits = 1;
    for (int k = 0; k < N; ++k) {
      same_mask = same_mask && mask_out[k] == expect[k];
      if (expect[k])
        same_bits = same_bits && bits64(r.u[k]) == bits64(f.u[k]) && bits64(r.v[k]) == bits64(f.v[k]) &&
                    bits64(r.w[k]) == bits64(f.w[k]);
    }
    CHECK(same_mask);
    CHECK(same_bits);
    CHECK(max_error(f.u, r.u, expect) <= 1e-3 && max_error(f.v, r.v, expect) <= 1e-3 &&
          max_error(f.w, r.w, expect) <= 1e-3);
    factz_comparison3d c;
    /* the fill values of options apply to both fields; mask2 is what the decoder returned */
    CHECK(factz_compare3d_masked_f64(f.u, f.v, f.w, mask, r.u, r.v, r.w, mask_out, NX, NY, NZ, &o, &c) ==
          FACTZ_OK);
    CHECK(c.masked_vertices == expected && c.mask_mismatch == 0);
    if (mode != FACTZ_MODE_NONE) CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
    /* without its mask, the reconstruction differs from the original where the mask was */
    CHECK(factz_compare3d_masked_f64(f.u, f.v, f.w, mask, r.u, r.v, r.w, NULL, NX, NY, NZ, &o, &c) == FACTZ_OK);
    CHECK(c.mask_mismatch > 0);
    /* the fill values declared are the mask expect: the same stream and the same count */
    size_t size2 = 0;
    unsigned char* buf2 = (unsigned char*)malloc(g_cap);
    factz_options plain = o;
    plain.has_fill_u64 = plain.has_fill_v64 = plain.has_fill_w64 = 0;
    CHECK(factz_compress3d_masked_f64(f.u, f.v, f.w, expect, NX, NY, NZ, &plain, buf2, g_cap, &size2) ==
          FACTZ_OK);
    CHECK(size2 == size && memcmp(buf, buf2, size) == 0);
    free(buf2);
    int64_t by_fill = -1, by_mask = -1, unmasked = -1;
    CHECK(factz_count_critical_points3d_masked_f64(f.u, f.v, f.w, mask, NX, NY, NZ, &o, &by_fill) == FACTZ_OK);
    CHECK(factz_count_critical_points3d_masked_f64(f.u, f.v, f.w, expect, NX, NY, NZ, NULL, &by_mask) ==
          FACTZ_OK);
    CHECK(factz_count_critical_points3d_f64(f0->u, f0->v, f0->w, NX, NY, NZ, NULL, &unmasked) == FACTZ_OK);
    CHECK(by_fill == by_mask && by_fill < unmasked);
  }
  /* the fill value of w alone marks a vertex whose u and v are valid */
  {
    factz_options o;
    factz_options_init(&o);
    o.has_fill_w64 = 1;
    o.fill_w64 = fill_w;
    size_t size = 0;
    CHECK(factz_compress3d_f64(f0->u, f0->v, f.w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_OK);
    CHECK(factz_decompress3d_masked_f64(buf, size, r.u, r.v, r.w, mask_out, NX, NY, NZ, NULL) == FACTZ_OK);
    int only_w = 1;
    for (int k = 0; k < N; ++k) only_w = only_w && mask_out[k] == (f.w[k] == fill_w || isnan(f.w[k]));
    CHECK(only_w);
    /* a NaN fill value adds nothing: the stream of no fill value */
    o.fill_w64 = NAN;
    size_t a = 0, b = 0;
    unsigned char* buf2 = (unsigned char*)malloc(g_cap);
    CHECK(factz_compress3d_f64(f0->u, f0->v, f0->w, NX, NY, NZ, &o, buf, g_cap, &a) == FACTZ_OK);
    CHECK(factz_compress3d_f64(f0->u, f0->v, f0->w, NX, NY, NZ, NULL, buf2, g_cap, &b) == FACTZ_OK);
    CHECK(a == b && memcmp(buf, buf2, a) == 0);
    free(buf2);
  }
  free(mask_out);
  free_planes64(&r);
  free(buf);
  free(mask);
  free(expect);
  free_planes64(&f);
}

/* The float32 3D functions read has_fill_u / _v / _w (1.8.0) as factz::mark_missing with
 * FillValues3D does: the stream equals the one with those vertices in the caller's mask, the
 * fill values come back bit for bit, and the analysis functions see the same vertices. */
static void test_float32_fill_values(const planes64* f0) {
  float* u = (float*)malloc(N * sizeof(float));
  float* v = (float*)malloc(N * sizeof(float));
  float* w = (float*)malloc(N * sizeof(float));
  uint8_t* expect = (uint8_t*)calloc(N, 1);
  for (int k = 0; k < N; ++k) {
    u[k] = (float)f0->u[k];
    v[k] = (float)f0->v[k];
    w[k] = (float)f0->w[k];
    if (k % 47 == 1) u[k] = 1e20f;
    else if (k % 43 == 2) v[k] = -INFINITY;
    else if (k % 41 == 3) w[k] = -9999.0f;
    else continue;
    expect[k] = 1;
  }
  factz_options o;
  factz_options_init(&o);
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = 1e-3;
  o.has_fill_u = o.has_fill_v = o.has_fill_w = 1;
  o.fill_u = 1e20f;
  o.fill_v = -INFINITY;
  o.fill_w = -9999.0f;
  unsigned char* a = (unsigned char*)malloc(g_cap);
  unsigned char* b = (unsigned char*)malloc(g_cap);
  size_t sa = 0, sb = 0;
  CHECK(factz_compress3d(u, v, w, NX, NY, NZ, &o, a, g_cap, &sa) == FACTZ_OK);
  CHECK(sa > 6 && a[4] == 18 && a[6] == 12); /* compact container, sections of version 12 */
  factz_options plain;
  factz_options_init(&plain);
  plain.bound_mode = FACTZ_BOUND_ABS;
  plain.bound = 1e-3;
  CHECK(factz_compress3d_masked(u, v, w, expect, NX, NY, NZ, &plain, b, g_cap, &sb) == FACTZ_OK);
  CHECK(sa == sb && memcmp(a, b, sa) == 0);
  float* r = (float*)malloc(3 * N * sizeof(float));
  uint8_t* mask_out = (uint8_t*)malloc(N);
  CHECK(factz_decompress3d_masked(a, sa, r, r + N, r + 2 * N, mask_out, NX, NY, NZ, NULL) == FACTZ_OK);
  int same = 1;
  for (int k = 0; k < N; ++k) {
    same = same && mask_out[k] == expect[k];
    if (expect[k])
      same = same && bits32(r[k]) == bits32(u[k]) && bits32(r[N + k]) == bits32(v[k]) &&
             bits32(r[2 * N + k]) == bits32(w[k]);
  }
  CHECK(same);
  /* -inf at a valid vertex is an error; declared as v's fill value it is a missing vertex */
  CHECK(factz_compress3d(u, v, w, NX, NY, NZ, &plain, b, g_cap, &sb) == FACTZ_INVALID_ARGUMENT);
  int64_t by_fill = -1, by_mask = -1;
  CHECK(factz_count_critical_points3d(u, v, w, NX, NY, NZ, &o, &by_fill) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked(u, v, w, expect, NX, NY, NZ, NULL, &by_mask) == FACTZ_OK);
  CHECK(by_fill == by_mask);
  factz_comparison3d c;
  CHECK(factz_compare3d(u, v, w, r, r + N, r + 2 * N, NX, NY, NZ, &o, &c) == FACTZ_OK);
  CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0 && c.mask_mismatch == 0);
  CHECK(c.masked_vertices > 0 && c.max_abs_error_w <= 1e-3);
  /* a 1.7.0-sized struct declares no fill value of w: has_fill_w beyond it is never read */
  factz_options old;
  factz_options_init(&old);
  old.struct_size = OPTIONS_SIZE_170;
  old.bound_mode = FACTZ_BOUND_ABS;
  old.bound = 1e-3;
  old.has_fill_w = 1;
  old.fill_w = -9999.0f;
  old.has_fill_w64 = 1; /* would be refused by the float32 functions if it were read */
  for (int k = 0; k < N; ++k) {
    if (v[k] == -INFINITY) v[k] = 0.25f;
  }
  old.has_fill_u = 1;
  old.fill_u = 1e20f;
  CHECK(factz_compress3d(u, v, w, NX, NY, NZ, &old, a, g_cap, &sa) == FACTZ_OK);
  CHECK(factz_decompress3d_masked(a, sa, r, r + N, r + 2 * N, mask_out, NX, NY, NZ, NULL) == FACTZ_OK);
  int w_valid = 1;
  for (int k = 0; k < N; ++k)
    if (w[k] == -9999.0f) w_valid = w_valid && mask_out[k] == 0 && fabsf(r[2 * N + k] - w[k]) <= 1e-3f;
  CHECK(w_valid);
  /* and a 2D call with a 1.7.0-sized struct carrying has_fill_w garbage is unaffected */
  CHECK(factz_compress(u, v, NX, NY * NZ, &old, a, g_cap, &sa) == FACTZ_OK);
  free(r);
  free(mask_out);
  free(a);
  free(b);
  free(u);
  free(v);
  free(w);
  free(expect);
}

/* Types never mix: float64 fill values are refused by the float32 3D functions and float32
 * ones by the float64 3D functions; a 2D field has no w. */
static void test_fill_values_of_the_other_type(const planes64* f) {
  float* g = (float*)calloc(N, sizeof(float));
  unsigned char* buf = (unsigned char*)malloc(g_cap);
  size_t size = 0;
  int64_t count = 0;
  factz_comparison3d c;
  factz_options o;
  factz_options_init(&o);
  o.has_fill_w64 = 1;
  o.fill_w64 = -9999.0;
  CHECK(factz_compress3d(g, g, g, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "has_fill_w64") != NULL && strstr(factz_last_error(), "has_fill_w /") != NULL);
  CHECK(factz_count_critical_points3d(g, g, g, NX, NY, NZ, &o, &count) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d(g, g, g, g, g, g, NX, NY, NZ, &o, &c) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_u64 = 1;
  CHECK(factz_compress3d_masked(g, g, g, NULL, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_w = 1;
  o.fill_w = -9999.0f;
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "float32 fill values") != NULL &&
        strstr(factz_last_error(), "has_fill_w64") != NULL);
  CHECK(factz_count_critical_points3d_masked_f64(f->u, f->v, f->w, NULL, NX, NY, NZ, &o, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d_masked_f64(f->u, f->v, f->w, NULL, f->u, f->v, f->w, NULL, NX, NY, NZ, &o, &c) ==
        FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_v = 1;
  CHECK(factz_compare3d_f64(f->u, f->v, f->w, f->u, f->v, f->w, NX, NY, NZ, &o, &c) == FACTZ_INVALID_ARGUMENT);
  /* the same members beyond a 1.7.0-sized struct are never read: nothing to refuse */
  factz_options_init(&o);
  o.struct_size = OPTIONS_SIZE_170;
  o.has_fill_w = 1;
  o.has_fill_w64 = 1;
  o.fill_w64 = f->w[5];
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_OK);
  {
    double* back = (double*)malloc(3 * N * sizeof(double));
    uint8_t* m = (uint8_t*)malloc(N);
    CHECK(factz_decompress3d_masked_f64(buf, size, back, back + N, back + 2 * N, m, NX, NY, NZ, &o) == FACTZ_OK);
    int none = 1;
    for (int k = 0; k < N; ++k) none = none && m[k] == 0;
    CHECK(none);
    free(back);
    free(m);
  }
  CHECK(factz_compress3d(g, g, g, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_OK);
  CHECK(factz_count_critical_points3d_masked_f64(f->u, f->v, f->w, NULL, NX, NY, NZ, &o, &count) == FACTZ_OK);
  /* 2D functions: w does not exist */
  factz_options_init(&o);
  o.has_fill_w = 1;
  CHECK(factz_compress(g, g, NX, NY, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "has_fill_w") != NULL && strstr(factz_last_error(), "2D") != NULL);
  CHECK(factz_count_critical_points_masked(g, g, NULL, NX, NY, &o, &count) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_w64 = 1;
  CHECK(factz_compress_f64(f->u, f->v, NX, NY, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "has_fill_w") != NULL);
  free(buf);
  free(g);
}

/* Each decoder takes the value type and dimensionality it was made for and names the one to
 * use otherwise; factz_stream_info3d tells a C caller which before decoding. */
static void test_decoders_of_the_other_type(const planes64* f) {
  unsigned char* s64 = (unsigned char*)malloc(g_cap);
  unsigned char* s32 = (unsigned char*)malloc(g_cap);
  unsigned char* s2d = (unsigned char*)malloc(g_cap);
  float* g = (float*)malloc(3 * N * sizeof(float));
  planes64 r = new_planes64();
  for (int k = 0; k < N; ++k) {
    g[k] = (float)f->u[k];
    g[N + k] = (float)f->v[k];
    g[2 * N + k] = (float)f->w[k];
  }
  size_t n64 = 0, n32 = 0, n2d = 0;
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, s64, g_cap, &n64) == FACTZ_OK);
  CHECK(factz_compress3d(g, g + N, g + 2 * N, NX, NY, NZ, NULL, s32, g_cap, &n32) == FACTZ_OK);
  CHECK(factz_compress_f64(f->u, f->v, NX, NY * NZ, NULL, s2d, g_cap, &n2d) == FACTZ_OK);
  int64_t sx = 0, sy = 0, sz = 0;
  factz_dtype dt = FACTZ_DTYPE_FLOAT64;
  CHECK(factz_stream_info3d(s32, n32, &sx, &sy, &sz, &dt) == FACTZ_OK && dt == FACTZ_DTYPE_FLOAT32 && sy == NY);
  /* float32 decoders given a float64 3D stream */
  CHECK(factz_decompress3d(s64, n64, g, g + N, g + 2 * N, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d_f64") != NULL);
  CHECK(factz_decompress3d_masked(s64, n64, g, g + N, g + 2 * N, NULL, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "float64") != NULL);
  /* float64 decoders given a float32 3D stream */
  CHECK(factz_decompress3d_f64(s32, n32, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d ") != NULL);
  CHECK(factz_decompress3d_masked_f64(s32, n32, r.u, r.v, r.w, NULL, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  /* 2D functions given a float64 3D stream, and the reverse */
  CHECK(factz_decompress_f64(s64, n64, r.u, r.v, NX, NY * NZ, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d_f64") != NULL);
  CHECK(factz_stream_info(s64, n64, &sx, &sy, &dt) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_stream_info3d") != NULL);
  CHECK(factz_decompress(s32, n32, g, g + N, NX, NY * NZ, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d") != NULL &&
        strstr(factz_last_error(), "factz_decompress3d_f64") == NULL);
  CHECK(factz_decompress3d_f64(s2d, n2d, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress_f64") != NULL);
  CHECK(factz_stream_info3d(s2d, n2d, &sx, &sy, &sz, &dt) == FACTZ_INVALID_ARGUMENT);
  /* the right decoder still works afterwards, and a success clears the message */
  CHECK(factz_decompress3d_f64(s64, n64, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_OK);
  CHECK(strcmp(factz_last_error(), "") == 0);
  free_planes64(&r);
  free(g);
  free(s64);
  free(s32);
  free(s2d);
}

/* Null pointers, bad grids, short buffers, small structs, infinity, damaged streams. */
static void test_bad_input(const planes64* f) {
  unsigned char* buf = (unsigned char*)malloc(g_cap);
  planes64 r = new_planes64();
  size_t size = 0;
  int64_t count = 77;
  factz_comparison3d c;
  CHECK(factz_compress3d_f64(NULL, f->v, f->w, NX, NY, NZ, NULL, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "null field plane") != NULL);
  CHECK(factz_compress3d_f64(f->u, f->v, NULL, NX, NY, NZ, NULL, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, buf, g_cap, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, NULL, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, 0, NZ, NULL, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "17x0x11") != NULL);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, -1, NY, NZ, NULL, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, (int64_t)1 << 20, (int64_t)1 << 20, 2, NULL, buf, g_cap, &size) ==
        FACTZ_INVALID_ARGUMENT);
  /* too small a buffer: the size needed, then success with exactly that */
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, buf, 10, &size) == FACTZ_BUFFER_TOO_SMALL);
  const size_t need = size;
  CHECK(need > 10 && need <= g_cap);
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, buf, need, &size) == FACTZ_OK && size == need);
  factz_options o;
  factz_options_init(&o);
  o.struct_size = 8;
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d_f64(buf, need, r.u, r.v, r.w, NX, NY, NZ, &o) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.mode = 9;
  CHECK(factz_compress3d_f64(f->u, f->v, f->w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  /* decoding: null planes and source, another grid, damaged bytes */
  CHECK(factz_decompress3d_f64(buf, need, NULL, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d_f64(NULL, need, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d_f64(buf, need, r.u, r.v, r.w, NX, NY, NZ + 1, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "17x14x11") != NULL);
  CHECK(factz_decompress3d_f64(buf, need, r.u, r.v, r.w, 0, NY, NZ, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d_f64(buf, need / 2, r.u, r.v, r.w, NX, NY, NZ, NULL) != FACTZ_OK);
  CHECK(factz_decompress3d_f64(buf, 3, r.u, r.v, r.w, NX, NY, NZ, NULL) != FACTZ_OK);
  unsigned char* damaged = (unsigned char*)malloc(need);
  memcpy(damaged, buf, need);
  damaged[need - 5] ^= 0x5A;
  CHECK(factz_decompress3d_f64(damaged, need, r.u, r.v, r.w, NX, NY, NZ, NULL) != FACTZ_OK);
  free(damaged);
  int64_t sx, sy, sz;
  factz_dtype dt;
  CHECK(factz_stream_info3d(buf, need, &sx, &sy, NULL, &dt) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_info3d(buf, need, &sx, &sy, &sz, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_info3d(NULL, 5, &sx, &sy, &sz, &dt) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_info3d(buf, 5, &sx, &sy, &sz, &dt) != FACTZ_OK);
  /* analysis */
  CHECK(factz_count_critical_points3d_f64(f->u, f->v, f->w, NX, NY, NZ, NULL, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_count_critical_points3d_f64(f->u, NULL, f->w, NX, NY, NZ, NULL, &count) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_count_critical_points3d_masked_f64(f->u, f->v, f->w, NULL, NX, NY, -3, NULL, &count) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(count == 77);
  CHECK(factz_compare3d_f64(f->u, f->v, f->w, f->u, f->v, f->w, NX, NY, NZ, NULL, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d_sized_f64(f->u, f->v, f->w, f->u, f->v, f->w, NX, NY, NZ, NULL, &c, 16) ==
        FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_compare3d_f64") != NULL);
  CHECK(factz_compare3d_f64(f->u, f->v, f->w, NULL, f->v, f->w, NX, NY, NZ, NULL, &c) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "u2, v2 and w2") != NULL);
  /* infinity: an error at a valid vertex, allowed under the mask */
  planes64 g = new_planes64();
  memcpy(g.u, f->u, N * sizeof(double));
  memcpy(g.v, f->v, N * sizeof(double));
  memcpy(g.w, f->w, N * sizeof(double));
  g.v[100] = INFINITY;
  CHECK(factz_compress3d_f64(g.u, g.v, g.w, NX, NY, NZ, NULL, buf, g_cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  uint8_t* mask = (uint8_t*)calloc(N, 1);
  mask[100] = 1;
  CHECK(factz_compress3d_masked_f64(g.u, g.v, g.w, mask, NX, NY, NZ, NULL, buf, g_cap, &size) == FACTZ_OK);
  CHECK(factz_decompress3d_f64(buf, size, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_OK);
  CHECK(r.v[100] == INFINITY);
  free(mask);
  free_planes64(&g);
  free_planes64(&r);
  free(buf);
}

/* The size bound holds for float64 noise at bound 0 (every value stored exactly), every
 * mode and coder. */
static void test_size_bound_on_noise(void) {
  planes64 f = new_planes64();
  uint64_t s = UINT64_C(0x9E3779B97F4A7C15);
  for (int k = 0; k < N; ++k) {
    double* p[3] = {f.u, f.v, f.w};
    for (int c = 0; c < 3; ++c) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      p[c][k] = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 1e3;
    }
  }
  unsigned char* buf = (unsigned char*)malloc(g_cap);
  planes64 r = new_planes64();
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_SPECULATIVE; ++mode)
    for (int coder = 0; coder <= 1; ++coder) {
      factz_options o;
      factz_options_init(&o);
      o.mode = mode;
      o.coder = coder;
      o.bound_mode = FACTZ_BOUND_ABS;
      o.bound = 0.0;
      o.zstd = 0;
      size_t size = 0;
      CHECK(factz_compress3d_f64(f.u, f.v, f.w, NX, NY, NZ, &o, buf, g_cap, &size) == FACTZ_OK);
      CHECK(size <= g_cap);
      CHECK(factz_decompress3d_f64(buf, size, r.u, r.v, r.w, NX, NY, NZ, NULL) == FACTZ_OK);
      CHECK(memcmp(r.u, f.u, N * sizeof(double)) == 0 && memcmp(r.w, f.w, N * sizeof(double)) == 0);
    }
  free_planes64(&r);
  free_planes64(&f);
  free(buf);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FACTZ_CPP_COMPRESS TMP_DIR\n", argv[0]);
    return 2;
  }
  g_cpp = argv[1];
  g_tmp = argv[2];
  g_cap = factz_compress_bound3d(NX, NY, NZ);
  planes64 f = new_planes64();
  abc_field64(f.u, f.v, f.w);
  test_version_and_defaults();
  test_round_trips(&f);
  test_the_cpp_api_bytes(&f);
  test_missing_vertices(&f);
  test_float32_fill_values(&f);
  test_fill_values_of_the_other_type(&f);
  test_decoders_of_the_other_type(&f);
  test_bad_input(&f);
  test_size_bound_on_noise();
  free_planes64(&f);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
