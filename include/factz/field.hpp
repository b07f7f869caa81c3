// Fields as the library sees them: regular 2D grids, x fastest (index = y * nx + x),
// vector components as separate planes (structure of arrays).
#pragma once

#include <cstdint>
#include <vector>

namespace factz {

struct VectorField2D {
  int64_t nx = 0;       ///< vertices along x (fastest)
  int64_t ny = 0;       ///< vertices along y
  std::vector<float> u; ///< first component, nx * ny values
  std::vector<float> v; ///< second component, nx * ny values

  int64_t size() const { return nx * ny; }
};

}  // namespace factz
