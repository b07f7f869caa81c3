// Critical points of a 3D vector field under the exact semantics of docs/architecture.md,
// "3D vector fields (issue 22): the contract" (Freudenthal tetrahedra, Simulation of
// Simplicity, exact types), and the comparison of an original with a reconstructed field.
// The 2D counterparts are in factz/topology.hpp; Exec is shared with them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "factz/cp_type.hpp"
#include "factz/field3d.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"

namespace factz {

/// "attracting_node", "repelling_node", "saddle_2_stable", "saddle_2_unstable",
/// "attracting_spiral", "repelling_spiral", "spiral_saddle_2_stable",
/// "spiral_saddle_2_unstable", "center", "degenerate".
const char* cp_type3_name(CpType3 t);

struct CriticalPoint3D {
  /// Tetrahedron id = 6 * ((z * (ny - 1) + y) * (nx - 1) + x) + t.
  int64_t tetrahedron = 0;
  int64_t x = 0;  ///< corner of the tetrahedron's cube (its smallest vertex)
  int64_t y = 0;
  int64_t z = 0;
  int t = 0;      ///< the tetrahedron in its cube (0..5: the axis order, kTetAxes)
  /// Barycentric coordinates of the zero w.r.t. the tetrahedron's vertices in path order
  /// (a, a + e_p, a + e_p + e_q, a + (1, 1, 1)); for display only (computed in double, not
  /// part of any decision).
  std::array<double, 4> mu{};
  CpType3 type{};
};

/// Fails with invalid_argument if a dimension is not positive, if nx * ny * nz exceeds
/// 2^40, if a plane does not hold nx * ny * nz values, if the mask is neither empty nor
/// nx * ny * nz bytes, or (count and first position) if a valid vertex has an infinite
/// component. NaN marks a vertex missing; a missing vertex may hold anything.
Status validate_field(const VectorField3D& f);

/// The missing vertices of a field: its mask, plus every vertex with a NaN component.
/// Empty when no vertex is missing (the planes must hold nx * ny * nz values).
std::vector<uint8_t> missing_mask(const VectorField3D& f);

/// Values that mark a vertex of a 3D field as missing besides NaN (a netCDF/CF `_FillValue`):
/// a vertex is missing when its u equals u, its v equals v or its w equals w (the CLI's
/// --fill V declares V for all three). A fill value may be infinite; a NaN fill adds nothing.
struct FillValues3D {
  std::optional<float> u, v, w;
  bool any() const { return u.has_value() || v.has_value() || w.has_value(); }
};

/// Adds to f.mask the vertices that hold a declared fill value or a NaN; returns how many
/// vertices are missing in all. With nothing missing the mask stays (or becomes) empty.
int64_t mark_missing(VectorField3D& f, const FillValues3D& fill);

/// A value of a valid vertex that looks like an undeclared fill value, as for 2D fields
/// (factz/topology.hpp): magnitude 1e15 or more, or one of the common fill values, in any of
/// the three components. The most frequent such value and its count.
std::optional<SuspectedFill> suspected_fill_value(const VectorField3D& f);

/// Per-tetrahedron signature bytes (0: none, 1 + CpType3), in tetrahedron order: the
/// primitive behind everything. Tetrahedra touching a missing vertex get 0. A grid with a
/// dimension below 2 has no tetrahedra (an empty vector).
Result<std::vector<uint8_t>> signatures(const VectorField3D& f, Exec exec = {});

/// All critical points, ordered by tetrahedron id (independent of the thread count).
Result<std::vector<CriticalPoint3D>> critical_points(const VectorField3D& f, Exec exec = {});

struct Comparison3D {
  int64_t cp_original = 0;
  int64_t cp_decompressed = 0;
  int64_t lost = 0;          ///< P1: critical point of the original missing in its tetrahedron
  int64_t spurious = 0;      ///< P2: critical point where the original has none
  int64_t type_changed = 0;  ///< P3: same tetrahedron, different type
  /// Vertices missing in one field and not in the other (the masks must be equal).
  int64_t mask_mismatch = 0;
  int64_t masked_vertices = 0;  ///< vertices missing in the original
  int64_t violations() const { return lost + spurious + type_changed + mask_mismatch; }
  std::array<double, 3> max_abs_error{};  ///< per component (u, v, w), over vertices valid in both
  double rmse = 0;   ///< over the three components together, vertices valid in both
  double nrmse = 0;  ///< rmse / value range of the original (all components, valid vertices)
  double psnr = 0;   ///< 20 log10(range / rmse); +inf when rmse == 0
  double value_range = 0;
};

/// Compares an original field with a reconstruction of the same dimensions: P1/P2/P3 per
/// tetrahedron from the exact signatures (each field on its own mesh), and pointwise errors.
Result<Comparison3D> compare(const VectorField3D& original, const VectorField3D& reconstructed,
                             Exec exec = {});

// ---- float64 3D vector fields -------------------------------------------------------------
// The same contract, rules and results as for VectorField3D, every sign decided exactly on
// the doubles (src/kernels/tet64.hpp). For a field whose doubles are all floats the
// signatures equal those of the float32 field.

Status validate_field(const VectorField3D64& f);
std::vector<uint8_t> missing_mask(const VectorField3D64& f);

/// Fill values of a float64 3D field, compared with the doubles as they are.
struct FillValues3D64 {
  std::optional<double> u, v, w;
  bool any() const { return u.has_value() || v.has_value() || w.has_value(); }
};
int64_t mark_missing(VectorField3D64& f, const FillValues3D64& fill);
std::optional<SuspectedFill64> suspected_fill_value(const VectorField3D64& f);

Result<std::vector<uint8_t>> signatures(const VectorField3D64& f, Exec exec = {});
Result<std::vector<CriticalPoint3D>> critical_points(const VectorField3D64& f, Exec exec = {});
/// Pointwise statistics in double (the differences rounded: statistics, not decisions).
Result<Comparison3D> compare(const VectorField3D64& original, const VectorField3D64& reconstructed,
                             Exec exec = {});

}  // namespace factz
