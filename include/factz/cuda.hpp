// FaCTz on NVIDIA GPUs (library factz_cuda; built when FACTZ_CUDA finds nvcc).
//
// The streams are those of factz::compress, byte for byte: any FaCTz build decodes them,
// and the CUDA decoder decodes any CPU stream. Every CUDA call is checked; failures come
// back as Status (Code::cuda with the CUDA error text; Code::backend_unavailable with
// "no CUDA device" when the machine has none). Nothing here prints, exits or throws.
//
// Where the work runs (docs/architecture.md, "CUDA backend"): prediction, bound
// derivation, quantization, signature checks and repair, Lorenzo codes, stream
// compaction (CUB selections and scans), the varint lists, Huffman coding (histogram,
// chunk sizes, bit packing), ANS coding (plane bytes, pair counts, per-lane rANS chunks)
// and the CRC-32C of the coded payloads run on the device; Huffman code lengths and
// codebook, the ANS plan (lanes, contexts, tables) and the container (zstd stage, headers)
// run on the host with the CPU's codec functions, so the bytes are the CPU's by
// construction. Decoding: container, ANS and the
// list parsing on the host; Huffman decoding of the tiled modes' codes and every
// reconstruction on the device (speculative streams' ids and codes are entropy-decoded on
// the host).
//
// float64 fields (VectorField2D64, device planes of doubles) and float64 streams (format
// version 6) take the same paths with every value decision in double: the streams are
// those of factz::compress of the VectorField2D64, byte for byte, and each decoder refuses
// the other data type (invalid_argument, as factz::decompress and decompress64 do).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"

namespace factz::cuda {

/// True when at least one CUDA device can be used.
bool device_available();

/// Ok when a device can be used; backend_unavailable ("no CUDA device ...") otherwise.
Status device_status();

/// Reusable device memory for compress/decompress: buffers grow to the largest size a
/// call needed and are kept, so repeated calls of one size do no cudaMalloc. Not thread
/// safe: one workspace per host thread (the calls without one use a default per host
/// thread and device). Belongs to the device that was current when it first allocated.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  /// Device bytes held.
  size_t bytes() const;
  /// Frees every buffer (the next call allocates again).
  void release();

  struct Impl;
  Impl* impl() { return impl_; }

 private:
  Impl* impl_;
};

/// Compresses the device-resident planes d_u, d_v (nx * ny floats each, x fastest) on
/// `stream`. Returns the stream bytes in host memory (the container is written on the host);
/// the call synchronizes `stream` before it returns. options.policy and options.threads
/// are ignored (host entropy coding uses OpenMP's default thread count; the bytes never
/// depend on it). options.exact_edges is not supported yet (backend_unavailable).
/// As on the CPU, a vertex with a NaN component is missing (stored bit for bit, outside the
/// mesh and the bound; the planes then take a trip to the host to be masked and filled) and
/// an infinite value at a valid vertex is invalid_argument. The device planes carry no
/// mask or fill value: for those, use factz::compress with Policy::cuda on a host field.
Result<std::vector<uint8_t>> compress(const float* d_u, const float* d_v, int64_t nx, int64_t ny, const Options& options,
                                      cudaStream_t stream = nullptr, Workspace* workspace = nullptr);
/// The same for device planes of doubles: a float64 stream (factz::compress of a VectorField2D64).
Result<std::vector<uint8_t>> compress(const double* d_u, const double* d_v, int64_t nx, int64_t ny,
                                      const Options& options, cudaStream_t stream = nullptr,
                                      Workspace* workspace = nullptr);

/// Decodes `stream` (host memory) into the device planes d_u, d_v of nx * ny floats each,
/// which must match the stream's grid (factz::stream_dims). Synchronizes `stream`.
/// Untrusted bytes give corrupt_stream / unsupported_version, never a crash.
Status decompress(std::span<const uint8_t> stream, float* d_u, float* d_v, int64_t nx, int64_t ny,
                  cudaStream_t stream_id = nullptr, Workspace* workspace = nullptr);
/// The same for a float64 stream into device planes of doubles (a float32 stream is
/// invalid_argument, and a float64 one given to the float overload).
Status decompress(std::span<const uint8_t> stream, double* d_u, double* d_v, int64_t nx, int64_t ny,
                  cudaStream_t stream_id = nullptr, Workspace* workspace = nullptr);

/// Number of usable CUDA devices (0 when there is none or the runtime cannot tell).
int device_count();

// Host-memory wrappers: copy the field to the device, run the GPU pipeline, copy back; what
// factz::compress / decompress / decompress_into run for Policy::cuda (their usual entry
// point: set options.policy = Policy::cuda and options.device). They run on the given
// device (kDeviceAuto: the node-local MPI rank modulo the device count; a device that does
// not exist is invalid_argument) and leave the calling thread's current device as it was.
// The device-pointer calls above run on the caller's current device.

/// The bytes of factz::compress, computed on options.device.
Result<std::vector<uint8_t>> compress(const VectorField2D& field, const Options& options);
/// A new field decoded on `device`.
Result<VectorField2D> decompress(std::span<const uint8_t> stream, int device = 0);
/// Decodes on `device` into caller planes of exactly nx * ny floats each (factz::stream_dims).
Status decompress_into(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v, int device = 0);

/// The float64 counterparts: factz::compress of a VectorField2D64, factz::decompress64, and
/// decompress_into with double planes, computed on the device.
Result<std::vector<uint8_t>> compress(const VectorField2D64& field, const Options& options);
Result<VectorField2D64> decompress64(std::span<const uint8_t> stream, int device = 0);
Status decompress_into(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v, int device = 0);

}  // namespace factz::cuda
