// The float64 exact kernels (src/kernels/exact64.hpp, orient64.hpp, signature64.hpp) agree
// with the independent big-integer reference (tests/support/exact_reference64.*) on random
// and adversarial double triangles: the full finite range (subnormals down to the smallest,
// values at DBL_MAX, 1e300 beside 1e-300, -0.0), ties that Simulation of Simplicity settles,
// and values that differ only below float32 precision. On float-valued inputs they make the
// float kernels' decisions, so the two paths can never drift apart.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/exact64.hpp"
#include "kernels/orient64.hpp"
#include "kernels/signature.hpp"
#include "kernels/signature64.hpp"
#include "support/exact_reference64.hpp"

namespace {

using factz::CpType;
using factz::detail::SosPoint64;
using factz::testref::RefPoint64;
namespace d = factz::detail;
namespace r = factz::testref;

// ---------------------------------------------------------------------------------------
// Random doubles

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t bits() { return rng_(); }
  int uniform(int lo, int hi) { return lo + int(rng_() % uint64_t(int64_t(hi) - lo + 1)); }
  bool coin(int one_in) { return rng_() % uint64_t(one_in) == 0; }
  double sign() { return coin(2) ? -1.0 : 1.0; }
  int64_t index_in(int64_t n) { return int64_t(bits() % uint64_t(n)); }

  /// x moved by k ulps (towards +inf for k > 0), staying finite.
  static double ulps(double x, int k) {
    for (; k != 0; k += k < 0 ? 1 : -1) {
      const double y = std::nextafter(x, k < 0 ? -DBL_MAX : DBL_MAX);
      if (!std::isfinite(y)) break;
      x = y;
    }
    return x;
  }

  /// A double from one of many magnitude classes, all finite.
  double wild() {
    switch (uniform(0, 13)) {
      case 0: {  // any finite bit pattern
        uint64_t b;
        do b = bits(); while (((b >> 52) & 0x7ffu) == 0x7ffu);
        return std::bit_cast<double>(b);
      }
      case 1:  // subnormal (or zero), down to the smallest one
        return std::bit_cast<double>((bits() & 0x8000000000000000ull) |
                                     ((bits() & 0xfffffffffffffull) >> uniform(0, 52)));
      case 2: return sign() * 0.0;
      case 3: return sign() * ulps(DBL_MAX, -uniform(0, 3));
      case 4: {  // 1e300, 1e-300, 1e150, 1e-150 with a few nearby mantissas
        const double base[4] = {1e300, 1e-300, 1e150, 1e-150};
        return sign() * base[uniform(0, 3)] * (1.0 + double(uniform(-64, 64)) / 64.0);
      }
      case 5: return double(uniform(-3, 3));
      case 6: return sign() * ulps(DBL_MIN * double(uniform(1, 4)), uniform(-2, 2));
      case 7: {  // random mantissa, exponent uniform over all normal exponents
        const uint64_t e = uint64_t(uniform(1, 2046));
        return std::bit_cast<double>((bits() & 0x800fffffffffffffull) | (e << 52));
      }
      case 8: return sign() * std::ldexp(1.0, uniform(-1074, 1023));
      case 9: return sign() * ulps(1.0, uniform(-3, 3));
      case 10:  // 1 + k 2^-40: equal as floats, different as doubles
        return sign() * (1.0 + std::ldexp(double(uniform(-8, 8)), -40));
      case 11: {  // a float: the float and double paths meet here
        uint32_t b;
        do b = uint32_t(bits()); while (((b >> 23) & 0xffu) == 0xffu);
        return double(std::bit_cast<float>(b));
      }
      case 12: return sign() * DBL_TRUE_MIN * double(uniform(1, 5));
      default: return sign() * std::ldexp(double(bits() >> 11), uniform(-80, 0));
    }
  }

 private:
  std::mt19937_64 rng_;
};

struct Tri {
  double u[3];
  double v[3];
  int64_t idx[3];
  int t;
};

std::string describe(const Tri& tr) {
  std::ostringstream os;
  os << "t=" << tr.t;
  char buf[96];
  for (int k = 0; k < 3; ++k) {
    std::snprintf(buf, sizeof buf, " p%d=(%a, %a)#%lld", k, tr.u[k], tr.v[k], (long long)tr.idx[k]);
    os << buf;
  }
  return os.str();
}

// Three distinct global indices: tiny range, huge range, or a real grid triangle.
void random_indices(Gen& g, Tri& tr) {
  switch (g.uniform(0, 2)) {
    case 0:
    case 1: {
      const int64_t range = g.coin(2) ? g.uniform(3, 6) : int64_t(1) << 40;
      do {
        for (int64_t& i : tr.idx) i = g.index_in(range);
      } while (tr.idx[0] == tr.idx[1] || tr.idx[0] == tr.idx[2] || tr.idx[1] == tr.idx[2]);
      break;
    }
    default: {  // contract order of a grid triangle: idx0 < idx1 < idx2
      const int64_t nx = g.uniform(2, 5000), v00 = g.index_in(int64_t(1) << 30);
      tr.idx[0] = v00;
      tr.idx[1] = tr.t == 0 ? v00 + nx : v00 + 1;
      tr.idx[2] = v00 + nx + 1;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Triangle families

enum class Family { wild, small_int, coarse_grid, collinear, near_degenerate, below_float, mixed, repeated };

void fill_wild(Gen& g, Tri& tr) {
  double* c[6] = {&tr.u[0], &tr.v[0], &tr.u[1], &tr.v[1], &tr.u[2], &tr.v[2]};
  for (int k = 0; k < 6; ++k) *c[k] = k > 0 && g.coin(4) ? *c[g.uniform(0, k - 1)] * g.sign() : g.wild();
}

// k * 2^e with |k| <= 4: exact everywhere from the smallest subnormal to near DBL_MAX.
void fill_coarse_grid(Gen& g, Tri& tr) {
  const int eu = g.uniform(-1074, 1020), ev = g.coin(2) ? eu : g.uniform(-1074, 1020);
  for (int k = 0; k < 3; ++k) {
    tr.u[k] = std::ldexp(double(g.uniform(-4, 4)), eu);
    tr.v[k] = std::ldexp(double(g.uniform(-4, 4)), ev);
  }
}

// Points on one line, exactly: through the origin (p, 2p or p/2, -p or -p/4), or
// base + m * dir scaled by 2^e.
void fill_collinear(Gen& g, Tri& tr) {
  if (g.coin(3)) {
    const double x = g.wild(), y = g.wild();
    const double m[3] = {1.0, g.coin(2) ? 2.0 : 0.5, g.coin(2) ? -1.0 : -0.25};
    for (int k = 0; k < 3; ++k) {
      tr.u[k] = x * m[k];
      tr.v[k] = y * m[k];
      // Overflow (2 DBL_MAX) or a lost bit below the subnormals: back to -p, still collinear.
      if (!std::isfinite(tr.u[k]) || !std::isfinite(tr.v[k]) || tr.u[k] / m[k] != x || tr.v[k] / m[k] != y) {
        tr.u[k] = -x;
        tr.v[k] = -y;
      }
    }
  } else {
    const bool through_origin = g.coin(2);
    const int bx = through_origin ? 0 : g.uniform(-3, 3), by = through_origin ? 0 : g.uniform(-3, 3);
    const int dx = g.uniform(-3, 3), dy = g.uniform(-3, 3);
    const int e = g.coin(2) ? 0 : g.uniform(-1070, 1015);
    for (int k = 0; k < 3; ++k) {
      const int m = g.uniform(-3, 3);
      tr.u[k] = std::ldexp(double(bx + m * dx), e);
      tr.v[k] = std::ldexp(double(by + m * dy), e);
    }
  }
  if (g.coin(4))
    for (int k = 0; k < 3; ++k) std::swap(tr.u[k], tr.v[k]);
}

// Nearly collinear, any magnitude: the exact D is tiny next to its six products, so the
// filter fails and the exact stages decide.
void fill_near_degenerate(Gen& g, Tri& tr) {
  const int e = g.uniform(-1000, 960);
  const double x = std::ldexp(double(g.bits() >> 11) + 1.0, e - 53) * g.sign();
  const double y = std::ldexp(double(g.bits() >> 11) + 1.0, e - 53) * g.sign();
  for (int k = 0; k < 3; ++k) {
    const double c = 1.0 + double(g.uniform(-1000, 1000)) / 1024.0 + g.wild() * 1e-16;
    tr.u[k] = Gen::ulps(x * c, g.coin(3) ? g.uniform(-2, 2) : 0);
    tr.v[k] = Gen::ulps(y * c, g.coin(3) ? g.uniform(-2, 2) : 0);
    if (!std::isfinite(tr.u[k]) || !std::isfinite(tr.v[k])) {
      tr.u[k] = x;
      tr.v[k] = y;
    }
  }
  if (g.coin(4)) {  // shifted off the origin: nearly collinear, not through it
    const double sx = x * double(g.uniform(-2, 2)), sy = y * double(g.uniform(-2, 2));
    for (int k = 0; k < 3; ++k) {
      if (std::isfinite(tr.u[k] + sx)) tr.u[k] += sx;
      if (std::isfinite(tr.v[k] + sy)) tr.v[k] += sy;
    }
  }
}

// Values +-(1 + k eps) with eps far below float precision (2^-40 ... 2^-52), in every sign
// pattern, often a thin triangle around the origin: as floats all three collapse onto
// (+-1, +-1), so every decision here exists only in double.
void fill_below_float(Gen& g, Tri& tr) {
  const double eps = std::ldexp(1.0, -g.uniform(40, 52));
  const int e = g.coin(2) ? 0 : g.uniform(-1000, 1000);
  const double su = g.sign(), sv = g.coin(3) ? -su : su;
  for (int k = 0; k < 3; ++k) {
    const double side = k == 0 ? 1.0 : (g.coin(4) ? 1.0 : -1.0);  // usually p0 against p1, p2
    tr.u[k] = std::ldexp(side * su * (1.0 + double(g.uniform(-4, 4)) * eps), e);
    tr.v[k] = std::ldexp(side * sv * (1.0 + double(g.uniform(-4, 4)) * eps), e);
  }
  if (g.coin(3))
    for (int k = 0; k < 3; ++k) std::swap(tr.u[k], tr.v[k]);
}

// Each coordinate huge, tiny or zero: products from 2^2046 down to 2^-2148 in one sum.
void fill_mixed(Gen& g, Tri& tr) {
  double* c[6] = {&tr.u[0], &tr.v[0], &tr.u[1], &tr.v[1], &tr.u[2], &tr.v[2]};
  for (int k = 0; k < 6; ++k) {
    switch (g.uniform(0, 6)) {
      case 0: *c[k] = g.sign() * std::ldexp(1.0 + double(g.bits() >> 12) * 0x1p-52, g.uniform(900, 1023)); break;
      case 1: *c[k] = g.sign() * std::ldexp(1.0 + double(g.bits() >> 12) * 0x1p-52, g.uniform(-1022, -900)); break;
      case 2: *c[k] = g.sign() * DBL_TRUE_MIN * double(g.uniform(1, 3)); break;
      case 3: *c[k] = g.sign() * Gen::ulps(DBL_MAX, -g.uniform(0, 2)); break;
      case 4: *c[k] = g.sign() * 0.0; break;
      case 5: *c[k] = k > 0 ? *c[g.uniform(0, k - 1)] * g.sign() : 1.0; break;
      default: *c[k] = g.sign();
    }
  }
}

// Every coordinate from a pool of three values (+-), plus zero: ties everywhere.
void fill_repeated(Gen& g, Tri& tr) {
  const double pool[4] = {g.wild(), g.wild(), g.wild(), 0.0};
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
    case Family::small_int:
      for (int k = 0; k < 3; ++k) {
        tr.u[k] = double(g.uniform(-3, 3));
        tr.v[k] = double(g.uniform(-3, 3));
      }
      break;
    case Family::coarse_grid: fill_coarse_grid(g, tr); break;
    case Family::collinear: fill_collinear(g, tr); break;
    case Family::near_degenerate: fill_near_degenerate(g, tr); break;
    case Family::below_float: fill_below_float(g, tr); break;
    case Family::mixed: fill_mixed(g, tr); break;
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
  int64_t plain_zero = 0;     // unperturbed D = 0: SoS decides
  int64_t naive_wrong = 0;    // plain double arithmetic gets sign(D) wrong (or not finite)
  int64_t float_differs = 0;  // the float kernels on the float-rounded values answer otherwise
  int64_t failures = 0;
  std::string first_failures;

  void fail(const std::string& what, const Tri& tr) {
    if (++failures <= 5) first_failures += what + ": " + describe(tr) + "\n";
  }
};

void check_triangle(const Tri& tr, Gen& g, Tally& tally) {
  ++tally.triangles;
  SosPoint64 p[3];
  RefPoint64 q[3];
  for (int k = 0; k < 3; ++k) {
    p[k] = {tr.u[k], tr.v[k], tr.idx[k]};
    q[k] = {tr.u[k], tr.v[k], tr.idx[k]};
  }
  const int plain = r::ref64_orient_plain(q[0], q[1], q[2]);
  if (plain == 0) ++tally.plain_zero;
  {
    const double x0 = tr.u[0], y0 = tr.v[0], x1 = tr.u[1], y1 = tr.v[1], x2 = tr.u[2], y2 = tr.v[2];
    const double naive = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (!std::isfinite(naive) || (naive > 0) - (naive < 0) != plain) ++tally.naive_wrong;
  }
  if (d::orient_exact64(tr.u[0], tr.v[0], tr.u[1], tr.v[1], tr.u[2], tr.v[2]) != plain) tally.fail("orient_exact64", tr);
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    if (d::cross_exact64(tr.u[a], tr.v[a], tr.u[b], tr.v[b]) != r::ref64_cross(tr.u[a], tr.v[a], tr.u[b], tr.v[b]))
      tally.fail("cross_exact64 k=" + std::to_string(k), tr);
  }
  // The triangle's orientation and the three with the origin, in contract order and in one
  // random permutation.
  const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const SosPoint64 o{0.0, 0.0, -1};
  const RefPoint64 qo{0.0, 0.0, -1};
  for (int replaced = -1; replaced < 3; ++replaced) {
    SosPoint64 a[3] = {p[0], p[1], p[2]};
    RefPoint64 b[3] = {q[0], q[1], q[2]};
    if (replaced >= 0) {
      a[replaced] = o;
      b[replaced] = qo;
    }
    if (d::orient_sos64(a[0], a[1], a[2]) != r::ref64_orient_sos(b[0], b[1], b[2]))
      tally.fail("orient_sos64 replaced=" + std::to_string(replaced), tr);
    const int* pm = perm[g.uniform(0, 5)];
    if (d::orient_sos64(a[pm[0]], a[pm[1]], a[pm[2]]) != r::ref64_orient_sos(b[pm[0]], b[pm[1]], b[pm[2]]))
      tally.fail("orient_sos64 permuted replaced=" + std::to_string(replaced), tr);
  }
  const bool inside = r::ref64_contains_origin(q[0], q[1], q[2]);
  if (inside) ++tally.inside;
  if (inside && plain == 0) tally.fail("reference: inside although D = 0", tr);
  if (d::contains_origin64(p[0], p[1], p[2]) != inside) tally.fail("contains_origin64", tr);
  const CpType type = r::ref64_type(tr.t, tr.u, tr.v);
  if (d::triangle_type(tr.t, tr.u, tr.v) != type) tally.fail("triangle_type", tr);
  const uint8_t sig = r::ref64_signature(tr.t, tr.idx, tr.u, tr.v);
  if (sig != (inside ? uint8_t(1 + int(type)) : uint8_t(0))) tally.fail("ref64_signature", tr);
  if (d::triangle_signature(tr.t, tr.idx, tr.u, tr.v) != sig) tally.fail("triangle_signature", tr);
  // What a float32 shortcut would answer (values rounded to float; out of float range counts).
  float fu[3], fv[3];
  bool representable = true;
  for (int k = 0; k < 3; ++k) {
    fu[k] = float(tr.u[k]);
    fv[k] = float(tr.v[k]);
    representable = representable && std::isfinite(fu[k]) && std::isfinite(fv[k]);
  }
  if (!representable || d::triangle_signature(tr.t, tr.idx, fu, fv) != sig ||
      d::triangle_type(tr.t, fu, fv) != type)
    ++tally.float_differs;
}

struct Expect {
  int64_t plain_zero = 0, inside = 0, naive_wrong = 0, float_differs = 0;
};

void run_family(Family family, uint64_t seed, int64_t count, Expect at_least) {
  Gen g(seed);
  Tally tally;
  for (int64_t n = 0; n < count; ++n) check_triangle(make_triangle(g, family), g, tally);
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_EQ(tally.triangles, count);
  // The generator really produces what the test claims to cover.
  EXPECT_GE(tally.plain_zero, at_least.plain_zero) << "degenerate (D = 0) triangles";
  EXPECT_GE(tally.inside, at_least.inside) << "triangles holding a critical point";
  EXPECT_GE(tally.naive_wrong, at_least.naive_wrong) << "triangles where rounding misleads";
  EXPECT_GE(tally.float_differs, at_least.float_differs) << "triangles a float shortcut gets wrong";
  std::printf("  %lld triangles, %lld with D = 0, %lld inside, %lld misjudged by doubles, %lld by floats\n",
              (long long)tally.triangles, (long long)tally.plain_zero, (long long)tally.inside,
              (long long)tally.naive_wrong, (long long)tally.float_differs);
}

// ---------------------------------------------------------------------------------------
// Tests: triangles

TEST(ExactReference64, AgreesOnWildMagnitudes) {
  run_family(Family::wild, 0x64ed0001, 60000, {500, 1000, 1000, 5000});
}

TEST(ExactReference64, AgreesOnSmallIntegersFullOfTies) {
  run_family(Family::small_int, 0x64ed0002, 60000, {4000, 3000, 0, 0});
}

TEST(ExactReference64, AgreesOnCoarseGridValuesOverTheWholeRange) {
  run_family(Family::coarse_grid, 0x64ed0003, 60000, {3000, 2000, 1000, 10000});
}

TEST(ExactReference64, AgreesOnCollinearConfigurations) {
  run_family(Family::collinear, 0x64ed0004, 50000, {40000, 0, 0, 0});
}

TEST(ExactReference64, AgreesOnNearlyCollinearValuesOfAnyMagnitude) {
  run_family(Family::near_degenerate, 0x64ed0005, 50000, {20, 500, 500, 1000});
}

TEST(ExactReference64, AgreesWhereValuesDifferOnlyBelowFloatPrecision) {
  run_family(Family::below_float, 0x64ed0006, 60000, {1000, 3000, 0, 10000});
}

TEST(ExactReference64, AgreesOnHugeTinyAndZeroValuesInOneTriangle) {
  run_family(Family::mixed, 0x64ed0007, 40000, {800, 1000, 5000, 10000});
}

TEST(ExactReference64, AgreesOnRepeatedValues) {
  run_family(Family::repeated, 0x64ed0008, 50000, {4000, 1000, 0, 0});
}

// Every triangle with coordinates in {-1, -0.0, 0, 1} scaled by one of a few powers of two
// (the smallest subnormal, 1, 2^1023), both kinds, every ordering of three indices.
TEST(ExactReference64, AgreesExhaustivelyOnUnitValuesAtEveryScale) {
  Gen g(0x64ed0009);
  Tally tally;
  const int64_t orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const double values[4] = {-1.0, -0.0, 0.0, 1.0};
  for (const double scale : {DBL_TRUE_MIN, 1.0, 0x1p1023}) {
    for (int code = 0; code < 4096; ++code) {
      Tri tr{};
      for (int k = 0, c = code; k < 3; ++k, c /= 16) {
        tr.u[k] = values[c % 4] * scale;
        tr.v[k] = values[(c / 4) % 4] * scale;
      }
      for (int t = 0; t < 2; ++t)
        for (const auto& ord : orders) {
          tr.t = t;
          for (int k = 0; k < 3; ++k) tr.idx[k] = 10 + 7 * ord[k];
          check_triangle(tr, g, tally);
        }
    }
  }
  EXPECT_EQ(tally.failures, 0) << tally.first_failures;
  EXPECT_EQ(tally.triangles, 3 * 4096 * 12);
}

// ---------------------------------------------------------------------------------------
// The double path makes the float path's decisions on every float-valued triangle.

float random_float(Gen& g) {
  switch (g.uniform(0, 5)) {
    case 0: {
      uint32_t b;
      do b = uint32_t(g.bits()); while (((b >> 23) & 0xffu) == 0xffu);
      return std::bit_cast<float>(b);
    }
    case 1: return float(g.uniform(-3, 3));
    case 2: return std::ldexp(float(g.uniform(-4, 4)), g.uniform(-149, 125));
    case 3: return std::bit_cast<float>((uint32_t(g.bits()) & 0x80000000u) | (uint32_t(g.bits()) >> g.uniform(9, 31)));
    case 4: return float(g.sign()) * std::nextafter(FLT_MAX, float(g.uniform(0, 1)) * FLT_MAX);
    default: return float(g.sign()) * std::ldexp(float(g.bits() % (1u << 24)), g.uniform(-40, 0));
  }
}

TEST(ExactFloatAgreement64, DoubleKernelsDecideAsTheFloatKernelsOnFloatValues) {
  Gen g(0x64ed0101);
  int64_t failures = 0, inside = 0;
  std::string first;
  for (int n = 0; n < 400000; ++n) {
    float fu[3], fv[3];
    double du[3], dv[3];
    const float pool[3] = {random_float(g), random_float(g), 0.0f};
    for (int k = 0; k < 3; ++k) {
      fu[k] = g.coin(3) ? pool[g.uniform(0, 2)] * float(g.sign()) : random_float(g);
      fv[k] = g.coin(3) ? pool[g.uniform(0, 2)] * float(g.sign()) : random_float(g);
      du[k] = fu[k];
      dv[k] = fv[k];
    }
    Tri tr{};
    tr.t = g.uniform(0, 1);
    random_indices(g, tr);
    const uint8_t fs = d::triangle_signature(tr.t, tr.idx, fu, fv);
    inside += fs != 0;
    bool same = d::triangle_signature(tr.t, tr.idx, du, dv) == fs && d::triangle_type(tr.t, du, dv) == d::triangle_type(tr.t, fu, fv);
    for (int replaced = -1; replaced < 3; ++replaced) {
      d::SosPoint a[3];
      SosPoint64 b[3];
      for (int k = 0; k < 3; ++k) {
        a[k] = k == replaced ? d::SosPoint{0.0f, 0.0f, -1} : d::SosPoint{fu[k], fv[k], tr.idx[k]};
        b[k] = k == replaced ? SosPoint64{0.0, 0.0, -1} : SosPoint64{du[k], dv[k], tr.idx[k]};
      }
      same = same && d::orient_sos(a[0], a[1], a[2]) == d::orient_sos64(b[0], b[1], b[2]);
    }
    same = same && d::cross_exact(fu[0], fv[0], fu[1], fv[1]) == d::cross_exact64(du[0], dv[0], du[1], dv[1]);
    if (!same && ++failures <= 5) {
      for (int k = 0; k < 3; ++k) {
        tr.u[k] = du[k];
        tr.v[k] = dv[k];
      }
      first += describe(tr) + "\n";
    }
  }
  EXPECT_EQ(failures, 0) << first;
  EXPECT_GT(inside, 5000);
}

// ---------------------------------------------------------------------------------------
// exact_sign_of_products and each of its exact stages against the big-integer sum

struct ProductCase {
  std::vector<d::ProductTerm> terms;
};

int reference_sign(const std::vector<d::ProductTerm>& t) {
  std::vector<double> a, b;
  std::vector<int> s;
  for (const auto& x : t) {
    a.push_back(x.a);
    b.push_back(x.b);
    s.push_back(x.scale);
  }
  return r::ref64_sign_of_products(a.data(), b.data(), s.data(), int(t.size()));
}

struct ProductTally {
  int64_t cases = 0, zero = 0, failures = 0;
  std::string first;

  void check(const std::vector<d::ProductTerm>& t) {
    ++cases;
    const int expected = reference_sign(t);
    zero += expected == 0;
    const int n = int(t.size());
    const int got[3] = {d::exact_sign_of_products(t.data(), n), d::sign_of_products_scaled(t.data(), n),
                        d::sign_of_products_wide(t.data(), n)};
    for (int stage = 0; stage < 3; ++stage) {
      if (got[stage] == expected || ++failures > 5) continue;
      std::ostringstream os;
      os << "stage " << stage << ": expected " << expected << " got " << got[stage] << " for {";
      for (const auto& x : t) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%a*%a*2^%d, ", x.a, x.b, x.scale);
        os << buf;
      }
      first += os.str() + "}\n";
    }
  }
};

void shuffle(Gen& g, std::vector<d::ProductTerm>& t) {
  for (size_t i = t.size(); i > 1; --i) std::swap(t[i - 1], t[size_t(g.index_in(int64_t(i)))]);
}

TEST(ExactProducts64, BigProductsCancelLeavingATinyOne) {
  Gen g(0x64ed0201);
  ProductTally tally;
  for (int n = 0; n < 40000; ++n) {
    // x*y - y*x (+ the same product split differently) + a product far below it.
    const double x = g.wild(), y = g.wild();
    std::vector<d::ProductTerm> t = {{x, y, 0}, {-y, x, 0}};
    if (g.coin(2)) t.push_back({x * 0.5, y, 1});  // equal to x*y when x*0.5 is exact
    if (g.coin(2)) t.push_back({-x, y, 0});
    if (!g.coin(5)) t.push_back({g.wild(), g.wild(), g.uniform(0, 2)});
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first;
  EXPECT_GT(tally.zero, 4000);
}

TEST(ExactProducts64, TwoProductSplitsSumToZeroOrNearlyZero) {
  Gen g(0x64ed0202);
  ProductTally tally;
  for (int n = 0; n < 40000; ++n) {
    // x*y == hi + lo exactly where fma's low part is exact; then nudged far below it.
    std::vector<d::ProductTerm> t;
    const int pieces = g.uniform(1, 4);
    for (int k = 0; k < pieces; ++k) {
      const double x = std::ldexp(1.0 + double(g.bits() >> 12) * 0x1p-52, g.uniform(-400, 400));
      const double y = std::ldexp(1.0 + double(g.bits() >> 12) * 0x1p-52, g.uniform(-400, 400));
      const double hi = x * y, lo = std::fma(x, y, -hi);
      t.push_back({x, y, 0});
      t.push_back({-hi, 1.0, 0});
      t.push_back({-lo, 1.0, 0});
    }
    if (!g.coin(3)) t.push_back({g.wild(), std::ldexp(1.0, -g.uniform(100, 1074)), 0});
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first;
  EXPECT_GT(tally.zero, 4000);
}

TEST(ExactProducts64, AnyMagnitudesAndScales) {
  Gen g(0x64ed0203);
  ProductTally tally;
  for (int n = 0; n < 40000; ++n) {
    const int count = g.uniform(1, d::kMaxProductTerms);
    std::vector<d::ProductTerm> t;
    while (int(t.size()) < count) {
      const d::ProductTerm x{g.wild(), g.wild(), g.uniform(0, d::kMaxTermScale)};
      t.push_back(x);
      if (int(t.size()) < count && g.coin(2)) t.push_back({-x.b, x.a, x.scale});  // its negation
    }
    shuffle(g, t);
    tally.check(t);
  }
  EXPECT_EQ(tally.failures, 0) << tally.first;
  EXPECT_GT(tally.zero, 1000);
}

TEST(ExactProducts64, EdgeCases) {
  const double big = DBL_MAX, tiny = DBL_TRUE_MIN;
  using T = std::vector<d::ProductTerm>;
  const T cases[] = {
      {},
      {{0.0, 0.0, 0}},
      {{-0.0, 5.0, 0}, {0.0, -7.0, 2}},
      {{tiny, tiny, 0}},
      {{-tiny, tiny, 0}},
      {{tiny, tiny, 0}, {-tiny, tiny, 0}},
      {{big, big, 0}, {-big, big, 0}, {tiny, tiny, 0}},
      {{big, big, 2}, {-big, big, 2}, {-tiny, tiny, 0}},
      {{big, big, 0}, {-big, -big, 0}},
      {{big, 2.0, 0}, {-big, 1.0, 1}},
      {{big, 1.0, 0}, {big, 1.0, 0}, {-big, 1.0, 1}, {tiny, 1.0, 0}},
      {{1e300, 1e300, 0}, {-1e300, 1e300, 0}, {1e-300, -1e-300, 0}},
      {{1e-300, 1e-300, 0}, {-1e-300, 1e-300, 0}},
      {{0x1p-1022, 0x1p-52, 0}, {-tiny, 1.0, 0}},
      {{0x1p-537, 0x1p-537, 0}, {-tiny, 1.0, 0}},
      {{0x1p-538, 0x1p-537, 0}, {-tiny, 0.5, 0}},
      {{1.0 + 0x1p-52, 1.0 - 0x1p-53, 0}, {-1.0, 1.0, 0}, {-0x1p-53, 1.0, 0}, {0x1p-105, 1.0, 0}},
  };
  for (const T& t : cases) {
    const int expected = reference_sign(t);
    EXPECT_EQ(d::exact_sign_of_products(t.data(), int(t.size())), expected) << t.size() << " terms";
    EXPECT_EQ(d::sign_of_products_scaled(t.data(), int(t.size())), expected) << t.size() << " terms";
    EXPECT_EQ(d::sign_of_products_wide(t.data(), int(t.size())), expected) << t.size() << " terms";
  }
}

TEST(ExactProducts64, BoundCheckIsExactWhereTheDifferenceRoundsOrOverflows) {
  using d::within_bound64;
  EXPECT_TRUE(within_bound64(1.0, 1.0, 0.0));
  EXPECT_TRUE(within_bound64(-0.0, 0.0, 0.0));
  // 1 + 2^-52 - (1 - 2^-53) = 1.5 * 2^-52 exactly: within 1.5 * 2^-52, not within below it.
  EXPECT_TRUE(within_bound64(1.0 + 0x1p-52, 1.0 - 0x1p-53, 0x1.8p-52));
  EXPECT_FALSE(within_bound64(1.0 + 0x1p-52, 1.0 - 0x1p-53, std::nextafter(0x1.8p-52, 0.0)));
  // A difference that rounds to the bound but exceeds it: 2^60 + 1 is not a double, so
  // 2^60 - (-1) rounds to 2^60; the exact difference is one more.
  EXPECT_FALSE(within_bound64(0x1p60, -1.0, 0x1p60));
  EXPECT_TRUE(within_bound64(0x1p60, -1.0, 0x1p60 + 256.0));
  EXPECT_FALSE(within_bound64(DBL_MAX, -DBL_MAX, DBL_MAX));
  EXPECT_TRUE(within_bound64(DBL_MAX, DBL_MAX, 0.0));
  EXPECT_TRUE(within_bound64(DBL_TRUE_MIN, -DBL_TRUE_MIN, 2 * DBL_TRUE_MIN));
  EXPECT_FALSE(within_bound64(DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_TRUE_MIN));
  const double sums[][4] = {{DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX}, {DBL_MAX, DBL_MAX, -DBL_MAX, -0x1p970}};
  EXPECT_EQ(d::exact_sign_of_sum64(sums[0], 4), 0);
  EXPECT_EQ(d::exact_sign_of_sum64(sums[1], 4), 1);
}

// The reference itself, on signs known by construction.
TEST(ReferenceSelfCheck64, WideIntegersOfDoubles) {
  using r::WideInt;
  EXPECT_EQ(r::wide_of(0.0).sign(), 0);
  EXPECT_EQ(r::wide_of(-0.0).sign(), 0);
  EXPECT_TRUE(r::wide_of(DBL_TRUE_MIN) == WideInt::from_int(1));
  EXPECT_TRUE(r::wide_of(1.0) == WideInt::from_shifted(1, 1074, false));
  EXPECT_TRUE(r::wide_of(-3.0) == WideInt::from_shifted(3, 1074, true));
  EXPECT_TRUE(r::wide_of(DBL_MAX) == WideInt::from_shifted((uint64_t(1) << 53) - 1, 2045, false));
  const WideInt m = r::wide_of(DBL_MAX);
  EXPECT_EQ((m * m - m * m + WideInt::from_int(1)).sign(), 1);
  EXPECT_EQ(r::ref64_cross(DBL_MAX, DBL_MAX, DBL_MAX, std::nextafter(DBL_MAX, 0.0)), -1);
  // 1 * 1 - (1 - 2^-53)(1 + 2^-52) = -2^-53 + 2^-105.
  EXPECT_EQ(r::ref64_cross(1.0, 1.0 + 0x1p-52, 1.0 - 0x1p-53, 1.0), -1);
  EXPECT_THROW(r::wide_of(INFINITY), std::invalid_argument);
  EXPECT_THROW((void)(m * m * m), std::overflow_error);
}

}  // namespace
