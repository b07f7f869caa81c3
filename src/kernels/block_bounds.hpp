// FaCTz-B per-triangle and per-tile decisions (paper section 3.3): the capped safe bound
// of a triangle and the bound id of a tile. One implementation for the CPU frontend
// (backend/cpu/block_mode.cpp) and the CUDA one (backend/cuda/block_bodies.hpp); both change
// the stream's bytes, so they must never exist twice.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/exact.hpp"
#include "kernels/exact64.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/signature.hpp"
#include "kernels/signature64.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {

/// The largest float not above b (a bound must never be rounded up).
FACTZ_HD float round_down(double b) {
  float f = float(b);
  if (double(f) > b) f = nextafterf(f, 0.0f);
  return f;
}

/// A bound rounded down to T (float: round_down; double: itself).
FACTZ_HD float round_bound(double b, float) { return b == INFINITY ? INFINITY : round_down(b); }
FACTZ_HD double round_bound(double b, double) { return b; }

/// The largest d >= 0 with s d + c d^2 < m for s >= 0, c > 0 (0 when m <= 0), in the form
/// 2m / (s + sqrt(s^2 + 4cm)), which loses no digits when s^2 is much larger than cm.
FACTZ_HD double quadratic_margin(double s, double c, double m) {
  if (!(m > 0.0)) return 0.0;
  const double d = 2.0 * m / (s + sqrt(s * s + 4.0 * c * m));
  return d > 0.0 ? d : 0.0;
}

/// An absolute bound keeping the type of the critical point of triangle kind t (0: T0,
/// 1: T1; values in contract order): when every value moves by at most d, each entry of the
/// Jacobian [[p, q], [r, s]] (differences of two values, triangle_type) moves by at most 2d,
/// so det = ps - qr by at most 2d(|p| + |q| + |r| + |s|) + 8d^2, the trace by 4d, and
/// disc = (p - s)^2 + 4qr by 8d(|p - s| + |q| + |r|) + 32d^2; the type keeps while those stay
/// below |det|, and for nodes and foci also |tr| and |disc|. 0 for a center or a degenerate
/// point (a zero there has no margin). Computed in double (an estimate for float64 fields;
/// the exact check that follows decides).
template <class T>
FACTZ_HD double type_margin(int t, const T u[3], const T v[3]) {
  // triangle_type: T0: d/dx = f2 - f1, d/dy = f1 - f0; T1: d/dx = f1 - f0, d/dy = f2 - f1.
  const int x1 = t == 0 ? 2 : 1, x0 = t == 0 ? 1 : 0, y1 = t == 0 ? 1 : 2, y0 = t == 0 ? 0 : 1;
  const double p = double(u[x1]) - double(u[x0]), q = double(u[y1]) - double(u[y0]);
  const double r = double(v[x1]) - double(v[x0]), s = double(v[y1]) - double(v[y0]);
  const double det = p * s - q * r;
  const double d_det = quadratic_margin(2.0 * (fabs(p) + fabs(q) + fabs(r) + fabs(s)), 8.0, fabs(det));
  if (det < 0.0) return d_det;  // a saddle: the sign of det alone
  const double tr = p + s, w = p - s, disc = w * w + 4.0 * q * r;
  const double d_tr = fabs(tr) / 4.0;
  const double d_disc = quadratic_margin(8.0 * (fabs(w) + fabs(q) + fabs(r)), 32.0, fabs(disc));
  const double d = d_det < d_tr ? d_det : d_tr;
  return d < d_disc ? d : d_disc;
}

/// Bounds of a triangle that neither Eq. 3 nor the half-plane proves critical-point free (a
/// critical point, a zero vector, a tie), so that the exact decision and type stay as they
/// are: a relative bound `xi` (every value within xi |x|) and an absolute one `cap` (within
/// cap), both to hold (0 / 0 when none is known: the vertices are then stored exactly).
/// - No zero vector: the inside test is decided by the strict signs of the three
///   m_k = u_a v_b - u_b v_a (contains_origin's fast path); each keeps its sign while xi is
///   below its determinant_margin (Eq. 3's argument). A zero m_k (a tie among nonzero
///   vectors) has none.
/// - One zero vector (a land vertex): it stays exactly zero (zero quantizes to zero), the
///   m_k through it stay zero, and the SoS evaluation then reads only the coordinates of
///   the two other vectors and their determinant: xi < 1 keeps every coordinate's strict sign
///   (a zero coordinate stays zero), xi below the determinant's margin keeps it.
/// - Two or three zero vectors: only the coordinates of the third are read: xi < 1.
/// If the triangle holds a critical point, `cap` = type_margin keeps its type; otherwise cap
/// is +inf. Both are times kSafetyFactor. idx: the vertices' global indices (for SoS).
template <class T>
FACTZ_HD void uncertified_bounds(int t, const int64_t idx[3], const T u[3], const T v[3], double& xi, double& cap) {
  xi = 0.0;
  cap = 0.0;
  int zeros = 0, nonzero_a = -1, nonzero_b = -1;
  for (int k = 0; k < 3; ++k) {
    if (u[k] == T(0) && v[k] == T(0)) {
      ++zeros;
    } else if (nonzero_a < 0) {
      nonzero_a = k;
    } else {
      nonzero_b = k;
    }
  }
  double r = 1.0;
  if (zeros <= 1) {
    // m_k with (a, b) = (k + 1, k + 2) mod 3: all three without a zero vector, else the one
    // of the two nonzero vectors.
    for (int k = 0; k < 3; ++k) {
      const int a = (k + 1) % 3, b = (k + 2) % 3;
      if (zeros == 1 && !((a == nonzero_a && b == nonzero_b) || (a == nonzero_b && b == nonzero_a))) continue;
      const double pos = double(u[a]) * double(v[b]), neg = double(u[b]) * double(v[a]);
      if (eq3_condition_sign(u, v, k, pos, neg) == 0) return;  // a tie: no margin
      double mp = 0.0, mm = 0.0;
      add_term(pos, mp, mm);
      add_term(-neg, mp, mm);
      const double m = determinant_margin(mp, mm);
      r = m < r ? m : r;
    }
  }
  if (!(r > 0.0)) return;
  double c = INFINITY;
  if (triangle_signature(t, idx, u, v) != kNoCriticalPoint) {
    c = type_margin(t, u, v);
    if (!(c > 0.0)) return;
  }
  xi = r * kSafetyFactor;
  cap = c * kSafetyFactor;
}

/// uncertified_bounds of a float triangle (its products are exact in double).
FACTZ_HD void scaled_uncertified_bounds(int t, const int64_t idx[3], const float u[3], const float v[3], double& xi,
                                        double& cap) {
  uncertified_bounds(t, idx, u, v, xi, cap);
}

/// A float64 triangle scaled by one power of two, 2^shift, that puts its largest magnitude
/// in [1, 2): ratios of products (every margin here) do not change, and no product
/// overflows (a value 2^1000 below the largest may underflow, which only lowers a margin).
/// `largest` is the unscaled largest magnitude; the zero triangle keeps shift 0.
struct UnitTriangle {
  double u[3], v[3];
  int shift = 0;
  double largest = 0.0;
};
FACTZ_HD UnitTriangle unit_scaled(const double u[3], const double v[3]) {
  UnitTriangle s;
  for (int k = 0; k < 3; ++k) {
    s.largest = fabs(u[k]) > s.largest ? fabs(u[k]) : s.largest;
    s.largest = fabs(v[k]) > s.largest ? fabs(v[k]) : s.largest;
  }
  s.shift = s.largest > 0.0 ? -ilogb(s.largest) : 0;
  for (int k = 0; k < 3; ++k) {
    s.u[k] = ldexp(u[k], s.shift);
    s.v[k] = ldexp(v[k], s.shift);
  }
  return s;
}

/// uncertified_bounds of a float64 triangle, scale-free as capped_safe_bound is: computed
/// on unit_scaled values (xi is a ratio), the cap scaled back.
FACTZ_HD void scaled_uncertified_bounds(int t, const int64_t idx[3], const double u[3], const double v[3],
                                        double& xi, double& cap) {
  const UnitTriangle s = unit_scaled(u, v);
  uncertified_bounds(t, idx, s.u, s.v, xi, cap);
  if (cap < INFINITY) cap = ldexp(cap, -s.shift);
}

/// The triangle's safe bound, except that values which cannot matter are not refined:
/// vertex k takes min(eb, xi |x_k|) per component, so any xi >= eb / min_k(nonzero |x_k|)
/// gives every vertex the full eb. When the cheap half-plane bound already reaches that
/// cap, Eq. 3 is skipped (the result, after the per-vertex minimum, is identical).
FACTZ_HD float capped_safe_bound(const float u[3], const float v[3], float eb) {
  const double h = half_plane_margin(u, v);
  // h == 1 is the largest margin any bound gives (both are <= 1), so triangle_safe_bound
  // would return exactly this: most triangles of a smooth field stop here.
  if (h >= 1.0) return round_down(kSafetyFactor);
  float smallest = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const float au = fabsf(u[k]), av = fabsf(v[k]);
    if (au > 0.0f && au < smallest) smallest = au;
    if (av > 0.0f && av < smallest) smallest = av;
  }
  const double cap = double(eb) / double(smallest);  // 0 when all values are 0
  if (h * kSafetyFactor >= cap) return round_down(h * kSafetyFactor);
  return round_down(triangle_safe_bound(u, v, h));
}

/// capped_safe_bound of a float64 triangle, in double (no bound is rounded to float). The
/// margins are ratios, unchanged when all six values are scaled by one power of two, so the
/// values are scaled first to put the largest magnitude in [1, 2): no product overflows (a
/// value 2^1000 below the largest may underflow, which only lowers a margin). The cap
/// compares with the unscaled values. The block frontend checks every float64 triangle's
/// signature exactly afterwards (no triangle is taken as critical-point free from this).
FACTZ_HD double capped_safe_bound(const double u[3], const double v[3], double eb) {
  const UnitTriangle s = unit_scaled(u, v);
  if (!(s.largest > 0.0)) return 0.0;  // the zero triangle: no margin (as for floats)
  double smallest = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const double au = fabs(u[k]), av = fabs(v[k]);
    if (au > 0.0 && au < smallest) smallest = au;
    if (av > 0.0 && av < smallest) smallest = av;
  }
  const double h = half_plane_margin(s.u, s.v);
  if (h >= 1.0) return kSafetyFactor;
  const double cap = eb / smallest;
  if (h * kSafetyFactor >= cap) return h * kSafetyFactor;
  return triangle_safe_bound(s.u, s.v, h);
}

/// A relative bound that constrains nothing: a component the triangle's proof does not read
/// (r |x| reaches eb for any |x| >= eb 2^-64; a zero value stays zero whatever its bound).
inline constexpr double kFreeRelativeBound = 0x1p64;

/// The bounds of one triangle for the block frontend: relative bounds per component (every
/// u within xi_u |u|, every v within xi_v |v|) and an absolute cap (every value within cap),
/// all to hold.
template <class T>
struct TriangleBounds {
  T xi_u, xi_v, cap;
};

/// The smallest of three magnitudes.
template <class T>
FACTZ_HD T smallest_magnitude(const T x[3]) {
  const T a0 = fabs(x[0]), a1 = fabs(x[1]), a2 = fabs(x[2]);
  return a0 < a1 ? (a0 < a2 ? a0 : a2) : (a1 < a2 ? a1 : a2);
}

/// triangle_bounds' result for a triangle and whether a safe bound proved it critical-point
/// free (`proven_free`; its cap is then +inf). A component with one strict sign on the three
/// vertices proves it alone: a relative change below 1 keeps that sign, whatever the other
/// component does, so only that component is bounded (the one of the larger smallest
/// magnitude when both have one sign: its bound min(eb, xi |x|) is tighter less often).
/// Otherwise capped_safe_bound (Eq. 3 and the half-plane) bounds both components alike, and
/// without its proof uncertified_bounds gives bounds that keep the triangle's decision (and a
/// critical point's type). Rounded down to T. t: the triangle kind; idx: global indices.
template <class T>
FACTZ_HD TriangleBounds<T> triangle_bounds(int t, const int64_t idx[3], const T u[3], const T v[3], T eb,
                                           bool& proven_free) {
  const T free_bound = T(kFreeRelativeBound), one_sign = T(round_bound(kSafetyFactor, T(0)));
  const bool u_one = strictly_one_sided(u, 3), v_one = strictly_one_sided(v, 3);
  proven_free = true;
  if (u_one && (!v_one || smallest_magnitude(u) >= smallest_magnitude(v)))
    return {one_sign, free_bound, T(INFINITY)};
  if (v_one) return {free_bound, one_sign, T(INFINITY)};
  const T xi = capped_safe_bound(u, v, eb);
  proven_free = xi > T(0);
  if (proven_free) return {xi, xi, T(INFINITY)};
  double x, c;
  scaled_uncertified_bounds(t, idx, u, v, x, c);
  const T rx = round_bound(x, T(0)), rc = round_bound(c, T(0));
  if (!(rx > T(0)) || !(rc > T(0))) return {T(0), T(0), T(0)};
  return {rx, rx, rc};
}

/// The block bounds of cell (i, j)'s triangles T0 = (a, c, d) and T1 = (a, b, d) (corners
/// a = (i, j), b = (i, j+1), c = (i+1, j), d = (i+1, j+1), as in signature.hpp) on a grid of
/// width nx, with triangle_bounds: out[t] for triangle t, and bit t of `free_bits` for
/// triangle t proven critical-point free. T: float, or double.
template <class T>
FACTZ_HD void cell_block_bounds(const T* u, const T* v, int64_t nx, int64_t i, int64_t j, T eb, TriangleBounds<T> out[2],
                                uint8_t& free_bits) {
  const int64_t a = i * nx + j, b = a + 1, c = a + nx, d = c + 1;
  const int64_t i0[3] = {a, c, d}, i1[3] = {a, b, d};
  const T u0[3] = {u[a], u[c], u[d]}, v0[3] = {v[a], v[c], v[d]};
  const T u1[3] = {u[a], u[b], u[d]}, v1[3] = {v[a], v[b], v[d]};
  bool f0, f1;
  out[0] = triangle_bounds(0, i0, u0, v0, eb, f0);
  out[1] = triangle_bounds(1, i1, u1, v1, eb, f1);
  free_bits = uint8_t((f0 ? 1 : 0) | (f1 ? 2 : 0));
}

/// cell_block_bounds on the mesh of a field with missing vertices (`missing`: one byte per
/// vertex, nonzero = missing; null = none; u, v the filled working copy): a triangle outside
/// the mesh (it touches a missing vertex) constrains nothing (relative bounds 1, cap +inf) and
/// counts as free (the exact check never compares it).
template <class T>
FACTZ_HD void cell_block_bounds_on_mesh(const T* u, const T* v, const uint8_t* missing, int64_t nx, int64_t i,
                                        int64_t j, T eb, TriangleBounds<T> out[2], uint8_t& free_bits) {
  cell_block_bounds(u, v, nx, i, j, eb, out, free_bits);
  const uint8_t off_mesh = cell_masked_triangles(missing, nx, i, j);
  for (int t = 0; t < 2; ++t)
    if (off_mesh & (1 << t)) out[t] = {T(1), T(1), T(INFINITY)};
  free_bits = uint8_t(free_bits | off_mesh);
}

/// Estimated bits to store a vertex stored exactly (value, index and its code), per
/// component. 3D tiles keep 48. The 2D estimate was 48 too until 2026-12-03; measured, an
/// exact 2D value costs about 27 bits with its index (zstd halves the values: neighbours
/// share sign and exponent bytes), and 24 gave the smallest streams (geometric mean of the
/// block ratio over the real fields at REL 1e-2 to 1e-4: 48 -> 6.92, 32 -> 7.07, 24 -> 7.11,
/// 16 -> 7.10; up to +17 % at 1e-2, the 4096^2 turbulence +3 %). The same for float64
/// fields: a larger estimate (64-bit values) lowered the tile ids and grew the codes by
/// about what it saved on the turbulence, and cost up to 10 % on real fields cast to double,
/// whose exact values zstd shrinks. Since stored vertices are listed on the grid of their own
/// bound (kernels/exact_rounding.hpp list_exact, 2026-12-03) they cost less: geometric mean
/// over the same rows with listing 24 -> 7.40, 16 -> 7.46, 12 -> 7.47, 8 -> 7.47 (8 loses on
/// the ocean currents); the 4096^2 turbulence at REL 1e-2 27.73 (24) -> 28.65 (12).
inline constexpr int kExactCostBits = 12;
inline constexpr int kExactCostBits3D = 48;

/// The magnitude of a Lorenzo residual whose exponent choose_tile_id bins: rounded to float
/// for float fields (as it always was), kept in double for float64 ones.
FACTZ_HD float residual_magnitude(double r, float) { return float(fabs(r)); }
FACTZ_HD double residual_magnitude(double r, double) { return fabs(r); }

/// The residual-exponent bins of choose_tile_id's estimate: e clamped to [0, kTileCostBins).
inline constexpr int kTileCostBins = 2 * kMaxBoundId + 4;

/// Bound-id exponent of a residual magnitude r against eb (whose exponent bits are
/// `eb_exponent`): about floor(log2(r / eb)) + 30 + 2, clamped to the bins; an estimate, so
/// the exponent bits suffice (subnormals count as tiny). V: float, or double.
template <class V>
FACTZ_HD int residual_bin(V r, int eb_exponent) {
  int e = r > V(0) ? exponent_bits(r) - eb_exponent + kMaxBoundId + 2 : 0;
  return e < 0 ? 0 : (e > kTileCostBins - 1 ? kTileCostBins - 1 : e);
}

/// The id choose_tile_id takes for a tile whose free vertices (own id > 0) are counted in
/// hist[id][e] (required id, residual bin; only rows [id_lo, kMaxBoundId] and columns
/// [e_lo, e_hi] are read), `free_count` of them (> 0). Sweeps T from kMaxBoundId down to
/// id_lo (below it the cost only grows): vertices with id >= T are quantized at T at about
/// max(1, e - T + 1) bits, the others stored exactly (exact_cost_bits: kExactCostBits in 2D,
/// kExactCostBits3D in 3D); the cheapest T wins
/// (the largest on a tie). Shared by the 2D tiles and the 3D ones (kernels/tiles3d.hpp).
FACTZ_HD uint8_t cheapest_tile_id(const int32_t (*hist)[kTileCostBins], int id_lo, int e_lo, int e_hi,
                                  int32_t free_count, int exact_cost_bits = kExactCostBits) {
  int32_t quantized[kTileCostBins];
  for (int e = 0; e < kTileCostBins; ++e) quantized[e] = 0;
  int32_t quantized_count = 0;
  int64_t best_cost = INT64_MAX;
  int best = 0;
  for (int T = kMaxBoundId; T >= id_lo; --T) {
    for (int e = e_lo; e <= e_hi; ++e) {
      quantized[e] += hist[T][e];
      quantized_count += hist[T][e];
    }
    int64_t cost = int64_t(free_count - quantized_count) * exact_cost_bits;
    for (int e = e_lo; e <= e_hi; ++e)
      if (quantized[e]) cost += int64_t(quantized[e]) * (e - T + 1 > 1 ? e - T + 1 : 1);
    if (cost < best_cost) {
      best_cost = cost;
      best = T;
    }
  }
  return uint8_t(best);
}

/// Bound id of one tile, the rectangle [x0, x1) x [y0, y1) of a plane x of width nx whose
/// vertices need ids[k]. The paper takes the minimum id of the tile's non-exact vertices;
/// one vertex with a tiny safe bound then drags the whole tile down. We choose instead the
/// id T that minimises an estimate of the tile's size: vertices whose own id is below T
/// are stored exactly (kExactCostBits each), the others cost about max(1, e - T + 2) bits,
/// e being the bound-id exponent of their Lorenzo residual on the original values (inside
/// the tile). 0 when eb is 0 or no vertex is free. The guarantee does not depend on this
/// choice: quantization checks every vertex against its own bound and stores misses exactly.
/// V: float, or double (the exponents are then those of doubles).
template <class V>
FACTZ_HD uint8_t choose_tile_id(const V* x, const uint8_t* ids, int64_t nx, int64_t x0, int64_t y0, int64_t x1,
                                int64_t y1, V eb) {
  if (!(eb > V(0))) return 0;
  const int eb_exponent = exponent_bits(eb);
  // hist[id][e]: vertices by required id and residual exponent; only rows
  // [id_lo, kMaxBoundId] and columns [e_lo, e_hi] are used (and zeroed).
  int32_t hist[kMaxBoundId + 1][kTileCostBins];
  int id_lo = kMaxBoundId + 1, e_lo = kTileCostBins, e_hi = -1;
  int32_t free_count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t xi = x0; xi < x1; ++xi) {
        const int64_t k = y * nx + xi;
        const int id = ids[k];
        if (id == 0) continue;  // exact whatever T is (or zero, which any T reproduces)
        if (pass == 0) {
          id_lo = id < id_lo ? id : id_lo;
          continue;
        }
        const double l = xi > x0 ? x[k - 1] : 0.0, up = y > y0 ? x[k - nx] : 0.0;
        const double ul = (xi > x0 && y > y0) ? x[k - nx - 1] : 0.0;
        const V r = residual_magnitude(double(x[k]) - (l + up - ul), V(0));
        const int e = residual_bin(r, eb_exponent);
        ++hist[id][e];
        e_lo = e < e_lo ? e : e_lo;
        e_hi = e > e_hi ? e : e_hi;
        ++free_count;
      }
    if (pass == 0) {
      // No free vertex: 0. Every free vertex takes eb itself: only T = kMaxBoundId is swept,
      // so it wins whatever the residuals (most tiles of a smooth field).
      if (id_lo >= kMaxBoundId) return id_lo == kMaxBoundId ? uint8_t(kMaxBoundId) : uint8_t(0);
      for (int id = id_lo; id <= kMaxBoundId; ++id)
        for (int e = 0; e < kTileCostBins; ++e) hist[id][e] = 0;
    }
  }
  if (free_count == 0) return 0;
  return cheapest_tile_id(hist, id_lo, e_lo, e_hi, free_count);
}

/// choose_tile_id of a float plane (x1 - x0 <= kTile) in the CPU's form: the residual bins of
/// each tile row are computed in a loop without branches (the compiler vectorizes it; the
/// first row and column of the tile, whose neighbours count as 0, are their own cases) and
/// counted after. The same operations on the same values, so the same id
/// (tests/test_tiled_run.cpp); the CUDA frontend runs choose_tile_id.
inline uint8_t choose_tile_id_rows(const float* x, const uint8_t* ids, int64_t nx, int64_t x0, int64_t y0, int64_t x1,
                                   int64_t y1, float eb) {
  if (!(eb > 0.0f)) return 0;
  const int64_t w = x1 - x0;
  int id_lo = 255;  // ids are at most kMaxBoundId; an exact vertex (id 0) counts as none
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t i = 0; i < w; ++i) {
      const int id = ids[y * nx + x0 + i];
      const int v = id == 0 ? 255 : id;
      id_lo = v < id_lo ? v : id_lo;
    }
  if (id_lo >= kMaxBoundId) return id_lo == kMaxBoundId ? uint8_t(kMaxBoundId) : uint8_t(0);  // as choose_tile_id
  int32_t hist[kMaxBoundId + 1][kTileCostBins];
  for (int id = id_lo; id <= kMaxBoundId; ++id)
    for (int e = 0; e < kTileCostBins; ++e) hist[id][e] = 0;
  const int bias = kMaxBoundId + 2 - exponent_bits(eb);
  int e_lo = kTileCostBins, e_hi = -1;
  int32_t free_count = 0;
  double d[kTile];
  int32_t bins[kTile];
  for (int64_t y = y0; y < y1; ++y) {
    const float* row = x + y * nx + x0;
    if (y == y0) {  // no row above: up = ul = 0
      d[0] = double(row[0]) - (0.0 + 0.0 - 0.0);
      for (int64_t i = 1; i < w; ++i) d[i] = double(row[i]) - (double(row[i - 1]) + 0.0 - 0.0);
    } else {
      const float* up = row - nx;
      d[0] = double(row[0]) - (0.0 + double(up[0]) - 0.0);
      for (int64_t i = 1; i < w; ++i)
        d[i] = double(row[i]) - (double(row[i - 1]) + double(up[i]) - double(up[i - 1]));
    }
    for (int64_t i = 0; i < w; ++i) {  // residual_bin(residual_magnitude(d)) with integer selects
      const uint32_t bits = float_bits(float(fabs(d[i])));
      const bool positive = bits - 1u < 0x7f800000u;  // (0, inf]: r > 0 (not 0, not NaN)
      int e = positive ? int(bits >> 23) + bias : 0;
      e = e < 0 ? 0 : (e > kTileCostBins - 1 ? kTileCostBins - 1 : e);
      bins[i] = e;
    }
    const uint8_t* row_ids = ids + y * nx + x0;
    for (int64_t i = 0; i < w; ++i) {
      const int id = row_ids[i];
      if (id == 0) continue;
      const int e = bins[i];
      ++hist[id][e];
      e_lo = e < e_lo ? e : e_lo;
      e_hi = e > e_hi ? e : e_hi;
      ++free_count;
    }
  }
  return cheapest_tile_id(hist, id_lo, e_lo, e_hi, free_count);
}

/// FaCTz-B step 3, one vertex and one component: the bound id of min(eb, r |x|, cap), r the
/// smallest relative bound of this component and cap the smallest absolute bound of the
/// vertex's incident triangles (r may be kFreeRelativeBound: r |x| stays finite). A grid
/// without triangles (1 x N) constrains nothing: eb. T: float (r |x| exact in double), or
/// double (r |x| rounds by 2^-53 relative, far inside kSafetyFactor).
template <class T>
FACTZ_HD int vertex_bound_id(T eb, T r, T cap, T x, bool free_grid) {
  if (free_grid) return id_for_bound(eb, double(eb));
  const double limit = double(r) * fabs(double(x));
  double e = limit < double(eb) ? limit : double(eb);
  e = double(cap) < e ? double(cap) : e;
  return id_for_bound(eb, e);
}

}  // namespace factz::detail
