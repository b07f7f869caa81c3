// What the ANS encoder (ans_encode.cpp) and decoder (ans_decode.cpp) share beyond the
// library-facing codec/ans.hpp: the format's limits and the context table kinds of the
// blob layout in docs/codec.md. Internal to src/codec.
#pragma once

#include <algorithm>
#include <cstdint>

#include "codec/ans.hpp"
#include "kernels/rans.hpp"

namespace factz::detail::ans_format {

inline constexpr int kMaxLanes = kRansLanes;
inline constexpr uint32_t kScale = kRansScale;
// Plane modes (the first byte of a plane) and context table kinds.
inline constexpr uint8_t kPlaneConstant = kAnsPlaneConstant;
inline constexpr uint8_t kPlaneRans = kAnsPlaneRans;
inline constexpr uint8_t kPlaneSparse = kAnsPlaneSparse;
inline constexpr uint8_t kPlaneEscapes = kAnsPlaneEscapes;
inline constexpr uint8_t kTableSingle = 0;
inline constexpr uint8_t kTableFrequencies = 1;

// Lanes (and stored states) of a chunk of m symbols in a plane coded with `lanes` lanes.
inline uint32_t chunk_lanes(uint64_t m, uint32_t lanes) {
  return static_cast<uint32_t>(std::min<uint64_t>(m, lanes));
}

using ContextMap = AnsContextMap;

}  // namespace factz::detail::ans_format
