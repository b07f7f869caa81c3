// Exact sign of a sum of exactly representable double terms.
//
// Every predicate in FaCTz reduces to the sign of a short sum whose terms are exact in
// double precision: a float, or the product of two floats (24 + 24 significant bits fit
// in 53, and the exponent range of float squared lies well inside that of double, so no
// overflow and no subnormal result). The sum itself may round, so its sign is decided in
// two stages:
//   1. a filter: the recursively summed value s carries an error of at most
//      gamma_{n-1} * sum|t_i| (Higham, Accuracy and Stability, Thm 4.8); when |s|
//      exceeds a safe over-estimate of that, sign(s) is the exact sign;
//   2. otherwise Shewchuk's Grow-Expansion turns the terms into a non-overlapping
//      expansion whose value equals the exact sum, and the sign of its largest nonzero
//      component is the exact sign.
// No decision ever rests on a rounded value.
#pragma once

#include "kernels/hd.hpp"

namespace factz::detail {

/// Knuth's TwoSum: a + b == s + e exactly, for any doubles without overflow.
FACTZ_HD void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bv = s - a;
  const double av = s - bv;
  e = (a - av) + (b - bv);
}

/// Exact sign (-1, 0, +1) of t[0] + ... + t[n-1]; every t[i] must be exact and finite.
/// n is at most kMaxTerms.
inline constexpr int kMaxExactTerms = 32;

FACTZ_HD int exact_sign_of_sum(const double* t, int n) {
  double s = 0.0, a = 0.0;
  for (int i = 0; i < n; ++i) {
    s += t[i];
    a += (t[i] < 0.0 ? -t[i] : t[i]);
  }
  // gamma_{n-1} = (n-1)u / (1-(n-1)u) with u = 2^-53; a itself is rounded from below by
  // at most the same factor. 4 * n * 2^-53 over-estimates both comfortably for n <= 32.
  const double bound = a * (4.0 * n * 1.1102230246251565e-16);
  if (s > bound) return 1;
  if (s < -bound) return -1;
  if (a == 0.0) return 0;
  // Exact path: grow a non-overlapping expansion term by term.
  double h[kMaxExactTerms + 1];
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double q = t[i];
    for (int k = 0; k < m; ++k) {
      double sum, err;
      two_sum(q, h[k], sum, err);
      h[k] = err;
      q = sum;
    }
    h[m++] = q;
  }
  for (int k = m - 1; k >= 0; --k) {
    if (h[k] > 0.0) return 1;
    if (h[k] < 0.0) return -1;
  }
  return 0;
}

/// Exact sign of a longer sum (at most kMaxLongTerms exact, finite terms) without a filter:
/// for callers whose own filter has already failed, so the sum is known to be small against
/// its terms. Grow-Expansion with zero elimination (Shewchuk's grow_expansion_zeroelim):
/// the expansion keeps only its nonzero components, which stay few when the terms nearly
/// cancel, so a degenerate sum costs about n times that count of TwoSums, not n^2 / 2.
inline constexpr int kMaxLongTerms = 64;

FACTZ_HD int exact_sign_of_long_sum(const double* t, int n) {
  double h[kMaxLongTerms + 1];
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double q = t[i];
    if (q == 0.0) continue;
    int kept = 0;
    for (int k = 0; k < m; ++k) {
      double sum, err;
      two_sum(q, h[k], sum, err);
      if (err != 0.0) h[kept++] = err;
      q = sum;
    }
    if (q != 0.0) h[kept++] = q;
    m = kept;
  }
  return m == 0 ? 0 : (h[m - 1] > 0.0 ? 1 : -1);
}

/// Whether the origin is strictly separated from the points by a coordinate plane: all
/// n values of one component > 0, or all < 0. Then no simplex on these points (triangle
/// or tetrahedron) holds a critical point, perturbation included: Simulation of
/// Simplicity decides as for the points moved by an infinitesimal eps (the origin too),
/// and such moves keep a strict separation. +-0 count as neither sign.
template <class T>
FACTZ_HD bool strictly_one_sided(const T* x, int n) {
  bool pos = true, neg = true;
  for (int k = 0; k < n; ++k) {
    pos = pos && x[k] > T(0);
    neg = neg && x[k] < T(0);
  }
  return pos || neg;
}

}  // namespace factz::detail
