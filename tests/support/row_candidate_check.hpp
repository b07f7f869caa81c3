// One target of a speculative row pass (backend/cpu/speculative_rows.hpp in 2D,
// speculative3d_rows.hpp in 3D) against the scalar first candidate of speculate_vertex /
// speculate_vertex3d, for tests/test_speculative_rows.cpp and tests/test_speculative3d.cpp.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/cpu/row_candidates.hpp"
#include "kernels/exact.hpp"
#include "kernels/quantizer.hpp"

namespace factz::testing {

/// Entry r of `row` is the target whose originals are x[c] and whose scalar predictions are
/// pred[c]: the row's predictions and originals bit for bit; a candidate flagged as fitting
/// only where quantize_residual fits and within_bound holds for every component, with the
/// same codes and values bit for bit; a refused one only where the scalar steps refuse it too
/// or a difference is not exact in double (which the float64 path decides with wide
/// arithmetic). Counts the target in `accepted` or `refused`. Call it with
/// ASSERT_NO_FATAL_FAILURE.
template <class T, int C>
void check_row_target(const detail::RowCandidatesOf<T, C>& row, size_t r, const T (&x)[C], const T (&pred)[C],
                      T bound, int32_t radius, const std::string& where, int64_t& accepted, int64_t& refused) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  bool fits = true, within = true, exact_diff = true;
  int32_t code[C];
  T rec[C];
  for (int c = 0; c < C; ++c) {
    ASSERT_EQ(std::bit_cast<Bits>(row.pred[c][r]), std::bit_cast<Bits>(pred[c])) << where << " component " << c;
    ASSERT_EQ(std::bit_cast<Bits>(row.x[c][r]), std::bit_cast<Bits>(x[c])) << where;
    fits = fits && detail::quantize_residual(x[c], pred[c], bound, radius, code[c], rec[c]);
    if (!fits) break;
    within = within && detail::within_bound(rec[c], x[c], bound);
    double s, e;
    detail::two_sum(double(rec[c]), -double(x[c]), s, e);
    exact_diff = exact_diff && e == 0.0;
  }
  const bool scalar = fits && within;
  if (row.ok[r]) {
    ASSERT_TRUE(scalar) << where;
    for (int c = 0; c < C; ++c) {
      EXPECT_EQ(row.code[c][r], code[c]) << where;
      EXPECT_EQ(std::bit_cast<Bits>(row.recon[c][r]), std::bit_cast<Bits>(rec[c])) << where;
    }
    ++accepted;
  } else {
    ASSERT_FALSE(scalar && exact_diff) << where;
    ++refused;
  }
}

}  // namespace factz::testing
