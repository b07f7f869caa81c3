// The CRC-32C of a coded blob whose large payloads were checksummed on the device: the
// host pieces (heads, chunk tables) are checksummed here and the device pieces' CRCs are
// folded in with crc32c_combine (kernels/crc32c.hpp), so the payload bytes are never
// read on the host for the checksum. The value is format/crc32.hpp's crc32c of the blob,
// which the container stores as the section's CRC.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace factz::cuda_detail {

/// Bytes [at, at + len) of a blob, checksummed elsewhere (crc: their crc32c).
struct CrcPiece {
  uint64_t at = 0, len = 0;
  uint32_t crc = 0;
};

/// crc32c(blob), reading only the bytes outside `pieces` (increasing, not overlapping).
uint32_t blob_crc(std::span<const uint8_t> blob, std::span<const CrcPiece> pieces);

}  // namespace factz::cuda_detail
