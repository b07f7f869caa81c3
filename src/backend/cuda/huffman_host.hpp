// Host half of the device Huffman encoder: from a histogram (counted on the device), the
// code lengths (codec/huffman.hpp huffman_code_lengths, the CPU's rule), the canonical
// code table the device writes with, and the blob's head (version, chunk size, symbol
// count, codebook); the device adds the chunk table and the payload. The blob is
// codec/huffman.cpp's byte for byte (docs/codec.md, "Huffman blob").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace factz::cuda_detail {

struct HuffmanHead {
  std::vector<uint8_t> bytes;    ///< version, chunk_log2, n (u64), codebook
  std::vector<uint32_t> table;   ///< (code << 5) | length per symbol, 0 if unused
  uint64_t chunks = 0;           ///< ceil(n / 2^16)
};

/// The head and code table for n symbols with the given histogram (65536 counts).
HuffmanHead huffman_head(std::span<const uint64_t> histogram, uint64_t n);

}  // namespace factz::cuda_detail

#include "backend/cuda/huffman_bodies.hpp"
#include "factz/status.hpp"

namespace factz::cuda_detail {

/// A Huffman blob checked up to its payload, ready for huffman_decode_chunk.
struct HuffmanParsed {
  HuffmanBook book{};
  std::vector<uint16_t> sorted;      ///< used symbols by (length, symbol)
  int chunk_log2 = 16;
  std::vector<uint64_t> chunk_pos;   ///< byte offset of each chunk in the blob, plus the end
};

/// Parses and validates the head, codebook and chunk table of a blob of n symbols
/// (detail::huffman_parse, the CPU decoder's own parser); corrupt_stream otherwise.
Status huffman_parse(std::span<const uint8_t> blob, uint64_t n, HuffmanParsed& out);

}  // namespace factz::cuda_detail
