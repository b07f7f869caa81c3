// Policy::cuda: the device checks and the hand-over to the device backend (device_backend.hpp).
// factz::compress, decompress, decompress64 and decompress_into, float32 and float64 alike
// (compress.cpp), call in here first when their options ask for the GPU, so every caller (C
// API, Python, the HDF5 filter, the CLI, MPI ranks) reaches the GPU through its options alone.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>

#include "api/device_backend.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "streams/mask_sections.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"

#if FACTZ_CUDA_BACKEND
namespace factz::cuda_detail {
const detail::DeviceBackend& cuda_backend();  // src/backend/cuda/cuda_api.cu
}  // namespace factz::cuda_detail
#endif

namespace factz::detail {

namespace {

const DeviceBackend* built_in_backend() {
#if FACTZ_CUDA_BACKEND
  return &cuda_detail::cuda_backend();
#else
  return nullptr;
#endif
}

const DeviceBackend*& current_backend() {
  static const DeviceBackend* b = built_in_backend();
  return b;
}

/// The backend and the resolved device for `requested`, or why Policy::cuda cannot run.
/// An ordinal below kDeviceAuto is the caller's error on every build; the rest needs the
/// backend and a device.
Result<std::pair<const DeviceBackend*, int>> pick(int requested) {
  if (requested < kDeviceAuto)
    return invalid_argument("policy cuda: device must be an ordinal >= 0 or kDeviceAuto (-1), got " +
                            std::to_string(requested));
  const DeviceBackend* b = device_backend();
  if (!b)
    return Status(Code::backend_unavailable,
                  "policy cuda: this build has no CUDA backend (configure with -DFACTZ_CUDA=ON and nvcc)");
  auto count = b->device_count();
  if (!count.ok())
    return Status(Code::backend_unavailable, "policy cuda: " + count.status().message());
  if (count.value() < 1) return Status(Code::backend_unavailable, "policy cuda: no CUDA device");
  auto device = resolve_device(requested, count.value());
  if (!device.ok()) return device.status();
  return std::pair<const DeviceBackend*, int>{b, device.value()};
}

}  // namespace

const DeviceBackend* device_backend() { return current_backend(); }

const DeviceBackend* set_device_backend_for_testing(const DeviceBackend* backend) {
  const DeviceBackend* previous = current_backend();
  current_backend() = backend;
  return previous;
}

int launcher_local_rank() {
  // Open MPI, MVAPICH2, MPICH (Hydra), Slurm, PMIx-era PMI, Cray PALS.
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank <= 1 << 24) return int(rank);
  }
  return 0;
}

Result<int> resolve_device(int requested, int count) {
  if (requested == kDeviceAuto) return launcher_local_rank() % count;
  if (requested < 0 || requested >= count)
    return invalid_argument("policy cuda: device " + std::to_string(requested) + " does not exist: " +
                            std::to_string(count) + (count == 1 ? " CUDA device (0)" : " CUDA devices (0.." +
                            std::to_string(count - 1) + ")"));
  return requested;
}

namespace {

// Float32 and float64 alike: each entry point below is one template on the value type T
// (Field its field type), with a public overload per type.

/// stream_dims of a stream checked on the host before the backend sees it, whose data
/// type must be T's (a float64 stream given to the float32 calls, or the reverse, is
/// invalid_argument naming the call to use, as on the CPU).
template <class T>
Result<std::pair<int64_t, int64_t>> device_stream_dims(std::span<const uint8_t> stream) {
  auto parsed = parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  FACTZ_RETURN_IF_ERROR(require_dtype(parsed->header, std::is_same_v<T, double> ? kDtypeFloat64 : kDtypeFloat32));
  return std::pair<int64_t, int64_t>{int64_t(parsed->header.nx), int64_t(parsed->header.ny)};
}

/// A backend table without the float64 entries cannot take float64 fields or streams.
Status float64_entries(const DeviceBackend& b) {
  if (b.compress64 && b.decompress_into64) return Status::Ok();
  return Status(Code::backend_unavailable, "policy cuda: the device backend takes no float64 fields or streams");
}

Result<std::vector<uint8_t>> backend_compress(const DeviceBackend& b, const VectorField2D& field, const Options& o,
                                              int device) {
  return b.compress(field, o, device);
}
Result<std::vector<uint8_t>> backend_compress(const DeviceBackend& b, const VectorField2D64& field, const Options& o,
                                              int device) {
  FACTZ_RETURN_IF_ERROR(float64_entries(b));
  return b.compress64(field, o, device);
}

/// The backend's decode into u, v on `device`, and with `mask` the stream's mask (left
/// empty for a stream without missing vertices): the backend's when it hands it over, else
/// read here.
Status backend_decode(const DeviceBackend& b, std::span<const uint8_t> stream, std::span<float> u,
                      std::span<float> v, int device, std::vector<uint8_t>* mask) {
  if (!mask) return b.decompress_into(stream, u, v, device);
  mask->clear();
  if (b.decompress_into_with_mask) return b.decompress_into_with_mask(stream, u, v, device, mask);
  FACTZ_RETURN_IF_ERROR(b.decompress_into(stream, u, v, device));
  auto parsed = parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  auto masked = stream_has_mask(parsed.value());
  if (!masked.ok()) return masked.status();
  if (!masked.value()) return Status::Ok();
  return read_mask(stream, parsed.value(), int64_t(parsed->header.nx), int64_t(parsed->header.ny), *mask);
}
Status backend_decode(const DeviceBackend& b, std::span<const uint8_t> stream, std::span<double> u,
                      std::span<double> v, int device, std::vector<uint8_t>* mask) {
  FACTZ_RETURN_IF_ERROR(float64_entries(b));
  if (mask) mask->clear();
  return b.decompress_into64(stream, u, v, device, mask);
}

/// The absolute bound a stream's decoder uses (CompressStats::eb_abs): the header's, or a
/// float64 stream's f64 one from its meta section.
double decoder_bound(std::span<const uint8_t> stream) {
  auto parsed = parse_container(stream);
  if (!parsed.ok()) return 0.0;
  auto eb = detail::stream_bound(stream, parsed.value(), &zstd_stage_decompressor());
  return eb.ok() ? eb.value() : 0.0;
}

template <class Field>
Result<std::vector<uint8_t>> compress_on_device_any(const Field& field, const Options& o, CompressStats* stats) try {
  const auto t0 = std::chrono::steady_clock::now();
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  auto [backend, device] = picked.value();
  auto stream = backend_compress(*backend, field, o, device);
  if (!stream.ok() || !stats) return stream;
  // The device pipeline reports no counts but the missing vertices' (the field was valid);
  // the bound used is in the stream.
  CompressStats st;
  st.eb_abs = decoder_bound(stream.value());
  const std::vector<uint8_t> mask = missing_mask(field);
  st.masked_vertices = std::count(mask.begin(), mask.end(), uint8_t(1));
  st.stage_seconds.emplace_back("device",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  *stats = std::move(st);
  return stream;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                    std::to_string(field.ny) + " field on the GPU");
}

template <class T>
Status decompress_into_on_device_any(std::span<const uint8_t> stream, std::span<T> u, std::span<T> v,
                                     const DecompressOptions& o, std::vector<uint8_t>* mask_out) try {
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  auto dims = device_stream_dims<T>(stream);
  if (!dims.ok()) return dims.status();
  const int64_t n = dims->first * dims->second;
  if (int64_t(u.size()) != n || int64_t(v.size()) != n)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(n) + " values");
  std::vector<uint8_t> mask;
  FACTZ_RETURN_IF_ERROR(backend_decode(*picked->first, stream, u, v, picked->second, mask_out ? &mask : nullptr));
  if (mask_out && !mask.empty()) *mask_out = std::move(mask);
  return Status::Ok();
} catch (const std::bad_alloc&) {
  return out_of_memory_decoding(stream, " on the GPU");
}

template <class Field>
Result<Field> decompress_on_device_any(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  using T = typename decltype(Field::u)::value_type;
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  auto dims = device_stream_dims<T>(stream);
  if (!dims.ok()) return dims.status();
  Field f;
  f.nx = dims->first;
  f.ny = dims->second;
  resize_fresh(f.u, size_t(f.size()));
  resize_fresh(f.v, size_t(f.size()));
  // The mask too, as factz::decompress returns it.
  FACTZ_RETURN_IF_ERROR(
      backend_decode(*picked->first, stream, std::span<T>(f.u), std::span<T>(f.v), picked->second, &f.mask));
  return f;
} catch (const std::bad_alloc&) {
  return out_of_memory_decoding(stream, " on the GPU");
}

/// pick for a 3D field or stream: the backend must take 3D fields.
Result<std::pair<const DeviceBackend*, int>> pick3d(int requested) {
  if (requested < kDeviceAuto) return pick(requested);  // the caller's error on every build
  const DeviceBackend* b = device_backend();
  if (!b || !b->compress3d || !b->decompress3d_into)
    return Status(Code::backend_unavailable,
                  "policy cuda: 3D vector fields are compressed on the CPU only (policy serial or omp): this build "
                  "has no CUDA backend for them");
  return pick(requested);
}

}  // namespace

Result<std::vector<uint8_t>> compress3d_on_device(const VectorField3D& field, const Options& o,
                                                  CompressStats* stats) try {
  const auto t0 = std::chrono::steady_clock::now();
  auto picked = pick3d(o.device);
  if (!picked.ok()) return picked.status();
  auto stream = picked->first->compress3d(field, o, picked->second);
  if (!stream.ok() || !stats) return stream;
  // As compress_on_device: the bound used (the header's), the missing vertices and the
  // time; no other counts.
  CompressStats st;
  auto parsed = parse_container(stream.value());
  if (parsed.ok()) st.eb_abs = parsed->header.eb;
  const std::vector<uint8_t> mask = missing_mask(field);
  st.masked_vertices = std::count(mask.begin(), mask.end(), uint8_t(1));
  st.stage_seconds.emplace_back("device",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  *stats = std::move(st);
  return stream;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory compressing a 3D field on the GPU");
}

Result<VectorField3D> decompress3d_on_device(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  auto picked = pick3d(o.device);
  if (!picked.ok()) return picked.status();
  auto dims = stream_dims3d(stream);
  if (!dims.ok()) return dims.status();
  VectorField3D f;
  f.nx = (*dims)[0];
  f.ny = (*dims)[1];
  f.nz = (*dims)[2];
  resize_fresh(f.u, size_t(f.size()));
  resize_fresh(f.v, size_t(f.size()));
  resize_fresh(f.w, size_t(f.size()));
  FACTZ_RETURN_IF_ERROR(picked->first->decompress3d_into(stream, f.u, f.v, f.w, picked->second, &f.mask));
  return f;
} catch (const std::bad_alloc&) {
  return out_of_memory_decoding(stream, " on the GPU");
}

Result<std::vector<uint8_t>> compress_on_device(const VectorField2D& field, const Options& o, CompressStats* stats) {
  return compress_on_device_any(field, o, stats);
}
Result<std::vector<uint8_t>> compress_on_device(const VectorField2D64& field, const Options& o, CompressStats* stats) {
  return compress_on_device_any(field, o, stats);
}

Status decompress_into_on_device(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                 const DecompressOptions& o, std::vector<uint8_t>* mask_out) {
  return decompress_into_on_device_any(stream, u, v, o, mask_out);
}
Status decompress_into_on_device(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v,
                                 const DecompressOptions& o, std::vector<uint8_t>* mask_out) {
  return decompress_into_on_device_any(stream, u, v, o, mask_out);
}

Result<VectorField2D> decompress_on_device(std::span<const uint8_t> stream, const DecompressOptions& o) {
  return decompress_on_device_any<VectorField2D>(stream, o);
}
Result<VectorField2D64> decompress64_on_device(std::span<const uint8_t> stream, const DecompressOptions& o) {
  return decompress_on_device_any<VectorField2D64>(stream, o);
}

}  // namespace factz::detail
