// Small helpers the contour-tree tests share: a field from values (and a mask), a smooth field
// with noise, the tree at an absolute persistence, and its nodes with their types.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
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

/// A smooth field with a little noise (seeded): waves along x and y, a ramp along z.
template <class T>
ScalarFieldOf<T> smooth(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  ScalarFieldOf<T> f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        f.values.push_back(T(10.0 * std::sin(0.23 * double(x)) * std::cos(0.19 * double(y)) + 2.0 * double(z) +
                             0.3 * u(rng)));
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

/// Without regions and contour arcs the sweeps visit only the critical vertices (regular
/// ones hang from a neighbour in union-find); the tree must be the one of the sweeps over
/// every vertex, `full`, in all else.
inline void expect_same_tree_from_critical_vertices(const ScalarField& f, double p_abs, const ContourTree& full,
                                                    int threads = 0) {
  CtOptions o;
  o.persistence_mode = BoundMode::abs;
  o.persistence = p_abs;
  o.contour_arcs = false;
  o.threads = threads;
  auto r = contour_tree(f, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const ContourTree& t = r.value();
  ASSERT_EQ(t.nodes.size(), full.nodes.size());
  for (size_t k = 0; k < t.nodes.size(); ++k) {
    EXPECT_EQ(t.nodes[k].vertex, full.nodes[k].vertex);
    EXPECT_EQ(t.nodes[k].type, full.nodes[k].type);
    EXPECT_EQ(t.nodes[k].up_degree, full.nodes[k].up_degree);
    EXPECT_EQ(t.nodes[k].down_degree, full.nodes[k].down_degree);
  }
  EXPECT_EQ(t.join_arcs, full.join_arcs);
  EXPECT_EQ(t.split_arcs, full.split_arcs);
  ASSERT_EQ(t.pairs.size(), full.pairs.size());
  for (size_t k = 0; k < t.pairs.size(); ++k) {
    EXPECT_EQ(t.pairs[k].extremum, full.pairs[k].extremum);
    EXPECT_EQ(t.pairs[k].saddle, full.pairs[k].saddle);
    EXPECT_EQ(t.pairs[k].persistence, full.pairs[k].persistence);
  }
  EXPECT_EQ(t.pruned_pairs, full.pruned_pairs);
  EXPECT_EQ(t.full_nodes, full.full_nodes);
  EXPECT_EQ(t.components, full.components);
}

inline std::vector<std::pair<int64_t, CtNodeType>> typed_nodes(const ContourTree& t) {
  std::vector<std::pair<int64_t, CtNodeType>> v;
  for (const auto& n : t.nodes) v.push_back({n.vertex, n.type});
  return v;
}

}  // namespace factz::ct_test
