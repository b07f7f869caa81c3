// The list sections of the tiled modes (none, block) and the sections every tiled or
// speculative stream starts with, as docs/format.md specifies them: "both planes" lists
// (varint size of u's part, u's part, v's part), outlier lists (gap varints and zigzag
// codes), exact lists (gap varints and f32 values), the meta section. Writers and readers
// of every backend use these, so the list format exists once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// A plane's outlier list (docs/format.md): increasing indices below n, codes within
/// +-2^40, no trailing bytes. With `symbols` (n of them) also: every outlier sits on an
/// escape symbol and every escape has one; an empty `symbols` leaves those two checks to
/// the caller (the CUDA decoder checks them on the device). corrupt_stream otherwise.
Status parse_outliers(std::span<const uint8_t> in, uint64_t n, std::span<const uint16_t> symbols,
                      std::vector<int64_t>& index, std::vector<int64_t>& code);

/// Every outlier sits on an escape symbol of `symbols` and every escape has one
/// (parse_outliers' checks, for a caller that parsed the list before it had the symbols).
Status check_outlier_escapes(std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index);

/// A masked tiled plane of format version 5 codes one symbol per valid vertex: `stored`
/// (the blob's count) must be `valid` (corrupt_stream otherwise). Every decoder of those
/// codes (CPU, device, GPU model) checks it here.
Status check_stored_symbols(uint64_t stored, uint64_t valid);

/// A masked tiled stream of format version 5 codes no symbol for a missing vertex
/// (kernels/tiles.hpp tiled_symbol). `symbols` holds one entry per vertex, the first
/// `stored` the decoded symbols of the valid vertices in index order: spreads them over the
/// grid and gives each missing vertex its implied symbol, the escape where the (sorted)
/// outlier list holds the vertex, else code 0. corrupt_stream when `stored` is not the
/// number of valid vertices.
Status spread_valid_symbols(std::span<uint16_t> symbols, uint64_t stored, const uint8_t* missing,
                            std::span<const int64_t> outlier_index);

/// A plane's exact list: varint count <= n, increasing indices below n from the gap
/// varints, one finite f32 per index, nothing left over. corrupt_stream otherwise.
Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<float>& value);
/// parse_exact of a float64 stream: one finite f64 per index.
Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<double>& value);

/// The tile ids of a tiled stream in `mode` (block or none) with `components` planes of
/// `ntiles` tiles each, plane after plane: mode block's tile_bounds section, read through
/// `zstd` and checked (its size, every id at most kMaxBoundId); mode none's uniform id
/// (kMaxBoundId, or 0 when the bound is 0). 2D and 3D vector streams alike.
Status read_tile_ids(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd, uint8_t mode,
                     int components, size_t ntiles, bool positive_bound, std::vector<uint8_t>& out);

/// The meta section of a tiled or speculative stream: the bound-id range and radius of
/// this format (corrupt_stream when malformed or different).
Status check_meta_section(std::span<const uint8_t> meta);

/// Largest absolute bound of a float64 stream: 2 * eb and every bound_of_id stay finite.
inline constexpr double kMaxEb64 = 0x1p1022;

/// The meta section of a stream with header `h` and the absolute bound its decoder uses: a
/// float32 stream's is the header's f32 `eb` (check_meta_section's five bytes); a float64
/// stream's meta section adds the f64 bound (finite, in [0, kMaxEb64]), whose float_bound
/// must be the header's f32 `eb` (docs/format.md, "1 meta").
Status parse_meta_section(std::span<const uint8_t> meta, const Header& h, double& eb);

/// The sections of a none/block stream that precede the codes, read (zstd undone) and
/// checked: meta, tile ids (2 * tile count, u's then v's, each <= kMaxBoundId) and the
/// both-planes lists split per plane. The spans point into the owned section bytes.
struct TiledSections {
  double eb = 0;  ///< the absolute bound (parse_meta_section): the header's, or a float64 stream's f64 one
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
