// Error-bounded linear quantization on a logarithmic grid of bounds.
//
// Bound ids: id 0 means "exact" (bound 0); id k in [1, kMaxBoundId] means the absolute
// bound eb * 2^(k - kMaxBoundId), an exact float (a power-of-two scaling of eb).
// A value x is pre-quantized to the integer q = rint(x / step), step = 2 * bound, and
// reconstructed as float(q) * step (one IEEE multiplication, the same expression in the
// encoder and the decoder). |q| is kept <= kMaxQuant so float(q) is exact. Whether the
// reconstruction meets a bound is decided exactly (no rounded comparison).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/exact.hpp"

namespace factz::detail {

inline constexpr int kMaxBoundId = 30;
inline constexpr int32_t kMaxQuant = 1 << 23;

/// Absolute bound of a bound id (id 0: 0).
FACTZ_HD float bound_of_id(float eb, int id) {
  return id <= 0 ? 0.0f : ldexpf(eb, id - kMaxBoundId);
}

/// Largest id whose bound does not exceed `target` (0 if none). eb > 0.
FACTZ_HD int id_for_bound(float eb, double target) {
  if (!(target > 0.0) || !(eb > 0.0f)) return 0;
  if (target >= double(eb)) return kMaxBoundId;
  int e = ilogb(target / double(eb));  // floor(log2(target / eb)), approximately
  int id = kMaxBoundId + e + 1;
  if (id > kMaxBoundId) id = kMaxBoundId;
  while (id > 0 && double(bound_of_id(eb, id)) > target) --id;
  return id < 0 ? 0 : id;
}

/// True iff |recon - x| <= bound holds exactly.
FACTZ_HD bool within_bound(float recon, float x, float bound) {
  double s, e;
  two_sum(double(recon), -double(x), s, e);
  if (e != 0.0) return false;  // difference not representable: treat as a miss
  return (s < 0.0 ? -s : s) <= double(bound);
}

/// Round to nearest, ties to even, in plain IEEE float arithmetic: for |a| < 2^22,
/// (a + 1.5 * 2^23) - 1.5 * 2^23 rounds a at the units digit (no libm call, identical on
/// every IEEE machine; contraction is off). Larger magnitudes are returned as they are:
/// in [2^22, 2^23) a float may still end in .5, which prequantize's conversion then
/// truncates toward zero (an error of half a step, as a rounding tie would give; writer
/// and decoder share q, so only the tie rule differs there); from 2^23 on floats are
/// integers, and beyond kMaxQuant they are clamped.
FACTZ_HD float round_even(float a) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  if (!(a < 4194304.0f && a > -4194304.0f)) return a;  // |a| >= 2^22 (or NaN)
  const float t = a + kMagic;
  return t - kMagic;
}

/// Pre-quantizes x with `step` (> 0); q is clamped to +-kMaxQuant.
FACTZ_HD int32_t prequantize(float x, float step) {
  const float r = round_even(x / step);
  if (!(r <= float(kMaxQuant))) return r != r ? 0 : kMaxQuant;
  if (!(r >= -float(kMaxQuant))) return -kMaxQuant;
  return int32_t(r);
}

/// Whether a value is finite (isfinite differs between host and device libraries).
FACTZ_HD bool finite_value(float r) { return r - r == 0.0f; }

/// The reconstruction of pre-quantized value q (0 when step is 0: exact tiles).
FACTZ_HD float reconstruct(int32_t q, float step) { return float(q) * step; }

}  // namespace factz::detail
