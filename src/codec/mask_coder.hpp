// Lossless coding of a bit mask on a 2D grid (the missing vertices of a field): each bit is
// coded by an adaptive binary range coder whose probability is chosen by a context of ten
// already coded neighbours (two rows above and the two to the left, as JBIG does), so long
// coastlines and large land areas cost a few hundredths of a bit per vertex. Integer
// arithmetic only: the bytes are the same on every machine. docs/format.md, "Masks".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

/// Codes mask (nx * ny bytes, nonzero = set) into `out` (replaced).
void encode_mask(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::vector<uint8_t>& out);

/// Decodes nx * ny bits from `in` into mask (0 or 1 per byte, resized). corrupt_stream when
/// the coded bytes end before the grid does.
Status decode_mask(std::span<const uint8_t> in, int64_t nx, int64_t ny, std::vector<uint8_t>& mask);

}  // namespace factz::detail
