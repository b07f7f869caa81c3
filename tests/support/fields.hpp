// Test fields: the synthetic families and the real fields of ../shared/data.
#pragma once

#include <string>
#include <vector>

#include "factz/field.hpp"

namespace factz::testing {

struct NamedField {
  std::string name;
  VectorField2D field;
};

/// Every 2D vector field of FACTZ_SHARED_DATA_DIR (empty when the folder is absent).
std::vector<NamedField> shared_vector_fields();

/// A varied synthetic set: smooth vortices, band-limited turbulence, noise, land-like
/// zero regions, odd sizes.
std::vector<NamedField> synthetic_fields();

/// Degenerate inputs: tiny grids (1x1, 1xN, Nx1, 2x2, 33x17), constants, zeros, ties,
/// values near the float limits.
std::vector<NamedField> degenerate_fields();

}  // namespace factz::testing
