// Small helpers the contour-tree tests share: a field from values (and a mask), the tree at an
// absolute persistence, and its nodes with their types.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "factz/contour_tree.hpp"
#include "factz/scalar.hpp"

namespace factz::ct_test {

inline ScalarField make(int64_t nx, int64_t ny, int64_t nz, std::vector<float> v, std::vector<uint8_t> mask = {}) {
  ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values = std::move(v);
  f.mask = std::move(mask);
  return f;
}

/// The tree of f at the absolute persistence p_abs; a failure fails the test (and gives an
/// empty tree).
inline ContourTree tree_of(const ScalarField& f, double p_abs = 0, bool segmentation = false, int threads = 0) {
  CtOptions o;
  o.persistence_mode = BoundMode::abs;
  o.persistence = p_abs;
  o.segmentation = segmentation;
  o.threads = threads;
  auto r = contour_tree(f, o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : ContourTree{};
}

inline std::vector<std::pair<int64_t, CtNodeType>> typed_nodes(const ContourTree& t) {
  std::vector<std::pair<int64_t, CtNodeType>> v;
  for (const auto& n : t.nodes) v.push_back({n.vertex, n.type});
  return v;
}

}  // namespace factz::ct_test
