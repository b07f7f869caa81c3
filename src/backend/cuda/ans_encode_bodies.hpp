// Per-symbol and per-lane bodies of the device ANS encoder (docs/codec.md, "ANS byte-plane
// coder"). The plan (lanes, context map, tables, sparse or not) is made on the host by
// codec/ans.hpp's ans_plan_plane from pair counts the device takes; each rANS chunk is then
// coded by a group of threads, one per lane, stepping backwards in lockstep: a lane's step is
// kernels/rans_encoder.hpp's rans_encode_lane_step (the CPU encoder's own step) and the
// step's words are placed by their rank in the group's ballot, which is exactly the CPU's
// order (lanes from the last to the first within a step).
#pragma once

#include <cstdint>

#include "codec/ans.hpp"
#include "kernels/rans_encoder.hpp"

namespace factz::cuda_detail {

inline constexpr uint64_t kAnsChunk = uint64_t{1} << detail::kAnsChunkLog2;
/// Pair counts with previous and current byte below this go to a block's shared counters.
inline constexpr uint32_t kAnsPairWindow = 64;

/// Kernel body, one thread per symbol i: its zig-zag code's low and high plane bytes.
FACTZ_HD void ans_split_symbol(const uint16_t* sym, uint64_t i, uint16_t center, uint8_t* lo, uint8_t* hi) {
  const uint16_t z = detail::ans_zigzag(sym[i], center);
  lo[i] = uint8_t(z);
  hi[i] = uint8_t(z >> 8);
}

/// The pair (previous byte, byte) of position i of a plane as counted for the plan:
/// previous byte 0 at every chunk start. Returns prev * 256 + byte.
FACTZ_HD uint32_t ans_pair_key(const uint8_t* b, uint64_t i) {
  const uint32_t prev = (i & (kAnsChunk - 1)) == 0 ? 0u : b[i - 1];
  return prev * 256u + b[i];
}

/// One lane of one chunk of a rANS plane of n symbols planned with plan_lanes lanes.
struct AnsLane {
  uint64_t begin = 0;  ///< the lane's first symbol in the plane
  uint64_t steps = 0;  ///< its symbols (0: no such lane)
  uint32_t lanes = 0;  ///< the chunk's lanes
};

/// Lane l of chunk k (its thread's setup).
FACTZ_HD AnsLane ans_lane_of(uint64_t n, uint32_t plan_lanes, uint64_t k, uint32_t l) {
  AnsLane a;
  const uint64_t first = k * kAnsChunk;
  const uint64_t m = n - first < kAnsChunk ? n - first : kAnsChunk;
  a.lanes = uint32_t(m < plan_lanes ? m : plan_lanes);
  if (l >= a.lanes) return a;
  a.begin = first + detail::rans_lane_begin(m, a.lanes, l);
  a.steps = detail::rans_lane_steps(m, a.lanes, l);
  return a;
}

/// Threads per chunk: the plan's lanes rounded up to a power of two (a divisor of 32).
FACTZ_HD uint32_t ans_group_size(uint32_t plan_lanes) {
  uint32_t g = 1;
  while (g < plan_lanes) g *= 2;
  return g;
}

/// Scratch bytes per chunk: room for the most states and one word per symbol.
inline constexpr uint64_t kAnsChunkScratch = 4 * uint64_t(detail::kRansLanes) + 2 * kAnsChunk;

}  // namespace factz::cuda_detail
