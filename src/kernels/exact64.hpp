// Exact sign of a short sum of products of doubles (the float64 predicates, issue 18).
//
// exact.hpp rests on every term being exact in double, which holds for products of two
// floats. A product of two doubles has up to 106 significant bits, and it may overflow
// (1e200 * 1e200) or fall below the subnormals (1e-200 * 1e-200). Every float64 predicate is
// therefore written as a sum of at most kMaxProductTerms terms a_i * b_i * 2^k_i
// (k_i in [0, kMaxTermScale]; a single value x is the term x * 1), and its sign is decided
// in three stages, each exact wherever it answers:
//   1. filter: the products and their sum in plain double. With u = 2^-53 and
//      eta = 2^-1075 (half the smallest subnormal), fl(ab) = ab(1 + d) + e, |d| <= u,
//      |e| <= eta; times 2^k is exact while finite. So each term is off by at most
//      u|P_i| + 2^k eta, recursive summation adds gamma_{n-1} sum|p_i| (Higham, Thm 4.8;
//      additions are exact in the subnormal range), and in all
//        |s - exact| <= gamma_n / (1 - gamma_{n-1}) * M + n 2^(k+1) eta,
//      M the computed sum of |p_i|. The bound below, 4nu M + n 2^-1068 evaluated in
//      double, exceeds that for n <= 16 and k <= 2 even after its own two roundings. When
//      M is infinite (an overflow) the filter is skipped.
//   2. scaled expansion: each nonzero factor is split exactly into m * 2^e with
//      1 <= |m| < 2 (subnormals too), the product of the two m's is exactly hi + lo
//      (TwoProduct by fma: 1 <= |hi| <= 4, lo a multiple of 2^-104, no overflow or
//      underflow possible), and the term is (hi + lo) * 2^E. When the E of all terms lie
//      within kMaxScaledSpread of each other, every hi and lo is scaled by 2^(E - Emax + 64),
//      which is exact (all results are multiples of 2^-1000 below 2^66), and
//      exact_sign_of_sum (filter, then Grow-Expansion) decides the sign of their sum, which
//      is the exact sum times a positive power of two. Its premises hold: every value is
//      exact, no partial sum overflows (32 values below 2^66) or is subnormal (all are
//      multiples of 2^-1000), so Higham's bound and TwoSum apply as for float products.
//   3. wide integer: otherwise (a product near 2^2000 beside one near 2^-2000) every term is
//      an integer M_a M_b < 2^106 times 2^Q, and the terms are summed exactly in a
//      fixed two's-complement integer of kWideLimbs 32-bit limbs aligned at the smallest Q.
// Nothing here allocates, throws or uses a std:: container; the stack use is bounded
// (stage 3: a 528-byte integer), so all of it runs in CUDA kernels too (FACTZ_HD).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/exact.hpp"
#include "kernels/hd.hpp"

// Rare paths (stages 2 and 3) stay out of line (FACTZ_HD_COLD, kernels/hd.hpp), so the hot
// loops that call the filter keep their registers and their inlining.

namespace factz::detail {

/// One term a * b * 2^scale of a sum; a and b finite doubles, scale in [0, kMaxTermScale].
struct ProductTerm {
  double a;
  double b;
  int scale;
};

inline constexpr int kMaxProductTerms = 16;
inline constexpr int kMaxTermScale = 2;
/// Largest spread of the terms' binary exponents that stage 2 handles (see above).
inline constexpr int kMaxScaledSpread = 960;
/// Stage 3's integer: 132 * 32 = 4224 bits. A term's integer is below 2^106 and its shift
/// from the smallest exponent at most (2 * 971 + 2) - (-2 * 1074) = 4092 bits, so 16 terms
/// stay below 2^4202 in magnitude, inside the two's-complement range.
inline constexpr int kWideLimbs = 132;

/// The bits of a double (std::bit_cast, usable in device code).
FACTZ_HD uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return uint64_t(__double_as_longlong(x));
#else
  uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
#endif
}

/// Biased binary exponent of a double (0 for zero and subnormals; the sign is ignored).
FACTZ_HD int exponent_bits(double x) { return int((double_bits(x) >> 52) & 0x7ff); }

FACTZ_HD double double_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)b);
#else
  double x;
  std::memcpy(&x, &b, 8);
  return x;
#endif
}

/// 2^e exactly, for e in [-1022, 1023].
FACTZ_HD double power_of_two(int e) { return double_from_bits(uint64_t(e + 1023) << 52); }

/// Splits a finite nonzero x exactly into m * 2^e with 1 <= |m| < 2 (subnormals included:
/// 2^64 x is then normal and exact).
FACTZ_HD double split_binade(double x, int& e) {
  uint64_t b = double_bits(x);
  int biased = int((b >> 52) & 0x7ff);
  int offset = 0;
  if (biased == 0) {
    b = double_bits(x * 0x1p64);
    biased = int((b >> 52) & 0x7ff);
    offset = 64;
  }
  e = biased - 1023 - offset;
  return double_from_bits((b & 0x800fffffffffffffull) | (uint64_t(1023) << 52));
}

/// A finite x as |x| = M * 2^q exactly: returns M < 2^53, sets q >= -1074 and the sign.
FACTZ_HD uint64_t integer_significand(double x, int& q, bool& negative) {
  const uint64_t b = double_bits(x);
  const int biased = int((b >> 52) & 0x7ff);
  const uint64_t fraction = b & 0xfffffffffffffull;
  negative = (b >> 63) != 0;
  if (biased == 0) {
    q = -1074;
    return fraction;
  }
  q = biased - 1075;
  return fraction | (uint64_t(1) << 52);
}

/// Stage 3: exact sign of the sum by wide two's-complement integer arithmetic. Any finite
/// inputs, n <= kMaxProductTerms. Two passes over the terms (the smallest exponent, then
/// the sum), so that the accumulator is the only array on the stack.
FACTZ_HD_COLD int sign_of_products_wide(const ProductTerm* t, int n) {
  int q_min = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    int qa, qb;
    bool na, nb;
    const uint64_t a = integer_significand(t[i].a, qa, na), b = integer_significand(t[i].b, qb, nb);
    if (a == 0 || b == 0) continue;
    const int q = qa + qb + t[i].scale;
    if (!any || q < q_min) q_min = q;
    any = true;
  }
  if (!any) return 0;
  uint32_t acc[kWideLimbs];
  for (int k = 0; k < kWideLimbs; ++k) acc[k] = 0;
  for (int i = 0; i < n; ++i) {
    int qa, qb;
    bool na, nb;
    const uint64_t ma = integer_significand(t[i].a, qa, na), mb = integer_significand(t[i].b, qb, nb);
    if (ma == 0 || mb == 0) continue;
    // The 106-bit product in four 32-bit limbs (a1, b1 < 2^21: no partial sum overflows).
    const uint64_t a0 = ma & 0xffffffffu, a1 = ma >> 32, b0 = mb & 0xffffffffu, b1 = mb >> 32;
    uint32_t w[4];
    const uint64_t p00 = a0 * b0;
    w[0] = uint32_t(p00);
    const uint64_t mid = (p00 >> 32) + (a0 * b1 & 0xffffffffu) + (a1 * b0 & 0xffffffffu);
    w[1] = uint32_t(mid);
    const uint64_t high = (mid >> 32) + (a0 * b1 >> 32) + (a1 * b0 >> 32) + a1 * b1;
    w[2] = uint32_t(high);
    w[3] = uint32_t(high >> 32);
    // Shifted into five limbs from limb `word` on.
    const int shift = qa + qb + t[i].scale - q_min, word = shift >> 5, bit = shift & 31;
    uint32_t s[5];
    s[0] = w[0] << bit;
    for (int k = 1; k < 4; ++k) s[k] = (w[k] << bit) | (bit != 0 ? w[k - 1] >> (32 - bit) : 0u);
    s[4] = bit != 0 ? w[3] >> (32 - bit) : 0u;
    // Add or subtract, carrying (borrowing) as far as needed; the top limb holds the sign.
    const bool negative = na != nb;
    uint64_t carry = 0;
    for (int k = word; k < kWideLimbs; ++k) {
      if (k - word >= 5 && carry == 0) break;
      const uint64_t x = k - word < 5 ? s[k - word] : 0u;
      if (!negative) {
        const uint64_t r = uint64_t(acc[k]) + x + carry;
        acc[k] = uint32_t(r);
        carry = r >> 32;
      } else {
        const uint64_t sub = x + carry;
        carry = uint64_t(acc[k]) < sub ? 1u : 0u;
        acc[k] = uint32_t(uint64_t(acc[k]) - sub);
      }
    }
  }
  if ((acc[kWideLimbs - 1] >> 31) != 0) return -1;
  for (int k = 0; k < kWideLimbs; ++k)
    if (acc[k] != 0) return 1;
  return 0;
}

/// What scaled_expansion_sign answers when the exponents spread beyond kMaxScaledSpread.
inline constexpr int kSpreadTooWide = 2;

/// Stage 2: exact sign by TwoProduct on normalized significands and one expansion, or
/// kSpreadTooWide. Any finite inputs, n <= kMaxProductTerms.
FACTZ_HD_COLD int scaled_expansion_sign(const ProductTerm* t, int n) {
  double x[2 * kMaxProductTerms];  // hi, lo of each nonzero term, then scaled in place
  int e[kMaxProductTerms];
  int m = 0, e_min = 0, e_max = 0;
  for (int i = 0; i < n; ++i) {
    if (t[i].a == 0.0 || t[i].b == 0.0) continue;  // an exact zero term (also -0.0)
    int ea, eb;
    const double fa = split_binade(t[i].a, ea), fb = split_binade(t[i].b, eb);
    const double hi = fa * fb;
    x[2 * m] = hi;
    x[2 * m + 1] = fma(fa, fb, -hi);  // exact: fa, fb are multiples of 2^-52 below 2
    e[m] = ea + eb + t[i].scale;
    if (m == 0 || e[m] < e_min) e_min = e[m];
    if (m == 0 || e[m] > e_max) e_max = e[m];
    ++m;
  }
  if (m == 0) return 0;
  if (e_max - e_min > kMaxScaledSpread) return kSpreadTooWide;
  for (int i = 0; i < m; ++i) {
    const double f = power_of_two(e[i] - e_max + 64);
    x[2 * i] *= f;
    x[2 * i + 1] *= f;
  }
  return exact_sign_of_sum(x, 2 * m);
}

/// Stages 2 and 3: the exact sign for any finite inputs, without the filter. The two stages
/// run one after the other (never nested), so their stack frames do not add up.
FACTZ_HD int sign_of_products_scaled(const ProductTerm* t, int n) {
  const int s = scaled_expansion_sign(t, n);
  return s != kSpreadTooWide ? s : sign_of_products_wide(t, n);
}

/// Exact sign (-1, 0, +1) of t[0] + ... + t[n-1], each term a * b * 2^scale, for any finite
/// doubles (n <= kMaxProductTerms, scale in [0, kMaxTermScale]).
FACTZ_HD int exact_sign_of_products(const ProductTerm* t, int n) {
  double s = 0.0, mag = 0.0;
  for (int i = 0; i < n; ++i) {
    const double p = (t[i].a * t[i].b) * double(1 << t[i].scale);
    s += p;
    mag += p < 0.0 ? -p : p;
  }
  if (mag <= 1.7976931348623157e308) {  // finite: no product overflowed
    const double bound = mag * (4.0 * n * 1.1102230246251565e-16) + n * 0x1p-1068;
    if (s > bound) return 1;
    if (s < -bound) return -1;
  }
  return sign_of_products_scaled(t, n);
}

/// Exact sign of x[0] + ... + x[n-1] for any finite doubles (n <= kMaxProductTerms): unlike
/// exact_sign_of_sum, safe where partial sums would overflow (DBL_MAX - -DBL_MAX).
FACTZ_HD int exact_sign_of_sum64(const double* x, int n) {
  ProductTerm t[kMaxProductTerms];
  for (int i = 0; i < n; ++i) t[i] = ProductTerm{x[i], 1.0, 0};
  return exact_sign_of_products(t, n);
}

/// Exact |x - y| <= eb for finite doubles (eb >= 0): the pointwise bound G0, decided on the
/// exact difference even where x - y rounds or overflows.
FACTZ_HD bool within_bound64(double x, double y, double eb) {
  const double up[3] = {eb, x, -y}, down[3] = {eb, -x, y};
  return exact_sign_of_sum64(up, 3) >= 0 && exact_sign_of_sum64(down, 3) >= 0;
}

}  // namespace factz::detail
