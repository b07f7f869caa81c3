// Checks shared by the scalar entry points.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <omp.h>

#include "factz/scalar.hpp"
#include "scalar/contour_tree_core.hpp"

namespace factz::detail {

/// invalid_argument for empty or oversized grids, a value count that does not match the
/// dimensions, or a mask that is neither empty nor one byte per vertex.
template <class T>
Status check_scalar_shape(const ScalarFieldOf<T>& f) {
  if (f.nx <= 0 || f.ny <= 0 || f.nz <= 0) return invalid_argument("scalar field has an empty dimension");
  if (f.nx > kMaxCtVertices || f.ny > kMaxCtVertices / f.nx || f.nz > kMaxCtVertices / (f.nx * f.ny))
    return invalid_argument("scalar field has more than 2^32 - 2 vertices");
  if (int64_t(f.values.size()) != f.size())
    return invalid_argument("scalar field holds " + std::to_string(f.values.size()) + " values, dimensions need " +
                            std::to_string(f.size()));
  if (!f.mask.empty() && int64_t(f.mask.size()) != f.size())
    return invalid_argument("the mask must be empty or hold nx*ny*nz = " + std::to_string(f.size()) +
                            " bytes, not " + std::to_string(f.mask.size()));
  return Status::Ok();
}

/// check_scalar_shape, then invalid_argument for an infinite value at a valid vertex (with
/// the count and the first position). Sets `missing` to missing_mask(f).
template <class T>
Status check_scalar_field(const ScalarFieldOf<T>& f, std::vector<uint8_t>& missing) {
  FACTZ_RETURN_IF_ERROR(check_scalar_shape(f));
  missing = missing_mask(f);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < f.values.size(); ++i)
    if (std::isinf(f.values[i]) && (missing.empty() || !missing[i])) {
      if (bad++ == 0) first = int64_t(i);
    }
  if (bad > 0)
    return invalid_argument(std::to_string(bad) + " infinite value(s) at valid vertices of the scalar field (first at " +
                            "index " + std::to_string(first) +
                            "; declare it as a fill value if it marks missing data)");
  return Status::Ok();
}

inline int thread_count(Policy policy, int threads) {
  if (policy == Policy::serial) return 1;
  return threads > 0 ? threads : omp_get_max_threads();
}

}  // namespace factz::detail
