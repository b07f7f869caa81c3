// Brute-force exact reference of ARCHITECTURE.md section 3. See exact_reference.hpp.
#include "support/exact_reference.hpp"

#include <bit>
#include <utility>
#include <string>

namespace factz::testref {

namespace {

// Sign, biased exponent and fraction fields of an IEEE binary format, read from the bits.
struct IeeeFields {
  bool negative;
  int biased_exponent;
  uint64_t fraction;
};

IeeeFields fields_of(float f) {
  const auto bits = std::bit_cast<uint32_t>(f);
  return {(bits >> 31) != 0, int((bits >> 23) & 0xffu), bits & 0x7fffffu};
}

IeeeFields fields_of(double d) {
  const auto bits = std::bit_cast<uint64_t>(d);
  return {(bits >> 63) != 0, int((bits >> 52) & 0x7ffu), bits & 0xfffffffffffffull};
}

// A point with exact integer coordinates (units of 2^-149) and its global index.
struct ExactPoint {
  FloatInt x;
  FloatInt y;
  int64_t index;
};

ExactPoint exact_point(RefPoint p) { return {float_to_int(p.x), float_to_int(p.y), p.index}; }

const ExactPoint& origin_point() {
  static const ExactPoint origin{FloatInt{}, FloatInt{}, -1};
  return origin;
}

// D = det[[x0,y0,1],[x1,y1,1],[x2,y2,1]], written as the cross product of two edge
// vectors: (x1-x0)(y2-y0) - (x2-x0)(y1-y0).
int plain_sign(const ExactPoint& a, const ExactPoint& b, const ExactPoint& c) {
  const FloatInt d = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
  return d.sign();
}

int orient_sos_exact(const ExactPoint& a, const ExactPoint& b, const ExactPoint& c) {
  if (a.index == b.index || a.index == c.index || b.index == c.index) {
    throw std::invalid_argument("ref_orient_sos: indices must be distinct");
  }
  // Sort by global index (ascending; the origin's -1 sorts first). The parity of the
  // sorting permutation is the parity of the number of inversions of the input order.
  const ExactPoint* p[3] = {&a, &b, &c};
  int inversions = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = i + 1; j < 3; ++j) {
      if (p[i]->index > p[j]->index) ++inversions;
    }
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j + 1 < 3 - i; ++j) {
      if (p[j]->index > p[j + 1]->index) std::swap(p[j], p[j + 1]);
    }
  }
  const ExactPoint& q0 = *p[0];
  const ExactPoint& q1 = *p[1];
  const ExactPoint& q2 = *p[2];
  // First non-zero of D, x2 - x1, y1 - y2, x0 - x2, +1.
  int s = plain_sign(q0, q1, q2);
  if (s == 0) s = (q2.x - q1.x).sign();
  if (s == 0) s = (q1.y - q2.y).sign();
  if (s == 0) s = (q0.x - q2.x).sign();
  if (s == 0) s = 1;
  return (inversions % 2 == 1) ? -s : s;
}

// Jacobian entries on the unit grid, exactly, from the contract's difference rules.
struct ExactJacobian {
  FloatInt ux, uy, vx, vy;
};

ExactJacobian exact_jacobian(int t, const float u[3], const float v[3]) {
  const FloatInt u0 = float_to_int(u[0]), u1 = float_to_int(u[1]), u2 = float_to_int(u[2]);
  const FloatInt v0 = float_to_int(v[0]), v1 = float_to_int(v[1]), v2 = float_to_int(v[2]);
  if (t == 0) {
    // T0: d/dx = f2 - f1, d/dy = f1 - f0.
    return {u2 - u1, u1 - u0, v2 - v1, v1 - v0};
  }
  // T1: d/dx = f1 - f0, d/dy = f2 - f1.
  return {u1 - u0, u2 - u1, v1 - v0, v2 - v1};
}

}  // namespace

FloatInt float_to_int(float f) {
  const IeeeFields k = fields_of(f);
  if (k.biased_exponent == 0xff) throw std::invalid_argument("float_to_int: NaN or Inf");
  // Subnormal: fraction * 2^-149. Normal: (2^23 + fraction) * 2^(e - 150)
  //          = (2^23 + fraction) * 2^(e - 1) * 2^-149.
  if (k.biased_exponent == 0) return FloatInt::from_shifted(k.fraction, 0, k.negative);
  return FloatInt::from_shifted(k.fraction | (uint64_t(1) << 23), k.biased_exponent - 1,
                                k.negative);
}

DoubleInt double_to_int(double d) {
  const IeeeFields k = fields_of(d);
  if (k.biased_exponent == 0x7ff) throw std::invalid_argument("double_to_int: NaN or Inf");
  // Same reasoning with 52 fraction bits and units of 2^-1074.
  if (k.biased_exponent == 0) return DoubleInt::from_shifted(k.fraction, 0, k.negative);
  return DoubleInt::from_shifted(k.fraction | (uint64_t(1) << 52), k.biased_exponent - 1,
                                 k.negative);
}

int ref_sign_of_sum(const double* t, int n) {
  if (n < 0 || n > 64) throw std::invalid_argument("ref_sign_of_sum: n out of range");
  DoubleInt sum;
  for (int i = 0; i < n; ++i) sum = sum + double_to_int(t[i]);
  return sum.sign();
}

int ref_orient_plain(RefPoint a, RefPoint b, RefPoint c) {
  return plain_sign(exact_point(a), exact_point(b), exact_point(c));
}

int ref_orient_sos(RefPoint a, RefPoint b, RefPoint c) {
  return orient_sos_exact(exact_point(a), exact_point(b), exact_point(c));
}

bool ref_contains_origin(RefPoint p0, RefPoint p1, RefPoint p2) {
  const ExactPoint a = exact_point(p0), b = exact_point(p1), c = exact_point(p2);
  const ExactPoint& o = origin_point();
  const int s = orient_sos_exact(a, b, c);
  return orient_sos_exact(o, b, c) == s && orient_sos_exact(a, o, c) == s &&
         orient_sos_exact(a, b, o) == s;
}

RefJacobianSigns ref_jacobian_signs(int t, const float u[3], const float v[3]) {
  const ExactJacobian j = exact_jacobian(t, u, v);
  const FloatInt det = j.ux * j.vy - j.uy * j.vx;
  const FloatInt tr = j.ux + j.vy;
  const FloatInt disc = tr * tr - FloatInt::from_int(4) * det;
  return {det.sign(), tr.sign(), disc.sign()};
}

CpType ref_type(int t, const float u[3], const float v[3]) {
  const RefJacobianSigns s = ref_jacobian_signs(t, u, v);
  if (s.det < 0) return CpType::saddle;
  if (s.det == 0) return CpType::degenerate;
  if (s.tr == 0) return CpType::center;
  if (s.tr < 0) return s.disc < 0 ? CpType::attracting_focus : CpType::attracting_node;
  return s.disc < 0 ? CpType::repelling_focus : CpType::repelling_node;
}

uint8_t ref_signature(int t, const int64_t idx[3], const float u[3], const float v[3]) {
  const bool inside = ref_contains_origin({u[0], v[0], idx[0]}, {u[1], v[1], idx[1]},
                                          {u[2], v[2], idx[2]});
  if (!inside) return 0;
  return static_cast<uint8_t>(1 + static_cast<int>(ref_type(t, u, v)));
}

int64_t ref_triangle_count(int64_t nx, int64_t ny) {
  if (nx < 2 || ny < 2) return 0;
  return 2 * (nx - 1) * (ny - 1);
}

std::array<int64_t, 3> ref_triangle_vertices(int64_t nx, int64_t ny, int64_t triangle) {
  if (triangle < 0 || triangle >= ref_triangle_count(nx, ny)) {
    throw std::out_of_range("ref_triangle_vertices: triangle " + std::to_string(triangle));
  }
  // Triangle id = 2 * (i * (nx - 1) + j) + t.
  const int64_t t = triangle % 2;
  const int64_t cell = triangle / 2;
  const int64_t i = cell / (nx - 1);
  const int64_t j = cell % (nx - 1);
  const auto at = [nx](int64_t row, int64_t col) { return row * nx + col; };
  // T0 = {(i,j), (i+1,j), (i+1,j+1)}, T1 = {(i,j), (i,j+1), (i+1,j+1)}.
  if (t == 0) return {at(i, j), at(i + 1, j), at(i + 1, j + 1)};
  return {at(i, j), at(i, j + 1), at(i + 1, j + 1)};
}

std::vector<uint8_t> ref_signatures(int64_t nx, int64_t ny, const float* u, const float* v) {
  const int64_t count = ref_triangle_count(nx, ny);
  std::vector<uint8_t> out(static_cast<size_t>(count));
  for (int64_t tri = 0; tri < count; ++tri) {
    const std::array<int64_t, 3> idx = ref_triangle_vertices(nx, ny, tri);
    const float uu[3] = {u[idx[0]], u[idx[1]], u[idx[2]]};
    const float vv[3] = {v[idx[0]], v[idx[1]], v[idx[2]]};
    out[static_cast<size_t>(tri)] = ref_signature(int(tri % 2), idx.data(), uu, vv);
  }
  return out;
}

std::vector<RefCriticalPoint> ref_critical_points(int64_t nx, int64_t ny, const float* u,
                                                  const float* v) {
  const std::vector<uint8_t> sig = ref_signatures(nx, ny, u, v);
  std::vector<RefCriticalPoint> out;
  for (size_t tri = 0; tri < sig.size(); ++tri) {
    if (sig[tri] != 0) out.push_back({int64_t(tri), static_cast<CpType>(sig[tri] - 1)});
  }
  return out;
}

std::array<int64_t, kCpTypeCount> ref_type_counts(const std::vector<RefCriticalPoint>& cps) {
  std::array<int64_t, kCpTypeCount> counts{};
  for (const RefCriticalPoint& cp : cps) ++counts[static_cast<size_t>(cp.type)];
  return counts;
}

}  // namespace factz::testref
