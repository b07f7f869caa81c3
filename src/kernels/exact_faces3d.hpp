// Which vertices of a 3D block are stored exactly because they lie on a face it shares with
// a neighbouring block (docs/multiblock.md, "3D blocks"): the 3D counterpart of the 2D
// exact_edges rows and columns. Options::exact_edges holds the face bits for a 3D field;
// every backend asks this one function, so a face vertex is exact in every mode.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"

namespace factz::detail {

/// Face bits of Options::exact_edges for a 3D field (the first four are the 2D EdgeBits):
/// 1 x = 0, 2 x = nx - 1, 4 y = 0, 8 y = ny - 1, 16 z = 0, 32 z = nz - 1.
inline constexpr uint8_t kExactFacesAll3D = 63;

/// Whether vertex (x, y, z) lies on one of the faces named by `faces`.
FACTZ_HD bool on_exact_face(int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz, uint8_t faces) {
  return ((faces & 1) && x == 0) || ((faces & 2) && x == nx - 1) || ((faces & 4) && y == 0) ||
         ((faces & 8) && y == ny - 1) || ((faces & 16) && z == 0) || ((faces & 32) && z == nz - 1);
}

}  // namespace factz::detail
