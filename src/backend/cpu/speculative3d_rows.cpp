#include "backend/cpu/speculative3d_rows.hpp"

#include <cstddef>

#include "backend/cpu/row_quantize.hpp"
#include "kernels/interpolation.hpp"  // cubic_along, residual_round_magic

namespace factz::detail {
namespace {

/// Predictions of the targets i in [i0, i1) of a row whose every axis in use is two-sided with
/// both far points there: cubics3d's mean of m = 1, 2 or 3 of them (offsets o[0..m), in x, y,
/// z order), or one axis's cubic (predict3d with `along`: m = 1). Target i is vertex k0 + d i;
/// D > 0 fixes d at compile time (the last level's 2: its loads then vectorize).
template <class T, int D, int M>
void interior_predictions(const T* cur, int64_t k0, int64_t d, int64_t i0, int64_t i1, const int64_t o[3], T* pred) {
  const int64_t spacing = D > 0 ? D : d;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t k = k0 + spacing * i;
    T sum = cubic4(cur, k, o[0]);
    if constexpr (M >= 2) sum = sum + cubic4(cur, k, o[1]);
    if constexpr (M == 3) sum = sum + cubic4(cur, k, o[2]);
    if constexpr (M == 1) pred[i] = sum;
    else if constexpr (M == 2) pred[i] = sum * T(0.5);
    else pred[i] = sum / T(3);
  }
}

template <class T, int M>
void interior_dispatch(const T* cur, int64_t k0, int64_t d, int64_t i0, int64_t i1, const int64_t o[3], T* pred) {
  if (d == 2) interior_predictions<T, 2, M>(cur, k0, d, i0, i1, o, pred);
  else interior_predictions<T, 0, M>(cur, k0, d, i0, i1, o, pred);
}

/// predict3d of component c of the targets of lattice row (y, z) of phase ph on plane `cur`
/// (pred[i] for x = L.x0 + i L.d): the vectorized loops above where every axis in use is
/// two-sided with both far points, predict3d itself elsewhere.
template <class T>
void row_predictions3d_any(const T* cur, int64_t nx, int64_t ny, int64_t nz, int64_t y, int64_t z,
                           const ScheduledPhase3D& ph, int c, T* pc) {
  const PhaseLattice3D& L = ph.lattice;
  const int64_t n = L.count_x, d = L.d, s = ph.step, k0 = (z * ny + y) * nx + L.x0;
  const int64_t len[3] = {nx, ny, nz}, stride[3] = {1, nx, nx * ny}, pos[2] = {y, z};
  // The axes the prediction uses, in x, y, z order; the targets where each is two-sided with
  // both far points (x: a range of i; y, z: the whole row or none) take the loops above.
  int64_t o[3];
  int m = 0;
  bool row_inside = true;
  int64_t i0 = 0, i1 = n;
  for (int a = 0; a < 3; ++a) {
    const bool used = ph.along[c] != 0 ? a == ph.along[c] - 1 : ((ph.axes >> a) & 1) != 0;
    if (!used) continue;
    o[m++] = s * stride[a];
    if (a == 0) {
      // x = L.x0 + d i with x >= 3s and x + 3s < nx.
      i0 = L.x0 >= 3 * s ? 0 : (3 * s - L.x0 + d - 1) / d;
      i1 = nx - 3 * s > L.x0 ? (nx - 3 * s - L.x0 + d - 1) / d : 0;
      if (i1 > n) i1 = n;
    } else {
      const int64_t p = pos[a - 1];
      row_inside = row_inside && p >= 3 * s && p + 3 * s < len[a];
    }
  }
  if (!row_inside || i1 < i0) i0 = i1 = 0;
  if (m == 1) interior_dispatch<T, 1>(cur, k0, d, i0, i1, o, pc);
  else if (m == 2) interior_dispatch<T, 2>(cur, k0, d, i0, i1, o, pc);
  else interior_dispatch<T, 3>(cur, k0, d, i0, i1, o, pc);
  for (int64_t i = 0; i < n; ++i) {
    if (i == i0) i = i1;
    if (i >= n) break;
    pc[i] = predict3d(cur, nx, ny, nz, L.x0 + d * i, y, z, s, ph.axes, ph.along[c]);
  }
}

template <class T>
void first_candidates_row_any(const T* const f[3], const T* const cur[3], int64_t nx, int64_t ny, int64_t nz,
                              int64_t y, int64_t z, const ScheduledPhase3D& ph, T bound, int32_t radius,
                              RowCandidates<T>& out) {
  const PhaseLattice3D& L = ph.lattice;
  first_candidates_run<T, 3>(f, (z * ny + y) * nx + L.x0, L.d, L.count_x, bound, radius, out,
                             [&](int c, T* pred) { row_predictions3d_any(cur[c], nx, ny, nz, y, z, ph, c, pred); });
}

}  // namespace

void first_candidates_row(const float* const f[3], const float* const cur[3], int64_t nx, int64_t ny, int64_t nz,
                          int64_t y, int64_t z, const ScheduledPhase3D& ph, float bound, int32_t radius,
                          RowCandidates<float>& out) {
  first_candidates_row_any(f, cur, nx, ny, nz, y, z, ph, bound, radius, out);
}
void first_candidates_row(const double* const f[3], const double* const cur[3], int64_t nx, int64_t ny,
                          int64_t nz, int64_t y, int64_t z, const ScheduledPhase3D& ph, double bound, int32_t radius,
                          RowCandidates<double>& out) {
  first_candidates_row_any(f, cur, nx, ny, nz, y, z, ph, bound, radius, out);
}

void row_predictions3d(const float* cur, int64_t nx, int64_t ny, int64_t nz, int64_t y, int64_t z,
                       const ScheduledPhase3D& ph, int c, float* pred) {
  row_predictions3d_any(cur, nx, ny, nz, y, z, ph, c, pred);
}
void row_predictions3d(const double* cur, int64_t nx, int64_t ny, int64_t nz, int64_t y, int64_t z,
                       const ScheduledPhase3D& ph, int c, double* pred) {
  row_predictions3d_any(cur, nx, ny, nz, y, z, ph, c, pred);
}

}  // namespace factz::detail
