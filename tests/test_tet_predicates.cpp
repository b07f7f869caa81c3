// The exact 3D vector-field predicates (src/kernels/tet.hpp; issue 22) against the
// independent big-integer reference (tests/support/exact_reference3d.*): orientation with
// Simulation of Simplicity on random, tie-heavy and adversarial points; the inside test;
// the type on random Jacobians and on linear fields of every type; the mesh.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "kernels/orient.hpp"
#include "kernels/tet.hpp"
#include "support/exact_reference.hpp"
#include "support/exact_reference3d.hpp"

namespace factz {
namespace {

using detail::SosPoint3;
using testref::RefPointN;

RefPointN ref_of(const SosPoint3& p) { return RefPointN{{p.x, p.y, p.z}, p.index}; }

/// Random floats of many kinds: small integers (ties and zero determinants), halves,
/// wide exponents, tiny subnormals, huge magnitudes, signed zeros.
class Values {
 public:
  explicit Values(uint64_t seed) : rng_(seed) {}
  float next(int kind) {
    switch (kind) {
      case 0: return float(int(rng_() % 5) - 2);                      // {-2..2}
      case 1: return float(int(rng_() % 9) - 4) * 0.5f;               // halves
      case 2: return std::ldexp(float(int(rng_() % 2001) - 1000), int(rng_() % 61) - 30);
      case 3: return std::ldexp(float(int(rng_() % 7) - 3), -149 + int(rng_() % 4));  // subnormals
      case 4: return std::ldexp(float(int(rng_() % 7) - 3), 100 + int(rng_() % 24));  // huge
      default: return (rng_() & 1) ? -0.0f : 0.0f;
    }
  }
  float any() { return next(int(rng_() % 6)); }
  uint64_t bits() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

TEST(TetReference, ThePlanarExpansionIsTheTwoDimensionalContract) {
  // The reference's eps expansion in the plane against the 2D contract's reference
  // (D, x2 - x1, y1 - y2, x0 - x2, +1): one convention for both dimensions.
  Values val(11);
  int degenerate = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int kind = trial % 3 == 0 ? 0 : (trial % 3 == 1 ? 1 : 2);
    testref::RefPoint p[3];
    std::vector<RefPointN> q;
    for (int k = 0; k < 3; ++k) {
      p[k] = {val.next(kind), val.next(kind), int64_t(val.bits() % 7) + k * 7 - (trial % 4 == 0 && k == 1 ? 8 : 0)};
      if (trial % 5 == 0 && k == 2) p[k] = {0.0f, 0.0f, -1};  // the origin
      q.push_back(RefPointN{{p[k].x, p[k].y}, p[k].index});
    }
    if (p[0].index == p[1].index || p[1].index == p[2].index || p[0].index == p[2].index) continue;
    degenerate += testref::ref_orient_plain(p[0], p[1], p[2]) == 0;
    ASSERT_EQ(testref::ref_orient_sos_nd(q), testref::ref_orient_sos(p[0], p[1], p[2])) << "trial " << trial;
  }
  EXPECT_GT(degenerate, 1000);
}

TEST(TetPredicates, OrientationMatchesTheReferenceOnRandomAndDegeneratePoints) {
  Values val(5);
  int degenerate = 0, checked = 0;
  for (int trial = 0; trial < 30000; ++trial) {
    const int kind = trial % 7;
    SosPoint3 p[4];
    for (int k = 0; k < 4; ++k) {
      const int kk = kind == 6 ? int(val.bits() % 6) : kind;  // 6: mixed kinds in one tetrahedron
      p[k] = {val.next(kk), val.next(kk), val.next(kk), int64_t(k * 5 + int(val.bits() % 5))};
    }
    if (trial % 3 == 0) p[val.bits() % 4] = {0.0f, 0.0f, 0.0f, -1};            // the origin takes part
    if (trial % 11 == 0) p[1] = {p[0].x, p[0].y, p[0].z, p[1].index};           // a repeated point
    if (trial % 13 == 0) p[3] = {p[1].x + p[2].x - p[0].x, p[1].y, p[1].z, p[3].index};  // coplanar-ish
    std::vector<RefPointN> q;
    for (const auto& x : p) q.push_back(ref_of(x));
    std::set<int64_t> ids;
    for (const auto& x : p) ids.insert(x.index);
    if (ids.size() != 4) continue;
    const int plain = testref::ref_orient_plain_nd(q);
    degenerate += plain == 0;
    ASSERT_EQ(detail::orient3_plain(p), plain) << "trial " << trial;
    ASSERT_EQ(detail::orient3_sos(p[0], p[1], p[2], p[3]), testref::ref_orient_sos_nd(q)) << "trial " << trial;
    ++checked;
  }
  EXPECT_GT(checked, 25000);
  EXPECT_GT(degenerate, 5000) << "the ties must reach the symbolic perturbation";
}

TEST(TetPredicates, InsideTestMatchesTheReference) {
  Values val(9);
  int inside = 0;
  for (int trial = 0; trial < 8000; ++trial) {
    const int kind = trial % 3;  // integers, halves, wide: many origins on faces and edges
    float u[4], v[4], w[4];
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) {
      u[k] = val.next(kind), v[k] = val.next(kind), w[k] = val.next(kind);
      idx[k] = k * 3 + int64_t(val.bits() % 3);
    }
    std::array<RefPointN, 4> q;
    SosPoint3 p[4];
    for (int k = 0; k < 4; ++k) {
      p[k] = {u[k], v[k], w[k], idx[k]};
      q[size_t(k)] = ref_of(p[k]);
    }
    const bool want = testref::ref_tet_contains_origin(q);
    inside += want;
    ASSERT_EQ(detail::tet_contains_origin(p), want) << "trial " << trial;
  }
  EXPECT_GT(inside, 200);
}

TEST(TetPredicates, TheDeterminantScreenAndWhatUsesItMatchTheReference) {
  // tet_origin_screen decides from four 3 x 3 determinants of the vectors; tet_signature and
  // tet_inside_verdict ask it first. Whatever it decides must be the reference's answer, and
  // the two callers must agree with the reference whether it decides or not.
  Values val(21);
  int decided = 0, inside = 0, undecided_ties = 0;
  const int trials = 12000;
  for (int trial = 0; trial < trials; ++trial) {
    const int kind = trial % 4 == 3 ? -1 : trial % 4;  // integers, halves, wide; mixed kinds
    float u[4], v[4], w[4];
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) {
      u[k] = kind < 0 ? val.any() : val.next(kind);
      v[k] = kind < 0 ? val.any() : val.next(kind);
      w[k] = kind < 0 ? val.any() : val.next(kind);
      idx[k] = k * 3 + int64_t(val.bits() % 3);
    }
    if (trial % 5 == 4) {  // vector 3 nearly in the plane of the origin and vectors 1, 2
      const float a = float(int(val.bits() % 7) - 3), b = float(int(val.bits() % 7) - 3);
      u[3] = a * u[1] + b * u[2];
      v[3] = a * v[1] + b * v[2];
      w[3] = std::nextafter(a * w[1] + b * w[2], (val.bits() & 1) ? 1e30f : -1e30f);
    }
    std::array<RefPointN, 4> q;
    for (int k = 0; k < 4; ++k) q[size_t(k)] = ref_of(SosPoint3{u[k], v[k], w[k], idx[k]});
    const bool want = testref::ref_tet_contains_origin(q);
    inside += want;
    const int screen = detail::tet_origin_screen(u, v, w);
    if (screen >= 0) {
      ++decided;
      ASSERT_EQ(screen == 1, want) << "trial " << trial;
    } else if (kind == 0) {
      ++undecided_ties;
    }
    const int axes[3] = {0, 1, 2};
    ASSERT_EQ(detail::tet_signature(idx, axes, u, v, w) != 0, want) << "trial " << trial;
    // The verdict against a "no critical point" and a "critical point" signature.
    const auto none = detail::tet_inside_verdict(uint8_t(0), idx, u, v, w);
    const auto some = detail::tet_inside_verdict(uint8_t(1), idx, u, v, w);
    // tet_inside_verdict treats a flat image as no critical point, as the contract does.
    SosPoint3 p[4];
    for (int k = 0; k < 4; ++k) p[k] = {u[k], v[k], w[k], idx[k]};
    const bool counted = want && !detail::flat_image(p);
    ASSERT_EQ(none == detail::InsideVerdict::same, !counted) << "trial " << trial;
    ASSERT_EQ(some == detail::InsideVerdict::needs_type, counted) << "trial " << trial;
  }
  EXPECT_GT(inside, 300);
  EXPECT_GT(decided, trials / 2);     // the screen decides most tetrahedra
  EXPECT_GT(undecided_ties, 100);     // and leaves the ties to the full test
}

TEST(TetPredicates, TypeMatchesTheReferenceOnRandomJacobians) {
  Values val(21);
  std::array<int, kCpType3Count> seen{};
  for (int trial = 0; trial < 30000; ++trial) {
    const int kind = trial % 4 == 3 ? 2 : trial % 3;  // small integers give zero traces, discriminants
    float u[4], v[4], w[4];
    for (int k = 0; k < 4; ++k) u[k] = val.next(kind), v[k] = val.next(kind), w[k] = val.next(kind);
    const int t = int(val.bits() % 6);
    const int axes[3] = {detail::kTetAxes[t][0], detail::kTetAxes[t][1], detail::kTetAxes[t][2]};
    const CpType3 want = testref::ref_tet_type(u, v, w, axes);
    ++seen[size_t(want)];
    ASSERT_EQ(int(detail::tet_type(u, v, w, axes)), int(want)) << "trial " << trial;
  }
  for (int k = 0; k < kCpType3Count; ++k) EXPECT_GT(seen[size_t(k)], 0) << "type " << k << " never drawn";
}

// tet_type decides in double where its error bound allows and falls back to wide integers
// otherwise: values of every kind mixed in one tetrahedron (subnormals beside huge values,
// signed zeros), and near-singular Jacobians (a row nearly the sum of two others, a
// discriminant near zero from a repeated eigenvalue plus a last-bit change) must give the
// reference's type whichever stage answers.
TEST(TetPredicates, TypeMatchesTheReferenceOnMixedMagnitudesAndNearTies) {
  Values val(33);
  std::mt19937_64 rng(34);
  std::array<int, kCpType3Count> seen{};
  for (int trial = 0; trial < 30000; ++trial) {
    float u[4], v[4], w[4];
    for (int k = 0; k < 4; ++k) u[k] = val.any(), v[k] = val.any(), w[k] = val.any();
    if (trial % 3 == 1) {
      // A linear field J x with J = diag(a, a, b) + a last-bit nudge: repeated eigenvalues.
      const float a = float(int(rng() % 7) - 3), b = float(int(rng() % 7) - 3);
      const float x[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
      for (int k = 0; k < 4; ++k) {
        u[k] = a * x[k][0];
        v[k] = a * x[k][1] + (rng() & 1 ? 0.0f : 0.5f) * x[k][0];
        w[k] = b * x[k][2];
      }
      const int k = int(rng() % 4);
      u[k] = std::nextafter(u[k], rng() & 1 ? 1e30f : -1e30f);
    } else if (trial % 3 == 2) {
      // Row w nearly u + v: det J near zero.
      for (int k = 0; k < 4; ++k) {
        u[k] = val.next(2), v[k] = val.next(2);
        w[k] = u[k] + v[k];
        if (rng() % 4 == 0) w[k] = std::nextafter(w[k], 0.0f);
      }
    }
    const int t = int(rng() % 6);
    const int axes[3] = {detail::kTetAxes[t][0], detail::kTetAxes[t][1], detail::kTetAxes[t][2]};
    const CpType3 want = testref::ref_tet_type(u, v, w, axes);
    ++seen[size_t(want)];
    ASSERT_EQ(int(detail::tet_type(u, v, w, axes)), int(want)) << "trial " << trial;
    ASSERT_EQ(int(detail::tet_type_wide(u, v, w, axes)), int(want)) << "trial " << trial;
  }
  EXPECT_GT(seen[size_t(CpType3::degenerate)], 100);
  EXPECT_GT(seen[size_t(CpType3::attracting_node)] + seen[size_t(CpType3::repelling_node)], 100);
}

TEST(TetMesh, VerticesAxesAndCountMatchTheReference) {
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{2, 2, 2}, {3, 4, 5}, {7, 2, 3}}) {
    ASSERT_EQ(detail::tet_count(nx, ny, nz), 6 * (nx - 1) * (ny - 1) * (nz - 1));
    std::set<std::array<int64_t, 4>> seen;
    for (int64_t t = 0; t < detail::tet_count(nx, ny, nz); ++t) {
      int64_t a[4], b[4];
      int ax[3], bx[3];
      detail::tet_vertices(nx, ny, t, a, ax);
      testref::ref_tet_vertices(nx, ny, nz, t, b, bx);
      for (int k = 0; k < 4; ++k) ASSERT_EQ(a[k], b[k]) << t;
      for (int k = 0; k < 3; ++k) ASSERT_EQ(ax[k], bx[k]) << t;
      std::array<int64_t, 4> s{a[0], a[1], a[2], a[3]};
      std::sort(s.begin(), s.end());
      EXPECT_TRUE(seen.insert(s).second) << "tetrahedron " << t << " repeats";
    }
  }
  EXPECT_EQ(detail::tet_count(1, 5, 5), 0);
  for (int t = 0; t < 6; ++t)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(detail::tet_axis(t, k), detail::kTetAxes[t][k]);
}

/// The integer matrices of a linear field A (x - c) of each type (eigenvalues in the
/// comment), conjugated by a unimodular shear so that no axis is special.
struct LinearCase {
  CpType3 type;
  int a[3][3];
};
std::vector<LinearCase> linear_cases() {
  const int D[][3][3] = {
      {{-1, 0, 0}, {0, -2, 0}, {0, 0, -3}},   // attracting node
      {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}},      // repelling node
      {{1, 0, 0}, {0, -2, 0}, {0, 0, -3}},    // one unstable: saddle, two stable
      {{1, 0, 0}, {0, 2, 0}, {0, 0, -3}},     // two unstable
      {{-1, -2, 0}, {2, -1, 0}, {0, 0, -3}},  // -1 +- 2i, -3
      {{1, -2, 0}, {2, 1, 0}, {0, 0, 3}},     // 1 +- 2i, 3
      {{-1, -2, 0}, {2, -1, 0}, {0, 0, 3}},   // stable pair, unstable real
      {{1, -2, 0}, {2, 1, 0}, {0, 0, -3}},    // unstable pair, stable real
      {{0, -2, 0}, {2, 0, 0}, {0, 0, -3}},    // +-2i, -3
  };
  const CpType3 types[] = {CpType3::attracting_node,         CpType3::repelling_node,
                           CpType3::saddle_2_stable,         CpType3::saddle_2_unstable,
                           CpType3::attracting_spiral,       CpType3::repelling_spiral,
                           CpType3::spiral_saddle_2_stable,  CpType3::spiral_saddle_2_unstable,
                           CpType3::center};
  // P = [[1,1,0],[0,1,1],[0,0,1]], P^-1 = [[1,-1,1],[0,1,-1],[0,0,1]]: A = P D P^-1.
  const int P[3][3] = {{1, 1, 0}, {0, 1, 1}, {0, 0, 1}}, Pi[3][3] = {{1, -1, 1}, {0, 1, -1}, {0, 0, 1}};
  std::vector<LinearCase> out;
  for (size_t c = 0; c < std::size(types); ++c) {
    LinearCase lc{types[c], {}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        int s = 0;
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l) s += P[i][k] * D[c][k][l] * Pi[l][j];
        lc.a[i][j] = s;
      }
    out.push_back(lc);
  }
  return out;
}

TEST(TetPredicates, LinearFieldsOfEveryTypeHaveOneCriticalPointOfThatType) {
  const int64_t n = 5;
  // Zeros inside a tetrahedron, on a face, on an edge, at a vertex: SoS puts each in
  // exactly one tetrahedron.
  const double centres[][3] = {{2.25, 1.5, 2.75}, {2.5, 2.5, 1.25}, {2.0, 2.5, 1.5}, {2.0, 2.0, 2.0}, {1.5, 1.5, 1.5}};
  for (const LinearCase& lc : linear_cases()) {
    for (const auto& c : centres) {
      std::vector<float> f[3];
      for (int64_t z = 0; z < n; ++z)
        for (int64_t y = 0; y < n; ++y)
          for (int64_t x = 0; x < n; ++x) {
            const double d[3] = {double(x) - c[0], double(y) - c[1], double(z) - c[2]};
            for (int i = 0; i < 3; ++i)
              f[i].push_back(float(lc.a[i][0] * d[0] + lc.a[i][1] * d[1] + lc.a[i][2] * d[2]));  // exact
          }
      int found = 0;
      for (int64_t t = 0; t < detail::tet_count(n, n, n); ++t) {
        int64_t idx[4];
        int axes[3];
        detail::tet_vertices(n, n, t, idx, axes);
        float u[4], v[4], w[4];
        for (int k = 0; k < 4; ++k) u[k] = f[0][size_t(idx[k])], v[k] = f[1][size_t(idx[k])], w[k] = f[2][size_t(idx[k])];
        const uint8_t sig = detail::tet_signature(idx, axes, u, v, w);
        if (t % 7 == 0 || sig != 0) {
          ASSERT_EQ(sig, testref::ref_tet_signature(idx, axes, u, v, w)) << t;
        }
        if (sig == 0) continue;
        ++found;
        EXPECT_EQ(int(sig), 1 + int(lc.type)) << "centre " << c[0] << "," << c[1] << "," << c[2];
      }
      EXPECT_EQ(found, 1) << "type " << int(lc.type) << " centre " << c[0] << "," << c[1] << "," << c[2];
    }
  }
}

TEST(TetPredicates, DegenerateAndZeroFields) {
  const int axes[3] = {0, 1, 2};
  const float zero[4] = {0, 0, 0, 0}, ramp[4] = {0, 1, 2, 3};
  EXPECT_EQ(detail::tet_type(zero, zero, zero, axes), CpType3::degenerate);
  EXPECT_EQ(detail::tet_type(ramp, ramp, zero, axes), CpType3::degenerate);
  const int64_t idx[4] = {0, 1, 6, 31};
  // A zero field: every vector is the origin; SoS decides, and the reference agrees.
  EXPECT_EQ(detail::tet_signature(idx, axes, zero, zero, zero), testref::ref_tet_signature(idx, axes, zero, zero, zero));
  // Constant fields never hold a critical point unless the constant is zero.
  const float one[4] = {1, 1, 1, 1};
  EXPECT_EQ(detail::tet_signature(idx, axes, one, zero, zero), 0);
  // The largest and smallest floats: the integers hold them.
  const float big[4] = {3.4e38f, -3.4e38f, 1e-45f, -1e-45f};
  for (int t = 0; t < 6; ++t) {
    const int ax[3] = {detail::kTetAxes[t][0], detail::kTetAxes[t][1], detail::kTetAxes[t][2]};
    EXPECT_EQ(detail::tet_type(big, ramp, one, ax), testref::ref_tet_type(big, ramp, one, ax));
    EXPECT_EQ(detail::tet_signature(idx, ax, big, ramp, zero), testref::ref_tet_signature(idx, ax, big, ramp, zero));
  }
}

}  // namespace
}  // namespace factz
