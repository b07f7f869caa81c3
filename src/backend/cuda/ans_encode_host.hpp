// Host half of the device ANS encoder: the blob's layout around the device-coded chunks.
// The plan comes from codec/ans.hpp (ans_plan_plane), the header and plane heads from
// ans_append_header / ans_append_plane_head, so the bytes are ans_encode's.
#pragma once

#include <cstdint>
#include <vector>

#include "codec/ans.hpp"

namespace factz::cuda_detail {

/// Writes the blob of n symbols around `center` except the rANS payloads: the header, then
/// per plane its head, (rANS) the chunk table of chunk_sizes[p], room for the chunks and
/// (escapes) the escape list; payload_at[p] is where plane p's chunks go, payload_bytes[p]
/// their total.
void ans_blob_layout(uint16_t center, uint64_t n, const detail::AnsPlanePlan plans[2],
                     const std::vector<uint32_t> chunk_sizes[2], std::vector<uint8_t>& blob, uint64_t payload_at[2],
                     uint64_t payload_bytes[2]);

}  // namespace factz::cuda_detail
