// Checks shared by the scalar entry points.
#pragma once

#include <cmath>
#include <string>

#include <omp.h>

#include "factz/scalar.hpp"
#include "scalar/contour_tree_core.hpp"

namespace factz::detail {

/// invalid_argument for empty or oversized grids, a size mismatch, or NaN/Inf (with the
/// count and the first position).
inline Status check_scalar_field(const ScalarField& f) {
  if (f.nx <= 0 || f.ny <= 0 || f.nz <= 0) return invalid_argument("scalar field has an empty dimension");
  if (f.nx > kMaxCtVertices || f.ny > kMaxCtVertices / f.nx || f.nz > kMaxCtVertices / (f.nx * f.ny))
    return invalid_argument("scalar field has more than 2^32 - 2 vertices");
  if (int64_t(f.values.size()) != f.size())
    return invalid_argument("scalar field holds " + std::to_string(f.values.size()) + " values, dimensions need " +
                            std::to_string(f.size()));
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < f.values.size(); ++i)
    if (!std::isfinite(f.values[i])) {
      if (bad++ == 0) first = int64_t(i);
    }
  if (bad > 0)
    return invalid_argument(std::to_string(bad) + " NaN/Inf values in the scalar field (first at index " +
                            std::to_string(first) + ")");
  return Status::Ok();
}

inline int thread_count(Policy policy, int threads) {
  if (policy == Policy::serial) return 1;
  return threads > 0 ? threads : omp_get_max_threads();
}

}  // namespace factz::detail
