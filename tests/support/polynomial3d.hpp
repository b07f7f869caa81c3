// A 3D vector field with saddles and sources for the golden streams of 3D vector fields
// (tests/test_speculative3d.cpp, tests/test_block3d.cpp), in double arithmetic without libm:
// the same floats on every IEEE machine.
#pragma once

#include <cstdint>

#include "factz/field3d.hpp"

namespace factz::testing {

/// u = (x - 6.3)(y - 4.6) / 8 + z / 16 - 0.2, v = (y - 5.1)(z - 3.7) / 8 - x / 32,
/// w = (z - 4.2)(x - 5.9) / 8 + (y - 4.8) / 16 on an nx x ny x nz grid.
inline VectorField3D polynomial3d(int64_t nx, int64_t ny, int64_t nz) {
  VectorField3D f;
  f.nx = nx, f.ny = ny, f.nz = nz;
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y)
      for (int64_t x = 0; x < f.nx; ++x) {
        const double X = double(x), Y = double(y), Z = double(z);
        f.u.push_back(float((X - 6.3) * (Y - 4.6) / 8.0 + Z / 16.0 - 0.2));
        f.v.push_back(float((Y - 5.1) * (Z - 3.7) / 8.0 - X / 32.0));
        f.w.push_back(float((Z - 4.2) * (X - 5.9) / 8.0 + (Y - 4.8) / 16.0));
      }
  return f;
}

}  // namespace factz::testing
