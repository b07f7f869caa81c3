// Policy::cuda behind factz::compress / decompress / decompress_into (docs/architecture.md,
// "CUDA backend", "Dispatch"). The core library never includes a CUDA header: it reaches
// the backend through this table of plain C++ functions, which src/backend/cuda/cuda_api.cu
// fills (cuda::host_backend) in builds with the backend (FACTZ_CUDA_BACKEND, set by the
// top-level CMakeLists.txt on device_dispatch.cpp only). Tests install another table (the
// CPU model of the GPU pipeline, tests/cuda/test_gpu_model.cpp) to check the dispatch on a
// machine without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "factz/field3d.hpp"

namespace factz::detail {

/// A device backend: its entry points take a resolved device ordinal in [0, device_count()).
struct DeviceBackend {
  /// Usable devices: 0 or more, or backend_unavailable with the runtime's reason.
  Result<int> (*device_count)();
  /// factz::compress on `device` (options.policy, threads and device are not read).
  Result<std::vector<uint8_t>> (*compress)(const VectorField2D& field, const Options& options, int device);
  /// factz::decompress_into on `device`: u and v hold exactly nx * ny floats of the stream's grid.
  Status (*decompress_into)(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v, int device);
  /// decompress_into that also hands over the mask the decoder read (*mask: nx * ny bytes,
  /// nonzero = missing; left empty for a stream without missing vertices), so that it is
  /// decoded once. Optional: without it the dispatch reads the stream's mask itself.
  Status (*decompress_into_with_mask)(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                      int device, std::vector<uint8_t>* mask) = nullptr;
  /// float64 (optional: a backend without them answers backend_unavailable for float64
  /// fields and streams): factz::compress of a VectorField2D64 on `device`, and the decode
  /// of a float64 stream into u, v of exactly nx * ny doubles, with the stream's mask into
  /// *mask when mask is not null (left empty for a stream without missing vertices).
  Result<std::vector<uint8_t>> (*compress64)(const VectorField2D64& field, const Options& options,
                                             int device) = nullptr;
  Status (*decompress_into64)(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v, int device,
                              std::vector<uint8_t>* mask) = nullptr;
  /// 3D vector fields (optional: a backend without them leaves 3D fields on the CPU, and
  /// Policy::cuda answers backend_unavailable for them): factz::compress of a VectorField3D
  /// on `device`, and the decode of a 3D stream into u, v, w of exactly nx * ny * nz floats,
  /// with the stream's mask into *mask when mask is not null (left empty for a stream
  /// without missing vertices).
  Result<std::vector<uint8_t>> (*compress3d)(const VectorField3D& field, const Options& options, int device) = nullptr;
  Status (*decompress3d_into)(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                              std::span<float> w, int device, std::vector<uint8_t>* mask) = nullptr;
};

/// The backend Policy::cuda runs on: the CUDA backend in builds with it, else null.
const DeviceBackend* device_backend();

/// Test only: makes `backend` (null: none) the one device_backend() returns, and returns the
/// previous one. Not thread safe: call it while no compression runs.
const DeviceBackend* set_device_backend_for_testing(const DeviceBackend* backend);

/// The device Policy::cuda runs on for the requested ordinal (kDeviceAuto: the node-local
/// MPI rank modulo `count`), checked: invalid_argument for an ordinal below kDeviceAuto or
/// not below `count` (the message names both). `count` > 0.
Result<int> resolve_device(int requested, int count);

/// The node-local rank the launcher gives this process (OMPI_COMM_WORLD_LOCAL_RANK,
/// MV2_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID,
/// the first that is set to a non-negative integer), or 0.
int launcher_local_rank();

/// The Policy::cuda paths of the public entry points (compress.cpp calls them first), with
/// missing vertices as on the CPU: decompress_on_device's result holds the stream's mask, and
/// decompress_into_on_device writes it into *mask_out when given (left as it is for a stream
/// without missing vertices, as cpu_decode does). The float64 overloads take float64 fields
/// and streams (decompress64_on_device: factz::decompress64); each decoder refuses the other
/// data type (require_dtype), before the backend runs.
Result<std::vector<uint8_t>> compress_on_device(const VectorField2D& field, const Options& options,
                                                CompressStats* stats);
Result<std::vector<uint8_t>> compress_on_device(const VectorField2D64& field, const Options& options,
                                                CompressStats* stats);
Status decompress_into_on_device(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                 const DecompressOptions& options, std::vector<uint8_t>* mask_out = nullptr);
Status decompress_into_on_device(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v,
                                 const DecompressOptions& options, std::vector<uint8_t>* mask_out = nullptr);
Result<VectorField2D> decompress_on_device(std::span<const uint8_t> stream, const DecompressOptions& options);
Result<VectorField2D64> decompress64_on_device(std::span<const uint8_t> stream, const DecompressOptions& options);

/// The Policy::cuda paths of 3D vector fields (compress3d.cpp calls them first): as
/// compress_on_device and decompress_on_device. Without a backend, or with one that takes no
/// 3D fields, backend_unavailable saying that 3D fields are compressed on the CPU only.
Result<std::vector<uint8_t>> compress3d_on_device(const VectorField3D& field, const Options& options,
                                                  CompressStats* stats);
Result<VectorField3D> decompress3d_on_device(std::span<const uint8_t> stream, const DecompressOptions& options);

}  // namespace factz::detail
