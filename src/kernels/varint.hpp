// LEB128 varints and the zig-zag map, the integer encodings of every list section
// (docs/format.md). One definition for the host writers and readers (util/byte_io.hpp) and
// the CUDA list bodies, which write each entry at a scanned offset.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"

namespace factz::detail {

/// Zig-zag map of a signed integer onto an unsigned one (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...),
/// so that small magnitudes of either sign make short varints.
FACTZ_HD uint64_t zigzag_encode(int64_t x) { return (uint64_t(x) << 1) ^ uint64_t(x >> 63); }
FACTZ_HD int64_t zigzag_decode(uint64_t z) { return int64_t(z >> 1) ^ -int64_t(z & 1); }

/// Bytes of x as an unsigned LEB128 varint (7 bits per byte, low groups first).
FACTZ_HD int varint_length(uint64_t x) {
  int n = 1;
  while (x >= 0x80) {
    x >>= 7;
    ++n;
  }
  return n;
}

/// Writes x as an unsigned LEB128 varint at dst; returns the bytes written.
FACTZ_HD int put_varint_at(uint8_t* dst, uint64_t x) {
  int n = 0;
  while (x >= 0x80) {
    dst[n++] = uint8_t(x | 0x80);
    x >>= 7;
  }
  dst[n++] = uint8_t(x);
  return n;
}

}  // namespace factz::detail
