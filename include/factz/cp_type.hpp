// Critical point types (ARCHITECTURE.md section 3). A plain enum shared by the public
// API and the exact kernels; the numeric values are stable.
#pragma once

#include <cstdint>

namespace factz {

enum class CpType : uint8_t {
  saddle = 0,
  attracting_node = 1,
  repelling_node = 2,
  attracting_focus = 3,
  repelling_focus = 4,
  center = 5,
  degenerate = 6,
};
inline constexpr int kCpTypeCount = 7;

}  // namespace factz
