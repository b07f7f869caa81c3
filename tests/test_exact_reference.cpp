// The fast exact kernels (src/kernels/exact.hpp, orient.hpp, signature.hpp) agree with
// the independent big-integer reference (tests/support/exact_reference.*) on millions of
// adversarial inputs: every sign, every inside test, every type, every signature.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/exact.hpp"
#include "kernels/orient.hpp"
#include "kernels/signature.hpp"
#include "support/exact_reference.hpp"

namespace {

using factz::CpType;
using factz::detail::SosPoint;
using factz::testref::RefPoint;

// ---------------------------------------------------------------------------------------
// Random inputs

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t bits() { return rng_(); }
  int uniform(int lo, int hi) { return lo + int(rng_() % uint64_t(int64_t(hi) - lo + 1)); }
  bool coin(int one_in) { return rng_() % uint64_t(one_in) == 0; }
  float sign() { return coin(2) ? -1.0f : 1.0f; }

  /// A float from one of many magnitude classes, all finite.
  float wild() {
    switch (uniform(0, 10)) {
      case 0: {  // any finite bit pattern
        uint32_t b;
        do b = uint32_t(bits()); while (((b >> 23) & 0xffu) == 0xffu);
        return std::bit_cast<float>(b);
      }
      case 1:  // subnormal (or zero), down to the smallest one
        return std::bit_cast<float>((uint32_t(bits()) & 0x80000000u) |
                                    (uint32_t(bits()) >> uniform(9, 31)));
      case 2:
        return sign() * 0.0f;
      case 3: {  // at or just below FLT_MAX
        float f = FLT_MAX;
        for (int k = uniform(0, 3); k > 0; --k) f = std::nextafter(f, 0.0f);
        return sign() * f;
      }
      case 4:  // around 1e19 (and sometimes up to 1e38)
        return sign() * (coin(2) ? 1e19f : 3e38f) * (1.0f + float(uniform(-64, 8)) / 64.0f);
      case 5:
        return float(uniform(-3, 3));
      case 6: {  // near the smallest normal
        float f = FLT_MIN * float(uniform(1, 4));
        for (int k = uniform(-2, 2); k != 0; k += (k < 0 ? 1 : -1)) {
          f = std::nextafter(f, k < 0 ? 0.0f : FLT_MAX);
        }
        return sign() * f;
      }
      case 7: {  // random mantissa, exponent uniform over all normal exponents
        const uint32_t e = uint32_t(uniform(1, 254));
        return std::bit_cast<float>((uint32_t(bits()) & 0x807fffffu) | (e << 23));
      }
      case 8:
        return sign() * std::ldexp(1.0f, uniform(-149, 127));
      case 9: {  // 1 +- a few ulps: many nearly equal values
        float f = 1.0f;
        for (int k = uniform(-3, 3); k != 0; k += (k < 0 ? 1 : -1)) {
          f = std::nextafter(f, k < 0 ? 0.0f : 2.0f);
        }
        return sign() * f;
      }
      default:  // moderate values with a random mantissa
        return sign() * std::ldexp(float(bits() % (1u << 24)), uniform(-40, 0));
    }
  }

  int64_t index_in(int64_t n) { return int64_t(bits() % uint64_t(n)); }

 private:
  std::mt19937_64 rng_;
};

struct Tri {
  float u[3];
  float v[3];
  int64_t idx[3];
  int t;
};

std::string hex_float(float f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", double(f));
  return buf;
}

std::string describe(const Tri& tr) {
  std::ostringstream os;
  os << "t=" << tr.t;
  for (int k = 0; k < 3; ++k) {
    os << " p" << k << "=(" << hex_float(tr.u[k]) << ", " << hex_float(tr.v[k]) << ")#"
       << tr.idx[k];
  }
  return os.str();
}

// Three distinct global indices: tiny range, huge range, or a real grid triangle.
void random_indices(Gen& g, Tri& tr) {
  switch (g.uniform(0, 2)) {
    case 0: {
      const int64_t range = g.uniform(3, 6);
      do {
        for (int64_t& i : tr.idx) i = g.index_in(range);
      } while (tr.idx[0] == tr.idx[1] || tr.idx[0] == tr.idx[2] || tr.idx[1] == tr.idx[2]);
      break;
    }
    case 1:
      do {
        for (int64_t& i : tr.idx) i = g.index_in(int64_t(1) << 40);
      } while (tr.idx[0] == tr.idx[1] || tr.idx[0] == tr.idx[2] || tr.idx[1] == tr.idx[2]);
      break;
    default: {  // contract order of a grid triangle: idx0 < idx1 < idx2
      const int64_t nx = g.uniform(2, 5000);
      const int64_t v00 = g.index_in(int64_t(1) << 30);
      tr.idx[0] = v00;
      tr.idx[1] = tr.t == 0 ? v00 + nx : v00 + 1;
      tr.idx[2] = v00 + nx + 1;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Triangle families

enum class Family { wild, small_int, coarse_grid, collinear, near_degenerate, repeated };

void fill_wild(Gen& g, Tri& tr) {
  float* c[6] = {&tr.u[0], &tr.v[0], &tr.u[1], &tr.v[1], &tr.u[2], &tr.v[2]};
  for (int k = 0; k < 6; ++k) {
    if (k > 0 && g.coin(4)) {  // reuse an earlier coordinate, maybe negated
      *c[k] = *c[g.uniform(0, k - 1)] * g.sign();
    } else {
      *c[k] = g.wild();
    }
  }
}

void fill_small_int(Gen& g, Tri& tr) {
  for (int k = 0; k < 3; ++k) {
    tr.u[k] = float(g.uniform(-3, 3));
    tr.v[k] = float(g.uniform(-3, 3));
  }
}

// k * 2^e with |k| <= 4: exact everywhere from the subnormals to near FLT_MAX.
void fill_coarse_grid(Gen& g, Tri& tr) {
  const int eu = g.uniform(-149, 125);
  const int ev = g.coin(2) ? eu : g.uniform(-149, 125);
  for (int k = 0; k < 3; ++k) {
    tr.u[k] = std::ldexp(float(g.uniform(-4, 4)), eu);
    tr.v[k] = std::ldexp(float(g.uniform(-4, 4)), ev);
  }
}

// Points on one line (often through the origin), exact: base + m * dir, scaled by 2^e.
void fill_collinear(Gen& g, Tri& tr) {
  if (g.coin(3)) {  // wild points p, 2p, -p / p/2 style: collinear with the origin
    const float x = g.wild(), y = g.wild();
    const float m[3] = {1.0f, g.coin(2) ? 2.0f : 0.5f, g.coin(2) ? -1.0f : -0.25f};
    for (int k = 0; k < 3; ++k) {
      tr.u[k] = x * m[k];
      tr.v[k] = y * m[k];
      if (!std::isfinite(tr.u[k]) || !std::isfinite(tr.v[k])) {  // 2 * FLT_MAX
        tr.u[k] = -x;
        tr.v[k] = -y;
      }
    }
  } else {
    const bool through_origin = g.coin(2);
    const int bx = through_origin ? 0 : g.uniform(-3, 3);
    const int by = through_origin ? 0 : g.uniform(-3, 3);
    const int dx = g.uniform(-3, 3), dy = g.uniform(-3, 3);
    const int e = g.coin(2) ? 0 : g.uniform(-140, 100);
    for (int k = 0; k < 3; ++k) {
      const int m = g.uniform(-3, 3);
      tr.u[k] = std::ldexp(float(bx + m * dx), e);
      tr.v[k] = std::ldexp(float(by + m * dy), e);
    }
  }
  if (g.coin(4)) {  // swap the roles of u and v
    for (int k = 0; k < 3; ++k) std::swap(tr.u[k], tr.v[k]);
  }
}

// Nearly collinear with large magnitudes: exact D is tiny next to its six products, so
// the floating-point filter fails and the expansion path decides.
void fill_near_degenerate(Gen& g, Tri& tr) {
  const int e = g.uniform(-100, 100);
  const float x = std::ldexp(float(g.bits() % (1u << 24)) + 1.0f, e) * g.sign();
  const float y = std::ldexp(float(g.bits() % (1u << 24)) + 1.0f, e) * g.sign();
  for (int k = 0; k < 3; ++k) {
    const float c = 1.0f + float(g.uniform(-1000, 1000)) / 1024.0f + g.wild() * 1e-7f;
    tr.u[k] = x * c;
    tr.v[k] = y * c;
    if (g.coin(3)) tr.u[k] = std::nextafter(tr.u[k], g.coin(2) ? FLT_MAX : -FLT_MAX);
    if (g.coin(3)) tr.v[k] = std::nextafter(tr.v[k], g.coin(2) ? FLT_MAX : -FLT_MAX);
    if (!std::isfinite(tr.u[k]) || !std::isfinite(tr.v[k])) {
      tr.u[k] = x;
      tr.v[k] = y;
    }
  }
  if (g.coin(4)) {  // shift off the origin: nearly collinear, not through the origin
    const float sx = x * float(g.uniform(-2, 2)), sy = y * float(g.uniform(-2, 2));
    for (int k = 0; k < 3; ++k) {
      if (std::isfinite(tr.u[k] + sx)) tr.u[k] += sx;
      if (std::isfinite(tr.v[k] + sy)) tr.v[k] += sy;
    }
  }
}

// Every coordinate from a pool of three values (+-), plus zero: ties everywhere.
void fill_repeated(Gen& g, Tri& tr) {
  const float pool[4] = {g.wild(), g.wild(), g.wild(), 0.0f};
  for (int k = 0; k < 3; ++k) {
    tr.u[k] = pool[g.uniform(0, 3)] * g.sign();
    tr.v[k] = pool[g.uniform(0, 3)] * g.sign();
  }
}

Tri make_triangle(Gen& g, Family family) {
  Tri tr{};
  tr.t = g.uniform(0, 1);
  switch (family) {
    case Family::wild: fill_wild(g, tr); break;
    case Family::small_int: fill_small_int(g, tr); break;
    case Family::coarse_grid: fill_coarse_grid(g, tr); break;
    case Family::collinear: fill_collinear(g, tr); break;
    case Family::near_degenerate: fill_near_degenerate(g, tr); break;
    case Family::repeated: fill_repeated(g, tr); break;
  }
  random_indices(g, tr);
  return tr;
}

// ---------------------------------------------------------------------------------------
// Agreement of one triangle

struct Tally {
  int64_t triangles = 0;
  int64_t inside = 0;
  int64_t plain_zero = 0;  // triangles whose unperturbed D is 0 (SoS decides)
  int64_t naive_wrong = 0; // triangles where plain double arithmetic gets sign(D) wrong
  int64_t failures = 0;
  std::string first_failures;

  void fail(const std::string& what, const Tri& tr) {
    if (++failures <= 5) first_failures += what + ": " + describe(tr) + "\n";
  }
};

SosPoint sos(const Tri& tr, int k) { return {tr.u[k], tr.v[k], tr.idx[k]}; }
RefPoint ref(const Tri& tr, int k) { return {tr.u[k], tr.v[k], tr.idx[k]}; }

void check_triangle(const Tri& tr, Gen& g, Tally& tally) {
  namespace d = factz::detail;
  namespace r = factz::testref;
  ++tally.triangles;
  const SosPoint p[3] = {sos(tr, 0), sos(tr, 1), sos(tr, 2)};
  const RefPoint q[3] = {ref(tr, 0), ref(tr, 1), ref(tr, 2)};
  const SosPoint o{0.0f, 0.0f, -1};
  const RefPoint qo{0.0f, 0.0f, -1};

  const int plain = r::ref_orient_plain(q[0], q[1], q[2]);
  if (plain == 0) ++tally.plain_zero;
  {
    // How often rounding alone would decide wrongly: proves the exact path is exercised.
    const double x0 = tr.u[0], y0 = tr.v[0], x1 = tr.u[1], y1 = tr.v[1], x2 = tr.u[2],
                 y2 = tr.v[2];
    const double naive = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if ((naive > 0) - (naive < 0) != plain) ++tally.naive_wrong;
  }
  if (d::orient_exact(p[0].x, p[0].y, p[1].x, p[1].y, p[2].x, p[2].y) != plain) {
    tally.fail("orient_exact", tr);
  }
  // The orientation of the triangle and of the three triples with the origin, each in
  // the contract's order and in one random permutation.
  const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int replaced = -1; replaced < 3; ++replaced) {
    SosPoint a[3] = {p[0], p[1], p[2]};
    RefPoint b[3] = {q[0], q[1], q[2]};
    if (replaced >= 0) {
      a[replaced] = o;
      b[replaced] = qo;
    }
    if (d::orient_sos(a[0], a[1], a[2]) != r::ref_orient_sos(b[0], b[1], b[2])) {
      tally.fail("orient_sos replaced=" + std::to_string(replaced), tr);
    }
    const int* pm = perm[g.uniform(0, 5)];
    if (d::orient_sos(a[pm[0]], a[pm[1]], a[pm[2]]) !=
        r::ref_orient_sos(b[pm[0]], b[pm[1]], b[pm[2]])) {
      tally.fail("orient_sos permuted replaced=" + std::to_string(replaced), tr);
    }
  }
  const bool inside = r::ref_contains_origin(q[0], q[1], q[2]);
  if (inside) ++tally.inside;
  // A consequence of the contract (derived in test_topology.cpp): when the three
  // vectors are collinear (D = 0), the origin, perturbed more than any vertex, is never
  // inside. Checked on the reference here, on the kernels by the comparison below.
  if (inside && plain == 0) tally.fail("reference: inside although D = 0", tr);
  if (d::contains_origin(p[0], p[1], p[2]) != inside) tally.fail("contains_origin", tr);

  const CpType type = r::ref_type(tr.t, tr.u, tr.v);
  if (d::triangle_type(tr.t, tr.u, tr.v) != type) tally.fail("triangle_type", tr);

  const uint8_t sig = r::ref_signature(tr.t, tr.idx, tr.u, tr.v);
  if (sig != (inside ? uint8_t(1 + int(type)) : uint8_t(0))) tally.fail("ref_signature", tr);
  if (d::triangle_signature(tr.t, tr.idx, tr.u, tr.v) != sig) {
    tally.fail("triangle_signature", tr);
  }
}

void run_family(Family family, uint64_t seed, int64_t count, int64_t min_plain_zero,
                int64_t min_inside, int64_t min_naive_wrong = 0) {
  Gen g(seed);
  Tally tally;
  for (int64_t n = 0; n < count; ++n) check_triangle(make_triangle(g, family), g, tally);
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_EQ(tally.triangles, count);
  // The generator really produces what the test claims to cover.
  EXPECT_GE(tally.plain_zero, min_plain_zero) << "degenerate (D = 0) triangles";
  EXPECT_GE(tally.inside, min_inside) << "triangles holding a critical point";
  EXPECT_GE(tally.naive_wrong, min_naive_wrong) << "triangles where rounding misleads";
  std::printf("  %lld triangles, %lld with D = 0, %lld inside, %lld misjudged by doubles\n",
              static_cast<long long>(tally.triangles),
              static_cast<long long>(tally.plain_zero), static_cast<long long>(tally.inside),
              static_cast<long long>(tally.naive_wrong));
}

// ---------------------------------------------------------------------------------------
// Tests: triangles (2.1 million in total)

TEST(ExactReference, AgreesOnWildMagnitudes) {
  run_family(Family::wild, 0x5eed0001, 500000, 10000, 20000);
}

TEST(ExactReference, AgreesOnSmallIntegersFullOfTies) {
  run_family(Family::small_int, 0x5eed0002, 400000, 30000, 20000);
}

TEST(ExactReference, AgreesOnCoarseGridValues) {
  run_family(Family::coarse_grid, 0x5eed0003, 350000, 20000, 10000);
}

TEST(ExactReference, AgreesOnCollinearConfigurations) {
  run_family(Family::collinear, 0x5eed0004, 350000, 250000, 0);
}

TEST(ExactReference, AgreesOnNearlyCollinearHugeValues) {
  run_family(Family::near_degenerate, 0x5eed0005, 250000, 100, 1000, 1000);
}

TEST(ExactReference, AgreesOnRepeatedValues) {
  run_family(Family::repeated, 0x5eed0006, 250000, 30000, 5000);
}

// Exhaustive: every triangle with coordinates in {-1, 0, 1} (3^6 value sets), both
// kinds, and every ordering of three indices. Small, but it visits every tie pattern.
TEST(ExactReference, AgreesExhaustivelyOnUnitValues) {
  Gen g(0x5eed0007);
  Tally tally;
  const int64_t orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int code = 0; code < 729; ++code) {
    Tri tr{};
    int c = code;
    for (int k = 0; k < 3; ++k) {
      tr.u[k] = float(c % 3 - 1);
      c /= 3;
      tr.v[k] = float(c % 3 - 1);
      c /= 3;
    }
    for (int t = 0; t < 2; ++t) {
      for (const auto& ord : orders) {
        tr.t = t;
        for (int k = 0; k < 3; ++k) tr.idx[k] = 10 + 7 * ord[k];
        check_triangle(tr, g, tally);
      }
    }
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_EQ(tally.triangles, 729 * 12);
}

// ---------------------------------------------------------------------------------------
// exact_sign_of_sum against the big-integer sum

struct SumTally {
  int64_t cases = 0;
  int64_t failures = 0;
  int64_t zero = 0;
  std::string first_failures;

  void check(const std::vector<double>& t) {
    ++cases;
    const int expected = factz::testref::ref_sign_of_sum(t.data(), int(t.size()));
    if (expected == 0) ++zero;
    const int got = factz::detail::exact_sign_of_sum(t.data(), int(t.size()));
    if (got != expected && ++failures <= 5) {
      std::ostringstream os;
      os << "expected " << expected << " got " << got << " for {";
      for (double x : t) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%a, ", x);
        os << buf;
      }
      first_failures += os.str() + "}\n";
    }
  }
};

double random_double(Gen& g, int min_exp, int max_exp) {
  const double m = 1.0 + double(g.bits() >> 12) * 0x1p-52;
  return (g.coin(2) ? -1.0 : 1.0) * std::ldexp(m, g.uniform(min_exp, max_exp));
}

void shuffle(Gen& g, std::vector<double>& t) {
  for (size_t i = t.size(); i > 1; --i) std::swap(t[i - 1], t[size_t(g.index_in(int64_t(i)))]);
}

TEST(ExactSum, BigTermsCancelExactlyLeavingATinyOne) {
  Gen g(0x5eed0101);
  SumTally tally;
  for (int n = 0; n < 100000; ++n) {
    // 1e30 * x - 1e30 * x + tiny: the rounded product cancels exactly.
    const double x = double(g.wild());
    const double big = g.coin(2) ? 1e30 : random_double(g, 0, 200);
    const double tiny = g.coin(5) ? 0.0 : random_double(g, -1074 + 52, -100);
    std::vector<double> t = {big * x, -(big * x), tiny};
    if (!std::isfinite(t[0])) continue;
    if (g.coin(2)) t.push_back(std::numeric_limits<double>::denorm_min() * (g.coin(2) ? 1 : -1));
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_GT(tally.zero, 1000);
}

TEST(ExactSum, SplitTermsThatSumToZeroOrNearlyZero) {
  Gen g(0x5eed0102);
  SumTally tally;
  for (int n = 0; n < 100000; ++n) {
    // x == hi + lo exactly (hi: x rounded to float, lo: the exact remainder); the sum
    // x - hi - lo is 0, then nudged by a term far below every ulp of the others.
    std::vector<double> t;
    const int pieces = g.uniform(1, 6);
    for (int k = 0; k < pieces; ++k) {
      const double x = random_double(g, -120, 120);
      const double hi = double(float(x));
      const double lo = x - hi;  // exact (Sterbenz / float rounding of a double)
      t.push_back(x);
      t.push_back(-hi);
      t.push_back(-lo);
    }
    if (!g.coin(3)) t.push_back(random_double(g, -900, -200));
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_GT(tally.zero, 10000);
}

TEST(ExactSum, HugeExponentSpreadAndManyTerms) {
  Gen g(0x5eed0103);
  SumTally tally;
  for (int n = 0; n < 60000; ++n) {
    // Up to kMaxExactTerms terms over exponents 2^-1000 ... 2^900, in cancelling pairs
    // with a few unpaired terms: the expansion must keep every bit.
    const int n_terms = g.uniform(1, factz::detail::kMaxExactTerms);
    std::vector<double> t;
    while (int(t.size()) < n_terms) {
      const double x = random_double(g, -1000, 900);
      t.push_back(x);
      if (int(t.size()) < n_terms && !g.coin(4)) t.push_back(-x);
    }
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_GT(tally.zero, 1000);
}

TEST(ExactSum, SumsNearTheFilterBound) {
  Gen g(0x5eed0104);
  SumTally tally;
  for (int n = 0; n < 100000; ++n) {
    // Terms of similar size whose rounded sum s is then cancelled by -s plus a residue
    // of a few ulps of the terms: the exact value sits near the filter's threshold.
    const int n_terms = g.uniform(2, 20);
    const int e = g.uniform(-60, 60);
    std::vector<double> t;
    double s = 0;
    for (int k = 0; k + 1 < n_terms; ++k) {
      t.push_back(random_double(g, e - 3, e + 3));
      s += t.back();
    }
    t.push_back(-s);
    if (g.coin(2)) t.push_back(std::ldexp(double(g.uniform(-64, 64)), e - 52 - g.uniform(0, 8)));
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
}

TEST(ExactSum, ProductsOfFloatsAsTheKernelsUseThem) {
  Gen g(0x5eed0105);
  SumTally tally;
  for (int n = 0; n < 100000; ++n) {
    // a*b - c*d with c*d within a few ulps of a*b; also the 8- and 20-term shapes of
    // det and disc built from nearly equal floats.
    const float a = g.wild(), b = g.wild();
    float c = a, d2 = b;
    const float towards = g.coin(2) ? FLT_MAX : -FLT_MAX;
    for (int k = g.uniform(0, 3); k > 0; --k) c = std::nextafter(c, towards);
    for (int k = g.uniform(0, 3); k > 0; --k) d2 = std::nextafter(d2, -towards);
    if (!std::isfinite(c) || !std::isfinite(d2)) continue;
    std::vector<double> t = {double(a) * double(b), -(double(c) * double(d2))};
    if (g.coin(2)) {
      t.push_back(double(d2) * double(a));
      t.push_back(-(double(b) * double(c)));
      t.push_back(double(g.wild()) * double(g.wild()));
    }
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
}

TEST(ExactSum, OrderOfTermsDoesNotMatter) {
  Gen g(0x5eed0106);
  int64_t disagreements = 0;
  for (int n = 0; n < 20000; ++n) {
    std::vector<double> t;
    const int n_terms = g.uniform(2, 12);
    for (int k = 0; k < n_terms; ++k) t.push_back(random_double(g, -80, 80));
    const double x = random_double(g, 0, 100);
    t.push_back(x);
    t.push_back(-x);
    const int first = factz::detail::exact_sign_of_sum(t.data(), int(t.size()));
    for (int rep = 0; rep < 4; ++rep) {
      shuffle(g, t);
      if (factz::detail::exact_sign_of_sum(t.data(), int(t.size())) != first) ++disagreements;
    }
  }
  EXPECT_EQ(disagreements, 0);
}

TEST(ExactSum, EdgeCases) {
  const double dmin = std::numeric_limits<double>::denorm_min();
  const double fmax = double(FLT_MAX);
  using V = std::vector<double>;
  const V cases[] = {
      {},
      {0.0},
      {-0.0, 0.0},
      {dmin},
      {-dmin},
      {dmin, -dmin},
      {fmax * fmax, -(fmax * fmax), dmin},
      {1e30 * 3.0, -1e30 * 3.0, 1e-300},
      {1.0, 0x1p-53, -1.0},
      {1.0, -0x1p-53, -1.0, 0x1p-106},
      {0x1p900, 0x1p-1000, -0x1p900, -0x1p-1000, dmin},
      {0x1p900, 1.0, -0x1p900, -1.0, -dmin},
  };
  for (const V& t : cases) {
    EXPECT_EQ(factz::detail::exact_sign_of_sum(t.data(), int(t.size())),
              factz::testref::ref_sign_of_sum(t.data(), int(t.size())))
        << "case of " << t.size() << " terms";
  }
}

// The reference itself: a few signs that are known by construction.
TEST(ReferenceSelfCheck, BigIntegerArithmetic) {
  using factz::testref::FloatInt;
  using factz::testref::float_to_int;
  EXPECT_EQ(float_to_int(0.0f).sign(), 0);
  EXPECT_EQ(float_to_int(-0.0f).sign(), 0);
  EXPECT_TRUE(float_to_int(std::numeric_limits<float>::denorm_min()) == FloatInt::from_int(1));
  EXPECT_TRUE(float_to_int(1.0f) == FloatInt::from_shifted(1, 149, false));
  EXPECT_TRUE(float_to_int(-3.0f) == FloatInt::from_shifted(3, 149, true));
  EXPECT_TRUE(float_to_int(FLT_MAX) == FloatInt::from_shifted((1u << 24) - 1, 253, false));
  const FloatInt big = float_to_int(FLT_MAX);
  EXPECT_EQ((big * big - big * big).sign(), 0);
  EXPECT_EQ((big * big - (big * big - FloatInt::from_int(1))).sign(), 1);
  EXPECT_EQ((FloatInt::from_int(-7) * FloatInt::from_int(6) + FloatInt::from_int(42)).sign(), 0);
  EXPECT_EQ(compare(FloatInt::from_int(-5), FloatInt::from_int(3)), -1);
  EXPECT_THROW(factz::testref::float_to_int(std::numeric_limits<float>::infinity()),
               std::invalid_argument);
  // A product that cannot fit throws rather than wrapping.
  EXPECT_THROW((void)(big * big * big), std::overflow_error);
}

}  // namespace
