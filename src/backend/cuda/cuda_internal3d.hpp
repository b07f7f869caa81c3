// Declarations of the CUDA backend's 3D pipelines (issue 22), shared by cuda_compress3d.cu,
// cuda_decompress3d.cu and cuda_api.cu. Float32 fields; planes are device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include "backend/cuda/host_stream3d.hpp"
#include "factz/cuda.hpp"

namespace factz::cuda_detail {

/// The device frontends (Frontends3D's contract) on device planes u, v, w of the validated
/// field or its filled working copy (nx * ny * nz floats each): modes none and block fill
/// tile_ids, recon, exact, symbols and escapes; speculative fills id and sym. `missing`: the
/// device mask, or null for none. Synchronize `s`.
Status device_frontend_tiled3d(cuda::Workspace::Impl& ws, const float* u, const float* v, const float* w,
                               const uint8_t* missing, const detail::Stream3DPlan& p, cudaStream_t s,
                               detail::Tiled3DResult& r);
Status device_frontend_speculative3d(cuda::Workspace::Impl& ws, const float* u, const float* v, const float* w,
                                     const uint8_t* missing, const detail::Stream3DPlan& p, cudaStream_t s,
                                     detail::Speculative3DResult& r);

/// The device decoders (Decoders3D's contract) into device planes u, v, w.
Status device_decode_tiled3d(cuda::Workspace::Impl& ws, const detail::Header& h, const detail::Tiled3DInput& in,
                             float* u, float* v, float* w, cudaStream_t s);
Status device_decode_speculative3d(cuda::Workspace::Impl& ws, const detail::Header& h,
                                   const detail::Speculative3DInput& in, float* u, float* v, float* w,
                                   cudaStream_t s);

}  // namespace factz::cuda_detail
