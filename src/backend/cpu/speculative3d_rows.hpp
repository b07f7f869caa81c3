// The first candidate of the 3D speculative decision for a whole lattice row at once (issue
// 22; the CPU writer, backend/cpu/speculative3d_mode.cpp), and a row's predictions alone (the
// CPU reader): the predictions, codes and values
// that speculate_vertex3d (kernels/speculation3d.hpp) computes for its first bound id
// (kMaxBoundId), as loops the compiler vectorizes. The targets of a row are independent (their
// predictions read earlier phases only), so the row is computed before any of its commits.
//
// Same results value for value: every operation is the scalar one (predict3d, quantize_residual,
// within_bound), in the same order, on the same types; the source file is compiled with
// -fno-trapping-math (as tiled_quantizer.cpp: traps and flags only, no value changes) so that
// GCC if-converts the selects. A target whose candidate is not surely accepted by the scalar
// steps (a code out of range, a value outside the bound, a difference whose exactness the
// float64 path would decide with wide arithmetic) is left to speculate_vertex3d.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/row_candidates.hpp"
#include "kernels/interpolation3d.hpp"

namespace factz::detail {

/// The first candidates of one lattice row of (u, v, w) targets.
template <class T>
using RowCandidates = RowCandidatesOf<T, 3>;

/// Fills `out` for the targets of lattice row (y, z) of phase `ph` (x = L.x0 + i L.d, i <
/// L.count_x): f the original planes, cur the current state, `bound` the bound of
/// kMaxBoundId (> 0), `radius` the code radius.
void first_candidates_row(const float* const f[3], const float* const cur[3], int64_t nx, int64_t ny, int64_t nz,
                          int64_t y, int64_t z, const ScheduledPhase3D& ph, float bound, int32_t radius,
                          RowCandidates<float>& out);
void first_candidates_row(const double* const f[3], const double* const cur[3], int64_t nx, int64_t ny,
                          int64_t nz, int64_t y, int64_t z, const ScheduledPhase3D& ph, double bound, int32_t radius,
                          RowCandidates<double>& out);

/// predict3d(cur, nx, ny, nz, x, y, z, ph.step, ph.axes, ph.along[c]) of every target x =
/// L.x0 + i L.d of lattice row (y, z) of phase ph into pred[i] (L.count_x values), value for
/// value, with the loops above: the reader's row pass (decode_speculative3d), as the writer's
/// first candidates use it.
void row_predictions3d(const float* cur, int64_t nx, int64_t ny, int64_t nz, int64_t y, int64_t z,
                       const ScheduledPhase3D& ph, int c, float* pred);
void row_predictions3d(const double* cur, int64_t nx, int64_t ny, int64_t nz, int64_t y, int64_t z,
                       const ScheduledPhase3D& ph, int c, double* pred);

}  // namespace factz::detail
