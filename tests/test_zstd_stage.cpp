// zstd stage: round trips and strict rejection of frames that do not fit the contract.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "codec/zstd_stage.hpp"

namespace factz::detail {
namespace {

std::vector<uint8_t> sample_bytes(size_t n, uint32_t seed) {
  // Compressible: small values with runs, like entropy-coded quantization sections.
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(rng() % 8 == 0 ? rng() : i / 64);
  return v;
}

std::vector<uint8_t> compress(const std::vector<uint8_t>& in, int level = 3) {
  std::vector<uint8_t> frame;
  const Status s = zstd_compress(in, level, frame);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return frame;
}

TEST(ZstdStage, RoundTripsBytes) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{3} << 20}) {
    const std::vector<uint8_t> in = sample_bytes(n, static_cast<uint32_t>(n));
    const std::vector<uint8_t> frame = compress(in);
    std::vector<uint8_t> out = {1, 2, 3};
    const Status s = zstd_decompress(frame, in.size(), out);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(out, in);
  }
}

TEST(ZstdStage, RoundTripsHighRatioFrames) {
  // 48 MiB of zeros compress to a few KiB: the output buffer has to grow.
  const std::vector<uint8_t> in(size_t{48} << 20, 0);
  const std::vector<uint8_t> frame = compress(in, 1);
  ASSERT_LT(frame.size(), size_t{1} << 16);
  std::vector<uint8_t> out;
  ASSERT_TRUE(zstd_decompress(frame, in.size(), out).ok());
  EXPECT_EQ(out, in);
}

TEST(ZstdStage, IsDeterministicAtEachLevel) {
  const std::vector<uint8_t> in = sample_bytes(200000, 1);
  for (int level : {1, 3, 9, 19}) EXPECT_EQ(compress(in, level), compress(in, level));
}

TEST(ZstdStage, RejectsBadLevel) {
  std::vector<uint8_t> out;
  EXPECT_EQ(zstd_compress(sample_bytes(10, 2), 1000, out).code(), Code::invalid_argument);
}

TEST(ZstdStage, RejectsWrongExpectedSize) {
  const std::vector<uint8_t> in = sample_bytes(5000, 3);
  const std::vector<uint8_t> frame = compress(in);
  std::vector<uint8_t> out;
  EXPECT_EQ(zstd_decompress(frame, in.size() - 1, out).code(), Code::corrupt_stream);
  EXPECT_EQ(zstd_decompress(frame, in.size() + 1, out).code(), Code::corrupt_stream);
  EXPECT_EQ(zstd_decompress(frame, 0, out).code(), Code::corrupt_stream);
  EXPECT_TRUE(out.empty());
}

TEST(ZstdStage, RejectsHugeExpectedSize) {
  std::vector<uint8_t> out;
  const std::vector<uint8_t> frame = compress(sample_bytes(10, 4));
  EXPECT_EQ(zstd_decompress(frame, kZstdMaxExpectedSize + 1, out).code(), Code::invalid_argument);
}

TEST(ZstdStage, RejectsTruncatedAndTrailingBytes) {
  const std::vector<uint8_t> in = sample_bytes(3000, 5);
  const std::vector<uint8_t> frame = compress(in);
  std::vector<uint8_t> out;
  for (size_t len = 0; len < frame.size(); ++len) {
    const std::span<const uint8_t> cut(frame.data(), len);
    ASSERT_EQ(zstd_decompress(cut, in.size(), out).code(), Code::corrupt_stream) << len;
  }
  std::vector<uint8_t> longer = frame;
  longer.push_back(0);
  EXPECT_EQ(zstd_decompress(longer, in.size(), out).code(), Code::corrupt_stream);
  std::vector<uint8_t> twice = frame;
  twice.insert(twice.end(), frame.begin(), frame.end());
  EXPECT_EQ(zstd_decompress(twice, in.size(), out).code(), Code::corrupt_stream);
}

TEST(ZstdStage, RejectsGarbage) {
  std::mt19937_64 rng(6);
  std::vector<uint8_t> out;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bad(rng() % 200);
    for (auto& b : bad) b = static_cast<uint8_t>(rng());
    if (bad.size() >= 4 && trial % 2 == 0) {  // a valid magic, garbage after it
      bad[0] = 0x28, bad[1] = 0xB5, bad[2] = 0x2F, bad[3] = 0xFD;
    }
    const Status s = zstd_decompress(bad, rng() % 5000, out);
    EXPECT_EQ(s.code(), Code::corrupt_stream);
  }
}

TEST(ZstdStage, SurvivesBitFlips) {
  const std::vector<uint8_t> in = sample_bytes(20000, 7);
  const std::vector<uint8_t> frame = compress(in);
  std::vector<uint8_t> out;
  for (size_t byte = 0; byte < frame.size(); ++byte) {
    std::vector<uint8_t> bad = frame;
    bad[byte] ^= static_cast<uint8_t>(1u << (byte % 8));
    const Status s = zstd_decompress(bad, in.size(), out);
    if (s.ok()) {
      EXPECT_EQ(out.size(), in.size());
    } else {
      EXPECT_EQ(s.code(), Code::corrupt_stream);
    }
  }
}

}  // namespace
}  // namespace factz::detail
