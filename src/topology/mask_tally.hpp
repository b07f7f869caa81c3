// The mask part of a comparison, 2D and 3D alike (compare.cpp, compare3d.cpp): a vertex
// missing in one field and not in the other is a violation; pointwise statistics run over
// the vertices valid in both.
#pragma once

#include <cstdint>
#include <vector>

namespace factz::detail {

struct MaskTally {
  int64_t masked = 0;    ///< vertices missing in the original
  int64_t mismatch = 0;  ///< vertices missing in exactly one of the two fields
  int64_t valid = 0;     ///< vertices valid in both
};

/// The tally of two missing masks (missing_mask: empty for none) over n vertices.
inline MaskTally tally_masks(const std::vector<uint8_t>& original, const std::vector<uint8_t>& reconstructed,
                             int64_t n) {
  MaskTally t;
  t.valid = n;
  if (original.empty() && reconstructed.empty()) return t;
  t.valid = 0;
  for (int64_t k = 0; k < n; ++k) {
    const bool a = !original.empty() && original[size_t(k)], b = !reconstructed.empty() && reconstructed[size_t(k)];
    t.masked += a;
    t.mismatch += a != b;
    t.valid += !a && !b;
  }
  return t;
}

}  // namespace factz::detail
