// CRC-32C (Castagnoli) pieces shared by the CPU checksum (format/crc32.cpp) and the CUDA
// one (backend/cuda): the byte table's entries, the byte step, and the GF(2) rule that
// combines the CRCs of two pieces into the CRC of their concatenation, which lets a device
// checksum blocks in parallel and fold them with a reduction tree.
//
// Representation: bit-reflected, so the polynomial x^k is the bit 31 - k of a word and the
// reduction polynomial is 0x82F63B78. crc(M) is the conditioned CRC (initial value and final
// xor 0xFFFFFFFF), and crc(A B) = x^(8 |B|) * crc(A) + crc(B) (mod P): the conditioning
// terms of A's tail and B's head cancel (the same rule as zlib's crc32_combine).
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"

namespace factz::detail {

inline constexpr uint32_t kCrc32cPoly = 0x82F63B78u;  ///< Castagnoli polynomial, bit-reflected

/// Entry b of the byte table: the CRC contribution of byte b (eight reflected shifts).
FACTZ_HD constexpr uint32_t crc32c_byte_entry(uint32_t b) {
  uint32_t c = b;
  for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kCrc32cPoly : 0u);
  return c;
}

/// One byte into an unconditioned CRC register with the byte table.
FACTZ_HD uint32_t crc32c_byte_step(uint32_t reg, uint8_t byte, const uint32_t* table) {
  return (reg >> 8) ^ table[(reg ^ byte) & 0xFFu];
}

/// crc32c of n bytes with a byte table, continuing `seed` (the CRC of what precedes them).
FACTZ_HD uint32_t crc32c_bytes(const uint8_t* p, uint64_t n, uint32_t seed, const uint32_t* table) {
  uint32_t reg = ~seed;
  for (uint64_t i = 0; i < n; ++i) reg = crc32c_byte_step(reg, p[i], table);
  return ~reg;
}

/// a * b mod P for reflected polynomials a, b.
FACTZ_HD uint32_t crc32c_multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 0x80000000u; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1u) ? (b >> 1) ^ kCrc32cPoly : b >> 1;  // b * x mod P
  }
  return product;
}

/// x^(8 n) mod P: the shift over n bytes (square and multiply over the bits of n).
FACTZ_HD uint32_t crc32c_shift_of_bytes(uint64_t n) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t square = 0x00800000u;  // x^8, then x^16, x^32, ...
  for (; n != 0; n >>= 1) {
    if (n & 1u) result = crc32c_multiply(square, result);
    square = crc32c_multiply(square, square);
  }
  return result;
}

/// The CRC of A B from crc(A), crc(B) and |B| in bytes.
FACTZ_HD uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return crc32c_multiply(crc32c_shift_of_bytes(len_b), crc_a) ^ crc_b;
}

}  // namespace factz::detail
