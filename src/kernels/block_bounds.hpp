// FaCTz-B per-triangle and per-tile decisions (paper section 3.3): the capped safe bound
// of a triangle and the bound id of a tile. One implementation for the CPU frontend
// (backend/cpu/block_mode.cpp) and the CUDA one (backend/cuda/block_bodies.hpp); both change
// the stream's bytes, so they must never exist twice.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/exact64.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/signature.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {

/// The bits of a float (std::bit_cast, usable in device code).
FACTZ_HD uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
#endif
}

/// Biased binary exponent of a float (0 for zero and subnormals).
FACTZ_HD int exponent_bits(float x) { return int((float_bits(x) >> 23) & 0xff); }
/// Biased binary exponent of a double (0 for zero and subnormals).
FACTZ_HD int exponent_bits(double x) { return int((double_bits(x) >> 52) & 0x7ff); }

/// The largest float not above b (a bound must never be rounded up).
FACTZ_HD float round_down(double b) {
  float f = float(b);
  if (double(f) > b) f = nextafterf(f, 0.0f);
  return f;
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
  double largest = 0.0, smallest = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const double au = fabs(u[k]), av = fabs(v[k]);
    largest = au > largest ? au : largest;
    largest = av > largest ? av : largest;
    if (au > 0.0 && au < smallest) smallest = au;
    if (av > 0.0 && av < smallest) smallest = av;
  }
  if (!(largest > 0.0)) return 0.0;  // the zero triangle: no margin (as for floats)
  const int shift = -ilogb(largest);
  double su[3], sv[3];
  for (int k = 0; k < 3; ++k) {
    su[k] = ldexp(u[k], shift);
    sv[k] = ldexp(v[k], shift);
  }
  const double h = half_plane_margin(su, sv);
  if (h >= 1.0) return kSafetyFactor;
  const double cap = eb / smallest;
  if (h * kSafetyFactor >= cap) return h * kSafetyFactor;
  return triangle_safe_bound(su, sv, h);
}

/// The capped safe bounds of cell (i, j)'s triangles T0 = (a, c, d) and T1 = (a, b, d)
/// (corners a = (i, j), b = (i, j+1), c = (i+1, j), d = (i+1, j+1), as in signature.hpp) on a
/// grid of width nx. T: float, or double (bounds in double).
template <class T>
FACTZ_HD void cell_safe_bounds(const T* u, const T* v, int64_t nx, int64_t i, int64_t j, T eb, T& x0, T& x1) {
  const int64_t a = i * nx + j, b = a + 1, c = a + nx, d = c + 1;
  const T u0[3] = {u[a], u[c], u[d]}, v0[3] = {v[a], v[c], v[d]};
  const T u1[3] = {u[a], u[b], u[d]}, v1[3] = {v[a], v[b], v[d]};
  x0 = capped_safe_bound(u0, v0, eb);
  x1 = capped_safe_bound(u1, v1, eb);
}

/// cell_safe_bounds on the mesh of a field with missing vertices (`missing`: one byte per
/// vertex, nonzero = missing; null = none; u, v the filled working copy): a triangle outside
/// the mesh (it touches a missing vertex) constrains nothing, its bound is 1.
template <class T>
FACTZ_HD void cell_safe_bounds_on_mesh(const T* u, const T* v, const uint8_t* missing, int64_t nx, int64_t i,
                                       int64_t j, T eb, T& x0, T& x1) {
  cell_safe_bounds(u, v, nx, i, j, eb, x0, x1);
  const uint8_t off_mesh = cell_masked_triangles(missing, nx, i, j);
  if (off_mesh & 1) x0 = T(1);
  if (off_mesh & 2) x1 = T(1);
}

/// Estimated bits to store a vertex stored exactly (value, index and its code). The same
/// for float64 fields: a larger estimate (64-bit values) lowered the tile ids and grew the
/// codes by about what it saved on the turbulence, and cost up to 10 % on real fields cast
/// to double, whose exact values zstd shrinks.
inline constexpr int kExactCostBits = 48;

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
/// max(1, e - T + 1) bits, the others stored exactly (kExactCostBits); the cheapest T wins
/// (the largest on a tie). Shared by the 2D tiles and the 3D ones (kernels/tiles3d.hpp).
FACTZ_HD uint8_t cheapest_tile_id(const int32_t (*hist)[kTileCostBins], int id_lo, int e_lo, int e_hi,
                                  int32_t free_count) {
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
    int64_t cost = int64_t(free_count - quantized_count) * kExactCostBits;
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
      if (id_lo > kMaxBoundId) break;
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
  if (id_lo > kMaxBoundId) return 0;
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

/// FaCTz-B step 3, one vertex and one component: the bound id of min(eb, r |x|), r the
/// smallest safe relative bound of the vertex's incident triangles. A grid without
/// triangles (1 x N) constrains nothing: eb. T: float (r |x| exact in double), or double
/// (r |x| rounds by 2^-53 relative, far inside kSafetyFactor).
template <class T>
FACTZ_HD int vertex_bound_id(T eb, T r, T x, bool free_grid) {
  const double limit = double(r) * fabs(double(x));
  const double e = free_grid ? double(eb) : (limit < double(eb) ? limit : double(eb));
  return id_for_bound(eb, e);
}

}  // namespace factz::detail
