// Contour trees: hand-derived trees (ties, plateaus, tiny grids), agreement with the
// brute-force level-set reference, simplification and thread independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "ct_reference.hpp"
#include "ct_test_support.hpp"
#include "factz/contour_tree.hpp"

namespace factz {
namespace {

using ct_test::make;
using ct_test::tree_of;
using ct_test::typed_nodes;

TEST(ContourTree, HandDerivedTreeWithTiesOn3x3) {
  // 1 2 1 / 2 9 2 / 1 2 1: four minima (ties broken by index), three split saddles joining
  // them in index order (1, 3, 5), the maximum in the centre; vertex 7 is regular.
  const auto t = tree_of(make(3, 3, 1, {1, 2, 1, 2, 9, 2, 1, 2, 1}));
  using T = CtNodeType;
  const std::vector<std::pair<int64_t, CtNodeType>> want = {
      {0, T::minimum},      {1, T::split_saddle}, {2, T::minimum}, {3, T::split_saddle},
      {4, T::maximum},      {5, T::split_saddle}, {6, T::minimum}, {8, T::minimum}};
  EXPECT_EQ(typed_nodes(t), want);
  const std::vector<CtArc> arcs = {{0, 1}, {1, 3}, {2, 1}, {3, 5}, {5, 4}, {6, 3}, {8, 5}};
  EXPECT_EQ(t.arcs, arcs);
  // Branch decomposition: minima 2, 6 and 8 pair with the saddles they join at.
  ASSERT_EQ(t.pairs.size(), 4u);
}

TEST(ContourTree, ConstantFieldIsOneArcFromFirstToLastVertex) {
  for (auto [nx, ny, nz] : {std::tuple{4, 3, 1}, std::tuple{3, 3, 3}, std::tuple{7, 1, 1}}) {
    const int64_t n = int64_t(nx) * ny * nz;
    const auto t = tree_of(make(nx, ny, nz, std::vector<float>(size_t(n), 2.5f)));
    ASSERT_EQ(t.nodes.size(), 2u);
    EXPECT_EQ(t.nodes[0].vertex, 0);
    EXPECT_EQ(t.nodes[0].type, CtNodeType::minimum);
    EXPECT_EQ(t.nodes[1].vertex, n - 1);
    EXPECT_EQ(t.nodes[1].type, CtNodeType::maximum);
    EXPECT_EQ(t.arcs, (std::vector<CtArc>{{0, n - 1}}));
  }
}

TEST(ContourTree, TinyGrids) {
  const auto one = tree_of(make(1, 1, 1, {3}));
  ASSERT_EQ(one.nodes.size(), 1u);
  EXPECT_EQ(one.nodes[0].type, CtNodeType::isolated);
  EXPECT_TRUE(one.arcs.empty());
  const auto two = tree_of(make(2, 1, 1, {5, -1}));
  EXPECT_EQ(typed_nodes(two), (std::vector<std::pair<int64_t, CtNodeType>>{{0, CtNodeType::maximum},
                                                                           {1, CtNodeType::minimum}}));
  EXPECT_EQ(two.arcs, (std::vector<CtArc>{{1, 0}}));
  // 2x2: the diagonal (0)-(3) is an edge, (1)-(2) is not: 1 and 2 are both maxima.
  const auto four = tree_of(make(2, 2, 1, {0, 5, 6, 1}));
  EXPECT_EQ(typed_nodes(four), (std::vector<std::pair<int64_t, CtNodeType>>{{0, CtNodeType::minimum},
                                                                            {1, CtNodeType::maximum},
                                                                            {2, CtNodeType::maximum},
                                                                            {3, CtNodeType::join_saddle}}));
  EXPECT_EQ(four.arcs, (std::vector<CtArc>{{0, 3}, {3, 1}, {3, 2}}));
}

TEST(ContourTree, PlateauSaddleIsResolvedByIndex) {
  // Two peaks separated by a flat ridge of equal values: exactly one join saddle on it.
  const auto t = tree_of(make(5, 3, 1, {0, 0, 0, 0, 0,  //
                                        0, 7, 3, 8, 0,  //
                                        0, 0, 0, 0, 0}));
  int saddles = 0, maxima = 0;
  for (const auto& n : t.nodes) {
    saddles += n.type == CtNodeType::join_saddle;
    maxima += n.type == CtNodeType::maximum;
  }
  EXPECT_EQ(maxima, 2);
  EXPECT_EQ(saddles, 1);
  EXPECT_EQ(t.nodes.size(), t.arcs.size() + 1);
}

// Returns the number of saddles, so that the callers can check the fields were not trivial.
int expect_matches_reference(const ScalarField& f) {
  const auto fast = tree_of(f);
  const auto ref = testing::reference_contour_tree(f.values, f.nx, f.ny, f.nz);
  std::vector<std::tuple<int64_t, int, int>> nodes;
  for (const auto& n : fast.nodes) nodes.emplace_back(n.vertex, n.up_degree, n.down_degree);
  int saddles = 0;
  for (const auto& n : fast.nodes) saddles += n.up_degree + n.down_degree >= 3;
  if (f.size() == 1) return 0;
  EXPECT_EQ(nodes, ref.nodes);
  EXPECT_EQ(fast.arcs, ref.arcs);
  return saddles;
}

TEST(ContourTree, AgreesWithBruteForceLevelSetsIn2D) {
  std::mt19937 rng(7);
  int saddles = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t nx = 1 + int64_t(rng() % 7), ny = 1 + int64_t(rng() % 6);
    std::vector<float> v(size_t(nx * ny));
    const int levels = trial % 3 == 0 ? 3 : 1000;  // many ties in every third field
    for (auto& x : v) x = float(int(rng() % levels));
    SCOPED_TRACE("trial " + std::to_string(trial) + " " + std::to_string(nx) + "x" + std::to_string(ny));
    saddles += expect_matches_reference(make(nx, ny, 1, v));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(saddles, 300);
}

TEST(ContourTree, AgreesWithBruteForceLevelSetsIn3D) {
  std::mt19937 rng(11);
  int saddles = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t nx = 2 + int64_t(rng() % 3), ny = 2 + int64_t(rng() % 3), nz = 2 + int64_t(rng() % 2);
    std::vector<float> v(size_t(nx * ny * nz));
    const int levels = trial % 3 == 0 ? 2 : 1000;
    for (auto& x : v) x = float(int(rng() % levels));
    SCOPED_TRACE("trial " + std::to_string(trial));
    saddles += expect_matches_reference(make(nx, ny, nz, v));
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(saddles, 80);
}

ScalarField noisy_waves(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
  ScalarField f = make(nx, ny, nz, std::vector<float>(size_t(nx * ny * nz)));
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        f.values[size_t((z * ny + y) * nx + x)] =
            std::sin(0.3f * float(x)) * std::cos(0.25f * float(y)) + 0.3f * std::sin(0.4f * float(z)) + noise(rng);
  return f;
}

TEST(ContourTree, SimplificationRemovesNodesMonotonically) {
  const auto f = noisy_waves(40, 30, 1, 3);
  std::vector<int64_t> prev;
  size_t prev_count = SIZE_MAX;
  for (double p : {0.0, 0.01, 0.05, 0.1, 0.5, 1.0, 10.0}) {
    const auto t = tree_of(f, p, true);
    if (p == 0.0) {
      EXPECT_TRUE(t.contour_arcs);  // unsimplified: always a contour tree
    }
    if (t.contour_arcs) {
      ASSERT_EQ(t.nodes.size(), t.arcs.size() + 1);
    }
    ASSERT_LE(t.nodes.size(), prev_count);
    std::vector<int64_t> now;
    for (const auto& n : t.nodes) now.push_back(n.vertex);
    if (!prev.empty()) {
      EXPECT_TRUE(std::includes(prev.begin(), prev.end(), now.begin(), now.end()));
    }
    // Every vertex is a node (its region is itself) or lies strictly between two nodes in
    // (value, index) order.
    auto below = [&](int64_t a, int64_t b) {
      return f.values[size_t(a)] < f.values[size_t(b)] || (f.values[size_t(a)] == f.values[size_t(b)] && a < b);
    };
    ASSERT_EQ(t.segmentation.size(), f.values.size());
    int64_t node_cells = 0;
    for (int64_t v = 0; v < f.size(); ++v) {
      const CtRegion r = t.segmentation[size_t(v)];
      const bool node = std::binary_search(now.begin(), now.end(), v);
      if (node) {
        ASSERT_TRUE(r.lower == uint32_t(v) && r.upper == uint32_t(v)) << v;
        ++node_cells;
        continue;
      }
      ASSERT_TRUE(std::binary_search(now.begin(), now.end(), int64_t(r.lower))) << v;
      ASSERT_TRUE(std::binary_search(now.begin(), now.end(), int64_t(r.upper))) << v;
      ASSERT_TRUE(below(r.lower, v) && below(v, r.upper)) << v;
    }
    EXPECT_EQ(node_cells, int64_t(t.nodes.size()));
    // The branch decomposition pairs every extremum but one.
    int64_t extrema = 0;
    for (const auto& n : t.nodes) extrema += n.type == CtNodeType::minimum || n.type == CtNodeType::maximum;
    EXPECT_EQ(int64_t(t.pairs.size()), extrema - 1);
    prev = now;
    prev_count = t.nodes.size();
  }
  EXPECT_EQ(prev_count, 2u);  // above the range only the global minimum and maximum stay
}

TEST(ContourTree, SameTreeForAnyThreadCount) {
  const auto f = noisy_waves(70, 50, 20, 5);
  const auto a = tree_of(f, 0.05, true, 1);
  const auto b = tree_of(f, 0.05, true, 2);
  EXPECT_TRUE(compare_contour_trees(a, b).same());
  EXPECT_EQ(a.arcs, b.arcs);
  ASSERT_EQ(a.segmentation.size(), b.segmentation.size());
  for (size_t v = 0; v < a.segmentation.size(); ++v)
    ASSERT_TRUE(a.segmentation[v].lower == b.segmentation[v].lower && a.segmentation[v].upper == b.segmentation[v].upper);
}

// The radix sort splits its keys into chunks of at least 65536 and each thread classifies
// rows of its own: fields this large take both paths with several chunks.
TEST(ContourTree, SweepsOverTheCriticalVerticesGiveTheSameTree) {
  std::mt19937 rng(29);
  ScalarField terraced = noisy_waves(90, 70, 24, 8);
  for (float& x : terraced.values) x = std::round(4.0f * x) / 4.0f;  // plateaus: ties everywhere
  ScalarField masked = noisy_waves(300, 250, 1, 9);
  masked.mask.assign(masked.values.size(), 0);
  for (size_t k = 0; k < masked.mask.size(); ++k) masked.mask[k] = (k / 300) % 50 == 7 || rng() % 20 == 0;
  ScalarField ties = make(120, 90, 12, std::vector<float>(120 * 90 * 12));
  for (float& x : ties.values) x = float(int(rng() % 4)) - 1.0f;
  for (size_t k = 0; k < ties.values.size(); k += 7)  // -0 ties with +0
    if (ties.values[k] == 0.0f) ties.values[k] = -0.0f;
  for (const ScalarField* f : {&terraced, &masked, &ties})
    for (double p : {0.0, 0.05, 0.3})
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(std::to_string(f->nx) + "x" + std::to_string(f->ny) + "x" + std::to_string(f->nz) + " p " +
                     std::to_string(p) + " threads " + std::to_string(threads));
        ct_test::expect_same_tree_from_critical_vertices(*f, p, tree_of(*f, p, false, 1), threads);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST(ContourTree, RejectsBadFields) {
  EXPECT_FALSE(contour_tree(make(0, 1, 1, {})).ok());
  EXPECT_FALSE(contour_tree(make(2, 2, 1, {1, 2, 3})).ok());
  // Infinity at a valid vertex is refused; NaN marks a missing vertex (issue 17).
  auto r = contour_tree(make(2, 1, 1, {1, std::numeric_limits<float>::infinity()}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("infinite"), std::string::npos);
  auto nan = contour_tree(make(2, 1, 1, {1, std::numeric_limits<float>::quiet_NaN()}));
  ASSERT_TRUE(nan.ok());
  ASSERT_EQ(nan->nodes.size(), 1u);
  EXPECT_EQ(nan->nodes[0].vertex, 0);
  EXPECT_EQ(nan->nodes[0].type, CtNodeType::isolated);
  CtOptions o;
  o.persistence = -1;
  EXPECT_FALSE(contour_tree(make(2, 1, 1, {1, 2}), o).ok());
}

TEST(ContourTree, ComparisonCountsFalseCases) {
  const auto a = tree_of(make(3, 3, 1, {1, 2, 1, 2, 9, 2, 1, 2, 1}));
  const auto b = tree_of(make(3, 3, 1, {1, 2, 3, 2, 9, 2, 1, 2, 1}));  // minimum 2 disappears
  const auto c = compare_contour_trees(a, b);
  EXPECT_FALSE(c.same());
  EXPECT_GE(c.false_negative, 1);
  EXPECT_TRUE(std::binary_search(c.offending.begin(), c.offending.end(), int64_t(2)));
  EXPECT_TRUE(compare_contour_trees(a, a).same());
}

}  // namespace
}  // namespace factz
