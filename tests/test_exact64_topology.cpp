// Critical points of float64 fields through the public API (signatures, critical_points,
// compare, masks): the independent reference agrees, float-valued fields get exactly the
// float32 answers, and fields whose critical points exist only in double (differences below
// float precision, magnitudes outside float's range) keep them, so any float32 shortcut on
// the double path fails here.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "factz/topology.hpp"
#include "support/exact_reference64.hpp"
#include "support/precision.hpp"
#include "support/fields.hpp"

namespace {

using factz::VectorField2D;
using factz::VectorField2D64;
namespace r = factz::testref;

using factz::testing::to_double;
using factz::testing::to_float;

std::vector<uint8_t> sig(const VectorField2D64& f, int threads = 0) {
  auto s = factz::signatures(f, factz::Exec{threads});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s.value() : std::vector<uint8_t>{};
}

std::vector<uint8_t> reference(const VectorField2D64& f) {
  return r::ref64_signatures(f.nx, f.ny, f.u.data(), f.v.data(), factz::missing_mask(f));
}

int64_t count_nonzero(const std::vector<uint8_t>& s) {
  int64_t n = 0;
  for (uint8_t x : s) n += x != 0;
  return n;
}

int64_t count_differences(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int64_t n = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) n += a[k] != b[k];
  return n;
}

// Uniform noise p, q in [-1, 1] (many critical points), mapped by the invertible
// (p, q) -> (p + eps q, p - eps q): u and v agree to float precision everywhere, so as floats
// every vector lies on the diagonal and the critical points are gone; as doubles they are
// those of (p, q), up to rounding.
VectorField2D64 below_float_field(int64_t nx, int64_t ny, uint64_t seed, double eps = 0x1p-40) {
  std::mt19937_64 rng(seed);
  // A 53-bit integer over 2^52, minus 1: uniform in [-1, 1), the same on every platform.
  const auto unit = [&rng]() { return double(rng() >> 11) * 0x1p-52 - 1.0; };
  VectorField2D64 f{nx, ny, {}, {}};
  for (int64_t k = 0; k < nx * ny; ++k) {
    const double p = unit(), q = unit();
    f.u.push_back(p + eps * q);
    f.v.push_back(p - eps * q);
  }
  return f;
}

// Values k 2^-30 with |k| < 2^30, zeros and repeats: scaling by 2^e for e in [-1044, 993]
// is exact, so the signatures must not move.
VectorField2D64 dyadic_field(int64_t nx, int64_t ny, uint64_t seed) {
  std::mt19937_64 rng(seed);
  VectorField2D64 f{nx, ny, {}, {}};
  const auto value = [&rng]() {
    const uint64_t c = rng() % 8;
    if (c == 0) return 0.0;
    if (c == 1) return double(int64_t(rng() % 7) - 3) * 0x1p-30;
    return std::ldexp(double(int64_t(rng() % (uint64_t(1) << 31)) - (int64_t(1) << 30)), -30);
  };
  for (int64_t k = 0; k < nx * ny; ++k) {
    f.u.push_back(value());
    f.v.push_back(value());
  }
  return f;
}

VectorField2D64 scaled(VectorField2D64 f, int eu, int ev) {
  for (double& x : f.u) x = std::ldexp(x, eu);
  for (double& x : f.v) x = std::ldexp(x, ev);
  return f;
}

TEST(Float64Topology, FloatValuedFieldsGetTheFloatSignaturesAndCriticalPoints) {
  std::vector<factz::testing::NamedField> fields = factz::testing::synthetic_fields();
  for (auto& nf : factz::testing::degenerate_fields()) fields.push_back(std::move(nf));
  for (auto& nf : factz::testing::real_vector_fields()) fields.push_back(std::move(nf));
  ASSERT_FALSE(fields.empty());
  for (const auto& nf : fields) {
    const auto want = factz::critical_points(nf.field, factz::Exec{1});
    const auto got = factz::critical_points(to_double(nf.field), factz::Exec{1});
    ASSERT_EQ(want.ok(), got.ok()) << nf.name;
    if (!want.ok()) continue;
    EXPECT_EQ(factz::signatures(to_double(nf.field)).value(), factz::signatures(nf.field).value()) << nf.name;
    ASSERT_EQ(got->size(), want->size()) << nf.name;
    for (size_t k = 0; k < want->size(); ++k) {
      EXPECT_EQ(got.value()[k].triangle, want.value()[k].triangle) << nf.name;
      EXPECT_EQ(got.value()[k].type, want.value()[k].type) << nf.name;
    }
  }
}

TEST(Float64Topology, CriticalPointsThatExistOnlyInDoubleAreFound) {
  const VectorField2D64 f = below_float_field(48, 40, 11);
  const std::vector<uint8_t> s = sig(f);
  EXPECT_EQ(s, reference(f));
  const int64_t cps = count_nonzero(s);
  EXPECT_GT(cps, 200) << "the noise has many critical points in double";
  // The same values rounded to float: every vector on the diagonal, no critical point left.
  const auto as_float = factz::signatures(to_float(f));
  ASSERT_TRUE(as_float.ok());
  EXPECT_LT(count_nonzero(as_float.value()), cps / 10);
  EXPECT_GT(count_differences(s, as_float.value()), cps * 9 / 10);
  const auto list = factz::critical_points(f);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(int64_t(list->size()), cps);
  for (const auto& cp : list.value()) {
    EXPECT_EQ(s[size_t(cp.triangle)], uint8_t(1 + int(cp.type)));
    for (double m : cp.mu) EXPECT_TRUE(std::isfinite(m));
  }
}

TEST(Float64Topology, DifferencesOfOneUlpOfDoubleDecide) {
  // eps = 2^-52: u and v differ in the last bit of 1.0 only.
  const VectorField2D64 f = below_float_field(24, 20, 12, 0x1p-52);
  const std::vector<uint8_t> s = sig(f);
  EXPECT_EQ(s, reference(f));
  EXPECT_GT(count_nonzero(s), 20);
}

TEST(Float64Topology, SignaturesDoNotMoveWhenScaledAcrossTheWholeRange) {
  const VectorField2D64 base = dyadic_field(37, 29, 21);
  const std::vector<uint8_t> s0 = sig(base);
  EXPECT_EQ(s0, reference(base));
  EXPECT_GT(count_nonzero(s0), 50);
  for (int e : {-1044, -1000, -600, -200, 200, 600, 993}) {
    const VectorField2D64 f = scaled(base, e, e);
    ASSERT_EQ(scaled(f, -e, -e).u, base.u) << "scaling by 2^" << e << " is exact";
    ASSERT_EQ(scaled(f, -e, -e).v, base.v);
    EXPECT_EQ(sig(f), s0) << "scaled by 2^" << e;
  }
}

TEST(Float64Topology, HugeBesideTinyComponentsKeepEveryZero) {
  // u near 1e300, v near 1e-300: out of float's range both ways (as floats: inf and 0).
  // Scaling each component by its own positive factor moves no zero (orientations scale by
  // a positive factor, SoS compares scaled coordinates), so the inside pattern is the base's;
  // the types follow the scaled Jacobian, checked against the reference.
  const VectorField2D64 base = dyadic_field(31, 23, 31);
  const VectorField2D64 f = scaled(base, 1020, -1044);
  const std::vector<uint8_t> s0 = sig(base), s = sig(f);
  ASSERT_EQ(s.size(), s0.size());
  for (size_t k = 0; k < s.size(); ++k) EXPECT_EQ(s[k] != 0, s0[k] != 0) << "triangle " << k;
  EXPECT_EQ(s, reference(f));
  EXPECT_GT(count_nonzero(s), 30);
  EXPECT_FALSE(factz::validate_field(to_float(f)).ok()) << "as float, u overflows";
  const auto list = factz::critical_points(f);
  ASSERT_TRUE(list.ok());
  for (const auto& cp : list.value())
    for (double m : cp.mu) EXPECT_TRUE(std::isfinite(m));
}

TEST(Float64Topology, ThreadCountDoesNotChangeTheOutput) {
  const VectorField2D64 f = below_float_field(203, 157, 41);
  const auto one = factz::critical_points(f, factz::Exec{1});
  ASSERT_TRUE(one.ok());
  EXPECT_GT(one->size(), 1000u);
  for (int threads : {2, 3, 8, 0}) {
    const auto other = factz::critical_points(f, factz::Exec{threads});
    ASSERT_TRUE(other.ok());
    ASSERT_EQ(other->size(), one->size()) << threads << " threads";
    for (size_t k = 0; k < one->size(); ++k) {
      EXPECT_EQ(other.value()[k].triangle, one.value()[k].triangle);
      EXPECT_EQ(other.value()[k].type, one.value()[k].type);
      EXPECT_EQ(other.value()[k].mu, one.value()[k].mu);
    }
    EXPECT_EQ(sig(f, threads), sig(f, 1));
  }
}

TEST(Float64Topology, MissingVerticesLeaveTheMesh) {
  VectorField2D64 f = below_float_field(30, 26, 51);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  f.mask.assign(size_t(f.size()), 0);
  for (int64_t k = 0; k < f.size(); k += 17) f.mask[size_t(k)] = 1;
  for (int64_t k = 5; k < f.size(); k += 23) f.v[size_t(k)] = nan;
  f.u[3] = INFINITY;  // an infinite value at a masked vertex is no error
  f.mask[3] = 1;
  const std::vector<uint8_t> missing = factz::missing_mask(f);
  ASSERT_EQ(missing.size(), size_t(f.size()));
  for (int64_t k = 0; k < f.size(); ++k)
    EXPECT_EQ(missing[size_t(k)] != 0, k % 17 == 0 || k % 23 == 5 || k == 3) << k;
  const std::vector<uint8_t> s = sig(f);
  EXPECT_EQ(s, reference(f));
  EXPECT_GT(count_nonzero(s), 30);
  // Float-valued with the same missing vertices: the float answer exactly.
  VectorField2D g = to_float(f);
  g.u[3] = 0.0f;
  EXPECT_EQ(sig(to_double(g)), factz::signatures(g).value());
  // Rejected: an infinite value at a valid vertex.
  f.u[4] = -INFINITY;
  EXPECT_FALSE(factz::signatures(f).ok());
  EXPECT_FALSE(factz::validate_field(f).ok());
  // Declared fill values (netCDF's NC_FILL_DOUBLE) are compared as doubles.
  VectorField2D64 h = below_float_field(8, 6, 52);
  h.u[7] = 9.9692099683868690e+36;
  h.v[9] = 9.9692099683868690e+36;
  h.u[11] = std::nextafter(9.9692099683868690e+36, 0.0);  // one double ulp away: valid
  EXPECT_EQ(factz::mark_missing(h, factz::FillValues64{9.9692099683868690e+36, 9.9692099683868690e+36}), 2);
  EXPECT_EQ(h.mask[7], 1);
  EXPECT_EQ(h.mask[9], 1);
  EXPECT_EQ(h.mask[11], 0);
}

TEST(Float64Compare, ViolationsAndErrorsAreCountedInDouble) {
  const VectorField2D64 a = below_float_field(40, 32, 61);
  VectorField2D64 b = a;
  // Moves below float precision: float copies of a and b would be equal.
  for (int64_t k = 0; k < b.size(); k += 3) b.u[size_t(k)] += 0x1p-38;
  for (int64_t k = 1; k < b.size(); k += 5) b.v[size_t(k)] -= 0x1p-39;
  const auto c = factz::compare(a, b);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::vector<uint8_t> x = sig(a), y = sig(b);
  int64_t lost = 0, spurious = 0, changed = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    lost += x[t] != 0 && y[t] == 0;
    spurious += x[t] == 0 && y[t] != 0;
    changed += x[t] != 0 && y[t] != 0 && x[t] != y[t];
  }
  EXPECT_EQ(c->lost, lost);
  EXPECT_EQ(c->spurious, spurious);
  EXPECT_EQ(c->type_changed, changed);
  EXPECT_GT(c->violations(), 0) << "moves of 2^-38 change critical points of this field";
  EXPECT_EQ(c->cp_original, count_nonzero(x));
  EXPECT_NEAR(c->max_abs_error[0], 0x1p-38, 0x1p-50);
  EXPECT_NEAR(c->max_abs_error[1], 0x1p-39, 0x1p-50);
  EXPECT_GT(c->rmse, 0.0);

  const auto same = factz::compare(a, a);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->violations(), 0);
  EXPECT_EQ(same->max_abs_error[0], 0.0);
  EXPECT_EQ(same->cp_original, count_nonzero(x));

  VectorField2D64 m = a;
  m.mask.assign(size_t(m.size()), 0);
  m.mask[10] = 1;
  const auto mm = factz::compare(a, m);
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm->mask_mismatch, 1);

  VectorField2D64 other = a;
  other.nx = 32;
  other.ny = 40;
  EXPECT_FALSE(factz::compare(a, other).ok());
}

}  // namespace
