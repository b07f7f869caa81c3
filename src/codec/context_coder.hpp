// The context coder of scalar streams (coder 2, docs/codec.md "Context coder"): the
// quantization codes of a scalar field, 16-bit symbols around kContextCenter (symbol 0: the
// value is stored exactly), coded one binary decision at a time by an adaptive binary range
// coder whose probabilities are chosen by the codes of the vertex's left, upper and (3D)
// lower-z neighbours. Codes of smooth fields come in zero runs and clusters of large
// residuals that an order-0 or byte-plane coder does not see.
//
// The symbols are those of the valid vertices of an nx x ny x nz grid in index order (the
// missing vertices have none); rows of nx vertices are cut into chunks of whole rows, each
// coded independently (neighbours outside its rows count as code 0), so that chunks encode
// and decode in parallel. The blob depends only on the symbols and the grid, never on the
// thread count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

inline constexpr uint8_t kContextCoderVersion = 1;
inline constexpr uint16_t kContextCenter = 32768;
/// Vertices per chunk the writer aims at (whole rows, at least one row).
inline constexpr int64_t kContextChunkVertices = int64_t(1) << 20;
/// Bytes before the chunk sizes: version, reserved, u64 symbols, u32 rows per chunk, u32 chunks.
inline constexpr size_t kContextHeadBytes = 18;

/// The grid the symbols belong to; `missing` empty (none missing) or one byte per vertex,
/// nonzero for a missing vertex (which has no symbol).
struct CodeGrid {
  int64_t nx = 0, ny = 0, nz = 1;
  std::span<const uint8_t> missing{};
};

/// Codes `symbols` (one per valid vertex of `g`, in index order) into `out` (replaced).
/// invalid_argument when their count is not the grid's valid vertices.
Status context_encode(std::span<const uint16_t> symbols, const CodeGrid& g, std::vector<uint8_t>& out, int threads);

/// Decodes a blob of context_encode into `symbols` (sized by the caller: the grid's valid
/// vertices, which the blob's count must equal). corrupt_stream for anything the encoder
/// cannot have written: a wrong count or chunk table, a chunk that ends early or late, a
/// residual out of range.
Status context_decode(std::span<const uint8_t> in, const CodeGrid& g, std::span<uint16_t> symbols, int threads);

}  // namespace factz::detail
