// The context coder of scalar codes (codec/context_coder.hpp): round trips over every symbol
// value, 2D and 3D grids, masks, tiny and multi-chunk grids; bytes independent of the thread
// count; smaller than order-0 coding where neighbouring codes are alike; and every damaged
// blob header, chunk table or chunk refused without a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/context_coder.hpp"
#include "codec/huffman.hpp"
#include "support/codes.hpp"

namespace factz::detail {
namespace {

std::vector<uint8_t> encode(const std::vector<uint16_t>& symbols, const CodeGrid& g, int threads = 2) {
  std::vector<uint8_t> blob;
  const Status s = context_encode(symbols, g, blob, threads);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return blob;
}

void expect_round_trip(const std::vector<uint16_t>& symbols, const CodeGrid& g) {
  const std::vector<uint8_t> blob = encode(symbols, g);
  for (int threads : {1, 2, 3}) {
    std::vector<uint16_t> back(symbols.size(), 0xABCD);
    const Status s = context_decode(blob, g, back, threads);
    ASSERT_TRUE(s.ok()) << s.to_string();
    ASSERT_TRUE(back == symbols) << threads << " threads";
    EXPECT_EQ(encode(symbols, g, threads), blob) << threads << " threads";
  }
}

size_t valid_count(const CodeGrid& g) {
  const size_t n = size_t(g.nx * g.ny * g.nz);
  return g.missing.empty() ? n : n - size_t(std::count_if(g.missing.begin(), g.missing.end(), [](uint8_t b) { return b; }));
}

// Codes with runs and clusters, as a smooth field's residuals: a slowly varying scale picks
// geometric magnitudes, with stored-exactly symbols (0) and extreme ones sprinkled in.
std::vector<uint16_t> field_codes(size_t n, int64_t nx, uint32_t seed, bool extremes) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double scale = 0.05 + 3.0 * (0.5 + 0.5 * std::sin(0.01 * double(i % size_t(nx)) + 0.003 * double(i / size_t(nx))));
    std::geometric_distribution<int> mag(1.0 / (1.0 + scale));
    const int m = std::min(mag(rng), 32767);
    v[i] = uint16_t(rng() % 2 ? 32768 - m : 32768 + m);
    if (v[i] == 0) v[i] = 1;  // 32768 - 32768 is the exact symbol: keep it for the sprinkle
    if (extremes && rng() % 97 == 0) {
      const uint16_t special[] = {0, 1, 2, 65535, 65534, 32767, 32769, 32768 - 17, 32768 + 17, 32768 + 5000};
      v[i] = special[rng() % std::size(special)];
    }
  }
  return v;
}

TEST(ContextCoder, RoundTripsEverySymbolValue) {
  // Every one of the 65536 symbols, in order and shuffled, on a 256 x 256 grid.
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  const CodeGrid g{256, 256, 1, {}};
  expect_round_trip(all, g);
  std::shuffle(all.begin(), all.end(), std::mt19937(5));
  expect_round_trip(all, g);
  expect_round_trip(testing::uniform_codes(65536, 9), g);
}

TEST(ContextCoder, RoundTripsFieldCodesIn2DAnd3D) {
  for (bool extremes : {false, true}) {
    const CodeGrid g2{97, 61, 1, {}};
    expect_round_trip(field_codes(97 * 61, 97, 1, extremes), g2);
    const CodeGrid g3{23, 17, 11, {}};
    expect_round_trip(field_codes(23 * 17 * 11, 23, 2, extremes), g3);
    expect_round_trip(testing::geometric_codes(23 * 17 * 11, 0.3, 3), g3);
  }
}

TEST(ContextCoder, TinyAndDegenerateGrids) {
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {1, 7, 1}, {7, 1, 1}, {2, 2, 2}, {1, 1, 9}, {3, 1, 4}}) {
    const CodeGrid g{nx, ny, nz, {}};
    const size_t n = size_t(nx * ny * nz);
    expect_round_trip(std::vector<uint16_t>(n, 32768), g);  // all zero residuals
    expect_round_trip(std::vector<uint16_t>(n, 0), g);      // all stored exactly
    expect_round_trip(std::vector<uint16_t>(n, 65535), g);  // the largest residual
    expect_round_trip(field_codes(n, nx, 4, true), g);
  }
}

TEST(ContextCoder, MaskedGridsCodeOnlyTheValidVertices) {
  const int64_t nx = 50, ny = 40, nz = 3;
  std::vector<uint8_t> missing(size_t(nx * ny * nz), 0);
  std::mt19937 rng(8);
  for (auto& m : missing) m = rng() % 3 == 0;
  for (int64_t x = 0; x < nx; ++x) missing[size_t(x)] = 1;  // a whole missing row
  const CodeGrid g{nx, ny, nz, missing};
  expect_round_trip(field_codes(valid_count(g), nx, 6, true), g);
  std::vector<uint8_t> none_valid(missing.size(), 1);
  const CodeGrid empty{nx, ny, nz, none_valid};
  expect_round_trip({}, empty);
  // A count that is not the grid's valid vertices is refused, coding and decoding.
  std::vector<uint8_t> blob;
  EXPECT_EQ(context_encode(std::vector<uint16_t>(10, 32768), g, blob, 1).code(), Code::invalid_argument);
  const auto ok = encode(field_codes(valid_count(g), nx, 6, false), g);
  std::vector<uint16_t> wrong(valid_count(g) + 1);
  EXPECT_EQ(context_decode(ok, g, wrong, 1).code(), Code::corrupt_stream);
}

TEST(ContextCoder, ManyChunksCodeInParallelToTheSameBytes) {
  // More rows than one chunk holds: several chunks, each coded alone.
  const int64_t nx = 700, ny = 1600;  // 1.12 M vertices: two chunks of whole rows
  const CodeGrid g{nx, ny, 1, {}};
  const auto symbols = field_codes(size_t(nx * ny), nx, 7, true);
  const auto blob = encode(symbols, g, 1);
  EXPECT_GE(blob[14] | (blob[15] << 8), 2) << "chunks";
  expect_round_trip(symbols, g);
  // A grid whose rows are longer than a chunk: one row per chunk.
  const CodeGrid wide{int64_t(kContextChunkVertices) + 3, 2, 1, {}};
  expect_round_trip(field_codes(size_t(wide.nx * 2), wide.nx, 8, false), wide);
}

TEST(ContextCoder, NeighbouringCodesCostLessThanOrderZero) {
  // Runs of zero residuals beside regions of large ones: the contexts see the regions.
  const int64_t nx = 200, ny = 150;
  std::vector<uint16_t> v(size_t(nx * ny));
  std::mt19937 rng(10);
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      const bool busy = (x / 25 + y / 25) % 2 == 0;
      std::geometric_distribution<int> mag(busy ? 0.05 : 0.95);
      const int m = std::min(mag(rng), 30000);
      v[size_t(y * nx + x)] = uint16_t(rng() % 2 ? 32768 + m : 32768 - m);
      if (v[size_t(y * nx + x)] == 0) v[size_t(y * nx + x)] = 1;
    }
  const CodeGrid g{nx, ny, 1, {}};
  const auto blob = encode(v, g);
  std::vector<uint8_t> huffman;
  ASSERT_TRUE(huffman_encode(v, huffman, 1).ok());
  EXPECT_LT(double(blob.size()), 0.9 * double(huffman.size())) << blob.size() << " against " << huffman.size();
  expect_round_trip(v, g);
}

TEST(ContextCoder, DamagedBlobsAreRefused) {
  const CodeGrid g{40, 30, 2, {}};
  const auto symbols = field_codes(40 * 30 * 2, 40, 11, true);
  const auto blob = encode(symbols, g);
  std::vector<uint16_t> back(symbols.size());
  // Every truncation and every extension.
  for (size_t cut = 0; cut < blob.size(); ++cut)
    EXPECT_FALSE(context_decode(std::span(blob.data(), cut), g, back, 1).ok()) << cut;
  auto longer = blob;
  longer.push_back(0);
  EXPECT_EQ(context_decode(longer, g, back, 1).code(), Code::corrupt_stream);
  // Header fields: version, reserved byte, count, rows per chunk, chunk count, chunk size.
  auto with = [&](size_t at, uint8_t value) {
    auto b = blob;
    b[at] = value;
    return b;
  };
  EXPECT_EQ(context_decode(with(0, 2), g, back, 1).code(), Code::unsupported_version);
  EXPECT_EQ(context_decode(with(1, 1), g, back, 1).code(), Code::corrupt_stream);
  EXPECT_EQ(context_decode(with(2, uint8_t(blob[2] + 1)), g, back, 1).code(), Code::corrupt_stream);
  EXPECT_EQ(context_decode(with(10, 0), g, back, 1).code(), Code::corrupt_stream);   // 0 rows per chunk
  EXPECT_EQ(context_decode(with(13, 1), g, back, 1).code(), Code::corrupt_stream);   // more rows than the grid
  EXPECT_EQ(context_decode(with(14, 2), g, back, 1).code(), Code::corrupt_stream);   // chunk count
  EXPECT_EQ(context_decode(with(18, uint8_t(blob[18] + 1)), g, back, 1).code(), Code::corrupt_stream);
  // A payload byte changed decodes to other symbols or is refused, never crashes; the first
  // byte of a chunk must be 0.
  EXPECT_EQ(context_decode(with(kContextHeadBytes + 4, 1), g, back, 1).code(), Code::corrupt_stream);
  std::mt19937 rng(12);
  int refused = 0;
  for (size_t i = kContextHeadBytes + 5; i < blob.size(); ++i) {
    auto b = blob;
    b[i] ^= uint8_t(1 + rng() % 255);
    refused += !context_decode(b, g, back, 1).ok();
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace factz::detail
