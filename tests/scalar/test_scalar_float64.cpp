// float64 scalar fields (issue 18): the contour tree of the doubles themselves (ordered by
// (value, index) in double, against the brute-force references), TopoSZ and mode none round
// trips in 2D and 3D that keep the tree and the bound in double, traps that fail whenever a
// value goes through float32 on the way, thread-independent bytes, the decoders refusing
// the other type, and masked float64 fields whose missing vertices come back bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "ct_reference.hpp"
#include "merge_tree_reference.hpp"
#include "factz/contour_tree.hpp"
#include "factz/factz.hpp"
#include "factz/scalar.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

// A float just above 1 is 1 + 2^-23 (1.2e-7): 1e-12 steps are far below it.
constexpr double kTiny = 1e-12;

ScalarField64 field64(int64_t nx, int64_t ny, int64_t nz, std::vector<double> v, std::vector<uint8_t> mask = {}) {
  ScalarField64 f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values = std::move(v);
  f.mask = std::move(mask);
  return f;
}

// Smooth waves with double noise, `scale` times (plus `offset`).
ScalarField64 smooth64(int64_t nx, int64_t ny, int64_t nz, double noise, uint32_t seed, double offset = 0,
                       double scale = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        v.push_back(offset + scale * (10.0 * std::sin(0.21 * double(x)) * std::cos(0.17 * double(y)) +
                                      3.0 * std::cos(0.3 * double(z) + 0.1 * double(x)) + noise * u(rng)));
  return field64(nx, ny, nz, std::move(v));
}

// 1 + k * 1e-12 with k in [0, levels): every value rounds to the float 1.0f, so the field's
// extrema, saddles and order exist only in double; few levels make ties in double too.
ScalarField64 below_float_resolution(int64_t nx, int64_t ny, int64_t nz, int levels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> v;
  for (int64_t k = 0; k < nx * ny * nz; ++k) v.push_back(1.0 + double(int(rng() % uint32_t(levels))) * kTiny);
  return field64(nx, ny, nz, std::move(v));
}

ScalarField to_float(const ScalarField64& f) {
  ScalarField g;
  g.nx = f.nx;
  g.ny = f.ny;
  g.nz = f.nz;
  g.mask = f.mask;
  for (double x : f.values) g.values.push_back(float(x));
  return g;
}

/// |a - b| <= eb exactly (TwoSum: a - b = s + e; an independent check, not the library's).
bool exactly_within(double a, double b, double eb) {
  const double s = a - b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (-b - bb);
  if (std::fabs(s) != eb) return std::fabs(s) < eb;
  return e == 0 || (s > 0) != (e > 0);
}

template <class T>
ContourTree tree_of(const ScalarFieldOf<T>& f, double p_abs, bool contour_arcs = true) {
  CtOptions o;
  o.persistence_mode = BoundMode::abs;
  o.persistence = p_abs;
  o.contour_arcs = contour_arcs;
  auto t = contour_tree(f, o);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? t.value() : ContourTree{};
}

uint16_t version_of(const std::vector<uint8_t>& s) { return testing::layout_version(s); }

struct RoundTrip {
  std::vector<uint8_t> stream;
  ScalarCompressStats stats;
  ScalarField64 back;
  ScalarComparison cmp;
};

RoundTrip round_trip(const ScalarField64& f, const ScalarOptions& o) {
  RoundTrip r;
  auto s = compress_scalar(f, o, &r.stats);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return r;
  r.stream = s.value();
  auto back = decompress_scalar64(r.stream);
  EXPECT_TRUE(back.ok()) << back.status().to_string();
  if (!back.ok()) return r;
  r.back = back.value();
  auto c = compare_scalar(f, r.back, BoundMode::rel, o.persistence);  // as the encoder measures it
  EXPECT_TRUE(c.ok());
  if (c.ok()) r.cmp = c.value();
  return r;
}

ScalarOptions options(ScalarMode mode, BoundMode bound_mode, double bound, double persistence, int threads = 0) {
  ScalarOptions o;
  o.mode = mode;
  o.bound_mode = bound_mode;
  o.bound = bound;
  o.persistence = persistence;
  o.threads = threads;
  return o;
}

// The tree (contour-tree mode) and the bound, exactly, at every valid vertex; the stream is
// a float64 stream (data type 2, version 6, or 11 or 14 for a contour-tree stream on the lattice;
// 15, 16 and 17 when context-coded, as the default coder may keep; 22 or 23 on the
// interpolation predictor, as the default predictor may keep).
void expect_kept(const ScalarField64& f, const ScalarOptions& o) {
  SCOPED_TRACE(std::string(o.mode == ScalarMode::none ? "none" : "contour-tree") + " bound " +
               std::to_string(o.bound) + " persistence " + std::to_string(o.persistence));
  const RoundTrip r = round_trip(f, o);
  ASSERT_FALSE(r.stream.empty());
  EXPECT_EQ(testing::header_of(r.stream).dtype, 2);  // data type float64
  const uint16_t version = version_of(r.stream);
  const bool lattice = version == 11 || version == 14 || version == 16 || version == 17;
  if (o.mode == ScalarMode::contour_tree && lattice) {
    EXPECT_EQ(testing::header_of(r.stream).components, 1);
  } else {
    EXPECT_TRUE(version == 6 || version == 15 || version == 22 || version == 23) << version;
  }
  ASSERT_EQ(r.back.values.size(), f.values.size());
  EXPECT_EQ(r.back.nx, f.nx);
  EXPECT_EQ(r.back.ny, f.ny);
  EXPECT_EQ(r.back.nz, f.nz);
  const std::vector<uint8_t> missing = missing_mask(f);
  int64_t outside = 0;
  for (size_t k = 0; k < f.values.size(); ++k)
    if (missing.empty() || !missing[k]) outside += !exactly_within(r.back.values[k], f.values[k], r.stats.eb_abs);
  EXPECT_EQ(outside, 0) << "values outside the bound " << r.stats.eb_abs;
  EXPECT_EQ(r.cmp.mask_mismatch, 0);
  if (o.mode == ScalarMode::contour_tree) {
    const CtComparison& t = r.cmp.tree;
    EXPECT_GT(t.nodes_original, 0);
    EXPECT_EQ(t.false_cases(), 0);
    EXPECT_TRUE(t.same()) << "arcs " << t.arcs_missing << "/" << t.arcs_extra << " pairs " << t.pairs_missing << "/"
                          << t.pairs_extra;
  }
}

// The fast tree of a float64 field equals the brute-force references' (nodes with degrees,
// pairs, simplified merge trees; at p_abs 0 the level-set contour tree where it is one).
void expect_matches_reference(const ScalarField64& f, double p_abs) {
  const ContourTree t = tree_of(f, p_abs);
  const auto ref = testing::reference_merge_trees(f.values, f.nx, f.ny, f.nz, p_abs, f.mask);
  std::vector<std::tuple<int64_t, int, int>> nodes;
  for (const auto& n : t.nodes) nodes.emplace_back(n.vertex, n.up_degree, n.down_degree);
  EXPECT_EQ(nodes, ref.nodes);
  std::vector<std::tuple<int64_t, int64_t>> pairs;
  for (const auto& p : t.pairs) pairs.emplace_back(p.extremum, p.saddle);
  EXPECT_EQ(pairs, ref.pairs);
  EXPECT_EQ(t.join_arcs, ref.join_arcs);
  EXPECT_EQ(t.split_arcs, ref.split_arcs);
  EXPECT_EQ(t.components, ref.components);
  const ContourTree critical_only = tree_of(f, p_abs, false);  // the sweeps over critical vertices only
  EXPECT_EQ(critical_only.join_arcs, t.join_arcs);
  EXPECT_EQ(critical_only.split_arcs, t.split_arcs);
  EXPECT_EQ(critical_only.nodes.size(), t.nodes.size());
  if (p_abs == 0 && f.mask.empty() && f.size() > 1) {
    const auto graph = testing::reference_contour_tree(f.values, f.nx, f.ny, f.nz);
    EXPECT_EQ(t.arcs, graph.arcs);
  }
}

TEST(Float64ContourTree, OrdersVerticesAsDoublesAgainstTheBruteForceReferences) {
  std::mt19937 rng(18);
  int64_t nodes = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const bool three = trial % 3 == 2;
    const int64_t nx = 2 + int64_t(rng() % 6), ny = 2 + int64_t(rng() % 5), nz = three ? 2 + int64_t(rng() % 3) : 1;
    ScalarField64 f = below_float_resolution(nx, ny, nz, 2 + int(rng() % 6), rng());
    if (trial % 4 == 3) {  // a mask too
      f.mask.assign(f.values.size(), 0);
      for (auto& m : f.mask) m = rng() % 5 == 0;
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    for (double p : {0.0, 1.5 * kTiny, 3.5 * kTiny}) expect_matches_reference(f, p);
    nodes += int64_t(tree_of(f, 0).nodes.size());
  }
  EXPECT_GT(nodes, 120 * 4);  // not trivial: the float rounding of each field has 2 nodes (one arc)
}

TEST(Float64ContourTree, TwoValuesApartOnlyBelowFloatPrecisionOrderAsDoubles) {
  // A path of 3: the middle value is the lowest in double; as floats the three tie and the
  // index decides (vertex 0 lowest, no saddle).
  const ScalarField64 f = field64(3, 1, 1, {1.0 + 2 * kTiny, 1.0 + kTiny, 1.0 + 3 * kTiny});
  ASSERT_EQ(float(f.values[0]), float(f.values[1]));
  const ContourTree t = tree_of(f, 0);
  const ContourTree t32 = tree_of(to_float(f), 0);
  ASSERT_EQ(t32.nodes.size(), 2u);  // float: vertex 0 the minimum, vertex 2 the maximum
  EXPECT_EQ(t32.nodes[0].vertex, 0);
  std::vector<std::pair<int64_t, CtNodeType>> typed;
  for (const auto& n : t.nodes) typed.emplace_back(n.vertex, n.type);
  // double: vertex 1 is the minimum, vertex 0 a maximum that dies there, vertex 2 the maximum
  EXPECT_EQ(typed, (std::vector<std::pair<int64_t, CtNodeType>>{
                       {0, CtNodeType::maximum}, {1, CtNodeType::minimum}, {2, CtNodeType::maximum}}));
  // The persistence of the pair (0, 1) is measured in double: 1e-12, not 0.
  bool found = false;
  for (const auto& p : t.pairs)
    if (p.extremum == 0 && p.saddle == 1) {
      found = true;
      EXPECT_EQ(p.persistence, f.values[0] - f.values[1]);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(t.nodes[1].value, 1.0 + kTiny);  // node values keep all 64 bits
  // Ties in double still go by index.
  const ScalarField64 tie = field64(3, 1, 1, {1.0 + kTiny, 1.0 + kTiny, 1.0 + 2 * kTiny});
  EXPECT_EQ(tree_of(tie, 0).nodes.front().vertex, 0);
}

TEST(Float64ContourTree, AFieldOfFloatsGivesTheFloatTree) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t nx = 3 + int64_t(rng() % 9), ny = 3 + int64_t(rng() % 7), nz = trial % 2 ? 1 : 3;
    ScalarField f32;
    f32.nx = nx;
    f32.ny = ny;
    f32.nz = nz;
    for (int64_t k = 0; k < nx * ny * nz; ++k) f32.values.push_back(float(int(rng() % 7)) * 0.25f - 0.5f);
    ScalarField64 f64 = field64(nx, ny, nz, std::vector<double>(f32.values.begin(), f32.values.end()));
    for (double p : {0.0, 0.3}) {
      const ContourTree a = tree_of(f32, p), b = tree_of(f64, p);
      ASSERT_EQ(a.nodes.size(), b.nodes.size());
      for (size_t k = 0; k < a.nodes.size(); ++k) {
        EXPECT_EQ(a.nodes[k].vertex, b.nodes[k].vertex);
        EXPECT_EQ(a.nodes[k].type, b.nodes[k].type);
        EXPECT_EQ(a.nodes[k].value, b.nodes[k].value);
      }
      EXPECT_EQ(a.arcs, b.arcs);
      EXPECT_EQ(a.join_arcs, b.join_arcs);
      EXPECT_EQ(a.split_arcs, b.split_arcs);
      EXPECT_TRUE(compare_contour_trees(a, b).same());
    }
  }
}

TEST(Float64Scalar, RoundTripsKeepTheTreeAndTheBoundIn2DAnd3D) {
  for (const ScalarField64& f : {smooth64(90, 70, 1, 0.2, 4), smooth64(30, 24, 18, 0.3, 5)}) {
    SCOPED_TRACE(std::to_string(f.nx) + "x" + std::to_string(f.ny) + "x" + std::to_string(f.nz));
    for (double rel : {1e-2, 1e-3}) {
      expect_kept(f, options(ScalarMode::none, BoundMode::rel, rel, 0));
      for (double p : {1e-2, 1e-3}) expect_kept(f, options(ScalarMode::contour_tree, BoundMode::rel, rel, p));
    }
  }
}

TEST(Float64Scalar, KeepsATreeThatExistsOnlyInDouble) {
  // The trap: 1 + 1e-12 * (waves and noise). Every value rounds to 1.0f, so a float32 path
  // sees a constant field (2 nodes) and misses the bound 1e-15 (far below float resolution)
  // by up to 1e-11. The double path must keep the doubles' tree and the bound.
  const ScalarField64 f = smooth64(48, 40, 1, 0.5, 6, 1.0, kTiny);
  const ScalarField64 f3 = smooth64(16, 14, 10, 0.5, 7, 1.0, kTiny);
  for (const ScalarField64* g : {&f, &f3}) {
    for (double v : g->values) ASSERT_EQ(float(v), 1.0f);
    EXPECT_GT(tree_of(*g, 1e-2 * 13 * kTiny).nodes.size(), 4u);
    EXPECT_EQ(tree_of(to_float(*g), 0).nodes.size(), 2u);
    for (double eb : {1e-15, 1e-13}) {
      expect_kept(*g, options(ScalarMode::contour_tree, BoundMode::abs, eb, 1e-2));
      expect_kept(*g, options(ScalarMode::none, BoundMode::abs, eb, 0));
    }
    expect_kept(*g, options(ScalarMode::contour_tree, BoundMode::rel, 1e-3, 1e-3));
    ScalarCompressStats st;
    ASSERT_TRUE(compress_scalar(*g, options(ScalarMode::none, BoundMode::abs, 1e-15, 0), &st).ok());
    EXPECT_EQ(st.eb_abs, 1e-15);  // kept in double: not float_bound's 1e-15f
  }
}

TEST(Float64Scalar, BytesDoNotDependOnTheThreadCount) {
  const ScalarField64 f = smooth64(40, 30, 20, 0.3, 8);
  for (auto mode : {ScalarMode::contour_tree, ScalarMode::none}) {
    ScalarOptions o = options(mode, BoundMode::rel, 1e-2, mode == ScalarMode::none ? 0 : 1e-3, 1);
    auto a = compress_scalar(f, o);
    o.threads = 2;
    auto b = compress_scalar(f, o);
    o.policy = Policy::serial;
    auto c = compress_scalar(f, o);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(a.value(), b.value());
    EXPECT_EQ(a.value(), c.value());
  }
}

TEST(Float64Scalar, ZeroBoundIsLossless) {
  const ScalarField64 f = below_float_resolution(20, 10, 1, 1000, 7);
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    auto s = compress_scalar(f, options(mode, BoundMode::abs, 0, 1e-2));
    ASSERT_TRUE(s.ok());
    auto back = decompress_scalar64(s.value());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->values, f.values);
  }
}

TEST(Float64Scalar, DecodersRefuseTheOtherType) {
  const ScalarField64 f = smooth64(16, 12, 1, 0.1, 10);
  auto s64 = compress_scalar(f, {});
  auto s32 = compress_scalar(to_float(f), {});
  ASSERT_TRUE(s64.ok() && s32.ok());
  EXPECT_EQ(scalar_stream_dtype(s64.value()).value(), DType::float64);
  EXPECT_EQ(scalar_stream_dtype(s32.value()).value(), DType::float32);
  auto a = decompress_scalar(s64.value());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::invalid_argument);
  EXPECT_NE(a.status().message().find("decompress_scalar64"), std::string::npos) << a.status().message();
  auto b = decompress_scalar64(s32.value());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::invalid_argument);
  EXPECT_NE(b.status().message().find("decompress_scalar"), std::string::npos) << b.status().message();
  // Vector decoders refuse a float64 scalar stream, the float64 scalar decoder a vector one.
  EXPECT_FALSE(decompress(s64.value()).ok());
  EXPECT_FALSE(decompress64(s64.value()).ok());
  VectorField2D64 v;
  v.nx = 8;
  v.ny = 8;
  v.u.assign(64, 1.0);
  v.v.assign(64, -1.0);
  auto vec = compress(v, {});
  ASSERT_TRUE(vec.ok());
  auto c = decompress_scalar64(vec.value());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_NE(c.status().message().find("vector field"), std::string::npos) << c.status().message();
  EXPECT_FALSE(scalar_stream_dtype(vec.value()).ok());
}

TEST(Float64Scalar, MaskedFieldsGiveTheirMissingVerticesBackBitForBit) {
  // Land as a fill value only a double holds, a NaN with a payload, and a mask.
  const double fill = -9999.000000000123;
  ASSERT_NE(double(float(fill)), fill);
  ScalarField64 f = smooth64(40, 30, 3, 0.2, 11, 1.0, kTiny);
  const double nan_payload = std::bit_cast<double>(uint64_t(0x7FF8000000012345u));
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y)
      for (int64_t x = 0; x < f.nx; ++x) {
        double& v = f.values[size_t((z * f.ny + y) * f.nx + x)];
        if (x > 28 && y < 12) v = fill;
        if ((x * 7 + y * 3 + z) % 97 == 0) v = nan_payload;
      }
  ScalarField64 declared = f;
  const int64_t missing = mark_missing(declared, fill);
  EXPECT_GT(missing, 11 * 12 * 3);
  ScalarField64 as_float_fill = f;  // the fill value rounded to float32 finds nothing
  EXPECT_LT(mark_missing(as_float_fill, double(float(fill))), missing);
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    const ScalarOptions o = options(mode, BoundMode::abs, 1e-14, mode == ScalarMode::none ? 0 : 1e-2);
    expect_kept(declared, o);
    const RoundTrip r = round_trip(declared, o);
    EXPECT_EQ(r.stats.masked_vertices, missing);
    EXPECT_EQ(r.back.mask, declared.mask);
    for (size_t k = 0; k < f.values.size(); ++k) {
      if (declared.mask[k])
        EXPECT_EQ(std::bit_cast<uint64_t>(r.back.values[k]), std::bit_cast<uint64_t>(f.values[k])) << k;
      else
        EXPECT_NE(r.back.values[k], fill) << k;  // declaring the fill value again finds the same vertices
    }
  }
}

TEST(Float64Scalar, CorruptStreamsAreRejectedWithoutCrashing) {
  ScalarField64 f = smooth64(12, 10, 3, 0.2, 12);
  f.values[17] = std::nan("");
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    ScalarOptions o = options(mode, BoundMode::rel, 1e-2, 1e-2);
    o.zstd = mode == ScalarMode::none;
    auto s = compress_scalar(f, o);
    ASSERT_TRUE(s.ok());
    const std::vector<uint8_t> good = s.value();
    ASSERT_TRUE(decompress_scalar64(good).ok());
    for (size_t cut = 0; cut < good.size(); cut += 7)
      EXPECT_FALSE(decompress_scalar64(std::span<const uint8_t>(good.data(), cut)).ok()) << cut;
    std::mt19937 rng(13);
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= uint8_t(1 + rng() % 255);
      EXPECT_FALSE(decompress_scalar64(bad).ok()) << "byte " << i;  // every byte is under a checksum
    }
  }
}

TEST(Float64Scalar, RejectsBadInput) {
  ScalarField64 inf = smooth64(3, 3, 1, 0, 1);
  inf.values[4] = std::numeric_limits<double>::infinity();
  auto r = compress_scalar(inf, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_FALSE(contour_tree(inf).ok());
  ScalarField64 short_values = smooth64(3, 3, 1, 0, 1);
  short_values.values.pop_back();
  EXPECT_FALSE(compress_scalar(short_values, {}).ok());
}

}  // namespace
}  // namespace factz
