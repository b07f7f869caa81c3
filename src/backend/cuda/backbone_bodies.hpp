// Per-vertex and per-entry bodies of the CUDA tiled backbone (modes/tiled_quantizer.cpp):
// Lorenzo codes on the pre-quantized integers, the byte lengths and bytes of the varint
// lists (outliers, exact indices) written at offsets from an exclusive scan, and the tile
// decoder as a row pass and a column pass of a 2D prefix sum.
//
// Lists are built as on the CPU: entries in index order (a stable compaction of flags),
// each entry's bytes at the scanned offset, so the bytes never depend on scheduling.
#pragma once

#include <cstdint>

#include "backend/cuda/block_bodies.hpp"

namespace factz::cuda_detail {

inline constexpr int32_t kCodeRadius = 32768;  ///< detail::kRadius (tiled_quantizer.hpp)

/// Kernel body, one thread per vertex: the Lorenzo code of q inside its 32 x 32 tile
/// (neighbours outside the tile count as 0), its symbol (0 = escape) and escape flag.
FACTZ_HD void lorenzo_code(int64_t nx, int64_t k, const int32_t* q, uint16_t* symbol, int64_t* code,
                           uint8_t* escape) {
  const int64_t y = k / nx, x = k - y * nx;
  const bool has_l = x % kTileEdge != 0, has_up = y % kTileEdge != 0;
  const int64_t l = has_l ? q[k - 1] : 0;
  const int64_t t = has_up ? q[k - nx] : 0;
  const int64_t tl = (has_l && has_up) ? q[k - nx - 1] : 0;
  const int64_t c = int64_t(q[k]) - (l + t - tl);
  const bool in_range = c > -kCodeRadius && c < kCodeRadius;
  symbol[k] = in_range ? uint16_t(c + kCodeRadius) : 0;
  code[k] = c;
  escape[k] = !in_range;
}

FACTZ_HD int varint_length(uint64_t x) {
  int n = 1;
  while (x >= 0x80) {
    x >>= 7;
    ++n;
  }
  return n;
}

/// Writes x as LEB128 at dst (util/byte_io.hpp: put_varint); returns the bytes written.
FACTZ_HD int put_varint_at(uint8_t* dst, uint64_t x) {
  int n = 0;
  while (x >= 0x80) {
    dst[n++] = uint8_t(x | 0x80);
    x >>= 7;
  }
  dst[n++] = uint8_t(x);
  return n;
}

FACTZ_HD uint64_t zigzag64(int64_t x) { return (uint64_t(x) << 1) ^ uint64_t(x >> 63); }

/// Gap of entry e of a sorted index list (the index minus the previous one minus 1).
FACTZ_HD uint64_t list_gap(const int64_t* index, int64_t e) {
  return uint64_t(index[e] - (e > 0 ? index[e - 1] : -1) - 1);
}

/// Kernel body, one thread per list entry e: its byte length in the outlier list
/// (varint gap, zig-zag varint code; code_of_entry holds the escaped code of entry e).
FACTZ_HD uint64_t outlier_entry_length(const int64_t* index, const int64_t* code_of_entry, int64_t e) {
  return uint64_t(varint_length(list_gap(index, e)) + varint_length(zigzag64(code_of_entry[e])));
}

/// Kernel body, one thread per entry: writes entry e at dst + offset[e].
FACTZ_HD void write_outlier_entry(const int64_t* index, const int64_t* code_of_entry, int64_t e, const uint64_t* offset,
                                  uint8_t* dst) {
  uint8_t* p = dst + offset[e];
  p += put_varint_at(p, list_gap(index, e));
  put_varint_at(p, zigzag64(code_of_entry[e]));
}

/// Exact index list: one varint gap per entry.
FACTZ_HD uint64_t index_entry_length(const int64_t* index, int64_t e) {
  return uint64_t(varint_length(list_gap(index, e)));
}

FACTZ_HD void write_index_entry(const int64_t* index, int64_t e, const uint64_t* offset, uint8_t* dst) {
  put_varint_at(dst + offset[e], list_gap(index, e));
}

/// Exact value list: 4 little-endian bytes of x[index[e]] per entry (util/byte_io.hpp f32).
FACTZ_HD void write_value_entry(const int64_t* index, const float* x, int64_t e, uint8_t* dst) {
  const uint32_t b = float_bits(x[index[e]]);
  for (int i = 0; i < 4; ++i) dst[4 * e + i] = uint8_t(b >> (8 * i));
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
/// the row (mod 2^64), into scratch[r * kTileEdge + c] for columns c of the tile. Escaped
/// symbols (0) take their code from the sorted outlier list.
FACTZ_HD void decode_tile_row(int64_t nx, int64_t ny, int64_t t, int64_t r, const uint16_t* symbols,
                              const int64_t* out_index, const int64_t* out_code, int64_t n_out, uint64_t* scratch) {
  const int64_t tiles_x = (nx + kTileEdge - 1) / kTileEdge;
  const int64_t x0 = (t % tiles_x) * kTileEdge, y = (t / tiles_x) * kTileEdge + r;
  if (y >= ny) return;
  const int64_t x1 = x0 + kTileEdge < nx ? x0 + kTileEdge : nx;
  uint64_t sum = 0;
  for (int64_t x = x0; x < x1; ++x) {
    const int64_t k = y * nx + x;
    int64_t code = int64_t(symbols[k]) - kCodeRadius;
    if (symbols[k] == 0) {
      const int64_t e = find_sorted(out_index, n_out, k);
      code = e >= 0 ? out_code[e] : 0;  // the host parser guarantees an entry
    }
    sum += uint64_t(code);
    scratch[r * kTileEdge + (x - x0)] = sum;
  }
}

/// Kernel body, one thread per (tile t, tile column c), after every row of the tile: the
/// running sums down the column give q (the CPU's left + above - above_left recurrence is
/// the same 2D prefix sum), reconstructed with the tile's step. bad is set when q leaves
/// +-kMaxQuant or the value is not finite (corrupt input only).
FACTZ_HD void decode_tile_column(int64_t nx, int64_t ny, int64_t t, int64_t c, const uint8_t* tile_ids,
                                 const float* bound, const uint64_t* scratch, float* out, int* bad) {
  const int64_t tiles_x = (nx + kTileEdge - 1) / kTileEdge;
  const int64_t x = (t % tiles_x) * kTileEdge + c, y0 = (t / tiles_x) * kTileEdge;
  if (x >= nx) return;
  const int64_t y1 = y0 + kTileEdge < ny ? y0 + kTileEdge : ny;
  const float step = 2.0f * bound[tile_ids[t]];
  uint64_t sum = 0;
  for (int64_t y = y0; y < y1; ++y) {
    sum += scratch[(y - y0) * kTileEdge + c];
    const int64_t qs = int64_t(sum);
    const int64_t lim = detail::kMaxQuant;
    if (qs > lim || qs < -lim) *bad = 1;
    const int32_t qc = int32_t(qs > lim ? lim : (qs < -lim ? -lim : qs));
    const float r = detail::reconstruct(qc, step);
    if (!(r - r == 0.0f)) *bad = 1;  // not finite
    out[y * nx + x] = r;
  }
}

}  // namespace factz::cuda_detail
