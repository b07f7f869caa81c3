// FaCTz-B frontend (paper section 3.3, ARCHITECTURE.md section 4) and mode none.
#include <algorithm>
#include <bit>
#include <omp.h>

#include <cmath>
#include <span>
#include <tuple>
#include <type_traits>

#include "kernels/block_bounds.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/signature64.hpp"
#include "backend/cpu/frontend.hpp"

namespace factz::detail {
namespace {

// One body for float32 and float64 fields (Field = VectorField2D, VectorField2D64; T its
// value type): every value decision goes through a kernel overload of T.

template <class T>
std::vector<uint8_t> uniform_tile_ids(const TileLayout& L, T eb) {
  return std::vector<uint8_t>(size_t(L.tile_count()), uint8_t(eb > T(0) ? kMaxBoundId : 0));
}

template <class Field, class T>
void run_none_any(const Field& f, T eb, int threads, FrontendResultOf<T>& out, uint8_t exact_edges,
                  const uint8_t* missing) {
  const TileLayout L(f.nx, f.ny);
  out.eb = eb;
  quantize_plane(f.u, L, eb, uniform_tile_ids(L, eb), nullptr, threads, out.u, missing);
  quantize_plane(f.v, L, eb, uniform_tile_ids(L, eb), nullptr, threads, out.v, missing);
  force_exact_edges(f, exact_edges, out);
}

/// Equal bits (a -0 is not a +0: an exact edge keeps its sign).
bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }
bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

template <class Field, class T>
void force_exact_edges_any(const Field& f, uint8_t edges, FrontendResultOf<T>& out) {
  if (!edges) return;
  const TileLayout L(f.nx, f.ny);
  const std::span<const T> xu(f.u), xv(f.v);
  auto force = [&](int64_t k) {
    const bool same = same_bits(reconstruction_at(xu, L, out.eb, out.u, k), f.u[size_t(k)]) &&
                      same_bits(reconstruction_at(xv, L, out.eb, out.v, k), f.v[size_t(k)]);
    if (same) return;
    out.u.exact[k] = out.v.exact[k] = kStoredExact;
    if (out.u.recon.empty()) return;
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

/// float64 block mode: a vertex the frontend would store with all 64 bits (a critical
/// point's triangle, a tile's exact choice, a bound miss or a clamped q) is stored as its
/// 24-bit rounding instead where that meets eb (kStoredRounded): it then costs what the
/// float32 stream pays for the same vertex (zstd drops the zero low bits) rather than 8
/// random bytes. Nothing is decided in float: the rounding is one candidate value, accepted
/// by the exact double test of eb, and the exact check that follows compares every
/// triangle's signature on the reconstruction with the original's (exact float64
/// predicates) and stores the vertices of a failing triangle with all their bits
/// (kStoredExact). A value that is its own rounding stays kStoredExact (same bytes as
/// before: a float-valued field's streams do not change). The per-vertex rule is
/// kernels/exact_rounding.hpp's, shared with the CUDA frontend.
void round_exact_values(std::span<const double> x, double eb, int threads, QuantizedPlane64& p) {
  const int64_t n = int64_t(x.size());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t k = 0; k < n; ++k) {
    double r;
    if (p.exact[size_t(k)] != kStoredExact || !rounded_exact_value(x[size_t(k)], eb, r)) continue;
    p.recon[size_t(k)] = r;
    p.exact[size_t(k)] = kStoredRounded;
  }
}

/// Whether u, or v, has one strict sign on the four corners of cell (i, j), given rows i
/// (u0, v0) and i + 1 (u1, v1) (kernels/exact.hpp strictly_one_sided).
template <class T>
bool cell_one_sided(int64_t j, const T* u0, const T* u1, const T* v0, const T* v1) {
  const T cu[4] = {u0[j], u0[j + 1], u1[j], u1[j + 1]}, cv[4] = {v0[j], v0[j + 1], v1[j], v1[j + 1]};
  return strictly_one_sided(cu, 4) || strictly_one_sided(cv, 4);
}

/// The first round of the exact check on cell row i, given the reconstruction's rows i (u0,
/// v0) and i + 1 (u1, v1) and the row's cp_free bits (`cp_row`, cell j at j; null: none
/// proven): appends every triangle whose signature on the reconstruction differs from the
/// original's (fu, fv; a triangle off the mesh is never checked).
template <class T>
void check_cell_row(const Grid2D& g, const T* fu, const T* fv, const uint8_t* cp_row, const uint8_t* missing,
                    int64_t i, const T* u0, const T* u1, const T* v0, const T* v1, std::vector<int64_t>& bad) {
  const int64_t cw = g.nx - 1;
  for (int64_t j = 0; j < cw; ++j) {
    const bool proven_free = cp_row && cp_row[j] == 3;
    // Both triangles free of critical points before and after: the original by its safe
    // bounds, the reconstruction when u or v has one strict sign on the cell's corners
    // (no triangle can then hold the origin, even under the symbolic perturbation).
    if (proven_free && cell_one_sided(j, u0, u1, v0, v1)) continue;
    Signature s[2], o[2] = {kNoCriticalPoint, kNoCriticalPoint};
    cell_signatures(g, i, j, u0, u1, v0, v1, s);
    // The original's signature is 0 where a safe bound proved it; derived otherwise.
    if (!proven_free) cell_signatures(g, i, j, fu, fv, o);
    const int64_t t0 = 2 * (i * cw + j);
    const uint8_t off_mesh = cell_masked_triangles(missing, g.nx, i, j);  // never checked
    if (s[0] != o[0] && !(off_mesh & 1)) bad.push_back(t0);
    if (s[1] != o[1] && !(off_mesh & 2)) bad.push_back(t0 + 1);
  }
}

/// What the band stage leaves the exact check when it ran the first round on the cell rows
/// inside each tile row: their failures per tile row (`bad`, in triangle order) and the
/// cp_free bits of the rows joining tile row ty and ty + 1 (`join_cp`, row ty at ty * (nx - 1)).
struct BandChecked {
  std::vector<std::vector<int64_t>> bad;
  std::vector<uint8_t> join_cp;
};

template <class Field, class T>
void repair_signatures_any(const Field& f, const uint8_t* cp_free, int threads, FrontendResultOf<T>& out,
                           const uint8_t* missing, const BandChecked* band_checked = nullptr);

template <class Field, class T>
void run_block_any(const Field& f, T eb, int threads, FrontendResultOf<T>& out, uint8_t exact_edges,
                   const uint8_t* missing, FrontendKeeps keeps) {
  double t_last = omp_get_wtime();
  auto lap = [&](const char* name) {
    const double t = omp_get_wtime();
    out.stage_seconds.emplace_back(name, t - t_last);
    t_last = t;
  };
  const Grid2D g{f.nx, f.ny};
  const TileLayout L(f.nx, f.ny);
  const int64_t nt = g.triangle_count();
  const T* u = f.u.data();
  const T* v = f.v.data();
  const int64_t cw = g.nx - 1;
  // FrontendKeeps::codes: each band's symbols are coded while it is in cache, and a float
  // plane keeps no reconstruction (the exact check derives it row by row).
  const bool codes = keeps == FrontendKeeps::codes;
  const bool keep_recon = !codes || std::is_same_v<T, double>;
  // A grid without triangles (1 x N) constrains nothing: every vertex takes eb.
  const bool free_grid = nt == 0;
  // Float planes coded band by band also run the exact check's first round there (unless
  // exact edges change flags after quantization): band_checked.bad[ty] holds its failures.
  const bool fused = codes && !keep_recon && std::is_same_v<T, float> && exact_edges == 0 && !free_grid;
  BandChecked band_checked;
  std::vector<int64_t> band_checked_rows;
  // A positive safe bound proves a triangle critical-point free: remembered per cell
  // (bit t for triangle t) so the exact check can skip re-deriving those signatures. The
  // grid's array, or, where the band stage checks its own rows, only the rows joining two
  // bands (the band keeps its rows in a band buffer).
  BigVector<uint8_t> cp_free;
  if (fused) {
    band_checked.bad.resize(size_t(L.tiles_y));
    band_checked.join_cp.resize(size_t((L.tiles_y - 1) * cw));
    band_checked_rows.resize(size_t(L.tiles_y));
  } else {
    resize_fresh(cp_free, static_cast<size_t>(g.cell_count()));
  }
  out.eb = eb;
  for (QuantizedPlaneOf<T>* p : {&out.u, &out.v}) {
    start_quantized_plane(L, *p, keep_recon);
    if (!codes) continue;
    resize_fresh(p->symbols, static_cast<size_t>(g.nx * g.ny));
    p->escapes.assign(size_t(L.tiles_y), {});
  }
  // Steps 1-4 band by band, one tile row of vertices at a time, so that the per-vertex
  // bounds and ids live in a band-sized buffer (cache-resident) rather than in arrays of the
  // whole grid. The results do not depend on the banding: a vertex's bound is the minimum
  // over its incident triangles, whichever band computes them.
#pragma omp parallel num_threads(threads)
  {
    // Per band vertex: the smallest relative bound of u (ru) and of v (rv) and the smallest
    // cap (rc) over the incident triangles.
    std::vector<T> ru(size_t(kTile * g.nx)), rv(ru.size()), rc(ru.size());
    std::vector<uint8_t> id_u(ru.size()), id_v(ru.size());
    std::vector<T> band_recon(keep_recon ? 0 : ru.size());  // quantize_rows's values, not kept
    std::vector<int32_t> band_q(fused ? ru.size() : 0);        // and its integers
    std::vector<T> band_recon_v(fused ? ru.size() : 0);        // v's values beside u's
    std::vector<uint8_t> band_cp(fused ? size_t(kTile * cw) : 0);  // the band's cp_free rows
#pragma omp for schedule(static)
    for (int64_t ty = 0; ty < L.tiles_y; ++ty) {
      const int64_t y0 = ty * kTile, y1 = std::min(g.ny, y0 + kTile), band = (y1 - y0) * g.nx;
      // 1-2. Per triangle: the relative bounds of u and v and the absolute cap
      // (kernels/block_bounds.hpp triangle_bounds: a proven critical-point-free triangle's
      // safe bounds, else bounds that keep its exact decision and a critical point's type),
      // folded into the per-vertex minima. Cell row i touches vertex rows i and i + 1: the
      // band's vertices see cell rows y0 - 1 to y1 - 1; row y0 - 1 belongs to the band above,
      // which records its cp_free bits.
      if constexpr (std::is_same_v<T, float>) {  // the same values, vectorized (tiled_quantizer.cpp)
        band_vertex_bounds(u, v, missing, g.nx, g.ny, y0, y1, eb, ru.data(), rv.data(), rc.data(),
                           fused ? band_cp.data() : cp_free.data() + y0 * cw);
      } else {
        std::fill(ru.begin(), ru.begin() + band, T(kFreeRelativeBound));
        std::fill(rv.begin(), rv.begin() + band, T(kFreeRelativeBound));
        std::fill(rc.begin(), rc.begin() + band, T(INFINITY));
        auto fold = [&](int64_t k, const TriangleBounds<T>& b) {
          ru[size_t(k)] = std::min(ru[size_t(k)], b.xi_u);
          rv[size_t(k)] = std::min(rv[size_t(k)], b.xi_v);
          rc[size_t(k)] = std::min(rc[size_t(k)], b.cap);
        };
        for (int64_t i = std::max<int64_t>(0, y0 - 1); i < std::min(y1, g.ny - 1); ++i) {
          for (int64_t j = 0; j < cw; ++j) {
            TriangleBounds<T> tb[2];  // T0 = (a, c, d), T1 = (a, b, d)
            uint8_t free_bits;
            cell_block_bounds_on_mesh(u, v, missing, g.nx, i, j, eb, tb, free_bits);
            if (i >= y0) {
              cp_free[size_t(i * cw + j)] = free_bits;
              const int64_t a = (i - y0) * g.nx + j;  // corners a = (i, j), b = (i, j + 1)
              fold(a, tb[0]);
              fold(a, tb[1]);
              fold(a + 1, tb[1]);
            }
            if (i + 1 < y1) {
              const int64_t c = (i + 1 - y0) * g.nx + j;  // corners c = (i + 1, j), d = (i + 1, j + 1)
              fold(c, tb[0]);
              fold(c + 1, tb[0]);
              fold(c + 1, tb[1]);
            }
          }
        }
      }
      // 3. Per vertex: absolute bounds and bound ids.
      const T* bu = u + y0 * g.nx;
      const T* bv = v + y0 * g.nx;
      if constexpr (std::is_same_v<T, float>) {  // the same ids, vectorized (tiled_quantizer.cpp)
        band_vertex_ids(bu, ru.data(), rc.data(), band, eb, free_grid, id_u.data());
        band_vertex_ids(bv, rv.data(), rc.data(), band, eb, free_grid, id_v.data());
      } else {
        for (int64_t k = 0; k < band; ++k) {
          id_u[size_t(k)] = uint8_t(vertex_bound_id(eb, ru[size_t(k)], rc[size_t(k)], bu[k], free_grid));
          id_v[size_t(k)] = uint8_t(vertex_bound_id(eb, rv[size_t(k)], rc[size_t(k)], bv[k], free_grid));
        }
      }
      // 4. Per tile: one bound id per component (kernels/block_bounds.hpp choose_tile_id,
      // the CUDA frontend runs it one tile per thread; float planes take its row form),
      // then quantization of the band.
      if (eb > T(0)) {
        for (int64_t tx = 0; tx < L.tiles_x; ++tx) {
          const int64_t x0 = tx * kTile, x1 = std::min(g.nx, x0 + kTile), t = ty * L.tiles_x + tx;
          if constexpr (std::is_same_v<T, float>) {  // the same choice, vectorized
            out.u.tile_ids[size_t(t)] = choose_tile_id_rows(bu, id_u.data(), g.nx, x0, 0, x1, y1 - y0, eb);
            out.v.tile_ids[size_t(t)] = choose_tile_id_rows(bv, id_v.data(), g.nx, x0, 0, x1, y1 - y0, eb);
          } else {
            out.u.tile_ids[size_t(t)] = choose_tile_id(bu, id_u.data(), g.nx, x0, int64_t(0), x1, y1 - y0, eb);
            out.v.tile_ids[size_t(t)] = choose_tile_id(bv, id_v.data(), g.nx, x0, int64_t(0), x1, y1 - y0, eb);
          }
        }
      }
      T* const recon_rows = keep_recon ? nullptr : band_recon.data();
      if constexpr (std::is_same_v<T, float>) {
        if (fused) {
          // Each component coded from the integers its quantization gave (band_q); then the
          // exact check's first round on the cell rows inside the band, while its
          // reconstruction is at hand (repair_signatures_any checks the rows between bands).
          for (auto [x, ids, plane, recon] : {std::tuple{u, id_u.data(), &out.u, band_recon.data()},
                                              std::tuple{v, id_v.data(), &out.v, band_recon_v.data()}}) {
            quantize_rows(std::span<const T>(x, size_t(g.nx * g.ny)), L, eb, y0, y1, ids, *plane, missing, recon,
                          band_q.data());
            code_tile_row_quantized(band_q.data(), L, eb, std::span<const uint8_t>(plane->tile_ids), ty, missing,
                                    plane->symbols.data(), plane->escapes[size_t(ty)]);
          }
          for (int64_t i = y0; i + 1 < y1; ++i) {
            const T* u0 = band_recon.data() + (i - y0) * g.nx;
            const T* v0 = band_recon_v.data() + (i - y0) * g.nx;
            check_cell_row(g, u, v, band_cp.data() + (i - y0) * cw, missing, i, u0, u0 + g.nx, v0, v0 + g.nx,
                           band_checked.bad[size_t(ty)]);
            ++band_checked_rows[size_t(ty)];
          }
          if (ty + 1 < L.tiles_y)  // the row joining the next band, checked after the stage
            std::copy_n(band_cp.data() + (y1 - 1 - y0) * cw, cw, band_checked.join_cp.data() + ty * cw);
          continue;
        }
      }
      quantize_rows(std::span<const T>(f.u), L, eb, y0, y1, id_u.data(), out.u, missing, recon_rows);
      quantize_rows(std::span<const T>(f.v), L, eb, y0, y1, id_v.data(), out.v, missing, recon_rows);
      if (codes) {
        code_tile_row(std::span<const T>(f.u), L, eb, std::span<const uint8_t>(out.u.tile_ids), ty, missing,
                      out.u.symbols.data(), out.u.escapes[size_t(ty)]);
        code_tile_row(std::span<const T>(f.v), L, eb, std::span<const uint8_t>(out.v.tile_ids), ty, missing,
                      out.v.symbols.data(), out.v.escapes[size_t(ty)]);
      }
    }
  }
  lap("bounds_and_quantize");
  if constexpr (std::is_same_v<T, double>) {
    round_exact_values(std::span<const double>(f.u), eb, threads, out.u);
    round_exact_values(std::span<const double>(f.v), eb, threads, out.v);
  }
  force_exact_edges(f, exact_edges, out);
  lap("exact_values");
  // 5. The exact check on what the decoder will see, with repair. For floats a positive
  // safe bound proves a triangle critical-point free (its sign tests are exact); the
  // float64 margins round, so every original signature is derived exactly instead.
  for (int64_t rows : band_checked_rows) out.checked_cell_rows += rows;
  repair_signatures_any(f, std::is_same_v<T, float> && !fused ? cp_free.data() : nullptr, threads, out, missing,
                        fused ? &band_checked : nullptr);
  lap("repair");
}

template <class Field, class T>
void repair_signatures_any(const Field& f, const uint8_t* cp_free, int threads, FrontendResultOf<T>& out,
                           const uint8_t* missing, const BandChecked* band_checked) {
  const Grid2D g{f.nx, f.ny};
  const TileLayout L(f.nx, f.ny);
  const std::span<const T> xu(f.u), xv(f.v);
  // The reconstruction: the planes' recon, or derived (reconstruction_row/_at) where they
  // keep none; rows of a kept plane are read in place.
  const bool kept = !out.u.recon.empty();
  // Round 1 checks every triangle; later rounds only those around repaired vertices.
  std::vector<int64_t> bad;
  const int64_t nx = g.nx, cw = g.nx - 1;
  if (band_checked) {
    // Round 1 ran in the band stage on the cell rows inside each tile row (band_checked[ty]);
    // left are the cell rows joining two tile rows, i = (ty + 1) * kTile - 1. The lists are
    // joined in triangle order, as the loop below finds them.
    const int64_t joins = L.tiles_y - 1;
    auto joined = std::vector<std::vector<int64_t>>(size_t(joins));
#pragma omp parallel num_threads(threads)
    {
      std::vector<T> rows(size_t(4 * nx));
#pragma omp for schedule(static)
      for (int64_t ty = 0; ty < joins; ++ty) {
        const int64_t i = (ty + 1) * kTile - 1;
        T* r0 = rows.data();
        T* r1 = r0 + 2 * nx;
        reconstruction_row(xu, L, out.eb, out.u, i, r0);
        reconstruction_row(xv, L, out.eb, out.v, i, r0 + nx);
        reconstruction_row(xu, L, out.eb, out.u, i + 1, r1);
        reconstruction_row(xv, L, out.eb, out.v, i + 1, r1 + nx);
        check_cell_row(g, f.u.data(), f.v.data(), band_checked->join_cp.data() + ty * cw, missing, i, r0, r1, r0 + nx,
                       r1 + nx, joined[size_t(ty)]);
      }
    }
    out.checked_cell_rows += joins;
    for (int64_t ty = 0; ty < L.tiles_y; ++ty) {
      const auto& inside = band_checked->bad[size_t(ty)];
      bad.insert(bad.end(), inside.begin(), inside.end());
      if (ty < joins) bad.insert(bad.end(), joined[size_t(ty)].begin(), joined[size_t(ty)].end());
    }
  } else {
#pragma omp parallel num_threads(threads)
    {
      std::vector<int64_t> local;
      int64_t rows_seen = 0;
      // Derived rows: slot r & 1 holds row r (u, then v); `held` is the last row derived, so
      // row i is already there when this thread derived it as the previous cell row's i + 1.
      std::vector<T> rows(kept ? 0 : size_t(4 * nx));
      int64_t held = -1;
      auto derive = [&](int64_t r) {
        T* slot = rows.data() + (r & 1) * 2 * nx;
        reconstruction_row(xu, L, out.eb, out.u, r, slot);
        reconstruction_row(xv, L, out.eb, out.v, r, slot + nx);
        held = r;
        return slot;
      };
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < g.ny - 1; ++i) {
        const T *u0, *u1, *v0, *v1;
        if (kept) {
          u0 = out.u.recon.data() + i * nx, u1 = u0 + nx;
          v0 = out.v.recon.data() + i * nx, v1 = v0 + nx;
        } else {
          const T* r0 = held == i ? rows.data() + (i & 1) * 2 * nx : derive(i);
          const T* r1 = derive(i + 1);
          u0 = r0, v0 = r0 + nx, u1 = r1, v1 = r1 + nx;
        }
        check_cell_row(g, f.u.data(), f.v.data(), cp_free ? cp_free + i * cw : nullptr, missing, i, u0, u1, v0, v1,
                       local);
        ++rows_seen;
      }
#pragma omp for schedule(static) ordered
      for (int p = 0; p < omp_get_num_threads(); ++p) {
#pragma omp ordered
        {
          bad.insert(bad.end(), local.begin(), local.end());
          out.checked_cell_rows += rows_seen;
        }
      }
    }
  }
  out.repair_rounds = 1;
  // A triangle's signature on the reconstruction, vertex by vertex.
  auto recon_signature = [&](int64_t t) {
    int64_t idx[3];
    triangle_vertices(g, t, idx);
    T uu[3], vv[3];
    for (int c = 0; c < 3; ++c) {
      uu[c] = reconstruction_at(xu, L, out.eb, out.u, idx[c]);
      vv[c] = reconstruction_at(xv, L, out.eb, out.v, idx[c]);
    }
    return triangle_signature(int(t & 1), idx, uu, vv);
  };
  while (!bad.empty()) {
    std::vector<int64_t> changed;
    for (int64_t t : bad) {
      int64_t idx[3];
      triangle_vertices(g, t, idx);
      for (int64_t k : idx) {
        if (out.u.exact[k] == kStoredExact && out.v.exact[k] == kStoredExact) continue;
        out.u.exact[k] = out.v.exact[k] = kStoredExact;
        if (kept) {
          out.u.recon[k] = f.u[k];
          out.v.recon[k] = f.v[k];
        }
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
    for (int64_t t : recheck) {
      const int64_t cell = t >> 1;
      if ((cell_masked_triangles(missing, g.nx, cell / cw, cell % cw) >> (t & 1)) & 1) continue;
      if (recon_signature(t) != signature_at(g, t, f.u.data(), f.v.data())) bad.push_back(t);
    }
    ++out.repair_rounds;
  }
}

}  // namespace

void run_none(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges,
              const uint8_t* missing) {
  run_none_any(f, eb, threads, out, exact_edges, missing);
}
void run_none(const VectorField2D64& f, double eb, int threads, FrontendResult64& out, uint8_t exact_edges,
              const uint8_t* missing) {
  run_none_any(f, eb, threads, out, exact_edges, missing);
}

void force_exact_edges(const VectorField2D& f, uint8_t edges, FrontendResult& out) {
  force_exact_edges_any(f, edges, out);
}
void force_exact_edges(const VectorField2D64& f, uint8_t edges, FrontendResult64& out) {
  force_exact_edges_any(f, edges, out);
}

void run_block(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges,
               const uint8_t* missing, FrontendKeeps keeps) {
  run_block_any(f, eb, threads, out, exact_edges, missing, keeps);
}
void run_block(const VectorField2D64& f, double eb, int threads, FrontendResult64& out, uint8_t exact_edges,
               const uint8_t* missing, FrontendKeeps keeps) {
  run_block_any(f, eb, threads, out, exact_edges, missing, keeps);
}

void repair_signatures(const VectorField2D& f, const uint8_t* cp_free, int threads, FrontendResult& out,
                       const uint8_t* missing) {
  repair_signatures_any(f, cp_free, threads, out, missing);
}
void repair_signatures(const VectorField2D64& f, const uint8_t* cp_free, int threads, FrontendResult64& out,
                       const uint8_t* missing) {
  repair_signatures_any(f, cp_free, threads, out, missing);
}

}  // namespace factz::detail
