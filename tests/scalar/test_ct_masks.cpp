// Missing vertices in scalar fields (issue 17): the contour forest of the valid part of
// the grid against the brute-force references for masks of every shape, round trips that
// give the missing vertices back bit for bit in both modes, version 2 streams that still
// decode, and damaged masked streams that are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <tuple>

#include "ct_reference.hpp"
#include "ct_test_support.hpp"
#include "merge_tree_reference.hpp"
#include "factz/contour_tree.hpp"
#include "factz/scalar.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using ct_test::make;

using MaskRule = std::function<bool(int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz)>;

struct Shape {
  const char* name;
  MaskRule missing;
};

// Masks of every shape: none, all, one valid vertex, checkerboards, channels that cut the
// grid into pieces (a column, a cross, the main diagonal, which no edge crosses) or do not
// (the other diagonal, which the cells' diagonals cross), the border, a hole (an annulus:
// its contour graph may have a loop), and scattered vertices.
const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = {
      {"none", [](int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) { return false; }},
      {"all", [](int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) { return true; }},
      {"one valid", [](int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t) {
         return !(x == nx / 2 && y == ny / 2 && z == 0);
       }},
      {"checkerboard", [](int64_t x, int64_t y, int64_t z, int64_t, int64_t, int64_t) { return (x + y + z) % 2 == 1; }},
      {"column channel", [](int64_t x, int64_t, int64_t, int64_t nx, int64_t, int64_t) { return x == nx / 2; }},
      {"cross channels", [](int64_t x, int64_t y, int64_t, int64_t nx, int64_t ny, int64_t) {
         return x == nx / 2 || y == ny / 2;
       }},
      {"main diagonal", [](int64_t x, int64_t y, int64_t, int64_t, int64_t, int64_t) { return x == y; }},
      {"other diagonal", [](int64_t x, int64_t y, int64_t, int64_t nx, int64_t, int64_t) { return x + y == nx - 1; }},
      {"border", [](int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz) {
         return x == 0 || y == 0 || x == nx - 1 || y == ny - 1 || (nz > 1 && (z == 0 || z == nz - 1));
       }},
      {"hole", [](int64_t x, int64_t y, int64_t, int64_t nx, int64_t ny, int64_t) {
         return x == nx / 2 && y == ny / 2;
       }},
      {"scattered", [](int64_t x, int64_t y, int64_t z, int64_t, int64_t, int64_t) {
         return (x * 7 + y * 13 + z * 5) % 10 < 3;
       }},
  };
  return all;
}

std::vector<uint8_t> mask_of(const Shape& s, int64_t nx, int64_t ny, int64_t nz) {
  std::vector<uint8_t> m(size_t(nx * ny * nz));
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) m[size_t((z * ny + y) * nx + x)] = s.missing(x, y, z, nx, ny, nz) ? 1 : 0;
  if (std::count(m.begin(), m.end(), uint8_t(1)) == 0) m.clear();
  return m;
}

/// The forest of f at p_abs, with its segmentation.
ContourTree tree_of(const ScalarField& f, double p_abs) { return ct_test::tree_of(f, p_abs, true); }

// The forest of `f` at `p_abs` equals the brute-force references'. Returns its components.
int64_t expect_forest_matches_reference(const ScalarField& f, double p_abs) {
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
  ct_test::expect_same_tree_from_critical_vertices(f, p_abs, t);
  // No missing vertex anywhere; every valid vertex has a region, every missing one none.
  for (const auto& n : t.nodes) EXPECT_FALSE(!f.mask.empty() && f.mask[size_t(n.vertex)]) << n.vertex;
  for (size_t v = 0; v < t.segmentation.size(); ++v)
    EXPECT_EQ(t.segmentation[v].lower == kCtNoVertex, !f.mask.empty() && f.mask[v] != 0) << v;
  if (p_abs == 0) {  // the contour graph by level sets: where it is a forest, it is ours
    const auto graph = testing::reference_contour_tree(f.values, f.nx, f.ny, f.nz, f.mask);
    const bool forest = int64_t(graph.arcs.size()) == int64_t(graph.nodes.size()) - t.components;
    if (forest) {
      EXPECT_TRUE(t.contour_arcs);
      EXPECT_EQ(t.arcs, graph.arcs);
    }
  }
  return t.components;
}

TEST(ContourForest, AgreesWithBruteForceOnMasksOfEveryShape) {
  std::mt19937 rng(17);
  int64_t pieces = 0;
  for (const auto& shape : shapes())
    for (auto [nx, ny, nz] : {std::tuple{7, 6, 1}, {6, 6, 1}, {9, 5, 1}, {4, 4, 3}})
      for (int levels : {3, 1000}) {
        std::vector<float> v(size_t(nx * ny * nz));
        for (auto& x : v) x = float(int(rng() % unsigned(levels)));
        ScalarField f = make(nx, ny, nz, v, mask_of(shape, nx, ny, nz));
        for (size_t k = 0; k < f.mask.size(); ++k)  // what missing vertices hold never matters
          if (f.mask[k]) f.values[k] = k % 2 ? std::numeric_limits<float>::infinity() : -1e30f;
        SCOPED_TRACE(std::string(shape.name) + " " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                     std::to_string(nz) + " levels " + std::to_string(levels));
        for (double p : {0.0, 1.0, 2.5, 1e9}) pieces = std::max(pieces, expect_forest_matches_reference(f, p));
        if (::testing::Test::HasFailure()) return;
      }
  EXPECT_GE(pieces, 4);  // the cross and the checkerboard cut grids into four pieces and more
}

TEST(ContourForest, EachComponentKeepsItsLowestAndHighestVertex) {
  // The cross cuts a 9 x 7 grid into four pieces; above the range every tree is its root pair.
  std::vector<float> v(63);
  std::mt19937 rng(5);
  for (auto& x : v) x = float(int(rng() % 4));
  const ScalarField f = make(9, 7, 1, v, mask_of(shapes()[5], 9, 7, 1));
  const ContourTree t = tree_of(f, 1e9);
  EXPECT_EQ(t.components, 4);
  EXPECT_EQ(t.nodes.size(), 8u);
  EXPECT_EQ(t.pairs.size(), 4u);
  EXPECT_EQ(t.join_arcs.size(), 4u);
  EXPECT_EQ(t.split_arcs.size(), 4u);
  for (const auto& p : t.pairs) {  // a root pair per piece: its lowest and highest vertex
    for (size_t w = 0; w < v.size(); ++w) {
      if (f.mask[w]) continue;
      const int64_t x = int64_t(w) % 9, y = int64_t(w) / 9, ex = p.extremum % 9, ey = p.extremum / 9;
      if ((x < 4) != (ex < 4) || (y < 3) != (ey < 3)) continue;  // another piece
      EXPECT_FALSE(v[w] < v[size_t(p.extremum)] || (v[w] == v[size_t(p.extremum)] && int64_t(w) < p.extremum));
      EXPECT_FALSE(v[w] > v[size_t(p.saddle)] || (v[w] == v[size_t(p.saddle)] && int64_t(w) > p.saddle));
    }
  }
}

TEST(ContourForest, IsolatedVerticesAndEmptyForests) {
  // Checkerboard in 2D: the valid vertices are the diagonal lines (x - y even), each a path.
  const ScalarField one = make(5, 4, 1, std::vector<float>(20, 1.0f), mask_of(shapes()[2], 5, 4, 1));
  const ContourTree t1 = tree_of(one, 0);
  ASSERT_EQ(t1.nodes.size(), 1u);
  EXPECT_EQ(t1.nodes[0].type, CtNodeType::isolated);
  EXPECT_EQ(t1.components, 1);
  EXPECT_TRUE(t1.pairs.empty());
  const ScalarField none = make(5, 4, 1, std::vector<float>(20, std::nanf("")));
  const ContourTree t0 = tree_of(none, 0);
  EXPECT_TRUE(t0.nodes.empty());
  EXPECT_TRUE(t0.pairs.empty());
  EXPECT_EQ(t0.components, 0);
}

TEST(ContourForest, InfinityIsMissingOnlyWhenDeclared) {
  ScalarField f = make(4, 3, 1, std::vector<float>(12, 2.0f));
  f.values[5] = std::numeric_limits<float>::infinity();
  auto bad = contour_tree(f);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("infinite"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(compress_scalar(f, {}).ok());
  EXPECT_EQ(mark_missing(f, std::numeric_limits<float>::infinity()), 1);
  EXPECT_TRUE(contour_tree(f).ok());
  EXPECT_TRUE(compress_scalar(f, {}).ok());
  ScalarField wrong = f;
  wrong.mask.resize(5);
  EXPECT_FALSE(contour_tree(wrong).ok());
  EXPECT_FALSE(compress_scalar(wrong, {}).ok());
}

// ---- Round trips ----------------------------------------------------------------------------

struct RoundTrip {
  ScalarField back;
  ScalarCompressStats stats;
  std::vector<uint8_t> stream;
};

RoundTrip round_trip(const ScalarField& f, const ScalarOptions& o) {
  RoundTrip r;
  auto s = compress_scalar(f, o, &r.stats);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return r;
  r.stream = s.value();
  auto d = decompress_scalar(r.stream);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  if (d.ok()) r.back = d.value();
  return r;
}

uint16_t stream_version(const std::vector<uint8_t>& s) { return testing::layout_version(s); }

// Missing vertices come back bit for bit with the mask, valid ones within the bound of the
// valid range, and in mode contour-tree the forest is the original's.
void expect_round_trip(const ScalarField& f, ScalarMode mode, double rel, bool zstd, Coder coder) {
  ScalarOptions o;
  o.mode = mode;
  o.bound = rel;
  o.persistence = 1e-2;
  o.zstd = zstd;
  o.coder = coder;
  const RoundTrip r = round_trip(f, o);
  if (::testing::Test::HasFailure()) return;
  const std::vector<uint8_t> missing = missing_mask(f);
  const int64_t count = std::count(missing.begin(), missing.end(), uint8_t(1));
  EXPECT_EQ(r.stats.masked_vertices, count);
  // Version 3 with missing vertices, else 2; a contour-tree stream on the lattice is version
  // 11, or 14 with coded exact values; on the interpolation predictor 22 (either mode).
  const uint16_t version = stream_version(r.stream);
  EXPECT_EQ(version == 22, r.stats.predictor == ScalarPredictor::interpolation) << version;
  if (mode == ScalarMode::contour_tree && (version == 11 || version == 14)) {
    EXPECT_EQ(r.stream[7], 1);  // components
  } else if (version != 22) {
    EXPECT_EQ(version, count > 0 ? 3 : 2);
  }
  ASSERT_EQ(r.back.values.size(), f.values.size());
  EXPECT_EQ(missing_mask(r.back), missing);
  float lo = 0, hi = 0;
  bool any = false;
  for (size_t k = 0; k < f.values.size(); ++k)
    if (missing.empty() || !missing[k]) {
      lo = any ? std::min(lo, f.values[k]) : f.values[k];
      hi = any ? std::max(hi, f.values[k]) : f.values[k];
      any = true;
    }
  EXPECT_LE(double(r.stats.eb_abs), rel * (double(hi) - double(lo)) * (1 + 1e-6));  // REL of the valid range
  for (size_t k = 0; k < f.values.size(); ++k) {
    if (!missing.empty() && missing[k]) {
      ASSERT_EQ(std::bit_cast<uint32_t>(r.back.values[k]), std::bit_cast<uint32_t>(f.values[k])) << k;
    } else {
      ASSERT_LE(std::fabs(double(r.back.values[k]) - double(f.values[k])), double(r.stats.eb_abs)) << k;
    }
  }
  if (mode == ScalarMode::contour_tree) {
    auto c = compare_scalar(f, r.back, BoundMode::rel, 1e-2);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->same()) << "false cases " << c->tree.false_cases() << " arcs " << c->tree.arcs_missing << "/"
                           << c->tree.arcs_extra << " pairs " << c->tree.pairs_missing << "/" << c->tree.pairs_extra;
    EXPECT_EQ(c->mask_mismatch, 0);
  }
}

ScalarField smooth(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  std::vector<float> v(size_t(nx * ny * nz));
  size_t i = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        v[i++] = 10.0f * std::sin(0.3f * float(x)) * std::cos(0.2f * float(y)) + 2.0f * float(z) + u(rng);
  return make(nx, ny, nz, v);
}

TEST(ScalarMasks, RoundTripsGiveMissingVerticesBackBitForBit) {
  uint32_t payload = 1;
  for (const auto& shape : shapes())
    for (auto [nx, ny, nz] : {std::tuple{33, 21, 1}, {12, 9, 5}})
      for (int marker = 0; marker < 4; ++marker) {
        ScalarField f = smooth(nx, ny, nz, uint32_t(marker + 1));
        const auto m = mask_of(shape, nx, ny, nz);
        // 0: NaN with distinct payloads; 1: a declared fill value 1e20 (REL must ignore it);
        // 2: -3.4028235e38; 3: a caller's mask over garbage (infinity, huge values).
        for (size_t k = 0; k < m.size(); ++k) {
          if (!m[k]) continue;
          if (marker == 0) f.values[k] = std::bit_cast<float>(0x7FC00000u | (payload++ & 0x3FFFFF));
          if (marker == 1) f.values[k] = 1e20f;
          if (marker == 2) f.values[k] = -3.4028235e38f;
          if (marker == 3) f.values[k] = k % 3 ? std::numeric_limits<float>::infinity() : 7e37f;
        }
        if (marker == 1 || marker == 2) mark_missing(f, marker == 1 ? 1e20f : -3.4028235e38f);
        if (marker == 3) f.mask = m;
        for (auto mode : {ScalarMode::contour_tree, ScalarMode::none}) {
          SCOPED_TRACE(std::string(shape.name) + " nz " + std::to_string(nz) + " marker " + std::to_string(marker) +
                       (mode == ScalarMode::none ? " none" : " contour-tree"));
          expect_round_trip(f, mode, 1e-2, marker % 2 == 0, marker < 2 ? Coder::ans : Coder::huffman);
          if (::testing::Test::HasFailure()) return;
        }
      }
}

TEST(ScalarMasks, MaskedVerticesCostLittle) {
  // Land as one block: a third of the grid. The stream must not grow beyond the unmasked
  // field's by more than the mask's few bytes.
  ScalarField f = smooth(96, 64, 1, 3);
  ScalarField land = f;
  for (int64_t y = 0; y < 64; ++y)
    for (int64_t x = 64; x < 96; ++x) land.values[size_t(y * 96 + x)] = std::nanf("");
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    ScalarOptions o;
    o.mode = mode;
    auto a = compress_scalar(f, o), b = compress_scalar(land, o);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_LT(b->size(), a->size() + 64) << (mode == ScalarMode::none ? "none" : "contour-tree");
  }
}

TEST(ScalarMasks, CompareCountsVerticesMissingInOneFieldOnly) {
  ScalarField f = smooth(20, 15, 1, 4);
  f.mask = mask_of(shapes()[4], 20, 15, 1);
  ScalarField g = f;
  g.mask[0] = 1;
  auto c = compare_scalar(f, g, BoundMode::rel, 1e-2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->mask_mismatch, 1);
  EXPECT_EQ(c->masked_vertices, 15);
  EXPECT_FALSE(c->same());
  auto same = compare_scalar(f, f, BoundMode::rel, 1e-2);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->same());
}

std::vector<uint8_t> slurp(const std::string& name) {
  std::ifstream in(std::string(FACTZ_SCALAR_GOLDEN_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(bool(in)) << name;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

TEST(ScalarStreams, Version2GoldenStreamsStillDecodeAndModeNoneWritesTheSameBytes) {
  for (const char* name : {"v2_contour_tree_rel1e-2_p1e-2_12x9", "v2_none_abs0.05_huffman_6x5x4"}) {
    const auto stream = slurp(std::string(name) + ".stream");
    ASSERT_EQ(stream_version(stream), 2);
    auto back = decompress_scalar(stream);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_TRUE(back->mask.empty());
    const auto want = floats(slurp(std::string(name) + ".out.f32"));
    ASSERT_EQ(back->values.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(std::bit_cast<uint32_t>(back->values[k]), std::bit_cast<uint32_t>(want[k])) << name << " " << k;
  }
  const ScalarField f = make(6, 5, 4, floats(slurp("field_6x5x4.f32")));
  ScalarOptions o;
  o.mode = ScalarMode::none;
  o.bound_mode = BoundMode::abs;
  o.bound = 0.05;
  o.coder = Coder::huffman;
  o.zstd = false;
  o.predictor = ScalarPredictor::lorenzo;  // the golden's layout (the default may keep interpolation)
  auto s = compress_scalar(f, o);
  ASSERT_TRUE(s.ok());
  // The same sections, in the compact container (version 18) that compress writes.
  EXPECT_EQ(s.value(), testing::compact(slurp("v2_none_abs0.05_huffman_6x5x4.stream")));
}

TEST(ScalarStreams, DamagedMaskedStreamsAreRefused) {
  ScalarField f = smooth(14, 11, 3, 6);
  f.mask = mask_of(shapes()[10], 14, 11, 3);
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    ScalarOptions o;
    o.mode = mode;
    o.zstd = mode == ScalarMode::none;
    auto s = compress_scalar(f, o);
    ASSERT_TRUE(s.ok());
    const std::vector<uint8_t> good = s.value();
    ASSERT_TRUE(decompress_scalar(good).ok());
    for (size_t cut = 0; cut < good.size(); cut += 5)
      EXPECT_FALSE(decompress_scalar(std::span<const uint8_t>(good.data(), cut)).ok()) << cut;
    std::mt19937 rng(9);
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= uint8_t(1 + rng() % 255);
      EXPECT_FALSE(decompress_scalar(bad).ok()) << "byte " << i;  // every byte is under a checksum
    }
  }
}

// A mask section whose recorded count is not the grid minus the codes' symbols: refused
// from that count (checksums right, the stream re-sealed by the container writer), before
// the bitmap's grid-sized buffer is allocated (a fuzz input declared a grid of 2.5 G
// vertices this way and had the decoder allocate 2.5 GB for the mask first).
TEST(ScalarStreams, AMaskCountTheCodesContradictIsRefusedFirst) {
  ScalarField f = smooth(14, 11, 3, 6);
  f.mask = mask_of(shapes()[10], 14, 11, 3);
  ScalarOptions o;
  o.mode = ScalarMode::none;
  auto s = compress_scalar(f, o);
  ASSERT_TRUE(s.ok());
  bool forged = false;
  const auto bad = testing::resealed(s.value(), [&](detail::Header&, std::vector<detail::Section>& sections) {
    for (auto& section : sections) {
      if (section.id != detail::kSectionMask) continue;
      std::vector<uint8_t>& bytes = section.raw;  // varint count first: record one more missing vertex
      uint64_t count = 0;
      size_t len = 0;
      for (int shift = 0; len < bytes.size(); shift += 7) {
        count |= uint64_t(bytes[len] & 0x7f) << shift;
        if (!(bytes[len++] & 0x80)) break;
      }
      std::vector<uint8_t> forged_bytes;
      for (uint64_t c = count + 1; ; c >>= 7) {
        forged_bytes.push_back(uint8_t((c & 0x7f) | (c >= 0x80 ? 0x80 : 0)));
        if (c < 0x80) break;
      }
      forged_bytes.insert(forged_bytes.end(), bytes.begin() + std::ptrdiff_t(len), bytes.end());
      bytes = std::move(forged_bytes);
      forged = true;
    }
  });
  ASSERT_TRUE(forged) << "the stream has no mask section";
  auto d = decompress_scalar(bad);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::corrupt_stream);
  EXPECT_NE(d.status().message().find("the codes leave"), std::string::npos) << d.status().to_string();
}

}  // namespace
}  // namespace factz
