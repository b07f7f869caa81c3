// CRC-32C (Castagnoli): the checksum of every FaCTz container header, table entry and
// section. Chosen for its error-detection strength on short messages and because it is
// the checksum of iSCSI, ext4 and many stream formats, so test vectors are plentiful.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/crc32c.hpp"  // crc32c_combine: the CRC of a concatenation from its pieces

namespace factz::detail {

/// CRC-32C of `data` (reflected polynomial 0x82F63B78, initial value and final xor
/// 0xFFFFFFFF), e.g. crc32c("123456789") == 0xE3069283.
///
/// `seed` is the CRC of the bytes that precede `data`, so checksums can be computed
/// in pieces: crc32c(ab) == crc32c(b, crc32c(a)). The default 0 is the CRC of no bytes.
/// Portable table code (slicing-by-16), independent of the host's byte order. The CUDA
/// backend computes the same value from per-block CRCs with crc32c_combine.
uint32_t crc32c(std::span<const uint8_t> data, uint32_t seed = 0);

}  // namespace factz::detail
