// Lossy coding of a 1D coefficient array with a max-abs tolerance (the assumption of the
// nodal error theorem): the FaCTz backbone (ABS linear quantization + Huffman or
// bit-packing + zstd) or ZFP fixed-accuracy, both checked after decoding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/flow.hpp"

namespace factz::flow::detail {

/// Appends the payload for `c` to `out`. tolerance 0 stores the values exactly.
Status encode_coefficients(CoefficientCoder coder, std::span<const double> c, double tolerance,
                           std::vector<uint8_t>& out);
/// Decodes exactly c.size() values from `payload` (untrusted).
Status decode_coefficients(CoefficientCoder coder, std::span<const uint8_t> payload, double tolerance,
                           std::span<double> c);

}  // namespace factz::flow::detail
