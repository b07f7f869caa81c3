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
// parameter is k0; the writer picks the k0 that codes its first values shortest) and the
// bits, most significant first, zero-padded to a whole byte. Integer arithmetic only, so
// writer and reader agree bit for bit on every machine.
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

/// Section 6 of a version 14 stream for `values` with references `refs` (same length, at
/// least one; values finite).
template <class T>
std::vector<uint8_t> encode_exact_residuals(std::span<const T> values, std::span<const T> refs);

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
  ExactResidualReader(std::span<const uint8_t> section, int k0);
  std::span<const uint8_t> section_;
  BitReader bits_;
  uint64_t sum_;
  uint32_t count_ = 1;
};

}  // namespace factz::detail
