// Critical points of a 2D vector field under the exact semantics of ARCHITECTURE.md
// section 3, and the comparison of an original with a reconstructed field.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "factz/cp_type.hpp"
#include "factz/field.hpp"
#include "factz/status.hpp"

namespace factz {

/// "saddle", "attracting_node", "repelling_node", "attracting_focus", "repelling_focus",
/// "center", "degenerate".
const char* cp_type_name(CpType t);

struct CriticalPoint {
  int64_t triangle = 0;  ///< triangle id = 2 * (row * (nx - 1) + column) + t
  int64_t row = 0;       ///< cell row i
  int64_t column = 0;    ///< cell column j
  /// Barycentric coordinates of the zero w.r.t. the triangle's vertices in contract
  /// order (for display only; computed in double, not part of any decision).
  std::array<double, 3> mu{};
  CpType type{};
};

/// Execution settings shared by the analysis functions. threads <= 0: OpenMP default.
struct Exec {
  int threads = 0;
};

/// All critical points, ordered by triangle id (independent of the thread count).
Result<std::vector<CriticalPoint>> critical_points(const VectorField2D& f, Exec exec = {});

/// Per-triangle signature bytes (0: none, 1 + CpType): the primitive behind everything.
Result<std::vector<uint8_t>> signatures(const VectorField2D& f, Exec exec = {});

struct Comparison {
  int64_t cp_original = 0;
  int64_t cp_decompressed = 0;
  int64_t lost = 0;          ///< P1: critical point of the original missing in its triangle
  int64_t spurious = 0;      ///< P2: critical point where the original has none
  int64_t type_changed = 0;  ///< P3: same triangle, different type
  int64_t violations() const { return lost + spurious + type_changed; }
  std::array<double, 2> max_abs_error{};  ///< per component
  double rmse = 0;   ///< over both components together
  double nrmse = 0;  ///< rmse / value range of the original (both components)
  double psnr = 0;   ///< 20 log10(range / rmse); +inf when rmse == 0
  double value_range = 0;
};

/// Compares an original field with a reconstruction of the same dimensions.
Result<Comparison> compare(const VectorField2D& original, const VectorField2D& reconstructed,
                           Exec exec = {});

/// Fails with invalid_argument (count and first position) if a value is NaN or Inf,
/// or if the planes do not hold nx * ny values.
Status validate_field(const VectorField2D& f);

}  // namespace factz
