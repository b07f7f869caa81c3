// The 2D speculative writer's row pass (backend/cpu/speculative_rows.hpp) against the scalar
// first candidate of speculate_vertex: for every target of every run of every row of every
// phase, the prediction bit for bit (kernels/interpolation.hpp predict with the cubic
// predictor, interior and edge targets alike), and a candidate flagged as fitting only where
// quantize_residual fits and within_bound holds, with the same code and value; a refused one
// only where the scalar steps refuse it too or the difference is not exact in double (which
// the float64 path decides with wide arithmetic). Float and float64 fields, a current state
// apart from the originals, tiny values beside O(1) ones, ties, several anchor strides and
// runs cut anywhere in a row (the team's chunks).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/cpu/speculative_rows.hpp"
#include "kernels/exact.hpp"
#include "kernels/interpolation.hpp"
#include "kernels/quantizer.hpp"
#include "support/precision.hpp"
#include "support/row_candidate_check.hpp"
#include "synth.hpp"

namespace factz {
namespace {

template <class Field>
void check_runs(const Field& orig, const Field& cur_field, double eb, int64_t s0, uint64_t seed, int64_t& accepted,
                int64_t& refused) {
  using T = typename decltype(orig.u)::value_type;
  const int64_t nx = orig.nx, ny = orig.ny;
  const T* f[2] = {orig.u.data(), orig.v.data()};
  const T* cur[2] = {cur_field.u.data(), cur_field.v.data()};
  const int32_t radius = 32768;
  detail::RowCandidates2D<T> row;
  detail::PhaseSchedule schedule(nx, ny, s0);
  int64_t index = 0;
  for (detail::ScheduledPhase ph; schedule.next(ph); ++index) {
    const detail::PhaseLattice& L = ph.lattice;
    // The first id of a level-wise bound's coarse levels (kMaxBoundId - 1) on every other phase.
    const T bound = detail::bound_of_id(T(eb), index % 2 ? detail::kMaxBoundId : detail::kMaxBoundId - 1);
    for (int64_t j = 0; j < L.count_y; ++j) {
      // The row in runs cut at pseudo-random points, as the team's chunks cut it.
      for (int64_t i0 = 0; i0 < L.count_x;) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t i1 = std::min(L.count_x, i0 + 1 + int64_t((seed >> 33) % 23));
        detail::first_candidates_row2d(f, cur, nx, ny, ph, j, i0, i1, bound, radius, row);
        const int64_t y = L.y0 + j * L.dy;
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t x = L.x0 + i * L.dx, k = y * nx + x;
          const size_t r = size_t(i - i0);
          const std::string where = "s0 " + std::to_string(s0) + " phase " + std::to_string(index) + " vertex (" +
                                    std::to_string(x) + ", " + std::to_string(y) + ")";
          T x2[2], pred[2];
          for (int c = 0; c < 2; ++c) {
            x2[c] = f[c][k];
            pred[c] = detail::predict(cur[c], nx, ny, x, y, ph.step, ph.phase, detail::Predictor::cubic);
          }
          ASSERT_NO_FATAL_FAILURE(testing::check_row_target(row, r, x2, pred, bound, radius, where, accepted, refused));
        }
        i0 = i1;
      }
    }
  }
}

TEST(SpeculativeRows, RowCandidatesAreTheScalarFirstCandidates) {
  VectorField2D f = synth::turbulence(83, 71, 9);
  // Tiny values among O(1) ones: a candidate's difference from them is not exact in double
  // (within_bound refuses it for a float field, decides it exactly for a float64 one).
  for (size_t k = 0; k < f.u.size(); k += 17) f.u[k] = (k % 2 ? 1e-30f : -3e-25f);
  VectorField2D cur = f;  // a current state apart from the originals: predictions differ
  for (std::vector<float>* p : {&cur.u, &cur.v})
    for (size_t k = 0; k < p->size(); ++k) (*p)[k] = (*p)[k] * 0.75f + float(k % 7) * 0.01f;
  VectorField2D ties{41, 37, {}, {}};  // few distinct values: ties and exact zeros everywhere
  for (int64_t k = 0; k < ties.nx * ties.ny; ++k) {
    ties.u.push_back(float(int(k * 7 % 5) - 2));
    ties.v.push_back(float(int(k * 3 % 4) - 1) * 0.5f);
  }
  int64_t accepted[3] = {0, 0, 0}, refused[3] = {0, 0, 0};  // both happen on each field
  for (int64_t s0 : {int64_t(4), int64_t(16), int64_t(4096)})
    for (double eb : {1.0, 1e-2, 1e-5, 1e-9}) {
      check_runs(f, cur, eb, s0, 1, accepted[0], refused[0]);
      check_runs(ties, ties, eb, s0, 2, accepted[1], refused[1]);
      check_runs(testing::to_double(f), testing::to_double(cur), eb, s0, 3, accepted[2], refused[2]);
    }
  for (int k = 0; k < 3; ++k) {
    EXPECT_GT(accepted[k], 1000) << "field " << k;
    EXPECT_GT(refused[k], 1000) << "field " << k;
  }
}

}  // namespace
}  // namespace factz
