/* 3D vector fields through the C API (1.5.0), from a C program: round trips with zero
 * violations and the bound held, the C++ API's bytes, bytes independent of the thread
 * count, the modes and policies as the library decides them, bad input, a 2D stream given
 * to the 3D functions and the reverse, damaged streams, and the size bound.
 * Usage: factz_capi3d_tests FACTZ_CPP_COMPRESS TMP_DIR (the first is
 * tests/capi/cpp_compress.cpp: factz::compress of the C++ API). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

static const char* g_cpp = NULL;
static const char* g_tmp = NULL;

/* An ABC flow over two periods plus a slow shear, so that critical points of several types
 * lie inside the grid: u = sin(z) + cos(y), v = sin(x) + cos(z), w = sin(y) + cos(x) + 0.05 z. */
static void abc_field(int64_t nx, int64_t ny, int64_t nz, float* u, float* v, float* w) {
  const double k = 4.0 * 3.14159265358979 / 24.0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t i = (z * ny + y) * nx + x;
        const double fx = k * (double)x, fy = k * (double)y + 0.3, fz = k * (double)z + 0.7;
        u[i] = (float)(sin(fz) + cos(fy));
        v[i] = (float)(sin(fx) + cos(fz));
        w[i] = (float)(sin(fy) + cos(fx) + 0.05 * (double)z);
      }
}

typedef struct {
  int64_t nx, ny, nz, n;
  float *u, *v, *w;
} field3d;

static field3d make_field(int64_t nx, int64_t ny, int64_t nz) {
  field3d f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.n = nx * ny * nz;
  f.u = (float*)malloc((size_t)f.n * sizeof(float));
  f.v = (float*)malloc((size_t)f.n * sizeof(float));
  f.w = (float*)malloc((size_t)f.n * sizeof(float));
  CHECK(f.u && f.v && f.w);
  if (f.u && f.v && f.w) abc_field(nx, ny, nz, f.u, f.v, f.w);
  return f;
}

static void free_field(field3d* f) {
  free(f->u);
  free(f->v);
  free(f->w);
}

/* Compresses into a new buffer of factz_compress_bound3d bytes; *size gets the stream size. */
static unsigned char* compress_new(const field3d* f, const factz_options* o, factz_status* st, size_t* size) {
  size_t cap = factz_compress_bound3d(f->nx, f->ny, f->nz);
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(buf != NULL && cap > 0);
  *size = 0;
  *st = factz_compress3d(f->u, f->v, f->w, f->nx, f->ny, f->nz, o, buf, cap, size);
  if (*st == FACTZ_OK) CHECK(*size <= cap);
  return buf;
}

/* Decompresses the stream and compares with the original; FACTZ_OK when every step is. */
static factz_status round_trip_compare(const field3d* f, const unsigned char* buf, size_t size,
                                       factz_comparison3d* c) {
  field3d r = *f;
  r.u = (float*)malloc((size_t)f->n * sizeof(float));
  r.v = (float*)malloc((size_t)f->n * sizeof(float));
  r.w = (float*)malloc((size_t)f->n * sizeof(float));
  int64_t sx = 0, sy = 0, sz = 0;
  factz_status st = factz_stream_dims3d(buf, size, &sx, &sy, &sz);
  CHECK(st == FACTZ_OK && sx == f->nx && sy == f->ny && sz == f->nz);
  if (st == FACTZ_OK) st = factz_decompress3d(buf, size, r.u, r.v, r.w, f->nx, f->ny, f->nz, NULL);
  CHECK(st == FACTZ_OK);
  if (st == FACTZ_OK) st = factz_compare3d(f->u, f->v, f->w, r.u, r.v, r.w, f->nx, f->ny, f->nz, NULL, c);
  CHECK(st == FACTZ_OK);
  free_field(&r);
  return st;
}

static void test_versions_and_bound(void) {
  CHECK(FACTZ_C_API_VERSION >= 10600 && factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(FACTZ_FORMAT_VERSION == 13);
  CHECK(factz_compress_bound3d(0, 4, 4) == 0);
  CHECK(factz_compress_bound3d(4, -1, 4) == 0);
  CHECK(factz_compress_bound3d(4, 4, 0) == 0);
  CHECK(factz_compress_bound3d((int64_t)1 << 20, (int64_t)1 << 20, 2) == 0); /* 2^41 vertices */
  CHECK(factz_compress_bound3d(10, 10, 10) > 1000 * 12);
  CHECK(sizeof(factz_comparison3d) == 112);
}

/* Speculative mode at REL 1e-2 and 1e-3, both coders, with and without zstd: zero
 * violations, the bound held, the critical point count of factz_count_critical_points3d,
 * the same bytes for 1 and 2 threads. */
static void test_round_trips_keep_every_critical_point(void) {
  field3d f = make_field(30, 26, 22);
  int64_t cps = -1;
  CHECK(factz_count_critical_points3d(f.u, f.v, f.w, f.nx, f.ny, f.nz, NULL, &cps) == FACTZ_OK);
  CHECK(cps >= 4);
  const double bounds[] = {1e-2, 1e-3};
  for (int b = 0; b < 2; ++b)
    for (int coder = 0; coder <= 1; ++coder)
      for (int zstd = 0; zstd <= 1; ++zstd) {
        factz_options o;
        factz_options_init(&o);
        o.mode = FACTZ_MODE_SPECULATIVE;
        o.coder = coder;
        o.bound = bounds[b];
        o.zstd = zstd;
        o.threads = 1;
        factz_status st;
        size_t size = 0;
        unsigned char* a = compress_new(&f, &o, &st, &size);
        CHECK(st == FACTZ_OK && size > 0 && size < (size_t)f.n * 12);
        factz_comparison3d c;
        if (st == FACTZ_OK && round_trip_compare(&f, a, size, &c) == FACTZ_OK) {
          CHECK(c.cp_original == cps && c.cp_decompressed == cps);
          CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0 && c.mask_mismatch == 0);
          const double eb = bounds[b] * c.value_range;
          CHECK(c.max_abs_error_u <= eb && c.max_abs_error_v <= eb && c.max_abs_error_w <= eb);
          CHECK(c.masked_vertices == 0 && c.value_range > 1);
        }
        o.threads = 2;
        size_t size2 = 0;
        unsigned char* b2 = compress_new(&f, &o, &st, &size2);
        CHECK(st == FACTZ_OK && size2 == size && memcmp(a, b2, size) == 0);
        free(a);
        free(b2);
      }
  free_field(&f);
}

static int write_file(const char* path, const void* data, size_t bytes) {
  FILE* out = fopen(path, "wb");
  if (!out) return 0;
  const size_t wrote = fwrite(data, 1, bytes, out);
  return fclose(out) == 0 && wrote == bytes;
}

/* factz_compress3d writes the bytes of factz::compress(const VectorField3D&, ...). */
static void test_the_cpp_api_bytes(void) {
  field3d f = make_field(20, 17, 13);
  char pu[1024], pv[1024], pw[1024], out[1024], cmd[8192];
  snprintf(pu, sizeof pu, "%s/capi3d_u.f32", g_tmp);
  snprintf(pv, sizeof pv, "%s/capi3d_v.f32", g_tmp);
  snprintf(pw, sizeof pw, "%s/capi3d_w.f32", g_tmp);
  snprintf(out, sizeof out, "%s/capi3d_cpp.fz", g_tmp);
  const size_t bytes = (size_t)f.n * sizeof(float);
  CHECK(write_file(pu, f.u, bytes) && write_file(pv, f.v, bytes) && write_file(pw, f.w, bytes));
  for (int coder = 0; coder <= 1; ++coder) {
    snprintf(cmd, sizeof cmd, "'%s' 3d 20 17 13 '%s' '%s' '%s' '%s' speculative %s abs 0.05 1 8", g_cpp, pu, pv, pw,
             out, coder == FACTZ_CODER_ANS ? "ans" : "huffman");
    CHECK(system(cmd) == 0);
    factz_options o;
    factz_options_init(&o);
    o.coder = coder;
    o.bound_mode = FACTZ_BOUND_ABS;
    o.bound = 0.05;
    o.anchor_stride = 8;
    factz_status st;
    size_t size = 0;
    unsigned char* mine = compress_new(&f, &o, &st, &size);
    CHECK(st == FACTZ_OK);
    size_t cap = factz_compress_bound3d(f.nx, f.ny, f.nz);
    unsigned char* theirs = (unsigned char*)malloc(cap);
    FILE* in = fopen(out, "rb");
    CHECK(in != NULL && theirs != NULL);
    size_t got = in && theirs ? fread(theirs, 1, cap, in) : 0;
    if (in) fclose(in);
    CHECK(got == size && memcmp(mine, theirs, size) == 0);
    free(mine);
    free(theirs);
  }
  remove(pu);
  remove(pv);
  remove(pw);
  remove(out);
  free_field(&f);
}

/* Modes none and block and policy cuda are the library's decision: either a stream that
 * keeps its promises, or an error with a message (never a silent fallback). */
static void test_modes_and_policies_as_the_library_decides(void) {
  field3d f = make_field(18, 14, 12);
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_BLOCK; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    factz_status st;
    size_t size = 0;
    unsigned char* buf = compress_new(&f, &o, &st, &size);
    CHECK(st == FACTZ_OK || st == FACTZ_INVALID_ARGUMENT);
    if (st != FACTZ_OK) {
      CHECK(strstr(factz_last_error(), "invalid_argument: ") == factz_last_error());
    } else {
      factz_comparison3d c;
      if (round_trip_compare(&f, buf, size, &c) == FACTZ_OK) {
        const double eb = 1e-2 * c.value_range;
        CHECK(c.max_abs_error_u <= eb && c.max_abs_error_v <= eb && c.max_abs_error_w <= eb);
        if (mode == FACTZ_MODE_BLOCK) CHECK(c.lost + c.spurious + c.type_changed == 0);
      }
    }
    free(buf);
  }
  factz_options o;
  factz_options_init(&o);
  o.policy = FACTZ_POLICY_CUDA;
  factz_status st;
  size_t size = 0;
  unsigned char* buf = compress_new(&f, &o, &st, &size);
  CHECK(st == FACTZ_OK || st == FACTZ_BACKEND_UNAVAILABLE);
  if (st == FACTZ_BACKEND_UNAVAILABLE) CHECK(strstr(factz_last_error(), "backend_unavailable") != NULL);
  free(buf);
  /* decoding under policy cuda: the same rule */
  factz_options_init(&o);
  buf = compress_new(&f, &o, &st, &size);
  CHECK(st == FACTZ_OK);
  float* out = (float*)malloc((size_t)(3 * f.n) * sizeof(float));
  o.policy = FACTZ_POLICY_CUDA;
  st = factz_decompress3d(buf, size, out, out + f.n, out + 2 * f.n, f.nx, f.ny, f.nz, &o);
  CHECK(st == FACTZ_OK || st == FACTZ_BACKEND_UNAVAILABLE);
  o.policy = FACTZ_POLICY_SERIAL;
  CHECK(factz_decompress3d(buf, size, out, out + f.n, out + 2 * f.n, f.nx, f.ny, f.nz, &o) == FACTZ_OK);
  free(out);
  free(buf);
  free_field(&f);
}

/* Null pointers, empty grids, a short buffer, fill values, NaN and infinity, bad options. */
static void test_bad_input(void) {
  field3d f = make_field(9, 8, 7);
  size_t cap = factz_compress_bound3d(f.nx, f.ny, f.nz), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  CHECK(factz_compress3d(NULL, f.v, f.w, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "null field plane") != NULL);
  CHECK(factz_compress3d(f.u, f.v, NULL, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, cap, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, NULL, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 0, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "9x8x0") != NULL);
  CHECK(factz_compress3d(f.u, f.v, f.w, -9, 8, 7, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  /* too small a buffer: the size needed, then success with exactly that */
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, 10, &size) == FACTZ_BUFFER_TOO_SMALL);
  CHECK(size > 10 && size <= cap);
  size_t need = size;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, need, &size) == FACTZ_OK && size == need);
  factz_options o;
  factz_options_init(&o);
  o.mode = 7;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.bound = -1.0;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.struct_size = 8;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  /* fill values (read since 1.8.0, tests/capi/test_capi3d_f64.c): a float64 one is refused by
     the float32 functions */
  factz_options_init(&o);
  o.has_fill_u64 = 1;
  o.fill_u64 = 1e20;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "fill values") != NULL);
  int64_t count = 0;
  CHECK(factz_count_critical_points3d(f.u, f.v, f.w, 9, 8, 7, &o, &count) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.has_fill_v64 = 1;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  /* NaN: a missing vertex (format version 12), whose bits come back; infinity: never valid */
  const float keep = f.v[100];
  f.v[100] = NAN;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_OK);
  /* version 18 (the compact container) around the sections of version 12 */
  CHECK(size > 6 && ((const uint8_t*)buf)[4] == 18 && ((const uint8_t*)buf)[5] == 0 && ((const uint8_t*)buf)[6] == 12);
  {
    float* back = (float*)malloc(3 * (size_t)f.n * sizeof(float));
    CHECK(factz_decompress3d(buf, size, back, back + f.n, back + 2 * f.n, 9, 8, 7, NULL) == FACTZ_OK);
    CHECK(memcmp(&back[f.n + 100], &f.v[100], sizeof(float)) == 0);
    /* a caller's mask: its vertices come back bit for bit, the mask with them */
    uint8_t* mask = (uint8_t*)calloc((size_t)f.n, 1);
    uint8_t* mask_out = (uint8_t*)malloc((size_t)f.n);
    mask[7] = mask[200] = 1;
    const float held = f.w[200];
    f.w[200] = 1e20f;
    CHECK(factz_compress3d_masked(f.u, f.v, f.w, mask, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_OK);
    CHECK(factz_decompress3d_masked(buf, size, back, back + f.n, back + 2 * f.n, mask_out, 9, 8, 7, NULL) ==
          FACTZ_OK);
    CHECK(mask_out[7] == 1 && mask_out[200] == 1 && mask_out[100] == 1 && mask_out[0] == 0);
    CHECK(back[2 * f.n + 200] == 1e20f && memcmp(&back[7], &f.u[7], sizeof(float)) == 0);
    f.w[200] = held;
    free(mask);
    free(mask_out);
    free(back);
  }
  f.v[100] = INFINITY;
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  f.v[100] = keep;
  /* the analysis calls */
  CHECK(factz_count_critical_points3d(f.u, f.v, f.w, 9, 8, 7, NULL, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_count_critical_points3d(f.u, NULL, f.w, 9, 8, 7, NULL, &count) == FACTZ_INVALID_ARGUMENT);
  factz_comparison3d c;
  CHECK(factz_compare3d(f.u, f.v, f.w, f.u, f.v, f.w, 9, 8, 7, NULL, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d_sized(f.u, f.v, f.w, f.u, f.v, f.w, 9, 8, 7, NULL, &c, 64) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d(f.u, f.v, f.w, f.u, NULL, f.w, 9, 8, 7, NULL, &c) == FACTZ_INVALID_ARGUMENT);
  factz_options_init(&o);
  o.threads = -1;
  CHECK(factz_compare3d(f.u, f.v, f.w, f.u, f.v, f.w, 9, 8, 7, &o, &c) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compare3d(f.u, f.v, f.w, f.u, f.v, f.w, 9, 8, 7, NULL, &c) == FACTZ_OK);
  CHECK(c.lost + c.spurious + c.type_changed + c.mask_mismatch == 0 && c.max_abs_error_w == 0 && isinf(c.psnr));
  /* a NaN marks a missing vertex in the analysis, as in 2D */
  float* w2 = (float*)malloc((size_t)f.n * sizeof(float));
  memcpy(w2, f.w, (size_t)f.n * sizeof(float));
  w2[5] = NAN;
  CHECK(factz_compare3d(f.u, f.v, f.w, f.u, f.v, w2, 9, 8, 7, NULL, &c) == FACTZ_OK);
  CHECK(c.mask_mismatch == 1 && c.masked_vertices == 0);
  free(w2);
  /* the decoder */
  CHECK(factz_compress3d(f.u, f.v, f.w, 9, 8, 7, NULL, buf, cap, &size) == FACTZ_OK);
  float* out = (float*)malloc((size_t)(3 * f.n) * sizeof(float));
  float *ou = out, *ov = out + f.n, *ow = out + 2 * f.n;
  CHECK(factz_decompress3d(buf, size, ou, ov, NULL, 9, 8, 7, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d(NULL, size, ou, ov, ow, 9, 8, 7, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d(buf, size, ou, ov, ow, 9, 8, 0, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d(buf, size, ou, ov, ow, 9, 7, 8, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "9x8x7") != NULL);
  factz_options_init(&o);
  o.policy = 9;
  CHECK(factz_decompress3d(buf, size, ou, ov, ow, 9, 8, 7, &o) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress3d(buf, size, ou, ov, ow, 9, 8, 7, NULL) == FACTZ_OK);
  CHECK(strcmp(factz_last_error(), "") == 0);
  int64_t sx = 0, sy = 0, sz = 0;
  CHECK(factz_stream_dims3d(buf, size, &sx, NULL, &sz) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_dims3d(NULL, 5, &sx, &sy, &sz) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_stream_dims3d(buf, 0, &sx, &sy, &sz) != FACTZ_OK);
  free(out);
  free(buf);
  free_field(&f);
}

/* A 2D stream given to the 3D functions, and a 3D stream to the 2D ones: the functions to
 * use are named; nothing is decoded. */
static void test_streams_of_the_other_dimensionality(void) {
  const int64_t nx = 20, ny = 16, n = nx * ny;
  float* u = (float*)malloc((size_t)n * sizeof(float));
  float* v = (float*)malloc((size_t)n * sizeof(float));
  double* d = (double*)malloc((size_t)(2 * n) * sizeof(double));
  for (int64_t k = 0; k < n; ++k) {
    u[k] = (float)sin(0.3 * (double)k);
    v[k] = (float)cos(0.2 * (double)k);
    d[k] = u[k];
    d[n + k] = v[k];
  }
  size_t cap2 = factz_compress_bound(nx, ny), size2 = 0, size64 = 0;
  unsigned char* s2 = (unsigned char*)malloc(cap2);
  unsigned char* s64 = (unsigned char*)malloc(cap2);
  CHECK(factz_compress(u, v, nx, ny, NULL, s2, cap2, &size2) == FACTZ_OK);
  CHECK(factz_compress_f64(d, d + n, nx, ny, NULL, s64, cap2, &size64) == FACTZ_OK);
  float* out = (float*)malloc((size_t)(3 * n) * sizeof(float));
  int64_t sx = 0, sy = 0, sz = 0;
  CHECK(factz_stream_dims3d(s2, size2, &sx, &sy, &sz) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "2D float32 vector field (20x16)") != NULL);
  CHECK(strstr(factz_last_error(), "factz_decompress") != NULL);
  CHECK(factz_decompress3d(s2, size2, out, out + n, out + 2 * n, nx, ny, 1, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress ") != NULL);
  CHECK(factz_decompress3d(s64, size64, out, out + n, out + 2 * n, nx, ny, 1, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress_f64") != NULL);

  field3d f = make_field(12, 10, 9);
  factz_status st;
  size_t size3 = 0;
  unsigned char* s3 = compress_new(&f, NULL, &st, &size3);
  CHECK(st == FACTZ_OK);
  factz_dtype t;
  CHECK(factz_stream_dims(s3, size3, &sx, &sy) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "3D vector field (12x10x9)") != NULL);
  CHECK(strstr(factz_last_error(), "factz_stream_dims3d") != NULL);
  CHECK(factz_stream_info(s3, size3, &sx, &sy, &t) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress(s3, size3, out, out + n, 12, 90, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d") != NULL);
  CHECK(factz_decompress_masked(s3, size3, out, out + n, NULL, 12, 90, NULL) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress_f64(s3, size3, d, d + n, 12, 10, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_decompress3d") != NULL);
  free(s3);
  free_field(&f);
  free(out);
  free(s2);
  free(s64);
  free(u);
  free(v);
  free(d);
}

/* Flipped bytes and truncations fail with a stream error (never a crash, never FACTZ_OK). */
static void test_damaged_streams_fail_cleanly(void) {
  field3d f = make_field(16, 12, 10);
  factz_status st;
  size_t size = 0;
  unsigned char* good = compress_new(&f, NULL, &st, &size);
  CHECK(st == FACTZ_OK);
  unsigned char* bad = (unsigned char*)malloc(size);
  float* out = (float*)malloc((size_t)(3 * f.n) * sizeof(float));
  unsigned rng = 12345u;
  for (int trial = 0; trial < 160 && st == FACTZ_OK; ++trial) {
    memcpy(bad, good, size);
    size_t at = trial < 96 ? (size_t)trial : (size_t)((rng = rng * 1103515245u + 12345u) >> 8) % size;
    bad[at] ^= (unsigned char)(1u << (trial % 8));
    factz_status s = factz_decompress3d(bad, size, out, out + f.n, out + 2 * f.n, f.nx, f.ny, f.nz, NULL);
    CHECK(s == FACTZ_CORRUPT_STREAM || s == FACTZ_UNSUPPORTED_VERSION || s == FACTZ_INVALID_ARGUMENT);
    CHECK(strlen(factz_last_error()) > 0);
  }
  const size_t cuts[] = {1, 8, 40, 64, 100};
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; ++k) {
    size_t cut = cuts[k] < size ? cuts[k] : size / 2;
    factz_status s = factz_decompress3d(good, cut, out, out + f.n, out + 2 * f.n, f.nx, f.ny, f.nz, NULL);
    CHECK(s == FACTZ_CORRUPT_STREAM || s == FACTZ_UNSUPPORTED_VERSION);
    int64_t sx, sy, sz;
    CHECK(factz_stream_dims3d(good, cut, &sx, &sy, &sz) != FACTZ_OK);
  }
  factz_status s = factz_decompress3d(good, size - 1, out, out + f.n, out + 2 * f.n, f.nx, f.ny, f.nz, NULL);
  CHECK(s == FACTZ_CORRUPT_STREAM);
  free(out);
  free(bad);
  free(good);
  free_field(&f);
}

/* Noise stored exactly (bound 0) fits in factz_compress_bound3d, in every mode with both
 * coders. */
static void test_compress_bound_holds_on_noise(void) {
  const int64_t nx = 17, ny = 13, nz = 11, n = nx * ny * nz;
  field3d f = make_field(nx, ny, nz);
  unsigned x = 99u;
  for (int64_t k = 0; k < n; ++k) {
    float* planes[3] = {f.u, f.v, f.w};
    for (int c = 0; c < 3; ++c) {
      x = x * 1664525u + 1013904223u;
      unsigned bits = (x & 0x807FFFFFu) | ((96u + (x >> 24) % 64u) << 23); /* finite, many exponents */
      memcpy(&planes[c][k], &bits, sizeof bits);
    }
  }
  for (int mode = FACTZ_MODE_NONE; mode <= FACTZ_MODE_SPECULATIVE; ++mode)
  for (int coder = 0; coder <= 1; ++coder)
    for (int zstd = 0; zstd <= 1; ++zstd) {
      factz_options o;
      factz_options_init(&o);
      o.mode = mode;
      o.coder = coder;
      o.zstd = zstd;
      o.bound = 0.0;
      factz_status st;
      size_t size = 0;
      unsigned char* buf = compress_new(&f, &o, &st, &size);
      CHECK(st == FACTZ_OK && size <= factz_compress_bound3d(nx, ny, nz));
      factz_comparison3d c;
      if (st == FACTZ_OK && round_trip_compare(&f, buf, size, &c) == FACTZ_OK)
        CHECK(c.max_abs_error_u == 0 && c.max_abs_error_v == 0 && c.max_abs_error_w == 0 &&
              c.lost + c.spurious + c.type_changed == 0);
      free(buf);
    }
  free_field(&f);
}

static double g_last_fraction = -1;
static int g_reports = 0;

static void on_progress(const char* stage, double fraction, void* user) {
  (void)user;
  CHECK(stage != NULL && fraction >= g_last_fraction);
  g_last_fraction = fraction;
  ++g_reports;
}

/* The progress callback of factz_options reaches the 3D compressor. */
static void test_progress_reaches_one(void) {
  field3d f = make_field(12, 11, 10);
  factz_options o;
  factz_options_init(&o);
  o.progress = on_progress;
  factz_status st;
  size_t size = 0;
  unsigned char* buf = compress_new(&f, &o, &st, &size);
  CHECK(st == FACTZ_OK && g_reports >= 1 && g_last_fraction == 1.0);
  free(buf);
  free_field(&f);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FACTZ_CPP_COMPRESS TMP_DIR\n", argv[0]);
    return 2;
  }
  g_cpp = argv[1];
  g_tmp = argv[2];
  test_versions_and_bound();
  test_round_trips_keep_every_critical_point();
  test_the_cpp_api_bytes();
  test_modes_and_policies_as_the_library_decides();
  test_bad_input();
  test_streams_of_the_other_dimensionality();
  test_damaged_streams_fail_cleanly();
  test_compress_bound_holds_on_noise();
  test_progress_reaches_one();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
