// Device Huffman encoding of the chunked canonical blob (docs/codec.md, "Huffman blob"):
// the codebook comes from the host (huffman_code_lengths on a device histogram, the same
// code table as codec/huffman.cpp); each chunk of 2^16 symbols is one block, each thread
// codes kHuffmanSymbolsPerThread consecutive symbols at the bit offset a block scan gives
// it. Bytes shared by two threads are combined with OR (order-free), so the payload is
// exactly the CPU's BitWriter output (MSB first, zero padding).
#pragma once

#include <cstdint>

#include "codec/huffman.hpp"
#include "kernels/hd.hpp"

namespace factz::cuda_detail {

inline constexpr int kHuffmanChunkShift = detail::kHuffmanChunkLog2;
inline constexpr int kHuffmanThreadsPerChunk = 1024;
inline constexpr int kHuffmanSymbolsPerThread = (1 << kHuffmanChunkShift) / kHuffmanThreadsPerChunk;

/// Symbols [lo, hi) of thread `thread` of chunk `chunk` (n symbols in all).
FACTZ_HD void huffman_thread_range(uint64_t n, uint64_t chunk, int thread, uint64_t& lo, uint64_t& hi) {
  const uint64_t c0 = chunk << kHuffmanChunkShift;
  lo = c0 + uint64_t(thread) * kHuffmanSymbolsPerThread;
  hi = lo + kHuffmanSymbolsPerThread;
  if (lo > n) lo = n;
  if (hi > n) hi = n;
}

/// Bits of symbols [lo, hi); table[s] = (code << 5) | length.
FACTZ_HD uint32_t huffman_range_bits(const uint32_t* table, const uint16_t* symbols, uint64_t lo, uint64_t hi) {
  uint32_t bits = 0;
  for (uint64_t i = lo; i < hi; ++i) bits += table[symbols[i]] & 31;
  return bits;
}

/// Writes the codes of symbols [lo, hi) starting `bit` bits into the chunk whose payload
/// begins at byte `base`: each finished byte goes to or_byte(byte_index, value), which
/// ORs it into the (zeroed) output.
template <class OrByte>
FACTZ_HD void huffman_write_range(const uint32_t* table, const uint16_t* symbols, uint64_t lo, uint64_t hi,
                                  uint64_t base, uint64_t bit, OrByte&& or_byte) {
  uint64_t byte = base + bit / 8;
  int used = int(bit % 8);           // bits of `acc` already placed in the current byte
  uint32_t acc = 0;                  // the current byte's bits so far, MSB first
  int have = used;
  for (uint64_t i = lo; i < hi; ++i) {
    const uint32_t e = table[symbols[i]];
    uint32_t code = e >> 5;
    int len = int(e & 31);
    while (len > 0) {
      const int room = 8 - have;
      const int take = len < room ? len : room;
      const uint32_t part = (code >> (len - take)) & ((1u << take) - 1u);
      acc |= part << (room - take);
      have += take;
      len -= take;
      if (have == 8) {
        or_byte(byte, uint8_t(acc));
        ++byte;
        acc = 0;
        have = 0;
      }
    }
  }
  if (have > 0 && acc != 0) or_byte(byte, uint8_t(acc));  // a partial byte (OR with 0 changes nothing)
}

}  // namespace factz::cuda_detail

namespace factz::cuda_detail {

inline constexpr int kHuffmanMaxLen = detail::kHuffmanMaxCodeLength;

/// The canonical code of a blob's codebook, for decoding (docs/codec.md, "Canonical codes"):
/// a 24-bit window v starting at a code holds a code of length len iff
/// limit[len - 1] <= v < limit[len]; its symbol is sorted[offset[len] + code - first[len]].
struct HuffmanBook {
  uint32_t first[kHuffmanMaxLen + 1];
  uint32_t offset[kHuffmanMaxLen + 1];
  uint32_t limit[kHuffmanMaxLen + 1];
  int max_len;
};

/// The 24 bits of the chunk starting at bit `pos` (MSB first); bytes past the chunk read 0.
FACTZ_HD uint32_t huffman_peek24(const uint8_t* chunk, uint64_t size, uint64_t pos) {
  const uint64_t b = pos / 8;
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) w = (w << 8) | (b + uint64_t(i) < size ? chunk[b + uint64_t(i)] : 0u);
  return (w << (pos % 8)) >> 8;
}

/// Kernel body, one thread per chunk: decodes m symbols from the chunk's `size` bytes.
/// False on an invalid code, on reading past the chunk, or when the chunk has a whole
/// unused byte left (codec/huffman.cpp's rule: size == ceil(bits / 8)).
FACTZ_HD bool huffman_decode_chunk(const HuffmanBook& book, const uint16_t* sorted, const uint8_t* chunk, uint64_t size,
                                   uint16_t* out, uint64_t m) {
  uint64_t pos = 0;
  const uint64_t end = size * 8;
  for (uint64_t i = 0; i < m; ++i) {
    const uint32_t v = huffman_peek24(chunk, size, pos);
    int len = 1;
    while (len <= book.max_len && !(v < book.limit[len])) ++len;
    if (len > book.max_len) return false;
    const uint32_t code = v >> (kHuffmanMaxLen - len);
    out[i] = sorted[book.offset[len] + (code - book.first[len])];
    pos += uint64_t(len);
    if (pos > end) return false;
  }
  return (pos + 7) / 8 == size;
}

}  // namespace factz::cuda_detail
