// The C API (include/factz/factz.h) over the C++ API: argument checks, conversions of the
// plain option struct, and the per-thread error message (shared with the 3D entry points of
// c_api3d.cpp through c_api_internal.hpp). No exception leaves this file.
#include "factz/factz.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <utility>
#include <limits>
#include <new>
#include <string>

#include "c_api_internal.hpp"
#include "factz/factz.hpp"
#include "factz/topology.hpp"

namespace factz::capi {

thread_local std::string g_last_error;

namespace {

factz::Policy policy_of(int threads) { return threads == 1 ? factz::Policy::serial : factz::Policy::omp; }

/// Whether the caller's struct (struct_size bytes) reaches the member at `offset` of `size` bytes.
bool holds(const factz_options* in, size_t offset, size_t size) { return in->struct_size >= offset + size; }

}  // namespace

factz_status fail(factz_status s, std::string message) {
  g_last_error = std::string(factz_status_name(s)) + ": " + std::move(message);
  return s;
}

factz_status from_status(const factz::Status& st) {
  if (st.ok()) {
    g_last_error.clear();
    return FACTZ_OK;
  }
  g_last_error = st.to_string();
  return factz_status(int(st.code()));
}

/// sizeof(factz_options) of C API 1.0.0 (it ended with anchor_stride): the smallest accepted.
constexpr size_t kOptionsSize100 = offsetof(factz_options, policy);
static_assert(sizeof(void*) != 8 || kOptionsSize100 == 48, "the 1.0.0 layout of factz_options must not change");
/// sizeof(factz_options) of C API 1.1.0 (it ended with device).
constexpr size_t kOptionsSize110 = offsetof(factz_options, has_fill_u);
static_assert(sizeof(void*) != 8 || kOptionsSize110 == 56, "the 1.1.0 layout of factz_options must not change");
constexpr size_t kOptionsSize120 = offsetof(factz_options, progress);
static_assert(sizeof(void*) != 8 || kOptionsSize120 == 72, "the 1.2.0 layout of factz_options must not change");
/// sizeof(factz_options) of C API 1.3.0 (it ended with progress_user).
constexpr size_t kOptionsSize130 = offsetof(factz_options, has_fill_u64);
static_assert(sizeof(void*) != 8 || kOptionsSize130 == 88, "the 1.3.0 layout of factz_options must not change");
/// sizeof(factz_options) of C API 1.4.0 to 1.7.0 (it ended with fill_v64).
constexpr size_t kOptionsSize140 = offsetof(factz_options, has_fill_w);
static_assert(sizeof(void*) != 8 || kOptionsSize140 == 112, "the 1.4.0 layout of factz_options must not change");
static_assert(sizeof(void*) != 8 || sizeof(factz_options) == 136, "1.8.0 appends four members (24 bytes)");
static_assert(FACTZ_FORMAT_VERSION == 13, "FACTZ_FORMAT_VERSION is the newest format version (docs/format.md)");
static_assert(FACTZ_DTYPE_FLOAT32 == int(factz::DType::float32) && FACTZ_DTYPE_FLOAT64 == int(factz::DType::float64),
              "factz_dtype values equal factz::DType");

/// The execution settings: policy (1.1.0: when the struct holds it), threads and device.
factz_status execution_of(const factz_options* in, factz::Policy& policy, int& threads, int& device) {
  if (in->threads < 0) return fail(FACTZ_INVALID_ARGUMENT, "threads must be >= 0");
  threads = in->threads;
  policy = policy_of(in->threads);
  if (!holds(in, offsetof(factz_options, policy), sizeof in->policy)) return FACTZ_OK;
  if (in->policy == FACTZ_POLICY_SERIAL) policy = factz::Policy::serial;
  else if (in->policy == FACTZ_POLICY_CUDA) policy = factz::Policy::cuda;
  else if (in->policy != FACTZ_POLICY_OMP)
    return fail(FACTZ_INVALID_ARGUMENT, "unknown policy " + std::to_string(in->policy) +
                                            " (FACTZ_POLICY_SERIAL 0, FACTZ_POLICY_OMP 1, FACTZ_POLICY_CUDA 2)");
  if (holds(in, offsetof(factz_options, device), sizeof in->device)) device = in->device;
  return FACTZ_OK;
}

/// Rejects a struct too small for the 1.0.0 members (not initialized by factz_options_init).
factz_status check_struct_size(const factz_options* in) {
  if (in->struct_size >= kOptionsSize100) return FACTZ_OK;
  return fail(FACTZ_INVALID_ARGUMENT, "factz_options.struct_size is " + std::to_string(in->struct_size) +
                                          "; initialize options with factz_options_init");
}

/// Whether options declare a float32 fill value (1.2.0 members, when the struct holds them).
bool declares_float32_fill(const factz_options* in) {
  return in && holds(in, offsetof(factz_options, fill_v), sizeof in->fill_v) && (in->has_fill_u || in->has_fill_v);
}

/// Whether options declare a float64 fill value (1.4.0 members, when the struct holds them).
bool declares_float64_fill(const factz_options* in) {
  return in && holds(in, offsetof(factz_options, fill_v64), sizeof in->fill_v64) &&
         (in->has_fill_u64 || in->has_fill_v64);
}

/// Whether options declare a float32 fill value of w (1.8.0 members, when the struct holds them).
bool declares_float32_fill_w(const factz_options* in) {
  return in && holds(in, offsetof(factz_options, fill_w), sizeof in->fill_w) && in->has_fill_w;
}

/// Whether options declare a float64 fill value of w (1.8.0 members, when the struct holds them).
bool declares_float64_fill_w(const factz_options* in) {
  return in && holds(in, offsetof(factz_options, fill_w64), sizeof in->fill_w64) && in->has_fill_w64;
}

/// The threads of the analysis calls (compare, critical points): options' (NULL: the OpenMP
/// default); policy and device play no part in them.
factz_status analysis_threads(const factz_options* in, int& threads) {
  threads = 0;
  if (!in) return FACTZ_OK;
  if (factz_status s = check_struct_size(in); s != FACTZ_OK) return s;
  if (in->threads < 0) return fail(FACTZ_INVALID_ARGUMENT, "threads must be >= 0");
  threads = in->threads;
  return FACTZ_OK;
}

factz_status options_of(const factz_options* in, factz::Options& o) {
  if (!in) return FACTZ_OK;
  if (factz_status s = check_struct_size(in); s != FACTZ_OK) return s;
  if (in->mode < 0 || in->mode > 2) return fail(FACTZ_INVALID_ARGUMENT, "unknown mode " + std::to_string(in->mode));
  if (in->coder < 0 || in->coder > 1)
    return fail(FACTZ_INVALID_ARGUMENT, "unknown coder " + std::to_string(in->coder));
  if (in->bound_mode < 0 || in->bound_mode > 1)
    return fail(FACTZ_INVALID_ARGUMENT, "unknown bound mode " + std::to_string(in->bound_mode));
  if (factz_status s = execution_of(in, o.policy, o.threads, o.device); s != FACTZ_OK) return s;
  o.mode = factz::Mode(in->mode);
  o.coder = factz::Coder(in->coder);
  o.bound_mode = factz::BoundMode(in->bound_mode);
  o.bound = in->bound;
  o.zstd = in->zstd != 0;
  o.anchor_stride = in->anchor_stride;
  if (holds(in, offsetof(factz_options, progress_user), sizeof in->progress_user) && in->progress) {
    auto* report = in->progress;
    void* user = in->progress_user;
    o.progress = [report, user](const factz::Progress& p) { report(std::string(p.stage).c_str(), p.fraction, user); };
  }
  return FACTZ_OK;
}

}  // namespace factz::capi

using namespace factz::capi;

namespace {

/// nx * ny when both are >= 1 and the product stays below 2^40 (the format's limit).
bool grid_size(int64_t nx, int64_t ny, int64_t& n) {
  constexpr int64_t kMax = int64_t(1) << 40;
  if (nx < 1 || ny < 1 || nx > kMax || ny > kMax / nx) return false;
  n = nx * ny;
  return true;
}

/// sizeof(factz_comparison) of C API 1.1.0 (it ended with value_range): the smallest accepted.
constexpr size_t kComparisonSize110 = offsetof(factz_comparison, masked_vertices);
static_assert(kComparisonSize110 == 88, "the 1.1.0 layout of factz_comparison must not change");

/// What differs between the float32 and the float64 entry points: the field and fill value
/// types, the stream data type each decodes, and the C functions that decode the other.
template <class T>
struct Precision;
template <>
struct Precision<float> {
  using Field = factz::VectorField2D;
  using Fill = factz::FillValues;
  static constexpr factz::DType kDType = factz::DType::float32;
  static constexpr const char* kDecoders =
      "factz_decompress, factz_decompress_with_options or factz_decompress_masked (float planes)";
};
template <>
struct Precision<double> {
  using Field = factz::VectorField2D64;
  using Fill = factz::FillValues64;
  static constexpr factz::DType kDType = factz::DType::float64;
  static constexpr const char* kDecoders =
      "factz_decompress_f64, factz_decompress_with_options_f64 or factz_decompress_masked_f64 (double planes)";
};

/// A 2D field has no w: a fill value declared for it (1.8.0) is refused rather than ignored,
/// so that a caller never believes it marked vertices it did not.
factz_status refuse_fill_w(const factz_options* in) {
  if (!declares_float32_fill_w(in) && !declares_float64_fill_w(in)) return FACTZ_OK;
  return fail(FACTZ_INVALID_ARGUMENT,
              "has_fill_w / has_fill_w64 declare fill values of w, the third component of 3D fields; a 2D field "
              "has only u and v");
}

/// The fill values of options for float32 fields (has_fill_u / fill_u ...; none for NULL
/// options). Float64 fill values are refused: a double rounded to float rarely equals the
/// data, and the C API never rounds silently.
factz_status fill_of(const factz_options* in, factz::FillValues& fill) {
  if (factz_status s = refuse_fill_w(in); s != FACTZ_OK) return s;
  if (declares_float64_fill(in))
    return fail(FACTZ_INVALID_ARGUMENT,
                "has_fill_u64 / has_fill_v64 declare float64 fill values, read by the _f64 functions; declare a "
                "float32 field's fill values with has_fill_u / fill_u and has_fill_v / fill_v");
  if (!declares_float32_fill(in)) return FACTZ_OK;
  if (in->has_fill_u) fill.u = in->fill_u;
  if (in->has_fill_v) fill.v = in->fill_v;
  return FACTZ_OK;
}

/// The fill values of options for float64 fields (has_fill_u64 / fill_u64 ..., 1.4.0),
/// compared with the doubles as they are; float32 fill values are refused (a float widened
/// to double is not the double fill value it was rounded from: 1e20f is not 1e20).
factz_status fill_of(const factz_options* in, factz::FillValues64& fill) {
  if (factz_status s = refuse_fill_w(in); s != FACTZ_OK) return s;
  if (declares_float32_fill(in))
    return fail(FACTZ_INVALID_ARGUMENT,
                "has_fill_u / has_fill_v declare float32 fill values; declare a float64 field's fill values with "
                "has_fill_u64 / fill_u64 and has_fill_v64 / fill_v64");
  if (!declares_float64_fill(in)) return FACTZ_OK;
  if (in->has_fill_u64) fill.u = in->fill_u64;
  if (in->has_fill_v64) fill.v = in->fill_v64;
  return FACTZ_OK;
}

/// The field (u, v), its mask (NULL: none) and the declared fill values marked in its mask.
template <class T>
factz_status field_of(const T* u, const T* v, const uint8_t* mask, int64_t nx, int64_t ny,
                      const typename Precision<T>::Fill& fill, typename Precision<T>::Field& f) {
  int64_t n = 0;
  if (!grid_size(nx, ny, n))
    return fail(FACTZ_INVALID_ARGUMENT, "grid " + std::to_string(nx) + "x" + std::to_string(ny) +
                                            " is empty, negative or larger than 2^40 vertices");
  if (!u || !v) return fail(FACTZ_INVALID_ARGUMENT, "null field plane");
  f.nx = nx;
  f.ny = ny;
  f.u.assign(u, u + n);
  f.v.assign(v, v + n);
  if (mask) f.mask.assign(mask, mask + n);
  if (fill.any()) factz::mark_missing(f, fill);
  return FACTZ_OK;
}

/// The comparison as the C struct: the first result_size bytes of it (the members the
/// caller's struct has).
void write_comparison(const factz::Comparison& c, factz_comparison* result, size_t result_size) {
  factz_comparison r;
  std::memset(&r, 0, sizeof r);
  r.cp_original = c.cp_original;
  r.cp_decompressed = c.cp_decompressed;
  r.lost = c.lost;
  r.spurious = c.spurious;
  r.type_changed = c.type_changed;
  r.max_abs_error_u = c.max_abs_error[0];
  r.max_abs_error_v = c.max_abs_error[1];
  r.rmse = c.rmse;
  r.nrmse = c.nrmse;
  r.psnr = c.psnr;
  r.value_range = c.value_range;
  r.masked_vertices = c.masked_vertices;
  r.mask_mismatch = c.mask_mismatch;
  std::memcpy(result, &r, std::min(result_size, sizeof r));
}

// The bodies of the entry points, once for float (factz_*) and double (factz_*_f64).

template <class T>
factz_status compress_masked(const T* u, const T* v, const uint8_t* mask, int64_t nx, int64_t ny,
                             const factz_options* options, void* dst, size_t dst_capacity, size_t* out_size) {
  return guarded([&]() -> factz_status {
    if (!out_size) return fail(FACTZ_INVALID_ARGUMENT, "out_size is null");
    if (!dst && dst_capacity > 0) return fail(FACTZ_INVALID_ARGUMENT, "dst is null but dst_capacity > 0");
    factz::Options o;
    if (factz_status s = options_of(options, o); s != FACTZ_OK) return s;
    typename Precision<T>::Fill fill;
    if (factz_status s = fill_of(options, fill); s != FACTZ_OK) return s;
    typename Precision<T>::Field f;
    if (factz_status s = field_of(u, v, mask, nx, ny, fill, f); s != FACTZ_OK) return s;
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

/// Decodes into caller planes of T after checking that the stream holds fields of T and of
/// the planes' grid (a stream of the other type names the functions that decode it).
template <class T>
factz_status decompress_masked(const void* src, size_t src_size, T* u, T* v, uint8_t* mask_out, int64_t nx,
                               int64_t ny, const factz_options* options) {
  return guarded([&]() -> factz_status {
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    int64_t n = 0;
    if (!grid_size(nx, ny, n)) return fail(FACTZ_INVALID_ARGUMENT, "output grid is empty or too large");
    if (!u || !v) return fail(FACTZ_INVALID_ARGUMENT, "null output plane");
    factz::DecompressOptions d;
    if (options) {
      if (factz_status s = check_struct_size(options); s != FACTZ_OK) return s;
      if (factz_status s = execution_of(options, d.policy, d.threads, d.device); s != FACTZ_OK) return s;
    }
    const auto* p = static_cast<const uint8_t*>(src);
    const std::span<const uint8_t> stream(p, src_size);
    auto info = factz::stream_info(stream);
    if (!info.ok()) return status_of_2d_read(stream, info.status());
    if (info->dtype != Precision<T>::kDType) {
      const char* other = info->dtype == factz::DType::float64 ? Precision<double>::kDecoders
                                                               : Precision<float>::kDecoders;
      return fail(FACTZ_INVALID_ARGUMENT, std::string("the stream holds ") + factz::dtype_name(info->dtype) +
                                              " fields; decode it with " + other);
    }
    if (info->nx != nx || info->ny != ny)
      return fail(FACTZ_INVALID_ARGUMENT, "the stream holds a " + std::to_string(info->nx) + "x" +
                                              std::to_string(info->ny) + " field, the output planes are " +
                                              std::to_string(nx) + "x" + std::to_string(ny));
    const std::span<T> pu(u, size_t(n)), pv(v, size_t(n));
    if (!mask_out) return from_status(factz::decompress_into(stream, pu, pv, d));
    return from_status(factz::decompress_into(stream, pu, pv, std::span<uint8_t>(mask_out, size_t(n)), d));
  });
}

template <class T>
factz_status compare_masked(const T* u, const T* v, const uint8_t* mask, const T* u2, const T* v2,
                            const uint8_t* mask2, int64_t nx, int64_t ny, const factz_options* options,
                            factz_comparison* result, size_t result_size) {
  return guarded([&]() -> factz_status {
    if (!result) return fail(FACTZ_INVALID_ARGUMENT, "result is null");
    if (result_size < kComparisonSize110)
      return fail(FACTZ_INVALID_ARGUMENT, "the factz_comparison size is " + std::to_string(result_size) +
                                              "; call factz_compare or factz_compare_masked");
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    typename Precision<T>::Fill fill;
    if (factz_status s = fill_of(options, fill); s != FACTZ_OK) return s;
    typename Precision<T>::Field a, b;
    if (factz_status s = field_of(u, v, mask, nx, ny, fill, a); s != FACTZ_OK) return s;
    if (factz_status s = field_of(u2, v2, mask2, nx, ny, fill, b); s != FACTZ_OK) return s;
    auto c = factz::compare(a, b, factz::Exec{threads});
    if (!c.ok()) return from_status(c.status());
    write_comparison(*c, result, result_size);
    g_last_error.clear();
    return FACTZ_OK;
  });
}

/// factz_compare(_sized): the threads as options' (negative: invalid_argument).
template <class T>
factz_status compare_plain(const T* u, const T* v, const T* u2, const T* v2, int64_t nx, int64_t ny, int threads,
                           factz_comparison* result, size_t result_size) {
  if (threads < 0) return fail(FACTZ_INVALID_ARGUMENT, "threads must be >= 0");
  factz_options o;
  factz_options_init(&o);
  o.threads = threads;
  return compare_masked(u, v, nullptr, u2, v2, nullptr, nx, ny, &o, result, result_size);
}

template <class T>
factz_status count_critical_points_masked(const T* u, const T* v, const uint8_t* mask, int64_t nx, int64_t ny,
                                          const factz_options* options, int64_t* count) {
  return guarded([&]() -> factz_status {
    if (!count) return fail(FACTZ_INVALID_ARGUMENT, "count is null");
    int threads = 0;
    if (factz_status s = analysis_threads(options, threads); s != FACTZ_OK) return s;
    typename Precision<T>::Fill fill;
    if (factz_status s = fill_of(options, fill); s != FACTZ_OK) return s;
    typename Precision<T>::Field f;
    if (factz_status s = field_of(u, v, mask, nx, ny, fill, f); s != FACTZ_OK) return s;
    auto cps = factz::critical_points(f, factz::Exec{threads});
    if (!cps.ok()) return from_status(cps.status());
    *count = int64_t(cps->size());
    g_last_error.clear();
    return FACTZ_OK;
  });
}

template <class T>
factz_status count_critical_points_plain(const T* u, const T* v, int64_t nx, int64_t ny, int threads,
                                         int64_t* count) {
  if (threads < 0) return fail(FACTZ_INVALID_ARGUMENT, "threads must be >= 0");
  factz_options o;
  factz_options_init(&o);
  o.threads = threads;
  return count_critical_points_masked(u, v, nullptr, nx, ny, &o, count);
}

/// factz_decompress(_f64): factz_decompress_masked with the default options and `threads`.
template <class T>
factz_status decompress_plain(const void* src, size_t src_size, T* u, T* v, int64_t nx, int64_t ny, int threads) {
  factz_options o;
  factz_options_init(&o);
  o.threads = threads;
  return decompress_masked(src, src_size, u, v, nullptr, nx, ny, &o);
}

}  // namespace

extern "C" {

void factz_options_init_sized(factz_options* options, size_t size) {
  if (!options || size < kOptionsSize100) return;
  size = std::min(size, sizeof(factz_options));  // members of a later, longer struct are not this library's
  const factz::Options d;
  factz_options o;
  std::memset(&o, 0, sizeof o);
  o.struct_size = size;
  o.mode = int(d.mode);
  o.coder = int(d.coder);
  o.bound_mode = int(d.bound_mode);
  o.bound = d.bound;
  o.zstd = d.zstd ? 1 : 0;
  o.threads = 0;
  o.anchor_stride = d.anchor_stride;
  o.policy = FACTZ_POLICY_OMP;
  o.device = d.device;
  o.has_fill_u = 0;  // no fill value: only NaN and a mask mark vertices missing
  o.fill_u = 0.0f;
  o.has_fill_v = 0;
  o.fill_v = 0.0f;
  o.progress = nullptr;
  o.progress_user = nullptr;
  o.has_fill_u64 = 0;  // nor a float64 one
  o.has_fill_v64 = 0;
  o.fill_u64 = 0.0;
  o.fill_v64 = 0.0;
  o.has_fill_w = 0;  // nor one of w (1.8.0)
  o.fill_w = 0.0f;
  o.has_fill_w64 = 0;
  o.fill_w64 = 0.0;
  std::memcpy(options, &o, size);  // only the bytes the caller's struct has
}

// The 1.0.0 entry point (programs built before factz_options_init became a macro).
void(factz_options_init)(factz_options* options) { factz_options_init_sized(options, kOptionsSize100); }

const char* factz_version_string(void) { return FACTZ_VERSION_STRING; }

int factz_c_api_version(void) { return FACTZ_C_API_VERSION; }

const char* factz_status_name(factz_status status) {
  if (status == FACTZ_BUFFER_TOO_SMALL) return "buffer_too_small";
  if (int(status) < 0 || int(status) > 7) return "unknown_status";
  return factz::code_name(factz::Code(int(status)));
}

const char* factz_last_error(void) { return g_last_error.c_str(); }

size_t factz_compress_bound(int64_t nx, int64_t ny) {
  // Header, section table and every section's fixed part (codebooks, frequency and chunk
  // tables) fit in 1 MiB; per vertex at most 72 bytes (see docs/python.md, "Size bound").
  int64_t n = 0;
  if (!grid_size(nx, ny, n)) return 0;
  constexpr uint64_t kFixed = uint64_t(1) << 20;
  constexpr uint64_t kPerVertex = 72;
  const uint64_t bound = kFixed + kPerVertex * uint64_t(n);  // n <= 2^40: no overflow
  if (bound > uint64_t(std::numeric_limits<size_t>::max())) return 0;
  return size_t(bound);
}

factz_status factz_compress(const float* u, const float* v, int64_t nx, int64_t ny, const factz_options* options,
                            void* dst, size_t dst_capacity, size_t* out_size) {
  return compress_masked(u, v, nullptr, nx, ny, options, dst, dst_capacity, out_size);
}

factz_status factz_compress_masked(const float* u, const float* v, const uint8_t* mask, int64_t nx, int64_t ny,
                                   const factz_options* options, void* dst, size_t dst_capacity,
                                   size_t* out_size) {
  return compress_masked(u, v, mask, nx, ny, options, dst, dst_capacity, out_size);
}

factz_status factz_stream_dims(const void* src, size_t src_size, int64_t* nx, int64_t* ny) {
  return guarded([&]() -> factz_status {
    if (!nx || !ny) return fail(FACTZ_INVALID_ARGUMENT, "nx or ny is null");
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    const std::span<const uint8_t> stream(static_cast<const uint8_t*>(src), src_size);
    auto dims = factz::stream_dims(stream);
    if (!dims.ok()) return status_of_2d_read(stream, dims.status());
    *nx = dims->first;
    *ny = dims->second;
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_stream_info(const void* src, size_t src_size, int64_t* nx, int64_t* ny, factz_dtype* dtype) {
  return guarded([&]() -> factz_status {
    if (!nx || !ny || !dtype) return fail(FACTZ_INVALID_ARGUMENT, "nx, ny or dtype is null");
    if (!src && src_size > 0) return fail(FACTZ_INVALID_ARGUMENT, "src is null but src_size > 0");
    const std::span<const uint8_t> stream(static_cast<const uint8_t*>(src), src_size);
    auto info = factz::stream_info(stream);
    if (!info.ok()) return status_of_2d_read(stream, info.status());
    *nx = info->nx;
    *ny = info->ny;
    *dtype = factz_dtype(int(info->dtype));
    g_last_error.clear();
    return FACTZ_OK;
  });
}

factz_status factz_decompress(const void* src, size_t src_size, float* u, float* v, int64_t nx, int64_t ny,
                              int threads) {
  return decompress_plain(src, src_size, u, v, nx, ny, threads);
}

factz_status factz_decompress_with_options(const void* src, size_t src_size, float* u, float* v, int64_t nx,
                                           int64_t ny, const factz_options* options) {
  return decompress_masked(src, src_size, u, v, nullptr, nx, ny, options);
}

factz_status factz_decompress_masked(const void* src, size_t src_size, float* u, float* v, uint8_t* mask_out,
                                     int64_t nx, int64_t ny, const factz_options* options) {
  return decompress_masked(src, src_size, u, v, mask_out, nx, ny, options);
}

factz_status factz_compare_masked_sized(const float* u, const float* v, const uint8_t* mask, const float* u2,
                                        const float* v2, const uint8_t* mask2, int64_t nx, int64_t ny,
                                        const factz_options* options, factz_comparison* result,
                                        size_t result_size) {
  return compare_masked(u, v, mask, u2, v2, mask2, nx, ny, options, result, result_size);
}

factz_status factz_compare_sized(const float* u, const float* v, const float* u2, const float* v2, int64_t nx,
                                 int64_t ny, int threads, factz_comparison* result, size_t result_size) {
  return compare_plain(u, v, u2, v2, nx, ny, threads, result, result_size);
}

// The 1.0.0 / 1.1.0 entry point (programs built before factz_compare became a macro).
factz_status(factz_compare)(const float* u, const float* v, const float* u2, const float* v2, int64_t nx,
                            int64_t ny, int threads, factz_comparison* result) {
  return compare_plain(u, v, u2, v2, nx, ny, threads, result, kComparisonSize110);
}

factz_status factz_count_critical_points(const float* u, const float* v, int64_t nx, int64_t ny, int threads,
                                         int64_t* count) {
  return count_critical_points_plain(u, v, nx, ny, threads, count);
}

factz_status factz_count_critical_points_masked(const float* u, const float* v, const uint8_t* mask, int64_t nx,
                                                int64_t ny, const factz_options* options, int64_t* count) {
  return count_critical_points_masked(u, v, mask, nx, ny, options, count);
}

// float64 fields (1.4.0): the same bodies on doubles.

factz_status factz_compress_f64(const double* u, const double* v, int64_t nx, int64_t ny,
                                const factz_options* options, void* dst, size_t dst_capacity, size_t* out_size) {
  return compress_masked(u, v, nullptr, nx, ny, options, dst, dst_capacity, out_size);
}

factz_status factz_compress_masked_f64(const double* u, const double* v, const uint8_t* mask, int64_t nx,
                                       int64_t ny, const factz_options* options, void* dst, size_t dst_capacity,
                                       size_t* out_size) {
  return compress_masked(u, v, mask, nx, ny, options, dst, dst_capacity, out_size);
}

factz_status factz_decompress_f64(const void* src, size_t src_size, double* u, double* v, int64_t nx, int64_t ny,
                                  int threads) {
  return decompress_plain(src, src_size, u, v, nx, ny, threads);
}

factz_status factz_decompress_with_options_f64(const void* src, size_t src_size, double* u, double* v,
                                               int64_t nx, int64_t ny, const factz_options* options) {
  return decompress_masked(src, src_size, u, v, nullptr, nx, ny, options);
}

factz_status factz_decompress_masked_f64(const void* src, size_t src_size, double* u, double* v,
                                         uint8_t* mask_out, int64_t nx, int64_t ny, const factz_options* options) {
  return decompress_masked(src, src_size, u, v, mask_out, nx, ny, options);
}

factz_status factz_compare_sized_f64(const double* u, const double* v, const double* u2, const double* v2,
                                     int64_t nx, int64_t ny, int threads, factz_comparison* result,
                                     size_t result_size) {
  return compare_plain(u, v, u2, v2, nx, ny, threads, result, result_size);
}

factz_status factz_compare_masked_sized_f64(const double* u, const double* v, const uint8_t* mask,
                                            const double* u2, const double* v2, const uint8_t* mask2,
                                            int64_t nx, int64_t ny, const factz_options* options,
                                            factz_comparison* result, size_t result_size) {
  return compare_masked(u, v, mask, u2, v2, mask2, nx, ny, options, result, result_size);
}

factz_status factz_count_critical_points_f64(const double* u, const double* v, int64_t nx, int64_t ny,
                                             int threads, int64_t* count) {
  return count_critical_points_plain(u, v, nx, ny, threads, count);
}

factz_status factz_count_critical_points_masked_f64(const double* u, const double* v, const uint8_t* mask,
                                                    int64_t nx, int64_t ny, const factz_options* options,
                                                    int64_t* count) {
  return count_critical_points_masked(u, v, mask, nx, ny, options, count);
}

}  // extern "C"
