// Contour tree core (docs/toposz.md, "Algorithms"): sort by (value, index), join and split
// trees by union-find sweeps, the Carr-Snoeyink-Axen merge, reduction to critical nodes,
// persistence simplification by leaf pruning, and the segmentation.
#pragma once

#include <span>

#include "factz/contour_tree.hpp"
#include "scalar/grid.hpp"

namespace factz::detail {

/// Largest vertex count the contour tree handles (indices are 32-bit internally).
inline constexpr int64_t kMaxCtVertices = int64_t(0xFFFFFFFEu);

/// The contour tree of `values` on `grid`, simplified at the absolute threshold `p_abs`.
/// `values` must be finite and hold grid.size() values (checked by the callers).
ContourTree compute_contour_tree(std::span<const float> values, const ScalarGrid& grid, double p_abs,
                                 bool segmentation, int threads);

/// Value range max - min (0 for an empty span).
double scalar_range(std::span<const float> values);

}  // namespace factz::detail
