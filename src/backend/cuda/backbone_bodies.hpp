// Per-vertex and per-entry bodies of the CUDA tiled backbone (backend/cpu/tiled_quantizer.cpp):
// Lorenzo codes on the pre-quantized integers, the byte lengths and bytes of the varint
// lists (outliers, exact indices) written at offsets from an exclusive scan, and the tile
// decoder as a row pass and a column pass of a 2D prefix sum.
//
// Lists are built as on the CPU: entries in index order (a stable compaction of flags),
// each entry's bytes at the scanned offset, so the bytes never depend on scheduling.
// T is the plane's value type: float, or double for a float64 stream (8-byte exact values,
// steps and reconstructions in double).
#pragma once

#include <cstdint>

#include "backend/cuda/block_bodies.hpp"
#include "kernels/tile_decode.hpp"
#include "kernels/tiles.hpp"
#include "kernels/varint.hpp"

namespace factz::cuda_detail {

using detail::put_varint_at;
using detail::varint_length;

/// Kernel body, one thread per vertex: the Lorenzo code of q inside its 32 x 32 tile
/// (kernels/tiles.hpp, as the CPU encoder computes it), its symbol (0 = escape; a missing
/// vertex's, tiled_symbol, is left out of the stream by the caller) and escape flag.
FACTZ_HD void lorenzo_code(int64_t nx, int64_t k, const int32_t* q, const uint8_t* missing, uint16_t* symbol,
                           int64_t* code, uint8_t* escape) {
  const int64_t y = k / nx, x = k - y * nx;
  const int32_t* row = q + y * nx;
  const int64_t c = detail::tile_lorenzo_code(row, y > 0 ? row - nx : nullptr, x, y);
  symbol[k] = detail::tiled_symbol(c, missing && missing[k]);
  code[k] = c;
  escape[k] = symbol[k] == 0;
}

/// Kernel body, one thread per vertex k of a masked plane whose stream codes only the
/// valid vertices (format version 5; streams/tiled_lists.hpp spread_valid_symbols, the
/// CPU's form): the valid vertex's stored symbol (pos: exclusive scan of the valid flags),
/// code 0 for a missing one. escape_missing_outlier then marks the missing vertices the
/// outlier list holds.
FACTZ_HD void spread_valid_symbol(int64_t k, const uint8_t* missing, const int64_t* pos, const uint16_t* stored,
                                  uint16_t* symbols) {
  symbols[k] = missing[k] ? uint16_t(detail::kRadius) : stored[pos[k]];
}

/// Kernel body, one thread per outlier entry e (after spread_valid_symbol): a missing
/// vertex in the outlier list has the escape symbol.
FACTZ_HD void escape_missing_outlier(int64_t e, const int64_t* outlier_index, const uint8_t* missing,
                                     uint16_t* symbols) {
  if (missing[outlier_index[e]]) symbols[outlier_index[e]] = 0;
}

/// Kernel body, one thread per (tile t, anti-diagonal d of the tile, tile column c), the
/// diagonals d = 0 .. 2 kTile - 2 in order (one warp per tile, synchronized between
/// diagonals): a vertex marked in `missing` takes its Lorenzo prediction as its integer
/// (kernels/tiles.hpp missing_vertex_quant), as the CPU encoder sets it row by row. Its
/// left, upper and upper-left neighbours lie on earlier diagonals, so they are final.
/// tile_ids and bound give the tile's step (2 * bound[id]), which keeps its reconstruction finite.
template <class T>
FACTZ_HD void missing_quant(int64_t nx, int64_t ny, int64_t t, int64_t d, int64_t c, const uint8_t* missing,
                            const uint8_t* tile_ids, const T* bound, int32_t* q) {
  const int64_t r = d - c;
  if (c >= kTile || r < 0 || r >= kTile) return;
  const int64_t tiles_x = (nx + kTile - 1) / kTile;
  const int64_t x = (t % tiles_x) * kTile + c, y = (t / tiles_x) * kTile + r;
  if (x >= nx || y >= ny || !missing[y * nx + x]) return;
  int32_t* row = q + y * nx;
  row[x] = detail::missing_vertex_quant(row, y > 0 ? row - nx : nullptr, x, y, T(2) * bound[tile_ids[t]]);
}

/// Gap of entry e of a sorted index list (the index minus the previous one minus 1).
FACTZ_HD uint64_t list_gap(const int64_t* index, int64_t e) {
  return uint64_t(index[e] - (e > 0 ? index[e - 1] : -1) - 1);
}

/// Kernel body, one thread per list entry e: its byte length in the outlier list
/// (varint gap, zig-zag varint code; code_of_entry holds the escaped code of entry e).
FACTZ_HD uint64_t outlier_entry_length(const int64_t* index, const int64_t* code_of_entry, int64_t e) {
  return uint64_t(varint_length(list_gap(index, e)) + varint_length(detail::zigzag_encode(code_of_entry[e])));
}

/// Kernel body, one thread per entry: writes entry e at dst + offset[e].
FACTZ_HD void write_outlier_entry(const int64_t* index, const int64_t* code_of_entry, int64_t e, const uint64_t* offset,
                                  uint8_t* dst) {
  uint8_t* p = dst + offset[e];
  p += put_varint_at(p, list_gap(index, e));
  put_varint_at(p, detail::zigzag_encode(code_of_entry[e]));
}

/// Exact index list: one varint gap per entry.
FACTZ_HD uint64_t index_entry_length(const int64_t* index, int64_t e) {
  return uint64_t(varint_length(list_gap(index, e)));
}

FACTZ_HD void write_index_entry(const int64_t* index, int64_t e, const uint64_t* offset, uint8_t* dst) {
  put_varint_at(dst + offset[e], list_gap(index, e));
}

/// The bits of a value (util/byte_io.hpp's f32 and f64 write them little-endian).
FACTZ_HD uint64_t value_bits(float x) { return float_bits(x); }
FACTZ_HD uint64_t value_bits(double x) { return detail::double_bits(x); }

/// Exact value list: the sizeof(T) little-endian bytes of recon[index[e]] per entry, the
/// value the decoder takes (the original's bits, or in float64 block mode its 24-bit
/// rounding; backend/cpu/tiled_quantizer.cpp writes the same reconstruction).
template <class T>
FACTZ_HD void write_value_entry(const int64_t* index, const T* recon, int64_t e, uint8_t* dst) {
  const uint64_t b = value_bits(recon[index[e]]);
  for (int i = 0; i < int(sizeof(T)); ++i) dst[int64_t(sizeof(T)) * e + i] = uint8_t(b >> (8 * i));
}

// ---- decoding --------------------------------------------------------------------------

/// Largest index i in [0, n) with index[i] == k, by binary search in a sorted list; -1 if
/// absent.
FACTZ_HD int64_t find_sorted(const int64_t* index, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (index[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && index[lo] == k ? lo : -1;
}

/// Kernel body, one thread per (tile t, tile row r): the running sums of the codes along
/// the row (mod 2^64), into scratch[r * kTile + c] for columns c of the tile. Escaped
/// symbols (0) take their code from the sorted outlier list.
FACTZ_HD void decode_tile_row(int64_t nx, int64_t ny, int64_t t, int64_t r, const uint16_t* symbols,
                              const int64_t* out_index, const int64_t* out_code, int64_t n_out, uint64_t* scratch) {
  const int64_t tiles_x = (nx + kTile - 1) / kTile;
  const int64_t x0 = (t % tiles_x) * kTile, y = (t / tiles_x) * kTile + r;
  if (y >= ny) return;
  const int64_t x1 = x0 + kTile < nx ? x0 + kTile : nx;
  uint64_t sum = 0;
  for (int64_t x = x0; x < x1; ++x) {
    const int64_t k = y * nx + x;
    int64_t code = int64_t(symbols[k]) - kRadius;
    if (symbols[k] == 0) {
      const int64_t e = find_sorted(out_index, n_out, k);
      code = e >= 0 ? out_code[e] : 0;  // the host parser guarantees an entry
    }
    sum += uint64_t(code);
    scratch[r * kTile + (x - x0)] = sum;
  }
}

/// Kernel body, one thread per (tile t, tile column c), after every row of the tile: the
/// running sums down the column give q (the CPU's left + above - above_left recurrence is
/// the same 2D prefix sum); each vertex's value is the CPU decoder's decision
/// (kernels/tile_decode.hpp) from q, the tile's step and, for a vertex in the sorted exact
/// list (exact_index, n_exact entries), its stored value. bad is set on corrupt input only.
template <class T>
FACTZ_HD void decode_tile_column(int64_t nx, int64_t ny, int64_t t, int64_t c, const uint8_t* tile_ids,
                                 const T* bound, const uint64_t* scratch, const int64_t* exact_index,
                                 const T* exact_value, int64_t n_exact, T* out, int* bad) {
  const int64_t tiles_x = (nx + kTile - 1) / kTile;
  const int64_t x = (t % tiles_x) * kTile + c, y0 = (t / tiles_x) * kTile;
  if (x >= nx) return;
  const int64_t y1 = y0 + kTile < ny ? y0 + kTile : ny;
  const T step = T(2) * bound[tile_ids[t]];
  uint64_t sum = 0;
  for (int64_t y = y0; y < y1; ++y) {
    sum += scratch[(y - y0) * kTile + c];
    const int64_t k = y * nx + x;
    const int64_t e = n_exact > 0 ? find_sorted(exact_index, n_exact, k) : -1;
    if (!detail::decode_tiled_vertex(int64_t(sum), step, e >= 0, e >= 0 ? exact_value[e] : T(0), out[k])) *bad = 1;
  }
}

}  // namespace factz::cuda_detail
