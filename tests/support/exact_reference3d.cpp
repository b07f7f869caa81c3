// Brute-force exact reference of the 3D contract. See exact_reference3d.hpp.
#include "support/exact_reference3d.hpp"

#include <algorithm>
#include <cmath>
#include <bit>
#include <map>
#include <stdexcept>

#include "support/exact_reference.hpp"

namespace factz::testref {
namespace {

// Coordinates in units of 2^-149 are below 2^277; a coefficient of the orientation's
// eps-polynomial is a sum of 24 products of at most three of them (< 2^836); the type's
// discriminant is a degree-6 polynomial of differences (< 2^1690).
using Int = BigInt<60>;
// Doubles in units of 2^-1074 are below 2^2098: products of three below 2^6294 (24 of them
// below 2^6299), the discriminant below 2^(6 * 2099 + 14): 400 limbs hold both.
using Int64 = BigInt<400>;

template <class C> struct IntOf;
template <> struct IntOf<float> { using type = Int; };
template <> struct IntOf<double> { using type = Int64; };

Int64 exact(double f) {
  if (!std::isfinite(f)) throw std::invalid_argument("reference: not finite");
  const auto bits = std::bit_cast<uint64_t>(f);
  const int e = int((bits >> 52) & 0x7ffu);
  const uint64_t frac = bits & 0xfffffffffffffull;
  // f = frac * 2^-1074 (e = 0) or (frac + 2^52) * 2^(e - 1075).
  return e == 0 ? Int64::from_shifted(frac, 0, bits >> 63)
                : Int64::from_shifted(frac | (uint64_t(1) << 52), e - 1, bits >> 63);
}

Int exact(float f) {
  if (!std::isfinite(f)) throw std::invalid_argument("reference: not finite");
  const auto bits = std::bit_cast<uint32_t>(f);
  const int e = int((bits >> 23) & 0xffu);
  const uint64_t frac = bits & 0x7fffffu;
  // f = frac * 2^-149 (e = 0) or (frac + 2^23) * 2^(e - 150).
  return e == 0 ? Int::from_shifted(frac, 0, bits >> 31) : Int::from_shifted(frac | 0x800000u, e - 1, bits >> 31);
}

// A polynomial in eps: exponent -> coefficient.
template <class C>
using PolyOf = std::map<uint64_t, typename IntOf<C>::type>;

template <class C>
PolyOf<C> det_poly(const std::vector<RefPointOf<C>>& pts) {
  using Poly = PolyOf<C>;
  using Int = typename IntOf<C>::type;
  const int d = int(pts.size()) - 1;
  // Perturbation exponents from the rank of each point's index (lowest index: rank 0).
  std::vector<int> rank(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    int r = 0;
    for (size_t j = 0; j < pts.size(); ++j) {
      if (pts[j].index == pts[i].index && i != j) throw std::invalid_argument("reference: equal indices");
      r += pts[j].index < pts[i].index;
    }
    rank[i] = r;
  }
  const int delta = d + 1;
  auto eps_exponent = [&](int row, int j) { return uint64_t(1) << (delta * (rank[row] + 1) - (j + 1)); };
  // Leibniz: sum over permutations s of the columns (column d is the ones column).
  std::vector<int> perm(size_t(d + 1));
  for (int i = 0; i <= d; ++i) perm[size_t(i)] = i;
  Poly out;
  do {
    int inversions = 0;
    for (int i = 0; i <= d; ++i)
      for (int j = i + 1; j <= d; ++j) inversions += perm[size_t(i)] > perm[size_t(j)];
    // Expand prod_rows (x_{row, perm(row)} + eps^e) : every choice of value or eps per row.
    Poly term;
    term[0] = Int::from_int(inversions % 2 ? -1 : 1);
    for (int row = 0; row <= d; ++row) {
      const int col = perm[size_t(row)];
      Poly next;
      for (const auto& [e, c] : term) {
        if (col == d) {  // the ones column is not perturbed
          next[e] = next[e] + c;
          continue;
        }
        next[e] = next[e] + c * exact(pts[size_t(row)].x[size_t(col)]);
        const uint64_t pe = e + eps_exponent(row, col);
        next[pe] = next[pe] + c;
      }
      term = std::move(next);
    }
    for (const auto& [e, c] : term) out[e] = out[e] + c;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return out;
}

template <class C>
int orient_plain_nd(const std::vector<RefPointOf<C>>& points) {
  const auto p = det_poly(points);
  const auto it = p.find(0);
  return it == p.end() ? 0 : it->second.sign();
}

template <class C>
int orient_sos_nd(const std::vector<RefPointOf<C>>& points) {
  for (const auto& [e, c] : det_poly(points))  // ascending exponents: the largest term first
    if (c.sign() != 0) return c.sign();
  throw std::logic_error("reference: the perturbed determinant vanished");
}

template <class C>
bool tet_contains_origin(const std::array<RefPointOf<C>, 4>& p) {
  std::vector<RefPointOf<C>> pts(p.begin(), p.end());
  const int s = orient_sos_nd(pts);
  for (int k = 0; k < 4; ++k) {
    std::vector<RefPointOf<C>> q = pts;
    q[size_t(k)] = RefPointOf<C>{{C(0), C(0), C(0)}, -1};
    if (orient_sos_nd(q) != s) return false;
  }
  return true;
}

template <class C>
CpType3 tet_type(const C u[4], const C v[4], const C w[4], const int axes[3]) {
  using Int = typename IntOf<C>::type;
  const C* f[3] = {u, v, w};
  Int J[3][3];
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) J[c][axes[k]] = exact(f[c][k + 1]) - exact(f[c][k]);
  // Characteristic polynomial det(l I - J) = l^3 + c2 l^2 + c1 l + c0 by Leibniz on 3x3.
  const Int tr = J[0][0] + J[1][1] + J[2][2];
  Int minors{};
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j) minors = minors + (J[i][i] * J[j][j] - J[i][j] * J[j][i]);
  Int det{};
  const int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  for (int s = 0; s < 6; ++s) {
    const Int t = J[0][perms[s][0]] * J[1][perms[s][1]] * J[2][perms[s][2]];
    det = s < 3 ? det + t : det - t;
  }
  if (det.sign() == 0) return CpType3::degenerate;
  const Int c2 = -tr, c1 = minors, c0 = -det;
  const Int four = Int::from_int(4), eighteen = Int::from_int(18), twenty_seven = Int::from_int(27);
  const Int disc = eighteen * c2 * c1 * c0 - four * c2 * c2 * c2 * c0 + c2 * c2 * c1 * c1 - four * c1 * c1 * c1 -
                   twenty_seven * c0 * c0;
  int unstable = 0;
  bool complex_pair = false;
  if (disc.sign() >= 0) {
    // Every root real and none zero: Descartes counts the positive ones exactly.
    const int s[4] = {1, c2.sign(), c1.sign(), c0.sign()};
    int last = s[0];
    for (int k = 1; k < 4; ++k) {
      if (s[k] == 0) continue;
      unstable += s[k] != last;
      last = s[k];
    }
  } else {
    complex_pair = true;
    // One real root r (p < 0 below it, > 0 above) and a pair of real part (tr - r) / 2.
    const int real_positive = c0.sign() < 0;  // p(0) < 0: r > 0
    const Int p_tr = tr * tr * tr + c2 * tr * tr + c1 * tr + c0;
    if (p_tr.sign() == 0) return CpType3::center;
    unstable = real_positive + (p_tr.sign() > 0 ? 2 : 0);  // p(tr) > 0: r < tr
  }
  switch (unstable) {
    case 0: return complex_pair ? CpType3::attracting_spiral : CpType3::attracting_node;
    case 3: return complex_pair ? CpType3::repelling_spiral : CpType3::repelling_node;
    case 1: return complex_pair ? CpType3::spiral_saddle_2_stable : CpType3::saddle_2_stable;
    default: return complex_pair ? CpType3::spiral_saddle_2_unstable : CpType3::saddle_2_unstable;
  }
}

template <class C>
uint8_t tet_signature(const int64_t idx[4], const int axes[3], const C u[4], const C v[4], const C w[4]) {
  std::array<RefPointOf<C>, 4> p;
  for (int k = 0; k < 4; ++k) p[size_t(k)] = RefPointOf<C>{{u[k], v[k], w[k]}, idx[k]};
  if (!tet_contains_origin(p)) return 0;
  return uint8_t(1 + int(tet_type(u, v, w, axes)));
}

}  // namespace

int ref_orient_plain_nd(const std::vector<RefPointN>& points) { return orient_plain_nd(points); }
int ref_orient_sos_nd(const std::vector<RefPointN>& points) { return orient_sos_nd(points); }
bool ref_tet_contains_origin(const std::array<RefPointN, 4>& p) { return tet_contains_origin(p); }
CpType3 ref_tet_type(const float u[4], const float v[4], const float w[4], const int axes[3]) {
  return tet_type(u, v, w, axes);
}
int ref64_orient_plain_nd(const std::vector<RefPointN64>& points) { return orient_plain_nd(points); }
int ref64_orient_sos_nd(const std::vector<RefPointN64>& points) { return orient_sos_nd(points); }
bool ref64_tet_contains_origin(const std::array<RefPointN64, 4>& p) { return tet_contains_origin(p); }
CpType3 ref64_tet_type(const double u[4], const double v[4], const double w[4], const int axes[3]) {
  return tet_type(u, v, w, axes);
}
uint8_t ref64_tet_signature(const int64_t idx[4], const int axes[3], const double u[4], const double v[4],
                            const double w[4]) {
  return tet_signature(idx, axes, u, v, w);
}

void ref_tet_vertices(int64_t nx, int64_t ny, int64_t nz, int64_t tet, int64_t idx[4], int axes[3]) {
  (void)nz;
  // The six paths from a cube's corner to the opposite one, axes in lexicographic order.
  int paths[6][3], n = 0;
  int a[3] = {0, 1, 2};
  do {
    for (int k = 0; k < 3; ++k) paths[n][k] = a[k];
    ++n;
  } while (std::next_permutation(a, a + 3));
  const int64_t cell = tet / 6, cx = cell % (nx - 1), cy = (cell / (nx - 1)) % (ny - 1), cz = cell / ((nx - 1) * (ny - 1));
  int64_t p[3] = {cx, cy, cz};
  idx[0] = (p[2] * ny + p[1]) * nx + p[0];
  for (int k = 0; k < 3; ++k) {
    axes[k] = paths[tet % 6][k];
    ++p[axes[k]];
    idx[k + 1] = (p[2] * ny + p[1]) * nx + p[0];
  }
}

uint8_t ref_tet_signature(const int64_t idx[4], const int axes[3], const float u[4], const float v[4],
                          const float w[4]) {
  return tet_signature(idx, axes, u, v, w);
}

}  // namespace factz::testref
