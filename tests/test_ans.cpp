// Byte-plane rANS coder: round trips, determinism, size against Huffman, the per-lane
// kernels and hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "codec/ans.hpp"
#include "codec/huffman.hpp"
#include "kernels/rans.hpp"
#include "support/codes.hpp"

namespace factz::detail {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << kAnsChunkLog2;
constexpr uint16_t kCenters[] = {kAnsCodeCenter, 0};

std::vector<uint8_t> encode(const std::vector<uint16_t>& symbols, uint16_t center = kAnsCodeCenter,
                            int threads = 2) {
  std::vector<uint8_t> blob;
  const Status s = ans_encode(symbols, center, blob, threads);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return blob;
}

void expect_round_trip(const std::vector<uint16_t>& symbols, uint16_t center = kAnsCodeCenter, int threads = 2) {
  const std::vector<uint8_t> blob = encode(symbols, center, threads);
  std::vector<uint16_t> decoded(symbols.size(), 0xABCD);
  const Status s = ans_decode(blob, center, decoded, threads);
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(decoded == symbols);
}

void expect_round_trip_both_centers(const std::vector<uint16_t>& symbols) {
  for (const uint16_t center : kCenters) {
    SCOPED_TRACE(center);
    expect_round_trip(symbols, center);
  }
}

// Quantization codes as predictors emit them: centred on 32768, two-sided geometric.
using testing::geometric_codes;
using testing::uniform_codes;

// Decoding must never crash; a successful decode of a damaged blob is allowed (not every
// change is detectable), any failure must be corrupt_stream.
void expect_safe_decode(const std::vector<uint8_t>& blob, uint16_t center, uint64_t n) {
  std::vector<uint16_t> decoded(n);
  const Status s = ans_decode(blob, center, decoded, 2);
  if (!s.ok()) {
    EXPECT_EQ(s.code(), Code::corrupt_stream) << s.to_string();
  }
}

// ---------------------------------------------------------------- kernels

TEST(Ans, ZigzagIsABijectionForAnyCenter) {
  for (const uint16_t center : {uint16_t{0}, uint16_t{1}, uint16_t{32768}, uint16_t{65535}}) {
    std::vector<uint8_t> seen(65536, 0);
    for (uint32_t s = 0; s < 65536; ++s) {
      const uint16_t z = ans_zigzag(static_cast<uint16_t>(s), center);
      EXPECT_EQ(ans_unzigzag(z, center), s);
      seen[z] = 1;
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 65536);
  }
  // Small residuals around the center give small codes: 0, -1, +1, -2 -> 0, 1, 2, 3.
  EXPECT_EQ(ans_zigzag(32768, 32768), 0);
  EXPECT_EQ(ans_zigzag(32767, 32768), 1);
  EXPECT_EQ(ans_zigzag(32769, 32768), 2);
  EXPECT_EQ(ans_zigzag(32766, 32768), 3);
  EXPECT_EQ(ans_zigzag(0, 32768), 65535);
  EXPECT_EQ(ans_zigzag(7, 0), 14);
}

TEST(Ans, EncodeStepDividesExactlyForEveryFrequency) {
  std::mt19937_64 rng(1);
  for (uint32_t f = 1; f < kRansScale; ++f) {
    const RansEncodeSymbol sym = rans_encode_symbol(kRansScale - f, f);
    // States the encoder can hold after renormalization: [L/2^16... x_max).
    const uint32_t xs[] = {kRansLow, sym.x_max - 1, static_cast<uint32_t>(kRansLow + rng() % (sym.x_max - kRansLow)),
                           static_cast<uint32_t>(rng() % sym.x_max)};
    for (const uint32_t x : xs) {
      const uint64_t expect = (uint64_t{x} / f) * kRansScale + x % f + (kRansScale - f);
      ASSERT_EQ(rans_encode_put(x, sym), expect) << "f=" << f << " x=" << x;
      // The decoder's step undoes it.
      const uint32_t y = rans_encode_put(x, sym);
      const uint32_t slot = rans_decode_slot(y);
      ASSERT_GE(slot, kRansScale - f);
      const uint32_t entry = rans_decode_entry(f, slot - (kRansScale - f), 7);
      EXPECT_EQ(rans_entry_next_context(entry), 7u);
      EXPECT_EQ(rans_decode_advance(y, entry), x);
    }
  }
}

TEST(Ans, NormalizedFrequenciesSumToTheScale) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 200; ++trial) {
    std::array<uint64_t, 256> hist{};
    const int present = 2 + static_cast<int>(rng() % 255);
    for (int k = 0; k < present; ++k) hist[rng() % 256] = (trial % 3 == 0) ? 1 : rng() % (uint64_t{1} << (rng() % 40));
    hist[0] = std::max<uint64_t>(hist[0], 1);
    hist[255] = (trial % 2 == 0) ? (uint64_t{1} << 47) : 1;  // extreme skew on half of them
    std::array<uint32_t, 256> freqs{};
    ans_normalize_frequencies(hist, freqs);
    uint32_t sum = 0;
    for (int v = 0; v < 256; ++v) {
      EXPECT_EQ(freqs[v] == 0, hist[v] == 0) << v;
      sum += freqs[v];
    }
    EXPECT_EQ(sum, kRansScale);
  }
}

TEST(Ans, NormalizedFrequenciesBreakTiesByValue) {
  std::array<uint64_t, 256> hist{};
  hist[3] = hist[7] = hist[200] = 5;
  std::array<uint32_t, 256> freqs{};
  ans_normalize_frequencies(hist, freqs);
  EXPECT_EQ(freqs[3], 1366u);
  EXPECT_EQ(freqs[7], 1365u);
  EXPECT_EQ(freqs[200], 1365u);
  // Rare values keep one slot; the common one pays for them.
  hist.fill(0);
  hist[0] = 1'000'000'000;
  for (int v = 1; v < 256; ++v) hist[v] = 1;
  ans_normalize_frequencies(hist, freqs);
  EXPECT_EQ(freqs[0], kRansScale - 255);
  for (int v = 1; v < 256; ++v) EXPECT_EQ(freqs[v], 1u);
}

// The normalization's greedy rule written as the plain scan it is (every step scans every
// value): the encoder's heap must make the same choices, ties included.
std::array<uint32_t, 256> scan_normalized(const std::array<uint64_t, 256>& hist) {
  std::array<uint32_t, 256> f{};
  uint64_t total = 0;
  for (const uint64_t c : hist) total += c;
  int64_t sum = 0;
  for (int v = 0; v < 256; ++v) {
    f[v] = hist[v] == 0 ? 0 : static_cast<uint32_t>(std::max<uint64_t>(1, hist[v] * kRansScale / total));
    sum += f[v];
  }
  for (; sum < kRansScale; ++sum) {
    int best = -1;
    for (int v = 0; v < 256; ++v) {
      if (hist[v] == 0) continue;
      if (best < 0 || hist[v] * (2 * uint64_t{f[best]} + 1) > hist[best] * (2 * uint64_t{f[v]} + 1)) best = v;
    }
    ++f[best];
  }
  for (; sum > kRansScale; --sum) {
    int best = -1;
    for (int v = 0; v < 256; ++v) {
      if (hist[v] == 0 || f[v] <= 1) continue;
      if (best < 0 || hist[v] * (2 * uint64_t{f[best]} - 1) < hist[best] * (2 * uint64_t{f[v]} - 1)) best = v;
    }
    --f[best];
  }
  return f;
}

TEST(Ans, NormalizedFrequenciesFollowTheGreedyScan) {
  std::mt19937_64 rng(7);
  int grew = 0, shrank = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::array<uint64_t, 256> hist{};
    const int present = 2 + static_cast<int>(rng() % 255);
    const int shape = trial % 4;
    for (int k = 0; k < present; ++k) {
      const int v = static_cast<int>(rng() % 256);
      if (shape == 0) hist[v] = 1 + rng() % 3;  // many ties
      else if (shape == 1) hist[v] = 1 + rng() % 100000;
      else if (shape == 2) hist[v] = uint64_t{1} << (rng() % 30);  // powers of two: exact ties
      else hist[v] = k == 0 ? uint64_t{1} << 40 : 1 + rng() % 4;  // one dominant value
    }
    if (std::count_if(hist.begin(), hist.end(), [](uint64_t c) { return c != 0; }) < 2) hist[0] = hist[1] = 1;
    uint64_t total = 0;
    int64_t floor_sum = 0;
    for (const uint64_t c : hist) total += c;
    for (const uint64_t c : hist) floor_sum += c == 0 ? 0 : std::max<uint64_t>(1, c * kRansScale / total);
    grew += floor_sum < kRansScale;
    shrank += floor_sum > kRansScale;
    std::array<uint32_t, 256> freqs{};
    ans_normalize_frequencies(hist, freqs);
    ASSERT_EQ(freqs, scan_normalized(hist)) << "trial " << trial;
  }
  EXPECT_GT(grew, 100);  // both repair directions are exercised
  EXPECT_GT(shrank, 100);
}

// ---------------------------------------------------------------- round trips

TEST(Ans, RoundTripsEmptyInput) {
  for (const uint16_t center : kCenters) {
    expect_round_trip({}, center);
    EXPECT_LE(encode({}, center).size(), 16u);
  }
}

TEST(Ans, RoundTripsSingleSymbolInConstantSpace) {
  for (uint64_t n : {uint64_t{1}, uint64_t{31}, uint64_t{32}, uint64_t{33}, kChunk + 3, 3 * kChunk}) {
    for (const uint16_t value : {uint16_t{0}, uint16_t{65535}, uint16_t{32768}, uint16_t{1234}}) {
      const std::vector<uint16_t> v(n, value);
      expect_round_trip_both_centers(v);
      EXPECT_LE(encode(v).size(), 16u);  // both planes constant: header + 2 x 2 bytes
    }
  }
}

TEST(Ans, RoundTripsTwoSymbols) {
  std::vector<uint16_t> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 7 == 0) ? 0 : 65535;
  expect_round_trip_both_centers(v);
}

TEST(Ans, RoundTripsUniformOverAllSymbols) {
  std::vector<uint16_t> v(4 * 65536);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(5));
  expect_round_trip_both_centers(v);
  expect_round_trip_both_centers(uniform_codes(3 * kChunk + 11, 6));
  // Uniform bytes cost 8 bits each, plus per plane the lane states (128 bytes a chunk), the
  // chunk table, the lane and context counts and one 261-byte table (contexts cannot pay
  // for their tables here).
  EXPECT_LT(encode(v).size(), 2 * v.size() + 2 * (4 * 132 + 2 + 261) + 16);
}

TEST(Ans, RoundTripsHighlySkewedCodes) {
  // Nearly all one code, with rare outliers scattered over the whole alphabet.
  std::vector<uint16_t> v(5 * kChunk, 32768);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 3000; ++k) v[rng() % v.size()] = static_cast<uint16_t>(rng());
  expect_round_trip_both_centers(v);
  // Far below Huffman's one bit per symbol.
  EXPECT_LT(encode(v).size(), v.size() / 16);
}

TEST(Ans, RoundTripsGeometricCodes) {
  for (double p : {0.9, 0.5, 0.1, 0.01, 0.001}) {
    SCOPED_TRACE(p);
    expect_round_trip_both_centers(geometric_codes(2 * kChunk + 5, p, 8));
  }
}

TEST(Ans, RoundTripsSmallIdStreamsWithCenterZero) {
  std::mt19937_64 rng(15);
  std::vector<uint16_t> ids(100'000);
  for (auto& id : ids) id = static_cast<uint16_t>(std::min<uint64_t>(rng() % 8 + rng() % 8, 12));
  expect_round_trip(ids, 0);
  // Ids below 128 leave the high plane constant.
  EXPECT_LT(encode(ids, 0).size(), ids.size() / 2);
}

TEST(Ans, RoundTripsAwkwardSizes) {
  std::mt19937_64 rng(9);
  std::vector<uint64_t> sizes = {1,          2,      31,         32,         33,        63,
                                 64,         65,     kChunk - 1, kChunk,     kChunk + 1, kChunk + 31,
                                 kChunk + 33, 2 * kChunk - 1, 3 * kChunk + 1};
  for (int k = 0; k < 6; ++k) sizes.push_back(rng() % (4 * kChunk));
  for (uint64_t n : sizes) {
    SCOPED_TRACE(n);
    const int threads = 1 + static_cast<int>(n % 3);
    for (const uint16_t center : kCenters) {
      expect_round_trip(geometric_codes(n, 0.3, static_cast<uint32_t>(n)), center, threads);
      expect_round_trip(geometric_codes(n, 0.002, static_cast<uint32_t>(n + 1)), center, threads);
      expect_round_trip(uniform_codes(n, static_cast<uint32_t>(n + 2)), center, threads);
    }
  }
}

TEST(Ans, SameBytesForAnyThreadCount) {
  for (const auto& v : {geometric_codes(5 * kChunk + 123, 0.2, 10), geometric_codes(3 * kChunk, 0.002, 16),
                        uniform_codes(2 * kChunk + 1, 11), geometric_codes(3, 0.2, 12)}) {
    for (const uint16_t center : kCenters) {
      const std::vector<uint8_t> one = encode(v, center, 1);
      EXPECT_EQ(encode(v, center, 2), one);
      EXPECT_EQ(encode(v, center, 3), one);
      EXPECT_EQ(encode(v, center, 0), one);
      for (const int threads : {1, 2, 3}) {
        std::vector<uint16_t> decoded(v.size());
        ASSERT_TRUE(ans_decode(one, center, decoded, threads).ok());
        EXPECT_EQ(decoded, v);
      }
    }
  }
}

// The encoder's per-thread pair counts are cleared lazily, row by row as inputs first use
// them (PairCounts::clean_row): the bytes of an input must not depend on what the thread
// encoded before. Each input is encoded by a fresh thread, then by one thread after a
// history of inputs with other byte values, small (rows cleared one by one) and large (all
// rows cleared), with and without escapes.
TEST(Ans, BytesDoNotDependOnWhatTheThreadEncodedBefore) {
  std::vector<std::vector<uint16_t>> inputs = {
      geometric_codes(5000, 0.2, 3),        geometric_codes(70000, 0.002, 4), uniform_codes(9000, 5),
      geometric_codes(kChunk + 17, 0.05, 6), geometric_codes(3, 0.2, 7),       uniform_codes(300, 8)};
  std::vector<uint16_t> skewed(200000, kAnsCodeCenter);  // rare values: escapes
  for (size_t i = 0; i < skewed.size(); i += 997) skewed[i] = uint16_t(kAnsCodeCenter + 1 + (i % 40) * 37);
  inputs.push_back(skewed);
  inputs.push_back(geometric_codes((uint64_t{1} << 20) + 5, 0.01, 9));  // the large path
  for (const uint16_t center : kCenters)
    for (const bool escapes : {false, true}) {
      std::vector<std::vector<uint8_t>> fresh(inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i) {
        std::thread t([&] { ASSERT_TRUE(ans_encode(inputs[i], center, fresh[i], 1, kAnsEncoderMaxLanes, escapes).ok()); });
        t.join();
      }
      std::thread t([&] {
        for (int pass = 0; pass < 2; ++pass)
          for (size_t j = 0; j < inputs.size(); ++j) {
            const size_t i = pass == 0 ? j : inputs.size() - 1 - j;  // forwards, then backwards
            std::vector<uint8_t> blob;
            ASSERT_TRUE(ans_encode(inputs[i], center, blob, 1, kAnsEncoderMaxLanes, escapes).ok());
            EXPECT_EQ(blob, fresh[i]) << "input " << i << " pass " << pass << " center " << center;
            std::vector<uint16_t> decoded(inputs[i].size());
            ASSERT_TRUE(ans_decode(blob, center, decoded, 1).ok());
            EXPECT_EQ(decoded, inputs[i]);
          }
      });
      t.join();
    }
}

// ---------------------------------------------------------------- size

// Order-0 entropy of the symbols, in bits.
double order0_bits(const std::vector<uint16_t>& v) {
  std::vector<uint64_t> hist(65536, 0);
  for (uint16_t s : v) ++hist[s];
  double bits = 0;
  for (uint64_t c : hist) {
    if (c != 0) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / static_cast<double>(v.size()));
  }
  return bits;
}

TEST(Ans, HighPlaneOfSmallResidualsIsNearlyFree) {
  const std::vector<uint16_t> v = geometric_codes(8 * kChunk, 0.3, 13);
  EXPECT_LT(8.0 * static_cast<double>(encode(v).size()), order0_bits(v) * 1.01 + 8 * 2048);
}

TEST(Ans, CompressesAboutAsWellAsHuffman) {
  for (double p : {0.7, 0.3, 0.1, 0.03, 0.01, 0.003}) {
    SCOPED_TRACE(p);
    const std::vector<uint16_t> v = geometric_codes(8 * kChunk, p, 14);
    std::vector<uint8_t> huff;
    ASSERT_TRUE(huffman_encode(v, huff, 2).ok());
    EXPECT_LT(static_cast<double>(encode(v).size()), 1.03 * static_cast<double>(huff.size()));
  }
}

// ---------------------------------------------------------------- hostile input

TEST(Ans, RejectsWrongSymbolCountAndCenter) {
  const std::vector<uint16_t> v = geometric_codes(100, 0.03, 14);
  const std::vector<uint8_t> blob = encode(v);
  std::vector<uint16_t> fewer(99), more(101), same(100);
  EXPECT_EQ(ans_decode(blob, kAnsCodeCenter, fewer, 1).code(), Code::corrupt_stream);
  EXPECT_EQ(ans_decode(blob, kAnsCodeCenter, more, 1).code(), Code::corrupt_stream);
  EXPECT_EQ(ans_decode(blob, 0, same, 1).code(), Code::corrupt_stream);
  EXPECT_TRUE(ans_decode(blob, kAnsCodeCenter, same, 1).ok());
}

TEST(Ans, RejectsTrailingBytesAndEveryTruncation) {
  for (const auto& v : {geometric_codes(300, 0.01, 17), std::vector<uint16_t>(50, 9), std::vector<uint16_t>{}}) {
    std::vector<uint8_t> blob = encode(v);
    std::vector<uint16_t> decoded(v.size());
    for (size_t len = 0; len < blob.size(); ++len) {
      const std::vector<uint8_t> cut(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(len));
      EXPECT_EQ(ans_decode(cut, kAnsCodeCenter, decoded, 2).code(), Code::corrupt_stream) << len;
    }
    blob.push_back(0);
    EXPECT_EQ(ans_decode(blob, kAnsCodeCenter, decoded, 2).code(), Code::corrupt_stream);
  }
}

TEST(Ans, SurvivesBitFlipsEverywhereInASmallBlob) {
  // Both planes rANS-coded (with two lanes each) in few bytes.
  const std::vector<uint16_t> v = geometric_codes(800, 0.005, 18);
  const std::vector<uint8_t> blob = encode(v);
  ASSERT_EQ(blob[12], 1) << "the low plane should be rANS-coded for this test";
  int detected = 0, flips = 0;
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = blob;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      std::vector<uint16_t> decoded(v.size());
      const Status s = ans_decode(bad, kAnsCodeCenter, decoded, 2);
      ++flips;
      if (!s.ok()) {
        EXPECT_EQ(s.code(), Code::corrupt_stream);
        ++detected;
      } else if (byte != 1) {
        // Byte 1 is the chunk size; any accepted value above 800 symbols means one chunk,
        // so that flip gives another valid blob for the same symbols.
        EXPECT_NE(decoded, v) << "flip at byte " << byte << " bit " << bit << " went unnoticed";
      }
    }
  }
  // The final-state and exact-length checks catch almost every flip.
  EXPECT_GT(detected, flips * 9 / 10);
}

TEST(Ans, SurvivesDamageInLargeBlobs) {
  const std::vector<uint16_t> v = geometric_codes(3 * kChunk + 77, 0.01, 19);
  const std::vector<uint8_t> blob = encode(v);
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<uint8_t> bad = blob;
    const int hits = 1 + static_cast<int>(rng() % 4);
    for (int h = 0; h < hits; ++h) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    if (trial % 3 == 0) bad.resize(rng() % bad.size());
    expect_safe_decode(bad, kAnsCodeCenter, v.size());
  }
}

// Runs of equal ids from a small alphabet, as the speculative mode's bound ids come: the
// order-1 contexts code them far below their order-0 entropy, which bounds Huffman.
std::vector<uint16_t> id_runs(uint64_t n, double mean_run, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::geometric_distribution<int> run(1.0 / mean_run);
  std::vector<uint16_t> v;
  v.reserve(n);
  while (v.size() < n) {
    const uint16_t id = static_cast<uint16_t>(20 + rng() % 8);
    for (int k = run(rng) + 1; k > 0 && v.size() < n; --k) v.push_back(id);
  }
  return v;
}


TEST(Ans, ContextsCodeRunsFarBelowTheirOrder0Entropy) {
  for (const uint64_t n : {uint64_t{20000}, 3 * kChunk + 5}) {
    SCOPED_TRACE(n);
    const std::vector<uint16_t> v = id_runs(n, 20, 21);
    expect_round_trip(v, 0);
    const std::vector<uint8_t> blob = encode(v, 0);
    std::vector<uint8_t> huff;
    ASSERT_TRUE(huffman_encode(v, huff, 2).ok());
    // About 3 bits per symbol at order 0; a run of mean 20 costs about log2(20) + 3 bits.
    EXPECT_LT(8.0 * static_cast<double>(blob.size()), 0.4 * order0_bits(v));
    EXPECT_LT(2 * blob.size(), huff.size());
  }
}

TEST(Ans, SparsePlanesRoundTripAndStaySmall) {
  // Small residuals with a few large ones: the high plane is a handful of exceptions. With
  // center 0 the same symbols make a low plane of rare exceptions too.
  std::mt19937_64 rng(22);
  for (const uint64_t n : {uint64_t{1}, uint64_t{700}, kChunk - 1, kChunk + 1, 4 * kChunk + 3}) {
    SCOPED_TRACE(n);
    std::vector<uint16_t> v = geometric_codes(n, 0.9, static_cast<uint32_t>(n));
    std::vector<uint16_t> w(n, 0);
    for (int k = 0; k < 5; ++k) {
      v[rng() % n] = static_cast<uint16_t>(rng());
      w[rng() % n] = static_cast<uint16_t>(rng() % 3);
    }
    expect_round_trip_both_centers(v);
    expect_round_trip_both_centers(w);
    // Five exceptions in a zero stream cost a few bytes each, whatever n.
    EXPECT_LT(encode(w, 0).size(), 12 + 2 * (2 + 4 + 5 * 4) + (n > 700 ? 0 : 0)) << "n=" << n;
  }
  // A damaged sparse plane decodes safely (its bytes carry no redundancy; the container's
  // CRC-32C catches such damage in a stream).
  std::vector<uint16_t> w(5000, 0);
  w[17] = 1;
  w[4000] = 2;
  const std::vector<uint8_t> blob = encode(w, 0);
  ASSERT_EQ(blob[12], 2) << "the low plane should be sparse for this test";
  for (size_t byte = 0; byte < blob.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = blob;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      expect_safe_decode(bad, 0, w.size());
    }
  }
}

TEST(Ans, LaneCountsFollowTheDataAndBytesNotTheThreads) {
  // Nearly constant, run-structured and spread data at sizes around lane and chunk
  // boundaries: the encoder picks 1 to 8 lanes (up to 32 when asked: the format's limit)
  // and 1 to 16 contexts per plane.
  for (const uint64_t n : {uint64_t{2}, uint64_t{255}, uint64_t{256}, uint64_t{2047}, uint64_t{2049},
                           uint64_t{8191}, kChunk - 3, kChunk + 7, 2 * kChunk + 4097}) {
    SCOPED_TRACE(n);
    std::mt19937_64 rng(n);
    std::vector<uint16_t> nearly_constant(n, 32768);
    for (uint64_t k = 0; k < n / 50 + 1; ++k) nearly_constant[rng() % n] = static_cast<uint16_t>(32768 + rng() % 5);
    for (const auto& v : {nearly_constant, id_runs(n, 6, 23), geometric_codes(n, 0.05, 24)}) {
      for (const uint16_t center : kCenters) {
        for (const uint32_t max_lanes : {kAnsEncoderMaxLanes, uint32_t{16}, uint32_t{32}}) {
          std::vector<uint8_t> one, three;
          ASSERT_TRUE(ans_encode(v, center, one, 1, max_lanes).ok());
          ASSERT_TRUE(ans_encode(v, center, three, 3, max_lanes).ok());
          EXPECT_EQ(three, one);
          for (const int threads : {1, 2}) {
            std::vector<uint16_t> decoded(v.size());
            const Status st = ans_decode(one, center, decoded, threads);
            ASSERT_TRUE(st.ok()) << st.to_string() << " max_lanes=" << max_lanes;
            ASSERT_EQ(decoded, v) << "max_lanes=" << max_lanes;
          }
        }
      }
    }
  }
}

TEST(Ans, RejectsBadLaneAndContextHeaders) {
  const std::vector<uint16_t> v = geometric_codes(5000, 0.05, 25);
  const std::vector<uint8_t> blob = encode(v);
  ASSERT_EQ(blob[12], 1);  // low plane rANS: lanes at byte 13, contexts at 14, map after
  const auto rejected = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> bad = blob;
    bad[at] = value;
    std::vector<uint16_t> decoded(v.size());
    const Status s = ans_decode(bad, kAnsCodeCenter, decoded, 2);
    return s.code() == Code::corrupt_stream;
  };
  EXPECT_TRUE(rejected(13, 0));
  EXPECT_TRUE(rejected(13, 33));
  EXPECT_TRUE(rejected(14, 0));
  EXPECT_TRUE(rejected(14, 17));
  EXPECT_TRUE(rejected(12, 3));  // no such plane mode
  if (blob[14] >= 3) {
    EXPECT_TRUE(rejected(16, blob[15]));  // the map repeats a value
  }
}

TEST(Ans, SurvivesRandomBytes) {
  std::mt19937_64 rng(21);
  const std::vector<uint8_t> valid = encode(geometric_codes(500, 0.01, 22));
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes(rng() % 700);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    // Half of them keep a plausible header so the planes get parsed.
    if (trial % 2 == 0 && bytes.size() >= 12) std::copy(valid.begin(), valid.begin() + 12, bytes.begin());
    expect_safe_decode(bytes, kAnsCodeCenter, 500);
    expect_safe_decode(bytes, kAnsCodeCenter, rng() % 100);
  }
}

}  // namespace
}  // namespace factz::detail
