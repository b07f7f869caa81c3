// The SZ-style backbone shared by every 2D mode: per-tile error bounds on the bound-id
// grid, pre-quantization, Lorenzo prediction inside 32 x 32 tiles on the integers
// (decoding is a 2D prefix sum), escape of out-of-range codes, and a side stream for
// values stored exactly. Modes only decide the bound ids and which vertices are exact.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"
#include "format/container.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

inline constexpr int64_t kTile = 32;
/// Codes c with |c| < kRadius become symbol c + kRadius; symbol 0 escapes to the outliers.
inline constexpr int32_t kRadius = 32768;

struct TileLayout {
  int64_t nx = 0, ny = 0;
  int64_t tiles_x = 0, tiles_y = 0;
  TileLayout(int64_t nx_, int64_t ny_)
      : nx(nx_), ny(ny_), tiles_x((nx_ + kTile - 1) / kTile), tiles_y((ny_ + kTile - 1) / kTile) {}
  int64_t tile_count() const { return tiles_x * tiles_y; }
  int64_t tile_of(int64_t x, int64_t y) const { return (y / kTile) * tiles_x + x / kTile; }
};

/// One component plane in the encoder: what the decoder will reconstruct, and why. The
/// pre-quantized integers q are a pure function of (value, tile id) and are recomputed
/// where needed instead of stored.
struct QuantizedPlane {
  std::vector<uint8_t> tile_ids;  ///< bound id per tile (0: the tile is stored exactly)
  BigVector<float> recon;         ///< the decoder's value, per vertex
  BigVector<uint8_t> exact;       ///< 1 if the vertex is stored exactly (side stream)
};

/// Quantizes plane x with the given tile ids. A vertex whose reconstruction misses its
/// own required bound (vertex_ids, or the tile bound when null) is stored exactly.
void quantize_plane(std::span<const float> x, const TileLayout& layout, float eb,
                    std::vector<uint8_t> tile_ids, const uint8_t* vertex_ids, int threads,
                    QuantizedPlane& out);

/// Serialized payloads of one plane (see docs/format.md, "Backbone sections").
struct PlanePayload {
  BigVector<uint16_t> symbols;    ///< one per vertex, entropy-coded by the caller
  std::vector<uint8_t> outliers;  ///< varint list of escaped codes
  std::vector<uint8_t> exact_index;
  std::vector<uint8_t> exact_values;
};

PlanePayload encode_plane(std::span<const float> x, const TileLayout& layout, float eb, const QuantizedPlane& p,
                          int threads);

/// Inverse of encode_plane: reconstructs the plane (out holds nx * ny floats; every one
/// is written) from tile ids and payloads.
Status decode_plane(const TileLayout& layout, float eb, std::span<const uint8_t> tile_ids,
                    std::span<const uint16_t> symbols, std::span<const uint8_t> outliers,
                    std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values,
                    int threads, std::span<float> out);

/// A plane's outlier list (docs/format.md): increasing indices below n, codes within
/// +-2^40, no trailing bytes. With `symbols` (n of them) also: every outlier sits on an
/// escape symbol and every escape has one; an empty `symbols` leaves those two checks to
/// the caller (the CUDA decoder checks them on the device). corrupt_stream otherwise.
Status parse_outliers(std::span<const uint8_t> in, uint64_t n, std::span<const uint16_t> symbols,
                      std::vector<int64_t>& index, std::vector<int64_t>& code);

/// A plane's exact list: varint count <= n, increasing indices below n from the gap
/// varints, one finite f32 per index, nothing left over. corrupt_stream otherwise.
Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<float>& value);

/// The meta section of a tiled or speculative stream: the bound-id range and radius of
/// this format (corrupt_stream when malformed or different).
Status check_meta_section(std::span<const uint8_t> meta);

/// The sections of a none/block stream that precede the codes, read (zstd undone) and
/// checked: meta, tile ids (2 * tile count, u's then v's, each <= kMaxBoundId) and the
/// both-planes lists split per plane. The spans point into the owned section bytes.
struct TiledSections {
  std::vector<uint8_t> tile_ids;
  std::vector<uint8_t> exact_index, exact_values, outliers;
  std::span<const uint8_t> idx[2], val[2], outl[2];
};
/// Reads them from a parsed container (the CPU decoder and the CUDA host side share it).
Status read_tiled_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd,
                           TiledSections& out);

/// "Both planes" sections: varint(size of a) | a | b (docs/format.md).
std::vector<uint8_t> concat_lists(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);
/// Inverse of concat_lists; corrupt_stream (naming `what`) when the size does not fit.
Status split_lists(std::span<const uint8_t> in, std::span<const uint8_t>& a, std::span<const uint8_t>& b,
                   const char* what);

}  // namespace factz::detail
