// Per-thread bodies of the device CRC-32C (kernels/crc32c.hpp): one thread per block of
// kCrcBlockBytes bytes computes the block's CRC with the byte table, then a reduction tree
// combines neighbours (crc32c_combine) level by level until one CRC is left: the value
// format/crc32.cpp's crc32c gives for the whole buffer.
#pragma once

#include <cstdint>

#include "kernels/crc32c.hpp"

namespace factz::cuda_detail {

inline constexpr uint64_t kCrcBlockBytes = 4096;

/// Kernel body, one thread per block j of an n-byte buffer: the block's CRC and length.
FACTZ_HD void crc_block(const uint8_t* data, uint64_t n, uint64_t j, const uint32_t* table, uint32_t* crc,
                        uint64_t* len) {
  const uint64_t lo = j * kCrcBlockBytes, hi = lo + kCrcBlockBytes < n ? lo + kCrcBlockBytes : n;
  crc[j] = detail::crc32c_bytes(data + lo, hi - lo, 0, table);
  len[j] = hi - lo;
}

/// Kernel body, one thread per output i of a tree level over `count` pieces: pieces 2i and
/// 2i + 1 combined (an odd last piece is carried over).
FACTZ_HD void crc_tree_step(const uint32_t* in_crc, const uint64_t* in_len, uint64_t count, uint64_t i,
                            uint32_t* out_crc, uint64_t* out_len) {
  if (2 * i + 1 < count) {
    out_crc[i] = detail::crc32c_combine(in_crc[2 * i], in_crc[2 * i + 1], in_len[2 * i + 1]);
    out_len[i] = in_len[2 * i] + in_len[2 * i + 1];
  } else {
    out_crc[i] = in_crc[2 * i];
    out_len[i] = in_len[2 * i];
  }
}

}  // namespace factz::cuda_detail
