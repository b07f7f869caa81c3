// Contour tree core (docs/toposz.md, "Algorithm"): sort by (value, index), join and split
// trees with their elder-rule persistence pairs by union-find sweeps, simplification of the
// two merge trees, the regions of the vertices, and the Carr-Snoeyink-Axen merge into the
// contour tree.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "factz/contour_tree.hpp"
#include "scalar/grid.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// Largest vertex count the contour tree handles (indices are 32-bit internally).
inline constexpr int64_t kMaxCtVertices = int64_t(0xFFFFFFFEu);

/// What compute_contour_tree fills besides nodes, merge-tree arcs and pairs.
struct CtRequest {
  bool segmentation = false;  ///< ContourTree::segmentation
  bool contour_arcs = false;  ///< ContourTree::arcs (the merge of the simplified trees)
};

/// The per-vertex work arrays of compute_contour_tree. A caller that computes many trees
/// (the TopoSZ rounds) keeps one, so that no tree after the first allocates or faults in
/// fresh pages; every element is written before it is read, so nothing carries over
/// between trees. Per sweep s (0 join, 1 split): the union-find parents (written at every
/// vertex) and the branch of each vertex, written only where it is read: at the critical
/// vertices of either sweep (a few thousand on a smooth 256^3 field), or everywhere when
/// regions or contour arcs are asked for. The branch arrays take plain pages, never zeroed
/// by us, so that only the pages written count.
struct CtWorkspace {
  BigVector<uint32_t> parent[2];
  std::unique_ptr<uint32_t[]> branch[2];
  size_t branch_size = 0;
};

/// The sort key of a float field's vertex: (value, index) order is unsigned key order.
inline uint64_t vertex_key(float value, int64_t v) { return (uint64_t(orderable_bits(value)) << 32) | uint64_t(v); }

/// The sort key of a double field's vertex: its 64 orderable value bits and its index,
/// (value, index) order being the order of (bits, index). No float in between: doubles that
/// round to the same float keep their order. Trivial (no initializers), so that a BigVector
/// of keys is not cleared before it is written.
struct VertexKey64 {
  uint64_t bits;
  uint32_t index;
};
inline VertexKey64 vertex_key(double value, int64_t v) { return {orderable_bits(value), uint32_t(v)}; }

/// The key type of a field of T (float: uint64_t, double: VertexKey64).
template <class T>
using VertexKeyOf = decltype(vertex_key(T{}, 0));

/// Sorts vertex keys whose indices increase by their value bits, stably (so by (value,
/// index)), and writes the indices in that order to `order`; `keys` is overwritten. A radix
/// sort (vertex_order.cpp): the result is the unique sorted order, whatever the thread count.
void sort_keys(BigVector<uint64_t>& keys, int threads, BigVector<uint32_t>& order);
void sort_keys(BigVector<VertexKey64>& keys, int threads, BigVector<uint32_t>& order);

/// The valid vertices of `values` (missing: empty, or nonzero per missing vertex) in
/// increasing (value, index) order.
void sort_vertices(std::span<const float> values, std::span<const uint8_t> missing, int threads,
                   BigVector<uint32_t>& order);
void sort_vertices(std::span<const double> values, std::span<const uint8_t> missing, int threads,
                   BigVector<uint32_t>& order);

/// The contour forest of `values` on `grid` (one tree per connected component of the valid
/// vertices), simplified at the absolute threshold `p_abs`. `missing` is empty (every vertex
/// valid) or holds grid.size() bytes, nonzero for a missing vertex: it and every simplex
/// touching it are not part of the mesh. Valid values must be finite and `values` must hold
/// grid.size() values (checked by the callers); missing vertices' values are never read.
/// `work` (may be null) holds the work arrays between calls. A double field is ordered,
/// and its persistence measured, in double.
ContourTree compute_contour_tree(std::span<const float> values, const ScalarGrid& grid,
                                 std::span<const uint8_t> missing, double p_abs, const CtRequest& want, int threads,
                                 CtWorkspace* work = nullptr);
ContourTree compute_contour_tree(std::span<const double> values, const ScalarGrid& grid,
                                 std::span<const uint8_t> missing, double p_abs, const CtRequest& want, int threads,
                                 CtWorkspace* work = nullptr);

/// Value range max - min over the valid vertices (0 when there are none).
double scalar_range(std::span<const float> values, std::span<const uint8_t> missing = {});
double scalar_range(std::span<const double> values, std::span<const uint8_t> missing = {});
/// The largest |value| of the valid vertices (0 for none).
double scalar_max_magnitude(std::span<const float> values, std::span<const uint8_t> missing = {});
double scalar_max_magnitude(std::span<const double> values, std::span<const uint8_t> missing = {});

}  // namespace factz::detail
