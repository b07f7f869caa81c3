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
#include "kernels/mesh.hpp"
#include "kernels/speculation.hpp"
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

// The writer's original signatures, a cell row at a time with the one-sided test of every
// cell first: the values of original_signatures, cell for cell, on a smooth field (most cells
// one-sided), ties and exact zeros (+0 and -0 are neither sign), a land mask, and float64.
template <class Field>
void check_signature_rows(const Field& f, const std::vector<uint8_t>& mask, int64_t& shortcut, const std::string& what) {
  const detail::Grid2D g{f.nx, f.ny};
  const int64_t cw = f.nx - 1;
  const uint8_t* m = mask.empty() ? nullptr : mask.data();
  std::vector<uint8_t> flags(static_cast<size_t>(cw)), row(static_cast<size_t>(2 * cw));
  for (int64_t i = 0; i + 1 < f.ny; ++i) {
    detail::original_signatures_row(g, i, f.u.data(), f.v.data(), m, flags.data(), row.data());
    for (int64_t j = 0; j < cw; ++j) {
      detail::Signature want[2];
      detail::original_signatures(g, i, j, f.u.data(), f.v.data(), m, want);
      ASSERT_EQ(row[size_t(2 * j)], want[0]) << what << " cell (" << i << ", " << j << ") triangle 0";
      ASSERT_EQ(row[size_t(2 * j + 1)], want[1]) << what << " cell (" << i << ", " << j << ") triangle 1";
      shortcut += flags[size_t(j)];
    }
  }
}

TEST(SpeculativeRows, SignatureRowsAreTheCellSignatures) {
  const VectorField2D smooth = synth::turbulence(97, 61, 4, 2.0);
  VectorField2D ties{41, 37, {}, {}};
  for (int64_t k = 0; k < ties.nx * ties.ny; ++k) {
    ties.u.push_back(k % 11 == 0 ? -0.0f : float(int(k * 7 % 5) - 2));
    ties.v.push_back(float(int(k * 3 % 4) - 1) * 0.5f);
  }
  std::vector<uint8_t> land(smooth.u.size(), 0);
  for (size_t k = 0; k < land.size(); ++k) land[k] = (k / 97) % 9 < 2 && k % 97 < 40;
  int64_t shortcut = 0;
  check_signature_rows(smooth, {}, shortcut, "smooth");
  const int64_t smooth_shortcut = shortcut;
  check_signature_rows(ties, {}, shortcut, "ties");
  check_signature_rows(smooth, land, shortcut, "land");
  check_signature_rows(testing::to_double(smooth), {}, shortcut, "float64");
  check_signature_rows(testing::to_double(smooth), land, shortcut, "float64 land");
  EXPECT_GT(smooth_shortcut, 96 * 60 / 2) << "most cells of a smooth field are one-sided";
  // original_signatures_quick, the trial's form, agrees too.
  const detail::Grid2D g{ties.nx, ties.ny};
  for (int64_t i = 0; i + 1 < ties.ny; ++i)
    for (int64_t j = 0; j + 1 < ties.nx; ++j) {
      detail::Signature a[2], b[2];
      detail::original_signatures(g, i, j, ties.u.data(), ties.v.data(), nullptr, a);
      detail::original_signatures_quick(g, i, j, ties.u.data(), ties.v.data(), nullptr, b);
      ASSERT_EQ(a[0], b[0]);
      ASSERT_EQ(a[1], b[1]);
    }
}

// The run's star flags against star_keeps_no_critical_point, target by target: never set where
// the scalar shortcut says nothing, and set at every interior target where it holds (a field
// without missing vertices: every triangle's signature is known); the first candidates of a
// run as the writer computes them, on a current state apart from the originals.
template <class Field>
void check_star_flags(const Field& f, const Field& cur_field, double eb, int64_t s0, int64_t& set, int64_t& interior) {
  using T = typename decltype(f.u)::value_type;
  const int64_t nx = f.nx, ny = f.ny;
  const detail::Grid2D g{nx, ny};
  std::vector<uint8_t> sig(size_t(g.triangle_count()));
  for (int64_t i = 0; i + 1 < ny; ++i)
    for (int64_t j = 0; j + 1 < nx; ++j)
      detail::original_signatures(g, i, j, f.u.data(), f.v.data(), nullptr, &sig[size_t(2 * (i * (nx - 1) + j))]);
  const T* fp[2] = {f.u.data(), f.v.data()};
  const T* cur[2] = {cur_field.u.data(), cur_field.v.data()};
  detail::RowCandidates2D<T> rc;
  std::vector<uint8_t> flags(static_cast<size_t>(nx));
  detail::PhaseSchedule schedule(nx, ny, s0);
  for (detail::ScheduledPhase ph; schedule.next(ph);) {
    const detail::PhaseLattice& L = ph.lattice;
    for (int64_t j = 0; j < L.count_y; ++j) {
      detail::first_candidates_row2d(fp, cur, nx, ny, ph, j, 0, L.count_x, T(eb), 32768, rc);
      detail::star_one_sided_row2d(cur, sig.data(), nx, ny, ph, j, 0, L.count_x, rc, flags.data());
      const int64_t y = L.y0 + j * L.dy;
      for (int64_t i = 0; i < L.count_x; ++i) {
        const int64_t x = L.x0 + i * L.dx;
        int64_t tris[6];
        const int m = detail::incident_triangles(g, y, x, tris);
        const bool scalar = detail::star_keeps_no_critical_point(g, x, y, rc.recon[0][size_t(i)], rc.recon[1][size_t(i)],
                                                                 cur[0], cur[1], sig.data(), tris, m);
        const bool inside = x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
        ASSERT_TRUE(!flags[size_t(i)] || scalar) << "target (" << x << ", " << y << ") step " << ph.step;
        if (inside) {
          ASSERT_EQ(bool(flags[size_t(i)]), scalar) << "target (" << x << ", " << y << ") step " << ph.step;
          ++interior;
        }
        set += flags[size_t(i)];
      }
    }
  }
}

TEST(SpeculativeRows, StarFlagsAreTheScalarStarShortcut) {
  const VectorField2D f = synth::turbulence(83, 71, 9, 3.0);
  VectorField2D cur = f;
  for (std::vector<float>* p : {&cur.u, &cur.v})
    for (size_t k = 0; k < p->size(); ++k) (*p)[k] = (*p)[k] * 0.9f + float(k % 5) * 0.004f;
  VectorField2D ties{41, 37, {}, {}};
  for (int64_t k = 0; k < ties.nx * ties.ny; ++k) {
    ties.u.push_back(k % 13 == 0 ? -0.0f : float(int(k * 7 % 5) - 2));
    ties.v.push_back(float(int(k * 3 % 4) - 1) * 0.5f);
  }
  int64_t set = 0, interior = 0;
  for (int64_t s0 : {int64_t(4), int64_t(4096)})
    for (double eb : {1e-1, 1e-3}) {
      check_star_flags(f, cur, eb, s0, set, interior);
      check_star_flags(ties, ties, eb, s0, set, interior);
      check_star_flags(testing::to_double(f), testing::to_double(cur), eb, s0, set, interior);
    }
  // Grids without interior vertices, or with one: nothing read outside the planes (the
  // writer's row pass runs on every size; ASan builds check the reads).
  for (int64_t nx : {1, 2, 3, 4})
    for (int64_t ny : {1, 2, 3, 4}) {
      const VectorField2D t = synth::turbulence(nx, ny, uint64_t(10 * nx + ny));
      int64_t s = 0, in = 0;
      check_star_flags(t, t, 1e-2, 2, s, in);
      if (nx < 3 || ny < 3) {
        EXPECT_EQ(in, 0) << nx << " x " << ny;
      }
      EXPECT_LE(s, in) << nx << " x " << ny << ": a flag at a border target";
    }
  EXPECT_GT(set, interior / 4) << "the flags decide a good share of the targets";
  EXPECT_LT(set, interior) << "and leave some to the full test";
}

}  // namespace
}  // namespace factz
