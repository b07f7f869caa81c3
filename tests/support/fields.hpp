// Test fields: the synthetic families and the real fields (bundled in tests/data, more in
// ../shared/data when it is beside the checkout).
#pragma once

#include <string>
#include <vector>

#include "factz/field.hpp"

namespace factz::testing {

struct NamedField {
  std::string name;
  VectorField2D field;
};

/// Every 2D vector field NAME_u_NXxNY.f32 / NAME_v_NXxNY.f32 of tests/data (always there)
/// and of FACTZ_SHARED_DATA_DIR (when present), each name once, sorted by name.
std::vector<NamedField> real_vector_fields();

/// The folders real_vector_fields() reads, those that exist (tests/data first).
std::vector<std::string> real_data_dirs();

/// A varied synthetic set: smooth vortices, band-limited turbulence, noise, land-like
/// zero regions, odd sizes.
std::vector<NamedField> synthetic_fields();

/// Degenerate inputs: tiny grids (1x1, 1xN, Nx1, 2x2, 33x17), constants, zeros, ties,
/// values near the float limits.
std::vector<NamedField> degenerate_fields();

}  // namespace factz::testing
