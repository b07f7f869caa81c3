// The speculative row passes' shared steps (speculative_rows.cpp in 2D, speculative3d_rows.cpp
// in 3D): the interior cubic and the first candidate for a run of targets at one bound, as
// selects. Included only by files compiled with -fno-trapping-math, so that GCC if-converts
// the loops (traps and flags only: no value changes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/row_candidates.hpp"
#include "kernels/exact.hpp"          // two_sum
#include "kernels/interpolation.hpp"  // residual_round_magic

namespace factz::detail {

/// cubic_along's two-sided value with both far points: (9 (b + c) - (a + d)) / 16 around
/// vertex k at offset o (= step x the axis stride), in its order of operations.
template <class T>
inline T cubic4(const T* f, int64_t k, int64_t o) {
  const T b = f[k - o], c = f[k + o];
  return (T(9) * (b + c) - (f[k - 3 * o] + f[k + 3 * o])) * T(0.0625);
}

/// quantize_residual and within_bound at one bound for n values, as selects: ok[i] is 1 when
/// the code fits (|code| < radius) and |recon - x| <= bound holds with an exact difference;
/// then code and recon are quantize_residual's. ok[i] 0 says nothing more (the caller asks
/// the scalar decision, speculate_vertex or speculate_vertex3d).
template <class T>
inline void quantize_row(const T* x, const T* pred, int64_t n, T bound, int32_t radius, int32_t* code, T* recon,
                         int32_t* ok) {
  const T step = T(2) * bound, r_max = T(radius), magic = residual_round_magic(T(0));
  for (int64_t i = 0; i < n; ++i) {
    const T r = (x[i] - pred[i]) / step;
    const bool in = (r < r_max) & (r > -r_max);  // also false for NaN
    const T rs = in ? r : T(0);
    const T c = (rs + magic) - magic;
    const int32_t q = int32_t(c);
    const T v = pred[i] + T(q) * step;
    double s, e;
    two_sum(double(v), -double(x[i]), s, e);
    const double abs_s = s < 0.0 ? -s : s;
    const bool fits = in & (q > -radius) & (q < radius);
    const bool within = (e == 0.0) & (abs_s <= double(bound));
    code[i] = q;
    recon[i] = v;
    ok[i] = ok[i] & int32_t(fits & within);
  }
}

/// The first candidates of a run of n targets, target i at index k0 + d i of the planes: `out`
/// sized to n, then per component c the originals gathered from f[c], predict(c, pred)
/// writing the n predictions, and quantize_row at `bound` (ok[i] over every component).
template <class T, int C, class Predict>
inline void first_candidates_run(const T* const f[C], int64_t k0, int64_t d, int64_t n, T bound, int32_t radius,
                                 RowCandidatesOf<T, C>& out, Predict&& predict) {
  for (int c = 0; c < C; ++c) {
    out.x[c].resize(std::size_t(n));
    out.pred[c].resize(std::size_t(n));
    out.recon[c].resize(std::size_t(n));
    out.code[c].resize(std::size_t(n));
  }
  out.ok.assign(std::size_t(n), 1);
  for (int c = 0; c < C; ++c) {
    const T* const fc = f[c];
    T* const xc = out.x[c].data();
    for (int64_t i = 0; i < n; ++i) xc[i] = fc[k0 + d * i];
    predict(c, out.pred[c].data());
    quantize_row(xc, out.pred[c].data(), n, bound, radius, out.code[c].data(), out.recon[c].data(), out.ok.data());
  }
}

}  // namespace factz::detail
