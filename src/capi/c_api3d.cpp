// The 3D entry points of the C API (include/factz/factz.h, "3D vector fields") over the
// C++ 3D API (factz/compress3d.hpp, factz/topology3d.hpp): argument checks, the planes as a
// VectorField3D or VectorField3D64 (1.8.0) with the declared fill values marked, and the
// messages that send a stream of the other dimensionality or value type to the functions
// that read it. The options are read by the 2D code (c_api_internal.hpp); which modes and
// policies 3D fields take is the C++ API's decision, never this file's.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>
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
    if (auto dims = factz::stream_dims3d(stream); dims.ok()) {
      auto dtype = factz::stream_dtype3d(stream);
      const bool f64 = dtype.ok() && *dtype == factz::DType::float64;
      return fail(FACTZ_INVALID_ARGUMENT,
                  "the stream holds a 3D vector field (" + std::to_string((*dims)[0]) + "x" +
                      std::to_string((*dims)[1]) + "x" + std::to_string((*dims)[2]) + ") of " +
                      (f64 ? "float64" : "float32") +
                      " values; read its grid with factz_stream_dims3d (and its value type with "
                      "factz_stream_info3d) and decode it with " +
                      (f64 ? "factz_decompress3d_f64" : "factz_decompress3d"));
    }
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

/// What differs between the float32 and the float64 3D entry points: the field and fill value
/// types, the stream value type each decodes, and the C functions that decode it.
template <class T>
struct Precision3;
template <>
struct Precision3<float> {
  using Field = factz::VectorField3D;
  using Fill = factz::FillValues3D;
  static constexpr factz::DType kDType = factz::DType::float32;
  static constexpr const char* kDecoders = "factz_decompress3d or factz_decompress3d_masked (float planes)";
};
template <>
struct Precision3<double> {
  using Field = factz::VectorField3D64;
  using Fill = factz::FillValues3D64;
  static constexpr factz::DType kDType = factz::DType::float64;
  static constexpr const char* kDecoders = "factz_decompress3d_f64 or factz_decompress3d_masked_f64 (double planes)";
};

/// The float32 fill values of options for a float32 3D field (has_fill_u / _v / _w; none for
/// NULL options). Float64 ones are refused: a double rounded to float rarely equals the data,
/// and the C API never rounds silently.
factz_status fill3d_of(const factz_options* in, factz::FillValues3D& fill) {
  if (declares_float64_fill(in) || declares_float64_fill_w(in))
    return fail(FACTZ_INVALID_ARGUMENT,
                "has_fill_u64 / has_fill_v64 / has_fill_w64 declare float64 fill values, read by the _f64 functions; "
                "declare a float32 field's fill values with has_fill_u / fill_u, has_fill_v / fill_v and "
                "has_fill_w / fill_w");
  if (declares_float32_fill(in)) {
    if (in->has_fill_u) fill.u = in->fill_u;
    if (in->has_fill_v) fill.v = in->fill_v;
  }
  if (declares_float32_fill_w(in)) fill.w = in->fill_w;
  return FACTZ_OK;
}

/// The float64 fill values of options for a float64 3D field (has_fill_u64 / _v64 / _w64),
/// compared with the doubles as they are; float32 ones are refused (1e20f widened is not 1e20).
factz_status fill3d_of(const factz_options* in, factz::FillValues3D64& fill) {
  if (declares_float32_fill(in) || declares_float32_fill_w(in))
    return fail(FACTZ_INVALID_ARGUMENT,
                "has_fill_u / has_fill_v / has_fill_w declare float32 fill values; declare a float64 field's fill "
                "values with has_fill_u64 / fill_u64, has_fill_v64 / fill_v64 and has_fill_w64 / fill_w64");
  if (declares_float64_fill(in)) {
    if (in->has_fill_u64) fill.u = in->fill_u64;
    if (in->has_fill_v64) fill.v = in->fill_v64;
  }
  if (declares_float64_fill_w(in)) fill.w = in->fill_w64;
  return FACTZ_OK;
}

/// The planes (u, v, w) of nx * ny * nz values as a field (copied), with the caller's mask
/// (null: none; else nx * ny * nz bytes, nonzero = missing: C cannot tell a shorter buffer,
/// so its length is the caller's promise, as for the planes) and the declared fill values
/// marked in it (factz::mark_missing, the C++ API's rule). planes: their names in the message
/// for a null one.
template <class T>
factz_status field3d_of(const T* u, const T* v, const T* w, int64_t nx, int64_t ny, int64_t nz,
                        const typename Precision3<T>::Fill& fill, typename Precision3<T>::Field& f,
                        const uint8_t* mask = nullptr, const char* planes = "u, v and w") {
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
  if (fill.any()) factz::mark_missing(f, fill);
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

// The bodies of the entry points, once for float (factz_*3d*) and double (factz_*3d*_f64).

template <class T>
factz_status compress3d_masked(const T* u, const T* v, const T* w, const uint8_t* mask, int64_t nx, int64_t ny,
                               int64_t nz, const factz_options* options, void* dst, size_t dst_capacity,
                               size_t* out_size) {
  return guarded([&]() -> factz_status {
    if (!out_size) return fail(FACTZ_INVALID_ARGUMENT, "out_size is null");
    if (!dst && dst_capacity > 0) return fail(FACTZ_INVALID_ARGUMENT, "dst is null but dst_capacity > 0");
    factz::Options o;
    if (factz_status s = options_of(options, o); s != FACTZ_OK) return s;
    typename Precision3<T>::Fill fill;
    if (factz_status s = fill3d_of(options, fill); s != FACTZ_OK) return s;
    typename Precision3<T>::Field f;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, fill, f, mask); s != FACTZ_OK) return s;
    auto stream = factz::compress(std::move(f), o);  // our copy, given up: no second copy of the planes
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

factz::Result<factz::VectorField3D> decode3d(std::span<const uint8_t> stream, const factz::DecompressOptions& d,
                                             float*) {
  return factz::decompress3d(stream, d);
}
factz::Result<factz::VectorField3D64> decode3d(std::span<const uint8_t> stream,
                                               const factz::DecompressOptions& d, double*) {
  return factz::decompress3d64(stream, d);
}

/// Decodes into caller planes of T after checking that the stream holds a 3D field of T and
/// of the planes' grid (a stream of the other value type names the C functions that decode it).
template <class T>
factz_status decompress3d_masked(const void* src, size_t src_size, T* u, T* v, T* w, uint8_t* mask_out,
                                 int64_t nx, int64_t ny, int64_t nz, const factz_options* options) {
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
    // The grid and value type first (checked before anything is allocated for the field), so
    // that planes of another size or type are refused before decoding.
    auto dims = factz::stream_dims3d(stream);
    if (!dims.ok()) return status_of_3d_read(stream, dims.status());
    auto dtype = factz::stream_dtype3d(stream);
    if (!dtype.ok()) return status_of_3d_read(stream, dtype.status());
    if (*dtype != Precision3<T>::kDType) {
      const char* other =
          *dtype == factz::DType::float64 ? Precision3<double>::kDecoders : Precision3<float>::kDecoders;
      return fail(FACTZ_INVALID_ARGUMENT, std::string("the stream holds a ") + factz::dtype_name(*dtype) +
                                              " 3D vector field; decode it with " + other);
    }
    if ((*dims)[0] != nx || (*dims)[1] != ny || (*dims)[2] != nz)
      return fail(FACTZ_INVALID_ARGUMENT, "the stream holds a " + grid_text((*dims)[0], (*dims)[1], (*dims)[2]) +
                                              " field, the output planes are " + grid_text(nx, ny, nz));
    auto f = decode3d(stream, d, static_cast<T*>(nullptr));
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

template <class T>
factz_status count_critical_points3d_masked(const T* u, const T* v, const T* w, const uint8_t* mask, int64_t nx,
                                            int64_t ny, int64_t nz, const factz_options* options, int64_t* count) {
  return guarded([&]() -> factz_status {
    if (!count) return fail(FACTZ_INVALID_ARGUMENT, "count is null");
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    typename Precision3<T>::Fill fill;
    if (factz_status s = fill3d_of(options, fill); s != FACTZ_OK) return s;
    typename Precision3<T>::Field f;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, fill, f, mask); s != FACTZ_OK) return s;
    auto cps = factz::critical_points(f, factz::Exec{threads});
    if (!cps.ok()) return from_status(cps.status());
    *count = int64_t(cps->size());
    g_last_error.clear();
    return FACTZ_OK;
  });
}

/// The fill values of options apply to both fields, as in 2D (factz_compare_masked).
template <class T>
factz_status compare3d_masked(const T* u, const T* v, const T* w, const uint8_t* mask, const T* u2, const T* v2,
                              const T* w2, const uint8_t* mask2, int64_t nx, int64_t ny, int64_t nz,
                              const factz_options* options, factz_comparison3d* result, size_t result_size,
                              const char* callers) {
  return guarded([&]() -> factz_status {
    if (!result) return fail(FACTZ_INVALID_ARGUMENT, "result is null");
    if (result_size < kComparison3dSize150)
      return fail(FACTZ_INVALID_ARGUMENT,
                  "the factz_comparison3d size is " + std::to_string(result_size) + "; call " + callers);
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    typename Precision3<T>::Fill fill;
    if (factz_status s = fill3d_of(options, fill); s != FACTZ_OK) return s;
    typename Precision3<T>::Field a, b;
    if (factz_status s = field3d_of(u, v, w, nx, ny, nz, fill, a, mask); s != FACTZ_OK) return s;
    if (factz_status s = field3d_of(u2, v2, w2, nx, ny, nz, fill, b, mask2, "u2, v2 and w2"); s != FACTZ_OK)
      return s;
    auto c = factz::compare(a, b, factz::Exec{threads});
    if (!c.ok()) return from_status(c.status());
    write_comparison3d(*c, result, result_size);
    g_last_error.clear();
    return FACTZ_OK;
  });
}

/// factz_stream_dims3d (dtype_wanted false: dtype unused) and factz_stream_info3d.
factz_status stream_info3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz,
                           factz_dtype* dtype, bool dtype_wanted) {
  return guarded([&]() -> factz_status {
    if (!nx || !ny || !nz) return fail(FACTZ_INVALID_ARGUMENT, "nx, ny or nz is null");
    if (dtype_wanted && !dtype) return fail(FACTZ_INVALID_ARGUMENT, "dtype is null");
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    const std::span<const uint8_t> stream(static_cast<const uint8_t*>(src), src_size);
    auto dims = factz::stream_dims3d(stream);
    if (!dims.ok()) return status_of_3d_read(stream, dims.status());
    if (dtype_wanted) {
      auto t = factz::stream_dtype3d(stream);
      if (!t.ok()) return status_of_3d_read(stream, t.status());
      *dtype = factz_dtype(int(*t));
    }
    *nx = (*dims)[0];
    *ny = (*dims)[1];
    *nz = (*dims)[2];
    g_last_error.clear();
    return FACTZ_OK;
  });
}

}  // namespace

extern "C" {

size_t factz_compress_bound3d(int64_t nx, int64_t ny, int64_t nz) {
  // Header, section table and every section's fixed part (up to four Huffman codebooks:
  // bound ids and three code streams; frequency and chunk tables) fit in 2 MiB; per vertex
  // at most 112 bytes, float32 or float64 (docs/python.md, "Size bound").
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
  return compress3d_masked(u, v, w, nullptr, nx, ny, nz, options, dst, dst_capacity, out_size);
}

factz_status factz_compress3d_masked(const float* u, const float* v, const float* w, const uint8_t* mask,
                                     int64_t nx, int64_t ny, int64_t nz, const factz_options* options, void* dst,
                                     size_t dst_capacity, size_t* out_size) {
  return compress3d_masked(u, v, w, mask, nx, ny, nz, options, dst, dst_capacity, out_size);
}

factz_status factz_stream_dims3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz) {
  return stream_info3d(src, src_size, nx, ny, nz, nullptr, false);
}

factz_status factz_stream_info3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz,
                                 factz_dtype* dtype) {
  return stream_info3d(src, src_size, nx, ny, nz, dtype, true);
}

factz_status factz_decompress3d(const void* src, size_t src_size, float* u, float* v, float* w, int64_t nx,
                                int64_t ny, int64_t nz, const factz_options* options) {
  return decompress3d_masked(src, src_size, u, v, w, nullptr, nx, ny, nz, options);
}

factz_status factz_decompress3d_masked(const void* src, size_t src_size, float* u, float* v, float* w,
                                       uint8_t* mask_out, int64_t nx, int64_t ny, int64_t nz,
                                       const factz_options* options) {
  return decompress3d_masked(src, src_size, u, v, w, mask_out, nx, ny, nz, options);
}

factz_status factz_count_critical_points3d(const float* u, const float* v, const float* w, int64_t nx, int64_t ny,
                                           int64_t nz, const factz_options* options, int64_t* count) {
  return count_critical_points3d_masked(u, v, w, nullptr, nx, ny, nz, options, count);
}

factz_status factz_count_critical_points3d_masked(const float* u, const float* v, const float* w,
                                                  const uint8_t* mask, int64_t nx, int64_t ny, int64_t nz,
                                                  const factz_options* options, int64_t* count) {
  return count_critical_points3d_masked(u, v, w, mask, nx, ny, nz, options, count);
}

factz_status factz_compare3d_sized(const float* u, const float* v, const float* w, const float* u2,
                                   const float* v2, const float* w2, int64_t nx, int64_t ny, int64_t nz,
                                   const factz_options* options, factz_comparison3d* result, size_t result_size) {
  return compare3d_masked(u, v, w, nullptr, u2, v2, w2, nullptr, nx, ny, nz, options, result, result_size,
                          "factz_compare3d or factz_compare3d_masked");
}

factz_status factz_compare3d_masked_sized(const float* u, const float* v, const float* w, const uint8_t* mask,
                                          const float* u2, const float* v2, const float* w2, const uint8_t* mask2,
                                          int64_t nx, int64_t ny, int64_t nz, const factz_options* options,
                                          factz_comparison3d* result, size_t result_size) {
  return compare3d_masked(u, v, w, mask, u2, v2, w2, mask2, nx, ny, nz, options, result, result_size,
                          "factz_compare3d or factz_compare3d_masked");
}

// float64 3D fields (1.8.0): the same bodies on doubles.

factz_status factz_compress3d_f64(const double* u, const double* v, const double* w, int64_t nx, int64_t ny,
                                  int64_t nz, const factz_options* options, void* dst, size_t dst_capacity,
                                  size_t* out_size) {
  return compress3d_masked(u, v, w, nullptr, nx, ny, nz, options, dst, dst_capacity, out_size);
}

factz_status factz_compress3d_masked_f64(const double* u, const double* v, const double* w, const uint8_t* mask,
                                         int64_t nx, int64_t ny, int64_t nz, const factz_options* options,
                                         void* dst, size_t dst_capacity, size_t* out_size) {
  return compress3d_masked(u, v, w, mask, nx, ny, nz, options, dst, dst_capacity, out_size);
}

factz_status factz_decompress3d_f64(const void* src, size_t src_size, double* u, double* v, double* w, int64_t nx,
                                    int64_t ny, int64_t nz, const factz_options* options) {
  return decompress3d_masked(src, src_size, u, v, w, nullptr, nx, ny, nz, options);
}

factz_status factz_decompress3d_masked_f64(const void* src, size_t src_size, double* u, double* v, double* w,
                                           uint8_t* mask_out, int64_t nx, int64_t ny, int64_t nz,
                                           const factz_options* options) {
  return decompress3d_masked(src, src_size, u, v, w, mask_out, nx, ny, nz, options);
}

factz_status factz_count_critical_points3d_f64(const double* u, const double* v, const double* w, int64_t nx,
                                               int64_t ny, int64_t nz, const factz_options* options,
                                               int64_t* count) {
  return count_critical_points3d_masked(u, v, w, nullptr, nx, ny, nz, options, count);
}

factz_status factz_count_critical_points3d_masked_f64(const double* u, const double* v, const double* w,
                                                      const uint8_t* mask, int64_t nx, int64_t ny, int64_t nz,
                                                      const factz_options* options, int64_t* count) {
  return count_critical_points3d_masked(u, v, w, mask, nx, ny, nz, options, count);
}

factz_status factz_compare3d_sized_f64(const double* u, const double* v, const double* w, const double* u2,
                                       const double* v2, const double* w2, int64_t nx, int64_t ny, int64_t nz,
                                       const factz_options* options, factz_comparison3d* result,
                                       size_t result_size) {
  return compare3d_masked(u, v, w, nullptr, u2, v2, w2, nullptr, nx, ny, nz, options, result, result_size,
                          "factz_compare3d_f64 or factz_compare3d_masked_f64");
}

factz_status factz_compare3d_masked_sized_f64(const double* u, const double* v, const double* w,
                                              const uint8_t* mask, const double* u2, const double* v2,
                                              const double* w2, const uint8_t* mask2, int64_t nx, int64_t ny,
                                              int64_t nz, const factz_options* options, factz_comparison3d* result,
                                              size_t result_size) {
  return compare3d_masked(u, v, w, mask, u2, v2, w2, mask2, nx, ny, nz, options, result, result_size,
                          "factz_compare3d_f64 or factz_compare3d_masked_f64");
}

}  // extern "C"
