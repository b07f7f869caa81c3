// The two sections of a stream with missing vertices (format version 3, docs/format.md
// "Masks"): `mask`, the count of missing vertices and their bitmap (codec/mask_coder.hpp:
// adaptive binary range coding with a context of coded neighbours), and
// `masked_values`, the bits each missing vertex held (the fill value's, or the NaN that was
// read, payload included), as one shared pair, a table of distinct pairs with an index per
// vertex, or raw pairs. Both are offered to the zstd stage (kept where it shrinks them). Every backend's streams use these; the decoder lays the values
// over its reconstruction last.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "factz/status.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// Appends the mask sections of `mask` (nx * ny bytes, nonzero = missing, at least one)
/// and of the planes' bits at the missing vertices. `one_section`: both in one section,
/// `mask_and_values` (format version 7; the speculative streams with a predictor byte), one
/// table entry (40 bytes) less.
void append_mask_sections(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::span<const float> u,
                          std::span<const float> v, std::vector<Section>& sections, bool one_section = false);
/// The same for a float64 field: `masked_values` holds u64 bits (format version 6).
void append_mask_sections(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::span<const double> u,
                          std::span<const double> v, std::vector<Section>& sections, bool one_section = false);

/// The mask of a 3D vector field (format version 12): always the one section
/// `mask_and_values`, the bitmap over the grid seen as `nx` columns and `rows` = ny * nz rows
/// (the z-slices one after the other, as a 3D scalar stream's), each missing vertex's bits as
/// a triple (u, v, w) where a 2D stream holds a pair.
void append_mask_section3d(std::span<const uint8_t> mask, int64_t nx, int64_t rows, std::span<const float> u,
                           std::span<const float> v, std::span<const float> w, std::vector<Section>& sections);
/// The same for a float64 field (format version 13): triples of u64 bits.
void append_mask_section3d(std::span<const uint8_t> mask, int64_t nx, int64_t rows, std::span<const double> u,
                           std::span<const double> v, std::span<const double> w, std::vector<Section>& sections);

/// Whether a parsed stream holds the mask sections (both, or mask_and_values alone; anything
/// else is corrupt).
Result<bool> stream_has_mask(const ParsedContainer& pc);

/// Reads the mask sections of a stream of nx * ny vertices (stream_has_mask true): the mask
/// into `mask` (1 = missing; kept when it already holds nx * ny bytes from read_mask) and
/// each missing vertex's stored bits into u, v.
Status apply_mask_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                           std::span<float> u, std::span<float> v, std::vector<uint8_t>& mask);
/// The same for a float64 stream: each missing vertex gets its 64 bits back.
Status apply_mask_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                           std::span<double> u, std::span<double> v, std::vector<uint8_t>& mask);

/// apply_mask_sections of a 3D vector stream (append_mask_section3d): nx columns, `rows` =
/// ny * nz rows, triples.
Status apply_mask_section3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t rows,
                            std::span<float> u, std::span<float> v, std::span<float> w, std::vector<uint8_t>& mask);
Status apply_mask_section3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t rows,
                            std::span<double> u, std::span<double> v, std::span<double> w, std::vector<uint8_t>& mask);

/// The mask section alone (the speculative decoder needs the mask before the values).
/// `expected_missing` (when given): the count of missing vertices the caller already knows
/// (the scalar decoder: the grid minus its codes' symbols); a mask section recording another
/// count is corrupt_stream before any nx * ny bytes are allocated for the bitmap.
Status read_mask(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                 std::vector<uint8_t>& mask, std::optional<uint64_t> expected_missing = std::nullopt);

/// The count of missing vertices a stream's mask records (the varint the coded bitmap starts
/// with), read without decoding or allocating the bitmap: in [1, n] for a grid of n vertices,
/// corrupt_stream otherwise. The stream parsers compare it with their codes' symbol counts
/// before the decoder allocates anything for the grid (read_mask checks the bitmap later).
Result<uint64_t> recorded_missing_count(std::span<const uint8_t> stream, const ParsedContainer& pc, uint64_t n);

}  // namespace factz::detail
