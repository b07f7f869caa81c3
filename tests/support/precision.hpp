// A field in the other precision, for the tests that compare float32 and float64 paths
// (tests/test_exact64_topology.cpp, tests/test_float64_codec.cpp).
#pragma once

#include "factz/field.hpp"

namespace factz::testing {

/// The same field widened to double (every float is a double: exact).
inline VectorField2D64 to_double(const VectorField2D& f) {
  VectorField2D64 g{f.nx, f.ny, {}, {}, f.mask};
  g.u.assign(f.u.begin(), f.u.end());
  g.v.assign(f.v.begin(), f.v.end());
  return g;
}

/// The same field rounded to float (to nearest).
inline VectorField2D to_float(const VectorField2D64& f) {
  VectorField2D g{f.nx, f.ny, {}, {}, f.mask};
  for (double x : f.u) g.u.push_back(float(x));
  for (double x : f.v) g.v.push_back(float(x));
  return g;
}

}  // namespace factz::testing
