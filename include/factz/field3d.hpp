// 3D vector fields as the library sees them (issue 22; docs/architecture.md, "3D vector
// fields"): regular grids, x fastest (index = (z * ny + y) * nx + x), the components u, v,
// w as separate planes (structure of arrays), and the missing-vertex rules of the 2D fields.
#pragma once

#include <cstdint>
#include <vector>

namespace factz {

/// A float32 3D vector field. The analysis (factz/topology3d.hpp) decides every critical
/// point exactly on these floats.
struct VectorField3D {
  int64_t nx = 0;       ///< vertices along x (fastest)
  int64_t ny = 0;       ///< vertices along y
  int64_t nz = 0;       ///< vertices along z (slowest)
  std::vector<float> u; ///< first component, nx * ny * nz values
  std::vector<float> v; ///< second component, nx * ny * nz values
  std::vector<float> w; ///< third component, nx * ny * nz values
  /// Missing vertices: empty for none, else nx * ny * nz bytes, nonzero where the vertex has
  /// no value. A vertex with a NaN component is missing whatever the mask says
  /// (factz::missing_mask). The mesh of a field with missing vertices is the Freudenthal
  /// tetrahedralization minus every tetrahedron that touches one: critical points exist only
  /// in tetrahedra with four valid vertices, and error bounds apply to valid vertices.
  std::vector<uint8_t> mask{};

  /// Vertices; meaningful once the dimensions are validated (validate_field: no overflow).
  int64_t size() const { return nx * ny * nz; }
};

/// A float64 3D vector field: the layout, the mask and its rules are those of VectorField3D;
/// only the values are doubles, and every decision on them is made on the doubles themselves
/// (src/kernels/tet64.hpp: no value is ever rounded to float).
struct VectorField3D64 {
  int64_t nx = 0;        ///< vertices along x (fastest)
  int64_t ny = 0;        ///< vertices along y
  int64_t nz = 0;        ///< vertices along z (slowest)
  std::vector<double> u; ///< first component, nx * ny * nz values
  std::vector<double> v; ///< second component, nx * ny * nz values
  std::vector<double> w; ///< third component, nx * ny * nz values
  /// Missing vertices: empty for none, else nx * ny * nz bytes, nonzero where missing; a NaN
  /// component also marks its vertex missing (as in VectorField3D::mask).
  std::vector<uint8_t> mask{};

  /// Vertices; meaningful once the dimensions are validated (validate_field: no overflow).
  int64_t size() const { return nx * ny * nz; }
};

}  // namespace factz
