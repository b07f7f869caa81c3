// The 3D vector-field analysis (factz/topology3d.hpp; issue 22) on cases whose answer is
// known: linear fields of every type with their one critical point in a chosen
// tetrahedron, zero / constant / tie-heavy fields, classic flows; signatures equal to the
// kernels' tetrahedron by tetrahedron (and to the independent reference on small grids),
// whatever the thread count; masks; comparison counts; tiny and invalid shapes.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "factz/topology3d.hpp"
#include "kernels/tet.hpp"
#include "support/exact_reference3d.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

using testing::jacobian_of;
using testing::linear_field;
using testing::tet_centroid;

constexpr CpType3 kEveryType[] = {CpType3::attracting_node,        CpType3::repelling_node,
                                  CpType3::saddle_2_stable,        CpType3::saddle_2_unstable,
                                  CpType3::attracting_spiral,      CpType3::repelling_spiral,
                                  CpType3::spiral_saddle_2_stable, CpType3::spiral_saddle_2_unstable,
                                  CpType3::center};

VectorField3D filled(int64_t nx, int64_t ny, int64_t nz, float u, float v, float w) {
  VectorField3D f;
  f.nx = nx, f.ny = ny, f.nz = nz;
  const size_t n = size_t(nx * ny * nz);
  f.u.assign(n, u);
  f.v.assign(n, v);
  f.w.assign(n, w);
  return f;
}

std::vector<uint8_t> sigs(const VectorField3D& f, int threads) {
  auto s = signatures(f, Exec{threads});
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? s.value() : std::vector<uint8_t>{};
}

/// The signatures restated from the mesh and the kernels alone: every tetrahedron through
/// tet_vertices and tet_signature (no quick exclusion), 0 when it touches a missing vertex.
/// With `reference`, the independent big-integer oracle instead of the kernels.
std::vector<uint8_t> direct_signatures(const VectorField3D& f, bool reference = false) {
  std::vector<uint8_t> out(size_t(detail::tet_count(f.nx, f.ny, f.nz)));
  for (int64_t t = 0; t < int64_t(out.size()); ++t) {
    int64_t idx[4];
    int axes[3];
    detail::tet_vertices(f.nx, f.ny, t, idx, axes);
    float u[4], v[4], w[4];
    bool missing = false;
    for (int k = 0; k < 4; ++k) {
      const size_t i = size_t(idx[k]);
      u[k] = f.u[i], v[k] = f.v[i], w[k] = f.w[i];
      missing = missing || (!f.mask.empty() && f.mask[i]) || std::isnan(u[k]) || std::isnan(v[k]) ||
                std::isnan(w[k]);
    }
    if (missing) continue;
    out[size_t(t)] = reference ? testref::ref_tet_signature(idx, axes, u, v, w)
                               : detail::tet_signature(idx, axes, u, v, w);
  }
  return out;
}

int64_t nonzero(const std::vector<uint8_t>& s) {
  int64_t n = 0;
  for (uint8_t b : s) n += b != 0;
  return n;
}

// ---- Linear fields ----------------------------------------------------------------------

TEST(Topology3D, LinearFieldOfEveryTypeHasOneCriticalPointOfThatTypeInItsTetrahedron) {
  // The zero at the centroid of tetrahedron t of cube (1, 2, 1) of a 4 x 5 x 3 grid: the
  // values are exact (integer Jacobian, quarter coordinates), the interpolant on every
  // tetrahedron is the field itself, so its only zero lies strictly inside that one.
  const int64_t nx = 4, ny = 5, nz = 3, cx = 1, cy = 2, cz = 1;
  for (CpType3 type : kEveryType) {
    for (int t = 0; t < 6; ++t) {
      const VectorField3D f = linear_field(nx, ny, nz, jacobian_of(type), tet_centroid(cx, cy, cz, t));
      const auto cps = critical_points(f);
      ASSERT_TRUE(cps.ok()) << cps.status().to_string();
      ASSERT_EQ(cps->size(), 1u) << cp_type3_name(type) << " t=" << t;
      const CriticalPoint3D& cp = cps->front();
      EXPECT_EQ(cp.tetrahedron, 6 * ((cz * (ny - 1) + cy) * (nx - 1) + cx) + t) << cp_type3_name(type);
      EXPECT_EQ(cp.x, cx);
      EXPECT_EQ(cp.y, cy);
      EXPECT_EQ(cp.z, cz);
      EXPECT_EQ(cp.t, t);
      EXPECT_EQ(cp.type, type) << "want " << cp_type3_name(type) << ", got " << cp_type3_name(cp.type);
      // The centroid: barycentric coordinates 1/4 each (exact inputs, display precision).
      for (double mu : cp.mu) EXPECT_NEAR(mu, 0.25, 1e-12);
    }
  }
}

TEST(Topology3D, DegenerateLinearFieldHasNoCriticalPoint) {
  // det J = 0: the zero set is a line through the grid; under the contract's perturbation
  // the origin always ends up outside such tetrahedra (docs/architecture.md, "Observations").
  const VectorField3D f = linear_field(4, 4, 4, jacobian_of(CpType3::degenerate), tet_centroid(1, 1, 1, 0));
  const auto s = sigs(f, 1);
  EXPECT_EQ(nonzero(s), 0);
  EXPECT_EQ(s, direct_signatures(f, true));
}

// ---- Whole fields: agreement and thread independence ------------------------------------

TEST(Topology3D, ZeroAndConstantFieldsHaveNoCriticalPointsOnAnyThreadCount) {
  for (const auto& f : {filled(5, 4, 3, 0.0f, 0.0f, 0.0f), filled(5, 4, 3, -0.0f, 0.0f, -0.0f),
                        filled(6, 3, 4, 1.5f, -2.0f, 0.0f), filled(3, 3, 3, 0.0f, 0.0f, 7.0f)}) {
    for (int threads : {1, 2, 3}) {
      const auto s = sigs(f, threads);
      EXPECT_EQ(s.size(), size_t(6 * (f.nx - 1) * (f.ny - 1) * (f.nz - 1)));
      EXPECT_EQ(nonzero(s), 0) << threads << " threads";
    }
    EXPECT_EQ(sigs(f, 1), direct_signatures(f, true));
  }
}

TEST(Topology3D, TieHeavyFieldsMatchTheReferenceAndAreIndependentOfThreadCount) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const VectorField3D f = testing::tie_field(5, 4, 3, seed);
    const auto one = sigs(f, 1);
    EXPECT_EQ(one, direct_signatures(f, true)) << "seed " << seed;
    EXPECT_EQ(sigs(f, 2), one);
    EXPECT_EQ(sigs(f, 3), one);
  }
  // A larger one against the kernels only (the reference is slow on purpose).
  const VectorField3D big = testing::tie_field(23, 17, 13, 7);
  const auto one = sigs(big, 1);
  EXPECT_GT(nonzero(one), 100) << "ties must still give critical points";
  EXPECT_EQ(one, direct_signatures(big));
  EXPECT_EQ(sigs(big, 2), one);
  EXPECT_EQ(sigs(big, 3), one);
}

TEST(Topology3D, ClassicFlowsMatchTheKernelsOnEveryThreadCount) {
  struct Case {
    const char* name;
    VectorField3D f;
    int64_t at_least;
  };
  const Case cases[] = {
      {"abc", testing::abc_flow(24, 20, 16), 1},
      {"taylor_green", testing::taylor_green(17, 16, 12), 0},
      {"taylor_green_w", testing::taylor_green(17, 16, 12, 0.5), 1},
      {"random_modes", testing::random_modes(21, 18, 15, 42), 1},
  };
  for (const auto& c : cases) {
    const auto one = sigs(c.f, 1);
    ASSERT_EQ(one, direct_signatures(c.f)) << c.name;
    EXPECT_GE(nonzero(one), c.at_least) << c.name;
    EXPECT_EQ(sigs(c.f, 2), one) << c.name;
    EXPECT_EQ(sigs(c.f, 3), one) << c.name;
    // critical_points: one per nonzero signature, in tetrahedron order, with its type.
    const auto cps = critical_points(c.f, Exec{2});
    ASSERT_TRUE(cps.ok());
    ASSERT_EQ(int64_t(cps->size()), nonzero(one)) << c.name;
    const std::vector<CriticalPoint3D>& list = cps.value();
    for (size_t k = 0; k < list.size(); ++k) {
      const auto& cp = list[k];
      if (k > 0) {
        EXPECT_LT(list[k - 1].tetrahedron, cp.tetrahedron);
      }
      EXPECT_EQ(int(one[size_t(cp.tetrahedron)]), 1 + int(cp.type));
      EXPECT_EQ(cp.tetrahedron, 6 * ((cp.z * (c.f.ny - 1) + cp.y) * (c.f.nx - 1) + cp.x) + cp.t);
      double sum = 0;
      for (double mu : cp.mu) sum += mu;
      EXPECT_NEAR(sum, 1.0, 1e-9);
    }
  }
}

TEST(Topology3D, ScaledFieldKeepsItsSignatures) {
  // A power-of-two scale changes no sign of the exact predicates.
  VectorField3D f = testing::random_modes(12, 11, 10, 5);
  const auto before = sigs(f, 2);
  for (auto* c : {&f.u, &f.v, &f.w})
    for (float& x : *c) x = std::ldexp(x, -40);
  EXPECT_EQ(sigs(f, 2), before);
}

// ---- Masks ------------------------------------------------------------------------------

TEST(Topology3D, MaskedVertexRemovesExactlyTheTetrahedraTouchingIt) {
  VectorField3D f = testing::tie_field(6, 5, 4, 11);
  const auto full = sigs(f, 1);
  const int64_t nx = f.nx, ny = f.ny;
  const int64_t masked = (2 * ny + 2) * nx + 3;  // an interior vertex (3, 2, 2)
  f.mask.assign(size_t(f.size()), 0);
  f.mask[size_t(masked)] = 1;
  const auto cut = sigs(f, 2);
  ASSERT_EQ(cut.size(), full.size());
  int touching = 0;
  for (int64_t t = 0; t < int64_t(full.size()); ++t) {
    int64_t idx[4];
    int axes[3];
    detail::tet_vertices(nx, ny, t, idx, axes);
    const bool touches = idx[0] == masked || idx[1] == masked || idx[2] == masked || idx[3] == masked;
    touching += touches;
    EXPECT_EQ(cut[size_t(t)], touches ? 0 : full[size_t(t)]) << "tetrahedron " << t;
  }
  EXPECT_EQ(touching, 24);  // an interior vertex of the Freudenthal mesh is in 24 tetrahedra
  EXPECT_EQ(cut, direct_signatures(f));
  // A NaN component marks the vertex missing just the same, whatever the other values.
  VectorField3D g = testing::tie_field(6, 5, 4, 11);
  g.v[size_t(masked)] = std::numeric_limits<float>::quiet_NaN();
  g.u[size_t(masked)] = std::numeric_limits<float>::infinity();  // not read: the vertex is missing
  EXPECT_EQ(sigs(g, 3), cut);
  EXPECT_EQ(missing_mask(g), f.mask);
}

TEST(Topology3D, FullyMaskedAndUnmaskedMasksBehave) {
  VectorField3D f = testing::random_modes(7, 6, 5, 3);
  const auto plain = sigs(f, 1);
  f.mask.assign(size_t(f.size()), 0);  // an all-zero mask is no mask
  EXPECT_EQ(sigs(f, 2), plain);
  EXPECT_TRUE(missing_mask(f).empty());
  f.mask.assign(size_t(f.size()), 1);
  EXPECT_EQ(nonzero(sigs(f, 2)), 0);
}

// ---- Comparison -------------------------------------------------------------------------

TEST(Topology3D, CompareOfAFieldWithItselfHasNoViolations) {
  const VectorField3D f = testing::abc_flow(20, 18, 16);
  const auto c = compare(f, f, Exec{2});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->violations(), 0);
  EXPECT_EQ(c->cp_original, nonzero(sigs(f, 1)));
  EXPECT_EQ(c->cp_decompressed, c->cp_original);
  EXPECT_GT(c->cp_original, 0);
  for (double e : c->max_abs_error) EXPECT_EQ(e, 0.0);
  EXPECT_EQ(c->rmse, 0.0);
  EXPECT_TRUE(std::isinf(c->psnr));
  EXPECT_GT(c->value_range, 0.0);
}

TEST(Topology3D, CompareCountsLostSpuriousAndChangedTetrahedra) {
  const VectorField3D a = testing::random_modes(16, 14, 12, 9);
  VectorField3D b = a;
  // Perturb a few vertices by known amounts, one component each.
  const float du = 0.25f, dv = -0.125f, dw = 0.5f;
  for (int64_t k = 0; k < b.size(); k += 97) {
    b.u[size_t(k)] += du;
    b.v[size_t(k + 1) % size_t(b.size())] += dv;
    b.w[size_t(k + 2) % size_t(b.size())] += dw;
  }
  const auto x = sigs(a, 1), y = sigs(b, 1);
  int64_t lost = 0, spurious = 0, changed = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    lost += x[t] && !y[t];
    spurious += !x[t] && y[t];
    changed += x[t] && y[t] && x[t] != y[t];
  }
  ASSERT_GT(lost + spurious + changed, 0) << "the perturbation must change something";
  for (int threads : {1, 3}) {
    const auto c = compare(a, b, Exec{threads});
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->lost, lost);
    EXPECT_EQ(c->spurious, spurious);
    EXPECT_EQ(c->type_changed, changed);
    EXPECT_EQ(c->mask_mismatch, 0);
    EXPECT_EQ(c->violations(), lost + spurious + changed);
    EXPECT_EQ(c->cp_original, nonzero(x));
    EXPECT_EQ(c->cp_decompressed, nonzero(y));
    // Float additions of small powers of two to values below 4: the errors are exact
    // up to the rounding of the sum, never above the step.
    EXPECT_NEAR(c->max_abs_error[0], du, 1e-6);
    EXPECT_NEAR(c->max_abs_error[1], -dv, 1e-6);
    EXPECT_NEAR(c->max_abs_error[2], dw, 1e-6);
    EXPECT_GT(c->rmse, 0.0);
  }
}

TEST(Topology3D, CompareCountsMaskMismatchesAndSkipsMissingVertices) {
  VectorField3D a = testing::random_modes(8, 7, 6, 13);
  VectorField3D b = a;
  a.mask.assign(size_t(a.size()), 0);
  a.mask[10] = 1;
  a.mask[20] = 1;
  b.mask = a.mask;
  b.mask[20] = 0;
  b.mask[30] = 1;
  b.u[10] = 1e30f;  // missing in both: not compared
  const auto c = compare(a, b);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->masked_vertices, 2);
  EXPECT_EQ(c->mask_mismatch, 2);
  EXPECT_EQ(c->max_abs_error[0], 0.0);
  EXPECT_GE(c->violations(), 2);
}

TEST(Topology3D, CompareRefusesDifferentDimensions) {
  const auto c = compare(filled(3, 3, 3, 1, 1, 1), filled(3, 3, 4, 1, 1, 1));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_NE(c.status().message().find("3x3x3 vs 3x3x4"), std::string::npos) << c.status().message();
}

// ---- Shapes -----------------------------------------------------------------------------

TEST(Topology3D, TinyGridsHaveNoOrFewTetrahedraAndNeverFail) {
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {2, 1, 3}, {1, 5, 5}, {5, 5, 1}, {2, 2, 2}, {2, 3, 2}}) {
    const VectorField3D f = testing::tie_field(nx, ny, nz, 17);
    for (int threads : {1, 3}) {
      const auto s = signatures(f, Exec{threads});
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_EQ(int64_t(s->size()), detail::tet_count(nx, ny, nz));
      EXPECT_EQ(s.value(), direct_signatures(f, true));
      const auto cps = critical_points(f, Exec{threads});
      ASSERT_TRUE(cps.ok());
      EXPECT_EQ(int64_t(cps->size()), nonzero(s.value()));
    }
    EXPECT_TRUE(compare(f, f).ok());
  }
  EXPECT_EQ(sigs(filled(2, 2, 2, 1, 2, 3), 1).size(), 6u);
}

TEST(Topology3D, InvalidShapesAndValuesAreRefusedWithAClearStatus) {
  auto refused = [](const VectorField3D& f, const std::string& words) {
    const auto s = signatures(f);
    ASSERT_FALSE(s.ok()) << words;
    EXPECT_EQ(s.status().code(), Code::invalid_argument);
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
    EXPECT_FALSE(critical_points(f).ok());
    EXPECT_FALSE(compare(f, f).ok());
    EXPECT_FALSE(validate_field(f).ok());
  };
  VectorField3D zero;  // 0 x 0 x 0
  refused(zero, "must be positive, got 0x0x0");
  VectorField3D flat = filled(3, 3, 3, 1, 1, 1);
  flat.nz = 0;
  refused(flat, "must be positive, got 3x3x0");
  flat.nz = -2;
  refused(flat, "must be positive");
  // nx * ny * nz overflows int64 (and exceeds 2^40): refused before any plane is looked at.
  VectorField3D huge;
  huge.nx = huge.ny = huge.nz = int64_t(1) << 30;
  refused(huge, "too large");
  huge.nx = int64_t(1) << 62, huge.ny = 4, huge.nz = 1;
  refused(huge, "too large");
  huge.nx = int64_t(1) << 20, huge.ny = int64_t(1) << 20, huge.nz = 2;
  refused(huge, "too large");
  VectorField3D short_w = filled(3, 3, 3, 1, 1, 1);
  short_w.w.pop_back();
  refused(short_w, "component planes must hold nx*ny*nz = 27 values");
  VectorField3D bad_mask = filled(3, 3, 3, 1, 1, 1);
  bad_mask.mask.assign(5, 0);
  refused(bad_mask, "the mask must be empty or hold nx*ny*nz = 27 bytes");
  VectorField3D inf = filled(3, 3, 3, 1, 1, 1);
  inf.w[size_t((2 * 3 + 1) * 3 + 2)] = -std::numeric_limits<float>::infinity();
  refused(inf, "first at x=2 y=1 z=2");
  // The same infinity at a masked vertex is fine.
  inf.mask.assign(27, 0);
  inf.mask[size_t((2 * 3 + 1) * 3 + 2)] = 1;
  EXPECT_TRUE(signatures(inf).ok());
}

TEST(Topology3D, TypeNamesAreDistinct) {
  std::set<std::string> names;
  for (int t = 0; t < kCpType3Count; ++t) names.insert(cp_type3_name(CpType3(t)));
  EXPECT_EQ(int(names.size()), kCpType3Count);
  EXPECT_STREQ(cp_type3_name(CpType3::saddle_2_unstable), "saddle_2_unstable");
  EXPECT_STREQ(cp_type3_name(CpType3(200)), "unknown");
}

}  // namespace
}  // namespace factz
