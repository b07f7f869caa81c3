// FaCTz public C++ API for contour trees of scalar fields on 2D and 3D regular grids
// (docs/toposz.md). The field is piecewise linear on the Freudenthal triangulation whose
// diagonal is the vector mesh's: 2D neighbours of (row i, column j) are (i+-1, j),
// (i, j+-1), (i+1, j+1), (i-1, j-1); 3D neighbours are the 14 offsets +-(1,0,0),
// +-(0,1,0), +-(0,0,1), +-(1,1,0), +-(1,0,1), +-(0,1,1), +-(1,1,1) in (z, y, x).
// Vertices are ordered by (value, index): ties are broken by Simulation of Simplicity, so
// every vertex has a distinct height and plateaus are handled without special cases.
#pragma once

#include <cstdint>
#include <vector>

#include "factz/factz.hpp"
#include "factz/scalar.hpp"
#include "factz/status.hpp"

namespace factz {

/// Type of a node of a (simplified) contour tree, from its up- and down-degree.
enum class CtNodeType : uint8_t {
  minimum = 0,       ///< down-degree 0: a component is born
  maximum = 1,       ///< up-degree 0: a component dies
  join_saddle = 2,   ///< up-degree >= 2, down-degree 1: components of the superlevel set join
  split_saddle = 3,  ///< down-degree >= 2, up-degree 1: components of the sublevel set join
  multi_saddle = 4,  ///< up- and down-degree >= 2 (degenerate saddle)
  isolated = 5,      ///< the only vertex of a 1-vertex grid
};
inline constexpr int kCtNodeTypeCount = 6;
const char* ct_node_type_name(CtNodeType t);

struct CtNode {
  int64_t vertex = 0;  ///< index (z * ny + y) * nx + x
  float value = 0;
  CtNodeType type = CtNodeType::minimum;
  int32_t up_degree = 0;
  int32_t down_degree = 0;
};

/// An arc between two nodes (vertex indices), lower < upper in (value, index) order.
struct CtArc {
  int64_t lower = 0;
  int64_t upper = 0;
  friend bool operator==(const CtArc&, const CtArc&) = default;
};

/// A persistence pair of the branch decomposition: an extremum and the saddle it merges at
/// (the root branch pairs the global minimum with the global maximum).
struct CtPair {
  int64_t extremum = 0;
  int64_t saddle = 0;
  double persistence = 0;  ///< |f(extremum) - f(saddle)|
};

struct ContourTree {
  int64_t nx = 0, ny = 0, nz = 1;
  double persistence = 0;      ///< absolute threshold the tree was simplified with
  std::vector<CtNode> nodes;   ///< nodes of the simplified tree, by increasing vertex index
  std::vector<CtArc> arcs;     ///< arcs, sorted by (lower, upper)
  std::vector<CtPair> pairs;   ///< branch decomposition of the simplified tree, by extremum index
  int64_t pruned_pairs = 0;    ///< extremum-saddle pairs removed by the simplification
  int64_t full_nodes = 0;      ///< nodes of the unsimplified contour tree
  /// Optional (CtOptions::segmentation): per vertex the index into `arcs` of the arc whose
  /// region holds it, or kCtNodeSegment for a node of the simplified tree.
  std::vector<uint32_t> segmentation;
};
inline constexpr uint32_t kCtNodeSegment = 0xFFFFFFFFu;

struct CtOptions {
  /// Persistence threshold: pairs of extremum-saddle leaves with persistence below it are
  /// removed (smallest first). ABS: the value itself; REL: a fraction of the value range.
  BoundMode persistence_mode = BoundMode::rel;
  double persistence = 0;
  bool segmentation = false;  ///< fill ContourTree::segmentation
  Policy policy = Policy::omp;
  int threads = 0;
};

/// The contour tree of `field` simplified at the persistence threshold. invalid_argument on
/// empty fields, NaN/Inf, or more than 2^32 - 2 vertices. O(n log n) time, O(n) memory.
Result<ContourTree> contour_tree(const ScalarField& field, const CtOptions& options = {});

/// How two simplified contour trees over the same grid differ. Nodes are matched by
/// vertex: a false positive is a node of `decompressed` that is not a node of `original`,
/// a false negative the reverse, a false type a node of both with different types.
/// Arcs and persistence pairs are compared as sets of vertex pairs.
struct CtComparison {
  int64_t nodes_original = 0, nodes_decompressed = 0;
  int64_t false_positive = 0, false_negative = 0, false_type = 0;
  int64_t arcs_missing = 0, arcs_extra = 0;    ///< arcs of original not in decompressed, and reverse
  int64_t pairs_missing = 0, pairs_extra = 0;  ///< pairs likewise
  /// Vertices involved in a difference (sorted, unique): nodes that differ and endpoints of
  /// arcs or pairs that differ.
  std::vector<int64_t> offending;
  int64_t false_cases() const { return false_positive + false_negative + false_type; }
  bool same() const {
    return false_cases() == 0 && arcs_missing == 0 && arcs_extra == 0 && pairs_missing == 0 && pairs_extra == 0;
  }
};
CtComparison compare_contour_trees(const ContourTree& original, const ContourTree& decompressed);

/// Scalar verification: the two fields' contour trees simplified at the same absolute
/// threshold (`persistence` times the ORIGINAL field's value range, or the value for ABS),
/// compared as above, plus pointwise errors.
struct ScalarComparison {
  CtComparison tree;
  double persistence_abs = 0;
  double max_abs_error = 0, rmse = 0, psnr = 0, value_range = 0;
};
Result<ScalarComparison> compare_scalar(const ScalarField& original, const ScalarField& decompressed,
                                        BoundMode persistence_mode, double persistence, Policy policy = Policy::omp,
                                        int threads = 0);

}  // namespace factz
