// The piecewise-linear mesh of a scalar field on a regular grid (docs/toposz.md): the
// Freudenthal triangulation with the vector mesh's diagonal, and the (value, index) vertex
// order that breaks ties by Simulation of Simplicity. Shared by the contour tree, the
// TopoSZ encoder and the tests' brute-force reference. Fields hold float or double values
// (ScalarFieldOf<T>); every comparison is made in the field's own type.
#pragma once

#include <cstdint>
#include <cstring>

namespace factz::detail {

struct ScalarGrid {
  int64_t nx = 1, ny = 1, nz = 1;
  int64_t size() const { return nx * ny * nz; }
};

/// Calls visit(w) for every vertex w of the box of radius r around (x, y, z), clipped to the
/// grid, the centre included, in index order (in 2D the box is flat: z stays 0).
template <class F>
void for_each_in_box(const ScalarGrid& g, int64_t x, int64_t y, int64_t z, int64_t r, F&& visit) {
  const int64_t rz = g.nz > 1 ? r : 0;
  for (int64_t zz = z - rz < 0 ? 0 : z - rz; zz <= (z + rz < g.nz ? z + rz : g.nz - 1); ++zz)
    for (int64_t yy = y - r < 0 ? 0 : y - r; yy <= (y + r < g.ny ? y + r : g.ny - 1); ++yy)
      for (int64_t xx = x - r < 0 ? 0 : x - r; xx <= (x + r < g.nx ? x + r : g.nx - 1); ++xx)
        visit((zz * g.ny + yy) * g.nx + xx);
}

/// The link offsets of a vertex: 6 in 2D ((dy, dx) = +-(1,0), +-(0,1), +-(1,1)), 14 in 3D
/// (+-(1,0,0), +-(0,1,0), +-(0,0,1), +-(1,1,0), +-(1,0,1), +-(0,1,1), +-(1,1,1) in (z,y,x)).
struct Neighbourhood {
  int count = 0;
  int dx[14] = {}, dy[14] = {}, dz[14] = {};
  int64_t offset[14] = {};

  explicit Neighbourhood(const ScalarGrid& g) {
    static constexpr int k3[7][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    static constexpr int k2[3][3] = {{0, 1, 0}, {0, 0, 1}, {0, 1, 1}};
    const bool three = g.nz > 1;
    const int base = three ? 7 : 3;
    for (int i = 0; i < base; ++i)
      for (int s : {1, -1}) {
        const int* o = three ? k3[i] : k2[i];
        dz[count] = s * o[0];
        dy[count] = s * o[1];
        dx[count] = s * o[2];
        offset[count] = (dz[count] * g.ny + dy[count]) * g.nx + dx[count];
        ++count;
      }
  }
};

/// Calls f(w) for every neighbour w of vertex v.
template <class F>
inline void for_each_neighbour(const ScalarGrid& g, const Neighbourhood& nb, int64_t v, F&& f) {
  const int64_t x = v % g.nx, t = v / g.nx, y = t % g.ny, z = t / g.ny;
  const bool interior = x > 0 && x + 1 < g.nx && y > 0 && y + 1 < g.ny && (g.nz == 1 || (z > 0 && z + 1 < g.nz));
  for (int k = 0; k < nb.count; ++k) {
    if (!interior) {
      const int64_t xx = x + nb.dx[k], yy = y + nb.dy[k], zz = z + nb.dz[k];
      if (xx < 0 || xx >= g.nx || yy < 0 || yy >= g.ny || zz < 0 || zz >= g.nz) continue;
    }
    f(v + nb.offset[k]);
  }
}

/// A float's bits mapped so that unsigned order is float order (-0 and +0 map alike, so
/// that equal values tie and the index decides).
inline uint32_t orderable_bits(float value) {
  if (value == 0.0f) value = 0.0f;
  uint32_t b;
  std::memcpy(&b, &value, 4);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/// The same for a double: all 64 bits, so that two doubles that round to one float keep
/// their order (a float64 field is ordered as doubles, never through float).
inline uint64_t orderable_bits(double value) {
  if (value == 0.0) value = 0.0;
  uint64_t b;
  std::memcpy(&b, &value, 8);
  return (b & 0x8000000000000000u) ? ~b : (b | 0x8000000000000000u);
}

/// Simulation of Simplicity: (a, ia) below (b, ib), compared in the field's own type.
inline bool sos_less(float a, int64_t ia, float b, int64_t ib) { return a < b || (a == b && ia < ib); }
inline bool sos_less(double a, int64_t ia, double b, int64_t ib) { return a < b || (a == b && ia < ib); }

}  // namespace factz::detail
