// Shorter exact-list values of the 2D tiled backbone (modes none and block). The decoder takes
// a listed value as it is, so only writers read this; one per-vertex rule for every writer.
//
// - Every plane (float32 and float64): a vertex that misses its tile's bound is listed on the
//   coarsest power-of-two grid within its own bound where that is shorter
//   (list_exact; docs/architecture.md, "FaCTz-B as built", step 4). The CPU quantizer
//   (backend/cpu/tiled_quantizer.cpp) and the CUDA body (backend/cuda/block_bodies.hpp
//   quantize_vertex) call it.
// - float64 block mode (docs/architecture.md, "Block mode rounds before it stores"): a vertex
//   still listed with all 64 bits is listed as its rounding to 24 significant bits where that
//   meets the bound (and, after the exact check, with all 64 bits wherever a triangle's float64
//   signature on the reconstruction differs from the original's). The CUDA frontend
//   (round_exact_vertex) and its CPU model call rounded_exact_value; the CPU frontend
//   (backend/cpu/block_mode.cpp round_exact_values) computes the same.
#pragma once

#include <cstdint>

#include "kernels/exact64.hpp"
#include "kernels/hd.hpp"
#include "kernels/quantizer.hpp"

namespace factz::detail {

/// How a vertex of a tiled plane is stored (a frontend's per-vertex `exact` flag): coded
/// (0), in the exact list with all its bits, (float64 block mode only) in the exact list
/// rounded to 24 significant bits, or on the grid of its own bound (kExactListOwnBound + id,
/// below). Every listed kind is an entry of the exact list, which holds the reconstruction.
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
  if (exponent_bits(x) == 0x7ff) return x;
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

/// The 2D tiled backbone (block mode and mode none): a vertex that misses its tile's bound is
/// listed as its value on a power-of-two grid within its own bound where that is shorter, flag
/// kExactListOwnBound + id (id in [1, kMaxBoundId], the vertex's own bound id or a larger one
/// whose grid still keeps the value within the own bound, list_exact): every writer
/// derives the listed value from (x, eb, flag) with own_bound_value, so no per-vertex value is
/// kept. Such a value is within the vertex's own bound, as a quantized one would be, and costs
/// a few mantissa bits instead of 32 (or 64).
inline constexpr uint8_t kExactListOwnBound = 64;

/// x on the grid of g = 2^(e + 1), the power of two above `need` (need in [2^e, 2^(e+1))):
/// round_even(x / g) * g, at most g / 2 <= need from x when nothing overflows; exact IEEE
/// operations (a division and a product by a power of two, the magic-number rounding), so
/// the same bits on every machine. x itself where need is not a positive normal number or
/// g would not be finite. T: float, or double.
FACTZ_HD float own_bound_value(float x, float need) {
  const int e = exponent_bits(need);
  if (!(need > 0.0f) || e == 0 || e >= 254) return x;
  const float g = ldexpf(1.0f, e - 126);
  return round_even(x / g) * g;
}
FACTZ_HD double own_bound_value(double x, double need) {
  const int e = exponent_bits(need);
  if (!(need > 0.0) || e == 0 || e >= 2046) return x;
  const double g = ldexp(1.0, e - 1022);
  return round_even(x / g) * g;
}

/// Whether an own-bound value is worth listing: any shorter float; for a double, one of at
/// most 24 significant bits, its own 24-bit rounding (else the 24-bit rounding of
/// round_exact_values, checked after, is the shorter candidate).
FACTZ_HD bool worth_listing(float) { return true; }
FACTZ_HD bool worth_listing(double r) { return double_bits(round_to_24_bits(r)) == double_bits(r); }

/// The exact-list flag and listed value of a vertex the quantizer stores (own bound id
/// `own_id`, bound `need` = bound_of_id(eb, own_id)): its value on the coarsest power-of-two
/// grid that keeps it within `need`, with flag kExactListOwnBound + id, id >= own_id the bound
/// id whose own_bound_value gives that grid, where the value differs from x, is worth listing
/// and passes within_bound against `need` (exactly); else x with kExactListFull. The grid of
/// id + 1 is twice that of id, and a point of a coarser grid is a point of every finer one, so
/// once a grid's nearest point misses the bound every coarser grid's does: the first miss
/// ends the search. The fewer significant bits cost less after the zstd stage (block ratio up
/// to 2.3 % higher at REL 1e-2 on the real fields, docs/benchmarks.md); the value stays within
/// the vertex's own bound, and the exact check still decides on it. need * 2^k is bound_of_id(eb, own_id + k) exactly: need is a
/// normal number (own_bound_value leaves x otherwise) and every step stays at most eb.
template <class T>
FACTZ_HD uint8_t list_exact(T x, int own_id, T need, T& value) {
  if (own_id > 0) {
    const T r = own_bound_value(x, need);
    if (!(r == x) && worth_listing(r) && within_bound(r, x, need)) {
      value = r;
      int id = own_id;
      for (T bound = need * T(2); id < kMaxBoundId; bound *= T(2)) {
        const T c = own_bound_value(x, bound);
        if (c == x || !worth_listing(c) || !within_bound(c, x, need)) break;
        value = c;
        ++id;
      }
      return uint8_t(kExactListOwnBound + id);
    }
  }
  value = x;
  return kExactListFull;
}

/// The listed value of a vertex with exact flag `flag` (kExactListFull or
/// kExactListOwnBound + id) of a plane quantized with bound eb.
template <class T>
FACTZ_HD T listed_value(T x, uint8_t flag, T eb) {
  return flag >= kExactListOwnBound ? own_bound_value(x, bound_of_id(eb, flag - kExactListOwnBound)) : x;
}

}  // namespace factz::detail
