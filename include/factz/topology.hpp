// Critical points of a 2D vector field under the exact semantics of ARCHITECTURE.md
// section 3, and the comparison of an original with a reconstructed field.
#pragma once

#include <array>
#include <optional>
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

/// The same for a float64 field: every sign decided exactly on the doubles (no value is
/// rounded to float), the same mesh, masks and Simulation of Simplicity. A field whose
/// values are all floats gets exactly the signatures of its float32 copy.
Result<std::vector<CriticalPoint>> critical_points(const VectorField2D64& f, Exec exec = {});
Result<std::vector<uint8_t>> signatures(const VectorField2D64& f, Exec exec = {});

struct Comparison {
  int64_t cp_original = 0;
  int64_t cp_decompressed = 0;
  int64_t lost = 0;          ///< P1: critical point of the original missing in its triangle
  int64_t spurious = 0;      ///< P2: critical point where the original has none
  int64_t type_changed = 0;  ///< P3: same triangle, different type
  /// Vertices missing in one field and not in the other (the masks must be equal).
  int64_t mask_mismatch = 0;
  int64_t masked_vertices = 0;  ///< vertices missing in the original
  int64_t violations() const { return lost + spurious + type_changed + mask_mismatch; }
  std::array<double, 2> max_abs_error{};  ///< per component, over valid vertices
  double rmse = 0;   ///< over both components together, valid vertices
  double nrmse = 0;  ///< rmse / value range of the original (both components, valid vertices)
  double psnr = 0;   ///< 20 log10(range / rmse); +inf when rmse == 0
  double value_range = 0;
};

/// Compares an original field with a reconstruction of the same dimensions.
Result<Comparison> compare(const VectorField2D& original, const VectorField2D& reconstructed,
                           Exec exec = {});
/// The same for float64 fields: signatures as above, errors and statistics computed from the
/// doubles (max_abs_error is |a - b| rounded to nearest once; the exact test of a bound is
/// the kernels' within_bound64).
Result<Comparison> compare(const VectorField2D64& original, const VectorField2D64& reconstructed,
                           Exec exec = {});

/// Fails with invalid_argument if the planes do not hold nx * ny values, if the mask is
/// neither empty nor nx * ny bytes, or (count and first position) if a valid vertex has an
/// infinite component. NaN marks a vertex missing (missing_mask); a missing vertex may hold
/// anything.
Status validate_field(const VectorField2D& f);
Status validate_field(const VectorField2D64& f);

/// The missing vertices of a field: its mask, plus every vertex with a NaN component.
/// Empty when no vertex is missing (the planes must hold nx * ny values).
std::vector<uint8_t> missing_mask(const VectorField2D& f);
std::vector<uint8_t> missing_mask(const VectorField2D64& f);

/// Values that mark a vertex as missing besides NaN (netCDF/CF `_FillValue`,
/// `missing_value`): a vertex is missing when its u equals fill_u or its v equals fill_v.
/// A fill value may be infinite; a NaN fill adds nothing (NaN is always missing).
struct FillValues {
  std::optional<float> u, v;
  bool any() const { return u.has_value() || v.has_value(); }
};

/// Adds to f.mask the vertices that hold a declared fill value or a NaN; returns how many
/// vertices are missing in all. With nothing missing the mask stays (or becomes) empty.
int64_t mark_missing(VectorField2D& f, const FillValues& fill);

/// Fill values of a float64 field (netCDF's NC_FILL_DOUBLE, a double `_FillValue`), compared
/// with the doubles as they are.
struct FillValues64 {
  std::optional<double> u, v;
  bool any() const { return u.has_value() || v.has_value(); }
};
int64_t mark_missing(VectorField2D64& f, const FillValues64& fill);

/// A value that looks like an undeclared fill value: magnitude 1e15 or more, or exactly
/// one of the common fill values (1e20, 9.96921e36, -9999, -3.4028235e38, 3.4028235e38,
/// -999, -1e30 ...), held by valid vertices. The most frequent such value and its count.
struct SuspectedFill {
  float value = 0;
  int64_t count = 0;
};
std::optional<SuspectedFill> suspected_fill_value(const VectorField2D& f);
/// The same for a float64 field, compared as doubles: the list above as doubles (1e20,
/// NC_FILL_DOUBLE 9.969209968386869e36, +-DBL_MAX ...) and the float values widened.
struct SuspectedFill64 {
  double value = 0;
  int64_t count = 0;
};
std::optional<SuspectedFill64> suspected_fill_value(const VectorField2D64& f);

}  // namespace factz
