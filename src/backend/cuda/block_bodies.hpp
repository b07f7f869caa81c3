// Per-cell, per-vertex and per-tile bodies of the CUDA block/none frontend (FaCTz-B).
//
// Each function is the body of one kernel thread (`src/backend/cuda/*.cu` launch them) and
// of one host-loop iteration in the CPU model (`gpu_model.cpp`), which the CPU test
// compares with the CPU pipeline (backend/cpu/block_mode.cpp, backend/cpu/tiled_quantizer.cpp).
// The math is the kernels' (`src/kernels/`); what is here is only the scheduling the GPU
// needs: a gather of per-cell bounds instead of the CPU's scatter (min is exact and
// order-free), one tile per thread for the tile-id choice, and the repair rounds as flag
// sweeps. T is the field's value type: float, or double for a float64 field (every value
// decision then goes through the kernels' double overloads; no value passes through float).
#pragma once

#include <cstdint>

#include "kernels/block_bounds.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/mesh.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/signature.hpp"
#include "kernels/signature64.hpp"
#include "kernels/tiles.hpp"

namespace factz::cuda_detail {

using detail::Grid2D;
using detail::kExactListFull;
using detail::kExactListRounded;
using detail::kMaxBoundId;

using detail::kRadius;
using detail::kTile;

using detail::float_bits;

/// Kernel body, one thread per cell (i, j): the bounds of T0 and T1 into
/// tb[2 * cell + t] (kernels/block_bounds.hpp cell_block_bounds_on_mesh: relative bounds 1 and
/// cap +inf for a triangle outside the mesh, which touches a vertex marked in `missing`, null =
/// none), and the cp_free bits (bit t: triangle t proven critical-point free; read for floats
/// only: a float64 safe bound is an estimate, so the float64 exact check derives every
/// signature).
template <class T>
FACTZ_HD void cell_safe_bounds(const Grid2D& g, int64_t cell, const T* u, const T* v, const uint8_t* missing, T eb,
                               detail::TriangleBounds<T>* tb, uint8_t* cp_free) {
  const int64_t cw = g.nx - 1;
  const int64_t i = cell / cw, j = cell - i * cw;
  uint8_t free_bits;
  detail::cell_block_bounds_on_mesh(u, v, missing, g.nx, i, j, eb, tb + 2 * cell, free_bits);
  cp_free[cell] = free_bits;
}

/// The CPU's std::min(a, b) (b < a ? b : a).
template <class T>
FACTZ_HD T min_of(T a, T b) {
  return b < a ? b : a;
}

/// Kernel body, one thread per vertex k: the bound ids of u and v (block_mode.cpp steps 2-3:
/// the minimum relative bound of each component and the minimum cap of the incident
/// triangles, gathered, then vertex_bound_id).
template <class T>
FACTZ_HD void vertex_bound_ids(const Grid2D& g, int64_t k, const T* u, const T* v, const detail::TriangleBounds<T>* tb,
                               T eb, uint8_t* id_u, uint8_t* id_v) {
  const int64_t i = k / g.nx, j = k - i * g.nx;
  const bool free_grid = g.triangle_count() == 0;
  T ru = T(detail::kFreeRelativeBound), rv = ru, rc = T(INFINITY);
  if (!free_grid) {
    int64_t tris[6];
    const int m = detail::incident_triangles(g, i, j, tris);
    for (int t = 0; t < m; ++t) {
      const detail::TriangleBounds<T> b = tb[tris[t]];
      ru = min_of(ru, b.xi_u);
      rv = min_of(rv, b.xi_v);
      rc = min_of(rc, b.cap);
    }
  }
  id_u[k] = uint8_t(detail::vertex_bound_id(eb, ru, rc, u[k], free_grid));
  id_v[k] = uint8_t(detail::vertex_bound_id(eb, rv, rc, v[k], free_grid));
}

/// Kernel body, one thread per tile t: its bound id (kernels/block_bounds.hpp
/// choose_tile_id, which block_mode.cpp runs one tile per iteration).
template <class T>
FACTZ_HD uint8_t choose_tile_id(int64_t nx, int64_t ny, int64_t t, const T* x, const uint8_t* ids, T eb) {
  const detail::TileLayout L(nx, ny);
  const int64_t x0 = (t % L.tiles_x) * detail::kTile, y0 = (t / L.tiles_x) * detail::kTile;
  const int64_t x1 = x0 + detail::kTile < nx ? x0 + detail::kTile : nx, y1 = y0 + detail::kTile < ny ? y0 + detail::kTile : ny;
  return detail::choose_tile_id(x, ids, nx, x0, y0, x1, y1, eb);
}

/// Kernel body, one thread per vertex k of one plane: the CPU's quantization of the vertex
/// (kernels/tiles.hpp quantize_tiled_vertex) with its tile's id, checked against its own
/// bound (vertex_ids null: the tile's; mode none); a vertex marked in `missing` (null =
/// none) is never exact. q is kept for the Lorenzo codes (missing_quant replaces a missing
/// vertex's).
template <class T>
FACTZ_HD void quantize_vertex(int64_t nx, int64_t k, const T* x, const uint8_t* tile_ids, const uint8_t* vertex_ids,
                              const uint8_t* missing, const T* bound, T* recon, uint8_t* exact, int32_t* q) {
  const int64_t y = k / nx, xi = k - y * nx;
  const int id = tile_ids[detail::TileLayout(nx, 1).tile_of(xi, y)];
  const detail::TiledValue<T> tv = detail::quantize_tiled_vertex(x[k], id, T(2) * bound[id],
                                                                 bound[vertex_ids ? vertex_ids[k] : id],
                                                                 missing != nullptr && missing[k] != 0);
  recon[k] = tv.recon;
  // A stored vertex is listed at its own bound where that is shorter (kernels/exact_rounding.hpp).
  const int own = vertex_ids ? vertex_ids[k] : id;
  exact[k] = tv.exact ? detail::list_exact(x[k], own, bound[own], recon[k]) : 0;
  q[k] = tv.q;
}

/// Kernel body, one thread per vertex k of one plane, float64 block mode only, after
/// quantize_vertex: a vertex stored with all its bits is listed as its 24-bit rounding where
/// that meets eb (kernels/exact_rounding.hpp; block_mode.cpp round_exact_values). The exact
/// check that follows stores the vertices of any triangle this changes with all 64 bits.
FACTZ_HD void round_exact_vertex(int64_t k, const double* x, double eb, double* recon, uint8_t* exact) {
  double r;
  if (exact[k] != kExactListFull || !detail::rounded_exact_value(x[k], eb, r)) return;
  recon[k] = r;
  exact[k] = kExactListRounded;
}

/// Kernel body, one thread per cell: round 1 of the exact check (block_mode.cpp
/// repair_signatures): bad[2 * cell + t] = 1 when triangle t's signature on the
/// reconstruction differs from the original's (0 where cp_free proved it; null: every
/// original signature derived); a triangle outside the mesh (it touches a vertex marked in
/// `missing`, null = none) is never bad.
template <class T>
FACTZ_HD void cell_check(const Grid2D& g, int64_t cell, const T* ru, const T* rv, const T* u, const T* v,
                         const uint8_t* cp_free, const uint8_t* missing, uint8_t* bad) {
  const int64_t cw = g.nx - 1;
  const int64_t i = cell / cw, j = cell - i * cw;
  detail::Signature s[2], o[2] = {detail::kNoCriticalPoint, detail::kNoCriticalPoint};
  detail::cell_signatures(g, i, j, ru, rv, s);
  if (!cp_free || cp_free[cell] != 3) detail::cell_signatures(g, i, j, u, v, o);
  const uint8_t off_mesh = detail::cell_masked_triangles(missing, g.nx, i, j);
  bad[2 * cell] = s[0] != o[0] && !(off_mesh & 1);
  bad[2 * cell + 1] = s[1] != o[1] && !(off_mesh & 2);
}

/// Kernel body, one thread per vertex: the repair of one round. A vertex of a bad triangle
/// that is not yet stored with all its bits in both planes becomes so in both (recon =
/// original; a 24-bit rounding is replaced); changed[k] says whether it did. Idempotent and
/// independent of the order of vertices.
template <class T>
FACTZ_HD void repair_vertex(const Grid2D& g, int64_t k, const uint8_t* bad, const T* u, const T* v, T* ru, T* rv,
                            uint8_t* eu, uint8_t* ev, uint8_t* changed) {
  const int64_t i = k / g.nx, j = k - i * g.nx;
  int64_t tris[6];
  const int m = detail::incident_triangles(g, i, j, tris);
  bool hit = false;
  for (int t = 0; t < m; ++t) hit = hit || bad[tris[t]] != 0;
  const bool change = hit && !(eu[k] == kExactListFull && ev[k] == kExactListFull);
  changed[k] = change;
  if (change) {
    eu[k] = ev[k] = kExactListFull;
    ru[k] = u[k];
    rv[k] = v[k];
  }
}

/// Kernel body, one thread per triangle: the re-check of a later round. Only triangles
/// with a vertex changed in the last round can have changed their signature; a triangle
/// outside the mesh (`missing`, null = none) is never checked.
template <class T>
FACTZ_HD void triangle_recheck(const Grid2D& g, int64_t tri, const uint8_t* changed, const T* ru, const T* rv,
                               const T* u, const T* v, const uint8_t* missing, uint8_t* bad) {
  int64_t idx[3];
  detail::triangle_vertices(g, tri, idx);
  const int64_t cell = tri >> 1, cw = g.nx - 1;
  const bool off_mesh = (detail::cell_masked_triangles(missing, g.nx, cell / cw, cell % cw) >> (tri & 1)) & 1;
  if (off_mesh || !(changed[idx[0]] | changed[idx[1]] | changed[idx[2]])) {
    bad[tri] = 0;
    return;
  }
  bad[tri] = detail::signature_at(g, tri, ru, rv) != detail::signature_at(g, tri, u, v);
}

}  // namespace factz::cuda_detail
