// Error-bounded linear quantization on a logarithmic grid of bounds.
//
// Bound ids: id 0 means "exact" (bound 0); id k in [1, kMaxBoundId] means the absolute
// bound eb * 2^(k - kMaxBoundId), an exact float (a power-of-two scaling of eb).
// A value x is pre-quantized to the integer q = rint(x / step), step = 2 * bound, and
// reconstructed as float(q) * step (one IEEE multiplication, the same expression in the
// encoder and the decoder). |q| is kept <= kMaxQuant so float(q) is exact. Whether the
// reconstruction meets a bound is decided exactly (no rounded comparison).
//
// float64 fields (issue 18) use the same rules on doubles, through overloads taking double
// (bound_of_id, within_bound, round_even, prequantize, finite_value, reconstruct): the bound,
// the step, the division, the rounding and the reconstruction are double operations, never
// float ones, and |q| is kept <= kMaxQuant64 (double(q) is exact far beyond it). Code written
// once for both value types (the backends' templates) picks them by the argument type.
#pragma once

#include <cmath>
#include <cstring>
#include <cstdint>

#include "kernels/exact.hpp"
#include "kernels/exact64.hpp"

namespace factz::detail {

/// The bits of a float (std::bit_cast, usable in device code).
FACTZ_HD uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
#endif
}

/// Biased binary exponent of a float (0 for zero and subnormals; the sign is ignored).
FACTZ_HD int exponent_bits(float x) { return int((float_bits(x) >> 23) & 0xff); }

inline constexpr int kMaxBoundId = 30;
inline constexpr int32_t kMaxQuant = 1 << 23;
/// The clamp of q for float64 values: int32 arithmetic stays exact for the Lorenzo sums, and
/// bounds down to about 2^-31 of a value keep their codes instead of storing it exactly.
inline constexpr int32_t kMaxQuant64 = 1 << 30;

/// The clamp of q for a value type (picked by the step's type).
FACTZ_HD int32_t quant_limit(float) { return kMaxQuant; }
FACTZ_HD int32_t quant_limit(double) { return kMaxQuant64; }

/// Absolute bound of a bound id (id 0: 0).
FACTZ_HD float bound_of_id(float eb, int id) {
  return id <= 0 ? 0.0f : ldexpf(eb, id - kMaxBoundId);
}

/// The float64 bound of a bound id: ldexp of the double eb (exact while it stays normal).
FACTZ_HD double bound_of_id(double eb, int id) {
  return id <= 0 ? 0.0 : ldexp(eb, id - kMaxBoundId);
}

/// Largest id whose bound does not exceed `target` (0 if none). eb > 0; T is the field's
/// value type (float: bound_of_id's ldexpf, double: its ldexp).
template <class T>
FACTZ_HD int id_for_bound(T eb, double target) {
  if (!(target > 0.0) || !(eb > T(0))) return 0;
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

/// True iff |recon - x| <= bound holds exactly, for doubles. TwoSum gives recon - x = s + e
/// exactly (without overflow), so e == 0 means s is the exact difference. Unlike the float
/// case (a difference of two floats is exact in double), the difference of two doubles often
/// does not fit one (a prediction beside a small value): then exact64.hpp's within_bound64
/// decides on the exact difference. An overflow or a NaN makes e NaN: never within.
FACTZ_HD bool within_bound(double recon, double x, double bound) {
  double s, e;
  two_sum(recon, -x, s, e);
  if (e == 0.0) return (s < 0.0 ? -s : s) <= bound;
  if (e != e) return false;
  return within_bound64(recon, x, bound);
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

/// round_even for doubles: (a + 1.5 * 2^52) - 1.5 * 2^52 rounds |a| < 2^51 at the units
/// digit, ties to even; larger magnitudes are integers or beyond the clamp already.
FACTZ_HD double round_even(double a) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  if (!(a < 2251799813685248.0 && a > -2251799813685248.0)) return a;  // |a| >= 2^51 (or NaN)
  const double t = a + kMagic;
  return t - kMagic;
}

/// Pre-quantizes x with `step` (> 0); q is clamped to +-kMaxQuant.
FACTZ_HD int32_t prequantize(float x, float step) {
  const float r = round_even(x / step);
  if (!(r <= float(kMaxQuant))) return r != r ? 0 : kMaxQuant;
  if (!(r >= -float(kMaxQuant))) return -kMaxQuant;
  return int32_t(r);
}

/// Pre-quantizes a double x with a double `step` (> 0); q is clamped to +-kMaxQuant64.
FACTZ_HD int32_t prequantize(double x, double step) {
  const double r = round_even(x / step);
  if (!(r <= double(kMaxQuant64))) return r != r ? 0 : kMaxQuant64;
  if (!(r >= -double(kMaxQuant64))) return -kMaxQuant64;
  return int32_t(r);
}

/// Whether a value is finite (isfinite differs between host and device libraries).
FACTZ_HD bool finite_value(float r) { return r - r == 0.0f; }
FACTZ_HD bool finite_value(double r) { return r - r == 0.0; }

/// The reconstruction of pre-quantized value q (0 when step is 0: exact tiles).
FACTZ_HD float reconstruct(int32_t q, float step) { return float(q) * step; }
FACTZ_HD double reconstruct(int32_t q, double step) { return double(q) * step; }

}  // namespace factz::detail
