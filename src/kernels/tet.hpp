// The exact topology of 3D vector fields (issue 22; docs/architecture.md, "3D vector
// fields"): the Freudenthal tetrahedra of a grid, the orientation of four points of the
// (u, v, w) space with Simulation of Simplicity, the inside test of the origin, and the
// type of a tetrahedron's linear interpolant from the exact signs of its characteristic
// polynomial. Host and device; no decision rests on a rounded value.
#pragma once

#include <cmath>
#include <cstdint>

#include "factz/cp_type.hpp"
#include "kernels/exact.hpp"
#include "kernels/hd.hpp"
#include "kernels/orient.hpp"
#include "kernels/wide_int.hpp"

namespace factz::detail {

// ---- Mesh ------------------------------------------------------------------------------

/// The axes (0 = x, 1 = y, 2 = z) a tetrahedron's path walks from its cube's corner a to
/// a + (1, 1, 1): tetrahedron t of a cube has vertices a, a + e[p], a + e[p] + e[q],
/// a + (1, 1, 1) with (p, q, r) = kTetAxes[t].
inline constexpr int kTetAxes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/// kTetAxes[t][k] computed (device code cannot index a host constant): the first axis is
/// t / 2, the second the smaller (t even) or larger (t odd) of the two others.
FACTZ_HD int tet_axis(int t, int k) {
  const int first = t / 2, lo = first == 0 ? 1 : 0, hi = first == 2 ? 1 : 2;
  const int second = t % 2 == 0 ? lo : hi;
  return k == 0 ? first : (k == 1 ? second : 3 - first - second);
}

FACTZ_HD int64_t tet_count(int64_t nx, int64_t ny, int64_t nz) {
  return nx < 2 || ny < 2 || nz < 2 ? 0 : 6 * (nx - 1) * (ny - 1) * (nz - 1);
}

/// The tetrahedra of a cube (bit t) with a vertex among `corners` (bit j: corner j, which
/// adds one step along each axis whose bit is set in j). Corners 0 and 7 lie in all six;
/// corner e_p in those whose first axis is p, corner (1, 1, 1) - e_r in those whose last is r.
FACTZ_HD uint8_t tets_touching(unsigned corners) {
  if (corners == 0) return 0;
  if (corners & 0x81) return 0x3f;
  uint8_t tets = 0;
  for (int t = 0; t < 6; ++t) {
    const int a0 = tet_axis(t, 0), a1 = tet_axis(t, 1);
    if (corners & ((1u << (1 << a0)) | (1u << ((1 << a0) | (1 << a1))))) tets |= uint8_t(1 << t);
  }
  return tets;
}

/// The tetrahedra of the cube whose corner 0 is vertex `base` that touch a missing vertex
/// (`missing`: one byte per vertex, nonzero = missing; null = none): they are not part of the
/// mesh (docs/architecture.md, "Masks"), hold no critical point and constrain nothing.
FACTZ_HD uint8_t cube_masked_tets(const uint8_t* missing, int64_t base, int64_t nx, int64_t ny) {
  if (!missing) return 0;
  unsigned corners = 0;
  for (int j = 0; j < 8; ++j)
    if (missing[base + (j & 1) + ((j >> 1) & 1) * nx + ((j >> 2) & 1) * nx * ny]) corners |= 1u << j;
  return tets_touching(corners);
}

/// Vertex indices (x fastest: (z * ny + y) * nx + x) of tetrahedron `tet` in path order,
/// and its axes. tet = 6 * cell + t, cell = (z * (ny - 1) + y) * (nx - 1) + x.
FACTZ_HD void tet_vertices(int64_t nx, int64_t ny, int64_t tet, int64_t idx[4], int axes[3]) {
  const int t = int(tet % 6);
  int64_t cell = tet / 6;
  const int64_t x = cell % (nx - 1);
  cell /= nx - 1;
  const int64_t y = cell % (ny - 1), z = cell / (ny - 1);
  const int64_t step[3] = {1, nx, nx * ny};
  idx[0] = (z * ny + y) * nx + x;
  for (int k = 0; k < 3; ++k) {
    axes[k] = tet_axis(t, k);
    idx[k + 1] = idx[k] + step[axes[k]];
  }
}

// ---- Orientation ------------------------------------------------------------------------

/// A point of the (u, v, w) space tagged with its global vertex index (-1: the origin). T is
/// the field's value type: float here, double in kernels/tet64.hpp, whose orient3_plain and
/// sos_minor_sign overloads the templates below (orient3_sos, tet_contains_origin, ...) pick
/// by argument type.
template <class T>
struct SosPoint3Of {
  T x;
  T y;
  T z;
  int64_t index;
};
using SosPoint3 = SosPoint3Of<float>;

/// Coordinate k (0 = x, 1 = y, 2 = z) of a point.
FACTZ_HD float coord3(const SosPoint3& p, int k) { return k == 0 ? p.x : (k == 1 ? p.y : p.z); }

/// orient3_plain's exact stage (out of line, rarely reached): the sign of
/// det[[p0, 1], [p1, 1], [p2, 1], [p3, 1]] from its Laplace expansion along the ones column,
///   det = -D(p1, p2, p3) + D(p0, p2, p3) - D(p0, p1, p3) + D(p0, p1, p2),
/// D the 3 x 3 determinant of three points: 24 signed products a * b * c of floats. a * b is
/// exact in double (48 significant bits; |a b| in [2^-298, 2^256] or 0), and (a b) * c = hi + lo
/// exactly with hi = fl(a b c), lo = fma(a b, c, -hi) (TwoProduct): a nonzero product of three
/// floats lies in [2^-447, 2^385], far from overflow and from the range (below 2^-968) where
/// TwoProduct's error term could be subnormal. The 48 terms are exact, and
/// exact_sign_of_long_sum decides the sign of their sum.
FACTZ_HD_COLD int orient3_exact(const SosPoint3 p[4]) {
  // The six permutations of (0, 1, 2) with their signs.
  constexpr int kPerm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  double t[48];
  int n = 0;
  for (int r = 0; r < 4; ++r) {
    const SosPoint3* q[3];
    for (int i = 0, k = 0; i < 4; ++i)
      if (i != r) q[k++] = &p[i];
    const double cofactor = r % 2 == 1 ? 1.0 : -1.0;  // (-1)^(r + 3)
    for (int s = 0; s < 6; ++s) {
      const double ab = double(coord3(*q[0], kPerm[s][0])) * double(coord3(*q[1], kPerm[s][1]));
      const double c = coord3(*q[2], kPerm[s][2]);
      const double hi = ab * c, lo = fma(ab, c, -hi);
      const double sign = s < 3 ? cofactor : -cofactor;
      t[n++] = sign * hi;
      t[n++] = sign * lo;
    }
  }
  return exact_sign_of_long_sum(t, n);
}

/// Exact sign of det[[p0, 1], [p1, 1], [p2, 1], [p3, 1]] (4 x 4), no perturbation: the
/// negated det3(p1 - p0, p2 - p0, p3 - p0) (row 0 subtracted, Laplace on the last column).
FACTZ_HD int orient3_plain(const SosPoint3 p[4]) {
  // Filter: the differences d_i = p_i - p0 and the six products rounded in double. Each
  // term carries at most 3 roundings of differences, 2 of products and 5 of the sum:
  // |computed - exact| <= gamma_10 * sum |terms| < 16 u * P, P the computed permanent.
  // Products of three float differences lie in [2^-447, 2^387]: no underflow, no overflow.
  double d[3][3];
  for (int i = 1; i < 4; ++i) {
    d[i - 1][0] = double(p[i].x) - double(p[0].x);
    d[i - 1][1] = double(p[i].y) - double(p[0].y);
    d[i - 1][2] = double(p[i].z) - double(p[0].z);
  }
  const double m0 = d[1][1] * d[2][2], m1 = d[1][2] * d[2][1];
  const double m2 = d[1][0] * d[2][2], m3 = d[1][2] * d[2][0];
  const double m4 = d[1][0] * d[2][1], m5 = d[1][1] * d[2][0];
  const double det = d[0][0] * (m0 - m1) - d[0][1] * (m2 - m3) + d[0][2] * (m4 - m5);
  const double abs00 = d[0][0] < 0 ? -d[0][0] : d[0][0], abs01 = d[0][1] < 0 ? -d[0][1] : d[0][1],
               abs02 = d[0][2] < 0 ? -d[0][2] : d[0][2];
  const double perm = abs00 * ((m0 < 0 ? -m0 : m0) + (m1 < 0 ? -m1 : m1)) +
                      abs01 * ((m2 < 0 ? -m2 : m2) + (m3 < 0 ? -m3 : m3)) +
                      abs02 * ((m4 < 0 ? -m4 : m4) + (m5 < 0 ? -m5 : m5));
  const double bound = perm * (16.0 * 1.1102230246251565e-16);
  if (det > bound) return -1;
  if (det < -bound) return 1;
  if (perm == 0.0) return 0;  // every term is exactly zero
  // Two cheap certificates of a zero determinant, common in quantized data (runs of equal
  // values): two equal rows, or a coordinate equal on all four points (that column of the 4 x 4
  // matrix is a multiple of the ones column).
  for (int c = 0; c < 3; ++c)
    if (coord3(p[0], c) == coord3(p[1], c) && coord3(p[0], c) == coord3(p[2], c) && coord3(p[0], c) == coord3(p[3], c))
      return 0;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j)
      if (p[i].x == p[j].x && p[i].y == p[j].y && p[i].z == p[j].z) return 0;
  return orient3_exact(p);
}

/// The coefficient of one Simulation-of-Simplicity monomial: the sign of the det of the
/// 4 x 4 matrix whose rows are [p_r, 1], with the rows in `rows` replaced by the unit vectors
/// of `cols` (count >= 1). Expanding along each replaced row (its one 1 sits in a coordinate
/// column) leaves, up to the sign of the cofactors, the (4 - count) x (4 - count) matrix of the
/// other rows over the other coordinate columns and the ones column:
///   count 3: [[1]], det 1;
///   count 2: [[a_i, 1], [a_j, 1]], det a_i - a_j: a comparison of two floats;
///   count 1: [[a_i, b_i, 1], ...] of three rows: the exact planar orientation orient_exact.
/// Every case is exact without wide integers.
FACTZ_HD int sos_minor_sign(const SosPoint3 p[4], int count, const int rows[3], const int cols[3]) {
  int row_left[4] = {0, 1, 2, 3}, col_left[4] = {0, 1, 2, 3};  // column 3: the ones
  int nrow = 4, ncol = 4, sign = 1;
  for (int k = 0; k < count; ++k) {
    int pr = 0, pc = 0;
    while (row_left[pr] != rows[k]) ++pr;
    while (col_left[pc] != cols[k]) ++pc;
    if ((pr + pc) % 2 == 1) sign = -sign;
    for (int i = pr; i + 1 < nrow; ++i) row_left[i] = row_left[i + 1];
    for (int i = pc; i + 1 < ncol; ++i) col_left[i] = col_left[i + 1];
    --nrow;
    --ncol;
  }
  if (nrow == 1) return sign;
  const int a = col_left[0];
  if (nrow == 2) {
    const float ai = coord3(p[row_left[0]], a), aj = coord3(p[row_left[1]], a);
    return sign * ((ai > aj) - (ai < aj));
  }
  const int b = col_left[1];
  const SosPoint3 &p0 = p[row_left[0]], &p1 = p[row_left[1]], &p2 = p[row_left[2]];
  return sign * orient_exact(coord3(p0, a), coord3(p0, b), coord3(p1, a), coord3(p1, b), coord3(p2, a), coord3(p2, b));
}

/// Orientation sign (+1 or -1, never 0) of four points with symbolic perturbation ordered
/// by index (docs/architecture.md): sort by index, then the first nonzero of the plain
/// determinant and the coefficients of the perturbation monomials in increasing order.
/// Indices must be pairwise distinct.
template <class T>
FACTZ_HD int orient3_sos(SosPoint3Of<T> a, SosPoint3Of<T> b, SosPoint3Of<T> c, SosPoint3Of<T> d) {
  SosPoint3Of<T> p[4] = {a, b, c, d};
  int parity = 0;
  for (int i = 1; i < 4; ++i)  // insertion sort by index, counting transpositions
    for (int j = i; j > 0 && p[j - 1].index > p[j].index; --j) {
      const SosPoint3Of<T> t = p[j];
      p[j] = p[j - 1];
      p[j - 1] = t;
      parity ^= 1;
    }
  int s = orient3_plain(p);
  // Entry (row r, coordinate j) is perturbed by eps^(2^(4 r + 2 - j)): bit 3 r + (2 - j)
  // of a mask orders the monomials (a smaller mask is a larger term). The mask of rows
  // 0, 1, 2 in coordinates x, y, z leaves det[[e_x], [e_y], [e_z], [p3, 1]] = 1, so the
  // walk ends by mask 84.
  for (int mask = 1; s == 0 && mask < (1 << 12); ++mask) {
    int rows[3], cols[3], count = 0, used_rows = 0, used_cols = 0;
    bool valid = true;
    for (int bit = 0; bit < 12 && valid; ++bit) {
      if (!((mask >> bit) & 1)) continue;
      const int r = bit / 3, j = 2 - bit % 3;
      if (((used_rows >> r) & 1) || ((used_cols >> j) & 1) || count == 3) valid = false;
      else {
        used_rows |= 1 << r;
        used_cols |= 1 << j;
        rows[count] = r;
        cols[count] = j;
        ++count;
      }
    }
    if (valid) s = sos_minor_sign(p, count, rows, cols);
  }
  return parity ? -s : s;
}

/// A screen of the inside test for float vectors, from four 3 x 3 determinants of the
/// vectors themselves (no differences, no sorting): s_k, the orientation with vector k
/// replaced by the origin, is (-1)^(k + 1) sign det3(the other three, in order) whenever that
/// determinant is nonzero (the origin's row moved first flips the sign k times; expanding
/// along it leaves -det3). The four signed volumes with the origin sum to the tetrahedron's
/// own (det M = sum_k det M_k for any point), so when all four s_k agree the plain
/// orientation s has their sign too (nonzero: no flat image, no perturbation) and the origin
/// is inside; when two decided s_k disagree, one of them differs from s whatever s is, and
/// the origin is outside. Returns 1 inside, 0 outside, -1 when a determinant is zero or too
/// close to it for the double filter (the caller then runs the full test). Each product of
/// two floats is exact in double; the three minors, their products with the third vector and
/// the sum carry at most 4 roundings: |computed - exact| <= 8 u P bounds it with margin, P
/// the sum of the six terms' magnitudes (products of three floats lie in [2^-447, 2^385]: no
/// underflow, no overflow).
FACTZ_HD int tet_origin_screen(const float u[4], const float v[4], const float w[4]) {
  int agreed = 0;
  for (int k = 0; k < 4; ++k) {
    const int a = k == 0 ? 1 : 0, b = k <= 1 ? 2 : 1, c = k <= 2 ? 3 : 2;
    const double m0 = double(v[b]) * double(w[c]) - double(w[b]) * double(v[c]);
    const double m1 = double(u[b]) * double(w[c]) - double(w[b]) * double(u[c]);
    const double m2 = double(u[b]) * double(v[c]) - double(v[b]) * double(u[c]);
    const double det = double(u[a]) * m0 - double(v[a]) * m1 + double(w[a]) * m2;
    const double perm = fabs(double(u[a])) * (fabs(double(v[b]) * double(w[c])) + fabs(double(w[b]) * double(v[c]))) +
                        fabs(double(v[a])) * (fabs(double(u[b]) * double(w[c])) + fabs(double(w[b]) * double(u[c]))) +
                        fabs(double(w[a])) * (fabs(double(u[b]) * double(v[c])) + fabs(double(v[b]) * double(u[c])));
    const double bound = perm * (8.0 * 1.1102230246251565e-16);
    if (!(det > bound || det < -bound)) return -1;
    const int s = ((k & 1) ? 1 : -1) * (det > 0 ? 1 : -1);
    if (agreed == 0) agreed = s;
    else if (s != agreed) return 0;
  }
  return 1;
}

/// tet_contains_origin with s = orient3_sos(p[0], p[1], p[2], p[3]) already known (a caller
/// that has the plain orientation, nonzero, has it: the perturbation is then never
/// consulted and sorting by index flips the plain sign exactly as it flips the parity).
template <class T>
FACTZ_HD bool tet_contains_origin_oriented(const SosPoint3Of<T> p[4], int s) {
  const SosPoint3Of<T> o{T(0), T(0), T(0), -1};
  return orient3_sos(o, p[1], p[2], p[3]) == s && orient3_sos(p[0], o, p[2], p[3]) == s &&
         orient3_sos(p[0], p[1], o, p[3]) == s && orient3_sos(p[0], p[1], p[2], o) == s;
}

/// Whether the origin lies in the tetrahedron spanned by four vectors (path order, each
/// with its vertex index): s = orient(p0..p3), s_k with p_k replaced by the origin; inside
/// iff all four s_k equal s.
template <class T>
FACTZ_HD bool tet_contains_origin(const SosPoint3Of<T> p[4]) {
  return tet_contains_origin_oriented(p, orient3_sos(p[0], p[1], p[2], p[3]));
}

// ---- Type -------------------------------------------------------------------------------

/// Integers of the type: Jacobian entries (differences of scaled floats, < 2^278) and the
/// cubic's discriminant, a degree-6 polynomial in them (< 2^1684): 56 * 32 bits.
using TypeInt = WideInt<56>;

/// det[[a],[b],[c]] of three rows of integers.
template <int N>
FACTZ_HD WideInt<N> det3(const WideInt<N> a[3], const WideInt<N> b[3], const WideInt<N> c[3]) {
  return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}

/// The type from the exact signs of det J, a2 = -tr J, a1, the Hurwitz determinant
/// a2 a1 - a0 (a0 = -det J) and the cubic's discriminant (tet_type).
FACTZ_HD CpType3 type_from_signs(int sdet, int s2, int s1, int sh, int sdisc) {
  if (sdet == 0) return CpType3::degenerate;
  const bool complex_pair = sdisc < 0;
  const int s0 = -sdet;
  int unstable;  // eigenvalues with a positive real part
  if (sh == 0) {
    // a0 = a2 a1: the polynomial is (l + a2)(l^2 + a1), a1 != 0 since a0 != 0.
    if (s1 > 0) return CpType3::center;  // +-i sqrt(a1): no hyperbolic type
    unstable = 1 + (s2 < 0 ? 1 : 0);     // +-sqrt(-a1) and -a2
  } else if (s2 == 0) {
    unstable = s0 > 0 ? 2 : 1;  // trace 0 (Routh with a2 -> 0+): no root on the imaginary axis
  } else {
    // Routh's first column 1, a2, (a2 a1 - a0) / a2, a0: its sign changes.
    const int col[4] = {1, s2, sh * s2, s0};
    unstable = 0;
    for (int k = 0; k < 3; ++k) unstable += col[k] != col[k + 1];
  }
  switch (unstable) {
    case 0: return complex_pair ? CpType3::attracting_spiral : CpType3::attracting_node;
    case 3: return complex_pair ? CpType3::repelling_spiral : CpType3::repelling_node;
    case 1: return complex_pair ? CpType3::spiral_saddle_2_stable : CpType3::saddle_2_stable;
    default: return complex_pair ? CpType3::spiral_saddle_2_unstable : CpType3::saddle_2_unstable;
  }
}

/// The type from the exact Jacobian J[component][axis], held in integers of a width the
/// caller proves sufficient for the discriminant (shared by the float and double kernels).
template <int N>
FACTZ_HD CpType3 tet_type_of_jacobian(const WideInt<N> J[3][3]) {
  using Int = WideInt<N>;
  const Int tr = J[0][0] + J[1][1] + J[2][2];
  const Int minors = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) + (J[0][0] * J[2][2] - J[0][2] * J[2][0]) +
                     (J[1][1] * J[2][2] - J[1][2] * J[2][1]);
  const Int det = det3(J[0], J[1], J[2]);
  if (det.sign() == 0) return CpType3::degenerate;
  const Int a2 = -tr, a1 = minors, a0 = -det;
  const Int hurwitz = a2 * a1 - a0;
  const Int a2a2 = a2 * a2, a1a1 = a1 * a1;
  const Int disc = 18 * (a2 * a1 * a0) - 4 * (a2a2 * a2 * a0) + a2a2 * a1a1 - 4 * (a1a1 * a1) - 27 * (a0 * a0);
  return type_from_signs(det.sign(), a2.sign(), a1.sign(), hurwitz.sign(), disc.sign());
}

/// tet_type's exact stage: the five polynomials in wide integers (out of line).
FACTZ_HD_COLD CpType3 tet_type_wide(const float u[4], const float v[4], const float w[4], const int axes[3]) {
  TypeInt J[3][3];  // J[component][axis]
  const float* f[3] = {u, v, w};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) J[c][axes[k]] = TypeInt::scaled(f[c][k + 1]) - TypeInt::scaled(f[c][k]);
  return tet_type_of_jacobian(J);
}

/// The sign of a value computed in double whose error is below 2^-47 times
/// `perm` (its expression evaluated on absolute values): false when the bound leaves it open.
/// perm == 0 means every monomial is exactly zero, so the value is exactly zero.
FACTZ_HD bool filtered_sign(double value, double perm, int& sign) {
  const double bound = perm * 0x1p-47;  // exact: a power of two, perm >= 2^-894 or 0
  if (perm == 0.0) sign = 0;
  else if (value > bound) sign = 1;
  else if (value < -bound) sign = -1;
  else return false;
  return true;
}

/// Type of the linear interpolant of (u, v, w) on a tetrahedron (values in path order,
/// axes from tet_vertices), from the exact signs of its Jacobian's characteristic
/// polynomial l^3 + a2 l^2 + a1 l + a0 (a2 = -tr J, a1 = the sum of the principal 2 x 2
/// minors, a0 = -det J), its Hurwitz determinant a2 a1 - a0 and its discriminant.
///
/// A filter in double decides the five signs first; tet_type_wide computes them in 1792-bit
/// integers when it cannot. Why the filter is exact where it answers: each Jacobian entry is
/// the difference of two floats, an exact multiple of 2^-149 below 2^129, and its double j is
/// that value times (1 + d), |d| <= u = 2^-53 (rounding a multiple of 2^-149 keeps it one).
/// Every quantity below is a polynomial of degree at most 6 in the j with integer constants,
/// so each computed intermediate of degree k is a multiple of 2^(-149 k) >= 2^-894: zero or a
/// normal double (no underflow), and all stay below 2^790 (no overflow). The standard model
/// fl(a op b) = (a op b)(1 + d) therefore holds for every operation (times 4 is exact), and
/// by Higham (Accuracy and Stability, Lemma 3.1 and section 3.1) a computed value equals the
/// sum of its expanded monomials m_i, each times at most K factors (1 + d), K the largest
/// count of roundings along a path of the expression (a sum adds one to the larger count of
/// its operands, a product adds one to the sum of both; the entries count one): K = 3 for
/// tr, 6 for a1, 8 for det, 11 for the Hurwitz determinant and 24 for the discriminant as
/// written below. So |computed - exact| <= gamma_24 sum |m_i| <= gamma_24 P, P the same
/// expression on the exact |J| with every subtraction turned into an addition. Its computed
/// value P' (the same evaluation on |j|) is at least P (1 - u)^6 (1 - gamma_24), so the error
/// is below 25 u P' < 2^-47 P' (filtered_sign), the bound being itself exact. When P' is 0,
/// every monomial is zero and so is the exact value.
FACTZ_HD_COLD CpType3 tet_type(const float u[4], const float v[4], const float w[4], const int axes[3]) {
  double J[3][3], A[3][3];  // [component][axis], and absolute values
  const float* f[3] = {u, v, w};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) {
      J[c][axes[k]] = double(f[c][k + 1]) - double(f[c][k]);
      A[c][axes[k]] = J[c][axes[k]] < 0 ? -J[c][axes[k]] : J[c][axes[k]];
    }
  const double c0 = J[1][1] * J[2][2] - J[1][2] * J[2][1], c1 = J[1][0] * J[2][2] - J[1][2] * J[2][0],
               c2 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
  const double p0 = A[1][1] * A[2][2] + A[1][2] * A[2][1], p1 = A[1][0] * A[2][2] + A[1][2] * A[2][0],
               p2 = A[1][0] * A[2][1] + A[1][1] * A[2][0];
  const double det = J[0][0] * c0 - J[0][1] * c1 + J[0][2] * c2;
  const double pdet = A[0][0] * p0 + A[0][1] * p1 + A[0][2] * p2;
  int sdet, s2, s1, sh, sdisc;
  if (!filtered_sign(det, pdet, sdet)) return tet_type_wide(u, v, w, axes);
  if (sdet == 0) return CpType3::degenerate;
  const double a2 = -((J[0][0] + J[1][1]) + J[2][2]), P2 = (A[0][0] + A[1][1]) + A[2][2];
  const double a1 = ((J[0][0] * J[1][1] - J[0][1] * J[1][0]) + (J[0][0] * J[2][2] - J[0][2] * J[2][0])) +
                    (J[1][1] * J[2][2] - J[1][2] * J[2][1]);
  const double P1 = ((A[0][0] * A[1][1] + A[0][1] * A[1][0]) + (A[0][0] * A[2][2] + A[0][2] * A[2][0])) +
                    (A[1][1] * A[2][2] + A[1][2] * A[2][1]);
  const double a0 = -det, P0 = pdet;
  const double hurwitz = a2 * a1 - a0, Ph = P2 * P1 + P0;
  const double a2a2 = a2 * a2, a1a1 = a1 * a1, P2P2 = P2 * P2, P1P1 = P1 * P1;
  const double disc =
      (((18.0 * ((a2 * a1) * a0) - 4.0 * ((a2a2 * a2) * a0)) + a2a2 * a1a1) - 4.0 * (a1a1 * a1)) - 27.0 * (a0 * a0);
  const double Pdisc =
      (((18.0 * ((P2 * P1) * P0) + 4.0 * ((P2P2 * P2) * P0)) + P2P2 * P1P1) + 4.0 * (P1P1 * P1)) + 27.0 * (P0 * P0);
  if (!filtered_sign(a2, P2, s2) || !filtered_sign(a1, P1, s1) || !filtered_sign(hurwitz, Ph, sh) ||
      !filtered_sign(disc, Pdisc, sdisc))
    return tet_type_wide(u, v, w, axes);
  return type_from_signs(sdet, s2, s1, sh, sdisc);
}

/// tet_type for a value type, as the templates below call it: double arguments bring no
/// namespace for argument-dependent lookup, so kernels/tet64.hpp adds its float64 tet_type
/// as TetType<double>.
template <class T>
struct TetType;
template <>
struct TetType<float> {
  FACTZ_HD static CpType3 of(const float u[4], const float v[4], const float w[4], const int axes[3]) {
    return tet_type(u, v, w, axes);
  }
};

/// A tetrahedron's signature: 0 without a critical point, 1 + its CpType3 otherwise.
template <class T>
FACTZ_HD uint8_t tet_signature(const int64_t idx[4], const int axes[3], const T u[4], const T v[4], const T w[4]) {
  if constexpr (sizeof(T) == sizeof(float)) {  // float fields: the determinant screen first
    const int screen = tet_origin_screen(u, v, w);
    if (screen == 0) return 0;
    if (screen == 1) return uint8_t(1 + int(TetType<T>::of(u, v, w, axes)));
  }
  SosPoint3Of<T> p[4];
  for (int k = 0; k < 4; ++k) p[k] = {u[k], v[k], w[k], idx[k]};
  if (!tet_contains_origin(p)) return 0;
  return uint8_t(1 + int(TetType<T>::of(u, v, w, axes)));
}

// ---- Quick exclusions ------------------------------------------------------------------
// Shared by the extractor (topology/extract3d.cpp) and the 3D compressor's per-vertex check
// (kernels/speculation3d.hpp), so that every caller skips the same work. Neither decides
// anything tet_signature would decide otherwise (test_topology3d checks the extractor
// against tet_signature alone and against the independent reference on tie-heavy fields).

// strictly_one_sided (kernels/exact.hpp): all n values of one component > 0, or all < 0,
// so that no tetrahedron on these points holds a critical point.

/// The sign class of a vector: bit 2c set iff component c is > 0, bit 2c + 1 iff it is < 0
/// (u, v, w: c = 0, 1, 2). A set of vectors has one component of one strict sign (the
/// strictly_one_sided screen over all of them) iff the AND of their classes is not 0: the
/// extractor's quiet cubes and the 3D writer's signature screens take bytes.
template <class T>
FACTZ_HD uint8_t sign_class3(T u, T v, T w) {
  return uint8_t((u > T(0)) | (u < T(0)) << 1 | (v > T(0)) << 2 | (v < T(0)) << 3 | (w > T(0)) << 4 |
                 (w < T(0)) << 5);
}

/// Whether the four vectors (path order) span no volume: their plain orientation is exactly
/// zero (det J = 0). Then the tetrahedron holds no critical point: under the contract's
/// Simulation of Simplicity the perturbed origin always ends up outside a flat image
/// (docs/architecture.md, "Observations for later work"; the reason why `degenerate` is
/// never reported). Worth it because orient3_plain is one double filter, while the
/// symbolic perturbation of a flat image (zero regions, constant regions, ties) walks up
/// to 84 wide-integer minors in each of the five orientations.
template <class T>
FACTZ_HD bool flat_image(const SosPoint3Of<T> p[4]) { return orient3_plain(p) == 0; }

/// What the inside test says about a tetrahedron whose original signature is `want`
/// (tet_inside_verdict).
enum class InsideVerdict : uint8_t { differs = 0, same = 1, needs_type = 2 };

/// Compares a tetrahedron's signature with `want` as far as the two exclusions and the
/// inside test go: `differs` (a critical point where `want` says none, or none where it says
/// one), `same` (none, as `want` says), or `needs_type` (a critical point, as `want` says:
/// its type decides, tet_type_is). `one_sided_known`: the caller has found that no component
/// has one strict sign at the four vertices (signatures_hold3d's sign classes), so that screen
/// is skipped here.
template <class T>
FACTZ_HD InsideVerdict tet_inside_verdict(uint8_t want, const int64_t idx[4], const T u[4], const T v[4],
                                          const T w[4], bool one_sided_known = false) {
  const bool none = want == 0;
  if (!one_sided_known && (strictly_one_sided(u, 4) || strictly_one_sided(v, 4) || strictly_one_sided(w, 4)))
    return none ? InsideVerdict::same : InsideVerdict::differs;
  if constexpr (sizeof(T) == sizeof(float)) {  // float fields: the determinant screen first
    const int screen = tet_origin_screen(u, v, w);
    if (screen == 0) return none ? InsideVerdict::same : InsideVerdict::differs;
    if (screen == 1) return none ? InsideVerdict::differs : InsideVerdict::needs_type;
  }
  SosPoint3Of<T> p[4];
  for (int k = 0; k < 4; ++k) p[k] = {u[k], v[k], w[k], idx[k]};
  // flat_image's plain orientation, computed once: when nonzero it is the SoS orientation of
  // the four vectors (tet_contains_origin_oriented).
  const int s = orient3_plain(p);
  if (s == 0 || !tet_contains_origin_oriented(p, s)) return none ? InsideVerdict::same : InsideVerdict::differs;
  return none ? InsideVerdict::differs : InsideVerdict::needs_type;
}

/// Whether a tetrahedron holding a critical point has signature `want` (1 + its type).
template <class T>
FACTZ_HD bool tet_type_is(uint8_t want, const int axes[3], const T u[4], const T v[4], const T w[4]) {
  return uint8_t(1 + int(TetType<T>::of(u, v, w, axes))) == want;
}

}  // namespace factz::detail
