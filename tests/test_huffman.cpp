// Canonical Huffman coder: round trips, determinism, code lengths and hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/huffman.hpp"
#include "support/codes.hpp"

namespace factz::detail {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << kHuffmanChunkLog2;

std::vector<uint8_t> encode(const std::vector<uint16_t>& symbols, int threads = 2) {
  std::vector<uint8_t> blob;
  const Status s = huffman_encode(symbols, blob, threads);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return blob;
}

void expect_round_trip(const std::vector<uint16_t>& symbols, int threads = 2) {
  const std::vector<uint8_t> blob = encode(symbols, threads);
  std::vector<uint16_t> decoded(symbols.size(), 0xABCD);
  const Status s = huffman_decode(blob, decoded, threads);
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(decoded == symbols);
}

// Quantization codes as predictors emit them: centred on 32768, two-sided geometric.
using testing::geometric_codes;
using testing::uniform_codes;

uint64_t read_varint(const std::vector<uint8_t>& blob, uint64_t& pos) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = blob.at(pos++);
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
}

// Offset of the payload in a valid blob: past the header, codebook and chunk table
// (layout in docs/codec.md).
uint64_t payload_offset(const std::vector<uint8_t>& blob, uint64_t n) {
  uint64_t pos = 10;
  const uint64_t runs = read_varint(blob, pos);
  for (uint64_t r = 0; r < runs; ++r) {
    (void)read_varint(blob, pos);
    pos += read_varint(blob, pos);
  }
  return pos + 4 * ((n + kChunk - 1) / kChunk);
}

TEST(Huffman, RoundTripsEmptyInput) {
  expect_round_trip({});
  const std::vector<uint8_t> blob = encode({});
  EXPECT_LE(blob.size(), 16u);
}

TEST(Huffman, RoundTripsSingleSymbol) {
  for (uint64_t n : {uint64_t{1}, uint64_t{7}, uint64_t{8}, uint64_t{9}, kChunk + 3}) {
    expect_round_trip(std::vector<uint16_t>(n, 65535));
    expect_round_trip(std::vector<uint16_t>(n, 0));
  }
}

TEST(Huffman, RoundTripsTwoSymbols) {
  std::vector<uint16_t> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 7 == 0) ? 0 : 65535;
  expect_round_trip(v);
}

TEST(Huffman, RoundTripsUniformOverAllSymbols) {
  std::vector<uint16_t> v(4 * kHuffmanAlphabet);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(5));
  expect_round_trip(v);
  expect_round_trip(uniform_codes(3 * kChunk + 11, 6));
}

TEST(Huffman, RoundTripsHighlySkewedCodes) {
  // Nearly all one code, with rare outliers scattered over the whole alphabet.
  std::vector<uint16_t> v(5 * kChunk, 32768);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 3000; ++k) v[rng() % v.size()] = static_cast<uint16_t>(rng());
  expect_round_trip(v);
}

TEST(Huffman, RoundTripsGeometricCodes) {
  for (double p : {0.9, 0.5, 0.1, 0.01}) expect_round_trip(geometric_codes(2 * kChunk + 5, p, 8));
}

TEST(Huffman, RoundTripsAwkwardSizes) {
  std::mt19937_64 rng(9);
  std::vector<uint64_t> sizes = {1, 2, 3, kChunk - 1, kChunk, kChunk + 1, 2 * kChunk - 1, 3 * kChunk + 1};
  for (int k = 0; k < 6; ++k) sizes.push_back(rng() % (4 * kChunk));
  for (uint64_t n : sizes) {
    SCOPED_TRACE(n);
    expect_round_trip(geometric_codes(n, 0.3, static_cast<uint32_t>(n)), 1 + static_cast<int>(n % 3));
  }
}

TEST(Huffman, SameBytesForAnyThreadCount) {
  for (const auto& v : {geometric_codes(5 * kChunk + 123, 0.2, 10), uniform_codes(2 * kChunk + 1, 11),
                        geometric_codes(3, 0.2, 12)}) {
    const std::vector<uint8_t> one = encode(v, 1);
    EXPECT_EQ(encode(v, 2), one);
    EXPECT_EQ(encode(v, 3), one);
    EXPECT_EQ(encode(v, 0), one);
    std::vector<uint16_t> decoded(v.size());
    ASSERT_TRUE(huffman_decode(one, decoded, 3).ok());
    EXPECT_EQ(decoded, v);
  }
}

TEST(Huffman, CompressesNearTheEntropy) {
  const std::vector<uint16_t> v = geometric_codes(8 * kChunk, 0.3, 13);
  std::vector<uint64_t> hist(kHuffmanAlphabet, 0);
  for (uint16_t s : v) ++hist[s];
  double bits = 0;
  for (uint64_t c : hist) {
    if (c != 0) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / v.size());
  }
  const double blob_bits = 8.0 * static_cast<double>(encode(v).size());
  EXPECT_LT(blob_bits, bits * 1.03 + 8 * 1024);
}

TEST(Huffman, CodeLengthsAreOptimalOnSmallExample) {
  const std::vector<uint64_t> hist = {4, 1, 0, 2, 1};
  std::vector<uint8_t> lengths(hist.size());
  huffman_code_lengths(hist, lengths);
  EXPECT_EQ(lengths, (std::vector<uint8_t>{1, 3, 0, 2, 3}));
}

TEST(Huffman, CodeLengthsBreakTiesBySymbolValue) {
  // Equal counts: the rarest-first order is by symbol value, so lower symbols get the
  // longer codes, whatever the histogram's other content.
  const std::vector<uint64_t> hist = {5, 5, 5};
  std::vector<uint8_t> lengths(hist.size());
  huffman_code_lengths(hist, lengths);
  EXPECT_EQ(lengths, (std::vector<uint8_t>{2, 2, 1}));
}

TEST(Huffman, CodeLengthsRespectTheLimitAndStayComplete) {
  // Fibonacci counts give a maximally deep Huffman tree (one level per symbol).
  std::vector<uint64_t> hist(60);
  hist[0] = hist[1] = 1;
  for (size_t i = 2; i < hist.size(); ++i) hist[i] = hist[i - 1] + hist[i - 2];
  hist.resize(kHuffmanAlphabet, 0);
  hist[kHuffmanAlphabet - 1] = 1;
  std::vector<uint8_t> lengths(hist.size());
  huffman_code_lengths(hist, lengths);
  uint64_t kraft = 0;
  for (uint8_t len : lengths) {
    EXPECT_LE(len, kHuffmanMaxCodeLength);
    if (len != 0) kraft += uint64_t{1} << (kHuffmanMaxCodeLength - len);
  }
  EXPECT_EQ(kraft, uint64_t{1} << kHuffmanMaxCodeLength);
  // Rarer symbols never get shorter codes.
  for (size_t i = 1; i < 60; ++i) EXPECT_GE(lengths[i - 1], lengths[i]);
}

TEST(Huffman, CodeLengthsOfEveryUsedSymbolFitTheLimit) {
  std::vector<uint64_t> hist(kHuffmanAlphabet);
  for (size_t i = 0; i < hist.size(); ++i) hist[i] = 1 + (i < 40 ? (uint64_t{1} << 40) >> i : 0);
  std::vector<uint8_t> lengths(hist.size());
  huffman_code_lengths(hist, lengths);
  uint64_t kraft = 0;
  for (uint8_t len : lengths) {
    ASSERT_GE(len, 1);
    ASSERT_LE(len, kHuffmanMaxCodeLength);
    kraft += uint64_t{1} << (kHuffmanMaxCodeLength - len);
  }
  EXPECT_EQ(kraft, uint64_t{1} << kHuffmanMaxCodeLength);
}

TEST(Huffman, RejectsWrongSymbolCount) {
  const std::vector<uint16_t> v = geometric_codes(100, 0.3, 14);
  const std::vector<uint8_t> blob = encode(v);
  std::vector<uint16_t> fewer(99), more(101);
  EXPECT_EQ(huffman_decode(blob, fewer, 1).code(), Code::corrupt_stream);
  EXPECT_EQ(huffman_decode(blob, more, 1).code(), Code::corrupt_stream);
}

TEST(Huffman, RejectsInvalidCodeOfSingleSymbolBlob) {
  std::vector<uint8_t> blob = encode(std::vector<uint16_t>(16, 3));
  blob.back() = 0xFF;  // the only code is "0": a 1 bit is no code at all
  std::vector<uint16_t> decoded(16);
  EXPECT_EQ(huffman_decode(blob, decoded, 1).code(), Code::corrupt_stream);
}

TEST(Huffman, RejectsEveryTruncation) {
  // Every length of a small blob, and of a two-chunk blob every length up to the payload
  // plus a sample inside it.
  for (uint64_t n : {uint64_t{2000}, kChunk + 300}) {
    const std::vector<uint16_t> v = geometric_codes(n, 0.4, 15);
    const std::vector<uint8_t> blob = encode(v);
    const uint64_t payload = payload_offset(blob, n);
    std::vector<uint16_t> decoded(n);
    for (uint64_t len = 0; len < blob.size(); len += (n < kChunk || len < payload + 64) ? 1 : 61) {
      const std::span<const uint8_t> cut(blob.data(), len);
      ASSERT_EQ(huffman_decode(cut, decoded, 2).code(), Code::corrupt_stream) << len;
    }
  }
}

TEST(Huffman, SurvivesBitFlipsAnywhere) {
  // Every bit of the header, codebook and chunk table; one random bit of sampled
  // payload bytes. Decoding must fail cleanly or produce some symbols, never crash.
  const std::vector<uint16_t> v = geometric_codes(2 * kChunk + 77, 0.2, 16);
  const std::vector<uint8_t> blob = encode(v);
  const uint64_t payload = payload_offset(blob, v.size());
  ASSERT_LT(payload, blob.size());
  const uint64_t table = payload - 4 * 3;
  std::vector<uint16_t> decoded(v.size());
  std::mt19937_64 rng(17);
  for (uint64_t byte = 0; byte < blob.size(); byte += (byte < payload ? 1 : 1 + rng() % 199)) {
    for (int bit = 0; bit < 8; ++bit) {
      const int flip = byte < payload ? bit : static_cast<int>(rng() % 8);
      std::vector<uint8_t> bad = blob;
      bad[byte] ^= static_cast<uint8_t>(1u << flip);
      const Status s = huffman_decode(bad, decoded, 2);
      if (byte >= table && byte < payload) {
        EXPECT_FALSE(s.ok()) << byte;  // any changed chunk size breaks the size balance
      }
      if (!s.ok()) {
        EXPECT_EQ(s.code(), Code::corrupt_stream);
      }
      if (byte >= payload) break;
    }
  }
}

TEST(Huffman, SurvivesRandomPayloadsAndCodebooks) {
  const std::vector<uint16_t> v = geometric_codes(kChunk + 5, 0.05, 18);
  const std::vector<uint8_t> blob = encode(v);
  const uint64_t payload = payload_offset(blob, v.size());
  std::vector<uint16_t> decoded(v.size());
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bad = blob;
    // Randomize the payload (valid framing) or everything after the header.
    const uint64_t from = trial % 2 == 0 ? payload : 10;
    for (uint64_t i = from; i < bad.size(); ++i) bad[i] = static_cast<uint8_t>(rng());
    const Status s = huffman_decode(bad, decoded, 2);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), Code::corrupt_stream);
    }
  }
}

TEST(Huffman, RejectsRandomBytes) {
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<uint8_t> bad(rng() % 300);
    for (auto& b : bad) b = static_cast<uint8_t>(rng());
    if (bad.size() >= 2 && trial % 2 == 0) {
      bad[0] = kHuffmanVersion;  // get past the header sometimes
      bad[1] = kHuffmanChunkLog2;
    }
    const uint64_t n = bad.size() >= 10 ? (rng() % 2000) : 0;
    if (bad.size() >= 10) {
      for (int k = 0; k < 8; ++k) bad[2 + k] = static_cast<uint8_t>(n >> (8 * k));
    }
    std::vector<uint16_t> decoded(n);
    const Status s = huffman_decode(bad, decoded, 1 + trial % 3);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), Code::corrupt_stream);
    }
  }
}

}  // namespace
}  // namespace factz::detail
