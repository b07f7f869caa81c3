// Policy::cuda: the device checks and the hand-over to the device backend (device_backend.hpp).
// factz::compress, decompress and decompress_into (compress.cpp) call in here first when
// their options ask for the GPU, so every caller (C API, Python, the HDF5 filter, the CLI,
// MPI ranks) reaches the GPU through its options alone.
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>

#include "api/device_backend.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "streams/mask_sections.hpp"
#include "streams/vector_stream.hpp"

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

constexpr const char* kNoMasks =
    "policy cuda: fields with missing vertices (a mask, NaN or a fill value) are not supported by the CUDA "
    "backend yet; use policy omp";

/// stream_dims, refusing a masked stream (the device decoder does not lay mask sections).
Result<std::pair<int64_t, int64_t>> device_stream_dims(std::span<const uint8_t> stream) {
  auto parsed = parse_vector_stream(stream);
  if (!parsed.ok()) return parsed.status();
  auto masked = stream_has_mask(parsed.value());
  if (!masked.ok()) return masked.status();
  if (masked.value()) return Status(Code::backend_unavailable, kNoMasks);
  return std::pair<int64_t, int64_t>{int64_t(parsed->header.nx), int64_t(parsed->header.ny)};
}

}  // namespace

Result<std::vector<uint8_t>> compress_on_device(const VectorField2D& field, const Options& o,
                                                CompressStats* stats) try {
  const auto t0 = std::chrono::steady_clock::now();
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  if (field.u.size() == size_t(field.size()) && field.v.size() == size_t(field.size()) &&
      !missing_mask(field).empty())
    return Status(Code::backend_unavailable, kNoMasks);
  auto [backend, device] = picked.value();
  auto stream = backend->compress(field, o, device);
  if (!stream.ok() || !stats) return stream;
  // The device pipeline reports no counts; the bound used is in the stream's header.
  CompressStats st;
  auto parsed = parse_container(stream.value());
  if (parsed.ok()) st.eb_abs = parsed->header.eb;
  st.stage_seconds.emplace_back("device",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  *stats = std::move(st);
  return stream;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                    std::to_string(field.ny) + " field on the GPU");
}

Status decompress_into_on_device(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                 const DecompressOptions& o) try {
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  auto dims = device_stream_dims(stream);
  if (!dims.ok()) return dims.status();
  const int64_t n = dims->first * dims->second;
  if (int64_t(u.size()) != n || int64_t(v.size()) != n)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(n) + " values");
  return picked->first->decompress_into(stream, u, v, picked->second);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory decompressing on the GPU");
}

Result<VectorField2D> decompress_on_device(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  auto picked = pick(o.device);
  if (!picked.ok()) return picked.status();
  auto dims = device_stream_dims(stream);
  if (!dims.ok()) return dims.status();
  VectorField2D f;
  f.nx = dims->first;
  f.ny = dims->second;
  f.u.resize(size_t(f.size()));
  f.v.resize(size_t(f.size()));
  FACTZ_RETURN_IF_ERROR(picked->first->decompress_into(stream, f.u, f.v, picked->second));
  return f;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory decompressing on the GPU");
}

}  // namespace factz::detail
