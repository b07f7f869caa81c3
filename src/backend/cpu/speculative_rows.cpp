#include "backend/cpu/speculative_rows.hpp"

#include <cstddef>

#include "backend/cpu/row_quantize.hpp"
#include "kernels/interpolation.hpp"  // cubic_along, center_cubic
#include "kernels/speculation.hpp"     // original_signatures

namespace factz::detail {
namespace {

/// Predictions of the run's targets [a, b) (entry i is vertex k0 + D i; D the lattice's dx,
/// fixed at compile time where it is 2, the last level's, so that the loads vectorize) whose
/// axes in use all have both far points: one axis's cubic (offset o0), or the center's mean
/// of the cubics along x (o0) and along y (o1).
template <class T, int D, bool Center>
void interior_predictions2d(const T* cur, int64_t k0, int64_t d, int64_t a, int64_t b, int64_t o0, int64_t o1,
                            T* pred) {
  const int64_t spacing = D > 0 ? D : d;
  for (int64_t i = a; i < b; ++i) {
    const int64_t k = k0 + spacing * i;
    if constexpr (Center) pred[i] = (cubic4(cur, k, o0) + cubic4(cur, k, o1)) * T(0.5);
    else pred[i] = cubic4(cur, k, o0);
  }
}

template <class T, bool Center>
void interior_dispatch2d(const T* cur, int64_t k0, int64_t d, int64_t a, int64_t b, int64_t o0, int64_t o1,
                         T* pred) {
  if (d == 2) interior_predictions2d<T, 2, Center>(cur, k0, d, a, b, o0, o1, pred);
  else interior_predictions2d<T, 0, Center>(cur, k0, d, a, b, o0, o1, pred);
}

/// The cubic predictions of targets [i0, i1) of lattice row j of phase ph on plane `cur`
/// (pred[i - i0]): the vectorized interior loop where every axis in use has both far points,
/// predict itself elsewhere.
template <class T>
void row_predictions2d_any(const T* cur, int64_t nx, int64_t ny, const ScheduledPhase& ph, int64_t j, int64_t i0,
                           int64_t i1, T* pc) {
  const PhaseLattice& L = ph.lattice;
  const int64_t n = i1 - i0, d = L.dx, s = ph.step, y = L.y0 + j * L.dy;
  const int64_t x0 = L.x0 + d * i0, k0 = y * nx + x0;  // the run's first target
  // The run's targets whose axes in use have both far points: along x the range x >= 3s,
  // x + 3s < nx of i; along y the whole run or none.
  const bool along_x = ph.phase != Phase::vertical, along_y = ph.phase != Phase::horizontal;
  int64_t a = 0, b = n;
  if (along_x) {
    a = x0 >= 3 * s ? 0 : (3 * s - x0 + d - 1) / d;
    b = nx - 3 * s > x0 ? (nx - 3 * s - x0 + d - 1) / d : 0;
    if (b > n) b = n;
  }
  if ((along_y && !(y >= 3 * s && y + 3 * s < ny)) || b < a) a = b = 0;
  if (ph.phase == Phase::center) interior_dispatch2d<T, true>(cur, k0, d, a, b, s, s * nx, pc);
  else interior_dispatch2d<T, false>(cur, k0, d, a, b, ph.phase == Phase::horizontal ? s : s * nx, 0, pc);
  for (int64_t i = 0; i < n; ++i) {
    if (i == a) i = b;
    if (i >= n) break;
    pc[i] = predict(cur, nx, ny, x0 + d * i, y, s, ph.phase, Predictor::cubic);
  }
}

template <class T>
void first_candidates_row2d_any(const T* const f[2], const T* const cur[2], int64_t nx, int64_t ny,
                                const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1, T bound, int32_t radius,
                                RowCandidates2D<T>& out) {
  const PhaseLattice& L = ph.lattice;
  const int64_t y = L.y0 + j * L.dy, k0 = y * nx + L.x0 + L.dx * i0;  // the run's first target
  first_candidates_run<T, 2>(f, k0, L.dx, i1 - i0, bound, radius, out,
                             [&](int c, T* pred) { row_predictions2d_any(cur[c], nx, ny, ph, j, i0, i1, pred); });
}

}  // namespace

void first_candidates_row2d(const float* const f[2], const float* const cur[2], int64_t nx, int64_t ny,
                            const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1, float bound, int32_t radius,
                            RowCandidates2D<float>& out) {
  first_candidates_row2d_any(f, cur, nx, ny, ph, j, i0, i1, bound, radius, out);
}
void first_candidates_row2d(const double* const f[2], const double* const cur[2], int64_t nx, int64_t ny,
                            const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1, double bound,
                            int32_t radius, RowCandidates2D<double>& out) {
  first_candidates_row2d_any(f, cur, nx, ny, ph, j, i0, i1, bound, radius, out);
}

void row_predictions2d(const float* cur, int64_t nx, int64_t ny, const ScheduledPhase& ph, int64_t j, int64_t i0,
                       int64_t i1, float* pred) {
  row_predictions2d_any(cur, nx, ny, ph, j, i0, i1, pred);
}
void row_predictions2d(const double* cur, int64_t nx, int64_t ny, const ScheduledPhase& ph, int64_t j, int64_t i0,
                       int64_t i1, double* pred) {
  row_predictions2d_any(cur, nx, ny, ph, j, i0, i1, pred);
}

namespace {

template <class T>
void original_signatures_row_any(const Grid2D& g, int64_t i, const T* u, const T* v, const uint8_t* missing,
                                 uint8_t* __restrict flags, uint8_t* out) {
  const int64_t cw = g.nx - 1;
  const T* __restrict u0 = u + i * g.nx;
  const T* __restrict u1 = u0 + g.nx;
  const T* __restrict v0 = v + i * g.nx;
  const T* __restrict v1 = v0 + g.nx;
  // strictly_one_sided on the four corners of each cell, for u and for v, without branches.
  for (int64_t j = 0; j < cw; ++j) {
    const bool pu = (u0[j] > T(0)) & (u0[j + 1] > T(0)) & (u1[j] > T(0)) & (u1[j + 1] > T(0));
    const bool nu = (u0[j] < T(0)) & (u0[j + 1] < T(0)) & (u1[j] < T(0)) & (u1[j + 1] < T(0));
    const bool pv = (v0[j] > T(0)) & (v0[j + 1] > T(0)) & (v1[j] > T(0)) & (v1[j + 1] > T(0));
    const bool nv = (v0[j] < T(0)) & (v0[j + 1] < T(0)) & (v1[j] < T(0)) & (v1[j + 1] < T(0));
    flags[j] = uint8_t(pu | nu | pv | nv);
  }
  if (missing) {  // a cell touching a missing vertex takes original_signatures' own rule
    const uint8_t* m0 = missing + i * g.nx;
    const uint8_t* m1 = m0 + g.nx;
    for (int64_t j = 0; j < cw; ++j) flags[j] = uint8_t(flags[j] & !(m0[j] | m0[j + 1] | m1[j] | m1[j + 1]));
  }
  for (int64_t j = 0; j < cw; ++j) {
    if (flags[j]) {
      out[2 * j] = out[2 * j + 1] = kNoCriticalPoint;
      continue;
    }
    original_signatures(g, i, j, u, v, missing, out + 2 * j);
  }
}

}  // namespace

void original_signatures_row(const Grid2D& g, int64_t i, const float* u, const float* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out) {
  original_signatures_row_any(g, i, u, v, missing, flags, out);
}
void original_signatures_row(const Grid2D& g, int64_t i, const double* u, const double* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out) {
  original_signatures_row_any(g, i, u, v, missing, flags, out);
}

}  // namespace factz::detail
