// The 3D entry points of the C API (include/factz/factz.h, "3D vector fields") over the
// C++ 3D API (factz/compress3d.hpp, factz/topology3d.hpp): argument checks, the planes as a
// VectorField3D, and the messages that send a stream of the other dimensionality to the
// functions that read it. The options are read by the 2D code (c_api_internal.hpp); which
// modes and policies 3D fields take is the C++ API's decision, never this file's.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include "c_api_internal.hpp"
#include "factz/compress3d.hpp"
#include "factz/factz.h"
#include "factz/topology3d.hpp"

namespace factz::capi {

factz_status status_of_2d_read(std::span<const uint8_t> stream, const factz::Status& st) {
  if (st.code() == factz::Code::unsupported_version) {
    if (auto dims = factz::stream_dims3d(stream); dims.ok())
      return fail(FACTZ_INVALID_ARGUMENT,
                  "the stream holds a 3D vector field (" + std::to_string((*dims)[0]) + "x" +
                      std::to_string((*dims)[1]) + "x" + std::to_string((*dims)[2]) +
                      "); read its grid with factz_stream_dims3d and decode it with factz_decompress3d");
  }
  return from_status(st);
}

}  // namespace factz::capi

using namespace factz::capi;

namespace {

/// nx * ny * nz when each is >= 1 and the product stays within 2^40 (the format's limit and
/// validate_field's).
bool grid_size3d(int64_t nx, int64_t ny, int64_t nz, int64_t& n) {
  constexpr int64_t kMax = int64_t(1) << 40;
  if (nx < 1 || ny < 1 || nz < 1 || nx > kMax || ny > kMax / nx || nz > kMax / (nx * ny)) return false;
  n = nx * ny * nz;
  return true;
}

std::string grid_text(int64_t nx, int64_t ny, int64_t nz) {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
}

/// factz_options declares fill values for u and v only: for a 3D field a declared fill value
/// (float32 or float64) is refused rather than applied to two components of three. A NaN
/// marks a missing vertex (the library's rule), and so does a nonzero byte of a caller's mask.
factz_status refuse_fill_values(const factz_options* in) {
  if (!declares_float32_fill(in) && !declares_float64_fill(in)) return FACTZ_OK;
  return fail(FACTZ_INVALID_ARGUMENT,
              "3D vector fields take no fill values through the C API (has_fill_u / has_fill_v / has_fill_u64 / "
              "has_fill_v64 name 2D components): mark missing vertices with NaN or the mask of the 3d_masked "
              "functions");
}

/// The planes (u, v, w) of nx * ny * nz floats as a VectorField3D (copied), with the
/// caller's mask (null: none; else nx * ny * nz bytes, nonzero = missing: C cannot tell a
/// shorter buffer, so its length is the caller's promise, as for the planes). planes: their
/// names in the message for a null one.
factz_status field3d_of(const float* u, const float* v, const float* w, int64_t nx, int64_t ny, int64_t nz,
                        factz::VectorField3D& f, const uint8_t* mask = nullptr, const char* planes = "u, v and w") {
  int64_t n = 0;
  if (!grid_size3d(nx, ny, nz, n))
    return fail(FACTZ_INVALID_ARGUMENT,
                "grid " + grid_text(nx, ny, nz) + " is empty, negative or larger than 2^40 vertices");
  if (!u || !v || !w)
    return fail(FACTZ_INVALID_ARGUMENT, std::string("null field plane (") + planes + " are required)");
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.u.assign(u, u + n);
  f.v.assign(v, v + n);
  f.w.assign(w, w + n);
  if (mask) f.mask.assign(mask, mask + n);
  return FACTZ_OK;
}

/// A 3D function's failure to read `stream`: a valid 2D stream names the 2D decoders of its
/// value type; anything else keeps the library's status.
factz_status status_of_3d_read(std::span<const uint8_t> stream, const factz::Status& st) {
  if (st.code() == factz::Code::unsupported_version) {
    if (auto info = factz::stream_info(stream); info.ok())
      return fail(FACTZ_INVALID_ARGUMENT,
                  "the stream holds a 2D " + std::string(factz::dtype_name(info->dtype)) + " vector field (" +
                      std::to_string(info->nx) + "x" + std::to_string(info->ny) + "); decode it with " +
                      (info->dtype == factz::DType::float64 ? "factz_decompress_f64" : "factz_decompress") +
                      " (factz_stream_info gives its grid)");
  }
  return from_status(st);
}

/// sizeof(factz_comparison3d) of C API 1.5.0: the smallest accepted.
constexpr size_t kComparison3dSize150 = sizeof(factz_comparison3d);
static_assert(kComparison3dSize150 == 112, "the 1.5.0 layout of factz_comparison3d must not change");

void write_comparison3d(const factz::Comparison3D& c, factz_comparison3d* result, size_t result_size) {
  factz_comparison3d r;
  std::memset(&r, 0, sizeof r);
  r.cp_original = c.cp_original;
  r.cp_decompressed = c.cp_decompressed;
  r.lost = c.lost;
  r.spurious = c.spurious;
  r.type_changed = c.type_changed;
  r.masked_vertices = c.masked_vertices;
  r.mask_mismatch = c.mask_mismatch;
  r.max_abs_error_u = c.max_abs_error[0];
  r.max_abs_error_v = c.max_abs_error[1];
  r.max_abs_error_w = c.max_abs_error[2];
  r.rmse = c.rmse;
  r.nrmse = c.nrmse;
  r.psnr = c.psnr;
  r.value_range = c.value_range;
  std::memcpy(result, &r, std::min(result_size, sizeof r));
}

}  // namespace

extern "C" {

size_t factz_compress_bound3d(int64_t nx, int64_t ny, int64_t nz) {
  // Header, section table and every section's fixed part (up to four Huffman codebooks:
  // bound ids and three code streams; frequency and chunk tables) fit in 2 MiB; per vertex
  // at most 112 bytes (docs/python.md, "Size bound").
  int64_t n = 0;
  if (!grid_size3d(nx, ny, nz, n)) return 0;
  constexpr uint64_t kFixed = uint64_t(1) << 21;
  constexpr uint64_t kPerVertex = 112;
  const uint64_t bound = kFixed + kPerVertex * uint64_t(n);  // n <= 2^40: no overflow
  if (bound > uint64_t(std::numeric_limits<size_t>::max())) return 0;
  return size_t(bound);
}

factz_status factz_compress3d(const float* u, const float* v, const float* w, int64_t nx, int64_t ny, int64_t nz,
                              const factz_options* options, void* dst, size_t dst_capacity, size_t* out_size) {
  return factz_compress3d_masked(u, v, w, nullptr, nx, ny, nz, options, dst, dst_capacity, out_size);
}

factz_status factz_compress3d_masked(const float* u, const float* v, const float* w, const uint8_t* mask,
                                     int64_t nx, int64_t ny, int64_t nz, const factz_options* options, void* dst,
                                     size_t dst_capacity, size_t* out_size) {
  return guarded([&]() -> factz_status {
    if (!out_size) return fail(FACTZ_INVALID_ARGUMENT, "out_size is null");
    if (!dst && dst_capacity > 0) return fail(FACTZ_INVALID_ARGUMENT, "dst is null but dst_capacity > 0");
    factz::Options o;
    if (factz_status s = options_of(options, o); s != FACTZ_OK) return s;
    if (factz_status s = refuse_fill_values(options); s != FACTZ_OK) return s;
    factz::VectorField3D f;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, f, mask); s != FACTZ_OK) return s;
    auto stream = factz::compress(f, o);
    if (!stream.ok()) return from_status(stream.status());
    *out_size = stream->size();
    if (stream->size() > dst_capacity)
      return fail(FACTZ_BUFFER_TOO_SMALL, "the stream needs " + std::to_string(stream->size()) +
                                              " bytes, the buffer holds " + std::to_string(dst_capacity));
    std::memcpy(dst, stream->data(), stream->size());
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_stream_dims3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz) {
  return guarded([&]() -> factz_status {
    if (!nx || !ny || !nz) return fail(FACTZ_INVALID_ARGUMENT, "nx, ny or nz is null");
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    const std::span<const uint8_t> stream(static_cast<const uint8_t*>(src), src_size);
    auto dims = factz::stream_dims3d(stream);
    if (!dims.ok()) return status_of_3d_read(stream, dims.status());
    *nx = (*dims)[0];
    *ny = (*dims)[1];
    *nz = (*dims)[2];
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_decompress3d(const void* src, size_t src_size, float* u, float* v, float* w, int64_t nx,
                                int64_t ny, int64_t nz, const factz_options* options) {
  return factz_decompress3d_masked(src, src_size, u, v, w, nullptr, nx, ny, nz, options);
}

factz_status factz_decompress3d_masked(const void* src, size_t src_size, float* u, float* v, float* w,
                                       uint8_t* mask_out, int64_t nx, int64_t ny, int64_t nz,
                                       const factz_options* options) {
  return guarded([&]() -> factz_status {
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    int64_t n = 0;
    if (!grid_size3d(nx, ny, nz, n))
      return fail(FACTZ_INVALID_ARGUMENT, "output grid " + grid_text(nx, ny, nz) + " is empty or too large");
    if (!u || !v || !w) return fail(FACTZ_INVALID_ARGUMENT, "null output plane (u, v and w are required)");
    factz::DecompressOptions d;
    if (options) {
      if (factz_status s = check_struct_size(options); s != FACTZ_OK) return s;
      if (factz_status s = execution_of(options, d.policy, d.threads, d.device); s != FACTZ_OK) return s;
    }
    const std::span<const uint8_t> stream(static_cast<const uint8_t*>(src), src_size);
    // The grid first (checked before anything is allocated for it), so that planes of
    // another size are refused before decoding.
    auto dims = factz::stream_dims3d(stream);
    if (!dims.ok()) return status_of_3d_read(stream, dims.status());
    if ((*dims)[0] != nx || (*dims)[1] != ny || (*dims)[2] != nz)
      return fail(FACTZ_INVALID_ARGUMENT, "the stream holds a " + grid_text((*dims)[0], (*dims)[1], (*dims)[2]) +
                                              " field, the output planes are " + grid_text(nx, ny, nz));
    auto f = factz::decompress3d(stream, d);
    if (!f.ok()) return from_status(f.status());
    std::copy(f->u.begin(), f->u.end(), u);
    std::copy(f->v.begin(), f->v.end(), v);
    std::copy(f->w.begin(), f->w.end(), w);
    if (mask_out) {
      std::fill(mask_out, mask_out + n, uint8_t(0));
      for (size_t k = 0; k < f->mask.size(); ++k) mask_out[k] = f->mask[k] != 0;
    }
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_count_critical_points3d(const float* u, const float* v, const float* w, int64_t nx, int64_t ny,
                                           int64_t nz, const factz_options* options, int64_t* count) {
  return factz_count_critical_points3d_masked(u, v, w, nullptr, nx, ny, nz, options, count);
}

factz_status factz_count_critical_points3d_masked(const float* u, const float* v, const float* w,
                                                  const uint8_t* mask, int64_t nx, int64_t ny, int64_t nz,
                                                  const factz_options* options, int64_t* count) {
  return guarded([&]() -> factz_status {
    if (!count) return fail(FACTZ_INVALID_ARGUMENT, "count is null");
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    if (factz_status s = refuse_fill_values(options); s != FACTZ_OK) return s;
    factz::VectorField3D f;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, f, mask); s != FACTZ_OK) return s;
    auto cps = factz::critical_points(f, factz::Exec{threads});
    if (!cps.ok()) return from_status(cps.status());
    *count = int64_t(cps->size());
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_compare3d_sized(const float* u, const float* v, const float* w, const float* u2,
                                   const float* v2, const float* w2, int64_t nx, int64_t ny, int64_t nz,
                                   const factz_options* options, factz_comparison3d* result, size_t result_size) {
  return factz_compare3d_masked_sized(u, v, w, nullptr, u2, v2, w2, nullptr, nx, ny, nz, options, result,
                                      result_size);
}

factz_status factz_compare3d_masked_sized(const float* u, const float* v, const float* w, const uint8_t* mask,
                                          const float* u2, const float* v2, const float* w2, const uint8_t* mask2,
                                          int64_t nx, int64_t ny, int64_t nz, const factz_options* options,
                                          factz_comparison3d* result, size_t result_size) {
  return guarded([&]() -> factz_status {
    if (!result) return fail(FACTZ_INVALID_ARGUMENT, "result is null");
    if (result_size < kComparison3dSize150)
      return fail(FACTZ_INVALID_ARGUMENT, "the factz_comparison3d size is " + std::to_string(result_size) +
                                              "; call factz_compare3d or factz_compare3d_masked");
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    if (factz_status s = refuse_fill_values(options); s != FACTZ_OK) return s;
    factz::VectorField3D a, b;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, a, mask); s != FACTZ_OK) return s;
    if (factz_status s = field3d_of(u2, v2, w2, nx, ny, nz, b, mask2, "u2, v2 and w2"); s != FACTZ_OK) return s;
    auto c = factz::compare(a, b, factz::Exec{threads});
    if (!c.ok()) return from_status(c.status());
    write_comparison3d(*c, result, result_size);
    g_last_error.clear();
    return FACTZ_OK;
  });
}

}  // extern "C"
