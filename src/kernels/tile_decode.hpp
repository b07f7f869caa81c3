// The decoder's value of one vertex of the tiled backbone (modes none and block), decided
// once for the CPU decoder (backend/cpu/tiled_quantizer.cpp decode_plane), the CUDA tile decoder
// and its CPU model (backend/cuda/backbone_bodies.hpp decode_tile_column).
//
// Why the writer's reconstruction is the decoder's: the writer pre-quantizes every vertex
// of a tile with id > 0 to q = prequantize(x, step) (|q| <= kMaxQuant, clamped; q = 0 in an
// exact tile) and keeps the vertex's reconstruction reconstruct(q, step) only when
// within_bound accepts it; otherwise the vertex goes to the exact list with its original,
// finite value. within_bound rejects an infinite or NaN reconstruction (their TwoSum error
// is NaN), so:
//   - a vertex that is not exactly stored reconstructs to a finite float(q) * step;
//   - an exactly stored vertex may have any float(q) * step, including +-inf or NaN (a value
//     near +-FLT_MAX, a step near 2^127): that product is never its value, so it is never
//     checked. Its q still carries the Lorenzo prediction of its neighbours and is within
//     +-kMaxQuant like every other q.
// A stream breaking either rule (|q| > kMaxQuant anywhere, a non-finite value where the
// vertex is not exactly stored, a non-finite exact value) is corrupt.
#pragma once

#include <cstdint>

#include "kernels/quantizer.hpp"

namespace factz::detail {

/// Decodes one vertex from its pre-quantized integer q (the 2D prefix sum of its tile's
/// codes, read as signed), its tile's step (2 * bound_of_id), and, when the stream's exact
/// list holds the vertex (`stored_exactly`), its stored value. Writes the vertex's value
/// and returns true, or returns false when the stream is corrupt (value is then 0).
FACTZ_HD bool decode_tiled_vertex(int64_t q, float step, bool stored_exactly, float exact_value, float& value) {
  value = 0.0f;
  if (q > int64_t(kMaxQuant) || q < -int64_t(kMaxQuant)) return false;  // the writer clamps every q
  const float r = stored_exactly ? exact_value : reconstruct(int32_t(q), step);
  if (!(r - r == 0.0f)) return false;  // inf or NaN: never written for this vertex
  value = r;
  return true;
}

}  // namespace factz::detail
