// Byte-plane interleaved rANS coding of 16-bit symbols (paper section 4.3, Figure 5).
//
// Each symbol s becomes z = zigzag(s - center) (src/kernels/rans.hpp), z is split into a
// low-byte plane and a high-byte plane, and each plane is coded on its own: a plane with a
// single distinct byte costs two bytes, any other plane gets interleaved rANS with up to 32
// states per chunk, each state coding a contiguous segment, and up to 16 normalized
// frequency tables chosen by the previous byte of the segment (order-1 contexts: runs of
// equal codes and of equal ids cost far less than their order-0 entropy). Small residuals
// leave the high plane all zero, so it is nearly free. The output is a self-contained blob (byte layout in
// docs/codec.md, "ANS byte-plane coder"); chunks are coded independently, so encoding and
// decoding run in parallel, and the bytes depend only on (symbols, center), never on the
// thread count or the machine.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

/// Symbols per independently coded chunk, as log2 (one byte of each plane per symbol);
/// the last chunk may be shorter.
inline constexpr int kAnsChunkLog2 = 16;
/// Blob format version written in byte 0.
inline constexpr uint8_t kAnsVersion = 2;
/// Most states per chunk the encoder writes by default (the format allows 32).
inline constexpr uint32_t kAnsEncoderMaxLanes = 8;
/// Most contexts (frequency tables selected by the previous byte of a lane) per plane.
inline constexpr int kAnsMaxContexts = 16;
/// The center for quantization codes (symbols around 2^15); small id streams use 0.
inline constexpr uint16_t kAnsCodeCenter = 32768;

/// Normalized frequencies of one plane (docs/codec.md, "Frequency normalization"):
/// every byte value with a nonzero count gets a frequency >= 1, the others 0, and the
/// frequencies sum to exactly kRansScale (src/kernels/rans.hpp). Requires at least two
/// values with nonzero counts and a total count below 2^48. Deterministic: a function of
/// the histogram alone, ties broken by byte value.
void ans_normalize_frequencies(std::span<const uint64_t, 256> histogram, std::span<uint32_t, 256> freqs);

/// Encodes `symbols` into `out` (replacing its contents).
/// center: subtracted (modulo 2^16) before the zig-zag map; the decoder must be given the
///   same value. kAnsCodeCenter for quantization codes, 0 for small id streams.
/// threads: OpenMP threads to use (values below 1 mean 1); the bytes do not depend on it.
/// Returns invalid_argument for 2^48 or more symbols.
/// max_lanes: most states per chunk, 1..32 (default 8, see docs/codec.md; tests use more to
///   exercise the decoder's 16- and 32-lane paths).
Status ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& out, int threads,
                  uint32_t max_lanes = kAnsEncoderMaxLanes);

/// Decodes exactly symbols.size() symbols from the blob `in`, which must have been written
/// for that many symbols and the same center. Corrupted, truncated or random input returns
/// corrupt_stream and never reads or writes out of bounds.
/// threads: OpenMP threads to use (values below 1 mean 1).
Status ans_decode(std::span<const uint8_t> in, uint16_t center, std::span<uint16_t> symbols, int threads);

}  // namespace factz::detail
