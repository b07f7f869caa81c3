// FaCTz-S schedule and predictors (ARCHITECTURE.md section 4, paper Algorithm 1).
//
// Anchors: vertices with x % s0 == 0 and y % s0 == 0, stored exactly. Then levels
// step = s0/2, ..., 1; at level s the known lattice is (x % 2s == 0, y % 2s == 0) and three
// ordered phases fill the rest:
//   horizontal: x % 2s == s, y % 2s == 0   (interpolation along x)
//   vertical:   x % 2s == 0, y % 2s == s   (interpolation along y)
//   center:     x % 2s == s, y % 2s == s
// Every vertex belongs to exactly one phase (or is an anchor). Two targets of one phase
// are never neighbours in the mesh, so they share no triangle and can be decided in
// parallel. Targets of a phase are ordered row-major; that order is the stream's order.
//
// Two predictors (the stream's meta section says which, docs/format.md):
//   linear (format versions up to 6): horizontal (L + R) / 2 (L only at the right edge),
//     vertical (T + B) / 2 (T only at the bottom edge), center T + L - TL.
//   cubic (issue 20): along the phase's direction from the known points at -3s, -s, +s, +3s
//     (cubic_along); the center phase averages the cubic along x and the cubic along y
//     (center_cubic). At the center phase (x +- s, y), (x +- 3s, y) are vertical targets and
//     (x, y +- s), (x, y +- 3s) horizontal ones, all already known.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"
#include "kernels/quantizer.hpp"  // finite_value

namespace factz::detail {

enum class Phase : uint8_t { horizontal = 0, vertical = 1, center = 2 };

inline constexpr int64_t kDefaultAnchorStride = 4096;
inline constexpr int64_t kMaxAnchorStride = 4096;

/// The anchor stride rule (options and headers alike): a power of two in [2, 4096].
FACTZ_HD bool valid_anchor_stride(int64_t s0) { return s0 >= 2 && s0 <= kMaxAnchorStride && (s0 & (s0 - 1)) == 0; }

/// The lattice of one phase: x = x0 + i * dx (i < count_x), y = y0 + j * dy (j < count_y).
struct PhaseLattice {
  int64_t x0 = 0, y0 = 0, dx = 1, dy = 1, count_x = 0, count_y = 0;
  FACTZ_HD int64_t count() const { return count_x * count_y; }
};

FACTZ_HD int64_t lattice_count(int64_t start, int64_t stride, int64_t n) {
  return start < n ? (n - 1 - start) / stride + 1 : 0;
}

/// Anchors for stride s0.
FACTZ_HD PhaseLattice anchor_lattice(int64_t nx, int64_t ny, int64_t s0) {
  return {0, 0, s0, s0, lattice_count(0, s0, nx), lattice_count(0, s0, ny)};
}

/// Targets of `phase` at level `step`.
FACTZ_HD PhaseLattice phase_lattice(int64_t nx, int64_t ny, int64_t step, Phase phase) {
  const int64_t x0 = phase == Phase::vertical ? 0 : step;
  const int64_t y0 = phase == Phase::horizontal ? 0 : step;
  return {x0, y0, 2 * step, 2 * step, lattice_count(x0, 2 * step, nx), lattice_count(y0, 2 * step, ny)};
}

/// One phase of the schedule: its level, its lattice, and the stream position of its first
/// target (targets of all phases, anchors excluded, in schedule order).
struct ScheduledPhase {
  int64_t step = 0;
  Phase phase = Phase::horizontal;
  PhaseLattice lattice;
  int64_t offset = 0;
};

/// The schedule in stream order: levels s0/2, ..., 1, each horizontal, vertical, center.
/// Every backend walks it the same way:
///   PhaseSchedule sched(nx, ny, s0);
///   for (ScheduledPhase ph; sched.next(ph);) { ... }
class PhaseSchedule {
 public:
  FACTZ_HD PhaseSchedule(int64_t nx, int64_t ny, int64_t s0) : nx_(nx), ny_(ny), step_(s0 / 2) {}
  /// The next phase into `out`; false when the schedule is done.
  FACTZ_HD bool next(ScheduledPhase& out) {
    if (step_ < 1) return false;
    out.step = step_;
    out.phase = Phase(phase_);
    out.lattice = phase_lattice(nx_, ny_, step_, out.phase);
    out.offset = offset_;
    offset_ += out.lattice.count();
    if (++phase_ == 3) {
      phase_ = 0;
      step_ /= 2;
    }
    return true;
  }

 private:
  int64_t nx_, ny_, step_;
  int phase_ = 0;
  int64_t offset_ = 0;
};

/// Vertex index of target t of lattice L (targets are row-major in the lattice).
FACTZ_HD int64_t lattice_vertex(const PhaseLattice& L, int64_t nx, int64_t t) {
  return (L.y0 + (t / L.count_x) * L.dy) * nx + L.x0 + (t % L.count_x) * L.dx;
}

/// Linear prediction of target (x, y) of `phase` at level `step` from the current values `f`
/// (row length nx, ny rows). Plain arithmetic of the value type T (float, or double for a
/// float64 field): the decoder computes the same bits.
template <class T>
FACTZ_HD T predict(const T* f, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t step, Phase phase) {
  const int64_t k = y * nx + x;
  switch (phase) {
    case Phase::horizontal: {
      const T l = f[k - step];
      return x + step < nx ? (l + f[k + step]) * T(0.5) : l;
    }
    case Phase::vertical: {
      const T t = f[k - step * nx];
      return y + step < ny ? (t + f[k + step * nx]) * T(0.5) : t;
    }
    case Phase::center:
    default: {
      const T t = f[k - step * nx], l = f[k - step], tl = f[k - step * nx - step];
      return (t + l) - tl;
    }
  }
}

/// The predictors a speculative stream may name (its meta section, docs/format.md).
enum class Predictor : uint8_t { linear = 0, cubic = 1 };
/// What new streams use.
inline constexpr Predictor kDefaultPredictor = Predictor::cubic;
FACTZ_HD bool valid_predictor(uint8_t p) { return p <= uint8_t(Predictor::cubic); }

/// Interpolation at position p (p % 2s == s) of a line of n points spaced `stride` apart in
/// `f`, whose point p sits at f[k], from the known points p - 3s, p - s, p + s, p + 3s
/// (a, b, c, d; b always exists since p >= s):
///   a, b, c, d:  (9 (b + c) - (a + d)) / 16          cubic
///   b, c, d:     (3 b + 6 c - d) / 8                  quadratic, no point 3s before
///   a, b, c:     (6 b + 3 c - a) / 8                  quadratic, no point 3s after
///   b, c:        (b + c) / 2                          linear
///   b only:      b                                    (p + s outside the line)
/// In T arithmetic in exactly this order (1/16 and 1/8 are exact), so every backend
/// computes the same bits. `two_sided` says whether c exists.
template <class T>
FACTZ_HD T cubic_along(const T* f, int64_t k, int64_t p, int64_t n, int64_t s, int64_t stride, bool& two_sided) {
  const int64_t ds = s * stride;
  const T b = f[k - ds];
  two_sided = p + s < n;
  if (!two_sided) return b;
  const T c = f[k + ds];
  const bool has_a = p >= 3 * s, has_d = p + 3 * s < n;
  if (has_a && has_d) return (T(9) * (b + c) - (f[k - 3 * ds] + f[k + 3 * ds])) * T(0.0625);
  if (has_d) return ((T(3) * b + T(6) * c) - f[k + 3 * ds]) * T(0.125);
  if (has_a) return ((T(6) * b + T(3) * c) - f[k - 3 * ds]) * T(0.125);
  return (b + c) * T(0.5);
}

/// The cubic predictor's center phase: the mean of the interpolations along x and along y
/// when both are two-sided, the two-sided one when only one is, else (neither x + s nor
/// y + s inside the grid) T + L - TL, the linear predictor's.
template <class T>
FACTZ_HD T center_cubic(const T* f, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t s) {
  const int64_t k = y * nx + x;
  bool hx, hy;
  const T px = cubic_along(f, k, x, nx, s, int64_t(1), hx);
  const T py = cubic_along(f, k, y, ny, s, nx, hy);
  if (hx && hy) return (px + py) * T(0.5);
  if (hx) return px;
  if (hy) return py;
  return (f[k - s * nx] + f[k - s]) - f[k - s * nx - s];
}

/// Prediction of target (x, y) of `phase` at level `step` with predictor `p`: predict(...)
/// for linear, cubic_along / center_cubic for cubic.
template <class T>
FACTZ_HD T predict(const T* f, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t step, Phase phase, Predictor p) {
  if (p == Predictor::linear) return predict(f, nx, ny, x, y, step, phase);
  const int64_t k = y * nx + x;
  bool two_sided;
  switch (phase) {
    case Phase::horizontal: return cubic_along(f, k, x, nx, step, int64_t(1), two_sided);
    case Phase::vertical: return cubic_along(f, k, y, ny, step, nx, two_sided);
    case Phase::center:
    default: return center_cubic(f, nx, ny, x, y, step);
  }
}

/// The constant whose addition and subtraction rounds a value of magnitude below the
/// radius (<= 2^15) to an integer, ties to even: 1.5 * 2^23 for float, 1.5 * 2^52 for double.
FACTZ_HD float residual_round_magic(float) { return 12582912.0f; }
FACTZ_HD double residual_round_magic(double) { return 6755399441055744.0; }

/// Quantizes x against pred with bound `bound` (> 0): code = round((x - pred) / step),
/// recon = pred + code * step, in T arithmetic. Returns false when the code does not fit in
/// +-radius.
template <class T>
FACTZ_HD bool quantize_residual(T x, T pred, T bound, int32_t radius, int32_t& code, T& recon) {
  const T step = T(2) * bound;
  const T r = (x - pred) / step;
  if (!(r < T(radius) && r > -T(radius))) return false;  // also rejects NaN
  const T magic = residual_round_magic(r);  // round half to even for |r| < radius
  const T c = (r + magic) - magic;
  code = int32_t(c);
  if (code <= -radius || code >= radius) return false;
  recon = pred + T(code) * step;
  return true;
}

/// The decoder's side of quantize_residual.
template <class T>
FACTZ_HD T dequantize_residual(T pred, T bound, int32_t code) {
  return pred + T(code) * (T(2) * bound);
}

/// A coded value from its prediction and its symbol (code + radius) at `bound`:
/// dequantize_residual into r, and whether r is finite (a damaged stream otherwise). The
/// speculative readers, 2D and 3D, take their coded values from here.
template <class T>
FACTZ_HD bool coded_value(T pred, T bound, uint16_t sym, int32_t radius, T& r) {
  r = dequantize_residual(pred, bound, int32_t(sym) - radius);
  return finite_value(r);
}

}  // namespace factz::detail
