// The exact values of a contour-tree stream on the lattice, coded against the decoder's
// prediction (format version 14, docs/format.md "Scalar streams"). Version 11 stores them
// as raw floats; most of them (the simplified tree's nodes, the vertices whose interval
// left them no code) lie within a few steps of the Lorenzo prediction from the decoded
// values, so the distance between the two, counted in representable values, needs far
// fewer bits than the value itself.
//
// Each value x with reference ref (the Lorenzo prediction from the decoded values, 0 where
// that is not finite) becomes z = zigzag(ord(x) - ord(ref)) in W-bit wrap-around
// arithmetic (W = 32 for float, 64 for double; ord maps the bits to an unsigned integer
// that increases with the value, so the map is a bijection and every bit comes back). z is
// written with an adaptive Rice code: parameter k from the running mean of the z before it
// (a sum and a count, the sum halved with the count every 32 values), q = z >> k in unary
// (q ones and a zero) followed by the low k bits of z; q >= 24 is written as 24 ones and z in
// W bits. The section is one byte k0 (the running sum starts at 2^k0, so the first
// parameter is k0; the writer picks the k0 that codes its first values shortest), one byte
// t and, when t > 0, one byte k1, then the bits, most significant first, zero-padded to a
// whole byte. With t > 0 every value starts with a tag bit: 1 when ord(x) - ord(ref) is a
// multiple of 2^t (a value the quantizer put on that grid: an extremum of the tree stored a
// fraction of a step outward, scalar_quantizer.cpp), coded as the zigzag of the quotient
// with a Rice state of its own (starting at 2^k1); 0 for the others, coded as above.
// Integer arithmetic only, so writer and reader agree bit for bit on every machine.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codec/bit_io.hpp"
#include "factz/status.hpp"

namespace factz::detail {

/// The reference a decoder predicts an exact value from: `pred` if finite, else 0.
template <class T>
T exact_reference(T pred);

/// Whether `value` lies on the grid of shift `t` (> 0) around `ref`: ord(value) - ord(ref)
/// a multiple of 2^t (the values the quantizer's grid_value picks).
template <class T>
bool on_exact_grid(T value, T ref, int t);

/// Section 6 of a version 14 stream for `values` with references `refs` (same length, at
/// least one; values finite); `t` (0 <= t < W) the grid shift, 0 for none.
template <class T>
std::vector<uint8_t> encode_exact_residuals(std::span<const T> values, std::span<const T> refs, int t = 0);

/// The value on the grid of shift `t` (> 0) around exact_reference(pred) next to `f`:
/// the smallest at or above it with `up`, the largest at or below it otherwise; `f` itself
/// when that is not finite or the grid point does not exist (the grid wraps past the ends).
template <class T>
T grid_value(T f, T pred, int t, bool up);

/// Reads the values back one at a time, in the order they were written.
template <class T>
class ExactResidualReader {
 public:
  /// Checks the first byte; `section` must outlive the reader.
  static Result<ExactResidualReader> open(std::span<const uint8_t> section);
  /// The next value, predicted from `ref` (exact_reference of the decoder's prediction).
  /// corrupt_stream when the bits run out, a code is out of range or the value is not finite.
  Result<T> next(T ref);
  /// After the last value: every byte used, the padding bits zero.
  Status finish();

 private:
  ExactResidualReader(std::span<const uint8_t> section, int k0, int t, int k1);
  std::span<const uint8_t> section_;
  BitReader bits_;
  int t_ = 0;            // grid shift; 0: no grid values, no tag bits
  uint64_t sum_[2];      // Rice state of the full residuals [0] and of the grid ones [1]
  uint32_t count_[2] = {1, 1};
};

}  // namespace factz::detail
