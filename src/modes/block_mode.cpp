// FaCTz-B frontend (paper section 3.3, ARCHITECTURE.md section 4) and mode none.
#include <algorithm>
#include <bit>
#include <omp.h>

#include <climits>
#include <cmath>
#include <span>

#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "modes/frontend.hpp"

namespace factz::detail {
namespace {

std::vector<uint8_t> uniform_tile_ids(const TileLayout& L, float eb) {
  return std::vector<uint8_t>(size_t(L.tile_count()), uint8_t(eb > 0.0f ? kMaxBoundId : 0));
}

/// Biased binary exponent of a float (0 for zero and subnormals).
int exponent_bits(float x) { return int((std::bit_cast<uint32_t>(x) >> 23) & 0xff); }

/// Estimated bits to store a vertex stored exactly (value, index and its code).
constexpr int kExactCostBits = 48;

/// Per-tile bound id per component. The paper takes the minimum id of the tile's
/// non-exact vertices; one vertex with a tiny safe bound then drags the whole tile down.
/// We choose instead the id T that minimises an estimate of the tile's size: vertices
/// whose own id is below T are stored exactly (kExactCostBits each), the others cost
/// about max(1, e - T + 2) bits, e being the bound-id exponent of their Lorenzo residual
/// on the original values. The guarantee does not depend on this choice: quantize_plane
/// checks every vertex against its own bound and stores misses exactly.
std::vector<uint8_t> choose_tile_ids(const TileLayout& L, std::span<const float> x, const BigVector<uint8_t>& ids,
                                     float eb, int threads) {
  std::vector<uint8_t> out(static_cast<size_t>(L.tile_count()), 0);
  if (!(eb > 0.0f)) return out;
  constexpr int kBins = 2 * kMaxBoundId + 4;  // residual exponent e, clamped to [0, kBins)
  const int eb_exponent = exponent_bits(eb);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t t = 0; t < L.tile_count(); ++t) {
    const int64_t x0 = (t % L.tiles_x) * kTile, y0 = (t / L.tiles_x) * kTile;
    const int64_t x1 = std::min(L.nx, x0 + kTile), y1 = std::min(L.ny, y0 + kTile);
    // hist[id][e]: vertices by required id and residual exponent; only rows
    // [id_lo, kMaxBoundId] and columns [e_lo, e_hi] are used (and zeroed).
    int32_t hist[kMaxBoundId + 1][kBins];
    int id_lo = kMaxBoundId + 1, e_lo = kBins, e_hi = -1;
    int32_t free_count = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t y = y0; y < y1; ++y)
        for (int64_t xi = x0; xi < x1; ++xi) {
          const int64_t k = y * L.nx + xi;
          const int id = ids[size_t(k)];
          if (id == 0) continue;  // exact whatever T is (or zero, which any T reproduces)
          if (pass == 0) {
            id_lo = std::min(id_lo, id);
            continue;
          }
          const double l = xi > x0 ? x[k - 1] : 0.0, up = y > y0 ? x[k - L.nx] : 0.0;
          const double ul = (xi > x0 && y > y0) ? x[k - L.nx - 1] : 0.0;
          const float r = float(std::fabs(double(x[k]) - (l + up - ul)));
          // Bound-id exponent of the residual, about floor(log2(r / eb)) + 30 + 2; an
          // estimate, so the exponent bits suffice (subnormals count as tiny).
          int e = r > 0.0f ? exponent_bits(r) - eb_exponent + kMaxBoundId + 2 : 0;
          e = std::clamp(e, 0, kBins - 1);
          ++hist[id][e];
          e_lo = std::min(e_lo, e);
          e_hi = std::max(e_hi, e);
          ++free_count;
        }
      if (pass == 0) {
        if (id_lo > kMaxBoundId) break;
        for (int id = id_lo; id <= kMaxBoundId; ++id)
          for (int e = 0; e < kBins; ++e) hist[id][e] = 0;
      }
    }
    if (free_count == 0) continue;
    // Sweep T from kMaxBoundId down to id_lo (below it the cost only grows): vertices
    // with id >= T are quantized at T, the others stored exactly.
    int32_t quantized[kBins] = {};
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
        if (quantized[e]) cost += int64_t(quantized[e]) * std::max(1, e - T + 1);
      if (cost < best_cost) {
        best_cost = cost;
        best = T;
      }
    }
    out[size_t(t)] = uint8_t(best);
  }
  return out;
}

/// The largest float not above b (a bound must never be rounded up).
float round_down(double b) {
  float f = float(b);
  if (double(f) > b) f = std::nextafter(f, 0.0f);
  return f;
}

/// The triangle's safe bound, except that values which cannot matter are not refined:
/// vertex k takes min(eb, xi |x_k|) per component, so any xi >= eb / min_k(nonzero |x_k|)
/// gives every vertex the full eb. When the cheap half-plane bound already reaches that
/// cap, Eq. 3 is skipped (the result, after the per-vertex minimum, is identical).
float capped_safe_bound(const float u[3], const float v[3], float eb) {
  const double h = half_plane_margin(u, v);
  // h == 1 is the largest margin any bound gives (both are <= 1), so triangle_safe_bound
  // would return exactly this: most triangles of a smooth field stop here.
  if (h >= 1.0) return round_down(kSafetyFactor);
  float smallest = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const float au = std::fabs(u[k]), av = std::fabs(v[k]);
    if (au > 0.0f && au < smallest) smallest = au;
    if (av > 0.0f && av < smallest) smallest = av;
  }
  const double cap = double(eb) / double(smallest);  // 0 when all values are 0
  if (h * kSafetyFactor >= cap) return round_down(h * kSafetyFactor);
  return round_down(triangle_safe_bound(u, v));
}

}  // namespace

void run_none(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges) {
  const TileLayout L(f.nx, f.ny);
  quantize_plane(f.u, L, eb, uniform_tile_ids(L, eb), nullptr, threads, out.u);
  quantize_plane(f.v, L, eb, uniform_tile_ids(L, eb), nullptr, threads, out.v);
  force_exact_edges(f, exact_edges, out);
}

void force_exact_edges(const VectorField2D& f, uint8_t edges, FrontendResult& out) {
  if (!edges) return;
  auto force = [&](int64_t k) {
    const bool same = std::bit_cast<uint32_t>(out.u.recon[k]) == std::bit_cast<uint32_t>(f.u[size_t(k)]) &&
                      std::bit_cast<uint32_t>(out.v.recon[k]) == std::bit_cast<uint32_t>(f.v[size_t(k)]);
    if (same) return;
    out.u.exact[k] = out.v.exact[k] = 1;
    out.u.recon[k] = f.u[size_t(k)];
    out.v.recon[k] = f.v[size_t(k)];
  };
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      if (on_exact_edge(x, y, f.nx, f.ny, edges)) force(y * f.nx + x);
      // Interior rows hold at most two edge vertices: jump from the first column to the last.
      if (x == 0 && y > 0 && y < f.ny - 1 && f.nx > 2) x = f.nx - 2;
    }
}

void run_block(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges) {
  double t_last = omp_get_wtime();
  auto lap = [&](const char* name) {
    const double t = omp_get_wtime();
    out.stage_seconds.emplace_back(name, t - t_last);
    t_last = t;
  };
  const Grid2D g{f.nx, f.ny};
  const TileLayout L(f.nx, f.ny);
  const int64_t nt = g.triangle_count(), n = f.size();
  // 1-2. Per triangle: the safe relative bound, folded straight into the per-vertex
  // minimum xv. Both bounds are 0 for a triangle holding a critical point (no failing
  // condition, no open half-plane), so its vertices get id 0 without a signature here. Cell rows of one parity touch disjoint
  // vertex rows, so each parity runs in parallel without races; min is order-free.
  BigVector<float> xv(static_cast<size_t>(n));
  const float* u = f.u.data();
  const float* v = f.v.data();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t k = 0; k < n; ++k) xv[size_t(k)] = 1.0f;  // every safe bound is <= 1
  const int64_t cw = g.nx - 1;
  // A positive safe bound proves a triangle critical-point free: remembered per cell
  // (bit t for triangle t) so the exact check can skip re-deriving those signatures.
  BigVector<uint8_t> cp_free(static_cast<size_t>(g.cell_count()));
  for (int parity = 0; parity < 2; ++parity) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = parity; i < g.ny - 1; i += 2) {
      for (int64_t j = 0; j < cw; ++j) {
        const int64_t a = i * g.nx + j, b = a + 1, c = a + g.nx, d = c + 1;
        const float u0[3] = {u[a], u[c], u[d]}, v0[3] = {v[a], v[c], v[d]};
        const float u1[3] = {u[a], u[b], u[d]}, v1[3] = {v[a], v[b], v[d]};
        const float x0 = capped_safe_bound(u0, v0, eb);
        const float x1 = capped_safe_bound(u1, v1, eb);
        cp_free[size_t(i * cw + j)] = uint8_t((x0 > 0.0f ? 1 : 0) | (x1 > 0.0f ? 2 : 0));
        xv[a] = std::min(xv[a], std::min(x0, x1));
        xv[d] = std::min(xv[d], std::min(x0, x1));
        xv[c] = std::min(xv[c], x0);
        xv[b] = std::min(xv[b], x1);
      }
    }
  }
  lap("safe_bounds");
  // 3. Per vertex: absolute bounds and bound ids. A grid without triangles (1 x N)
  // constrains nothing: every vertex takes eb.
  BigVector<uint8_t> id_u(static_cast<size_t>(n)), id_v(static_cast<size_t>(n));
  const bool free_grid = nt == 0;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t k = 0; k < n; ++k) {
    const double r = xv[size_t(k)];
    const double eu = free_grid ? double(eb) : std::min(double(eb), r * std::fabs(double(u[k])));
    const double ev = free_grid ? double(eb) : std::min(double(eb), r * std::fabs(double(v[k])));
    id_u[size_t(k)] = uint8_t(id_for_bound(eb, eu));
    id_v[size_t(k)] = uint8_t(id_for_bound(eb, ev));
  }
  xv.clear();
  xv.shrink_to_fit();
  lap("bound_ids");
  // 4. Per tile: one bound id per component (choose_tile_ids), then quantization.
  auto tiles_u = choose_tile_ids(L, f.u, id_u, eb, threads);
  auto tiles_v = choose_tile_ids(L, f.v, id_v, eb, threads);
  lap("tile_ids");
  quantize_plane(f.u, L, eb, std::move(tiles_u), id_u.data(), threads, out.u);
  quantize_plane(f.v, L, eb, std::move(tiles_v), id_v.data(), threads, out.v);
  force_exact_edges(f, exact_edges, out);
  lap("quantize");
  // 5. The exact check on what the decoder will see, with repair.
  repair_signatures(f, cp_free.data(), threads, out);
  lap("repair");
}

void repair_signatures(const VectorField2D& f, const uint8_t* cp_free, int threads, FrontendResult& out) {
  const Grid2D g{f.nx, f.ny};
  const float* ru = out.u.recon.data();
  const float* rv = out.v.recon.data();
  // Round 1 checks every triangle; later rounds only those around repaired vertices.
  std::vector<int64_t> bad;
  const int64_t cw = g.nx - 1;
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> local;
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < g.ny - 1; ++i) {
      for (int64_t j = 0; j < cw; ++j) {
        Signature s[2], o[2] = {kNoCriticalPoint, kNoCriticalPoint};
        cell_signatures(g, i, j, ru, rv, s);
        // The original's signature is 0 where a safe bound proved it; derived otherwise.
        if (!cp_free || cp_free[size_t(i * cw + j)] != 3) cell_signatures(g, i, j, f.u.data(), f.v.data(), o);
        const int64_t t0 = 2 * (i * cw + j);
        if (s[0] != o[0]) local.push_back(t0);
        if (s[1] != o[1]) local.push_back(t0 + 1);
      }
    }
#pragma omp for schedule(static) ordered
    for (int p = 0; p < omp_get_num_threads(); ++p) {
#pragma omp ordered
      bad.insert(bad.end(), local.begin(), local.end());
    }
  }
  out.repair_rounds = 1;
  while (!bad.empty()) {
    std::vector<int64_t> changed;
    for (int64_t t : bad) {
      int64_t idx[3];
      triangle_vertices(g, t, idx);
      for (int64_t k : idx) {
        if (out.u.exact[k] && out.v.exact[k]) continue;
        out.u.exact[k] = out.v.exact[k] = 1;
        out.u.recon[k] = f.u[k];
        out.v.recon[k] = f.v[k];
        changed.push_back(k);
      }
    }
    out.repaired_vertices += int64_t(changed.size());
    std::vector<int64_t> recheck;
    for (int64_t k : changed) {
      int64_t tris[6];
      const int m = incident_triangles(g, k / f.nx, k % f.nx, tris);
      recheck.insert(recheck.end(), tris, tris + m);
    }
    std::sort(recheck.begin(), recheck.end());
    recheck.erase(std::unique(recheck.begin(), recheck.end()), recheck.end());
    bad.clear();
    for (int64_t t : recheck)
      if (signature_at(g, t, ru, rv) != signature_at(g, t, f.u.data(), f.v.data())) bad.push_back(t);
    ++out.repair_rounds;
  }
}

}  // namespace factz::detail
