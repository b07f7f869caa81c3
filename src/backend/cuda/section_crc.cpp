#include "backend/cuda/section_crc.hpp"

#include "format/crc32.hpp"

namespace factz::cuda_detail {

uint32_t blob_crc(std::span<const uint8_t> blob, std::span<const CrcPiece> pieces) {
  uint32_t crc = 0;
  uint64_t pos = 0;
  for (const CrcPiece& p : pieces) {
    crc = detail::crc32c(blob.subspan(size_t(pos), size_t(p.at - pos)), crc);
    crc = detail::crc32c_combine(crc, p.crc, p.len);
    pos = p.at + p.len;
  }
  return detail::crc32c(blob.subspan(size_t(pos)), crc);
}

}  // namespace factz::cuda_detail
