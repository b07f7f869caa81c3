// The exact float64 3D predicates (src/kernels/tet64.hpp; issue 22 with doubles) against the
// independent big-integer reference (tests/support/exact_reference3d.*, ref64_*: every
// double in units of 2^-1074): orientation with Simulation of Simplicity and the type on
// random, tie-heavy and adversarial tetrahedra (zeros, subnormals, values near DBL_MAX, both
// in one tetrahedron, values one ulp apart, values around 1e12 with small variations), and
// the float kernel's answers on doubles that are floats.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/tet.hpp"
#include "kernels/tet64.hpp"
#include "support/exact_reference3d.hpp"

namespace factz {
namespace {

using detail::SosPoint3D64;
using testref::RefPointN64;

RefPointN64 ref_of(const SosPoint3D64& p) { return RefPointN64{{p.x, p.y, p.z}, p.index}; }

/// Random doubles of many kinds.
class Values64 {
 public:
  explicit Values64(uint64_t seed) : rng_(seed) {}
  double next(int kind) {
    switch (kind) {
      case 0: return double(int(rng_() % 5) - 2);                                  // ties, zeros
      case 1: return std::ldexp(double(int64_t(rng_() % 2000001) - 1000000), int(rng_() % 121) - 60);
      case 2: return std::ldexp(double(int(rng_() % 7) - 3), -1074 + int(rng_() % 8));  // subnormals
      case 3: return std::ldexp(double(int(rng_() % 7) - 3), 1000 + int(rng_() % 22));   // huge
      case 4: {  // around 1e12, a few ulps apart (values that are not floats)
        const double base = (rng_() & 1) ? 1e12 : -1e12;
        double x = base;
        for (int k = int(rng_() % 4); k > 0; --k) x = std::nextafter(x, (rng_() & 1) ? DBL_MAX : -DBL_MAX);
        return x;
      }
      case 5: {  // any finite double, from its bits
        for (;;) {
          const double x = std::bit_cast<double>(rng_());
          if (std::isfinite(x)) return x;
        }
      }
      case 6: return (rng_() & 1) ? DBL_MAX : -DBL_MAX;
      case 7: return std::ldexp(1.0 + double(rng_() % 16) * 0x1p-52, int(rng_() % 3) - 1);  // last bits differ
      default: return (rng_() & 1) ? -0.0 : 0.0;
    }
  }
  static constexpr int kKinds = 9;
  double any() { return next(int(rng_() % kKinds)); }
  uint64_t bits() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

/// Points of one trial: one kind for all (kind < kKinds) or mixed kinds.
void random_points(Values64& val, int trial, SosPoint3D64 p[4]) {
  const int kind = trial % (Values64::kKinds + 1);
  for (int k = 0; k < 4; ++k) {
    auto draw = [&] { return kind == Values64::kKinds ? val.any() : val.next(kind); };
    p[k] = {draw(), draw(), draw(), int64_t(k * 5 + int(val.bits() % 5))};
  }
  if (trial % 3 == 0) p[val.bits() % 4] = {0.0, 0.0, 0.0, -1};
  if (trial % 11 == 0) p[1] = {p[0].x, p[0].y, p[0].z, p[1].index};
  if (trial % 13 == 0) p[3] = {p[2].x, p[2].y, p[1].z, p[3].index};
}

TEST(Tet64Predicates, OrientationMatchesTheReferenceOnRandomAndAdversarialPoints) {
  Values64 val(64);
  int degenerate = 0, wide = 0;
  for (int trial = 0; trial < 12000; ++trial) {
    SosPoint3D64 p[4];
    random_points(val, trial, p);
    std::vector<RefPointN64> q;
    for (const auto& x : p) q.push_back(ref_of(x));
    const int plain = testref::ref64_orient_plain_nd(q);
    degenerate += plain == 0;
    double c[12];
    detail::coordinates64(p, c);
    int lo = 0, hi = 0;
    wide += detail::exponent_range64(c, 12, lo, hi) && hi - lo > detail::kNarrowSpread3;
    // det[[p, 1]] = -det3(p1 - p0, ...): orient3_plain's sign convention is the reference's.
    ASSERT_EQ(detail::orient3_plain(p), plain) << "trial " << trial;
    ASSERT_EQ(detail::orient3_sos(p[0], p[1], p[2], p[3]), testref::ref64_orient_sos_nd(q)) << "trial " << trial;
  }
  EXPECT_GT(degenerate, 1000);
  EXPECT_GT(wide, 500);  // the wide integers were exercised
}

TEST(Tet64Predicates, InsideTestAndTypeMatchTheReference) {
  Values64 val(65);
  int inside = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    SosPoint3D64 p[4];
    random_points(val, trial, p);
    if (p[0].index < 0 || p[1].index < 0 || p[2].index < 0 || p[3].index < 0) continue;
    double u[4], v[4], w[4];
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) u[k] = p[k].x, v[k] = p[k].y, w[k] = p[k].z, idx[k] = p[k].index;
    const int ax[3] = {detail::tet_axis(trial % 6, 0), detail::tet_axis(trial % 6, 1), detail::tet_axis(trial % 6, 2)};
    const uint8_t want = testref::ref64_tet_signature(idx, ax, u, v, w);
    inside += want != 0;
    ASSERT_EQ(detail::tet_signature(idx, ax, u, v, w), want) << "trial " << trial;
    ASSERT_EQ(detail::tet_type(u, v, w, ax), testref::ref64_tet_type(u, v, w, ax)) << "trial " << trial;
  }
  EXPECT_GT(inside, 100);
}

TEST(Tet64Predicates, TypesOfLinearFieldsWithHugeAndTinyScales) {
  // Linear fields J x + b at the four vertices of tetrahedra, J of every type, scaled by
  // powers of two from the subnormals to near DBL_MAX: the type is scale invariant.
  Values64 val(66);
  const int axes[3] = {0, 1, 2};
  const int corner[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  for (int trial = 0; trial < 3000; ++trial) {
    double J[3][3];
    for (auto& row : J)
      for (double& x : row) x = double(int(val.bits() % 9) - 4);
    double u[4], v[4], w[4];
    for (int k = 0; k < 4; ++k) {
      double* out[3] = {u, v, w};
      for (int c = 0; c < 3; ++c)
        out[c][k] = J[c][0] * corner[k][0] + J[c][1] * corner[k][1] + J[c][2] * corner[k][2] - 1.0;
    }
    const CpType3 t = testref::ref64_tet_type(u, v, w, axes);
    ASSERT_EQ(detail::tet_type(u, v, w, axes), t);
    for (int e : {-1070, -1000, -600, 300, 1000}) {
      double su[4], sv[4], sw[4];
      for (int k = 0; k < 4; ++k) su[k] = std::ldexp(u[k], e), sv[k] = std::ldexp(v[k], e), sw[k] = std::ldexp(w[k], e);
      ASSERT_EQ(detail::tet_type(su, sv, sw, axes), t) << "scale 2^" << e << " trial " << trial;
    }
  }
}

TEST(Tet64Predicates, DoublesThatAreFloatsDecideAsTheFloatKernel) {
  std::mt19937_64 rng(67);
  for (int trial = 0; trial < 20000; ++trial) {
    float f[12];
    for (float& x : f) {
      switch (rng() % 5) {
        case 0: x = float(int(rng() % 5) - 2); break;
        case 1: x = std::ldexp(float(int(rng() % 2001) - 1000), int(rng() % 61) - 30); break;
        case 2: x = std::ldexp(float(int(rng() % 7) - 3), -149 + int(rng() % 4)); break;
        case 3: x = std::ldexp(float(int(rng() % 7) - 3), 100 + int(rng() % 24)); break;
        default: x = 0.0f;
      }
    }
    detail::SosPoint3 a[4];
    SosPoint3D64 b[4];
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) {
      idx[k] = int64_t(k * 3 + int(rng() % 3));
      a[k] = {f[3 * k], f[3 * k + 1], f[3 * k + 2], idx[k]};
      b[k] = {f[3 * k], f[3 * k + 1], f[3 * k + 2], idx[k]};
    }
    ASSERT_EQ(detail::orient3_plain(b), detail::orient3_plain(a));
    ASSERT_EQ(detail::orient3_sos(b[0], b[1], b[2], b[3]), detail::orient3_sos(a[0], a[1], a[2], a[3]));
    float uf[4], vf[4], wf[4];
    double ud[4], vd[4], wd[4];
    for (int k = 0; k < 4; ++k) uf[k] = ud[k] = f[3 * k], vf[k] = vd[k] = f[3 * k + 1], wf[k] = wd[k] = f[3 * k + 2];
    const int axes[3] = {int(trial % 3), int((trial % 3 + 1) % 3), int((trial % 3 + 2) % 3)};
    ASSERT_EQ(detail::tet_signature(idx, axes, ud, vd, wd), detail::tet_signature(idx, axes, uf, vf, wf));
  }
}

TEST(Tet64Predicates, OneUlpDecidesTheOrientation) {
  // Four points on a plane through values near 1e12, then one coordinate moved by one ulp:
  // the plain sign follows the move, and the filter cannot decide it in double.
  const double a = 1e12;
  const double up = std::nextafter(a, DBL_MAX), down = std::nextafter(a, 0.0);
  SosPoint3D64 p[4] = {{a, a, a, 0}, {up, a, a, 1}, {a, up, a, 2}, {a, a, a, 3}};
  EXPECT_EQ(detail::orient3_plain(p), 0);
  p[3].z = up;
  std::vector<RefPointN64> q;
  for (const auto& x : p) q.push_back(ref_of(x));
  EXPECT_EQ(detail::orient3_plain(p), testref::ref64_orient_plain_nd(q));
  EXPECT_NE(detail::orient3_plain(p), 0);
  p[3].z = down;
  q[3] = ref_of(p[3]);
  EXPECT_EQ(detail::orient3_plain(p), testref::ref64_orient_plain_nd(q));
  EXPECT_NE(detail::orient3_plain(p), 0);
}

TEST(Tet64Predicates, ExtremeMagnitudesInOneTetrahedron) {
  // DBL_MAX beside the smallest subnormal: differences overflow in double, products
  // underflow; only the exact stage decides.
  const double big = DBL_MAX, tiny = std::ldexp(1.0, -1074);
  const double vals[] = {big, -big, tiny, -tiny, 0.0, 1.0, -1.0};
  std::mt19937_64 rng(68);
  for (int trial = 0; trial < 3000; ++trial) {
    SosPoint3D64 p[4];
    for (int k = 0; k < 4; ++k)
      p[k] = {vals[rng() % 7], vals[rng() % 7], vals[rng() % 7], int64_t(k)};
    if (trial % 4 == 0) p[rng() % 4] = {0.0, 0.0, 0.0, -1};
    std::vector<RefPointN64> q;
    for (const auto& x : p) q.push_back(ref_of(x));
    ASSERT_EQ(detail::orient3_plain(p), testref::ref64_orient_plain_nd(q)) << trial;
    ASSERT_EQ(detail::orient3_sos(p[0], p[1], p[2], p[3]), testref::ref64_orient_sos_nd(q)) << trial;
    if (trial % 4 == 0) continue;
    double u[4], v[4], w[4];
    int64_t idx[4];
    for (int k = 0; k < 4; ++k) u[k] = p[k].x, v[k] = p[k].y, w[k] = p[k].z, idx[k] = p[k].index;
    const int axes[3] = {2, 0, 1};
    ASSERT_EQ(detail::tet_signature(idx, axes, u, v, w), testref::ref64_tet_signature(idx, axes, u, v, w)) << trial;
  }
}

}  // namespace
}  // namespace factz
