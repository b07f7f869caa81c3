// Per-cube, per-vertex, per-tile and per-line bodies of the CUDA 3D tiled modes (none and
// block, float32; issue 22) and of their decoder.
//
// Each function is the body of one kernel thread (cuda_compress3d.cu, cuda_decompress3d.cu
// launch them) and of one host-loop iteration of the CPU model (gpu_model3d.cpp), which the
// model tests compare with the CPU pipeline (backend/cpu/block3d_mode.cpp). The math is the
// kernels' (src/kernels/: safe_bound3d, tiles3d, tiles, tet, cube_signatures3d); what is
// here is only the scheduling the GPU needs:
//  - safe bounds: each cube writes its eight corners' bounds, then each vertex gathers the
//    minimum over its (up to eight) cubes instead of the CPU's scatter (min is exact and
//    order-free; ties of +0 and -0 give the same bound id);
//  - quantization: one thread per vertex (a vertex's integer depends on its own value only),
//    then its 3D Lorenzo code from its neighbours' integers inside its tile;
//  - the exact check's repair as flag sweeps (a round stores exactly every vertex of a
//    differing tetrahedron, then rechecks the tetrahedra through a changed vertex): the sets
//    the CPU's lists hold, so the same vertices end exact;
//  - decoding: the inverse of the 3D Lorenzo predictor is the 3D prefix sum of the codes
//    inside the tile (the same inclusion-exclusion recurrence, wrapping uint64 arithmetic),
//    done as three passes of running sums along x, y and z that restart at each tile.
// Missing vertices (modes none and block): a missing vertex's integer is its Lorenzo
// prediction, a sequential dependency inside the tile, so after the per-vertex pass (which
// leaves missing vertices alone) one thread per tile walks its missing vertices in the
// CPU's order (z, y, x), every lower neighbour's integer being final by then.
#pragma once

#include <cstdint>

#include "kernels/block_bounds.hpp"
#include "kernels/cube_signatures3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound3d.hpp"
#include "kernels/speculation3d.hpp"  // incident_tets
#include "kernels/tet.hpp"
#include "kernels/tile_decode.hpp"
#include "kernels/tiles.hpp"
#include "kernels/tiles3d.hpp"

namespace factz::cuda_detail {

/// The grid of a 3D field (x fastest).
struct Grid3D {
  int64_t nx = 0, ny = 0, nz = 0;
  FACTZ_HD int64_t size() const { return nx * ny * nz; }
  /// Cubes (0 when a side has one vertex: no tetrahedra).
  FACTZ_HD int64_t cube_count() const { return nx > 1 && ny > 1 && nz > 1 ? (nx - 1) * (ny - 1) * (nz - 1) : 0; }
  /// Vertex index of corner 0 of `cube`.
  FACTZ_HD int64_t cube_base(int64_t cube) const {
    const int64_t cx = nx - 1, cy = ny - 1;
    const int64_t x = cube % cx, y = (cube / cx) % cy, z = cube / (cx * cy);
    return (z * ny + y) * nx + x;
  }
};

/// The three planes (u, v, w) of a field, passed to kernels by value.
struct Planes3 {
  const float* c[3] = {nullptr, nullptr, nullptr};
};
struct MutablePlanes3 {
  float* c[3] = {nullptr, nullptr, nullptr};
};

/// Kernel body, one thread per cube: the safe bounds of its eight corners (three components
/// each) into bounds[24 * cube + 3 * j + c], and its cp_free bits (block3d_mode.cpp step 1).
FACTZ_HD void cube_safe_bounds3d_body(const Grid3D& g, int64_t cube, Planes3 f, const uint8_t* missing, float eb,
                                      float* bounds, uint8_t* cp_free) {
  const int64_t base = g.cube_base(cube);
  float b[8][3];
  const uint8_t off_mesh = detail::cube_masked_tets(missing, base, g.nx, g.ny);
  cp_free[cube] = detail::cube_safe_bounds(f.c[0], f.c[1], f.c[2], base, g.nx, g.ny, eb, b, off_mesh);
  for (int j = 0; j < 8; ++j)
    for (int c = 0; c < 3; ++c) bounds[24 * cube + 3 * j + c] = b[j][c];
}

/// Kernel body, one thread per vertex k: its bound ids (block3d_mode.cpp steps 2-3: the
/// minimum of eb and the bounds of the cubes through it, gathered, then id_for_bound).
/// bounds null: no cube constrains (a grid with a side of 1).
FACTZ_HD void vertex_bound_ids3d_body(const Grid3D& g, int64_t k, const float* bounds, float eb, uint8_t* id0,
                                      uint8_t* id1, uint8_t* id2) {
  float m[3] = {eb, eb, eb};
  if (bounds) {
    const int64_t x = k % g.nx, y = (k / g.nx) % g.ny, z = k / (g.nx * g.ny);
    const int64_t cx = g.nx - 1, cy = g.ny - 1, cz = g.nz - 1;
    for (int j = 0; j < 8; ++j) {
      const int64_t qx = x - (j & 1), qy = y - ((j >> 1) & 1), qz = z - ((j >> 2) & 1);
      if (qx < 0 || qy < 0 || qz < 0 || qx >= cx || qy >= cy || qz >= cz) continue;
      const float* b = bounds + 24 * ((qz * cy + qy) * cx + qx) + 3 * j;
      for (int c = 0; c < 3; ++c) m[c] = b[c] < m[c] ? b[c] : m[c];  // std::min(m, b)
    }
  }
  id0[k] = uint8_t(detail::id_for_bound(eb, double(m[0])));
  id1[k] = uint8_t(detail::id_for_bound(eb, double(m[1])));
  id2[k] = uint8_t(detail::id_for_bound(eb, double(m[2])));
}

/// Kernel body, one thread per tile t of one component: its cost-chosen bound id.
FACTZ_HD uint8_t tile_id3d_body(const detail::TileLayout3D& L, int64_t t, const float* x, const uint8_t* ids,
                                float eb) {
  int64_t lo[3], hi[3];
  L.box(t, lo, hi);
  return detail::choose_tile_id3d(x, ids, L.nx, L.ny, lo, hi, eb);
}

/// The tile of vertex (x, y, z).
FACTZ_HD int64_t tile_of3d(const detail::TileLayout3D& L, int64_t x, int64_t y, int64_t z) {
  using detail::kTile3D;
  return ((z / kTile3D) * L.tiles_y + y / kTile3D) * L.tiles_x + x / kTile3D;
}

/// Kernel body, one thread per vertex k of one component: quantization with its tile's id
/// against its own bound (vertex_ids null: the tile's, mode none), the decoder's value, the
/// exact flag and the integer q (quantize_plane3d's rule). A missing vertex (`missing`, null
/// for none) is left to missing_quant3d_body.
FACTZ_HD void quantize_vertex3d_body(const detail::TileLayout3D& L, int64_t k, const float* x, const uint8_t* tile_ids,
                                     const uint8_t* vertex_ids, const uint8_t* missing, const float* bound,
                                     float* recon, uint8_t* exact, int64_t* q) {
  if (missing && missing[k]) return;
  const int64_t xi = k % L.nx, y = (k / L.nx) % L.ny, z = k / (L.nx * L.ny);
  const int id = tile_ids[tile_of3d(L, xi, y, z)];
  const float step = 2.0f * bound[id];
  const detail::TiledVertex tv = detail::quantize_tiled_vertex(x[k], id, step, bound[vertex_ids ? vertex_ids[k] : id]);
  recon[k] = tv.recon;
  exact[k] = tv.exact ? 1 : 0;
  q[k] = tv.q;
}

/// The 3D Lorenzo prediction of vertex k = (x, y, z) from the grid's integers q of its tile
/// (kernels/tiles3d.hpp tile_lorenzo3d: neighbours outside the tile count as 0).
FACTZ_HD int64_t grid_lorenzo3d(const detail::TileLayout3D& L, const int64_t* q, int64_t k, int64_t x, int64_t y,
                                int64_t z) {
  using detail::kTile3D;
  const int64_t sy = L.nx, sz = L.nx * L.ny;
  const bool hx = x % kTile3D > 0, hy = y % kTile3D > 0, hz = z % kTile3D > 0;
  const int64_t a = hx ? q[k - 1] : 0, b = hy ? q[k - sy] : 0, c = hz ? q[k - sz] : 0;
  const int64_t ab = hx && hy ? q[k - 1 - sy] : 0, ac = hx && hz ? q[k - 1 - sz] : 0;
  const int64_t bc = hy && hz ? q[k - sy - sz] : 0, abc = hx && hy && hz ? q[k - 1 - sy - sz] : 0;
  return a + b + c - ab - ac - bc + abc;
}

/// Kernel body, one thread per tile t of one component with missing vertices: each missing
/// vertex of the tile in z, y, x order takes its Lorenzo prediction as its integer
/// (missing_vertex_quant), the decoder's value of that integer, and is never exact.
FACTZ_HD void missing_quant3d_body(const detail::TileLayout3D& L, int64_t t, const uint8_t* tile_ids,
                                   const uint8_t* missing, const float* bound, float* recon, uint8_t* exact,
                                   int64_t* q) {
  int64_t lo[3], hi[3];
  L.box(t, lo, hi);
  const float step = 2.0f * bound[tile_ids[t]];
  for (int64_t z = lo[2]; z < hi[2]; ++z)
    for (int64_t y = lo[1]; y < hi[1]; ++y)
      for (int64_t x = lo[0]; x < hi[0]; ++x) {
        const int64_t k = (z * L.ny + y) * L.nx + x;
        if (!missing[k]) continue;
        q[k] = detail::missing_vertex_quant(grid_lorenzo3d(L, q, k, x, y, z), step);
        recon[k] = detail::reconstruct(int32_t(q[k]), step);
        exact[k] = 0;
      }
}

/// Kernel body, one thread per vertex k: the symbol of its 3D Lorenzo code inside its tile
/// (tiled_symbol: a missing vertex's is implied), the code, and the escape flag (symbol 0:
/// the outlier list holds the code).
FACTZ_HD void lorenzo_code3d_body(const detail::TileLayout3D& L, int64_t k, const int64_t* q, const uint8_t* missing,
                                  uint16_t* sym, int64_t* code, uint8_t* escape) {
  const int64_t x = k % L.nx, y = (k / L.nx) % L.ny, z = k / (L.nx * L.ny);
  const int64_t d = q[k] - grid_lorenzo3d(L, q, k, x, y, z);
  const uint16_t s = detail::tiled_symbol(d, missing && missing[k]);
  sym[k] = s;
  code[k] = d;
  escape[k] = s == 0 ? 1 : 0;
}

/// Kernel body, one thread per cube: round 1 of the exact check (repair_signatures3d): bad[6
/// cube + t] = 1 when tetrahedron t has a corner whose decoder value differs from the
/// original and its signature on the decoder's values differs from the original's (0 where
/// cp_free proves it, derived otherwise; cp_free null: derived everywhere). Tetrahedra
/// touching a missing vertex (null: none) are never checked.
FACTZ_HD void cube_check3d_body(const Grid3D& g, int64_t cube, Planes3 orig, Planes3 rec, const uint8_t* cp_free,
                                const uint8_t* missing, uint8_t* bad) {
  const int64_t base = g.cube_base(cube);
  int64_t off[8];
  detail::cube_corner_offsets3d(g.nx, g.ny, off);
  const uint8_t off_mesh = detail::cube_masked_tets(missing, base, g.nx, g.ny);
  const uint8_t which = detail::changed_cube_tets3d(orig.c, rec.c, base, off) & uint8_t(~off_mesh);
  uint8_t s[6] = {0, 0, 0, 0, 0, 0}, o[6] = {0, 0, 0, 0, 0, 0};
  if (which) {
    detail::check_cube_signatures3d(rec.c, base, off, which, s);
    const uint8_t unproven = cp_free ? uint8_t(which & ~cp_free[cube]) : which;
    if (unproven) detail::check_cube_signatures3d(orig.c, base, off, unproven, o);
  }
  for (int t = 0; t < 6; ++t) bad[6 * cube + t] = ((which >> t) & 1) && s[t] != o[t] ? 1 : 0;
}

/// Kernel body, one thread per vertex k: a repair round. A vertex of a differing
/// tetrahedron (bad) that is not stored exactly in all three components becomes so (its
/// values the original's) and is marked changed; changed[k] is 0 otherwise.
FACTZ_HD void repair_vertex3d_body(const Grid3D& g, int64_t k, const uint8_t* bad, Planes3 orig, MutablePlanes3 rec,
                                   uint8_t* e0, uint8_t* e1, uint8_t* e2, uint8_t* changed) {
  changed[k] = 0;
  int64_t tets[24];
  const int m = detail::incident_tets(g.nx, g.ny, g.nz, k % g.nx, (k / g.nx) % g.ny, k / (g.nx * g.ny), tets);
  bool hit = false;
  for (int i = 0; i < m && !hit; ++i) hit = bad[tets[i]] != 0;
  if (!hit || (e0[k] && e1[k] && e2[k])) return;
  e0[k] = e1[k] = e2[k] = 1;
  for (int c = 0; c < 3; ++c) rec.c[c][k] = orig.c[c][k];
  changed[k] = 1;
}

/// Kernel body, one thread per tetrahedron t: the recheck of a repair round: bad[t] = 1 when
/// a vertex of t changed and its signature on the decoder's values differs from the
/// original's (tet_signature on both, as repair_signatures3d's later rounds).
FACTZ_HD void tet_recheck3d_body(const Grid3D& g, int64_t t, const uint8_t* changed, Planes3 orig, Planes3 rec,
                                 const uint8_t* missing, uint8_t* bad) {
  int64_t idx[4];
  int axes[3];
  detail::tet_vertices(g.nx, g.ny, t, idx, axes);
  bad[t] = 0;
  if (!(changed[idx[0]] || changed[idx[1]] || changed[idx[2]] || changed[idx[3]])) return;
  if (missing && (missing[idx[0]] || missing[idx[1]] || missing[idx[2]] || missing[idx[3]])) return;
  float a[3][4], b[3][4];
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < 3; ++c) {
      a[c][j] = rec.c[c][idx[j]];
      b[c][j] = orig.c[c][idx[j]];
    }
  bad[t] = detail::tet_signature(idx, axes, a[0], a[1], a[2]) != detail::tet_signature(idx, axes, b[0], b[1], b[2]);
}

// ---- decoder ------------------------------------------------------------------------

/// Kernel body, one thread per vertex k of one component: its code as a wrapping integer
/// (symbol - kRadius, or its entry of the outlier list `oi`/`oc` of `count` sorted indices
/// when the symbol is 0; *bad set when there is none, as decode_tiled3d).
FACTZ_HD void tiled3d_code_body(int64_t k, const uint16_t* sym, const int64_t* oi, const int64_t* oc, int64_t count,
                                uint64_t* q, int* bad) {
  int64_t code = int64_t(sym[k]) - detail::kRadius;
  if (sym[k] == 0) {
    int64_t lo = 0, hi = count;  // lower_bound of k
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (oi[mid] < k) lo = mid + 1;
      else hi = mid;
    }
    if (lo == count || oi[lo] != k) {
      *bad = 1;
      code = 0;
    } else {
      code = oc[lo];
    }
  }
  q[k] = uint64_t(code);
}

/// Kernel body, one thread per grid line along `axis` (0 x, 1 y, 2 z; lines numbered by the
/// other two coordinates, the lower axis fastest): running sums of q along the line that
/// restart at every tile's first vertex. The three passes in any order turn the codes into
/// the tile-local 3D prefix sums, which are the decoder's integers (tile_lorenzo3d inverted).
FACTZ_HD void tile_prefix_line3d_body(const Grid3D& g, int axis, int64_t line, uint64_t* q) {
  const int64_t len[3] = {g.nx, g.ny, g.nz}, stride[3] = {1, g.nx, g.nx * g.ny};
  const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
  const int64_t base = (line % len[a1]) * stride[a1] + (line / len[a1]) * stride[a2];
  uint64_t run = 0;
  for (int64_t i = 0; i < len[axis]; ++i) {
    if (i % detail::kTile3D == 0) run = 0;
    uint64_t& here = q[base + i * stride[axis]];
    run += here;
    here = run;
  }
}

/// Grid lines along `axis`.
FACTZ_HD int64_t line_count3d(const Grid3D& g, int axis) {
  return axis == 0 ? g.ny * g.nz : (axis == 1 ? g.nx * g.nz : g.nx * g.ny);
}

/// Kernel body, one thread per vertex k of one component: the decoder's value of integer
/// q[k] with its tile's id (tile_ids: the component's ids); *bad when an id or q is out of
/// range, *nonfinite when the value is not finite (decode_tiled3d's first pass).
FACTZ_HD void tiled3d_value_body(const detail::TileLayout3D& L, int64_t k, const uint64_t* q, const uint8_t* tile_ids,
                                 float eb, float* out, int* bad, int* nonfinite) {
  const int64_t x = k % L.nx, y = (k / L.nx) % L.ny, z = k / (L.nx * L.ny);
  const uint8_t id = tile_ids[tile_of3d(L, x, y, z)];
  if (id > detail::kMaxBoundId) {
    *bad = 1;
    return;
  }
  const float step = 2.0f * detail::bound_of_id(eb, id);
  float r;
  if (!detail::tiled_reconstruction(int64_t(q[k]), step, r)) *bad = 1;
  if (!detail::finite_value(r)) *nonfinite = 1;
  out[k] = r;
}

}  // namespace factz::cuda_detail
