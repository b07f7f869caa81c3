// The TopoSZ encoder's steps (src/scalar/toposz_encoder.hpp): a repair that its search
// budget suspends, resumed later, protects exactly what a repair done at once protects,
// so the race of steps (scalar_codec.cpp) never changes a step's quantization by putting
// it aside; for both quantizers (values and lattice).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "scalar/contour_tree_core.hpp"
#include "scalar/toposz_encoder.hpp"

namespace factz {
namespace {

// Terraces with wide plateaus and some noise: nodes on plateaus, level components that
// span many vertices, and several rounds of repair at a coarse bound.
std::vector<float> terraces(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(size_t(nx * ny * nz));
  size_t i = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x, ++i) {
        const float h = 4.0f * std::sin(0.23f * float(x)) * std::cos(0.19f * float(y)) + std::sin(0.3f * float(z));
        v[i] = i % 3 == 0 ? std::round(h) : h + 0.4f * u(rng);
      }
  return v;
}

TEST(TopoSZSteps, ASuspendedRepairResumesToTheSameQuantization) {
  int64_t suspensions = 0, rounds = 0;
  for (auto [nx, ny, nz] : {std::tuple{70, 60, 1}, {24, 20, 12}})
    for (double p_rel : {1e-2, 3e-2}) {
      const std::vector<float> f = terraces(nx, ny, nz, 5);
      const detail::ScalarGrid g{nx, ny, nz};
      const double range = detail::scalar_range(f);
      const double p_abs = p_rel * range;
      const ContourTree tree = detail::compute_contour_tree(f, g, {}, p_abs, {}, 1);
      const detail::TopoInput in{f, g, {}, {}, float(0.1 * range), p_abs, &tree, 1, nullptr};
      for (float step : {float(p_abs), float(p_abs / 4)})
        for (bool lattice : {false, true}) {
          SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " p " +
                       std::to_string(p_rel) + " step " + std::to_string(step) + (lattice ? " lattice" : ""));
          detail::TopoStep at_once(in, step, 0, lattice), in_parts(in, step, 0, lattice);
          detail::CtWorkspace work_a, work_b;
          for (int r = 0; r < 45; ++r) {
            const detail::TopoRound a = at_once.advance(work_a);
            detail::TopoRound b = detail::TopoRound::suspended;
            for (int64_t budget = 1; b == detail::TopoRound::suspended; budget *= 3) {
              b = in_parts.advance(work_b, budget);
              suspensions += b == detail::TopoRound::suspended;
            }
            ASSERT_EQ(a, b);
            ASSERT_EQ(at_once.rounds(), in_parts.rounds());
            ASSERT_EQ(at_once.quantized().symbols, in_parts.quantized().symbols);
            ASSERT_EQ(at_once.quantized().exact, in_parts.quantized().exact);
            if (a == detail::TopoRound::done) break;
            ++rounds;
          }
          EXPECT_TRUE(at_once.done());
        }
    }
  EXPECT_GT(rounds, 4);        // repairs happened
  EXPECT_GT(suspensions, 10);  // and were suspended, some more than once
}

}  // namespace
}  // namespace factz
