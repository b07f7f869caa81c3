// Declarations shared by the CUDA backend's translation units (cuda_compress.cu,
// cuda_decompress.cu, cuda_api.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backend/cuda/host_stream.hpp"
#include "factz/cuda.hpp"
#include "kernels/interpolation.hpp"

namespace factz::cuda_detail {

// T is the value type of the planes: float, or double for a float64 field or stream. Each
// template is defined and instantiated for both in the .cu file that names it.

/// max - min over both planes (cub::DeviceReduce; exact).
template <class T>
Status device_value_range(cuda::Workspace::Impl& ws, const T* u, const T* v, int64_t n, cudaStream_t s,
                          double& range);
/// Number of vertices with a NaN or infinite component.
template <class T>
Status device_count_nonfinite(cuda::Workspace::Impl& ws, const T* u, const T* v, int64_t n, cudaStream_t s,
                              int64_t& count);
/// The ANS blob of n device symbols around `center` (codec/ans_encode.cpp's bytes): plane bytes,
/// pair counts and the rANS chunks on the device, the plan and the layout on the host
/// (cuda_ans_encode.cu).
/// crc: the blob's crc32c, its payloads checksummed on the device (section_crc.hpp).
/// allow_escapes: blob version 3 allowed (detail::ans_encode's), the escaped bytes selected
/// on the device.
Status device_ans_encode(cuda::Workspace::Impl& ws, const uint16_t* sym, uint64_t n, uint16_t center, cudaStream_t s,
                         std::vector<uint8_t>& blob, std::optional<uint32_t>& crc, bool allow_escapes = false);
/// CRC-32C of n device bytes (format/crc32.hpp's value): per-block CRCs and a combine tree
/// (cuda_crc.cu); synchronizes `s`.
Status device_crc32c(cuda::Workspace::Impl& ws, const uint8_t* data, uint64_t n, cudaStream_t s, uint32_t& out);
/// The payloads of the device pipelines. u, v: finite device planes (the filled working
/// copy when vertices are missing); missing: the device mask (nx * ny bytes, nonzero =
/// missing) or null when no vertex is. A float64 plan (make_plan<double>) goes with double planes.
template <class T>
Status device_compress_tiled(cuda::Workspace::Impl& ws, const Plan& p, const T* u, const T* v,
                             const uint8_t* missing, cudaStream_t s, TiledPayload& out);
template <class T>
Status device_compress_speculative(cuda::Workspace::Impl& ws, const Plan& p, const T* u, const T* v,
                                   const uint8_t* missing, cudaStream_t s, SpeculativePayload& out);
/// Stand-ins of the missing anchors of lattice A in the device planes u, v (valid anchors
/// hold their values): kernels/speculative_decode.hpp's fill_missing_anchors in parallel form.
template <class T>
Status device_fill_missing_anchors(cuda::Workspace::Impl& ws, const detail::PhaseLattice& A, int64_t nx,
                                   const uint8_t* missing, T* u, T* v, detail::Predictor pred, cudaStream_t s);
/// The device decoders, before the mask sections' values. missing: the stream's mask on the
/// device (read_mask), or null for a stream without one. The stream's data type is T's.
template <class T>
Status device_decode_tiled(cuda::Workspace::Impl& ws, const detail::ParsedContainer& pc, const TiledInputOf<T>& in,
                           const uint8_t* missing, T* u, T* v, cudaStream_t s);
template <class T>
Status device_decode_speculative(cuda::Workspace::Impl& ws, const detail::ParsedContainer& pc,
                                 const SpeculativeInputOf<T>& in, const uint8_t* missing, T* u, T* v, cudaStream_t s);

}  // namespace factz::cuda_detail
