#include "backend/cuda/ans_encode_host.hpp"

#include "util/byte_io.hpp"

namespace factz::cuda_detail {

void ans_blob_layout(uint16_t center, uint64_t n, const detail::AnsPlanePlan plans[2],
                     const std::vector<uint32_t> chunk_sizes[2], std::vector<uint8_t>& blob, uint64_t payload_at[2],
                     uint64_t payload_bytes[2]) {
  blob.clear();
  detail::ans_append_header(center, n, blob, detail::ans_blob_version(plans[0], plans[1]));
  for (int p = 0; p < 2; ++p) {
    detail::ans_append_plane_head(plans[p], blob);
    payload_bytes[p] = 0;
    if (detail::ans_plane_is_rans(plans[p].mode))
      for (uint32_t size : chunk_sizes[p]) {
        detail::put_le(blob, size, 4);
        payload_bytes[p] += size;
      }
    payload_at[p] = blob.size();
    blob.resize(blob.size() + payload_bytes[p]);
    detail::ans_append_plane_tail(plans[p], blob);
  }
}

}  // namespace factz::cuda_detail
