// The mask coder (codec/mask_coder.hpp) on its own: round trips on every kind of mask and
// shape, the bytes it has always written, and strict rejection of truncated input.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codec/mask_coder.hpp"
#include "format/crc32.hpp"

namespace factz::detail {
namespace {

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

struct TestMask {
  int64_t nx, ny;
  std::vector<uint8_t> bytes;  // nonzero = set (not only 1)
};

/// Six kinds of mask on eight shapes (single vertices, single rows and columns, grids smaller
/// than the context, and larger ones): none set, all set, scattered holes, noise, a blob (a
/// coastline), stripes with other nonzero bytes than 1.
std::vector<TestMask> test_masks() {
  std::vector<TestMask> out;
  const int64_t shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {3, 5}, {5, 3}, {64, 48}, {257, 131}};
  int variant = 0;
  for (const auto& s : shapes) {
    const int64_t nx = s[0], ny = s[1];
    for (int kind = 0; kind < 6; ++kind, ++variant) {
      TestMask m{nx, ny, std::vector<uint8_t>(size_t(nx * ny))};
      for (int64_t y = 0; y < ny; ++y)
        for (int64_t x = 0; x < nx; ++x) {
          const uint64_t h = mix64(uint64_t(variant) * 1000003u + uint64_t(y * nx + x));
          const int64_t dx = x - nx / 3, dy = y - ny / 2;
          uint8_t b = 0;
          switch (kind) {
            case 0: b = 0; break;
            case 1: b = 1; break;
            case 2: b = (h % 100) < 3; break;
            case 3: b = h & 1; break;
            case 4: b = dx * dx + dy * dy < (nx * nx + ny * ny) / 16; break;
            default: b = ((x + 2 * y) / 3) % 2; break;
          }
          m.bytes[size_t(y * nx + x)] = uint8_t(kind == 5 && h % 7 == 0 ? 2 : b);
        }
      out.push_back(std::move(m));
    }
  }
  return out;
}

TEST(MaskCoder, RoundTripsEveryKindOfMaskAndShape) {
  for (const TestMask& m : test_masks()) {
    std::vector<uint8_t> coded, back;
    encode_mask(m.bytes, m.nx, m.ny, coded);
    ASSERT_TRUE(decode_mask(coded, m.nx, m.ny, back).ok()) << m.nx << "x" << m.ny;
    ASSERT_EQ(back.size(), m.bytes.size());
    for (size_t k = 0; k < back.size(); ++k) ASSERT_EQ(back[k], m.bytes[k] != 0 ? 1 : 0) << m.nx << "x" << m.ny << " " << k;
  }
}

// The coded bytes are part of the stream format (docs/format.md, "Masks"): these are the
// bytes of the ten-lookup context the coder had before its sliding windows (bd47535).
TEST(MaskCoder, WritesTheBytesItAlwaysWrote) {
  uint32_t crc = 0;
  size_t total = 0;
  for (const TestMask& m : test_masks()) {
    std::vector<uint8_t> coded;
    encode_mask(m.bytes, m.nx, m.ny, coded);
    crc = crc32c(coded, crc);
    total += coded.size();
  }
  EXPECT_EQ(total, 8383u);
  EXPECT_EQ(crc, 0x651ABA5Du);
}

TEST(MaskCoder, RejectsTruncatedInput) {
  for (const TestMask& m : test_masks()) {
    if (m.nx * m.ny < 1000) continue;
    std::vector<uint8_t> coded, back;
    encode_mask(m.bytes, m.nx, m.ny, coded);
    for (size_t keep : {size_t{0}, size_t{4}, coded.size() / 2, coded.size() - 1}) {
      if (keep >= coded.size()) continue;
      const std::vector<uint8_t> cut(coded.begin(), coded.begin() + std::ptrdiff_t(keep));
      // The last bytes of a flush may carry no information the decoder reads: only a cut
      // that loses bytes it needs must fail, and a cut that decodes must decode the mask.
      const Status s = decode_mask(cut, m.nx, m.ny, back);
      if (s.ok()) {
        for (size_t k = 0; k < back.size(); ++k) ASSERT_EQ(back[k], m.bytes[k] != 0 ? 1 : 0);
      } else {
        EXPECT_EQ(s.code(), Code::corrupt_stream);
      }
    }
  }
  // A few bytes for a large declared grid: rejected (the decoder stops at the end of its bytes
  // instead of decoding every vertex first).
  std::vector<uint8_t> back;
  const std::vector<uint8_t> few = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc};
  const Status s = decode_mask(few, 4000, 3000, back);
  EXPECT_EQ(s.code(), Code::corrupt_stream) << s.to_string();
  const Status row = decode_mask(few, 12000000, 1, back);  // one long row
  EXPECT_EQ(row.code(), Code::corrupt_stream) << row.to_string();
}

}  // namespace
}  // namespace factz::detail
