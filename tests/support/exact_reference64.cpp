// Brute-force exact reference of ARCHITECTURE.md section 3 for doubles. See
// exact_reference64.hpp.
#include "support/exact_reference64.hpp"

#include <bit>
#include <stdexcept>
#include <utility>

namespace factz::testref {

namespace {

struct WidePoint {
  WideInt x;
  WideInt y;
  int64_t index;
};

WidePoint wide_point(const RefPoint64& p) { return {wide_of(p.x), wide_of(p.y), p.index}; }

// D as the cross product of two edge vectors: (x1-x0)(y2-y0) - (x2-x0)(y1-y0).
int plain_sign(const WidePoint& a, const WidePoint& b, const WidePoint& c) {
  return ((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y)).sign();
}

int sos_sign(const WidePoint& a, const WidePoint& b, const WidePoint& c) {
  if (a.index == b.index || a.index == c.index || b.index == c.index)
    throw std::invalid_argument("ref64_orient_sos: indices must be distinct");
  // Sort by index (insertion sort), counting the transpositions for the parity.
  const WidePoint* p[3] = {&a, &b, &c};
  int swaps = 0;
  for (int i = 1; i < 3; ++i)
    for (int j = i; j > 0 && p[j - 1]->index > p[j]->index; --j) {
      std::swap(p[j - 1], p[j]);
      ++swaps;
    }
  const WidePoint &q0 = *p[0], &q1 = *p[1], &q2 = *p[2];
  // First non-zero of D, x2 - x1, y1 - y2, x0 - x2, +1.
  int s = plain_sign(q0, q1, q2);
  if (s == 0) s = (q2.x - q1.x).sign();
  if (s == 0) s = (q1.y - q2.y).sign();
  if (s == 0) s = (q0.x - q2.x).sign();
  if (s == 0) s = 1;
  return swaps % 2 == 1 ? -s : s;
}

}  // namespace

WideInt wide_of(double d) {
  const auto bits = std::bit_cast<uint64_t>(d);
  const bool negative = (bits >> 63) != 0;
  const int biased = int((bits >> 52) & 0x7ffu);
  const uint64_t fraction = bits & 0xfffffffffffffull;
  if (biased == 0x7ff) throw std::invalid_argument("wide_of: NaN or Inf");
  // Subnormal: fraction * 2^-1074; normal: (2^52 + fraction) * 2^(biased - 1075)
  //          = (2^52 + fraction) * 2^(biased - 1) * 2^-1074.
  if (biased == 0) return WideInt::from_shifted(fraction, 0, negative);
  return WideInt::from_shifted(fraction | (uint64_t(1) << 52), biased - 1, negative);
}

int ref64_cross(double x0, double y0, double x1, double y1) {
  return (wide_of(x0) * wide_of(y1) - wide_of(x1) * wide_of(y0)).sign();
}

int ref64_orient_plain(RefPoint64 a, RefPoint64 b, RefPoint64 c) {
  return plain_sign(wide_point(a), wide_point(b), wide_point(c));
}

int ref64_orient_sos(RefPoint64 a, RefPoint64 b, RefPoint64 c) {
  return sos_sign(wide_point(a), wide_point(b), wide_point(c));
}

bool ref64_contains_origin(RefPoint64 p0, RefPoint64 p1, RefPoint64 p2) {
  const WidePoint a = wide_point(p0), b = wide_point(p1), c = wide_point(p2);
  const WidePoint o{WideInt{}, WideInt{}, -1};
  const int s = sos_sign(a, b, c);
  return sos_sign(o, b, c) == s && sos_sign(a, o, c) == s && sos_sign(a, b, o) == s;
}

RefJacobianSigns ref64_jacobian_signs(int t, const double u[3], const double v[3]) {
  const WideInt u0 = wide_of(u[0]), u1 = wide_of(u[1]), u2 = wide_of(u[2]);
  const WideInt v0 = wide_of(v[0]), v1 = wide_of(v[1]), v2 = wide_of(v[2]);
  // T0: d/dx = f2 - f1, d/dy = f1 - f0; T1: d/dx = f1 - f0, d/dy = f2 - f1.
  const WideInt ux = t == 0 ? u2 - u1 : u1 - u0, uy = t == 0 ? u1 - u0 : u2 - u1;
  const WideInt vx = t == 0 ? v2 - v1 : v1 - v0, vy = t == 0 ? v1 - v0 : v2 - v1;
  const WideInt det = ux * vy - uy * vx;
  const WideInt tr = ux + vy;
  const WideInt disc = tr * tr - WideInt::from_int(4) * det;
  return {det.sign(), tr.sign(), disc.sign()};
}

CpType ref64_type(int t, const double u[3], const double v[3]) {
  const RefJacobianSigns s = ref64_jacobian_signs(t, u, v);
  if (s.det < 0) return CpType::saddle;
  if (s.det == 0) return CpType::degenerate;
  if (s.tr == 0) return CpType::center;
  if (s.tr < 0) return s.disc < 0 ? CpType::attracting_focus : CpType::attracting_node;
  return s.disc < 0 ? CpType::repelling_focus : CpType::repelling_node;
}

uint8_t ref64_signature(int t, const int64_t idx[3], const double u[3], const double v[3]) {
  if (!ref64_contains_origin({u[0], v[0], idx[0]}, {u[1], v[1], idx[1]}, {u[2], v[2], idx[2]})) return 0;
  return static_cast<uint8_t>(1 + static_cast<int>(ref64_type(t, u, v)));
}

std::vector<uint8_t> ref64_signatures(int64_t nx, int64_t ny, const double* u, const double* v,
                                      const std::vector<uint8_t>& missing) {
  const int64_t count = ref_triangle_count(nx, ny);
  std::vector<uint8_t> out(static_cast<size_t>(count));
  for (int64_t tri = 0; tri < count; ++tri) {
    const std::array<int64_t, 3> idx = ref_triangle_vertices(nx, ny, tri);
    bool off_mesh = false;
    for (int64_t k : idx) off_mesh = off_mesh || (!missing.empty() && missing[size_t(k)] != 0);
    if (off_mesh) continue;
    const double uu[3] = {u[idx[0]], u[idx[1]], u[idx[2]]};
    const double vv[3] = {v[idx[0]], v[idx[1]], v[idx[2]]};
    out[static_cast<size_t>(tri)] = ref64_signature(int(tri % 2), idx.data(), uu, vv);
  }
  return out;
}

int ref64_sign_of_products(const double* a, const double* b, const int* scale, int n) {
  if (n < 0 || n > 64) throw std::invalid_argument("ref64_sign_of_products: n out of range");
  WideInt sum;
  for (int i = 0; i < n; ++i) {
    if (scale[i] < 0 || scale[i] > 30) throw std::invalid_argument("ref64_sign_of_products: scale");
    sum = sum + WideInt::from_int(int64_t(1) << scale[i]) * (wide_of(a[i]) * wide_of(b[i]));
  }
  return sum.sign();
}

}  // namespace factz::testref
