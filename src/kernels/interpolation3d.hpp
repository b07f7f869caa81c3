// The 3D FaCTz-S schedule and predictor (issue 22; docs/architecture.md, "3D speculative
// mode"), the 3D counterpart of kernels/interpolation.hpp.
//
// Anchors: vertices with x, y and z all multiples of s0 (stored exactly). Then levels
// step = s0/2, ..., 1; at level s the known lattice is (x, y, z all % 2s == 0) and seven
// ordered phases fill the rest, one per nonempty set A of axes: the targets are the
// vertices whose coordinates are == s (mod 2s) on the axes of A and == 0 (mod 2s) on the
// others, in the order
//   x, y, z (edges), xy, xz, yz (faces), xyz (the cube centre)   (kPhaseAxes3D).
// Every vertex belongs to exactly one phase (or is an anchor). Two targets of one phase
// differ by a multiple of 2s >= 2 on some axis, while the vertices of a Freudenthal
// tetrahedron differ by at most 1 on every axis: targets of a phase never share a
// tetrahedron, so a phase is embarrassingly parallel. Targets of a phase are ordered
// x fastest, then y, then z; that order is the stream's order.
//
// Predictor (cubic, as the 2D one): along each axis a of A, cubic_along from the points at
// -3s, -s, +s, +3s on that axis; those points lie in the phase of A minus a, which comes
// earlier (fewer axes), or on the known lattice. The prediction is the mean of the
// two-sided interpolations (in x, y, z order: one, (a + b) / 2, or (a + b + c) / 3); with
// none two-sided (the grid's far faces), the one-sided value along the first axis of A.
//
// Chosen axes (predictor 2 of a 3D stream's meta section): a phase with two or three axes
// may name, per component, one axis a of A
// (ScheduledPhase3D::along = a + 1): its targets then take cubic_along on a alone, its
// one-sided value (the known neighbour) on the grid's far face included. A field constant
// along an axis (each component of the ABC flow is) is predicted exactly along it, on every
// target, which the mean of two or three directions is not. The writer chooses on the original values
// (streams/vector3d_modes.hpp choose_axes3d); 0 everywhere is predictor 1's rule.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/interpolation.hpp"

namespace factz::detail {

/// The phases of a level in stream order, as axis bits (1 = x, 2 = y, 4 = z).
inline constexpr uint8_t kPhaseAxes3D[7] = {1, 2, 4, 3, 5, 6, 7};  // PhaseSchedule3D::next spells them out

/// The lattice of one 3D phase: coordinates x0 + i * d (i < count_x), and so on.
struct PhaseLattice3D {
  int64_t x0 = 0, y0 = 0, z0 = 0, d = 1, count_x = 0, count_y = 0, count_z = 0;
  FACTZ_HD int64_t count() const { return count_x * count_y * count_z; }
};

/// Anchors for stride s0.
FACTZ_HD PhaseLattice3D anchor_lattice3d(int64_t nx, int64_t ny, int64_t nz, int64_t s0) {
  return {0, 0, 0, s0, lattice_count(0, s0, nx), lattice_count(0, s0, ny), lattice_count(0, s0, nz)};
}

/// Targets of the phase with axis bits `axes` at level `step`.
FACTZ_HD PhaseLattice3D phase_lattice3d(int64_t nx, int64_t ny, int64_t nz, int64_t step, uint8_t axes) {
  const int64_t x0 = (axes & 1) ? step : 0, y0 = (axes & 2) ? step : 0, z0 = (axes & 4) ? step : 0;
  return {x0, y0, z0, 2 * step, lattice_count(x0, 2 * step, nx), lattice_count(y0, 2 * step, ny),
          lattice_count(z0, 2 * step, nz)};
}

/// Vertex index of target t of lattice L (x fastest, then y, then z).
FACTZ_HD int64_t lattice_vertex3d(const PhaseLattice3D& L, int64_t nx, int64_t ny, int64_t t) {
  const int64_t i = t % L.count_x, r = t / L.count_x;
  const int64_t j = r % L.count_y, l = r / L.count_y;
  return ((L.z0 + l * L.d) * ny + (L.y0 + j * L.d)) * nx + L.x0 + i * L.d;
}

/// One phase of the 3D schedule: its level, axis bits, lattice, and the stream position of
/// its first target (targets of all phases, anchors excluded, in schedule order).
struct ScheduledPhase3D {
  int64_t step = 0;
  uint8_t axes = 1;
  PhaseLattice3D lattice;
  int64_t offset = 0;
  uint8_t along[3] = {0, 0, 0};  ///< per component: 0 the mean of the axes, a + 1 the cubic along axis a
};

/// Whether a phase has more than one axis (and so a choice of `along`).
FACTZ_HD bool several_axes(uint8_t axes) { return (axes & (axes - 1)) != 0; }

/// Whether `along` is a valid choice for a phase with axis bits `axes`: 0, or one of its
/// axes + 1 when it has more than one.
FACTZ_HD bool valid_along(uint8_t along, uint8_t axes) {
  if (along == 0) return true;
  return several_axes(axes) && along <= 3 && ((axes >> (along - 1)) & 1);
}

/// The schedule in stream order: levels s0/2, ..., 1, each with the seven phases of
/// kPhaseAxes3D. Every backend walks it the same way:
///   PhaseSchedule3D sched(nx, ny, nz, s0);
///   for (ScheduledPhase3D ph; sched.next(ph);) { ... }
class PhaseSchedule3D {
 public:
  /// `along` (host memory, or null: 0 everywhere): 3 entries per phase in schedule order,
  /// copied into each phase's ScheduledPhase3D::along.
  FACTZ_HD PhaseSchedule3D(int64_t nx, int64_t ny, int64_t nz, int64_t s0, const uint8_t* along = nullptr)
      : nx_(nx), ny_(ny), nz_(nz), step_(s0 / 2), along_(along) {}
  /// The next phase into `out`; false when the schedule is done.
  FACTZ_HD bool next(ScheduledPhase3D& out) {
    if (step_ < 1) return false;
    out.step = step_;
    // kPhaseAxes3D's entries, as a switch: device code cannot index a host constant array.
    switch (phase_) {
      case 0: out.axes = 1; break;
      case 1: out.axes = 2; break;
      case 2: out.axes = 4; break;
      case 3: out.axes = 3; break;
      case 4: out.axes = 5; break;
      case 5: out.axes = 6; break;
      default: out.axes = 7; break;
    }
    out.lattice = phase_lattice3d(nx_, ny_, nz_, step_, out.axes);
    out.offset = offset_;
    offset_ += out.lattice.count();
    for (int c = 0; c < 3; ++c) out.along[c] = along_ ? along_[3 * index_ + c] : uint8_t(0);
    ++index_;
    if (++phase_ == 7) {
      phase_ = 0;
      step_ /= 2;
    }
    return true;
  }

 private:
  int64_t nx_, ny_, nz_, step_;
  int phase_ = 0;
  int64_t offset_ = 0;
  const uint8_t* along_;
  int64_t index_ = 0;
};

/// Phases of the schedule (empty ones included): 7 per level, levels s0 / 2, ..., 1.
FACTZ_HD int64_t phase_count3d(int64_t s0) {
  int64_t levels = 0;
  for (int64_t s = s0 / 2; s >= 1; s /= 2) ++levels;
  return 7 * levels;
}

/// The cubic along each axis a of `axes` at target (x, y, z) of level `step` (into p[a], with
/// two[a] whether it is two-sided; untouched for the other axes), and the mean of the file
/// comment as the result: predict3d's rule for along 0.
template <class T>
FACTZ_HD T cubics3d(const T* f, int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z, int64_t step,
                    uint8_t axes, T p[3], bool two[3]) {
  const int64_t k = (z * ny + y) * nx + x;
  const int64_t pos[3] = {x, y, z}, len[3] = {nx, ny, nz}, stride[3] = {1, nx, nx * ny};
  T sum = T(0), one_sided = T(0);
  int two_sided = 0;
  bool have_one_sided = false;
  for (int a = 0; a < 3; ++a) {
    if (!((axes >> a) & 1)) continue;
    p[a] = cubic_along(f, k, pos[a], len[a], step, stride[a], two[a]);
    if (two[a]) {
      sum = two_sided == 0 ? p[a] : sum + p[a];
      ++two_sided;
    } else if (!have_one_sided) {
      one_sided = p[a];
      have_one_sided = true;
    }
  }
  if (two_sided == 0) return one_sided;
  if (two_sided == 1) return sum;
  if (two_sided == 2) return sum * T(0.5);
  return sum / T(3);
}

/// The cubic prediction of target (x, y, z) of the phase with axis bits `axes` at level
/// `step` from the current values `f`, with `along` the component's choice (the file comment
/// gives the rule; valid_along holds). Plain T arithmetic in one fixed order: the writer and
/// every decoder compute the same bits.
template <class T>
FACTZ_HD T predict3d(const T* f, int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z, int64_t step,
                     uint8_t axes, uint8_t along) {
  if (along != 0) {  // one axis, spelled out (no arrays indexed at run time)
    const int64_t k = (z * ny + y) * nx + x;
    bool two;
    if (along == 1) return cubic_along(f, k, x, nx, step, int64_t{1}, two);
    if (along == 2) return cubic_along(f, k, y, ny, step, nx, two);
    return cubic_along(f, k, z, nz, step, nx * ny, two);
  }
  T p[3];
  bool two[3];
  return cubics3d(f, nx, ny, nz, x, y, z, step, axes, p, two);
}

}  // namespace factz::detail
