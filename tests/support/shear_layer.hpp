// The central crop of the bundled OpenFOAM shear layer (tests/data, 512 x 512): a smooth
// real field, small enough for fast tests. Header-only, so that every test binary (the GPU
// model tests link no other test support) can use it. FACTZ_TEST_DATA_DIR comes from the
// test's CMake target.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "factz/field.hpp"
#include "factz/io.hpp"

namespace factz::testing {

/// The central side x side vertices of foam_shearlayer_t0.75 (side <= 512); a gtest failure
/// and an empty field when the bundled files cannot be read.
inline VectorField2D shear_layer_crop(int64_t side) {
  const std::string base = std::string(FACTZ_TEST_DATA_DIR) + "/foam_shearlayer_t0.75_";
  auto f = read_vector_field(base + "u_512x512.f32", base + "v_512x512.f32", 512, 512);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  if (!f.ok()) return {};
  VectorField2D c{side, side, {}, {}};
  const int64_t o = (512 - side) / 2;
  for (int64_t y = 0; y < side; ++y)
    for (int64_t x = 0; x < side; ++x) {
      c.u.push_back(f->u[size_t((o + y) * 512 + o + x)]);
      c.v.push_back(f->v[size_t((o + y) * 512 + o + x)]);
    }
  return c;
}

}  // namespace factz::testing
