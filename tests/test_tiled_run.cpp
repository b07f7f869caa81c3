// The CPU's vectorized quantizer (kernels/tiles.hpp quantize_tiled_run, reached through
// quantize_plane, which is compiled with -fno-trapping-math) against the per-vertex rule the
// CUDA kernels run (quantize_tiled_vertex): the same reconstruction, bit for bit, and the
// same exact flag for every vertex, on values chosen where the rule has edges (rounding
// ties, the [2^22, 2^23) band where the conversion truncates, the kMaxQuant clamp, NaN,
// infinities, signed zeros, denormals, values whose difference from their reconstruction
// is not exact in double), under every bound id, exact tiles, per-vertex ids and missing
// vertices.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/tiled_quantizer.hpp"
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
                               bool with_missing) {
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
      const float need = bound_of_id(eb, with_ids ? ids[size_t(k)] : id);
      const TiledValue<float> tv =
          quantize_tiled_vertex(x[size_t(k)], id, 2.0f * bound_of_id(eb, id), need, with_missing && missing[size_t(k)]);
      ASSERT_EQ(std::bit_cast<uint32_t>(out.recon[size_t(k)]), std::bit_cast<uint32_t>(tv.recon))
          << "vertex " << k << " x=" << x[size_t(k)] << " tile id " << id << " eb " << eb;
      ASSERT_EQ(out.exact[size_t(k)], tv.exact ? 1 : 0) << "vertex " << k << " x=" << x[size_t(k)];
      ++checked;
      stored += tv.exact;
    }
  EXPECT_EQ(checked, nx * ny);
  EXPECT_GT(stored, 0);  // the edges do reach the stored-exact side
  EXPECT_LT(stored, checked);
}

TEST(TiledRun, TheVectorizedQuantizerGivesThePerVertexRule) {
  std::mt19937 rng(20261203);
  for (float eb : {1.0f, 0.0355878f, 1e-6f, 3e-30f, 1e30f}) {
    std::vector<float> x = edge_values(eb, rng);
    std::shuffle(x.begin(), x.end(), rng);
    for (int64_t nx : {int64_t(1), int64_t(7), int64_t(32), int64_t(45), int64_t(100)}) {
      const size_t n = x.size() / size_t(nx) * size_t(nx);
      const std::vector<float> plane(x.begin(), x.begin() + int64_t(n));
      for (int variant = 0; variant < 4; ++variant)
        expect_plane_matches_rule(plane, nx, eb, rng, variant & 1, variant & 2);
    }
  }
}

}  // namespace
}  // namespace factz::detail
