// FaCTz-B in 3D (issue 22): the safe bounds of a Freudenthal tetrahedron, the paper's Eq. 3
// (section 3.3) extended to three components and 4 x 4 determinants, with the half-space
// bound of the 2D frontend (kernels/safe_bound.hpp) extended likewise.
//
// A tetrahedron hands each of its four vertices an absolute bound per component
// (tet_safe_bounds: b[i][c] <= eb); a vertex takes the smallest over its (up to 24)
// tetrahedra, and the block frontend then keeps every component within it (|x' - x| <=
// b[i][c], checked exactly) or stores it exactly. A tetrahedron without a critical point
// keeps none for every such move, by one of these rules, each sufficient on its own:
//
// 0. One sign. When one component c has one strict sign at all four vertices, the origin is
//    strictly separated from the four vectors, and any move with |x' - x| < |x| in component
//    c keeps that (SoS perturbations, infinitesimal, cannot cross a strict separation): c
//    takes kSafetyFactor |x|, the two other components eb. Of several such components the
//    one whose smallest magnitude is largest is kept (its bounds bind least).
// 1. Half space (ours, as in 2D). The origin lies outside the hull of the four vectors iff
//    they lie in an open half-space {n.p > 0}. A move of at most d_i per component at vertex
//    i changes n.p_i by at most d_i |n|_1, so d_i < n.p_i / |n|_1 keeps every n.p_i > 0 (each
//    vertex has its own budget); n is the sum of the four unit vectors (their mean direction).
// 2. Determinants (Eq. 3 in 3D). With p_0..p_3 the four vectors in path order, D the
//    orientation det[[p_i, 1]] (4 x 4) and D_k the same with row k replaced by the origin
//    (0, 0, 0, 1): D_k = (-1)^(k+3) det3(rows != k) and D = D_0 + D_1 + D_2 + D_3 (Laplace
//    along the last column). The origin is inside iff every sign(D_k) = sign(D)
//    (kernels/tet.hpp, with Simulation of Simplicity). If the tetrahedron holds no critical
//    point and both D and some D_k with sign(D_k) != sign(D) are nonzero, their plain signs
//    are the SoS signs, and keeping both strictly keeps sign(D_k) != sign(D): still no
//    critical point. Each D_k is a signed sum of 6 products a b c of three entries (one per
//    vertex and per component), D the sum of those 24. Two ways to keep a determinant
//    P+ - P- (P+, P- the sums of its positive and negative products' magnitudes) nonzero:
//    (a) relative, |x' - x| <= xi |x| everywhere: each product stays within
//        [t (1 - xi)^3, t (1 + xi)^3], so the sign holds while
//        xi < (c+ - c-) / (c+ + c-), c+- = cbrt(P+-)                 (determinant_margin3);
//    (b) absolute, |x' - x| <= d everywhere: a product moves by at most
//        d (|ab| + |ac| + |bc|) + d^2 (|a| + |b| + |c|) + d^3, so the determinant moves by at
//        most q1 d + q2 d^2 + q3 d^3 (sums over its products, zero ones included), which
//        stays below |P+ - P-| when each of the three terms is below a third of it
//        (absolute_margin3).
//    The margin of the tetrahedron is the largest, over such k, of the smaller margin of D
//    and of D_k.
//
// When no rule 0 applies, tet_safe_bounds takes, of rule 1 and the two forms of rule 2, the
// one whose bounds cost least (the sum over the twelve entries of the binary exponents of
// min(eb, bound) / eb: about the bits lost; zero entries, which every bound keeps, left out).
// Rounding: the signs that choose the conditions are exact (orient3_plain, strict
// comparisons of floats); the magnitudes are doubles (a product of three floats rounds once,
// a sum of at most 24 nonnegative terms 23 times: P+- within relative 24 * 2^-53; the dot
// products of rule 1 within 4 * 2^-53 of their spreads). Margins below kMinMargin (1e-9,
// relative to the magnitudes involved) are taken as 0, so a margin kept is within 3e-6 of
// itself (a difference of 1e-9 of the magnitudes, each off by 2.7e-15 of them), and every
// bound is multiplied by kSafetyFactor (0.999), which absorbs that: the bounds returned are
// below the true margins. The exact signature check that follows in the block frontend
// (backend/cpu/block3d_mode.cpp) is the guarantee in any case; these bounds only make it
// rarely find anything to repair.
//
// A tetrahedron holding a critical point has no failing condition and no separating half
// space: its bounds are 0 and its four vertices are stored exactly.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/block_bounds.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/tet.hpp"

namespace factz::detail {

/// Margins below this, relative to the magnitudes involved, are taken as 0 (see the file
/// comment: rounding is then absorbed by kSafetyFactor).
inline constexpr double kMinMargin = 1e-9;

/// xi_safe of a determinant of degree-3 products, P+ - P- (P+, P- >= 0), rule 2a:
/// (c+ - c-) / (c+ + c-) with c = cbrt(P); 0 below kMinMargin.
FACTZ_HD double determinant_margin3(double p_plus, double p_minus) {
  const double cp = cbrt(p_plus), cm = cbrt(p_minus);
  const double denom = cp + cm;
  if (!(denom > 0.0)) return 0.0;
  const double m = (cp > cm ? cp - cm : cm - cp) / denom;
  return m >= kMinMargin ? m : 0.0;
}

/// The absolute margin of rule 2b: the largest d with q1 d, q2 d^2 and q3 d^3 each at most a
/// third of |P+ - P-| (of a lower bound of it: the computed difference less 1e-5 of itself;
/// P+ and P- round by at most 24 * 2^-53 of themselves, which is below 2.7e-6 of the
/// difference once the difference is at least kMinMargin of P+ + P-).
FACTZ_HD double absolute_margin3(double p_plus, double p_minus, double q1, double q2, double q3) {
  const double diff = p_plus > p_minus ? p_plus - p_minus : p_minus - p_plus;
  if (!(diff > 0.0) || !(diff >= kMinMargin * (p_plus + p_minus))) return 0.0;
  const double third = diff * (1.0 - 1e-5) / 3.0;
  double d = q1 > 0.0 ? third / q1 : INFINITY;
  if (q2 > 0.0) d = fmin(d, sqrt(third / q2));
  return fmin(d, cbrt(third / q3));
}

/// The sums of one determinant's products (rule 2): P+, P- and the coefficients q1, q2, q3.
struct DeterminantSums {
  double p_plus = 0.0, p_minus = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0;
  FACTZ_HD void add(double sign, double a, double b, double c) {
    add_term(sign * a * b * c, p_plus, p_minus);
    const double fa = fabs(a), fb = fabs(b), fc = fabs(c);
    q1 += fa * fb + fa * fc + fb * fc;
    q2 += fa + fb + fc;
    q3 += 1.0;
  }
  FACTZ_HD void add(const DeterminantSums& o) {
    p_plus += o.p_plus, p_minus += o.p_minus, q1 += o.q1, q2 += o.q2, q3 += o.q3;
  }
};

/// Rule 1: the budget of each vertex, d[i] = n.p_i / |n|_1 (before kSafetyFactor), or false
/// when the mean direction does not separate the four vectors from the origin (a zero
/// vector included) by at least kMinMargin of their spreads.
template <class T>
FACTZ_HD bool half_space_budgets(const T u[4], const T v[4], const T w[4], double d[4]) {
  double n[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < 4; ++i) {
    const double a = u[i], b = v[i], c = w[i];
    const double len = sqrt(a * a + b * b + c * c);
    if (!(len > 0.0)) return false;
    n[0] += a / len;
    n[1] += b / len;
    n[2] += c / len;
  }
  const double an[3] = {fabs(n[0]), fabs(n[1]), fabs(n[2])}, norm1 = an[0] + an[1] + an[2];
  for (int i = 0; i < 4; ++i) {
    const double a = u[i], b = v[i], c = w[i];
    const double dot = n[0] * a + n[1] * b + n[2] * c;
    const double spread = an[0] * fabs(a) + an[1] * fabs(b) + an[2] * fabs(c);
    if (!(dot > 0.0) || !(dot >= kMinMargin * spread)) return false;
    d[i] = dot / norm1;
  }
  return true;
}

/// Rule 2: the relative margin xi and the absolute margin d of a tetrahedron (before
/// kSafetyFactor), both 0 when it holds a critical point or every failing condition is a tie.
template <class T>
FACTZ_HD void determinant_margins(const T u[4], const T v[4], const T w[4], double& xi, double& d) {
  xi = d = 0.0;
  // Signs, exactly: D and each D_k (orient3_plain, the 4 x 4 determinant, with row k the
  // origin for D_k; indices play no part in a plain determinant).
  SosPoint3Of<T> p[4];
  for (int i = 0; i < 4; ++i) p[i] = {u[i], v[i], w[i], i};
  const int sd = orient3_plain(p);
  if (sd == 0) return;
  // Magnitudes: D_k = (-1)^(k+3) det3(rows a < b < c, the three others), det3 expanded in its
  // 6 products; D the sum of the four.
  DeterminantSums dk[4], dall;
  for (int k = 0; k < 4; ++k) {
    int r[3], m = 0;
    for (int i = 0; i < 4; ++i)
      if (i != k) r[m++] = i;
    const double s = (k % 2 == 1) ? 1.0 : -1.0;  // (-1)^(k+3)
    const double a[3] = {u[r[0]], v[r[0]], w[r[0]]}, b[3] = {u[r[1]], v[r[1]], w[r[1]]},
                 c[3] = {u[r[2]], v[r[2]], w[r[2]]};
    dk[k].add(s, a[0], b[1], c[2]);
    dk[k].add(-s, a[0], b[2], c[1]);
    dk[k].add(-s, a[1], b[0], c[2]);
    dk[k].add(s, a[1], b[2], c[0]);
    dk[k].add(s, a[2], b[0], c[1]);
    dk[k].add(-s, a[2], b[1], c[0]);
    dall.add(dk[k]);
  }
  double d_rel = -1.0, d_abs = -1.0;  // D's margins, computed on first use
  for (int k = 0; k < 4; ++k) {
    SosPoint3Of<T> q[4] = {p[0], p[1], p[2], p[3]};
    q[k] = {T(0), T(0), T(0), k};
    const int sk = orient3_plain(q);
    if (sk == 0 || sk == sd) continue;  // a tie (no margin), or the condition holds
    if (d_rel < 0.0) {
      d_rel = determinant_margin3(dall.p_plus, dall.p_minus);
      d_abs = absolute_margin3(dall.p_plus, dall.p_minus, dall.q1, dall.q2, dall.q3);
    }
    const double r = fmin(d_rel, determinant_margin3(dk[k].p_plus, dk[k].p_minus));
    const double a = fmin(d_abs, absolute_margin3(dk[k].p_plus, dk[k].p_minus, dk[k].q1, dk[k].q2, dk[k].q3));
    xi = r > xi ? r : xi;
    d = a > d ? a : d;
  }
}

/// The cost of a tetrahedron's bounds b[i][c] (at most eb) for the choice between rules: the
/// sum over its nonzero entries x[i][c] of the binary exponent of b / eb (0 at eb; -1000 for a
/// bound of 0).
template <class T>
FACTZ_HD int bound_cost(const T* const x[3], const T b[4][3], T eb) {
  const int e = ilogb(double(eb));  // a float's exponent is its double's
  int cost = 0;
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) {
      if (x[c][i] == T(0)) continue;
      cost += b[i][c] > T(0) ? (b[i][c] < eb ? ilogb(double(b[i][c])) - e : 0) : -1000;
    }
  return cost;
}

/// The one-sign component of rule 0 among the values x[c][0..n) (c = u, v, w): the component
/// with one strict sign at all n whose smallest magnitude is largest; -1 when none.
template <class T>
FACTZ_HD int one_sign_component(const T* const x[3], int n) {
  int best = -1;
  T best_min = T(-1);
  for (int c = 0; c < 3; ++c) {
    if (!strictly_one_sided(x[c], n)) continue;
    T m = x[c][0] < T(0) ? -x[c][0] : x[c][0];
    for (int i = 1; i < n; ++i) {
      const T a = x[c][i] < T(0) ? -x[c][i] : x[c][i];
      m = a < m ? a : m;
    }
    if (m > best_min) {
      best_min = m;
      best = c;
    }
  }
  return best;
}

/// min(eb, kSafetyFactor * m) rounded down to a float (m >= 0): a bound below the margin m.
FACTZ_HD float safe_fraction(double m, float eb) {
  const double b = kSafetyFactor * m;
  return b >= double(eb) ? eb : round_down(b);
}

/// safe_fraction of a float64 field: the double itself (an estimate: the float64 block mode
/// trusts only its exact check, backend/cpu/block3d_mode.cpp); 0 for a NaN margin (an
/// overflow in the magnitudes).
FACTZ_HD double safe_fraction(double m, double eb) {
  const double b = kSafetyFactor * m;
  if (b != b) return 0.0;
  return b >= eb ? eb : b;
}

/// The absolute bounds b[i][c] (<= eb) a tetrahedron hands its vertices (values u, v, w in
/// path order), by the rules of the file comment. Returns whether the tetrahedron is proven
/// critical-point free (else every bound is 0: it holds a critical point, or only ties decide).
/// T: float, or double for float64 fields, whose bounds are estimates (the magnitudes may
/// overflow or underflow in double); the exact check after quantization is what guarantees.
template <class T>
FACTZ_HD bool tet_safe_bounds(const T u[4], const T v[4], const T w[4], T eb, T b[4][3]) {
  const T* const x[3] = {u, v, w};
  const int one = one_sign_component(x, 4);
  if (one >= 0) {  // rule 0
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) b[i][c] = c == one ? safe_fraction(fabs(double(x[c][i])), eb) : eb;
    return true;
  }
  // Rule 1; enough when it gives every entry eb.
  double hs[4];
  const bool half_space = half_space_budgets(u, v, w, hs);
  bool all_eb = half_space;
  for (int i = 0; i < 4; ++i) {
    const T d = half_space ? safe_fraction(hs[i], eb) : T(0);
    all_eb = all_eb && d == eb;
    b[i][0] = b[i][1] = b[i][2] = d;
  }
  if (all_eb) return true;
  // Rule 2, in its two forms; the cheapest of the three wins (rule 1 on a tie).
  double xi, d;
  determinant_margins(u, v, w, xi, d);
  if (!half_space && !(xi > 0.0)) return false;  // then d is 0 too
  int best = half_space ? bound_cost(x, b, eb) : -1000000;
  T r[4][3], a[4][3];
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) {
      r[i][c] = safe_fraction(xi * fabs(double(x[c][i])), eb);
      a[i][c] = safe_fraction(d, eb);
    }
  const int cost_r = bound_cost(x, r, eb), cost_a = bound_cost(x, a, eb);
  const T(*pick)[3] = nullptr;
  if (cost_r > best) best = cost_r, pick = r;
  if (cost_a > best) pick = a;
  if (pick)
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) b[i][c] = pick[i][c];
  return true;
}

/// The safe bounds of the six tetrahedra of the cube at corner index `base` (x, y, z steps 1,
/// nx, nx * ny) folded into the smallest bound of each of its eight corners per component
/// (corner j = base + the steps of the bits of j): out[j][c] = min over the cube's
/// tetrahedra through j (eb where none constrains). Returns the cube's bits of proven
/// critical-point-free tetrahedra (bit t: tet_safe_bounds said so). A cube with a one-sign
/// component at all eight corners (one_sign_component of the cube) gives every tetrahedron
/// rule 0 with that component at once (each of them is one-signed in it). `off_mesh`: the
/// cube's tetrahedra that touch a missing vertex (cube_masked_tets), which are not part of
/// the mesh: they constrain nothing (eb) and are reported free (the exact check skips them);
/// the values of a missing vertex (the filled working copy's) are never what a bound protects.
template <class T>
FACTZ_HD uint8_t cube_safe_bounds(const T* u, const T* v, const T* w, int64_t base, int64_t nx, int64_t ny, T eb,
                                  T out[8][3], uint8_t off_mesh = 0) {
  const int64_t step[3] = {1, nx, nx * ny};
  T cu[8], cv[8], cw[8];
  for (int j = 0; j < 8; ++j) {
    const int64_t at = base + (j & 1) * step[0] + ((j >> 1) & 1) * step[1] + ((j >> 2) & 1) * step[2];
    cu[j] = u[at];
    cv[j] = v[at];
    cw[j] = w[at];
  }
  const T* const cube[3] = {cu, cv, cw};
  const int one = off_mesh ? -1 : one_sign_component(cube, 8);
  if (one >= 0) {
    for (int j = 0; j < 8; ++j)
      for (int c = 0; c < 3; ++c) out[j][c] = c == one ? safe_fraction(fabs(double(cube[c][j])), eb) : eb;
    return 0x3f;
  }
  for (int j = 0; j < 8; ++j) out[j][0] = out[j][1] = out[j][2] = eb;
  uint8_t free_bits = 0;
  for (int t = 0; t < 6; ++t) {
    if ((off_mesh >> t) & 1) {
      free_bits |= uint8_t(1 << t);
      continue;
    }
    const int a0 = tet_axis(t, 0), a1 = tet_axis(t, 1);
    const int corner[4] = {0, 1 << a0, (1 << a0) | (1 << a1), 7};
    T tu[4], tv[4], tw[4];
    for (int k = 0; k < 4; ++k) {
      tu[k] = cu[corner[k]];
      tv[k] = cv[corner[k]];
      tw[k] = cw[corner[k]];
    }
    T b[4][3];
    if (tet_safe_bounds(tu, tv, tw, eb, b)) free_bits |= uint8_t(1 << t);
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c) out[corner[k]][c] = b[k][c] < out[corner[k]][c] ? b[k][c] : out[corner[k]][c];
  }
  return free_bits;
}

}  // namespace factz::detail
