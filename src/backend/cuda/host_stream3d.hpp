// The CUDA backend's side of the 3D stream layer (streams/vector3d_stream.hpp; issue 22):
// the checks, the plan and the stream of a 3D field around a frontend, and the parsing and
// mask handling around a decoder. A frontend (the device's, cuda_compress3d.cu, or the CPU
// model's, gpu_model3d.cpp) fills the stream layer's result structures (Tiled3DResult,
// Speculative3DResult, streams/vector3d_modes.hpp) with its decisions; the stream is then
// built by the same payload functions (tiled3d_payload, speculative3d_payload) and
// assemble_*3d as the CPU's, after the same set-up (prepare3d), so the device's bytes are
// the CPU's whenever its decisions are.
//
// Supported on the device: float32 fields, modes none, block and speculative, either coder,
// zstd, missing vertices (the host makes the mask, the filled working copy and the mask
// section, as compress3d.cpp does; decoding, it spreads a masked speculative stream's ids
// and anchors to every position and lays the mask section's bits last, as the CPU decoder).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "factz/compress3d.hpp"
#include "streams/vector3d_modes.hpp"
#include "streams/vector3d_stream.hpp"

namespace factz::cuda_detail {

/// The frontends of the 3D modes. `work` is the validated field, or its filled working copy
/// when vertices are missing (on the host; a device frontend uploads it), p the checked plan.
/// tiled (modes none and block, p.options.mode) fills tile_ids, recon, exact, symbols and
/// escapes of every component; speculative fills id and sym. `missing`: the mask (nx * ny *
/// nz bytes) or null for none.
struct Frontends3D {
  std::function<Status(const VectorField3D& work, const detail::Stream3DPlan& p, const uint8_t* missing,
                       detail::Tiled3DResult& r)>
      tiled;
  std::function<Status(const VectorField3D& work, const detail::Stream3DPlan& p, const uint8_t* missing,
                       detail::Speculative3DResult& r)>
      speculative;
};

/// The decoders of the 3D modes into u, v, w (nx * ny * nz floats each, host memory; a
/// device decoder copies its result there), from the parsed inputs. A masked speculative
/// stream's input comes spread: one id per target (kMissingVertex for a missing one, which
/// takes the stand-in) and three exact values per anchor (the stand-ins for a missing one).
struct Decoders3D {
  std::function<Status(const detail::Header& h, const detail::Tiled3DInput& in, std::span<float> u,
                       std::span<float> v, std::span<float> w)>
      tiled;
  std::function<Status(const detail::Header& h, const detail::Speculative3DInput& in, std::span<float> u,
                       std::span<float> v, std::span<float> w)>
      speculative;
};

/// factz::compress of a 3D field with the given frontends: field and option checks, missing
/// vertices, the bound (REL: of the three components' range), the plan, then the CPU
/// backend's payload and the stream layer's assembly.
Result<std::vector<uint8_t>> compress3d_with(const VectorField3D& f, const Options& o, const Frontends3D& fe);

/// decompress3d's decode of `stream` into u, v, w (each exactly nx * ny * nz floats) with
/// the given decoders, and the stream's mask into *mask when given (left empty for a stream
/// without missing vertices).
Status decompress3d_with(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                         std::span<float> w, std::vector<uint8_t>* mask, const Decoders3D& de);

}  // namespace factz::cuda_detail
