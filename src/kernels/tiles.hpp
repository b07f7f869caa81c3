// The tiled backbone's geometry and code range (modes none and block; format constants):
// 32 x 32 tiles, each with one bound id; Lorenzo codes c with |c| < kRadius become the
// symbol c + kRadius, symbol 0 escapes to the outlier list. Both backends and the stream
// layer read these from here.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/quantizer.hpp"

namespace factz::detail {

/// Tile edge in vertices (the header's `tile` field; the decoder accepts only this value).
inline constexpr int64_t kTile = 32;
/// Codes c with |c| < kRadius become symbol c + kRadius; symbol 0 escapes to the outliers.
inline constexpr int32_t kRadius = 32768;

struct TileLayout {
  int64_t nx = 0, ny = 0;
  int64_t tiles_x = 0, tiles_y = 0;
  FACTZ_HD TileLayout(int64_t nx_, int64_t ny_)
      : nx(nx_), ny(ny_), tiles_x((nx_ + kTile - 1) / kTile), tiles_y((ny_ + kTile - 1) / kTile) {}
  FACTZ_HD int64_t tile_count() const { return tiles_x * tiles_y; }
  FACTZ_HD int64_t tile_of(int64_t x, int64_t y) const { return (y / kTile) * tiles_x + x / kTile; }
};

/// The Lorenzo prediction of vertex x of `row` (pre-quantized integers) in row y, inside its
/// tile: neighbours outside the tile count as 0, so tiles decode independently. `above` is
/// the row above, read only when y is not the first row of a tile.
FACTZ_HD int64_t tile_lorenzo_prediction(const int32_t* row, const int32_t* above, int64_t x, int64_t y) {
  const bool has_l = x % kTile != 0, has_up = y % kTile != 0;
  const int64_t l = has_l ? row[x - 1] : 0;
  const int64_t t = has_up ? above[x] : 0;
  const int64_t tl = (has_l && has_up) ? above[x - 1] : 0;
  return l + t - tl;
}

/// The Lorenzo code of vertex x of `row`: its integer minus its prediction.
FACTZ_HD int64_t tile_lorenzo_code(const int32_t* row, const int32_t* above, int64_t x, int64_t y) {
  return int64_t(row[x]) - tile_lorenzo_prediction(row, above, x, y);
}

/// The integer of a missing vertex: its prediction, clamped to +-kMaxQuant, so its code is
/// 0 (nearly free) and its neighbours predict from a flat continuation of the valid data.
FACTZ_HD int32_t missing_vertex_quant(const int32_t* row, const int32_t* above, int64_t x, int64_t y) {
  const int64_t p = tile_lorenzo_prediction(row, above, x, y), lim = kMaxQuant;
  return int32_t(p > lim ? lim : (p < -lim ? -lim : p));
}

/// The symbol of a Lorenzo code: code + kRadius, or 0 (escape) when out of range.
FACTZ_HD uint16_t code_symbol(int64_t code) {
  return code > -kRadius && code < kRadius ? uint16_t(code + kRadius) : uint16_t(0);
}

/// The backbone's quantization of one vertex with its tile's bound id (id 0: the tile is
/// exact, q = 0): pre-quantization, reconstruction, and the exact check against the
/// vertex's own bound `need`. A miss keeps the original value and marks the vertex exact;
/// q is kept either way, for the Lorenzo codes of its neighbours.
struct TiledVertex {
  int32_t q = 0;
  float recon = 0.0f;
  bool exact = false;
};
FACTZ_HD TiledVertex quantize_tiled_vertex(float x, int tile_id, float step, float need) {
  TiledVertex out;
  out.q = tile_id > 0 ? prequantize(x, step) : 0;
  const float r = reconstruct(out.q, step);
  out.exact = !within_bound(r, x, need);
  out.recon = out.exact ? x : r;
  return out;
}

}  // namespace factz::detail
