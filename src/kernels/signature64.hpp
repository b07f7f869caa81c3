// The critical-point signature of a triangle of a float64 field (issue 18): signature.hpp's
// decisions, made exactly on double inputs (orient64.hpp, exact64.hpp). The entry points
// that take value arrays or planes overload signature.hpp's float ones, so code written
// once for both value types calls them by the same name.
#pragma once

#include <cstdint>

#include "factz/cp_type.hpp"
#include "kernels/mesh.hpp"
#include "kernels/orient64.hpp"
#include "kernels/signature.hpp"

namespace factz::detail {

/// Exact inside test of the origin in the triangle spanned by the three tagged points, as
/// contains_origin: no zero 2x2 determinant m_k means equal signs = inside; any zero goes
/// to the full SoS evaluation.
FACTZ_HD bool contains_origin64(SosPoint64 p0, SosPoint64 p1, SosPoint64 p2) {
  const int m0 = cross_exact64(p1.x, p1.y, p2.x, p2.y);
  const int m1 = cross_exact64(p2.x, p2.y, p0.x, p0.y);
  const int m2 = cross_exact64(p0.x, p0.y, p1.x, p1.y);
  const bool no_zero = (m0 != 0) & (m1 != 0) & (m2 != 0);
  if (no_zero) return (m0 == m1) & (m1 == m2);
  const SosPoint64 o{0.0, 0.0, -1};
  const int s0 = orient_sos64(o, p1, p2);
  if (orient_sos64(p0, o, p2) != s0) return false;
  if (orient_sos64(p0, p1, o) != s0) return false;
  return orient_sos64(p0, p1, p2) == s0;
}

/// Exact type of the linear field with Jacobian [[a1-a0, b1-b0], [c1-c0, d1-d0]] (rows:
/// du, dv; columns: d/dx, d/dy), as classify_jacobian. Each sign is that of a sum of
/// products of the inputs, decided by exact_sign_of_products:
///   det  = (a1-a0)(d1-d0) - (b1-b0)(c1-c0)                               8 terms
///   tr   = a1 - a0 + d1 - d0                                             4 terms
///   disc = (ux - vy)^2 + 4 uy vx, ux - vy = w0 + w1 + w2 + w3 with
///          w = (a1, -a0, -d1, d0): sum_p w_p^2 + 2 sum_{p<q} w_p w_q
///          + 4 (b1 c1 - b1 c0 - b0 c1 + b0 c0)                            14 terms
/// (disc = tr^2 - 4 det has degree 2 in the values, as det.) The factors 2 and 4 are the
/// terms' exact power-of-two scales, so no product is formed before the exact evaluation.
FACTZ_HD CpType classify_jacobian64(double a1, double a0, double b1, double b0, double c1, double c0,
                                    double d1, double d0) {
  const ProductTerm det_terms[8] = {{a1, d1, 0},  {-a1, d0, 0}, {-a0, d1, 0}, {a0, d0, 0},
                                    {-b1, c1, 0}, {b1, c0, 0},  {b0, c1, 0},  {-b0, c0, 0}};
  const int det = exact_sign_of_products(det_terms, 8);
  if (det < 0) return CpType::saddle;
  if (det == 0) return CpType::degenerate;
  const ProductTerm tr_terms[4] = {{a1, 1.0, 0}, {-a0, 1.0, 0}, {d1, 1.0, 0}, {-d0, 1.0, 0}};
  const int tr = exact_sign_of_products(tr_terms, 4);
  if (tr == 0) return CpType::center;
  const double w[4] = {a1, -a0, -d1, d0};
  ProductTerm disc_terms[14];
  int n = 0;
  for (int p = 0; p < 4; ++p) {
    disc_terms[n++] = ProductTerm{w[p], w[p], 0};
    for (int q = p + 1; q < 4; ++q) disc_terms[n++] = ProductTerm{w[p], w[q], 1};
  }
  disc_terms[n++] = ProductTerm{b1, c1, 2};
  disc_terms[n++] = ProductTerm{-b1, c0, 2};
  disc_terms[n++] = ProductTerm{-b0, c1, 2};
  disc_terms[n++] = ProductTerm{b0, c0, 2};
  const int disc = exact_sign_of_products(disc_terms, n);
  if (disc < 0) return tr < 0 ? CpType::attracting_focus : CpType::repelling_focus;
  return tr < 0 ? CpType::attracting_node : CpType::repelling_node;
}

/// Exact type of the critical point of triangle kind t (0: T0, 1: T1) with vertex values
/// f0, f1, f2 in contract order (T0: d/dx = f2 - f1, d/dy = f1 - f0; T1: d/dx = f1 - f0,
/// d/dy = f2 - f1).
FACTZ_HD CpType triangle_type(int t, const double u[3], const double v[3]) {
  if (t == 0) return classify_jacobian64(u[2], u[1], u[1], u[0], v[2], v[1], v[1], v[0]);
  return classify_jacobian64(u[1], u[0], u[2], u[1], v[1], v[0], v[2], v[1]);
}

/// Signature of a triangle from its three vertex indices and values (contract order) and
/// its kind t = tri & 1.
FACTZ_HD Signature triangle_signature(int t, const int64_t idx[3], const double u[3], const double v[3]) {
  const SosPoint64 p0{u[0], v[0], idx[0]}, p1{u[1], v[1], idx[1]}, p2{u[2], v[2], idx[2]};
  if (!contains_origin64(p0, p1, p2)) return kNoCriticalPoint;
  return Signature(1 + int(triangle_type(t, u, v)));
}

/// Signatures of both triangles of cell (i, j): out[0] for T0 = (a, c, d), out[1] for
/// T1 = (a, b, d), with the five 2x2 determinants deciding almost every triangle at once
/// (see the float cell_signatures).
///
/// Row form: u0, v0 hold row i of the planes and u1, v1 row i + 1 (indexed by column), so a
/// caller may pass rows it derived rather than whole planes.
FACTZ_HD void cell_signatures(const Grid2D& g, int64_t i, int64_t j, const double* u0, const double* u1, const double* v0,
                              const double* v1, Signature out[2]) {
  const int64_t a = i * g.nx + j, b = a + 1, c = a + g.nx, d = c + 1;
  const double ua = u0[j], ub = u0[j + 1], uc = u1[j], ud = u1[j + 1];
  const double va = v0[j], vb = v0[j + 1], vc = v1[j], vd = v1[j + 1];
  const int s_da = cross_exact64(ud, vd, ua, va);
  const int s_cd = cross_exact64(uc, vc, ud, vd), s_ac = cross_exact64(ua, va, uc, vc);
  const int s_bd = cross_exact64(ub, vb, ud, vd), s_ab = cross_exact64(ua, va, ub, vb);
  const int sum0 = s_cd + s_da + s_ac, sum1 = s_bd + s_da + s_ab;
  const bool t0_out = (s_cd * s_da * s_ac != 0) & ((sum0 == 1) | (sum0 == -1));
  const bool t1_out = (s_bd * s_da * s_ab != 0) & ((sum1 == 1) | (sum1 == -1));
  if (t0_out) {
    out[0] = kNoCriticalPoint;
  } else {
    const int64_t idx[3] = {a, c, d};
    const double uu[3] = {ua, uc, ud}, vv[3] = {va, vc, vd};
    out[0] = triangle_signature(0, idx, uu, vv);
  }
  if (t1_out) {
    out[1] = kNoCriticalPoint;
  } else {
    const int64_t idx[3] = {a, b, d};
    const double uu[3] = {ua, ub, ud}, vv[3] = {va, vb, vd};
    out[1] = triangle_signature(1, idx, uu, vv);
  }
}

/// cell_signatures on whole planes u and v.
FACTZ_HD void cell_signatures(const Grid2D& g, int64_t i, int64_t j, const double* u, const double* v, Signature out[2]) {
  const int64_t r0 = i * g.nx, r1 = r0 + g.nx;
  cell_signatures(g, i, j, u + r0, u + r1, v + r0, v + r1, out);
}

/// Signature of triangle `tri` of grid `g` over float64 component planes u and v.
FACTZ_HD Signature signature_at(const Grid2D& g, int64_t tri, const double* u, const double* v) {
  int64_t idx[3];
  triangle_vertices(g, tri, idx);
  const double uu[3] = {u[idx[0]], u[idx[1]], u[idx[2]]};
  const double vv[3] = {v[idx[0]], v[idx[1]], v[idx[2]]};
  return triangle_signature(int(tri & 1), idx, uu, vv);
}

}  // namespace factz::detail
