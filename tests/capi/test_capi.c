/* The C API from a C program: round trips in every mode and coder, the guarantees on a
 * real field, the same bytes as the command line tool, degenerate grids, bad input and the
 * execution policies (FACTZ_POLICY_CUDA without a GPU).
 * Usage: factz_capi_tests FACTZ_CPP_COMPRESS DATA_DIR TMP_DIR (the first is
 * tests/capi/cpp_compress.cpp: factz::compress of the C++ API). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "factz/factz.h"

static const char* g_cpp = NULL;
static const char* g_data = NULL;
static const char* g_tmp = NULL;

/* A smooth field with saddles and centers: u = sin(x) cos(y), v = -cos(x) sin(y) + 0.1. */
static void analytic_field(int64_t nx, int64_t ny, float* u, float* v) {
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      double fx = 0.21 * (double)x, fy = 0.17 * (double)y;
      u[y * nx + x] = (float)(sin(fx) * cos(fy));
      v[y * nx + x] = (float)(-cos(fx) * sin(fy) + 0.1);
    }
}

static float* read_plane(const char* name, int64_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", g_data, name);
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  float* p = (float*)malloc((size_t)n * sizeof(float));
  size_t got = p ? fread(p, sizeof(float), (size_t)n, f) : 0;
  fclose(f);
  if (got != (size_t)n) {
    free(p);
    return NULL;
  }
  return p;
}

/* Compresses, decompresses and compares; returns the stream size (0 on failure). */
static size_t round_trip(const float* u, const float* v, int64_t nx, int64_t ny, const factz_options* o,
                         factz_comparison* cmp) {
  size_t cap = factz_compress_bound(nx, ny), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  float* u2 = (float*)malloc((size_t)(nx * ny) * sizeof(float));
  float* v2 = (float*)malloc((size_t)(nx * ny) * sizeof(float));
  size_t result = 0;
  CHECK(buf && u2 && v2);
  if (buf && u2 && v2 && factz_compress(u, v, nx, ny, o, buf, cap, &size) == FACTZ_OK) {
    int64_t sx = 0, sy = 0;
    CHECK(size <= cap);
    CHECK(factz_stream_dims(buf, size, &sx, &sy) == FACTZ_OK && sx == nx && sy == ny);
    CHECK(factz_decompress(buf, size, u2, v2, nx, ny, 0) == FACTZ_OK);
    CHECK(factz_compare(u, v, u2, v2, nx, ny, 0, cmp) == FACTZ_OK);
    result = size;
  } else {
    CHECK(!"compress failed");
  }
  free(buf);
  free(u2);
  free(v2);
  return result;
}

static void test_version_and_defaults(void) {
  factz_options o;
  memset(&o, 0xAB, sizeof o);
  factz_options_init(&o);
  CHECK(o.struct_size == sizeof(factz_options));
  CHECK(o.mode == FACTZ_MODE_SPECULATIVE);
  CHECK(o.coder == FACTZ_CODER_HUFFMAN || o.coder == FACTZ_CODER_ANS);
  CHECK(o.bound_mode == FACTZ_BOUND_REL);
  CHECK(o.bound == 1e-2);
  CHECK(o.zstd == 1);
  CHECK(o.threads == 0);
  CHECK(o.anchor_stride == 4096);
  CHECK(o.policy == FACTZ_POLICY_OMP);
  CHECK(o.device == 0);
  CHECK(factz_c_api_version() == FACTZ_C_API_VERSION);
  CHECK(strlen(factz_version_string()) >= 5);
  CHECK(strcmp(factz_status_name(FACTZ_OK), "ok") == 0);
  CHECK(strcmp(factz_status_name(FACTZ_CORRUPT_STREAM), "corrupt_stream") == 0);
  CHECK(strcmp(factz_status_name(FACTZ_BUFFER_TOO_SMALL), "buffer_too_small") == 0);
  CHECK(strcmp(factz_status_name((factz_status)99), "unknown_status") == 0);
  CHECK(factz_compress_bound(0, 5) == 0);
  CHECK(factz_compress_bound(5, -1) == 0);
  CHECK(factz_compress_bound(10, 10) > 100 * 8);
}

/* Every mode and coder keeps the pointwise bound; block and speculative keep every
 * critical point; each thread count gives the same bytes. */
static void test_modes_on_analytic_field(void) {
  const int64_t nx = 97, ny = 61, n = nx * ny;
  float* u = (float*)malloc((size_t)n * sizeof(float));
  float* v = (float*)malloc((size_t)n * sizeof(float));
  analytic_field(nx, ny, u, v);
  int64_t cps = -1;
  CHECK(factz_count_critical_points(u, v, nx, ny, 0, &cps) == FACTZ_OK);
  CHECK(cps > 4);
  for (int mode = 0; mode <= 2; ++mode)
    for (int coder = 0; coder <= 1; ++coder) {
      factz_options o;
      factz_options_init(&o);
      o.mode = mode;
      o.coder = coder;
      o.bound_mode = FACTZ_BOUND_ABS;
      o.bound = 1e-2;
      factz_comparison c;
      size_t size = round_trip(u, v, nx, ny, &o, &c);
      CHECK(size > 0 && size < (size_t)n * 8);
      CHECK(c.max_abs_error_u <= 1e-2 && c.max_abs_error_v <= 1e-2);
      CHECK(c.cp_original == cps);
      if (mode != FACTZ_MODE_NONE) CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
      /* serial and 2 threads: identical bytes */
      size_t cap = factz_compress_bound(nx, ny), s1 = 0, s2 = 0;
      unsigned char* a = (unsigned char*)malloc(cap);
      unsigned char* b = (unsigned char*)malloc(cap);
      o.threads = 1;
      CHECK(factz_compress(u, v, nx, ny, &o, a, cap, &s1) == FACTZ_OK);
      o.threads = 2;
      CHECK(factz_compress(u, v, nx, ny, &o, b, cap, &s2) == FACTZ_OK);
      CHECK(s1 == s2 && s1 == size && memcmp(a, b, s1) == 0);
      free(a);
      free(b);
    }
  free(u);
  free(v);
}

/* Zeros, constants, ties and tiny grids round trip with no critical point change. */
static void test_degenerate_fields(void) {
  const int64_t dims[][2] = {{1, 1}, {2, 1}, {1, 3}, {2, 2}, {3, 3}, {40, 33}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
    const int64_t nx = dims[d][0], ny = dims[d][1], n = nx * ny;
    float* u = (float*)calloc((size_t)n, sizeof(float));
    float* v = (float*)calloc((size_t)n, sizeof(float));
    for (int kind = 0; kind < 3; ++kind) {
      for (int64_t k = 0; k < n; ++k) {
        u[k] = kind == 0 ? 0.0f : kind == 1 ? 3.5f : (float)((k * 7) % 3) - 1.0f; /* ties */
        v[k] = kind == 0 ? 0.0f : kind == 1 ? -2.0f : (float)((k * 5) % 3) - 1.0f;
      }
      for (int mode = 0; mode <= 2; ++mode) {
        factz_options o;
        factz_options_init(&o);
        o.mode = mode;
        factz_comparison c;
        size_t size = round_trip(u, v, nx, ny, &o, &c);
        CHECK(size > 0);
        if (kind == 0) CHECK(c.max_abs_error_u == 0 && c.max_abs_error_v == 0);
        CHECK(c.max_abs_error_u <= 1e-2 * c.value_range && c.max_abs_error_v <= 1e-2 * c.value_range);
        if (mode != FACTZ_MODE_NONE) CHECK(c.lost + c.spurious + c.type_changed == 0);
      }
    }
    free(u);
    free(v);
  }
}

/* The real GFS wind field: zero violations in block and speculative mode, and the C API's
 * bytes equal the C++ API's for the same options. */
static void test_real_field_and_cpp_bytes(void) {
  const int64_t nx = 360, ny = 181, n = nx * ny;
  float* u = read_plane("gfs10m_wind_2014_u_360x181.f32", n);
  float* v = read_plane("gfs10m_wind_2014_v_360x181.f32", n);
  CHECK(u && v);
  if (!u || !v) return;
  const char* modes[] = {"none", "block", "speculative"};
  for (int mode = 1; mode <= 2; ++mode) {
    factz_options o;
    factz_options_init(&o);
    o.mode = mode;
    factz_comparison c;
    CHECK(round_trip(u, v, nx, ny, &o, &c) > 0);
    CHECK(c.cp_original > 100);
    CHECK(c.lost == 0 && c.spurious == 0 && c.type_changed == 0);
    CHECK(c.max_abs_error_u <= 1e-2 * c.value_range && c.max_abs_error_v <= 1e-2 * c.value_range);

    char out[1024], cmd[4096];
    snprintf(out, sizeof out, "%s/capi_cpp_%s.fz", g_tmp, modes[mode]);
    snprintf(cmd, sizeof cmd,
             "'%s' 360 181 '%s/gfs10m_wind_2014_u_360x181.f32' '%s/gfs10m_wind_2014_v_360x181.f32' '%s' %s "
             "%s rel 0.01 1 4096",
             g_cpp, g_data, g_data, out, modes[mode], o.coder == FACTZ_CODER_ANS ? "ans" : "huffman");
    CHECK(system(cmd) == 0);
    FILE* f = fopen(out, "rb");
    CHECK(f != NULL);
    if (!f) continue;
    size_t cap = factz_compress_bound(nx, ny), size = 0;
    unsigned char* mine = (unsigned char*)malloc(cap);
    unsigned char* theirs = (unsigned char*)malloc(cap);
    size_t got = fread(theirs, 1, cap, f);
    fclose(f);
    remove(out);
    CHECK(factz_compress(u, v, nx, ny, &o, mine, cap, &size) == FACTZ_OK);
    CHECK(got == size && memcmp(mine, theirs, size) == 0);
    free(mine);
    free(theirs);
  }
  free(u);
  free(v);
}

/* Bad arguments and corrupted streams: clear statuses and messages, never a crash. */
static void test_bad_input(void) {
  const int64_t nx = 20, ny = 16, n = nx * ny;
  float u[320], v[320], u2[320], v2[320];
  analytic_field(nx, ny, u, v);
  size_t cap = factz_compress_bound(nx, ny), size = 0;
  unsigned char* buf = (unsigned char*)malloc(cap);
  factz_options o;
  factz_options_init(&o);

  CHECK(factz_compress(NULL, v, nx, ny, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "invalid_argument") != NULL);
  CHECK(factz_compress(u, v, 0, ny, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, NULL) == FACTZ_INVALID_ARGUMENT);
  factz_options bad = o;
  bad.struct_size = 0;
  CHECK(factz_compress(u, v, nx, ny, &bad, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "factz_options_init") != NULL);
  bad = o;
  bad.mode = 7;
  CHECK(factz_compress(u, v, nx, ny, &bad, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  bad = o;
  bad.bound = -1.0;
  CHECK(factz_compress(u, v, nx, ny, &bad, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  bad = o;
  bad.anchor_stride = 12;
  CHECK(factz_compress(u, v, nx, ny, &bad, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "anchor stride") != NULL);

  float saved = u[45];
  u[45] = INFINITY; /* NaN marks a missing vertex (issue 17); infinity at a valid one is an error */
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "infinite") != NULL);
  u[45] = NAN; /* stored losslessly, bits and all */
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_OK);
  u[45] = saved;

  /* NULL options are the defaults of factz_options_init */
  size_t with_init = 0;
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &with_init) == FACTZ_OK);
  unsigned char* first = (unsigned char*)malloc(with_init);
  memcpy(first, buf, with_init);
  CHECK(factz_compress(u, v, nx, ny, NULL, buf, cap, &size) == FACTZ_OK);
  CHECK(size == with_init && memcmp(first, buf, size) == 0);
  free(first);

  /* a buffer one byte short reports the size it needs */
  CHECK(factz_compress(u, v, nx, ny, NULL, buf, cap, &size) == FACTZ_OK);
  CHECK(strcmp(factz_last_error(), "") == 0);
  size_t needed = 0;
  CHECK(factz_compress(u, v, nx, ny, NULL, buf, size - 1, &needed) == FACTZ_BUFFER_TOO_SMALL);
  CHECK(needed == size);
  needed = 0; /* a size query: no buffer at all */
  CHECK(factz_compress(u, v, nx, ny, NULL, NULL, 0, &needed) == FACTZ_BUFFER_TOO_SMALL);
  CHECK(needed == size);
  CHECK(strstr(factz_last_error(), "buffer_too_small") != NULL);
  CHECK(factz_compress(u, v, nx, ny, NULL, buf, cap, &size) == FACTZ_OK);

  /* wrong output dimensions */
  CHECK(factz_decompress(buf, size, u2, v2, nx + 1, ny, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress(buf, size, NULL, v2, nx, ny, 0) == FACTZ_INVALID_ARGUMENT);
  CHECK(factz_decompress(NULL, 5, u2, v2, nx, ny, 0) == FACTZ_INVALID_ARGUMENT);
  int64_t sx = 0, sy = 0;
  CHECK(factz_stream_dims(buf, 0, &sx, &sy) == FACTZ_CORRUPT_STREAM);

  /* every single-byte corruption and every truncation is refused */
  int refused = 0;
  for (size_t k = 0; k < size; ++k) {
    buf[k] ^= 0x5A;
    factz_status s = factz_decompress(buf, size, u2, v2, nx, ny, 0);
    refused += s == FACTZ_CORRUPT_STREAM || s == FACTZ_UNSUPPORTED_VERSION || s == FACTZ_INVALID_ARGUMENT;
    buf[k] ^= 0x5A;
  }
  CHECK(refused == (int)size);
  CHECK(factz_decompress(buf, size, u2, v2, nx, ny, 0) == FACTZ_OK);
  for (size_t k = 0; k < size; ++k) CHECK(factz_decompress(buf, k, u2, v2, nx, ny, 0) != FACTZ_OK);
  CHECK(strstr(factz_last_error(), "corrupt_stream") != NULL);
  (void)n;
  free(buf);
}

/* FACTZ_POLICY_CUDA: the CPU's bytes and values where a CUDA device runs them, else
 * FACTZ_BACKEND_UNAVAILABLE with a message saying so; the other policies give the same bytes;
 * a 1.0.0-sized option struct (no policy, no device) keeps working. */
static void test_policies(void) {
  const int64_t nx = 20, ny = 16;
  float u[320], v[320], u2[320], v2[320], u3[320], v3[320];
  analytic_field(nx, ny, u, v);
  size_t cap = factz_compress_bound(nx, ny), cpu_size = 0, size = 0;
  unsigned char* cpu = (unsigned char*)malloc(cap);
  unsigned char* buf = (unsigned char*)malloc(cap);
  factz_options o;
  factz_options_init(&o);
  CHECK(factz_compress(u, v, nx, ny, &o, cpu, cap, &cpu_size) == FACTZ_OK);
  CHECK(factz_decompress(cpu, cpu_size, u2, v2, nx, ny, 0) == FACTZ_OK);

  o.policy = FACTZ_POLICY_SERIAL;
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_OK);
  CHECK(size == cpu_size && memcmp(buf, cpu, size) == 0);
  CHECK(factz_decompress_with_options(cpu, cpu_size, u3, v3, nx, ny, &o) == FACTZ_OK);
  CHECK(memcmp(u2, u3, sizeof u2) == 0 && memcmp(v2, v3, sizeof v2) == 0);

  o.policy = FACTZ_POLICY_CUDA;
  factz_status s = factz_compress(u, v, nx, ny, &o, buf, cap, &size);
  if (s == FACTZ_OK) { /* a CUDA device ran it */
    CHECK(size == cpu_size && memcmp(buf, cpu, size) == 0);
    CHECK(factz_decompress_with_options(cpu, cpu_size, u3, v3, nx, ny, &o) == FACTZ_OK);
    CHECK(memcmp(u2, u3, sizeof u2) == 0 && memcmp(v2, v3, sizeof v2) == 0);
  } else {
    CHECK(s == FACTZ_BACKEND_UNAVAILABLE);
    CHECK(strstr(factz_last_error(), "backend_unavailable: policy cuda") != NULL);
    CHECK(factz_decompress_with_options(cpu, cpu_size, u3, v3, nx, ny, &o) == FACTZ_BACKEND_UNAVAILABLE);
    CHECK(strstr(factz_last_error(), "backend_unavailable") != NULL);
    o.device = FACTZ_DEVICE_AUTO;
    CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_BACKEND_UNAVAILABLE);
  }
  o.device = -2; /* below FACTZ_DEVICE_AUTO: the caller's mistake on every machine */
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "device") != NULL);
  o.device = 0;
  o.policy = 3;
  CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_INVALID_ARGUMENT);
  CHECK(strstr(factz_last_error(), "policy") != NULL);
  CHECK(factz_decompress_with_options(cpu, cpu_size, u3, v3, nx, ny, &o) == FACTZ_INVALID_ARGUMENT);

  /* a program built against 1.0.0: its struct ends before policy, which is not read */
  factz_options old;
  factz_options_init(&old);
  old.struct_size = (size_t)((char*)&old.policy - (char*)&old);
  old.policy = FACTZ_POLICY_CUDA; /* beyond its struct: ignored */
  old.device = -5;
  CHECK(factz_compress(u, v, nx, ny, &old, buf, cap, &size) == FACTZ_OK);
  CHECK(size == cpu_size && memcmp(buf, cpu, size) == 0);
  CHECK(factz_decompress_with_options(cpu, cpu_size, u3, v3, nx, ny, &old) == FACTZ_OK);
  /* the 1.0.0 entry point fills only the 1.0.0 members */
  factz_options filled;
  memset(&filled, 0xAB, sizeof filled);
  (factz_options_init)(&filled);
  CHECK(filled.struct_size == old.struct_size && filled.mode == FACTZ_MODE_SPECULATIVE);
  CHECK(filled.policy == (int)0xABABABABu);
  CHECK(factz_compress(u, v, nx, ny, &filled, buf, cap, &size) == FACTZ_OK);
  CHECK(size == cpu_size && memcmp(buf, cpu, size) == 0);
  free(cpu);
  free(buf);
}

/* Random noise with eb = 0 and the smallest bounds: the streams stay within the bound. */
static void test_compress_bound_holds_on_noise(void) {
  const int64_t nx = 64, ny = 48, n = nx * ny;
  float* u = (float*)malloc((size_t)n * sizeof(float));
  float* v = (float*)malloc((size_t)n * sizeof(float));
  unsigned state = 12345u;
  for (int64_t k = 0; k < n; ++k) {
    state = state * 1103515245u + 12345u;
    u[k] = (float)((int)(state >> 8) - (1 << 23)) * 1e-3f;
    state = state * 1103515245u + 12345u;
    v[k] = (float)((int)(state >> 8) - (1 << 23)) * 1e30f;
  }
  size_t cap = factz_compress_bound(nx, ny);
  unsigned char* buf = (unsigned char*)malloc(cap);
  const double bounds[] = {0.0, 1e-30, 1e-6};
  for (int mode = 0; mode <= 2; ++mode)
    for (int coder = 0; coder <= 1; ++coder)
      for (int b = 0; b < 3; ++b)
        for (int zstd = 0; zstd <= 1; ++zstd) {
          factz_options o;
          factz_options_init(&o);
          o.mode = mode;
          o.coder = coder;
          o.bound = bounds[b];
          o.zstd = zstd;
          size_t size = 0;
          CHECK(factz_compress(u, v, nx, ny, &o, buf, cap, &size) == FACTZ_OK);
          CHECK(size <= cap);
          /* the per-vertex share of the bound is what matters for large grids */
          CHECK(size < (size_t)n * 40 + 4096);
        }
  free(buf);
  free(u);
  free(v);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FACTZ_CPP_COMPRESS DATA_DIR TMP_DIR\n", argv[0]);
    return 2;
  }
  g_cpp = argv[1];
  g_data = argv[2];
  g_tmp = argv[3];
  test_version_and_defaults();
  test_modes_on_analytic_field();
  test_degenerate_fields();
  test_real_field_and_cpp_bytes();
  test_bad_input();
  test_policies();
  test_compress_bound_holds_on_noise();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
