// The exact topology of float64 3D vector fields (issue 22 with issue 18's values): the
// orientation of four points of the (u, v, w) space with Simulation of Simplicity and the type
// of a tetrahedron's linear interpolant, for any finite doubles (subnormals, values near
// DBL_MAX, both in one tetrahedron). The contract and its templates are those of tet.hpp
// (orient3_sos, tet_contains_origin, tet_signature, tet_inside_verdict pick the overloads
// here by argument type), so float and double fields get the same decisions: for doubles
// that are floats both give the same sign (tests/test_tet64_predicates.cpp checks it).
//
// Exactness. Every finite double is x = +-M 2^q with integers M < 2^53 and q in
// [-1074, 971]. For the values a predicate reads let qmin and qmax be the smallest and
// largest q of the nonzero ones and spread = qmax - qmin <= 2045. Then X = x 2^-qmin is an
// integer with |X| < 2^(53 + spread) (aligned_int), and every predicate is a homogeneous
// polynomial in the coordinates (orientation: degree 3 in each term of the perturbed 4 x 4
// determinant; type: Jacobian entries of degree 1, tr, minors, det of degree 1, 2, 3, the
// Hurwitz determinant of degree 3, the discriminant of degree 6), so its sign on the X equals
// its sign on the x (a positive factor 2^(-k qmin)). With B = 54 + spread bounding the bits
// of a difference of two X:
//  - orientation: det3 of differences, 6 products of three, < 2^(3B + 3); an SoS minor, a
//    4 x 4 determinant with ones and unit rows, at most 24 products of three X (< 2^(B - 1)),
//    below 2^(3B + 2); every partial result of det3 and of the Laplace expansion is a sub-sum
//    of these. Two's complement needs 3B + 4 bits: WideInt<28> (896 bits) while
//    spread <= kNarrowSpread3 (B <= 294), WideInt<200> (6400 >= 3 * 2099 + 4) always.
//  - type: J < 2^B, tr < 2^(B+2), minors < 2^(2B+3), det < 2^(3B+3), a2 a1 < 2^(3B+5),
//    Hurwitz < 2^(3B+6), and the discriminant's five terms 18 a2 a1 a0 < 2^(6B+13),
//    4 a2^3 a0, 4 a1^3, 27 a0^2 < 2^(6B+11), a2^2 a1^2 < 2^(6B+10): |disc| < 2^(6B+14), and
//    6B + 15 bits suffice: WideInt<56> (1792 bits) while spread <= kNarrowSpread6 (B <= 296),
//    WideInt<400> (12800 >= 6 * 2099 + 15) always.
// Real fields have a spread of a few dozen bits in a tetrahedron, so the narrow integers (the
// float kernel's) serve almost every call; the wide ones handle subnormals beside 1e300.
//
// The orientation's double filter (orient3_plain for doubles) is tet.hpp's with underflow and
// overflow accounted for; its proof is at the function. Nothing here allocates; the wide
// stage uses up to about 40 KB of stack (host code; a CUDA mirror would want the narrow
// stage only, or a larger stack).
#pragma once

#include <cstdint>

#include "kernels/exact64.hpp"
#include "kernels/tet.hpp"
#include "kernels/wide_int.hpp"

namespace factz::detail {

using SosPoint3D64 = SosPoint3Of<double>;

/// Spreads up to which the narrow integers hold the orientation (3B + 4 <= 896) and the type
/// (6B + 15 <= 1792); see the file comment.
inline constexpr int kNarrowSpread3 = 240;
inline constexpr int kNarrowSpread6 = 240;

/// The exponent range of the nonzero values among x[0..n): false when all are zero.
FACTZ_HD bool exponent_range64(const double* x, int n, int& qmin, int& qmax) {
  bool any = false;
  for (int i = 0; i < n; ++i) {
    int q;
    bool neg;
    if (integer_significand(x[i], q, neg) == 0) continue;
    if (!any || q < qmin) qmin = q;
    if (!any || q > qmax) qmax = q;
    any = true;
  }
  return any;
}

/// x 2^-q0 as an integer (q0 at most the q of x when x != 0): M 2^(q - q0), exact when it
/// fits N limbs, which the callers prove (file comment).
template <int N>
FACTZ_HD WideInt<N> aligned_int(double x, int q0) {
  int q;
  bool neg;
  const uint64_t m = integer_significand(x, q, neg);
  WideInt<N> r = WideInt<N>::zero();
  if (m == 0) return r;
  const int shift = q - q0, word = shift / 32, bit = shift % 32;
  const uint32_t v0 = uint32_t(m), v1 = uint32_t(m >> 32);  // v1 < 2^21
  const uint32_t s[3] = {v0 << bit, (v1 << bit) | (bit != 0 ? v0 >> (32 - bit) : 0u),
                         bit != 0 ? v1 >> (32 - bit) : 0u};
  for (int k = 0; k < 3; ++k)
    if (word + k < N) r.w[word + k] = s[k];
  return neg ? -r : r;
}

/// The twelve coordinates of four points, for exponent_range64.
FACTZ_HD void coordinates64(const SosPoint3D64 p[4], double c[12]) {
  for (int i = 0; i < 4; ++i) {
    c[3 * i] = p[i].x;
    c[3 * i + 1] = p[i].y;
    c[3 * i + 2] = p[i].z;
  }
}

/// orient3_plain's exact stage for doubles in N limbs, coordinates aligned at 2^q0.
template <int N>
FACTZ_HD int orient3_wide64(const SosPoint3D64 p[4], int q0) {
  WideInt<N> r[3][3];
  for (int i = 1; i < 4; ++i) {
    r[i - 1][0] = aligned_int<N>(p[i].x, q0) - aligned_int<N>(p[0].x, q0);
    r[i - 1][1] = aligned_int<N>(p[i].y, q0) - aligned_int<N>(p[0].y, q0);
    r[i - 1][2] = aligned_int<N>(p[i].z, q0) - aligned_int<N>(p[0].z, q0);
  }
  return -det3(r[0], r[1], r[2]).sign();
}

FACTZ_HD_COLD int orient3_exact64(const SosPoint3D64 p[4]) {
  double c[12];
  coordinates64(p, c);
  int qmin = 0, qmax = 0;
  if (!exponent_range64(c, 12, qmin, qmax)) return 0;
  return qmax - qmin <= kNarrowSpread3 ? orient3_wide64<28>(p, qmin) : orient3_wide64<200>(p, qmin);
}

/// Exact sign of det[[p0, 1], [p1, 1], [p2, 1], [p3, 1]] for doubles (no perturbation).
///
/// Filter: tet.hpp's evaluation in double, with the standard model extended to underflow
/// (fl(a * b) = ab(1 + d) + e, |d| <= u = 2^-53, |e| <= eta = 2^-1075; additions and
/// subtractions have e = 0, and the differences d_ij = fl(p_ij - p_0j) are D_ij (1 + d)).
/// If perm and det are finite nothing overflowed, and the computed det differs from the exact
/// one by at most gamma_10 P* (P* the exact permanent, the float kernel's count of roundings)
/// plus the underflow terms: each product m of two differences carries e, multiplied by a
/// |d_0j| and two more roundings, and each outer product its own e: at most
/// (S 2 eta (1 + u)^4 + 3 eta (1 + u)^2), S = sum_j |d_0j|. The computed perm is at least
/// (1 - gamma_10) P* minus the same underflow terms. So
///   |det - exact| <= 16 u perm + (S + 2) 4 eta,
/// and the bound used, 32 u perm + (S + 2) 2^-1060 evaluated in double, exceeds it after
/// its own roundings (relative u each, or eta once in the subnormal range, far below the
/// slack of 2^13 in the second term). A zero computed perm does not mean a zero determinant
/// here (products may underflow to zero): the determinant is exactly zero iff each of its six
/// monomials has a zero factor (a difference is zero iff its exact value is); otherwise, and
/// whenever the filter cannot decide, the exact stage (orient3_exact64) answers.
FACTZ_HD int orient3_plain(const SosPoint3D64 p[4]) {
  double d[3][3];
  for (int i = 1; i < 4; ++i) {
    d[i - 1][0] = p[i].x - p[0].x;
    d[i - 1][1] = p[i].y - p[0].y;
    d[i - 1][2] = p[i].z - p[0].z;
  }
  const double m0 = d[1][1] * d[2][2], m1 = d[1][2] * d[2][1];
  const double m2 = d[1][0] * d[2][2], m3 = d[1][2] * d[2][0];
  const double m4 = d[1][0] * d[2][1], m5 = d[1][1] * d[2][0];
  const double det = d[0][0] * (m0 - m1) - d[0][1] * (m2 - m3) + d[0][2] * (m4 - m5);
  const double a0 = d[0][0] < 0 ? -d[0][0] : d[0][0], a1 = d[0][1] < 0 ? -d[0][1] : d[0][1],
               a2 = d[0][2] < 0 ? -d[0][2] : d[0][2];
  const double perm = a0 * ((m0 < 0 ? -m0 : m0) + (m1 < 0 ? -m1 : m1)) +
                      a1 * ((m2 < 0 ? -m2 : m2) + (m3 < 0 ? -m3 : m3)) +
                      a2 * ((m4 < 0 ? -m4 : m4) + (m5 < 0 ? -m5 : m5));
  constexpr double kMax = 1.7976931348623157e308;
  if (perm <= kMax && det <= kMax && det >= -kMax) {  // finite (NaN fails too)
    const double bound = perm * (32.0 * 1.1102230246251565e-16) + (a0 + a1 + a2 + 2.0) * 0x1p-1060;
    if (det > bound) return -1;
    if (det < -bound) return 1;
    if (perm == 0.0) {
      // Monomials d0j d1a d2b of det3: zero iff a factor is zero.
      const int cols[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      bool all_zero = true;
      for (int s = 0; s < 6 && all_zero; ++s)
        all_zero = d[0][cols[s][0]] == 0.0 || d[1][cols[s][1]] == 0.0 || d[2][cols[s][2]] == 0.0;
      if (all_zero) return 0;
    }
  }
  return orient3_exact64(p);
}

/// sos_minor_sign's evaluation for doubles in N limbs, coordinates aligned at 2^q0 (a
/// positive scaling of the three coordinate columns: the sign is that of the minor).
template <int N>
FACTZ_HD int sos_minor_wide64(const SosPoint3D64 p[4], int count, const int rows[3], const int cols[3], int q0) {
  using Int = WideInt<N>;
  Int m[4][4];
  for (int r = 0; r < 4; ++r) {
    m[r][0] = aligned_int<N>(p[r].x, q0);
    m[r][1] = aligned_int<N>(p[r].y, q0);
    m[r][2] = aligned_int<N>(p[r].z, q0);
    m[r][3] = Int::from_int(1);
  }
  for (int k = 0; k < count; ++k)
    for (int c = 0; c < 4; ++c) m[rows[k]][c] = Int::from_int(c == cols[k] ? 1 : 0);
  Int det = Int::zero();
  for (int r = 0; r < 4; ++r) {
    if (m[r][3].sign() == 0) continue;
    Int rest[3][3];
    for (int i = 0, k = 0; i < 4; ++i) {
      if (i == r) continue;
      for (int c = 0; c < 3; ++c) rest[k][c] = m[i][c];
      ++k;
    }
    const Int minor = m[r][3] * det3(rest[0], rest[1], rest[2]);
    det = (r % 2 == 1) ? det + minor : det - minor;  // (-1)^(r + 3)
  }
  return det.sign();
}

/// The coefficient of one Simulation-of-Simplicity monomial (tet.hpp's sos_minor_sign) for
/// doubles.
FACTZ_HD_COLD int sos_minor_sign(const SosPoint3D64 p[4], int count, const int rows[3], const int cols[3]) {
  double c[12];
  coordinates64(p, c);
  int qmin = 0, qmax = 0;
  if (!exponent_range64(c, 12, qmin, qmax)) qmin = qmax = 0;  // all zero: any alignment
  return qmax - qmin <= kNarrowSpread3 ? sos_minor_wide64<28>(p, count, rows, cols, qmin)
                                       : sos_minor_wide64<200>(p, count, rows, cols, qmin);
}

/// tet_type for doubles in N limbs: Jacobian entries from values aligned at 2^q0.
template <int N>
FACTZ_HD CpType3 tet_type_wide64(const double u[4], const double v[4], const double w[4], const int axes[3], int q0) {
  WideInt<N> J[3][3];  // J[component][axis]
  const double* f[3] = {u, v, w};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) J[c][axes[k]] = aligned_int<N>(f[c][k + 1], q0) - aligned_int<N>(f[c][k], q0);
  return tet_type_of_jacobian(J);
}

/// Type of the linear interpolant of a float64 tetrahedron (tet.hpp's tet_type for doubles):
/// the same exact signs, in the narrow integers when the values' spread allows.
FACTZ_HD_COLD CpType3 tet_type(const double u[4], const double v[4], const double w[4], const int axes[3]) {
  double c[12];
  for (int k = 0; k < 4; ++k) {
    c[3 * k] = u[k];
    c[3 * k + 1] = v[k];
    c[3 * k + 2] = w[k];
  }
  int qmin = 0, qmax = 0;
  if (!exponent_range64(c, 12, qmin, qmax)) return CpType3::degenerate;  // J = 0
  return qmax - qmin <= kNarrowSpread6 ? tet_type_wide64<56>(u, v, w, axes, qmin)
                                       : tet_type_wide64<400>(u, v, w, axes, qmin);
}

template <>
struct TetType<double> {
  FACTZ_HD static CpType3 of(const double u[4], const double v[4], const double w[4], const int axes[3]) {
    return tet_type(u, v, w, axes);
  }
};

}  // namespace factz::detail
