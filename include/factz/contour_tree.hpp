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
  isolated = 5,      ///< a vertex without valid neighbours (a 1-vertex grid, or cut off by the mask)
};
inline constexpr int kCtNodeTypeCount = 6;
const char* ct_node_type_name(CtNodeType t);

struct CtNode {
  int64_t vertex = 0;  ///< index (z * ny + y) * nx + x
  double value = 0;    ///< the field's value there (a float32 field's, widened exactly)
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

/// A persistence pair: an extremum and the saddle where its component dies by the elder
/// rule in (value, index) order (a minimum with the vertex where its sublevel-set component
/// meets one born at a lower minimum, a maximum likewise with superlevel sets); each tree's
/// root pair is its lowest vertex with its highest.
struct CtPair {
  int64_t extremum = 0;
  int64_t saddle = 0;
  double persistence = 0;  ///< |f(extremum) - f(saddle)|
};

/// Where a vertex lies in the simplified trees: the nodes just below and just above it on
/// its branch of the simplified join tree and of the simplified split tree, the higher of
/// the two below and the lower of the two above ((value, index) order). A node has itself
/// twice; a missing vertex kCtNoVertex twice.
struct CtRegion {
  uint32_t lower = 0;
  uint32_t upper = 0;
};
inline constexpr uint32_t kCtNoVertex = 0xFFFFFFFFu;

/// The contour tree of a field simplified at a persistence threshold (docs/toposz.md), or,
/// when its valid vertices fall apart into several connected components (ScalarField::mask),
/// the contour forest: one tree per component. The simplification removes every
/// extremum-saddle pair below the threshold from the join tree (maxima) and the split tree
/// (minima); what stays is described by the two simplified merge trees, which determine the
/// contour tree whenever one has them.
struct ContourTree {
  int64_t nx = 0, ny = 0, nz = 1;
  double persistence = 0;  ///< absolute threshold the tree was simplified with
  /// Nodes of the simplified tree, by increasing vertex index: the extrema and saddles of the
  /// pairs that stay, and each tree's lowest and highest vertex. up_degree / down_degree are
  /// the vertex's children in the simplified join / split tree (its degrees in the contour tree).
  std::vector<CtNode> nodes;
  /// Arcs of the simplified join tree (superlevel sets; its nodes: maxima, vertices with
  /// up-degree >= 2, each tree's lowest vertex) and of the simplified split tree (sublevel
  /// sets; minima, down-degree >= 2, each tree's highest vertex), sorted by (lower, upper).
  std::vector<CtArc> join_arcs, split_arcs;
  /// Arcs of the contour tree, sorted by (lower, upper): the Carr-Snoeyink-Axen merge of the
  /// two simplified merge trees (CtOptions::contour_arcs). `contour_arcs` is false, and `arcs`
  /// empty, when no tree has both (possible once pairs are removed, or on a mesh with holes);
  /// with no pair removed on a mesh without holes it is always the contour tree.
  std::vector<CtArc> arcs;
  bool contour_arcs = false;
  std::vector<CtPair> pairs;  ///< pairs that stay, with the root pairs, by (extremum, saddle)
  int64_t pruned_pairs = 0;   ///< extremum-saddle pairs removed by the simplification
  int64_t full_nodes = 0;     ///< nodes of the unsimplified contour tree
  int64_t components = 0;     ///< trees in the forest (connected components of valid vertices)
  /// Optional (CtOptions::segmentation): per vertex its region in the simplified trees.
  std::vector<CtRegion> segmentation;
};

struct CtOptions {
  /// Persistence threshold: every extremum-saddle pair (elder rule, Simulation of
  /// Simplicity) with persistence below it is removed; pairs at or above it stay, and so do
  /// each tree's lowest and highest vertex. ABS: the value itself; REL: a fraction of the
  /// value range of the valid vertices.
  BoundMode persistence_mode = BoundMode::rel;
  double persistence = 0;
  bool segmentation = false;  ///< fill ContourTree::segmentation
  bool contour_arcs = true;   ///< merge the simplified trees into ContourTree::arcs
  Policy policy = Policy::omp;
  int threads = 0;
};

/// The contour tree (a forest when the valid vertices of `field` fall apart) simplified at
/// the persistence threshold. invalid_argument on empty fields, a mask of the wrong size, an
/// infinite value at a valid vertex, or more than 2^32 - 2 vertices. O(n log n) time, O(n)
/// memory.
Result<ContourTree> contour_tree(const ScalarField& field, const CtOptions& options = {});
/// The same for a float64 field, computed on the doubles: vertices ordered by (value, index)
/// in double, persistence measured in double.
Result<ContourTree> contour_tree(const ScalarField64& field, const CtOptions& options = {});

/// How two simplified contour trees over the same grid differ. Nodes are matched by
/// vertex: a false positive is a node of `decompressed` that is not a node of `original`,
/// a false negative the reverse, a false type a node of both with different types. The
/// arcs of the simplified join and split trees and the persistence pairs are compared as
/// sets of vertex pairs (the contour tree's arcs follow from the two merge trees).
struct CtComparison {
  int64_t nodes_original = 0, nodes_decompressed = 0;
  int64_t false_positive = 0, false_negative = 0, false_type = 0;
  int64_t arcs_missing = 0, arcs_extra = 0;    ///< merge-tree arcs of original not in decompressed, and reverse
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
/// threshold (`persistence` times the ORIGINAL field's value range over its valid vertices,
/// or the value for ABS), compared as above, plus pointwise errors over the vertices valid in
/// both. Each field's missing vertices are its own (missing_mask); a vertex missing in one
/// and not the other counts in mask_mismatch, a violation.
struct ScalarComparison {
  CtComparison tree;
  double persistence_abs = 0;
  double max_abs_error = 0, rmse = 0, psnr = 0, value_range = 0;
  int64_t masked_vertices = 0;  ///< missing vertices of the original
  int64_t mask_mismatch = 0;    ///< vertices missing in exactly one of the two fields
  bool same() const { return tree.same() && mask_mismatch == 0; }
};
Result<ScalarComparison> compare_scalar(const ScalarField& original, const ScalarField& decompressed,
                                        BoundMode persistence_mode, double persistence, Policy policy = Policy::omp,
                                        int threads = 0);
/// The same for two float64 fields (trees and errors computed in double).
Result<ScalarComparison> compare_scalar(const ScalarField64& original, const ScalarField64& decompressed,
                                        BoundMode persistence_mode, double persistence, Policy policy = Policy::omp,
                                        int threads = 0);

}  // namespace factz
