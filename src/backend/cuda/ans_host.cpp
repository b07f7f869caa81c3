#include "backend/cuda/ans_host.hpp"

namespace factz::cuda_detail {

Status ans_parse_for_device(std::span<const uint8_t> blob, uint16_t center, uint64_t n, AnsParsed& out) {
  FACTZ_RETURN_IF_ERROR(detail::ans_parse(blob, center, n, out));
  for (AnsPlane& p : out.planes) detail::ans_plane_byte_tables(p);
  return Status::Ok();
}

}  // namespace factz::cuda_detail
