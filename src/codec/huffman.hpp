// Canonical Huffman coding of 16-bit symbols (the quantization codes of the predictors).
//
// The output is a self-contained blob (byte layout in docs/codec.md): a small header, the
// codebook (code lengths of the used symbols only), a chunk table and the payload. The
// payload is cut into chunks of a fixed number of symbols that are coded independently,
// so encoding and decoding run in parallel over chunks. The blob depends only on the
// symbols: never on the thread count or the machine.
#pragma once

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

/// Encodes `symbols` into `out` (replacing its contents).
/// threads: OpenMP threads to use (values below 1 mean 1); the bytes do not depend on it.
Status huffman_encode(std::span<const uint16_t> symbols, std::vector<uint8_t>& out, int threads);

/// Decodes exactly symbols.size() symbols from the blob `in`; the blob must have been
/// written for that many symbols. Corrupted, truncated or random input returns
/// corrupt_stream and never reads or writes out of bounds.
/// threads: OpenMP threads to use (values below 1 mean 1).
Status huffman_decode(std::span<const uint8_t> in, std::span<uint16_t> symbols, int threads);

}  // namespace factz::detail
