// The triangulation of a regular grid (ARCHITECTURE.md section 3).
// Cell (i, j) (row i, column j) is cut along (i,j)-(i+1,j+1) into
//   T0 = {(i,j), (i+1,j), (i+1,j+1)} and T1 = {(i,j), (i,j+1), (i+1,j+1)},
// triangle id = 2 * (i * (nx - 1) + j) + t. Vertex index = row * nx + column.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"

namespace factz::detail {

struct Grid2D {
  int64_t nx = 0;  ///< vertices per row (x, fastest)
  int64_t ny = 0;  ///< rows (y)

  FACTZ_HD int64_t vertex_count() const { return nx * ny; }
  FACTZ_HD int64_t cell_count() const {
    return (nx > 1 && ny > 1) ? (nx - 1) * (ny - 1) : 0;
  }
  FACTZ_HD int64_t triangle_count() const { return 2 * cell_count(); }
};

/// The three vertex indices of triangle `tri`, in the order of the contract (k = 0, 1, 2).
FACTZ_HD void triangle_vertices(const Grid2D& g, int64_t tri, int64_t out[3]) {
  const int64_t cell = tri >> 1;
  const int64_t i = cell / (g.nx - 1);
  const int64_t j = cell - i * (g.nx - 1);
  const int64_t v00 = i * g.nx + j;
  out[0] = v00;
  out[1] = (tri & 1) ? v00 + 1 : v00 + g.nx;
  out[2] = v00 + g.nx + 1;
}

/// Triangles incident to vertex (row i, column j): up to six ids written to `out`;
/// returns how many. The order is fixed (and part of no format).
FACTZ_HD int incident_triangles(const Grid2D& g, int64_t i, int64_t j, int64_t out[6]) {
  int n = 0;
  const int64_t cw = g.nx - 1;
  // Cell (i-1, j-1): vertex is its (i+1, j+1) corner, in both T0 and T1.
  if (i > 0 && j > 0) {
    const int64_t c = (i - 1) * cw + (j - 1);
    out[n++] = 2 * c;
    out[n++] = 2 * c + 1;
  }
  // Cell (i-1, j): vertex is its (i+1, j) corner, in T0 only.
  if (i > 0 && j < g.nx - 1) out[n++] = 2 * ((i - 1) * cw + j);
  // Cell (i, j-1): vertex is its (i, j+1) corner, in T1 only.
  if (i < g.ny - 1 && j > 0) out[n++] = 2 * (i * cw + (j - 1)) + 1;
  // Cell (i, j): vertex is its (i, j) corner, in T0 and T1.
  if (i < g.ny - 1 && j < g.nx - 1) {
    const int64_t c = i * cw + j;
    out[n++] = 2 * c;
    out[n++] = 2 * c + 1;
  }
  return n;
}

}  // namespace factz::detail
