// Block mode coding its bands (FrontendKeeps::codes, what the codec runs) against block mode
// keeping its reconstructions (what the GPU model and the other tests compare): the same
// tile ids, exact flags and repair statistics; reconstructions derived from (value, tile id,
// exact flag) equal to the kept ones bit for bit; and the same payload bytes out of
// encode_plane (symbols, escapes, exact lists). On synthetic, degenerate and real fields,
// with holes, exact edges, float64, and bounds from lossless to coarse (many escapes).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backend/cpu/frontend.hpp"
#include "backend/cpu/tiled_quantizer.hpp"
#include "streams/missing_fill.hpp"
#include "support/fields.hpp"
#include "support/precision.hpp"

namespace factz::detail {
namespace {

template <class T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) return false;
  return true;
}

template <class T>
bool same_payload(const PlanePayload& a, const PlanePayload& b) {
  return std::equal(a.symbols.begin(), a.symbols.end(), b.symbols.begin(), b.symbols.end()) &&
         a.outliers == b.outliers && a.exact_index == b.exact_index && a.exact_values == b.exact_values;
}

struct Tally {
  int64_t cases = 0, exact = 0, escapes = 0, repaired = 0;
};

/// Both ways of running block mode on (f, eb), compared as the file header says.
template <class Field>
void expect_same_block(const Field& f, double eb_d, uint8_t edges, const uint8_t* missing, Tally& tally) {
  using T = typename decltype(Field::u)::value_type;
  const T eb = T(eb_d);
  FrontendResultOf<T> kept, coded;
  run_block(f, eb, 2, kept, edges, missing, FrontendKeeps::reconstructions);
  run_block(f, eb, 2, coded, edges, missing, FrontendKeeps::codes);
  ++tally.cases;
  EXPECT_EQ(kept.u.tile_ids, coded.u.tile_ids);
  EXPECT_EQ(kept.v.tile_ids, coded.v.tile_ids);
  EXPECT_TRUE(std::equal(kept.u.exact.begin(), kept.u.exact.end(), coded.u.exact.begin(), coded.u.exact.end()));
  EXPECT_TRUE(std::equal(kept.v.exact.begin(), kept.v.exact.end(), coded.v.exact.begin(), coded.v.exact.end()));
  EXPECT_EQ(kept.repair_rounds, coded.repair_rounds);
  EXPECT_EQ(kept.repaired_vertices, coded.repaired_vertices);
  // The first round of the exact check visits every cell row once: the kept planes after
  // the band stage, the coded float ones inside it and at the rows joining two tile rows.
  EXPECT_EQ(kept.checked_cell_rows, std::max<int64_t>(f.ny - 1, 0));
  EXPECT_EQ(coded.checked_cell_rows, std::max<int64_t>(f.ny - 1, 0));
  tally.repaired += coded.repaired_vertices;
  tally.exact += std::count_if(coded.u.exact.begin(), coded.u.exact.end(), [](uint8_t e) { return e != 0; });
  // A float plane keeps no reconstruction; a float64 one keeps it (its rounded exact values).
  EXPECT_EQ(coded.u.recon.empty(), (std::is_same_v<T, float>));
  const TileLayout L(f.nx, f.ny);
  const std::span<const T> xs[2] = {std::span<const T>(f.u), std::span<const T>(f.v)};
  QuantizedPlaneOf<T>* kp[2] = {&kept.u, &kept.v};
  QuantizedPlaneOf<T>* cp[2] = {&coded.u, &coded.v};
  for (int c = 0; c < 2; ++c) {
    // Derived reconstructions, by rows and vertex by vertex.
    std::vector<T> derived(size_t(f.nx * f.ny)), at(derived.size());
    for (int64_t y = 0; y < f.ny; ++y) reconstruction_row(xs[c], L, eb, *cp[c], y, derived.data() + y * f.nx);
    for (int64_t k = 0; k < f.nx * f.ny; ++k) at[size_t(k)] = reconstruction_at(xs[c], L, eb, *cp[c], k);
    const std::span<const T> want(kp[c]->recon.data(), kp[c]->recon.size());
    EXPECT_TRUE(same_bits<T>(want, derived)) << "component " << c << ": reconstruction_row";
    EXPECT_TRUE(same_bits<T>(want, at)) << "component " << c << ": reconstruction_at";
    ASSERT_EQ(cp[c]->symbols.size(), size_t(f.nx * f.ny));
    const PlanePayload a = encode_plane(xs[c], L, eb, *kp[c], 2, missing);
    const PlanePayload b = encode_plane(xs[c], L, eb, *cp[c], 2, missing);
    EXPECT_TRUE(same_payload<T>(a, b)) << "component " << c << ": payloads differ";
    tally.escapes += std::count(a.symbols.begin(), a.symbols.end(), uint16_t(0));
  }
}

template <class Field>
void expect_same_block_all(const Field& f, Tally& tally) {
  double lo = 0, hi = 0;
  for (size_t k = 0; k < f.u.size(); ++k) {
    lo = std::min({lo, double(f.u[k]), double(f.v[k])});
    hi = std::max({hi, double(f.u[k]), double(f.v[k])});
  }
  const double range = std::isfinite(hi - lo) && hi > lo ? hi - lo : 1.0;
  for (double rel : {0.0, 1e-6, 1e-3, 1e-1, 5.0})
    for (uint8_t edges : {uint8_t(0), uint8_t(15)}) {
      SCOPED_TRACE("rel " + std::to_string(rel) + " edges " + std::to_string(edges));
      expect_same_block(f, rel * range, edges, nullptr, tally);
    }
}

TEST(BlockCodes, SyntheticAndDegenerateFields) {
  Tally tally;
  for (const auto& nf : testing::synthetic_fields()) {
    SCOPED_TRACE(nf.name);
    expect_same_block_all(nf.field, tally);
  }
  for (const auto& nf : testing::degenerate_fields()) {
    SCOPED_TRACE(nf.name);
    expect_same_block_all(nf.field, tally);
  }
  EXPECT_GT(tally.cases, 100);
  EXPECT_GT(tally.exact, 0) << "no field stores a vertex exactly";
  EXPECT_GT(tally.escapes, 0) << "no field escapes a code";
}

TEST(BlockCodes, RealFieldsAndFloat64) {
  Tally tally;
  for (const auto& nf : testing::real_vector_fields()) {
    SCOPED_TRACE(nf.name);
    for (double rel : {1e-4, 1e-2}) {
      double lo = nf.field.u[0], hi = lo;
      for (size_t k = 0; k < nf.field.u.size(); ++k) {
        lo = std::min({lo, double(nf.field.u[k]), double(nf.field.v[k])});
        hi = std::max({hi, double(nf.field.u[k]), double(nf.field.v[k])});
      }
      expect_same_block(nf.field, rel * (hi - lo), 0, nullptr, tally);
      expect_same_block(testing::to_double(nf.field), rel * (hi - lo), 0, nullptr, tally);
    }
  }
  EXPECT_GT(tally.cases, 0);
  EXPECT_GT(tally.exact, 0);
}

// Missing vertices: the frontends work on the filled copy; a row holding one takes the
// per-vertex symbol path (missing_vertex_quant), the others the vectorized one.
TEST(BlockCodes, FieldsWithHoles) {
  Tally tally;
  std::mt19937 rng(7);
  for (const auto& nf : testing::synthetic_fields()) {
    const VectorField2D& f = nf.field;
    if (f.nx < 3 || f.ny < 3) continue;
    SCOPED_TRACE(nf.name);
    std::vector<uint8_t> mask(f.u.size(), 0);
    std::bernoulli_distribution hole(0.03);
    for (auto& m : mask) m = hole(rng) ? 1 : 0;
    for (int64_t x = 0; x < f.nx / 2; ++x) mask[size_t((f.ny / 2) * f.nx + x)] = 1;  // a land strip
    const VectorField2D work = fill_missing(f, mask);
    for (double eb : {1e-6, 1e-3, 0.05, 2.0}) expect_same_block(work, eb, 0, mask.data(), tally);
    const VectorField2D64 work64 = fill_missing(testing::to_double(f), mask);
    expect_same_block(work64, 0.05, 0, mask.data(), tally);
  }
  EXPECT_GT(tally.cases, 0);
  EXPECT_GT(tally.escapes, 0) << "no masked field escapes a code";
}

// Grids around the tile rows' edges (kTile = 32): one tile row, one and a row, several, with
// and without a short last one; the coded planes check the cell rows inside each tile row
// while quantizing it and the joining ones after, the kept planes all of them after.
TEST(BlockCodes, GridsAroundTileRowEdges) {
  Tally tally;
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (int64_t ny : {2, 3, 31, 32, 33, 34, 63, 64, 65, 97})
    for (int64_t nx : {2, 33, 70}) {
      SCOPED_TRACE(std::to_string(nx) + " x " + std::to_string(ny));
      VectorField2D f;
      f.nx = nx, f.ny = ny;
      f.u.resize(size_t(nx * ny)), f.v.resize(size_t(nx * ny));
      for (int64_t y = 0; y < ny; ++y)  // a few critical points and noise around them
        for (int64_t x = 0; x < nx; ++x) {
          const size_t k = size_t(y * nx + x);
          f.u[k] = std::sin(0.31f * float(x)) + 0.05f * noise(rng);
          f.v[k] = std::cos(0.27f * float(y)) + 0.05f * noise(rng);
        }
      for (double eb : {1e-4, 0.05, 0.5}) expect_same_block(f, eb, 0, nullptr, tally);
    }
  EXPECT_GT(tally.cases, 0);
}

}  // namespace
}  // namespace factz::detail
