// The critical-point signature of a triangle: is the origin of the vector plane inside
// the image triangle (exact, with Simulation of Simplicity), and if so, the exact type
// of the linear field's Jacobian. ARCHITECTURE.md section 3 is the contract.
#pragma once

#include <cstdint>

#include "factz/cp_type.hpp"
#include "kernels/mesh.hpp"
#include "kernels/orient.hpp"


namespace factz::detail {

/// Signature byte: 0 = no critical point, 1 + CpType otherwise.
using Signature = uint8_t;
inline constexpr Signature kNoCriticalPoint = 0;
/// The signature byte of a triangle outside the mesh (one of its vertices is missing):
/// the compressors never compare it, and the extractor reports no critical point there.
inline constexpr Signature kMaskedTriangle = 0xFF;

/// Triangles of cell (i, j) that touch a missing vertex (mask: one byte per vertex, nonzero
/// = missing; null = none): bit 0 for T0 = (a, c, d), bit 1 for T1 = (a, b, d), with
/// a = (i, j), b = (i, j+1), c = (i+1, j), d = (i+1, j+1) as in cell_signatures.
FACTZ_HD uint8_t cell_masked_triangles(const uint8_t* mask, int64_t nx, int64_t i, int64_t j) {
  if (mask == nullptr) return 0;
  const int64_t a = i * nx + j, b = a + 1, c = a + nx, d = c + 1;
  const bool shared = mask[a] != 0 || mask[d] != 0;  // the diagonal a-d is in both
  return uint8_t((shared || mask[c] != 0 ? 1 : 0) | (shared || mask[b] != 0 ? 2 : 0));
}

/// Exact inside test of the origin in the triangle spanned by the three tagged points.
/// Fast path: m_k = orient with p_k replaced by the origin is a 2x2 determinant whose
/// sign is exact from two exact products. If no m_k is zero, the SoS perturbation plays
/// no role: differing signs mean outside, equal signs mean inside (D = m_0 + m_1 + m_2
/// then has that same strict sign). Otherwise the full SoS evaluation decides.
FACTZ_HD bool contains_origin(SosPoint p0, SosPoint p1, SosPoint p2) {
  const int m0 = cross_exact(p1.x, p1.y, p2.x, p2.y);
  const int m1 = cross_exact(p2.x, p2.y, p0.x, p0.y);
  const int m2 = cross_exact(p0.x, p0.y, p1.x, p1.y);
  // Branch-light: most triangles are decided here, with unpredictable signs.
  const bool no_zero = (m0 != 0) & (m1 != 0) & (m2 != 0);
  if (no_zero) return (m0 == m1) & (m1 == m2);
  // Inside iff the three origin-replaced orientations and the triangle's own agree. The
  // three with the origin are cheap (a 2x2 determinant, then float comparisons), so they
  // go first; the full orientation is needed only when they agree.
  const SosPoint o{0.0f, 0.0f, -1};
  const int s0 = orient_sos(o, p1, p2);
  if (orient_sos(p0, o, p2) != s0) return false;
  if (orient_sos(p0, p1, o) != s0) return false;
  return orient_sos(p0, p1, p2) == s0;
}

/// Exact type of the linear field with Jacobian [[a1-a0, b1-b0], [c1-c0, d1-d0]]
/// (rows: du, dv; columns: d/dx, d/dy). All eight entries are input floats, so every
/// product below is exact in double and exact_sign_of_sum decides each sign exactly.
FACTZ_HD CpType classify_jacobian(float a1, float a0, float b1, float b0, float c1, float c0,
                                  float d1, float d0) {
  const double A1 = a1, A0 = a0, B1 = b1, B0 = b0, C1 = c1, C0 = c0, D1 = d1, D0 = d0;
  // det J = (a1-a0)(d1-d0) - (b1-b0)(c1-c0)
  const double det_terms[8] = {A1 * D1,  -(A1 * D0), -(A0 * D1), A0 * D0,
                               -(B1 * C1), B1 * C0,  B0 * C1,    -(B0 * C0)};
  const int det = exact_sign_of_sum(det_terms, 8);
  if (det < 0) return CpType::saddle;
  if (det == 0) return CpType::degenerate;
  const double tr_terms[4] = {A1, -A0, D1, -D0};
  const int tr = exact_sign_of_sum(tr_terms, 4);
  if (tr == 0) return CpType::center;
  // disc = tr^2 - 4 det = (ux - vy)^2 + 4 uy vx, ux - vy = a1 - a0 - d1 + d0.
  const double w[4] = {A1, -A0, -D1, D0};
  double disc_terms[20];
  int n = 0;
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) disc_terms[n++] = w[p] * w[q];
  disc_terms[n++] = 4.0 * (B1 * C1);
  disc_terms[n++] = -4.0 * (B1 * C0);
  disc_terms[n++] = -4.0 * (B0 * C1);
  disc_terms[n++] = 4.0 * (B0 * C0);
  const int disc = exact_sign_of_sum(disc_terms, n);
  if (disc < 0) return tr < 0 ? CpType::attracting_focus : CpType::repelling_focus;
  return tr < 0 ? CpType::attracting_node : CpType::repelling_node;
}

/// Exact type of the critical point of triangle kind t (0: T0, 1: T1) with vertex
/// values f0, f1, f2 in contract order. On the unit grid:
///   T0: d/dx = f2 - f1, d/dy = f1 - f0;  T1: d/dx = f1 - f0, d/dy = f2 - f1.
FACTZ_HD CpType triangle_type(int t, const float u[3], const float v[3]) {
  if (t == 0) return classify_jacobian(u[2], u[1], u[1], u[0], v[2], v[1], v[1], v[0]);
  return classify_jacobian(u[1], u[0], u[2], u[1], v[1], v[0], v[2], v[1]);
}

/// Signature of a triangle from its three vertex indices and values (contract order)
/// and its kind t = tri & 1.
FACTZ_HD Signature triangle_signature(int t, const int64_t idx[3], const float u[3],
                                      const float v[3]) {
  const SosPoint p0{u[0], v[0], idx[0]}, p1{u[1], v[1], idx[1]}, p2{u[2], v[2], idx[2]};
  if (!contains_origin(p0, p1, p2)) return kNoCriticalPoint;
  return Signature(1 + int(triangle_type(t, u, v)));
}

/// Signatures of both triangles of cell (i, j): out[0] for T0, out[1] for T1.
/// Corners a = (i, j), b = (i, j+1), c = (i+1, j), d = (i+1, j+1); T0 = (a, c, d),
/// T1 = (a, b, d). The five 2x2 determinants m_k of the two triangles (the diagonal's is
/// shared) decide almost every triangle at once: nonzero with differing signs means no
/// critical point (see contains_origin). Anything else takes the full evaluation.
///
/// Row form: u0, v0 hold row i of the planes and u1, v1 row i + 1 (indexed by column), so a
/// caller may pass rows it derived rather than whole planes.
FACTZ_HD void cell_signatures(const Grid2D& g, int64_t i, int64_t j, const float* u0, const float* u1, const float* v0,
                              const float* v1, Signature out[2]) {
  const int64_t a = i * g.nx + j, b = a + 1, c = a + g.nx, d = c + 1;
  const float ua = u0[j], ub = u0[j + 1], uc = u1[j], ud = u1[j + 1];
  const float va = v0[j], vb = v0[j + 1], vc = v1[j], vd = v1[j + 1];
  const int s_da = cross_exact(ud, vd, ua, va);
  const int s_cd = cross_exact(uc, vc, ud, vd), s_ac = cross_exact(ua, va, uc, vc);
  const int s_bd = cross_exact(ub, vb, ud, vd), s_ab = cross_exact(ua, va, ub, vb);
  // Outside iff all three signs are nonzero and not all equal: |sum| == 1 exactly then
  // (sums of three nonzero signs are +-1 or +-3; a zero makes some other value possible,
  // so zeros are excluded by the product).
  const int sum0 = s_cd + s_da + s_ac, sum1 = s_bd + s_da + s_ab;
  const bool t0_out = (s_cd * s_da * s_ac != 0) & ((sum0 == 1) | (sum0 == -1));
  const bool t1_out = (s_bd * s_da * s_ab != 0) & ((sum1 == 1) | (sum1 == -1));
  if (t0_out) {
    out[0] = kNoCriticalPoint;
  } else {
    const int64_t idx[3] = {a, c, d};
    const float uu[3] = {ua, uc, ud}, vv[3] = {va, vc, vd};
    out[0] = triangle_signature(0, idx, uu, vv);
  }
  if (t1_out) {
    out[1] = kNoCriticalPoint;
  } else {
    const int64_t idx[3] = {a, b, d};
    const float uu[3] = {ua, ub, ud}, vv[3] = {va, vb, vd};
    out[1] = triangle_signature(1, idx, uu, vv);
  }
}

/// cell_signatures on whole planes u and v.
FACTZ_HD void cell_signatures(const Grid2D& g, int64_t i, int64_t j, const float* u, const float* v, Signature out[2]) {
  const int64_t r0 = i * g.nx, r1 = r0 + g.nx;
  cell_signatures(g, i, j, u + r0, u + r1, v + r0, v + r1, out);
}

/// Signature of triangle `tri` of grid `g` over component planes u and v.
FACTZ_HD Signature signature_at(const Grid2D& g, int64_t tri, const float* u, const float* v) {
  int64_t idx[3];
  triangle_vertices(g, tri, idx);
  const float uu[3] = {u[idx[0]], u[idx[1]], u[idx[2]]};
  const float vv[3] = {v[idx[0]], v[idx[1]], v[idx[2]]};
  return triangle_signature(int(tri & 1), idx, uu, vv);
}

}  // namespace factz::detail
