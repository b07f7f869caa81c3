// The tiled backbone of 3D vector fields (modes none and block in 3D, issue 22): 16 x 16 x 16
// vertex tiles, each with one bound id per component; inside a tile the pre-quantized
// integers q = prequantize(x, step) are coded as their 3D Lorenzo residuals (neighbours
// outside the tile count as 0, so tiles decode independently and in parallel); the codes'
// symbols and escapes are those of the 2D backbone (kernels/tiles.hpp: code + kRadius,
// symbol 0 escapes to the outlier list). A vertex's value depends on its own q alone
// (float(q) * step), so storing one exactly changes no other vertex: the exact check's
// repair never re-quantizes.
//
// Why 16^3: a tile's first layer, row and corner are predicted in 2D, in 1D and from 0, so
// smaller tiles cost more on smooth fields (8^3: 33 % of the vertices on a tile's low faces;
// 16^3: 18 %); larger tiles adapt their bound id to fewer vertices. 16^3 = 4096 vertices
// (the 2D tile holds 1024), 4096 tiles on a 256^3 grid: enough parallel work.
#pragma once

#include <cstdint>

#include "kernels/block_bounds.hpp"
#include "kernels/hd.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {

/// Tile edge in vertices of 3D vector streams in modes none and block (the header's `tile`
/// field; the decoder accepts only this value there).
inline constexpr int64_t kTile3D = 16;
inline constexpr int64_t kTile3DVolume = kTile3D * kTile3D * kTile3D;

/// Tiles of an nx x ny x nz grid, numbered x fastest, then y, then z; edge tiles are smaller.
struct TileLayout3D {
  int64_t nx = 0, ny = 0, nz = 0;
  int64_t tiles_x = 0, tiles_y = 0, tiles_z = 0;
  FACTZ_HD TileLayout3D(int64_t nx_, int64_t ny_, int64_t nz_)
      : nx(nx_),
        ny(ny_),
        nz(nz_),
        tiles_x((nx_ + kTile3D - 1) / kTile3D),
        tiles_y((ny_ + kTile3D - 1) / kTile3D),
        tiles_z((nz_ + kTile3D - 1) / kTile3D) {}
  FACTZ_HD int64_t tile_count() const { return tiles_x * tiles_y * tiles_z; }
  /// The vertex box [x0, x1) x [y0, y1) x [z0, z1) of tile t.
  FACTZ_HD void box(int64_t t, int64_t lo[3], int64_t hi[3]) const {
    lo[0] = (t % tiles_x) * kTile3D;
    lo[1] = ((t / tiles_x) % tiles_y) * kTile3D;
    lo[2] = (t / (tiles_x * tiles_y)) * kTile3D;
    const int64_t n[3] = {nx, ny, nz};
    for (int a = 0; a < 3; ++a) hi[a] = lo[a] + kTile3D < n[a] ? lo[a] + kTile3D : n[a];
  }
};

/// The 3D Lorenzo prediction of the entry at local (i, j, l) of a tile's buffer `q` (local
/// index (l * kTile3D + j) * kTile3D + i, kTile3DVolume entries) from its seven lower
/// neighbours inside the tile (outside: 0):
///   a + b + c - ab - ac - bc + abc,
/// a, b, c the neighbours at -1 along x, y, z. T: int64_t for the writer's integers; uint64_t
/// for the decoder (wrapping arithmetic on untrusted codes, read back as signed).
template <class T>
FACTZ_HD T tile_lorenzo3d(const T* q, int64_t i, int64_t j, int64_t l) {
  const int64_t k = (l * kTile3D + j) * kTile3D + i, sy = kTile3D, sz = kTile3D * kTile3D;
  const bool hx = i > 0, hy = j > 0, hz = l > 0;
  const T a = hx ? q[k - 1] : T(0), b = hy ? q[k - sy] : T(0), c = hz ? q[k - sz] : T(0);
  const T ab = hx && hy ? q[k - 1 - sy] : T(0), ac = hx && hz ? q[k - 1 - sz] : T(0);
  const T bc = hy && hz ? q[k - sy - sz] : T(0), abc = hx && hy && hz ? q[k - 1 - sy - sz] : T(0);
  return a + b + c - ab - ac - bc + abc;
}

/// The bound id of one 3D tile of plane x (box lo..hi of an nx x ny grid of layers) whose
/// vertices need ids[k]: choose_tile_id's estimate (kernels/block_bounds.hpp) with the 3D
/// Lorenzo residual of the original values inside the tile. 0 when eb is 0 or no vertex
/// is free. The guarantee does not depend on the choice (every vertex is checked against its
/// own bound when quantized, and stored exactly on a miss).
/// V: float, or double for float64 fields (residuals binned as choose_tile_id bins them).
template <class V>
FACTZ_HD uint8_t choose_tile_id3d(const V* x, const uint8_t* ids, int64_t nx, int64_t ny, const int64_t lo[3],
                                  const int64_t hi[3], V eb) {
  if (!(eb > V(0))) return 0;
  const int eb_exponent = exponent_bits(eb);
  const int64_t sy = nx, sz = nx * ny;
  int32_t hist[kMaxBoundId + 1][kTileCostBins];
  int id_lo = kMaxBoundId + 1, e_lo = kTileCostBins, e_hi = -1;
  int32_t free_count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t z = lo[2]; z < hi[2]; ++z)
      for (int64_t y = lo[1]; y < hi[1]; ++y)
        for (int64_t xi = lo[0]; xi < hi[0]; ++xi) {
          const int64_t k = z * sz + y * sy + xi;
          const int id = ids[k];
          if (id == 0) continue;  // exact whatever T is (or zero, which any T reproduces)
          if (pass == 0) {
            id_lo = id < id_lo ? id : id_lo;
            continue;
          }
          const bool hx = xi > lo[0], hy = y > lo[1], hz = z > lo[2];
          const double a = hx ? x[k - 1] : 0.0, b = hy ? x[k - sy] : 0.0, c = hz ? x[k - sz] : 0.0;
          const double ab = hx && hy ? x[k - 1 - sy] : 0.0, ac = hx && hz ? x[k - 1 - sz] : 0.0;
          const double bc = hy && hz ? x[k - sy - sz] : 0.0, abc = hx && hy && hz ? x[k - 1 - sy - sz] : 0.0;
          const double pred = ((((((a + b) + c) - ab) - ac) - bc) + abc);
          const int e = residual_bin(residual_magnitude(double(x[k]) - pred, V(0)), eb_exponent);
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
  return cheapest_tile_id(hist, id_lo, e_lo, e_hi, free_count, kExactCostBits3D);
}

}  // namespace factz::detail
