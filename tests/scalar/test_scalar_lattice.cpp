// Scalar streams on the lattice (format version 11, docs/toposz.md "Steps" and
// docs/format.md "Scalar streams"): the lattice quantizer's values depend on each value
// alone and keep the order of values up to ties; the decoder rebuilds the encoder's values
// from the lattice indices; the contour-tree race writes version 11 streams where they are
// the smallest, which keep the tree and the bound, with and without missing vertices and in
// float64; version 11 and 14 (exact values coded) golden streams still decode to the same
// bits, the version 14 one is still written byte for byte; damaged ones are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>

#include "factz/contour_tree.hpp"
#include "factz/factz.hpp"
#include "factz/scalar.hpp"
#include "scalar/exact_residuals.hpp"
#include "scalar/scalar_quantizer.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

uint16_t stream_version(const std::vector<uint8_t>& s) { return testing::layout_version(s); }

std::vector<float> smooth_values(int64_t nx, int64_t ny, int64_t nz, float noise, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(size_t(nx * ny * nz));
  size_t i = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x, ++i)
        v[i] =
            std::sin(0.21f * float(x)) * std::cos(0.17f * float(y)) + 0.3f * std::sin(0.4f * float(z)) + noise * u(rng);
  return v;
}

ScalarField field_of(int64_t nx, int64_t ny, int64_t nz, std::vector<float> values) {
  ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values = std::move(values);
  return f;
}

TEST(ScalarLattice, UnconstrainedValuesDecodeToTheirOwnLatticePointInOrder) {
  for (auto [nx, ny, nz] : {std::tuple{40, 30, 1}, {12, 10, 8}})
    for (float step : {0.01f, 0.125f, 0.3f}) {
      const std::vector<float> f = smooth_values(nx, ny, nz, 0.2f, 3);
      const detail::ScalarGrid g{nx, ny, nz};
      detail::Quantized q;
      detail::quantize_lattice(f, g, {}, {}, step, step, nullptr, q);
      ASSERT_EQ(q.symbols.size(), f.size());
      size_t quantized = 0;
      for (size_t v = 0; v < f.size(); ++v) {
        ASSERT_LE(std::fabs(double(q.recon[v]) - double(f[v])), double(step)) << v;
        if (q.symbols[v] == 0) continue;
        ++quantized;
        // The nearest lattice point, whatever the neighbours decoded to.
        ASSERT_EQ(q.recon[v], detail::lattice_value(detail::lattice_index(f[v], step), step)) << v;
      }
      EXPECT_EQ(quantized, f.size()) << "a step within the bound quantizes every value";
      // Non-decreasing: sorting by the original values sorts the decoded ones.
      std::vector<size_t> order(f.size());
      std::iota(order.begin(), order.end(), size_t(0));
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
      for (size_t k = 1; k < order.size(); ++k) ASSERT_LE(q.recon[order[k - 1]], q.recon[order[k]]);
    }
}

TEST(ScalarLattice, ExactValuesKeepTheirLatticeIndexForThePredictions) {
  // Every other vertex stored exactly: the quantized ones still decode to their own
  // lattice point, so the exact values' indices fed the predictions as the decoder's will.
  const int64_t nx = 17, ny = 13;
  const std::vector<float> f = smooth_values(nx, ny, 1, 0.5f, 4);
  const detail::ScalarGrid g{nx, ny, 1};
  detail::Constraints c;
  c.exact.assign(f.size(), 0);
  c.slot.assign(f.size(), detail::Constraints::kFree);
  for (size_t v = 0; v < f.size(); v += 2) c.exact[v] = 1;
  detail::Quantized q;
  detail::quantize_lattice(f, g, {}, {}, 0.05f, 0.05f, &c, q);
  EXPECT_EQ(q.exact.size(), (f.size() + 1) / 2);
  for (size_t v = 0; v < f.size(); ++v) {
    if (v % 2 == 0) {
      EXPECT_EQ(q.symbols[v], 0);
      EXPECT_EQ(q.recon[v], f[v]);
    } else {
      EXPECT_NE(q.symbols[v], 0);
      EXPECT_EQ(q.recon[v], detail::lattice_value(detail::lattice_index(f[v], 0.05f), 0.05f));
    }
  }
}

// On the lattice a constrained vertex that no code fits is stored with the shortest value
// its interval and the bound allow (the exact-value section need not hold its own value),
// for both types; its own value where the shortest is a fill value. On the predictions'
// values it keeps its own value (a stored value feeds the predictions after it).
template <class T>
void shortest_stored_value() {
  const detail::ScalarGrid g{3, 1, 1};
  const std::vector<T> f = {T(0), T(1.23456), T(0)};
  detail::ConstraintsOf<T> c;
  c.exact.assign(3, 0);
  c.slot.assign(3, detail::ConstraintsOf<T>::kFree);
  c.slot[1] = 0;
  c.intervals.push_back({T(1.2), T(1.3), 0});  // open: the codes at 1 and 2 lie outside
  for (bool lattice : {false, true}) {
    SCOPED_TRACE(lattice ? "lattice" : "values");
    detail::QuantizedOf<T> q;
    if (lattice) detail::quantize_lattice(std::span<const T>(f), g, {}, {}, T(0.5), T(1), &c, q);
    else detail::quantize(std::span<const T>(f), g, {}, {}, T(0.5), T(1), &c, q);
    ASSERT_EQ(q.symbols[1], 0);
    const T stored = lattice ? T(1.25) : f[1];  // binary 1.01: the fewest bits in (1.2, 1.3)
    EXPECT_EQ(q.recon[1], stored);
    ASSERT_EQ(q.exact.size(), 1u);
    EXPECT_EQ(q.exact[0], stored);
    // A fill value is never taken (1.5, binary 1.1, is the shortest of (1.1, 1.9)).
    c.intervals[0] = {T(1.1), T(1.9), 0};
    const std::vector<T> g1 = {T(0), T(1.4), T(0)};
    const std::vector<T> fills = {T(1.5)};
    if (lattice) detail::quantize_lattice(std::span<const T>(g1), g, {}, fills, T(0.5), T(4), &c, q);
    else detail::quantize(std::span<const T>(g1), g, {}, fills, T(0.5), T(4), &c, q);
    ASSERT_EQ(q.symbols[1], 0);
    EXPECT_EQ(q.recon[1], T(1.4));  // 1.5 would be shortest, but it is a fill value
    if (lattice) {  // far from zero: the lattice values 9996 and 10003 lie outside the interval
      c.intervals[0] = {T(1e4) - T(0.3), T(1e4) + T(0.2), 0};
      const std::vector<T> g3 = {T(0), T(1e4) + T(0.1), T(0)};
      detail::quantize_lattice(std::span<const T>(g3), g, {}, {}, T(0.5), T(7), &c, q);
      ASSERT_EQ(q.symbols[1], 0);
      EXPECT_EQ(q.recon[1], T(10000));  // binary 10011100010000: the fewest bits in there
    }
    c.intervals[0] = {T(1.2), T(1.3), 0};
  }
}

TEST(ScalarLattice, AVertexWithoutACodeTakesTheShortestValueOfItsInterval) {
  shortest_stored_value<float>();
  shortest_stored_value<double>();
}

// Compresses in mode contour-tree and checks the round trip: same tree, the bound, the
// missing vertices' bits. Returns the stream's version (0 on failure).
template <class Field>
int round_trip_version(const Field& f, double rel, double p) {
  ScalarOptions o;
  o.bound = rel;
  o.persistence = p;
  o.predictor = ScalarPredictor::lorenzo;  // the lattice is Lorenzo's (test_scalar_interp.cpp: the other)
  ScalarCompressStats st;
  auto s = compress_scalar(f, o, &st);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return 0;
  Field back;
  if constexpr (std::is_same_v<Field, ScalarField>) {
    auto r = decompress_scalar(s.value());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return 0;
    back = std::move(r.value());
  } else {
    auto r = decompress_scalar64(s.value());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (!r.ok()) return 0;
    back = std::move(r.value());
  }
  auto c = compare_scalar(f, back, BoundMode::rel, p);
  EXPECT_TRUE(c.ok());
  if (!c.ok()) return 0;
  EXPECT_TRUE(c->same()) << "false +/-/type " << c->tree.false_positive << "/" << c->tree.false_negative << "/"
                         << c->tree.false_type;
  EXPECT_LE(c->max_abs_error, st.eb_abs);
  EXPECT_EQ(back.mask, f.mask);
  for (size_t k = 0; k < f.mask.size(); ++k)
    if (f.mask[k]) {
      EXPECT_EQ(std::memcmp(&back.values[k], &f.values[k], sizeof(f.values[k])), 0) << k;
    }
  // The layout: a context-coded stream (versions 15 to 17, as the default coder may keep) is
  // counted as the version whose layout it extends (15: 2, 3 or 6; 16: 11; 17: 14).
  const uint16_t v = stream_version(s.value());
  return v == 15 ? 2 : v == 16 ? 11 : v == 17 ? 14 : v;
}

// An extremum of the tree (ConstraintsOf::kGridUp / kGridDown) is coded where a code lies
// outward (at or above its own value for a maximum, at or below for a minimum), within the
// bound and its interval, on all three quantizers; where none does (a step above the bound),
// the lattice stores it on the grid of the exact values next to its own value, outward and
// within the bound, and the predictions' values store its own value; where its interval
// leaves neither, its own value.
TEST(ScalarLattice, ExtremaAreCodedOutwardElseStoredOnTheGridOfTheExactValues) {
  const detail::ScalarGrid g{3, 1, 1};
  const std::vector<float> f = {0.0f, 1.23456f, 0.5f};
  detail::Constraints c;
  c.exact.assign(3, 0);
  c.slot.assign(3, detail::Constraints::kFree);
  c.grid_shift = 12;
  for (uint8_t kind : {detail::Constraints::kGridUp, detail::Constraints::kGridDown}) {
    SCOPED_TRACE(int(kind));
    const bool up = kind == detail::Constraints::kGridUp;
    c.exact[1] = kind;
    detail::Quantized q;
    // A step of the bound: a code outward, less than a step away, on every quantizer.
    for (int which = 0; which < 3; ++which) {
      SCOPED_TRACE(which);
      if (which == 0) detail::quantize_lattice(f, g, {}, {}, 0.25f, 0.25f, &c, q);
      else if (which == 1) detail::quantize(f, g, {}, {}, 0.25f, 0.25f, &c, q);
      else detail::quantize_interp(f, g, {}, {}, 0.25f, 0.25f, &c, q, detail::InterpOrder::xyz);
      ASSERT_NE(q.symbols[1], 0);
      EXPECT_TRUE(q.exact.empty());
      const float x = q.recon[1];
      EXPECT_TRUE(up ? x >= f[1] : x <= f[1]) << x;
      EXPECT_LT(std::fabs(double(x) - double(f[1])), 0.25);
      if (which == 0) {
        EXPECT_EQ(x, 0.25f * float(std::lround(x / 0.25f))) << "a lattice value";
      }
    }
    // A step above the bound (0.5 against 0.2): neither lattice value around 1.23456 is within
    // it, so the lattice stores the grid point outward.
    detail::quantize_lattice(f, g, {}, {}, 0.2f, 0.5f, &c, q);
    ASSERT_EQ(q.symbols[1], 0);
    ASSERT_EQ(q.exact.size(), 1u);
    const float x = q.exact[0];
    EXPECT_EQ(q.recon[1], x);
    EXPECT_EQ(q.grid_shift, 12);
    const float pred = detail::lorenzo(q.recon.data(), g, 1, 0, 0, 1);
    EXPECT_TRUE(detail::on_exact_grid(x, pred, 12));
    EXPECT_TRUE(up ? x >= f[1] : x <= f[1]) << x;
    EXPECT_NE(x, f[1]) << "1.23456 is not on that grid";
    EXPECT_LE(std::fabs(double(x) - double(f[1])), 0.2);
    // An interval that every point outward leaves: its own value.
    c.slot[1] = 0;
    c.intervals = {up ? detail::Interval{-1.0f, f[1], 2} : detail::Interval{f[1], 2.0f, 1}};
    for (float step : {0.25f, 0.5f}) {
      detail::quantize_lattice(f, g, {}, {}, 0.2f, step, &c, q);
      ASSERT_EQ(q.symbols[1], 0);
      EXPECT_EQ(q.exact[0], f[1]);
    }
    c.slot[1] = detail::Constraints::kFree;
    c.intervals.clear();
    // On the predictions' values, with no code within the bound: its own value.
    detail::quantize(f, g, {}, {}, 0.2f, 0.5f, &c, q);
    ASSERT_EQ(q.symbols[1], 0);
    EXPECT_EQ(q.exact[0], f[1]);
    EXPECT_EQ(q.grid_shift, 0);
  }
}

// A saddle of the tree (ConstraintsOf::kGridSaddle) is stored on the grid next to its own
// value, within the bound, where every valid vertex of its box stays on its side of it in
// the order of (value, index): earlier ones by their decoded values, later ones whatever
// they decode to. Random fields with many such vertices, some of them neighbours, 2D and 3D.
TEST(ScalarLattice, SaddlesOnTheGridKeepTheirBoxOnItsSides) {
  int moved = 0, kept = 0;
  for (int64_t nz : {1, 4})
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
      const detail::ScalarGrid g{7, 6, nz};
      std::mt19937 rng(seed);
      std::uniform_real_distribution<float> value(-1.0f, 1.0f);
      std::vector<float> f(size_t(g.size()));
      for (float& x : f) x = rng() % 5 == 0 ? 0.25f : value(rng);  // ties too
      detail::Constraints c;
      c.exact.assign(f.size(), 0);
      c.slot.assign(f.size(), detail::Constraints::kFree);
      c.grid_shift = 14;
      for (size_t v = 0; v < f.size(); ++v)
        if (rng() % 3 == 0) c.exact[v] = detail::Constraints::kGridSaddle;
      detail::Quantized q;
      detail::quantize_lattice(f, g, {}, {}, 0.05f, 0.05f, &c, q);
      ASSERT_EQ(q.grid_shift, 14);
      for (int64_t v = 0; v < g.size(); ++v) {
        if (c.exact[size_t(v)] != detail::Constraints::kGridSaddle) continue;
        const float x = q.recon[size_t(v)], fv = f[size_t(v)];
        EXPECT_LE(std::fabs(double(x) - double(fv)), 0.05) << v;
        (x == fv ? kept : moved) += 1;
        if (x == fv) continue;
        const int64_t vx = v % g.nx, vy = (v / g.nx) % g.ny, vz = v / (g.nx * g.ny);
        for (int64_t w = 0; w < g.size(); ++w) {
          const int64_t wx = w % g.nx, wy = (w / g.nx) % g.ny, wz = w / (g.nx * g.ny);
          if (w == v || std::abs(wx - vx) > 1 || std::abs(wy - vy) > 1 || std::abs(wz - vz) > 1) continue;
          EXPECT_EQ(detail::sos_less(q.recon[size_t(w)], w, x, v), detail::sos_less(f[size_t(w)], w, fv, v))
              << "saddle " << v << " neighbour " << w << " seed " << seed << " nz " << nz;
        }
      }
    }
  EXPECT_GT(moved, 0);
  EXPECT_GT(kept, 0);
}

// A saddle between an earlier vertex stored one unit in the last place above it and a later
// one whose own value lies one unit below it: the grid point above is that earlier value
// (the grid runs through the prediction, here it), which the tie's index order puts below
// the saddle; the one below lies under the later vertex. Neither keeps the box on its
// sides, so the saddle keeps its own value. With the later vertex far below, it goes down
// and that vertex decodes below it.
TEST(ScalarLattice, ASaddleKeepsItsOwnValueWhenNoGridPointKeepsItsBox) {
  const detail::ScalarGrid g{3, 1, 1};
  const float fs = 1.23456f;
  std::vector<float> f = {std::nextafter(fs, 2.0f), fs, std::nextafter(fs, 0.0f)};
  detail::Constraints c;
  c.exact = {detail::Constraints::kOwnValue, detail::Constraints::kGridSaddle, 0};
  c.slot.assign(3, detail::Constraints::kFree);
  c.grid_shift = 12;
  detail::Quantized q;
  detail::quantize_lattice(f, g, {}, {}, 0.25f, 0.25f, &c, q);
  EXPECT_EQ(q.recon[1], fs);
  f[2] = 0.0f;
  detail::quantize_lattice(f, g, {}, {}, 0.25f, 0.25f, &c, q);
  EXPECT_LT(q.recon[1], fs);
  EXPECT_LE(std::fabs(double(q.recon[1]) - double(fs)), 0.25);
  EXPECT_TRUE(detail::on_exact_grid(q.recon[1], detail::lorenzo(q.recon.data(), g, 1, 0, 0, 1), 12));
  EXPECT_TRUE(detail::sos_less(q.recon[1], 1, q.recon[0], 0));
  EXPECT_TRUE(detail::sos_less(q.recon[2], 2, q.recon[1], 1));
}

// Each stream kind the race may keep, kept on some field, and every stream keeps the tree.
// Which candidate is kept follows the race (since its finalists, 2026-12-06, the 48 x 40
// fields keep no lattice stream with raw exact values; the 24 x 20 and 96 x 20 ones do).
TEST(ScalarLattice, TheRaceWritesBothKindsAndEachKeepsTheTree) {
  int lattice = 0, coded = 0, values = 0;
  for (auto [nx, ny] : {std::pair{48, 40}, {24, 20}, {96, 20}})
    for (uint32_t seed : {1u, 2u, 3u})
      for (float noise : {0.0f, 0.05f, 0.3f})
        for (auto [rel, p] : {std::pair{1e-2, 1e-2}, {1e-3, 1e-2}, {1e-2, 3e-2}}) {
          SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + " seed " + std::to_string(seed) + " noise " +
                       std::to_string(noise) + " REL " + std::to_string(rel) + " P " + std::to_string(p));
          const int v = round_trip_version(field_of(nx, ny, 1, smooth_values(nx, ny, 1, noise, seed)), rel, p);
          lattice += v == 11;
          coded += v == 14;
          values += v == 2;
        }
  EXPECT_GT(lattice, 0) << "no field gave a lattice stream with raw exact values";
  EXPECT_GT(coded, 0) << "no field gave a lattice stream with coded exact values";
  EXPECT_GT(values, 0) << "no field gave a stream on the predictions' values";
}

// The race's lattice finalists store the values of the vertices regular in the decoded
// field with fewer significant bits (move_regular_vertices; the detailed checks are
// TopoSZSteps.RegularVerticesMoveAndKeepTheTree): on the bundled NCL
// temperature (128 x 64 x 14) at REL 1e-2 / P 3e-2 with Lorenzo the kept lattice stream
// went 12168 -> 11690 bytes, and it keeps the tree and the bound.
TEST(ScalarLattice, RegularVerticesMoveOnTheBundledTemperature) {
  std::ifstream file(std::string(FACTZ_TEST_DATA_DIR) + "/ncl_nc4uvt_t_128x64x14.f32", std::ios::binary);
  std::vector<float> values(size_t(128 * 64 * 14));
  file.read(reinterpret_cast<char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
  ASSERT_TRUE(bool(file));
  const ScalarField f = field_of(128, 64, 14, values);
  ScalarOptions o;
  o.bound = 1e-2;
  o.persistence = 3e-2;
  o.predictor = ScalarPredictor::lorenzo;
  auto s = compress_scalar(f, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const uint16_t v = stream_version(s.value());
  EXPECT_TRUE(v == 11 || v == 14 || v == 16 || v == 17) << v;  // on the lattice
  EXPECT_LT(s->size(), 12168u);
  EXPECT_NE(round_trip_version(f, 1e-2, 3e-2), 0);  // the tree, the bound
}

TEST(ScalarLattice, MaskedAndFloat64FieldsOnTheLattice) {
  int lattice = 0, lattice64 = 0, coded = 0, coded64 = 0;
  for (uint32_t seed : {5u, 6u, 7u, 8u})
    for (auto [rel, p] : {std::pair{1e-3, 1e-2}, {1e-2, 3e-2}}) {
      ScalarField f = field_of(36, 28, 3, smooth_values(36, 28, 3, 0.05f, seed));
      f.mask.assign(f.values.size(), 0);
      for (size_t k = 0; k < f.values.size(); ++k)  // a disc of land holding a fill value
        if (std::hypot(double(k % 36) - 12.0, double((k / 36) % 28) - 9.0) < 5.0) {
          f.mask[k] = 1;
          f.values[k] = -9999.0f;
        }
      const int v = round_trip_version(f, rel, p);
      lattice += v == 11 || v == 14;
      coded += v == 14;
      ScalarField64 d;
      d.nx = 36;
      d.ny = 28;
      d.nz = 3;
      for (float x : smooth_values(36, 28, 3, 0.05f, seed)) d.values.push_back(double(x) + 1e-9 * double(x * x));
      const int v64 = round_trip_version(d, rel, p);
      lattice64 += v64 == 11 || v64 == 14;
      coded64 += v64 == 14;
    }
  EXPECT_GT(lattice, 0);
  EXPECT_GT(lattice64, 0);
  EXPECT_GT(coded, 0) << "no masked field gave coded exact values";
  EXPECT_GT(coded64, 0) << "no float64 field gave coded exact values";
}

std::vector<uint8_t> slurp(const std::string& name) {
  std::ifstream in(std::string(FACTZ_SCALAR_GOLDEN_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(bool(in)) << name;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A golden stream decodes to the bits it decoded to when it was written, the same input and
// options are still written byte for byte, and every damaged copy is refused.
void expect_golden(const std::string& stream_name, const std::string& input_name, int64_t nx, int64_t ny,
                   int64_t nz, double rel, double p, uint16_t version, bool written_again) {
  SCOPED_TRACE(stream_name);
  const auto stream = slurp(stream_name);
  ASSERT_EQ(stream_version(stream), version);
  auto back = decompress_scalar(stream);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  const auto want = slurp(stream_name.substr(0, stream_name.size() - 7) + ".out.f32");
  ASSERT_EQ(back->values.size() * 4, want.size());
  EXPECT_EQ(std::memcmp(back->values.data(), want.data(), want.size()), 0);
  const auto raw = slurp(input_name);
  std::vector<float> values(raw.size() / 4);
  std::memcpy(values.data(), raw.data(), raw.size());
  ScalarOptions o;
  o.bound = rel;
  o.persistence = p;
  o.coder = Coder::ans;  // the default when the goldens were written (now smallest, which takes Huffman here)
  o.predictor = ScalarPredictor::lorenzo;  // the goldens' predictor (the default also races interpolation)
  auto again = compress_scalar(field_of(nx, ny, nz, values), o);
  ASSERT_TRUE(again.ok());
  if (written_again) {
    EXPECT_EQ(again.value(), testing::compact(stream));  // the golden file's sections, compact container
  }
  // Every truncation and every flipped byte is refused (the container's checksums).
  for (size_t cut = 0; cut < stream.size(); ++cut)
    EXPECT_FALSE(decompress_scalar(std::span<const uint8_t>(stream.data(), cut)).ok()) << cut;
  std::mt19937 rng(11);
  for (size_t i = 0; i < stream.size(); ++i) {
    std::vector<uint8_t> bad = stream;
    bad[i] ^= uint8_t(1 + rng() % 255);
    EXPECT_FALSE(decompress_scalar(bad).ok()) << "byte " << i;
  }
  // A float32 lattice stream is refused by the float64 decoder, with a clear message.
  auto as64 = decompress_scalar64(stream);
  ASSERT_FALSE(as64.ok());
  EXPECT_NE(as64.status().message().find("decompress_scalar"), std::string::npos);
}

// Written by the build that added the lattice; since extrema are stored on the grid of the
// exact values (version 14), the same input is written differently (as version 14).
TEST(ScalarLattice, Version11GoldenStreamDecodesToTheSameBits) {
  expect_golden("v11_contour_tree_rel1e-2_p3e-2_12x9.stream", "field_12x9.f32", 12, 9, 1, 1e-2, 3e-2, 11, false);
}

// Version 14: the exact values coded against the decoder's predictions (exact_residuals.hpp),
// the extrema on the grid. Since the saddles went on the grid too, the same input is written
// differently (the same version: the decoder reads any value on the grid alike).
TEST(ScalarLattice, Version14GoldenStreamDecodesToTheSameBits) {
  expect_golden("v14_contour_tree_rel1e-2_p3e-2_12x9.stream", "field_12x9.f32", 12, 9, 1, 1e-2, 3e-2, 14, false);
}

// Version 14 with the saddles on the grid (ConstraintsOf::kGridSaddle), written again byte for
// byte until the extrema were coded outward (2026-12-06), which the decoder reads as any code.
TEST(ScalarLattice, Version14SaddlesGoldenStreamDecodesToTheSameBits) {
  expect_golden("v14_saddles_contour_tree_rel1e-2_p3e-2_12x9.stream", "field_12x9.f32", 12, 9, 1, 1e-2, 3e-2, 14,
                false);
}

// Version 14 with the extrema coded outward where a code fits (the encoder since 2026-12-06).
TEST(ScalarLattice, Version14OutwardGoldenStreamDecodesAndIsWrittenAgainByteForByte) {
  expect_golden("v14_outward_contour_tree_rel1e-2_p3e-2_12x9.stream", "field_12x9.f32", 12, 9, 1, 1e-2, 3e-2, 14,
                true);
}

}  // namespace
}  // namespace factz
