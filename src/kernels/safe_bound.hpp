// FaCTz-B per-triangle safe relative bound (paper Eq. 3, after Liang et al. 2023).
//
// A triangle without a critical point has at least one failing barycentric condition:
// some m_k = u_a v_b - u_b v_a ((a, b) = (k+1, k+2) mod 3) whose sign differs from that
// of D = m_0 + m_1 + m_2 (these are exactly the SoS orientations of section 3). If every
// value x moves to within x(1 +- xi), each degree-two product moves within a factor
// [(1-xi)^2, (1+xi)^2], so a determinant P+ - P- (P+/P- the magnitudes of its positive /
// negative terms) keeps its sign while sqrt(P+)(1-xi) > sqrt(P-)(1+xi), i.e. while
//   xi < xi_safe = |sqrt(P+) - sqrt(P-)| / (sqrt(P+) + sqrt(P-)).
// Keeping the signs of both m_k and D keeps the triangle critical-point free. The bound
// is sufficient, not exact; exact ties (a zero determinant, resolved symbolically) give 0.
// Rounding in computing xi is absorbed by kSafetyFactor and, in any case, by the exact
// signature check that follows on the real reconstruction.
//
// float64 fields (issue 18) take the same functions with T = double: the margins are
// computed in double as for floats (products of doubles round there, which only moves a
// margin by relative 2^-52, far inside kSafetyFactor), the signs that choose between the
// conditions are exact (exact64.hpp), and the block frontend then checks every triangle's
// signature exactly, so no guarantee rests on these estimates.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/exact64.hpp"
#include "kernels/orient64.hpp"
#include "kernels/signature.hpp"

namespace factz::detail {

inline constexpr double kSafetyFactor = 0.999;

/// xi_safe of a determinant P+ - P- with P+, P- >= 0. Uses the identity
/// (sqrt(P+) - sqrt(P-)) / (sqrt(P+) + sqrt(P-)) = |P+ - P-| / (P+ + P- + 2 sqrt(P+ P-)),
/// one square root instead of two.
FACTZ_HD double determinant_margin(double p_plus, double p_minus) {
  const double denom = p_plus + p_minus + 2.0 * sqrt(p_plus * p_minus);
  if (!(denom > 0.0)) return 0.0;
  const double d = p_plus > p_minus ? p_plus - p_minus : p_minus - p_plus;
  return d / denom;
}

/// Accumulates a product term into (P+, P-).
FACTZ_HD void add_term(double t, double& p_plus, double& p_minus) {
  if (t > 0.0) p_plus += t;
  else p_minus -= t;
}

/// Second sufficient condition (ours, see docs/architecture.md): the origin lies strictly
/// outside the hull of the three vectors iff they lie in an open half-plane {w.p > 0}.
/// A relative perturbation xi moves w.p_i by at most xi (|w_x u_i| + |w_y v_i|), so
///   xi < min_i w.p_i / (|w_x u_i| + |w_y v_i|)
/// keeps them there (SoS perturbations are infinitesimal and cannot leave an open
/// half-plane). w is the bisector of the two vectors with the widest angle between them.
/// Near-parallel flow, where the determinants of Eq. 3 are tiny, gets a large bound here.
/// T: float, or double (then the products below round; see the file comment).
template <class T>
FACTZ_HD double half_plane_margin(const T u[3], const T v[3]) {
  // w = (+-1, 0) or (0, +-1): when one component has the same strict sign at all three
  // vertices, the margin is exactly 1 (a relative change below 1 flips no sign), the
  // largest any triangle can have. This settles most triangles of a smooth field cheaply.
  const bool u_pos = (u[0] > T(0)) & (u[1] > T(0)) & (u[2] > T(0));
  const bool u_neg = (u[0] < T(0)) & (u[1] < T(0)) & (u[2] < T(0));
  const bool v_pos = (v[0] > T(0)) & (v[1] > T(0)) & (v[2] > T(0));
  const bool v_neg = (v[0] < T(0)) & (v[1] < T(0)) & (v[2] < T(0));
  if (u_pos | u_neg | v_pos | v_neg) return 1.0;
  double nx[3], ny[3];
  for (int i = 0; i < 3; ++i) {
    const double len = sqrt(double(u[i]) * double(u[i]) + double(v[i]) * double(v[i]));
    if (!(len > 0.0)) return 0.0;
    nx[i] = double(u[i]) / len;
    ny[i] = double(v[i]) / len;
  }
  int a = 0, b = 1;
  double widest = nx[0] * nx[1] + ny[0] * ny[1];
  const double d02 = nx[0] * nx[2] + ny[0] * ny[2], d12 = nx[1] * nx[2] + ny[1] * ny[2];
  if (d02 < widest) { widest = d02; a = 0; b = 2; }
  if (d12 < widest) { a = 1; b = 2; }
  const double wx = nx[a] + nx[b], wy = ny[a] + ny[b];
  const double awx = wx < 0.0 ? -wx : wx, awy = wy < 0.0 ? -wy : wy;
  double best = 1.0;
  for (int i = 0; i < 3; ++i) {
    const double dot = wx * double(u[i]) + wy * double(v[i]);
    const double spread = awx * (u[i] < 0 ? -double(u[i]) : double(u[i])) +
                          awy * (v[i] < 0 ? -double(v[i]) : double(v[i]));
    if (!(dot > 0.0) || !(spread > 0.0)) return 0.0;
    const double r = dot / spread;
    if (r < best) best = r;
  }
  return best;
}

/// Exact sign of D = m_0 + m_1 + m_2 from its six product terms: exact in double for floats.
FACTZ_HD int eq3_determinant_sign(const float*, const float*, const double terms[6]) {
  return exact_sign_of_sum(terms, 6);
}
/// For doubles the rounded terms are not the products: the sign comes from the values.
FACTZ_HD int eq3_determinant_sign(const double* u, const double* v, const double*) {
  ProductTerm t[6];
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    t[2 * k] = ProductTerm{u[a], v[b], 0};
    t[2 * k + 1] = ProductTerm{-u[b], v[a], 0};
  }
  return exact_sign_of_products(t, 6);
}

/// Exact sign of m_k = pos - neg (pos = u_a v_b, neg = u_b v_a): for floats the two exact
/// double products compare; for doubles cross_exact64 decides on the values.
FACTZ_HD int eq3_condition_sign(const float*, const float*, int, double pos, double neg) {
  return pos > neg ? 1 : (pos < neg ? -1 : 0);
}
FACTZ_HD int eq3_condition_sign(const double* u, const double* v, int k, double, double) {
  const int a = (k + 1) % 3, b = (k + 2) % 3;
  return cross_exact64(u[a], v[a], u[b], v[b]);
}

/// Paper Eq. 3 for a critical-point-free triangle: the largest, over failing conditions
/// k (sign m_k != sign D), of min(xi_safe(m_k), xi_safe(D)). Zero determinants (ties
/// resolved symbolically) have no margin. Signs are exact (products of floats are exact
/// in double; D's sign comes from exact_sign_of_sum; for doubles from exact64.hpp).
template <class T>
FACTZ_HD double eq3_margin(const T u[3], const T v[3]) {
  double pos[3], neg[3];  // pos[k] = u_a v_b, neg[k] = u_b v_a with (a, b) = (k+1, k+2)
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    pos[k] = double(u[a]) * double(v[b]);
    neg[k] = double(u[b]) * double(v[a]);
  }
  const double terms[6] = {pos[0], -neg[0], pos[1], -neg[1], pos[2], -neg[2]};
  const int sd = eq3_determinant_sign(u, v, terms);
  if (sd == 0) return 0.0;
  double dp = 0.0, dm = 0.0;
  for (int t = 0; t < 6; ++t) add_term(terms[t], dp, dm);
  double best = 0.0;
  double d_margin = -1.0;  // computed on first use
  for (int k = 0; k < 3; ++k) {
    const int sk = eq3_condition_sign(u, v, k, pos[k], neg[k]);
    if (sk == 0 || sk == sd) continue;  // tie (no margin) or condition holds
    if (d_margin < 0.0) d_margin = determinant_margin(dp, dm);
    double mp = 0.0, mm = 0.0;
    add_term(pos[k], mp, mm);
    add_term(-neg[k], mp, mm);
    const double m_margin = determinant_margin(mp, mm);
    const double xi = m_margin < d_margin ? m_margin : d_margin;
    if (xi > best) best = xi;
  }
  return best;
}

/// Safe relative bound of a critical-point-free triangle (0 when it holds one): the
/// larger of the paper's Eq. 3 bound and the half-plane bound, each sufficient on its
/// own, times kSafetyFactor. u, v are the vertex values in contract order.
template <class T>
FACTZ_HD double triangle_safe_bound(const T u[3], const T v[3], double h) {
  const double e = eq3_margin(u, v);
  return (e > h ? e : h) * kSafetyFactor;
}

/// triangle_safe_bound with the half-plane margin computed here (0 when the origin is in the
/// closed hull); callers that have it already pass it (capped_safe_bound).
template <class T>
FACTZ_HD double triangle_safe_bound(const T u[3], const T v[3]) {
  return triangle_safe_bound(u, v, half_plane_margin(u, v));
}

}  // namespace factz::detail
