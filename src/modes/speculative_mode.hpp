// FaCTz-S: speculative per-point mode (paper sections 3.4-3.5, Algorithm 1).
// Anchors are stored exactly; every other vertex is predicted by interpolation from
// already reconstructed vertices (kernels/interpolation.hpp) and tries bound ids from the
// user's bound down, committing the first candidate under which all its incident
// triangles keep their exact signature on the current state. The decoder replays the
// same schedule with the same arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codec/coder.hpp"
#include "factz/field.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"
#include "kernels/speculation.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

inline constexpr int64_t kDefaultAnchorStride = 16;
inline constexpr int64_t kMaxAnchorStride = 4096;

/// What the speculative frontend decided, per vertex.
struct SpeculativeResult {
  BigVector<float> recon_u, recon_v;  ///< the decoder's values
  BigVector<uint8_t> id;              ///< 0 exact, 1..30 bound id, kZeroVectorId; anchors 0
  BigVector<uint16_t> sym_u, sym_v;   ///< code + radius where 1 <= id <= 30
  int64_t exact_vertices = 0;         ///< anchors, exact targets and zero vectors
};

/// Runs the schedule. `check` false skips the signature verification (tests only: it
/// shows that the check is what keeps the critical points). Vertices on the outer
/// rows/columns named by exact_edges (EdgeBits) are not speculated: they keep their
/// original value (id 0, or the zero-vector id for +0, +0).
void run_speculative(const VectorField2D& f, float eb, int64_t anchor_stride, int threads, bool check,
                     SpeculativeResult& out, uint8_t exact_edges = 0);

/// Serializes a result into container sections (meta, bound ids, codes, exact values).
Status speculative_sections(const VectorField2D& f, int64_t anchor_stride, const SpeculativeResult& r,
                            EntropyCoder coder, int threads, std::vector<Section>& sections);

/// Decodes a speculative stream into caller planes of nx * ny floats.
Status decode_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd,
                          int threads, std::span<float> u, std::span<float> v);

}  // namespace factz::detail
