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
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/signature.hpp"

namespace factz::detail {

inline constexpr double kSafetyFactor = 0.999;

/// xi_safe of a determinant given its positive and negative product magnitudes.
FACTZ_HD double determinant_margin(double p_plus, double p_minus) {
  const double a = sqrt(p_plus), b = sqrt(p_minus);
  const double sum = a + b;
  if (!(sum > 0.0)) return 0.0;
  const double d = a > b ? a - b : b - a;
  return d / sum;
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
FACTZ_HD double half_plane_margin(const float u[3], const float v[3]) {
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

/// Safe relative bound of a triangle, or 0 if it holds a critical point: the larger of
/// the paper's Eq. 3 bound and the half-plane bound (each is sufficient on its own).
/// u, v, idx are the vertex values and global indices in contract order.
FACTZ_HD double triangle_safe_bound(const int64_t idx[3], const float u[3], const float v[3]) {
  const SosPoint p[3] = {{u[0], v[0], idx[0]}, {u[1], v[1], idx[1]}, {u[2], v[2], idx[2]}};
  const SosPoint o{0.0f, 0.0f, -1};
  const int s = orient_sos(p[0], p[1], p[2]);
  double dp = 0.0, dm = 0.0;
  double best = 0.0;
  bool d_done = false;
  double d_margin = 0.0;
  for (int k = 0; k < 3; ++k) {
    SosPoint q[3] = {p[0], p[1], p[2]};
    q[k] = o;
    if (orient_sos(q[0], q[1], q[2]) == s) continue;  // condition k holds
    if (!d_done) {
      for (int a = 0; a < 3; ++a) {
        const int b = (a + 1) % 3;
        add_term(double(u[a]) * double(v[b]), dp, dm);
        add_term(-(double(u[b]) * double(v[a])), dp, dm);
      }
      d_margin = determinant_margin(dp, dm);
      d_done = true;
    }
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    double mp = 0.0, mm = 0.0;
    add_term(double(u[a]) * double(v[b]), mp, mm);
    add_term(-(double(u[b]) * double(v[a])), mp, mm);
    const double m_margin = determinant_margin(mp, mm);
    const double xi = m_margin < d_margin ? m_margin : d_margin;
    if (xi > best) best = xi;
  }
  // A triangle holding a critical point has no open half-plane either: h is 0 then.
  const double h = half_plane_margin(u, v);
  if (h > best) best = h;
  return best * kSafetyFactor;
}

}  // namespace factz::detail
