// Declarations shared by the CUDA backend's translation units (cuda_compress.cu,
// cuda_decompress.cu, cuda_api.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "backend/cuda/host_stream.hpp"
#include "factz/cuda.hpp"

namespace factz::cuda_detail {

/// max - min over both planes (cub::DeviceReduce; exact).
Status device_value_range(cuda::Workspace::Impl& ws, const float* u, const float* v, int64_t n, cudaStream_t s,
                          double& range);
/// Number of vertices with a NaN or infinite component.
Status device_count_nonfinite(cuda::Workspace::Impl& ws, const float* u, const float* v, int64_t n, cudaStream_t s,
                              int64_t& count);
Status device_compress_tiled(cuda::Workspace::Impl& ws, const Plan& p, const float* u, const float* v, cudaStream_t s,
                             TiledPayload& out);
Status device_compress_speculative(cuda::Workspace::Impl& ws, const Plan& p, const float* u, const float* v,
                                   cudaStream_t s, SpeculativePayload& out);
Status device_decode_tiled(cuda::Workspace::Impl& ws, const detail::ParsedContainer& pc, const TiledDecodeInput& in,
                           float* u, float* v, cudaStream_t s);
Status device_decode_speculative(cuda::Workspace::Impl& ws, const detail::ParsedContainer& pc,
                                 const SpeculativeDecodeInput& in, float* u, float* v, cudaStream_t s);

}  // namespace factz::cuda_detail
