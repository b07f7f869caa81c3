// float64 block mode's shorter exact values (docs/architecture.md, "Block mode rounds before
// it stores"): a vertex the float64 block frontend cannot quantize is listed in the exact
// list as its rounding to 24 significant bits where that meets the bound, and with all 64
// bits where the rounding is the value itself or misses the bound (and, after the exact
// check, wherever a triangle's float64 signature on the reconstruction differs from the
// original's). The decoder takes the listed value as it is, so only writers read this.
//
// One per-vertex rule for every float64 block writer: the CUDA frontend
// (backend/cuda/block_bodies.hpp round_exact_vertex) and its CPU model call it; the CPU
// frontend (backend/cpu/block_mode.cpp round_exact_values) computes the same.
#pragma once

#include <cstdint>

#include "kernels/exact64.hpp"
#include "kernels/hd.hpp"
#include "kernels/quantizer.hpp"

namespace factz::detail {

/// How a vertex of a tiled plane is stored (a frontend's per-vertex `exact` flag): coded
/// (0), in the exact list with all its bits, or (float64 block mode only) in the exact list
/// rounded to 24 significant bits. Both listed kinds are entries of the exact list, which
/// holds the reconstruction.
inline constexpr uint8_t kExactListFull = 1;
inline constexpr uint8_t kExactListRounded = 2;

/// x rounded to nearest (ties to even) at 24 significant bits, float32's precision, on the
/// double's bits with its exponent kept: scale-free (no float conversion, so no float
/// range; subnormals round at the same bit), and a value already that short comes back bit
/// for bit. A carry may reach infinity, which no bound test accepts; inf and NaN come back
/// as they are.
FACTZ_HD double round_to_24_bits(double x) {
  constexpr uint64_t kDrop = 29;  // 52 - 23 mantissa bits
  constexpr uint64_t kLow = (uint64_t(1) << kDrop) - 1, kHalf = uint64_t(1) << (kDrop - 1);
  uint64_t b = double_bits(x);
  if (((b >> 52) & 0x7ff) == 0x7ff) return x;
  const uint64_t low = b & kLow;
  b &= ~kLow;
  if (low > kHalf || (low == kHalf && ((b >> kDrop) & 1))) b += uint64_t(1) << kDrop;
  return double_from_bits(b);
}

/// The value a float64 block writer lists for a vertex it stores exactly (`x`, the
/// original): its 24-bit rounding into `r` and true when that differs from x and meets eb
/// (decided exactly, within_bound); false (keep all 64 bits) otherwise.
FACTZ_HD bool rounded_exact_value(double x, double eb, double& r) {
  r = round_to_24_bits(x);
  if (double_bits(r) == double_bits(x)) return false;
  return within_bound(r, x, eb);
}

}  // namespace factz::detail
