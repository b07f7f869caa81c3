// The scalar streams' quantizer (docs/toposz.md, "Compression"): a Lorenzo prediction from
// already decoded values and one code per valid vertex, symbol 0 meaning "stored exactly".
// The decoder (scalar_codec.cpp) shares the prediction and the missing vertices' stand-in,
// so encoder and decoder agree bit for bit; the encoder alone may restrict each vertex to a
// topological interval (toposz_encoder.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "scalar/grid.hpp"

namespace factz::detail {

inline constexpr uint16_t kScalarCenter = 32768;  ///< symbol of code 0; symbol 0 = stored exactly
inline constexpr int64_t kScalarMaxCode = 32767;  ///< |code| <= kScalarMaxCode

/// Lorenzo prediction from decoded values `r` (outside the grid counts as 0), in a fixed
/// order of float operations so that encoder and decoder agree bit for bit.
inline float lorenzo(const float* r, const ScalarGrid& g, int64_t x, int64_t y, int64_t z, int64_t v) {
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  const float a = x > 0 ? r[v - 1] : 0.0f;
  const float b = y > 0 ? r[v - sy] : 0.0f;
  const float ab = x > 0 && y > 0 ? r[v - 1 - sy] : 0.0f;
  if (g.nz == 1) return (a + b) - ab;
  const float c = z > 0 ? r[v - sz] : 0.0f;
  const float ac = x > 0 && z > 0 ? r[v - 1 - sz] : 0.0f;
  const float bc = y > 0 && z > 0 ? r[v - sy - sz] : 0.0f;
  const float abc = x > 0 && y > 0 && z > 0 ? r[v - 1 - sy - sz] : 0.0f;
  return ((((((a + b) + c) - ab) - ac) - bc) + abc);
}

/// The value a missing vertex holds for the predictions after it: the decoded value to its
/// left, else above, else below in z, else 0 (a constant extension of the valid values,
/// which a Lorenzo extrapolation across a wide mask would not be). Writer and decoder
/// compute it from the same decoded values.
inline float missing_stand_in(const float* r, const ScalarGrid& g, int64_t x, int64_t y, int64_t z, int64_t v) {
  if (x > 0) return r[v - 1];
  if (y > 0) return r[v - g.nx];
  if (z > 0) return r[v - g.nx * g.ny];
  return 0.0f;
}

/// A vertex's topological interval: lo < g(v) < hi, equality allowed where flagged.
struct Interval {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  uint8_t incl = 0;  ///< bit 0: lo inclusive, bit 1: hi inclusive
  bool inside(float val) const {
    return (val > lo || ((incl & 1) && val == lo)) && (val < hi || ((incl & 2) && val == hi));
  }
};

/// What the TopoSZ encoder asks of the quantizer: the vertices stored exactly, and an
/// interval for a few others (their slot in `intervals`; kFree: none). Only a few vertices
/// are constrained, so an interval costs memory only where there is one.
struct Constraints {
  static constexpr uint32_t kFree = 0xFFFFFFFFu;
  std::vector<uint8_t> exact;  ///< per vertex, nonzero: stored exactly
  std::vector<uint32_t> slot;  ///< per vertex
  std::vector<Interval> intervals;
  bool all_exact = false;  ///< every vertex stored exactly (the encoder's last resort)
};

/// What the quantizer hands to the stream: one symbol per valid vertex, the exact values in
/// index order, and the decoder's reconstruction of every vertex.
struct Quantized {
  std::vector<uint16_t> symbols;
  std::vector<float> exact;
  std::vector<float> recon;
};

/// The values a valid vertex must not decode to: those the missing vertices hold (their fill
/// values; NaN equals nothing), so that declaring the fill value again on a decompressed
/// raw file finds the same missing vertices. Empty past 16 distinct values.
std::vector<float> fill_values(std::span<const float> f, std::span<const uint8_t> missing);

/// Quantizes `f` in index order. Of the two codes whose values bracket f(v) (the closer
/// first), the first that lies within `eb` of f(v), inside the vertex's interval and on none
/// of `fills` is taken, else the value is stored exactly; so every accepted value lies
/// within min(eb, step) of f(v). `c` (null: none) stores its exact vertices exactly and
/// holds the intervals. Missing vertices (`missing` nonzero; may be empty) get no symbol,
/// only their stand-in.
void quantize(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
              std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out);

}  // namespace factz::detail
