// The CPU's vectorized quantizer (kernels/tiles.hpp quantize_tiled_run, reached through
// quantize_plane, which is compiled with -fno-trapping-math) against the per-vertex rule the
// CUDA kernels run (quantize_tiled_vertex): the same reconstruction, bit for bit, and the
// same exact flag for every vertex, on values chosen where the rule has edges (rounding
// ties, the [2^22, 2^23) band where the conversion truncates, the kMaxQuant clamp, NaN,
// infinities, signed zeros, denormals, values whose difference from their reconstruction
// is not exact in double), under every bound id, exact tiles, per-vertex ids and missing
// vertices.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "backend/cpu/tiled_quantizer.hpp"
#include "kernels/block_bounds.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {
namespace {

/// Values at the rule's edges for a plane quantized with bound eb (steps 2 * eb * 2^-k).
std::vector<float> edge_values(float eb, std::mt19937& rng) {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), 1e-30f, -1e-30f, 1e30f, -1e30f};
  const float step = 2 * eb;
  for (float k : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 4194303.5f, 4194304.5f, 6000000.5f, -6000000.5f, 8388607.0f,
                  8388608.0f, 8388609.0f, -8388609.0f, 1e8f, -1e8f})
    for (float toward : {-FLT_MAX, FLT_MAX}) {  // k steps and the two floats on each side
      float y = k * step;
      v.push_back(y);
      for (int d = 0; d < 2; ++d) v.push_back(y = std::nextafter(y, toward));
    }
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-40, 40);
  for (int i = 0; i < 4000; ++i) v.push_back(std::ldexp(unit(rng), expo(rng)) * eb);
  for (int i = 0; i < 1000; ++i) v.push_back(std::bit_cast<float>(uint32_t(rng())));  // any bits
  return v;
}

void expect_plane_matches_rule(const std::vector<float>& x, int64_t nx, float eb, std::mt19937& rng, bool with_ids,
                               bool with_missing, int64_t& listed) {
  const int64_t ny = int64_t(x.size()) / nx;
  const TileLayout L(nx, ny);
  std::uniform_int_distribution<int> any_id(0, kMaxBoundId);
  std::vector<uint8_t> tiles(size_t(L.tile_count()));
  for (auto& t : tiles) t = uint8_t(any_id(rng) % 4 == 0 ? 0 : any_id(rng));
  std::vector<uint8_t> ids(x.size()), missing(x.size());
  for (auto& id : ids) id = uint8_t(any_id(rng));
  for (auto& m : missing) m = uint8_t(rng() % 5 == 0);
  QuantizedPlane out;
  quantize_plane(std::span<const float>(x.data(), size_t(nx * ny)), L, eb, tiles, with_ids ? ids.data() : nullptr, 1,
                 out, with_missing ? missing.data() : nullptr);
  int64_t checked = 0, stored = 0;
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t xi = 0; xi < nx; ++xi) {
      const int64_t k = y * nx + xi;
      const int id = tiles[size_t(L.tile_of(xi, y))];
      const int own = with_ids ? ids[size_t(k)] : id;
      const float need = bound_of_id(eb, own);
      const TiledValue<float> tv =
          quantize_tiled_vertex(x[size_t(k)], id, 2.0f * bound_of_id(eb, id), need, with_missing && missing[size_t(k)]);
      // The CUDA body's rule: a stored vertex listed at its own bound where that is shorter.
      float want = tv.recon;
      const uint8_t flag = tv.exact ? list_exact(x[size_t(k)], own, need, want) : 0;
      ASSERT_EQ(std::bit_cast<uint32_t>(out.recon[size_t(k)]), std::bit_cast<uint32_t>(want))
          << "vertex " << k << " x=" << x[size_t(k)] << " tile id " << id << " eb " << eb;
      ASSERT_EQ(out.exact[size_t(k)], flag) << "vertex " << k << " x=" << x[size_t(k)];
      if (flag >= kExactListOwnBound) {  // within its own bound, and what every writer derives
        ASSERT_TRUE(within_bound(want, x[size_t(k)], need)) << "vertex " << k;
        ASSERT_EQ(std::bit_cast<uint32_t>(listed_value(x[size_t(k)], flag, eb)), std::bit_cast<uint32_t>(want));
        ++listed;
      }
      ++checked;
      stored += tv.exact;
    }
  EXPECT_EQ(checked, nx * ny);
  EXPECT_GT(stored, 0);  // the edges do reach the stored-exact side
  EXPECT_LT(stored, checked);
}

TEST(TiledRun, TheVectorizedQuantizerGivesThePerVertexRule) {
  std::mt19937 rng(20261203);
  int64_t listed = 0;  // vertices listed at their own bound
  for (float eb : {1.0f, 0.0355878f, 1e-6f, 3e-30f, 1e30f}) {
    std::vector<float> x = edge_values(eb, rng);
    std::shuffle(x.begin(), x.end(), rng);
    for (int64_t nx : {int64_t(1), int64_t(7), int64_t(32), int64_t(45), int64_t(100)}) {
      const size_t n = x.size() / size_t(nx) * size_t(nx);
      const std::vector<float> plane(x.begin(), x.begin() + int64_t(n));
      for (int variant = 0; variant < 4; ++variant)
        expect_plane_matches_rule(plane, nx, eb, rng, variant & 1, variant & 2, listed);
    }
    for (int id = 1; id <= kMaxBoundId; id += 7)  // encode_plane's q, as the decoder's rule gives it
      for (float xv : x) ASSERT_EQ(prequantize_select(xv, 2 * bound_of_id(eb, id)), prequantize(xv, 2 * bound_of_id(eb, id))) << xv;
  }
  EXPECT_GT(listed, 100) << "no stored vertex was listed at its own bound";
}

/// own_bound_value: within the bound wherever it is finite (the listing checks it anyway),
/// on the power-of-two grid just above the bound (no bit below it), x itself where the
/// bound is not a positive normal number; list_exact keeps x where the value is not shorter.
template <class T>
void expect_own_bound_values(std::mt19937& rng) {
  std::uniform_real_distribution<T> unit(-1, 1);
  std::uniform_int_distribution<int> expo(-60, 60);
  int64_t within = 0, total = 0;
  for (int i = 0; i < 200000; ++i) {
    const T x = std::ldexp(unit(rng), expo(rng));
    const T need = std::ldexp(std::abs(unit(rng)), expo(rng));
    const T r = own_bound_value(x, need);
    ++total;
    if (!(need > 0) || !std::isnormal(need)) {
      ASSERT_EQ(r, x);
      continue;
    }
    int e;
    std::frexp(need, &e);  // need in [2^(e-1), 2^e): the grid is 2^e
    const T g = std::ldexp(T(1), e);
    if (std::isfinite(r)) {
      ASSERT_LE(std::abs(double(r) - double(x)), double(need)) << x << " " << need;
      // No bit below the grid, unless x comes back as it is (|x / g| >= 2^22: already that short
      // or for round_even to leave).
      if (!(r == x)) {
        ASSERT_EQ(std::fmod(r, g), T(0)) << x << " " << need;
      }
      ++within;
    }
    T listed_as;
    const uint8_t flag = list_exact(x, 5, need, listed_as);
    if (flag == kExactListFull) ASSERT_EQ(listed_as, x);
    else ASSERT_TRUE(within_bound(listed_as, x, need));
  }
  EXPECT_GT(within, total / 2);
}

TEST(TiledRun, OwnBoundValuesStayWithinTheBound) {
  std::mt19937 rng(11);
  expect_own_bound_values<float>(rng);
  expect_own_bound_values<double>(rng);
  EXPECT_EQ(own_bound_value(1.3f, 0.0f), 1.3f);
  EXPECT_EQ(own_bound_value(1.3f, -1.0f), 1.3f);
  EXPECT_EQ(own_bound_value(0.75f, 0.3f), 1.0f);  // grid 0.5 (0.3 in [0.25, 0.5)): 1.5 -> 2 (even)
  EXPECT_EQ(own_bound_value(0.7f, 0.3f), 0.5f);   // 1.4 -> 1
}

/// list_exact takes the coarsest power-of-two grid that keeps the value within the vertex's
/// own bound: its flag names a bound id at least the own one whose own_bound_value is the
/// listed value (what every writer derives, listed_value), within the own bound, and the grid
/// of the next id would leave the bound (or x itself); on random values and bounds of every
/// id, and on a hand-made case where the coarser grid hits.
template <class T>
void expect_coarsest_listing(std::mt19937& rng) {
  std::uniform_real_distribution<T> unit(-1, 1);
  std::uniform_int_distribution<int> ids(1, kMaxBoundId), expo(-20, 20);
  int64_t coarser = 0, listed = 0;
  for (int i = 0; i < 100000; ++i) {
    const T eb = std::ldexp(std::abs(unit(rng)) + T(0.01), expo(rng));
    const T x = std::ldexp(unit(rng), expo(rng));
    const int own = ids(rng);
    const T need = bound_of_id(eb, own);
    T value;
    const uint8_t flag = list_exact(x, own, need, value);
    if (flag == kExactListFull) {
      ASSERT_EQ(value, x);
      continue;
    }
    ++listed;
    const int id = flag - kExactListOwnBound;
    ASSERT_GE(id, own) << x << " " << need;
    ASSERT_LE(id, kMaxBoundId);
    ASSERT_TRUE(within_bound(value, x, need)) << x << " " << need << " id " << id;
    ASSERT_EQ(value, own_bound_value(x, bound_of_id(eb, id)));
    ASSERT_EQ(listed_value(x, flag, eb), value);
    if (id < kMaxBoundId) {
      const T next = own_bound_value(x, bound_of_id(eb, id + 1));
      ASSERT_TRUE(next == x || !within_bound(next, x, need)) << x << " " << need << " id " << id;
    }
    coarser += id > own;
  }
  EXPECT_GT(listed, 50000);
  EXPECT_GT(coarser, listed / 10) << "no value went to a coarser grid";
  // eb 1: own id 27 is bound 1/8, grid 1/4; x = 1.01 lies 0.01 from 1, a point of the grids
  // 1/2 and 1 too (bounds 1/4 and 1/2, ids 28 and 29), not of 2 (id 30: 2 is 0.99 away).
  T value;
  const uint8_t flag = list_exact(T(1.01), 27, bound_of_id(T(1), 27), value);
  EXPECT_EQ(flag, kExactListOwnBound + 29);
  EXPECT_EQ(value, T(1));
}

TEST(TiledRun, StoredValuesAreListedOnTheCoarsestGridWithinTheirBound) {
  std::mt19937 rng(12);
  expect_coarsest_listing<float>(rng);
  expect_coarsest_listing<double>(rng);
}

/// choose_tile_id_rows (the CPU block frontend's form) against choose_tile_id (the CUDA
/// frontend's) on tiles of every shape at the grid's edges, with exact vertices, ties of
/// ids, residuals of every size (zeros, NaN-free extremes, denormals) and all-exact tiles.
TEST(TiledRun, TheRowFormOfTheTileChoiceGivesTheSameId) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-60, 60), any_id(0, kMaxBoundId);
  const int64_t nx = 77, ny = 70;  // partial tiles on the right and at the bottom
  int64_t tiles = 0, nonzero = 0, distinct = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<float> x(size_t(nx * ny));
    std::vector<uint8_t> ids(x.size());
    const int style = round % 4;
    for (size_t k = 0; k < x.size(); ++k) {
      if (style == 0) x[k] = std::ldexp(unit(rng), expo(rng));                       // any scale
      else if (style == 1) x[k] = float(k % 5) * 0.25f;                                // ties, zeros
      else if (style == 2) x[k] = std::sin(0.05f * float(k % nx)) + 1e-3f * unit(rng);  // smooth
      else if (rng() % 3 == 0) x[k] = std::numeric_limits<float>::denorm_min() * float(rng() % 4);
      else x[k] = (rng() % 2 ? 1e30f : FLT_MAX) * unit(rng);  // residuals up to float overflow
      ids[k] = uint8_t(rng() % 7 == 0 ? 0 : (round % 5 == 4 ? 0 : any_id(rng)));
    }
    const float eb = std::ldexp(1.0f, expo(rng) / 3);
    std::set<int> seen;
    for (int64_t y0 = 0; y0 < ny; y0 += kTile)
      for (int64_t x0 = 0; x0 < nx; x0 += kTile) {
        const int64_t x1 = std::min(nx, x0 + kTile), y1 = std::min(ny, y0 + kTile);
        const uint8_t want = choose_tile_id(x.data(), ids.data(), nx, x0, y0, x1, y1, eb);
        ASSERT_EQ(choose_tile_id_rows(x.data(), ids.data(), nx, x0, y0, x1, y1, eb), want)
            << "round " << round << " tile at " << x0 << "," << y0;
        ++tiles;
        nonzero += want != 0;
        seen.insert(want);
      }
    distinct += int64_t(seen.size());
    EXPECT_EQ(choose_tile_id_rows(x.data(), ids.data(), nx, 0, 0, 32, 32, 0.0f), 0);  // no bound: exact
  }
  EXPECT_EQ(tiles, 60 * 9);
  EXPECT_GT(nonzero, tiles / 2);      // the comparison covers real choices, not only exact tiles
  EXPECT_GT(distinct, int64_t(60));  // and more than one id per field
}

}  // namespace
}  // namespace factz::detail
