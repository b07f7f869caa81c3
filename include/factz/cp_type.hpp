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

/// Types of a 3D vector field's critical points (issue 22; docs/architecture.md, "3D vector
/// fields"), from the eigenvalues of the Jacobian: how many have a positive real part
/// (unstable directions) and whether two are a complex pair. saddle_2_stable: two stable
/// directions and one unstable (a "1:2" saddle); saddle_2_unstable: the reverse. center:
/// a pair on the imaginary axis; degenerate: det J = 0.
enum class CpType3 : uint8_t {
  attracting_node = 0,
  repelling_node = 1,
  saddle_2_stable = 2,
  saddle_2_unstable = 3,
  attracting_spiral = 4,
  repelling_spiral = 5,
  spiral_saddle_2_stable = 6,
  spiral_saddle_2_unstable = 7,
  center = 8,
  degenerate = 9,
};
inline constexpr int kCpType3Count = 10;

}  // namespace factz
