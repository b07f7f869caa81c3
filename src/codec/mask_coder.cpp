#include "codec/mask_coder.hpp"

#include <array>
#include <utility>
#include <vector>

#include "codec/range_coder.hpp"

namespace factz::detail {
namespace {

// Probabilities of a 0 bit in 1/2048 units, moved by 1/32 of the distance per bit.
constexpr int kProbBits = 11;
constexpr uint32_t kProbOne = 1u << kProbBits;
constexpr int kMoveBits = 5;
constexpr int kContextBits = 10;

using Probs = std::array<uint16_t, 1u << kContextBits>;

Probs initial_probs() {
  Probs p;
  p.fill(uint16_t(kProbOne / 2));
  return p;
}

/// Visits the bits of an nx x ny bitmap in row order with the context of each: the ten
/// causal neighbours (outside the grid: 0), bit k of the context being
///   row y-2:       x-1 (0)  x (1)  x+1 (2)
///   row y-1: x-2 (3) x-1 (4)  x (5)  x+1 (6) x+2 (7)
///   row y:   x-2 (8) x-1 (9)
/// `code(context, k)` codes bit k (k = y nx + x) and returns it (0 or 1); after each row and
/// every 4096 bits of a row, `stop()` ends the visit early when true (a decoder past the end
/// of its bytes, even on a grid of one long row). The context
/// slides along the row (each of its three windows shifts in one bit per step) over
/// zero-padded copies of the two rows above, so no neighbour is bounds-checked.
template <class Code, class Stop>
void for_each_bit_in_context(int64_t nx, int64_t ny, Code&& code, Stop&& stop) {
  // Padded rows: r[x + 2] = bit (x, row), zero for x in [-2, 0) and [nx, nx + 3).
  std::vector<uint8_t> above2(size_t(nx + 5), 0), above1(size_t(nx + 5), 0), row(size_t(nx + 5), 0);
  for (int64_t y = 0; y < ny; ++y) {
    const uint8_t* p2 = above2.data();
    const uint8_t* p1 = above1.data();
    uint32_t w2 = uint32_t(p2[1]) | uint32_t(p2[2]) << 1 | uint32_t(p2[3]) << 2;
    uint32_t w1 = uint32_t(p1[0]) | uint32_t(p1[1]) << 1 | uint32_t(p1[2]) << 2 | uint32_t(p1[3]) << 3 |
                  uint32_t(p1[4]) << 4;
    uint32_t w0 = 0;
    for (int64_t x = 0; x < nx; ++x) {
      const uint32_t b = code(w2 | w1 << 3 | w0 << 8, y * nx + x);
      row[size_t(x + 2)] = uint8_t(b);
      w2 = (w2 >> 1) | uint32_t(p2[x + 4]) << 2;
      w1 = (w1 >> 1) | uint32_t(p1[x + 5]) << 4;
      w0 = (w0 >> 1) | b << 1;
      if ((x & 4095) == 4095 && stop()) return;
    }
    std::swap(above2, above1);  // the row two above drops out; this row becomes the one above
    std::swap(above1, row);
    if (stop()) return;
  }
}

using RangeEncoder = BinaryRangeEncoder<kProbBits, kMoveBits>;
using RangeDecoder = BinaryRangeDecoder<kProbBits, kMoveBits>;

}  // namespace

void encode_mask(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::vector<uint8_t>& out) {
  out.clear();
  RangeEncoder rc(out);
  Probs probs = initial_probs();
  auto code = [&](uint32_t ctx, int64_t k) {
    const bool b = mask[size_t(k)] != 0;
    rc.bit(probs[ctx], int(b));
    return uint32_t(b);
  };
  for_each_bit_in_context(nx, ny, code, [] { return false; });
  rc.finish();
}

Status decode_mask(std::span<const uint8_t> in, int64_t nx, int64_t ny, std::vector<uint8_t>& mask) {
  if (in.size() < 5) return corrupt_stream("mask: coded bitmap truncated");
  mask.assign(size_t(nx * ny), 0);
  RangeDecoder rc(in);
  Probs probs = initial_probs();
  auto code = [&](uint32_t ctx, int64_t k) {
    const uint32_t b = uint32_t(rc.bit(probs[ctx]));
    mask[size_t(k)] = uint8_t(b);
    return b;
  };
  // Past the end of the coded bytes the rest is corrupt anyway: a truncated mask of a large
  // declared grid is rejected without decoding every vertex of it.
  for_each_bit_in_context(nx, ny, code, [&] { return rc.overrun(); });
  if (rc.overrun()) return corrupt_stream("mask: coded bitmap truncated");
  return Status::Ok();
}

}  // namespace factz::detail
