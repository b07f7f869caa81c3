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

/// The integer of a missing vertex whose Lorenzo prediction (2D or 3D) is p: p clamped to
/// +-quant_limit (kMaxQuant for floats), so its code is 0 (nearly free) and its neighbours
/// predict from a flat continuation of the valid data;
/// then, where float(q) * step would overflow (a prediction continuing values near
/// +-FLT_MAX), moved toward 0 to the largest |q| whose reconstruction is finite. The decoder
/// rejects a value that is not finite at a vertex not stored exactly (kernels/tile_decode.hpp),
/// and a missing vertex never is: without this its stream would not decode. Reconstruction
/// is monotone in q, so the search halves [0, |q|]. T: the field's value type (float, double).
template <class T>
FACTZ_HD int32_t missing_vertex_quant(int64_t p, T step) {
  const int64_t lim = quant_limit(step);
  int32_t q = int32_t(p > lim ? lim : (p < -lim ? -lim : p));
  if (finite_value(reconstruct(q, step))) return q;
  const int32_t sign = q < 0 ? -1 : 1;
  int32_t lo = 0, hi = q < 0 ? -q : q;  // reconstruct(sign * lo) is finite (0 * finite step), hi's is not
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (finite_value(reconstruct(sign * mid, step))) lo = mid;
    else hi = mid;
  }
  return sign * lo;
}

/// missing_vertex_quant of vertex x of `row` in row y of a 2D tile: its Lorenzo prediction.
template <class T>
FACTZ_HD int32_t missing_vertex_quant(const int32_t* row, const int32_t* above, int64_t x, int64_t y, T step) {
  return missing_vertex_quant(tile_lorenzo_prediction(row, above, x, y), step);
}

/// The symbol of a Lorenzo code: code + kRadius, or 0 (escape) when out of range.
FACTZ_HD uint16_t code_symbol(int64_t code) {
  return code > -kRadius && code < kRadius ? uint16_t(code + kRadius) : uint16_t(0);
}

/// The symbol of a vertex's Lorenzo code. A missing vertex's symbol is not stored (format
/// version 5): the decoder puts code 0 in its place, or the escape where the outlier list
/// holds the vertex, so a missing vertex whose code is not 0 (missing_vertex_quant moved its
/// prediction) escapes whatever the code's size. Every encoder takes its symbols from here.
FACTZ_HD uint16_t tiled_symbol(int64_t code, bool missing) {
  if (missing) return code == 0 ? uint16_t(kRadius) : uint16_t(0);
  return code_symbol(code);
}

/// The backbone's quantization of one vertex with its tile's bound id (id 0: the tile is
/// exact, q = 0): pre-quantization, reconstruction, and the exact check against the
/// vertex's own bound `need`. A miss keeps the original value and marks the vertex exact;
/// q is kept either way, for the Lorenzo codes of its neighbours. T is the field's value
/// type: float, or double for float64 fields (every operation then in double).
template <class T>
struct TiledValue {
  int32_t q = 0;
  T recon = T(0);
  bool exact = false;
};
using TiledVertex = TiledValue<float>;
using TiledVertex64 = TiledValue<double>;

template <class T>
FACTZ_HD TiledValue<T> quantize_tiled_vertex(T x, int tile_id, T step, T need) {
  TiledValue<T> out;
  out.q = tile_id > 0 ? prequantize(x, step) : 0;
  const T r = reconstruct(out.q, step);
  out.exact = !within_bound(r, x, need);
  out.recon = out.exact ? x : r;
  return out;
}

/// quantize_tiled_vertex of a vertex that may be missing (x is then the filled working
/// copy's value): a missing vertex is never stored exactly (the mask sections hold its bits),
/// so it keeps float(q) * step whatever its bound says; its q is replaced by
/// missing_vertex_quant when the codes are computed. Every backend quantizes planes with this.
template <class T>
FACTZ_HD TiledValue<T> quantize_tiled_vertex(T x, int tile_id, T step, T need, bool missing) {
  TiledValue<T> out = quantize_tiled_vertex(x, tile_id, step, need);
  if (missing && out.exact) {
    out.exact = false;
    out.recon = reconstruct(out.q, step);
  }
  return out;
}

/// prequantize(x, step) written as selects, so that the CPU's compiler vectorizes the loops
/// calling it (see quantize_tiled_run): prequantize's steps in order, the rounding
/// (round_even), the clamp (NaN to 0), then the conversion, which truncates the halves left
/// in [2^22, 2^23). The same q, value for value (tests/test_tiled_run.cpp).
FACTZ_HD int32_t prequantize_select(float x, float step) {
  constexpr float kMagic = 12582912.0f, kRound = 4194304.0f, kClamp = float(kMaxQuant);
  const float a = x / step;
  const float t = (a + kMagic) - kMagic;
  // Every comparison and conversion is evaluated unconditionally: the compiler may not
  // if-convert a floating-point operation that runs on one side of a branch only.
  const bool small = (a < kRound) & (a > -kRound);
  const float r = small ? t : a;
  const bool nan = r != r, below_hi = r <= kClamp, above_lo = r >= -kClamp;
  const float rc = !below_hi ? (nan ? 0.0f : kClamp) : (!above_lo ? -kClamp : r);
  return int32_t(rc);  // |rc| <= kMaxQuant: in range
}

/// quantize_tiled_vertex(x[i], tile_id, step, need, missing[i]) for a run of float vertices
/// of one tile row (count <= kTile), with need = bounds[ids[i]] (or the tile's own,
/// bounds[tile_id], when ids is null; missing may be null): the same IEEE operations written as selects, so that the
/// CPU's compiler vectorizes the loop. Vectorizing needs the if-conversion of operations that
/// GCC keeps on one side of a branch, which -ftrapping-math forbids: the file compiling this
/// sets -fno-trapping-math (traps and flags only; no value changes). The CUDA kernels
/// quantize one vertex per thread with the function above. Where `q` is given, it receives
/// each vertex's integer (prequantize's q; 0 in an exact tile), what the Lorenzo coder takes,
/// so that a frontend coding the band need not derive it again; float(q) is exact. Returns
/// whether any vertex was stored. Same results vertex for vertex: tests/test_tiled_run.cpp.
inline bool quantize_tiled_run(const float* x, int64_t count, int tile_id, float step, const float* bounds,
                               const uint8_t* ids, const uint8_t* missing, float* recon, uint8_t* exact,
                               int32_t* q = nullptr) {
  static constexpr uint8_t kNoneMissing[kTile] = {};
  float need[kTile];
  int32_t qs[kTile];
  for (int64_t i = 0; i < count; ++i) need[i] = bounds[ids ? ids[i] : tile_id];
  const uint8_t* m = missing ? missing : kNoneMissing;  // one loop body (the vectorized one)
  const bool tile_exact = tile_id <= 0;
  uint8_t any = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float xv = x[i];
    const int32_t qi = tile_exact ? 0 : prequantize_select(xv, step);  // an exact tile's q is 0
    qs[i] = qi;
    const float rq = float(qi) * step;
    // within_bound: TwoSum of the reconstruction and -x; a difference that is not exact misses.
    double s, e;
    two_sum(double(rq), -double(xv), s, e);
    const double abs_s = s < 0.0 ? -s : s;
    const bool exact_diff = e == 0.0, within = abs_s <= double(need[i]);
    const bool stored = !(exact_diff & within) & (m[i] == 0);
    recon[i] = stored ? xv : rq;
    exact[i] = stored ? 1 : 0;
    any |= exact[i];
  }
  if (q)
    for (int64_t i = 0; i < count; ++i) q[i] = qs[i];
  return any != 0;
}

}  // namespace factz::detail
