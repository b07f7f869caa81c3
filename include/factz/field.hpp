// Fields as the library sees them: regular 2D grids, x fastest (index = y * nx + x),
// vector components as separate planes (structure of arrays).
#pragma once

#include <cstdint>
#include <vector>

namespace factz {

struct VectorField2D {
  int64_t nx = 0;       ///< vertices along x (fastest)
  int64_t ny = 0;       ///< vertices along y
  std::vector<float> u; ///< first component, nx * ny values
  std::vector<float> v; ///< second component, nx * ny values
  /// Missing vertices (land, gaps, fill values): empty for none, else nx * ny bytes, nonzero
  /// where the vertex has no value. A vertex with a NaN component is missing whatever the
  /// mask says (factz::missing_mask). The mesh of a field with missing vertices is the
  /// regular triangulation minus every triangle that touches one: critical points exist
  /// only in triangles with three valid vertices, and the bound applies to valid vertices.
  /// Missing vertices decode bit for bit to what was there (docs/architecture.md, "Masks").
  std::vector<uint8_t> mask{};

  int64_t size() const { return nx * ny; }
};

/// A float64 field (issue 18): the layout, the mask and its rules are those of
/// VectorField2D; only the values are doubles, and every decision on them is made on the
/// doubles themselves (the exact predicates never round a value to float).
struct VectorField2D64 {
  int64_t nx = 0;        ///< vertices along x (fastest)
  int64_t ny = 0;        ///< vertices along y
  std::vector<double> u; ///< first component, nx * ny values
  std::vector<double> v; ///< second component, nx * ny values
  /// Missing vertices: empty for none, else nx * ny bytes, nonzero where missing; a NaN
  /// component also marks its vertex missing (as in VectorField2D::mask).
  std::vector<uint8_t> mask{};

  int64_t size() const { return nx * ny; }
};

}  // namespace factz
