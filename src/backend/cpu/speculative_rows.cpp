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
void star_one_sided_row2d_any(const T* const cur[2], const uint8_t* sig, int64_t nx, int64_t ny,
                              const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1,
                              const RowCandidates2D<T>& rc, uint8_t* __restrict flags) {
  const PhaseLattice& L = ph.lattice;
  const int64_t y = L.y0 + j * L.dy, cw = nx - 1;
  const int64_t n = i1 - i0;
  if (y == 0 || y == ny - 1 || nx < 3) {  // a border row, or no interior column: the full test decides
    for (int64_t r = 0; r < n; ++r) flags[r] = 0;
    return;
  }
  const T* __restrict u = cur[0];
  const T* __restrict v = cur[1];
  const T* __restrict cu = rc.recon[0].data();
  const T* __restrict cv = rc.recon[1].data();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t x = L.x0 + (i0 + r) * L.dx;
    const bool interior = (x > 0) & (x < nx - 1);
    const int64_t xs = interior ? x : 1;  // a safe column for the loads of a border target
    const int64_t k = y * nx + xs;
    // The six triangles of the star (mesh.hpp incident_triangles): cell (y-1, x-1) T0 and T1,
    // cell (y-1, x) T0, cell (y, x-1) T1, cell (y, x) T0 and T1.
    const int64_t c0 = (y - 1) * cw + (xs - 1), c1 = y * cw + (xs - 1);
    const bool quiet = (sig[2 * c0] | sig[2 * c0 + 1] | sig[2 * c0 + 2] | sig[2 * c1 + 1] | sig[2 * c1 + 2] |
                        sig[2 * c1 + 3]) == 0;
    const T su[7] = {cu[r], u[k - 1], u[k + 1], u[k - nx], u[k - nx - 1], u[k + nx], u[k + nx + 1]};
    const T sv[7] = {cv[r], v[k - 1], v[k + 1], v[k - nx], v[k - nx - 1], v[k + nx], v[k + nx + 1]};
    bool pu = true, nu = true, pv = true, nv = true;
    for (int q = 0; q < 7; ++q) {
      pu = pu & (su[q] > T(0));
      nu = nu & (su[q] < T(0));
      pv = pv & (sv[q] > T(0));
      nv = nv & (sv[q] < T(0));
    }
    flags[r] = uint8_t(interior & quiet & (pu | nu | pv | nv));
  }
}

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

void star_one_sided_row2d(const float* const cur[2], const uint8_t* sig, int64_t nx, int64_t ny,
                          const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1,
                          const RowCandidates2D<float>& rc, uint8_t* flags) {
  star_one_sided_row2d_any(cur, sig, nx, ny, ph, j, i0, i1, rc, flags);
}
void star_one_sided_row2d(const double* const cur[2], const uint8_t* sig, int64_t nx, int64_t ny,
                          const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1,
                          const RowCandidates2D<double>& rc, uint8_t* flags) {
  star_one_sided_row2d_any(cur, sig, nx, ny, ph, j, i0, i1, rc, flags);
}

void original_signatures_row(const Grid2D& g, int64_t i, const float* u, const float* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out) {
  original_signatures_row_any(g, i, u, v, missing, flags, out);
}
void original_signatures_row(const Grid2D& g, int64_t i, const double* u, const double* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out) {
  original_signatures_row_any(g, i, u, v, missing, flags, out);
}

}  // namespace factz::detail
