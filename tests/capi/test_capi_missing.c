/* Missing data through the C API (1.2.0): fill values in factz_options, a mask array, NaN;
 * the mask comes back from factz_decompress_masked and missing vertices come back bit for
 * bit in every mode and coder; factz_compare_masked reports masked_vertices and
 * mask_mismatch; programs built against 1.1.0 (smaller factz_options and factz_comparison)
 * keep their behaviour; bad input gives clear statuses. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

enum { NX = 48, NY = 40, N = NX * NY };

/* sizeof(factz_options) and sizeof(factz_comparison) of a program built against 1.1.0. */
#define OPTIONS_SIZE_110 offsetof(factz_options, has_fill_u)
#define COMPARISON_SIZE_110 offsetof(factz_comparison, masked_vertices)

static uint32_t bits_of(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static float float_of(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* A smooth field with saddles and centers. */
static void analytic_field(float* u, float* v) {
  for (int y = 0; y < NY; ++y)
    for (int x = 0; x < NX; ++x) {
      double fx = 0.23 * (double)x, fy = 0.19 * (double)y;
      u[y * NX + x] = (float)(sin(fx) * cos(fy));
      v[y * NX + x] = (float)(-cos(fx) * sin(fy) + 0.1);
    }
}

/* "Land": a disc and the first two columns, plus scattered single vertices. */
static int is_land(int x, int y) {
  const int dx = x - 30, dy = y - 22;
  return dx * dx + dy * dy < 49 || x < 2 || (x * 7 + y * 13) % 37 == 0;
}

static int64_t count_set(const uint8_t* m, int64_t n) {
  int64_t c = 0;
  for (int64_t k = 0; k < n; ++k) c += m[k] != 0;
  return c;
}

/* Whether every vertex with want[k] != 0 decoded to the bits it had, and mask_out equals want
 * (as 0/1). */
static int missing_bits_and_mask_kept(const float* u, const float* v, const uint8_t* want, const float* u2,
                                      const float* v2, const uint8_t* mask_out) {
  for (int k = 0; k < N; ++k) {
    if (mask_out[k] != (want[k] != 0)) return 0;
    if (want[k] && (bits_of(u[k]) != bits_of(u2[k]) || bits_of(v[k]) != bits_of(v2[k]))) return 0;
  }
  return 1;
}

/* Compresses with options (and mask), decompresses with the mask, checks the mask, the bits
 * of the missing vertices, the bound on the valid ones and the critical points; returns the
 * stream (caller frees) and its size. */
static unsigned char* masked_round_trip(const float* u, const float* v, const uint8_t* mask, const uint8_t* want,
                                        const factz_options* o, size_t* size) {
  size_t cap = factz_compress_bound(NX, NY);
  unsigned char* buf = (unsigned char*)malloc(cap);
  float u2[N], v2[N];
  uint8_t got[N];
  memset(got, 0xEE, sizeof got);
  *size = 0;
  CHECK(factz_compress_masked(u, v, mask, NX, NY, o, buf, cap, size) == FACTZ_OK);
  CHECK(factz_decompress_masked(buf, *size, u2, v2, got, NX, NY, o) == FACTZ_OK);
  CHECK(missing_bits_and_mask_kept(u, v, want, u2, v2, got));
  factz_comparison c;
  memset(&c, 0xAB, sizeof c);
  CHECK(factz_compare_masked(u, v, mask, u2, v2, got, NX, NY, o, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == count_set(want, N));
  CHECK(c.mask_mismatch == 0);
  CHECK(c.cp_original > 0);
  if (o->mode != FACTZ_MODE_NONE) CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
  CHECK(c.max_abs_error_u <= o->bound * c.value_range && c.max_abs_error_v <= o->bound * c.value_range);
  CHECK(c.value_range > 0 && c.value_range < 3); /* the valid range, not the fill value's */
  return buf;
}

static void test_defaults_and_version(void) {
  factz_options o;
  memset(&o, 0xAB, sizeof o);
  factz_options_init(&o);
  CHECK(o.struct_size == sizeof(factz_options));
  CHECK(o.has_fill_u == 0 && o.has_fill_v == 0);
  CHECK(o.fill_u == 0.0f && o.fill_v == 0.0f);
  CHECK(FACTZ_C_API_VERSION >= 10200 && factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(FACTZ_FORMAT_VERSION >= 3); /* masked streams are version 3 */
  /* factz_options_init_sized with a 1.1.0 size writes nothing past device */
  factz_options old;
  memset(&old, 0xAB, sizeof old);
  factz_options_init_sized(&old, OPTIONS_SIZE_110);
  CHECK(old.struct_size == OPTIONS_SIZE_110 && old.device == 0);
  CHECK(old.has_fill_u == (int)0xABABABABu && bits_of(old.fill_u) == 0xABABABABu);
}

/* A fill value in both components (a netCDF _FillValue), in every mode and coder: the
 * filled vertices are missing, come back as the fill value and in the mask, and the stream
 * is the one of the same field with that mask given as an array. */
static void test_fill_value_in_every_mode(void) {
  float u[N], v[N];
  uint8_t land[N];
  analytic_field(u, v);
  for (int y = 0; y < NY; ++y)
    for (int x = 0; x < NX; ++x) {
      land[y * NX + x] = (uint8_t)is_land(x, y);
      if (land[y * NX + x]) u[y * NX + x] = v[y * NX + x] = 1e20f;
    }
  CHECK(count_set(land, N) > 150);
  for (int mode = 0; mode <= 2; ++mode)
    for (int coder = 0; coder <= 1; ++coder) {
      factz_options o;
      factz_options_init(&o);
      o.mode = mode;
      o.coder = coder;
      o.has_fill_u = o.has_fill_v = 1;
      o.fill_u = o.fill_v = 1e20f;
      size_t with_fill = 0, with_mask = 0, plain = 0;
      unsigned char* a = masked_round_trip(u, v, NULL, land, &o, &with_fill);
      factz_options no_fill;
      factz_options_init(&no_fill);
      no_fill.mode = mode;
      no_fill.coder = coder;
      unsigned char* b = masked_round_trip(u, v, land, land, &no_fill, &with_mask);
      CHECK(with_fill == with_mask && with_fill > 0 && memcmp(a, b, with_fill) == 0);
      /* factz_compress reads the same fill values: the same stream */
      CHECK(factz_compress(u, v, NX, NY, &o, b, factz_compress_bound(NX, NY), &plain) == FACTZ_OK);
      CHECK(plain == with_fill && memcmp(a, b, plain) == 0);
      /* the stream is self-describing: factz_decompress (no mask) gives the same planes */
      float u2[N], v2[N];
      CHECK(factz_decompress(a, with_fill, u2, v2, NX, NY, 0) == FACTZ_OK);
      for (int k = 0; k < N; ++k)
        if (land[k]) CHECK(u2[k] == 1e20f && v2[k] == 1e20f);
      free(a);
      free(b);
    }
}

/* Undeclared, the fill value is data: the mask comes back empty and the error bound is
 * relative to a range of 1e20 (nothing like the bound on the valid vertices). */
static void test_undeclared_fill_value_is_data(void) {
  float u[N], v[N], u2[N], v2[N];
  uint8_t got[N];
  analytic_field(u, v);
  u[5] = v[5] = 1e20f;
  factz_options o;
  factz_options_init(&o);
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
  memset(got, 7, sizeof got);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK);
  CHECK(count_set(got, N) == 0);
  factz_comparison c;
  CHECK(factz_compare(u, v, u2, v2, NX, NY, 0, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == 0 && c.value_range > 1e19);
  free(buf);
}

/* Separate fill values per component: u's marks a vertex even where v is valid. */
static void test_fill_value_per_component(void) {
  float u[N], v[N];
  uint8_t want[N];
  analytic_field(u, v);
  memset(want, 0, sizeof want);
  for (int k = 3; k < N; k += 41) {
    u[k] = -9999.0f;
    want[k] = 1;
  }
  for (int k = 7; k < N; k += 53) {
    v[k] = -1e30f;
    want[k] = 1;
  }
  factz_options o;
  factz_options_init(&o);
  o.has_fill_u = 1;
  o.fill_u = -9999.0f;
  o.has_fill_v = 1;
  o.fill_v = -1e30f;
  size_t size = 0;
  free(masked_round_trip(u, v, NULL, want, &o, &size));
  /* u's fill value is not v's: -9999 in v is data */
  v[100] = -9999.0f;
  want[100] = 0;
  o.bound_mode = FACTZ_BOUND_ABS;
  o.bound = 1e-3;
  size_t cap = factz_compress_bound(NX, NY);
  unsigned char* buf = (unsigned char*)malloc(cap);
  float u2[N], v2[N];
  uint8_t got[N];
  CHECK(factz_compress(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, &o) == FACTZ_OK);
  CHECK(got[100] == 0 && fabsf(v2[100] + 9999.0f) <= 1e-3f);
  CHECK(missing_bits_and_mask_kept(u, v, want, u2, v2, got));
  free(buf);
}

/* A mask array: whatever lies under it (infinity, huge values, NaN) is stored bit for bit;
 * nonzero bytes other than 1 count as missing and come back as 1. */
static void test_mask_array(void) {
  float u[N], v[N];
  uint8_t mask[N], want[N];
  analytic_field(u, v);
  for (int k = 0; k < N; ++k) {
    want[k] = (uint8_t)(k % 11 == 0 || (k / NX > 30 && k % NX > 35));
    mask[k] = want[k] ? (uint8_t)(1 + k % 200) : 0;
  }
  u[0] = INFINITY;
  v[0] = -INFINITY;
  u[11] = 3e38f;
  v[22] = float_of(0x7F800001u); /* a signalling NaN payload */
  u[33] = float_of(0x80000000u); /* -0 */
  for (int mode = 0; mode <= 2; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    size_t size = 0;
    free(masked_round_trip(u, v, mask, want, &o, &size));
  }
  /* without the mask, infinity at a valid vertex is an error */
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress_masked(u, v, NULL, NX, NY, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  free(buf);
}

/* NaN marks a vertex missing without any declaration; its payload survives. */
static void test_nan_payloads(void) {
  float u[N], v[N];
  uint8_t want[N];
  analytic_field(u, v);
  memset(want, 0, sizeof want);
  const uint32_t payloads[] = {0x7FC00000u, 0x7FC12345u, 0xFFC00001u, 0x7FA00000u};
  for (int j = 0; j < 4; ++j) {
    const int k = 100 + 97 * j;
    if (j % 2) u[k] = float_of(payloads[j]);
    else v[k] = float_of(payloads[j]);
    want[k] = 1;
  }
  for (int mode = 0; mode <= 2; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    size_t size = 0;
    unsigned char* buf = masked_round_trip(u, v, NULL, want, &o, &size);
    float u2[N], v2[N];
    CHECK(factz_decompress(buf, size, u2, v2, NX, NY, 1) == FACTZ_OK);
    for (int j = 0; j < 4; ++j) {
      const int k = 100 + 97 * j;
      CHECK(bits_of(j % 2 ? u2[k] : v2[k]) == payloads[j]);
    }
    /* the plain factz_compare finds NaN on its own (the 1.2.0 members are written) */
    factz_comparison c;
    memset(&c, 0xAB, sizeof c);
    CHECK(factz_compare(u, v, u2, v2, NX, NY, 0, &c) == FACTZ_OK);
    CHECK(c.masked_vertices == 4 && c.mask_mismatch == 0);
    free(buf);
  }
}

/* Infinity may be a declared fill value; undeclared it is an error. */
static void test_infinite_fill_value(void) {
  float u[N], v[N];
  uint8_t want[N];
  analytic_field(u, v);
  memset(want, 0, sizeof want);
  for (int k = 0; k < N; k += 17) {
    u[k] = v[k] = INFINITY;
    want[k] = 1;
  }
  factz_options o;
  factz_options_init(&o);
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite value") != NULL);
  o.has_fill_u = o.has_fill_v = 1;
  o.fill_u = o.fill_v = INFINITY;
  free(masked_round_trip(u, v, NULL, want, &o, &size));
  u[20] = -INFINITY; /* not the fill value */
  CHECK(factz_compress(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "first at x=20 y=0") != NULL);
  /* a NaN fill value declares nothing more than NaN does */
  u[20] = 0.5f;
  o.fill_u = o.fill_v = NAN;
  CHECK(factz_compress(u, v, NX, NY, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  free(buf);
}

/* Every vertex missing, and one valid vertex: round trips, no critical point, no error. */
static void test_all_missing_and_one_valid(void) {
  float u[N], v[N];
  uint8_t want[N];
  analytic_field(u, v);
  memset(want, 1, sizeof want);
  for (int valid = 0; valid <= 1; ++valid) {
    if (valid) want[N / 2] = 0;
    for (int mode = 0; mode <= 2; ++mode) {
      factz_options o;
      factz_options_init(&o);
      o.mode = mode;
      size_t cap = factz_compress_bound(NX, NY), size = 0;
      unsigned char* buf = (unsigned char*)malloc(cap);
      float u2[N], v2[N];
      uint8_t got[N];
      CHECK(factz_compress_masked(u, v, want, NX, NY, &o, buf, cap, &size) == FACTZ_OK);
      CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, &o) == FACTZ_OK);
      CHECK(missing_bits_and_mask_kept(u, v, want, u2, v2, got));
      if (valid) { /* REL: 1e-2 of the one valid vertex's range, |u - v| */
        const float eb = 1e-2f * fabsf(u[N / 2] - v[N / 2]);
        CHECK(fabsf(u2[N / 2] - u[N / 2]) <= eb && fabsf(v2[N / 2] - v[N / 2]) <= eb);
      }
      int64_t cps = -1;
      CHECK(factz_count_critical_points_masked(u2, v2, got, NX, NY, &o, &cps) == FACTZ_OK && cps == 0);
      factz_comparison c;
      CHECK(factz_compare_masked(u, v, want, u2, v2, got, NX, NY, &o, &c) == FACTZ_OK);
      CHECK(c.masked_vertices == N - valid && c.mask_mismatch == 0 && c.cp_original == 0);
      free(buf);
    }
  }
}

/* Critical points live only on triangles with three valid vertices; a mask and NaN at the
 * same vertices give the same count. */
static void test_critical_points_with_a_mask(void) {
  float u[N], v[N], un[N], vn[N];
  uint8_t mask[N];
  analytic_field(u, v);
  memcpy(un, u, sizeof u);
  memcpy(vn, v, sizeof v);
  for (int k = 0; k < N; ++k) {
    mask[k] = (uint8_t)(k % NX < NX / 2);
    if (mask[k]) un[k] = NAN;
  }
  int64_t all = -1, masked = -1, nan = -1;
  CHECK(factz_count_critical_points(u, v, NX, NY, 0, &all) == FACTZ_OK);
  CHECK(factz_count_critical_points_masked(u, v, mask, NX, NY, NULL, &masked) == FACTZ_OK);
  CHECK(factz_count_critical_points(un, vn, NX, NY, 0, &nan) == FACTZ_OK);
  CHECK(all > 4 && masked > 0 && masked < all && nan == masked);
  /* a fill value declared in options masks the same vertices */
  factz_options o;
  factz_options_init(&o);
  o.has_fill_u = 1;
  o.fill_u = -5.0f;
  for (int k = 0; k < N; ++k)
    if (mask[k]) un[k] = -5.0f;
  int64_t filled = -1;
  CHECK(factz_count_critical_points_masked(un, vn, NULL, NX, NY, &o, &filled) == FACTZ_OK && filled == masked);
}

/* A vertex missing in one field only is a mask mismatch: the reconstruction read back
 * without its mask, and a mask given for one side only. */
static void test_mask_mismatch(void) {
  float u[N], v[N], u2[N], v2[N];
  uint8_t mask[N], got[N];
  analytic_field(u, v);
  for (int k = 0; k < N; ++k) mask[k] = (uint8_t)(k % 29 == 3);
  const int64_t missing = count_set(mask, N);
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress_masked(u, v, mask, NX, NY, NULL, buf, cap, &size) == FACTZ_OK);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK);
  factz_comparison c;
  CHECK(factz_compare_masked(u, v, mask, u2, v2, NULL, NX, NY, NULL, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == missing && c.mask_mismatch == missing);
  CHECK(factz_compare_masked(u, v, NULL, u2, v2, got, NX, NY, NULL, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == 0 && c.mask_mismatch == missing);
  CHECK(factz_compare_masked(u, v, mask, u2, v2, got, NX, NY, NULL, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == missing && c.mask_mismatch == 0);
  free(buf);
}

/* Programs built against 1.1.0: their factz_options ends at device, so fill values beyond
 * it are not read; the old factz_compare writes only the 1.1.0 members of factz_comparison. */
static void test_programs_built_against_110(void) {
  float u[N], v[N], u2[N], v2[N];
  analytic_field(u, v);
  u[40] = v[40] = 1e20f;
  size_t cap = factz_compress_bound(NX, NY), size = 0, ref = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  unsigned char* plain = (unsigned char*)malloc(cap);
  CHECK(factz_compress(u, v, NX, NY, NULL, plain, cap, &ref) == FACTZ_OK);
  factz_options old;
  factz_options_init(&old);
  old.has_fill_u = old.has_fill_v = 1; /* beyond its struct: not read */
  old.fill_u = old.fill_v = 1e20f;
  old.struct_size = OPTIONS_SIZE_110;
  CHECK(factz_compress(u, v, NX, NY, &old, buf, cap, &size) == FACTZ_OK);
  CHECK(size == ref && memcmp(buf, plain, size) == 0);
  old.struct_size = sizeof old; /* the same options read whole: the fill value counts */
  CHECK(factz_compress(u, v, NX, NY, &old, buf, cap, &size) == FACTZ_OK);
  CHECK(!(size == ref && memcmp(buf, plain, size) == 0));

  uint8_t got[N];
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK);
  CHECK(count_set(got, N) == 1 && got[40] == 1);
  factz_comparison c;
  memset(&c, 0xAB, sizeof c);
  CHECK((factz_compare)(u, v, u2, v2, NX, NY, 0, &c) == FACTZ_OK); /* the 1.1.0 symbol */
  CHECK(c.cp_original > 0 && c.value_range > 0);
  CHECK((uint64_t)c.masked_vertices == 0xABABABABABABABABull && (uint64_t)c.mask_mismatch == 0xABABABABABABABABull);
  memset(&c, 0xAB, sizeof c);
  CHECK(factz_compare_sized(u, v, u2, v2, NX, NY, 0, &c, COMPARISON_SIZE_110) == FACTZ_OK);
  CHECK((uint64_t)c.masked_vertices == 0xABABABABABABABABull);
  CHECK(factz_compare(u, v, u2, v2, NX, NY, 0, &c) == FACTZ_OK); /* the macro: all members */
  CHECK(c.masked_vertices == 0 && c.mask_mismatch == 0);
  CHECK(factz_compare_masked(u, v, NULL, u2, v2, got, NX, NY, &old, &c) == FACTZ_OK);
  CHECK(c.masked_vertices == 1 && c.mask_mismatch == 0);
  CHECK(factz_compare_sized(u, v, u2, v2, NX, NY, 0, &c, COMPARISON_SIZE_110 - 8) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_comparison") != NULL);
  free(buf);
  free(plain);
}

/* Null pointers and bad options: clear statuses, nothing written. */
static void test_bad_input(void) {
  float u[N], v[N], u2[N], v2[N];
  uint8_t mask[N], got[N];
  analytic_field(u, v);
  memset(mask, 0, sizeof mask);
  mask[9] = 1;
  size_t cap = factz_compress_bound(NX, NY), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  factz_options o;
  factz_options_init(&o);
  CHECK(factz_compress_masked(NULL, v, mask, NX, NY, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "null field plane") != NULL);
  CHECK(factz_compress_masked(u, v, mask, NX, NY, &o, buf, cap, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress_masked(u, v, mask, 0, NY, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  factz_options bad = o;
  bad.struct_size = 8;
  CHECK(factz_compress_masked(u, v, mask, NX, NY, &bad, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_options_init") != NULL);
  size_t needed = 0; /* a size query works with a mask too */
  CHECK(factz_compress_masked(u, v, mask, NX, NY, &o, NULL, 0, &needed) == FACTZ_BUFFER_TOO_SMALL && needed > 0);
  CHECK(factz_compress_masked(u, v, mask, NX, NY, &o, buf, cap, &size) == FACTZ_OK && size == needed);

  CHECK(factz_decompress_masked(buf, size, NULL, v2, got, NX, NY, &o) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX + 1, NY, &o) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "48x40") != NULL);
  CHECK(factz_decompress_masked(NULL, size, u2, v2, got, NX, NY, &o) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, &bad) == FACTZ_INVALID_ARGUMENT);
  bad = o;
  bad.policy = 9;
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, &bad) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "policy") != NULL);
  /* a corrupted masked stream: refused, whatever byte changes */
  int refused = 0;
  for (size_t k = 0; k < size; ++k) {
    buf[k] ^= 0x21;
    const factz_status s = factz_decompress_masked(buf, size, u2, v2, got, NX, NY, NULL);
    refused += s == FACTZ_CORRUPT_STREAM || s == FACTZ_UNSUPPORTED_VERSION || s == FACTZ_INVALID_ARGUMENT;
    buf[k] ^= 0x21;
  }
  CHECK(refused == (int)size);
  CHECK(factz_decompress_masked(buf, size, u2, v2, got, NX, NY, NULL) == FACTZ_OK && got[9] == 1);
  /* NULL mask_out: factz_decompress_with_options */
  CHECK(factz_decompress_masked(buf, size, u2, v2, NULL, NX, NY, NULL) == FACTZ_OK);

  factz_comparison c;
  CHECK(factz_compare_masked(u, v, mask, u2, v2, NULL, NX, NY, &o, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare_masked(u, v, mask, NULL, v2, NULL, NX, NY, &o, &c) == FACTZ_INVALID_ARGUMENT);
  bad = o;
  bad.threads = -1;
  CHECK(factz_compare_masked(u, v, mask, u2, v2, got, NX, NY, &bad, &c) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "threads") != NULL);
  int64_t count = 0;
  CHECK(factz_count_critical_points_masked(u, v, mask, NX, NY, &o, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_count_critical_points_masked(u, NULL, mask, NX, NY, &o, &count) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_count_critical_points_masked(u, v, mask, NX, NY, &bad, &count) == FACTZ_INVALID_ARGUMENT);
  free(buf);
}

int main(void) {
  test_defaults_and_version();
  test_fill_value_in_every_mode();
  test_undeclared_fill_value_is_data();
  test_fill_value_per_component();
  test_mask_array();
  test_nan_payloads();
  test_infinite_fill_value();
  test_all_missing_and_one_valid();
  test_critical_points_with_a_mask();
  test_mask_mismatch();
  test_programs_built_against_110();
  test_bad_input();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
