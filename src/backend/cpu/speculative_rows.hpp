// The first candidate of the 2D speculative decision for a run of targets of one lattice row
// at once (the CPU writer, backend/cpu/speculative_mode.cpp): the predictions, codes and values
// that speculate_vertex (kernels/speculation.hpp) computes for its first bound id, as loops the
// compiler vectorizes; as speculative3d_rows.hpp does in 3D. The targets of a phase are
// independent (their predictions read earlier phases only), so a run is computed before any of
// its commits.
//
// Same results value for value: every operation is the scalar one (predict with the cubic
// predictor, quantize_residual, within_bound), in the same order, on the same types; the source
// file is compiled with -fno-trapping-math. A target whose candidate is not surely accepted by
// the scalar steps (a code out of range, a value outside the bound, a difference whose
// exactness the float64 path would decide with wide arithmetic) is left to speculate_vertex.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/row_candidates.hpp"
#include "kernels/interpolation.hpp"
#include "kernels/mesh.hpp"

namespace factz::detail {

/// The first candidates of a run of (u, v) targets.
template <class T>
using RowCandidates2D = RowCandidatesOf<T, 2>;

/// Fills `out` for targets i in [i0, i1) of lattice row j of phase `ph` (x = L.x0 + i L.dx,
/// y = L.y0 + j L.dy) with the cubic predictor: f the original planes (u, v), cur the
/// current state, `bound` the bound of the phase's first id (> 0), `radius` the code radius.
void first_candidates_row2d(const float* const f[2], const float* const cur[2], int64_t nx, int64_t ny,
                            const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1, float bound, int32_t radius,
                            RowCandidates2D<float>& out);
void first_candidates_row2d(const double* const f[2], const double* const cur[2], int64_t nx, int64_t ny,
                            const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1, double bound,
                            int32_t radius, RowCandidates2D<double>& out);

/// The cubic predictions alone, of targets [i0, i1) of lattice row j of phase `ph` on plane
/// `cur` (pred[i - i0]; the same values as predict's): the reader's row pass.
void row_predictions2d(const float* cur, int64_t nx, int64_t ny, const ScheduledPhase& ph, int64_t j, int64_t i0,
                       int64_t i1, float* pred);
void row_predictions2d(const double* cur, int64_t nx, int64_t ny, const ScheduledPhase& ph, int64_t j, int64_t i0,
                       int64_t i1, double* pred);

/// star_keeps_no_critical_point (kernels/speculation.hpp) for the run's candidates at once:
/// flags[i - i0] = 1 where target i of the run is an interior vertex, the six triangles around
/// it held no critical point in the original (`sig`, kNoCriticalPoint), and u or v has one
/// strict sign on the candidate and the six grid neighbours of its star on the current state
/// `cur`; then signatures_hold is true without its per-triangle tests. 0 says nothing (the
/// full test decides). The run's candidates are `rc`'s (first_candidates_row2d); targets of a
/// phase are never in each other's star, so the flags hold through the run's commits.
void star_one_sided_row2d(const float* const cur[2], const uint8_t* sig, int64_t nx, int64_t ny,
                          const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1,
                          const RowCandidates2D<float>& rc, uint8_t* flags);
void star_one_sided_row2d(const double* const cur[2], const uint8_t* sig, int64_t nx, int64_t ny,
                          const ScheduledPhase& ph, int64_t j, int64_t i0, int64_t i1,
                          const RowCandidates2D<double>& rc, uint8_t* flags);

/// The original signatures of cell row i (out[2 j], out[2 j + 1] for cell j): the values of
/// kernels/speculation.hpp original_signatures_quick, with its one-sided test of every cell of
/// the row first in a loop the compiler vectorizes (`flags`: scratch of nx - 1 bytes).
void original_signatures_row(const Grid2D& g, int64_t i, const float* u, const float* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out);
void original_signatures_row(const Grid2D& g, int64_t i, const double* u, const double* v, const uint8_t* missing,
                             uint8_t* flags, uint8_t* out);

}  // namespace factz::detail
