// Public contour-tree entry points: argument checks, the tree comparison used by `factz
// verify`, the TopoSZ encoder and the tests (one definition of "same tree").
#include <algorithm>
#include <cmath>
#include <limits>

#include "scalar/contour_tree_core.hpp"
#include "scalar/scalar_checks.hpp"

namespace factz {

const char* ct_node_type_name(CtNodeType t) {
  switch (t) {
    case CtNodeType::minimum: return "minimum";
    case CtNodeType::maximum: return "maximum";
    case CtNodeType::join_saddle: return "join_saddle";
    case CtNodeType::split_saddle: return "split_saddle";
    case CtNodeType::multi_saddle: return "multi_saddle";
    case CtNodeType::isolated: return "isolated";
  }
  return "unknown";
}

namespace {

template <class T>
Result<ContourTree> contour_tree_of(const ScalarFieldOf<T>& field, const CtOptions& o) {
  std::vector<uint8_t> missing;
  FACTZ_RETURN_IF_ERROR(detail::check_scalar_field(field, missing));
  if (!std::isfinite(o.persistence) || o.persistence < 0)
    return invalid_argument("persistence must be a finite number >= 0");
  if (o.persistence_mode != BoundMode::abs && o.persistence_mode != BoundMode::rel)
    return invalid_argument("unknown persistence mode");
  const double p_abs = o.persistence_mode == BoundMode::abs ? o.persistence
                                                            : o.persistence * detail::scalar_range(field.values, missing);
  return detail::compute_contour_tree(field.values, {field.nx, field.ny, field.nz}, missing, p_abs,
                                      {o.segmentation, o.contour_arcs}, detail::thread_count(o.policy, o.threads));
}

template <class T>
Result<ScalarComparison> compare_scalar_of(const ScalarFieldOf<T>& original, const ScalarFieldOf<T>& decompressed,
                                           BoundMode persistence_mode, double persistence, Policy policy, int threads);

}  // namespace

Result<ContourTree> contour_tree(const ScalarField& field, const CtOptions& o) { return contour_tree_of(field, o); }
Result<ContourTree> contour_tree(const ScalarField64& field, const CtOptions& o) { return contour_tree_of(field, o); }

CtComparison compare_contour_trees(const ContourTree& a, const ContourTree& b) {
  CtComparison c;
  c.nodes_original = int64_t(a.nodes.size());
  c.nodes_decompressed = int64_t(b.nodes.size());
  std::vector<int64_t> off;
  size_t i = 0, j = 0;
  while (i < a.nodes.size() || j < b.nodes.size()) {
    if (j == b.nodes.size() || (i < a.nodes.size() && a.nodes[i].vertex < b.nodes[j].vertex)) {
      ++c.false_negative;
      off.push_back(a.nodes[i++].vertex);
    } else if (i == a.nodes.size() || b.nodes[j].vertex < a.nodes[i].vertex) {
      ++c.false_positive;
      off.push_back(b.nodes[j++].vertex);
    } else {
      if (a.nodes[i].type != b.nodes[j].type) {
        ++c.false_type;
        off.push_back(a.nodes[i].vertex);
      }
      ++i;
      ++j;
    }
  }
  auto arc_less = [](const CtArc& x, const CtArc& y) { return x.lower != y.lower ? x.lower < y.lower : x.upper < y.upper; };
  for (const auto member : {&ContourTree::join_arcs, &ContourTree::split_arcs}) {
    const std::vector<CtArc>&x = a.*member, &y = b.*member;
    std::vector<CtArc> only;
    std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(only), arc_less);
    c.arcs_missing += int64_t(only.size());
    const size_t split = only.size();
    std::set_difference(y.begin(), y.end(), x.begin(), x.end(), std::back_inserter(only), arc_less);
    c.arcs_extra += int64_t(only.size() - split);
    for (const auto& arc : only) {
      off.push_back(arc.lower);
      off.push_back(arc.upper);
    }
  }
  auto pair_less = [](const CtPair& x, const CtPair& y) {
    return x.extremum != y.extremum ? x.extremum < y.extremum : x.saddle < y.saddle;
  };
  std::vector<CtPair> pa = a.pairs, pb = b.pairs, diff;
  std::sort(pa.begin(), pa.end(), pair_less);
  std::sort(pb.begin(), pb.end(), pair_less);
  std::set_difference(pa.begin(), pa.end(), pb.begin(), pb.end(), std::back_inserter(diff), pair_less);
  c.pairs_missing = int64_t(diff.size());
  const size_t psplit = diff.size();
  std::set_difference(pb.begin(), pb.end(), pa.begin(), pa.end(), std::back_inserter(diff), pair_less);
  c.pairs_extra = int64_t(diff.size() - psplit);
  for (const auto& p : diff) {
    off.push_back(p.extremum);
    off.push_back(p.saddle);
  }
  std::sort(off.begin(), off.end());
  off.erase(std::unique(off.begin(), off.end()), off.end());
  c.offending = std::move(off);
  return c;
}

Result<ScalarComparison> compare_scalar(const ScalarField& original, const ScalarField& decompressed,
                                        BoundMode persistence_mode, double persistence, Policy policy, int threads) {
  return compare_scalar_of(original, decompressed, persistence_mode, persistence, policy, threads);
}
Result<ScalarComparison> compare_scalar(const ScalarField64& original, const ScalarField64& decompressed,
                                        BoundMode persistence_mode, double persistence, Policy policy, int threads) {
  return compare_scalar_of(original, decompressed, persistence_mode, persistence, policy, threads);
}

namespace {

template <class T>
Result<ScalarComparison> compare_scalar_of(const ScalarFieldOf<T>& original, const ScalarFieldOf<T>& decompressed,
                                           BoundMode persistence_mode, double persistence, Policy policy, int threads) {
  std::vector<uint8_t> ma, mb;
  FACTZ_RETURN_IF_ERROR(detail::check_scalar_field(original, ma));
  FACTZ_RETURN_IF_ERROR(detail::check_scalar_field(decompressed, mb));
  if (original.nx != decompressed.nx || original.ny != decompressed.ny || original.nz != decompressed.nz)
    return invalid_argument("the two fields have different dimensions");
  if (!std::isfinite(persistence) || persistence < 0) return invalid_argument("persistence must be finite and >= 0");
  ScalarComparison s;
  s.value_range = detail::scalar_range(original.values, ma);
  s.persistence_abs = persistence_mode == BoundMode::abs ? persistence : persistence * s.value_range;
  const int t = detail::thread_count(policy, threads);
  const detail::ScalarGrid g{original.nx, original.ny, original.nz};
  detail::CtWorkspace work;  // both trees in the same work arrays
  const ContourTree a = detail::compute_contour_tree(original.values, g, ma, s.persistence_abs, {}, t, &work);
  const ContourTree b = detail::compute_contour_tree(decompressed.values, g, mb, s.persistence_abs, {}, t, &work);
  s.tree = compare_contour_trees(a, b);
  double sq = 0;
  int64_t both = 0;
  for (size_t k = 0; k < original.values.size(); ++k) {
    const bool missing_a = !ma.empty() && ma[k], missing_b = !mb.empty() && mb[k];
    s.masked_vertices += missing_a;
    s.mask_mismatch += missing_a != missing_b;
    if (missing_a || missing_b) continue;
    const double d = std::fabs(double(original.values[k]) - double(decompressed.values[k]));
    s.max_abs_error = std::max(s.max_abs_error, d);
    sq += d * d;
    ++both;
  }
  s.rmse = both > 0 ? std::sqrt(sq / double(both)) : 0.0;
  s.psnr = s.rmse == 0 ? std::numeric_limits<double>::infinity()
                       : 20.0 * std::log10(s.value_range) - 20.0 * std::log10(s.rmse);
  return s;
}

}  // namespace

}  // namespace factz
