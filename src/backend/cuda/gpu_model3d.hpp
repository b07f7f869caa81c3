// The CPU model of the CUDA 3D pipeline (issue 22): the kernels' bodies (block3d_bodies.hpp,
// speculative3d_bodies.hpp) driven by host loops in the kernels' launch order, with the
// scans and compactions the device does with CUB written as plain loops, around the same
// host-side stream code (host_stream3d.hpp). Nothing here runs on a GPU: it is the evidence,
// testable on any machine, that what the 3D kernels compute is what the CPU pipeline
// computes (tests/cuda/test_gpu_model3d.cpp compares the bytes and the decoded values).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cuda/host_stream3d.hpp"

namespace factz::cuda_detail {

/// The model's frontends (Frontends3D's contract): modes none and block, and speculative.
Status model_tiled3d(const VectorField3D& f, const detail::Stream3DPlan& p, const uint8_t* missing,
                     detail::Tiled3DResult& r);
Status model_speculative3d(const VectorField3D& f, const detail::Stream3DPlan& p, const uint8_t* missing,
                           detail::Speculative3DResult& r);

/// The model's decoders (Decoders3D's contract; the inputs checked by decompress3d_with).
Status model_decode_tiled3d(const detail::Header& h, const detail::Tiled3DInput& in, std::span<float> u,
                            std::span<float> v, std::span<float> w);
Status model_decode_speculative3d(const detail::Header& h, const detail::Speculative3DInput& in, std::span<float> u,
                                  std::span<float> v, std::span<float> w);

/// Compresses a 3D field as the CUDA backend would (the same bytes).
Result<std::vector<uint8_t>> model_compress3d(const VectorField3D& f, const Options& o);

/// Decompresses a 3D stream as the CUDA backend would (a masked tiled stream's missing
/// vertices get their stored bits and the result its mask, as factz::decompress3d).
Result<VectorField3D> model_decompress3d(std::span<const uint8_t> stream);

}  // namespace factz::cuda_detail
