// Device decoding of the ANS byte-plane blob (docs/codec.md, "ANS byte-plane blob"): the
// host parses and checks the planes' heads, context tables and chunk tables
// (ans_host.hpp); each rANS chunk is then one thread running its lanes in the normative
// step-major, lane-minor order with the lane steps of kernels/rans.hpp, with every check
// of codec/ans_decode.cpp's decoder (states in range, no word past the chunk, all words read,
// every lane back at L).
#pragma once

#include <cstdint>

#include "kernels/rans.hpp"

namespace factz::cuda_detail {

FACTZ_HD uint32_t ans_load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// One decoding step of a lane: false when its word would lie past the chunk.
FACTZ_HD bool ans_lane_step(const uint32_t* entries, const uint8_t* values, uint32_t& x, uint32_t& context,
                            uint64_t& w, uint64_t size, const uint8_t* chunk, uint8_t& out) {
  const uint32_t i = detail::rans_decode_index(context, x);
  const uint32_t e = entries[i];
  out = values[i];
  context = detail::rans_entry_next_context(e);
  x = detail::rans_decode_advance(x, e);
  if (detail::rans_decode_needs_word(x)) {
    if (size - w < 2) return false;
    x = detail::rans_decode_take_word(x, uint16_t(chunk[w] | chunk[w + 1] << 8));
    w += 2;
  }
  return true;
}

/// Kernel body, one thread per chunk of a rANS plane: the m plane bytes of the chunk whose
/// `size` bytes start at `chunk`. entries/values: the plane's decoder tables (contexts x
/// 4096); lanes: the plane's lane count; first_context: the context of byte 0.
FACTZ_HD bool ans_decode_chunk_bytes(const uint32_t* entries, const uint8_t* values, uint32_t lanes,
                                     uint32_t first_context, const uint8_t* chunk, uint64_t size, uint8_t* out,
                                     uint64_t m) {
  const uint32_t lc = uint32_t(m < lanes ? m : lanes);
  if (size < 4 * uint64_t(lc)) return false;
  const uint64_t q = m / lc, r = m % lc;
  uint32_t x[detail::kRansLanes], context[detail::kRansLanes];
  for (uint32_t l = 0; l < lc; ++l) {
    x[l] = ans_load_u32(chunk + 4 * l);
    if (x[l] < detail::kRansLow) return false;
    context[l] = first_context;
  }
  uint64_t w = 4 * uint64_t(lc);
  for (uint64_t t = 0; t <= q; ++t) {
    const uint32_t active = t < q ? lc : uint32_t(r);
    for (uint32_t l = 0; l < active; ++l) {
      uint8_t b;
      if (!ans_lane_step(entries, values, x[l], context[l], w, size, chunk, b)) return false;
      out[detail::rans_lane_begin(m, lc, l) + t] = b;
    }
  }
  for (uint32_t l = 0; l < lc; ++l)
    if (x[l] != detail::kRansLow) return false;
  return w == size;
}

/// Kernel body, one thread per symbol: the 16-bit symbol from its two plane bytes.
FACTZ_HD uint16_t ans_symbol(uint8_t lo, uint8_t hi, uint16_t center) {
  return detail::ans_unzigzag(uint16_t(uint32_t(hi) << 8 | lo), center);
}

}  // namespace factz::cuda_detail
