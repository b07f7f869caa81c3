// Canonical Huffman coding of 16-bit symbols (the quantization codes of the predictors).
//
// The output is a self-contained blob (byte layout in docs/codec.md): a small header, the
// codebook (code lengths of the used symbols only), a chunk table and the payload. The
// payload is cut into chunks of a fixed number of symbols that are coded independently,
// so encoding and decoding run in parallel over chunks. The blob depends only on the
// symbols: never on the thread count or the machine.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

/// Number of distinct symbols (the whole uint16 range).
inline constexpr uint32_t kHuffmanAlphabet = 65536;
/// Longest code the encoder emits and the decoder accepts (bits).
inline constexpr int kHuffmanMaxCodeLength = 24;
/// Symbols per independently coded chunk, as log2; the last chunk may be shorter.
inline constexpr int kHuffmanChunkLog2 = 16;
/// Blob format version written in byte 0.
inline constexpr uint8_t kHuffmanVersion = 1;

/// Code lengths from a histogram: Huffman lengths with ties broken by symbol value, then
/// limited to kHuffmanMaxCodeLength bits (docs/codec.md, "Code lengths").
/// `histogram` and `lengths` have the same size, at most kHuffmanAlphabet; lengths[s] is
/// 0 for an unused symbol. A single used symbol gets length 1. The result is a complete
/// prefix code (Kraft sum exactly 1) whenever two or more symbols are used.
void huffman_code_lengths(std::span<const uint64_t> histogram, std::span<uint8_t> lengths);

/// The encoder's code table: (code << 5) | length for every symbol of the alphabet (0 for
/// unused ones), canonical codes assigned in (length, symbol) order. `lengths` as from
/// huffman_code_lengths (kHuffmanAlphabet entries).
std::vector<uint32_t> huffman_encode_table(std::span<const uint8_t> lengths);

/// Appends a blob's head for n symbols: version, chunk size, n and the codebook of
/// `lengths` (kHuffmanAlphabet entries); the chunk table and the payload follow it.
/// huffman_encode writes its head with this; the CUDA encoder too.
void huffman_write_head(uint64_t n, std::span<const uint8_t> lengths, std::vector<uint8_t>& out);

/// The canonical code of a codebook, as a decoder needs it (docs/codec.md, "Canonical
/// codes"): a kHuffmanMaxCodeLength-bit window v starting at a code holds a code of length
/// len iff limit[len - 1] <= v < limit[len]; its symbol is
/// sorted[offset[len] + (v >> (kHuffmanMaxCodeLength - len)) - first[len]].
struct HuffmanCanonical {
  std::array<uint32_t, kHuffmanMaxCodeLength + 1> count{};   ///< symbols per length
  std::array<uint32_t, kHuffmanMaxCodeLength + 1> first{};   ///< first code of each length
  std::array<uint32_t, kHuffmanMaxCodeLength + 1> offset{};  ///< index in `sorted` of that code
  std::array<uint32_t, kHuffmanMaxCodeLength + 1> limit{};   ///< left-justified end of each length
  std::vector<uint16_t> sorted;                              ///< used symbols by (length, symbol)
  int max_len = 0;
};

/// A blob checked up to its payload: its canonical code and where each chunk lies.
struct HuffmanBlob {
  int chunk_log2 = kHuffmanChunkLog2;
  HuffmanCanonical code;
  std::vector<uint64_t> chunk_pos;  ///< byte offset of each chunk in the blob, plus the end
};

/// Parses and validates the head, codebook and chunk table of a blob written for n
/// symbols (huffman_decode's checks, shared with the CUDA decoder); corrupt_stream when
/// they are invalid. The payload itself is checked by decoding it.
Status huffman_parse(std::span<const uint8_t> in, uint64_t n, HuffmanBlob& out);

/// Encodes `symbols` into `out` (replacing its contents).
/// threads: OpenMP threads to use (values below 1 mean 1); the bytes do not depend on it.
Status huffman_encode(std::span<const uint16_t> symbols, std::vector<uint8_t>& out, int threads);

/// Decodes exactly symbols.size() symbols from the blob `in`; the blob must have been
/// written for that many symbols. Corrupted, truncated or random input returns
/// corrupt_stream and never reads or writes out of bounds.
/// threads: OpenMP threads to use (values below 1 mean 1).
Status huffman_decode(std::span<const uint8_t> in, std::span<uint16_t> symbols, int threads);

}  // namespace factz::detail
