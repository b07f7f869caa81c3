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

/// The reconstruction of a vertex that is not stored exactly, from its pre-quantized
/// integer q (the 2D prefix sum of its tile's codes, read as signed) and its tile's step
/// (2 * bound_of_id). Returns false when |q| > kMaxQuant (the writer clamps every q: the
/// stream is corrupt; the value is then that of the clamped q). T: float, or double for a
/// float64 stream (whose clamp is kMaxQuant64).
template <class T>
FACTZ_HD bool tiled_reconstruction(int64_t q, T step, T& value) {
  const int64_t lim = quant_limit(step);
  value = reconstruct(int32_t(q > lim ? lim : (q < -lim ? -lim : q)), step);
  return q <= lim && q >= -lim;
}

/// Decodes one vertex: the stored value when the stream's exact list holds it
/// (`stored_exactly`), else tiled_reconstruction. Writes the value and returns true, or
/// returns false when the stream is corrupt (|q| > kMaxQuant, or a value that is not finite,
/// which no writer produces for that vertex; value is then 0). The CPU decoder applies the
/// same rule in two passes (every vertex's reconstruction, then the exact list over it, then
/// the finiteness of the result), which is equivalent because exact values are finite.
template <class T>
FACTZ_HD bool decode_tiled_vertex(int64_t q, T step, bool stored_exactly, T exact_value, T& value) {
  T r = T(0);
  const bool q_ok = tiled_reconstruction(q, step, r);
  if (stored_exactly) r = exact_value;
  value = T(0);
  if (!q_ok || !finite_value(r)) return false;
  value = r;
  return true;
}

}  // namespace factz::detail
