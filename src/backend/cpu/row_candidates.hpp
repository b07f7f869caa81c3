// The buffers of a speculative row pass's first candidates (backend/cpu/speculative_rows.hpp
// in 2D, speculative3d_rows.hpp in 3D): one run of targets of a lattice row, C components.
#pragma once

#include <cstdint>
#include <vector>

namespace factz::detail {

/// Per-thread buffers of a run of targets (T: float, or double for float64 fields; C: 2 for
/// (u, v), 3 for (u, v, w)); entry i is the run's i-th target.
template <class T, int C>
struct RowCandidatesOf {
  std::vector<T> x[C];           ///< the targets' original values, per component
  std::vector<T> pred[C];        ///< their predictions
  std::vector<T> recon[C];       ///< the candidate values at the first bound id
  std::vector<int32_t> code[C];  ///< and their codes (without the radius)
  std::vector<int32_t> ok;       ///< 1: every code fits and every value is within the bound (int32: a
                                 ///< flag as wide as the codes keeps the loop vectorized)
};

}  // namespace factz::detail
