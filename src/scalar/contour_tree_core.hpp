// Contour tree core (docs/toposz.md, "Algorithm"): sort by (value, index), join and split
// trees with their elder-rule persistence pairs by union-find sweeps, simplification of the
// two merge trees, the regions of the vertices, and the Carr-Snoeyink-Axen merge into the
// contour tree.
#pragma once

#include <cstdint>
#include <span>

#include "factz/contour_tree.hpp"
#include "scalar/grid.hpp"

namespace factz::detail {

/// Largest vertex count the contour tree handles (indices are 32-bit internally).
inline constexpr int64_t kMaxCtVertices = int64_t(0xFFFFFFFEu);

/// What compute_contour_tree fills besides nodes, merge-tree arcs and pairs.
struct CtRequest {
  bool segmentation = false;  ///< ContourTree::segmentation
  bool contour_arcs = false;  ///< ContourTree::arcs (the merge of the simplified trees)
};

/// The contour forest of `values` on `grid` (one tree per connected component of the valid
/// vertices), simplified at the absolute threshold `p_abs`. `missing` is empty (every vertex
/// valid) or holds grid.size() bytes, nonzero for a missing vertex: it and every simplex
/// touching it are not part of the mesh. Valid values must be finite and `values` must hold
/// grid.size() values (checked by the callers); missing vertices' values are never read.
ContourTree compute_contour_tree(std::span<const float> values, const ScalarGrid& grid,
                                 std::span<const uint8_t> missing, double p_abs, const CtRequest& want, int threads);

/// Value range max - min over the valid vertices (0 when there are none).
double scalar_range(std::span<const float> values, std::span<const uint8_t> missing = {});

}  // namespace factz::detail
