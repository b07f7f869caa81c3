// ANS blob version 3 (docs/codec.md, "Escapes"): planes whose rare byte values are coded as
// one escape value plus a list of the original bytes. Round trips of both planes, the
// encoder's choice, chunk and lane boundaries, thread independence, hostile blobs and what
// it saves in a speculative stream.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codec/ans.hpp"
#include "codec/zstd_stage.hpp"
#include "factz/factz.hpp"
#include "format/container.hpp"
#include "kernels/rans.hpp"
#include "streams/code_segments.hpp"
#include "streams/stream_common.hpp"
#include "util/byte_io.hpp"
#include "synth.hpp"

namespace factz::detail {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint64_t kChunk = uint64_t{1} << kAnsChunkLog2;

// The symbol of zig-zag code z around kAnsCodeCenter.
uint16_t symbol_of(uint32_t z) { return ans_unzigzag(static_cast<uint16_t>(z), kAnsCodeCenter); }

// Codes like a fine level's: mostly 0, a few small codes, and `rare` distinct rare values
// (z in [40, 40 + rare)) with counts 1..8, spread at random. With `high`, a second common
// high byte (z = 256 + small) and `rare` rare high bytes (z = 256 * (2 + r) + r) too.
std::vector<uint16_t> rare_codes(uint64_t n, uint32_t seed, int rare, bool high = false) {
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const uint64_t r = rng() % 1000;
    uint32_t z = r < 900 ? 0 : static_cast<uint32_t>(1 + r % 6);
    if (high && rng() % 3 == 0) z += 256;
    x = symbol_of(z);
  }
  for (int k = 0; k < rare; ++k) {
    const int count = 1 + static_cast<int>(rng() % 8);
    for (int c = 0; c < count; ++c) v[rng() % n] = symbol_of(40u + uint32_t(k));
    if (high) v[rng() % n] = symbol_of(256u * (2u + uint32_t(k)) + uint32_t(k));
  }
  return v;
}

Bytes encode(std::span<const uint16_t> s, bool escapes, int threads = 2, uint32_t lanes = kAnsEncoderMaxLanes,
             uint16_t center = kAnsCodeCenter) {
  Bytes blob;
  const Status st = ans_encode(s, center, blob, threads, lanes, escapes);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return blob;
}

AnsBlob parse(const Bytes& blob, uint64_t n, uint16_t center = kAnsCodeCenter) {
  AnsBlob b;
  const Status st = ans_parse(blob, center, n, b);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return b;
}

void expect_decodes_to(const Bytes& blob, const std::vector<uint16_t>& s, int threads = 2,
                       uint16_t center = kAnsCodeCenter) {
  std::vector<uint16_t> back(s.size(), 0xABCD);
  const Status st = ans_decode(blob, center, back, threads);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_TRUE(back == s);
}

Code decode_code(const Bytes& blob, uint64_t n) {
  std::vector<uint16_t> back(n);
  return ans_decode(blob, kAnsCodeCenter, back, 2).code();
}

TEST(AnsEscape, RareValuesOfTheLowPlaneAreEscapedAndRoundTrip) {
  const auto s = rare_codes(400000, 1, 50);
  const Bytes v2 = encode(s, false), v3 = encode(s, true);
  const AnsBlob b = parse(v3, s.size());
  EXPECT_EQ(b.version, kAnsVersionEscapes);
  EXPECT_EQ(b.planes[0].mode, kAnsPlaneEscapes);
  EXPECT_EQ(b.planes[0].value, 40);  // the smallest rare value
  EXPECT_LT(v3.size(), v2.size());
  EXPECT_EQ(parse(v2, s.size()).version, kAnsVersion);
  expect_decodes_to(v3, s);
  expect_decodes_to(v2, s);
}

TEST(AnsEscape, RareValuesOfTheHighPlaneAreEscapedAndRoundTrip) {
  const auto s = rare_codes(400000, 2, 40, true);
  const Bytes v2 = encode(s, false), v3 = encode(s, true);
  const AnsBlob b = parse(v3, s.size());
  EXPECT_EQ(b.planes[0].mode, kAnsPlaneEscapes);
  EXPECT_EQ(b.planes[1].mode, kAnsPlaneEscapes);
  EXPECT_EQ(b.planes[1].value, 2);
  EXPECT_LT(v3.size(), v2.size());
  for (const int threads : {1, 2, 3}) expect_decodes_to(v3, s, threads);
}

TEST(AnsEscape, FlatDistributionsAndASingleRareValueKeepVersion2Bytes) {
  std::mt19937_64 rng(3);
  std::vector<uint16_t> flat(200000), one_rare(200000);
  for (auto& x : flat) x = symbol_of(uint32_t(rng() % 40));
  for (auto& x : one_rare) x = symbol_of(uint32_t(rng() % 4));
  one_rare[1234] = symbol_of(200);  // |R| = 1: nothing to merge
  for (const auto* s : {&flat, &one_rare}) {
    const Bytes v3 = encode(*s, true);
    EXPECT_EQ(v3, encode(*s, false));
    EXPECT_EQ(parse(v3, s->size()).version, kAnsVersion);
  }
}

TEST(AnsEscape, EscapesAreChosenOnlyWhenStrictlySmaller) {
  // Two values at count 1 in a small plane: the escape list, its count and e cost more than
  // the two rare slots save, so mode 1 (and version 2) stays.
  std::mt19937_64 rng(4);
  std::vector<uint16_t> s(9000);
  for (auto& x : s) x = symbol_of(uint32_t(rng() % 3));
  s[10] = symbol_of(90);
  s[20] = symbol_of(91);
  const Bytes v3 = encode(s, true);
  EXPECT_EQ(v3, encode(s, false));
  // Across seeds and shapes, a blob with escapes never exceeds its version 2 form by more
  // than the estimate's rounding (the words are estimated, not counted).
  for (uint32_t seed = 10; seed < 16; ++seed) {
    const auto c = rare_codes(50000 + 7000 * seed, seed, int(seed % 5) * 10, seed % 2 == 0);
    const Bytes a = encode(c, true), b = encode(c, false);
    EXPECT_LE(a.size(), b.size() + 16) << seed;
    expect_decodes_to(a, c);
  }
}

TEST(AnsEscape, ChunkAndLaneBoundaries) {
  for (const uint64_t n : {uint64_t{1}, uint64_t{2}, kChunk - 1, kChunk, kChunk + 1, 3 * kChunk + 17}) {
    auto s = rare_codes(n, uint32_t(n), 0);
    // Escaped bytes (distinct values, once or twice each) right at chunk starts, chunk
    // ends and lane starts, and 60 more at random.
    if (n >= 1000) {
      uint32_t r = 0;
      for (uint64_t base = 0; base < n; base += kChunk) {
        const uint64_t m = std::min(n - base, kChunk);
        const uint32_t lanes = ans_chunk_lanes(m, kAnsEncoderMaxLanes);
        for (uint32_t l = 0; l < lanes; ++l) s[base + rans_lane_begin(m, lanes, l)] = symbol_of(40 + r++ % 200);
        s[base + m - 1] = symbol_of(40 + r++ % 200);
      }
      std::mt19937_64 rng(n);
      for (int k = 0; k < 60; ++k) s[rng() % n] = symbol_of(40 + r++ % 200);
    }
    SCOPED_TRACE(n);
    for (const uint32_t lanes : {1u, 8u, 32u}) {
      const Bytes blob = encode(s, true, 2, lanes);
      if (n >= 1000) {
        EXPECT_EQ(parse(blob, n).planes[0].mode, kAnsPlaneEscapes) << lanes;
      }
      expect_decodes_to(blob, s, 1);
      expect_decodes_to(blob, s, 3);
    }
  }
}

TEST(AnsEscape, SameBytesForAnyThreadCount) {
  const auto s = rare_codes(5 * kChunk + 333, 5, 60, true);
  const Bytes one = encode(s, true, 1);
  EXPECT_EQ(parse(one, s.size()).version, kAnsVersionEscapes);
  for (const int threads : {2, 3, 7}) EXPECT_EQ(encode(s, true, threads), one) << threads;
}

TEST(AnsEscape, CenterZeroIdStreams) {
  // Bound ids: mostly 30, a few others, a dozen rare ones.
  std::mt19937_64 rng(6);
  std::vector<uint16_t> ids(300000);
  for (auto& x : ids) x = uint16_t(rng() % 100 < 95 ? 30 : 28 + rng() % 4);
  for (int k = 0; k < 12; ++k) ids[rng() % ids.size()] = uint16_t(k);
  const Bytes v3 = encode(ids, true, 2, kAnsEncoderMaxLanes, 0), v2 = encode(ids, false, 2, kAnsEncoderMaxLanes, 0);
  EXPECT_EQ(parse(v3, ids.size(), 0).planes[0].mode, kAnsPlaneEscapes);
  EXPECT_LT(v3.size(), v2.size());
  expect_decodes_to(v3, ids, 2, 0);
}

// ---------------------------------------------------------------- hostile blobs

// A small blob whose low plane has escapes (fewer than 128, so E is one varint byte) and
// where E's position is known.
struct Hostile {
  std::vector<uint16_t> s;
  Bytes blob;
  size_t e_at = 0;  // the low plane's escape value byte
  size_t count_at = 0;  // the low plane's varint E
  uint64_t count = 0;
};

Hostile hostile_blob() {
  Hostile h;
  h.s = rare_codes(150000, 7, 18);
  h.blob = encode(h.s, true);
  const AnsBlob b = parse(h.blob, h.s.size());
  EXPECT_EQ(b.planes[0].mode, kAnsPlaneEscapes);
  h.e_at = 13;  // 12 header bytes, the mode byte
  h.count_at = b.planes[0].chunk_pos.back();
  h.count = b.planes[0].bytes.size();
  EXPECT_LT(h.count, 128u);
  EXPECT_EQ(h.blob[h.count_at], h.count);
  return h;
}

TEST(AnsEscape, Mode3IsCorruptInAVersion2Blob) {
  Hostile h = hostile_blob();
  h.blob[0] = kAnsVersion;
  EXPECT_EQ(decode_code(h.blob, h.s.size()), Code::corrupt_stream);
  h.blob[0] = 4;
  EXPECT_EQ(decode_code(h.blob, h.s.size()), Code::corrupt_stream);
}

TEST(AnsEscape, Version3WithoutEscapesIsCorrupt) {
  const auto s = rare_codes(20000, 9, 0);
  Bytes blob = encode(s, true);
  ASSERT_EQ(blob[0], kAnsVersion);
  blob[0] = kAnsVersionEscapes;
  EXPECT_EQ(decode_code(blob, s.size()), Code::corrupt_stream);
}

TEST(AnsEscape, EscapeCountsThatDoNotMatchAreCorrupt) {
  const Hostile h = hostile_blob();
  Bytes fewer = h.blob, more = h.blob;
  // E - 1 with one byte less, E + 1 with one byte more: parses, but the decoded escape
  // values number E.
  fewer[h.count_at] = uint8_t(h.count - 1);
  fewer.erase(fewer.begin() + int64_t(h.count_at) + 1);
  more[h.count_at] = uint8_t(h.count + 1);
  more.insert(more.begin() + int64_t(h.count_at) + 1, uint8_t{7});
  EXPECT_EQ(decode_code(fewer, h.s.size()), Code::corrupt_stream);
  EXPECT_EQ(decode_code(more, h.s.size()), Code::corrupt_stream);
  // E larger than what is left of the blob.
  Bytes huge = h.blob;
  huge[h.count_at] = 0x7F;
  EXPECT_EQ(decode_code(huge, h.s.size()), Code::corrupt_stream);
}

TEST(AnsEscape, AnEscapeValueAbsentFromTheTablesIsCorrupt) {
  Hostile h = hostile_blob();
  h.blob[h.e_at] = 250;  // no code has low byte 250
  EXPECT_EQ(decode_code(h.blob, h.s.size()), Code::corrupt_stream);
}

TEST(AnsEscape, TruncationsAndTrailingBytesAreCorrupt) {
  const Hostile h = hostile_blob();
  for (size_t cut = 0; cut < h.blob.size(); cut += 1 + (cut > h.count_at + 200 ? 97 : 0)) {
    const Bytes part(h.blob.begin(), h.blob.begin() + int64_t(cut));
    ASSERT_EQ(decode_code(part, h.s.size()), Code::corrupt_stream) << cut;
  }
  Bytes longer = h.blob;
  longer.push_back(0);
  EXPECT_EQ(decode_code(longer, h.s.size()), Code::corrupt_stream);
}

TEST(AnsEscape, SurvivesDamageEverywhere) {
  const Hostile h = hostile_blob();
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 400; ++trial) {
    Bytes bad = h.blob;
    const size_t at = trial < 200 ? rng() % std::min<size_t>(bad.size(), 200) : rng() % bad.size();
    bad[at] ^= uint8_t(1 + rng() % 255);
    std::vector<uint16_t> back(h.s.size());
    const Status st = ans_decode(bad, kAnsCodeCenter, back, 2);
    if (!st.ok()) {
      EXPECT_EQ(st.code(), Code::corrupt_stream) << st.to_string();
    }
  }
}

// ---------------------------------------------------------------- streams

// The blobs of a segmented codes section, and their size as version 2 blobs.
void section_sizes(const Bytes& stream, uint32_t id, uint64_t& stored, uint64_t& as_v2, int& v3_blobs) {
  auto pc = parse_container(stream);
  ASSERT_TRUE(pc.ok());
  auto sec = read_section(stream, pc.value(), id, &zstd_stage_decompressor());
  ASSERT_TRUE(sec.ok());
  const Bytes& bytes = sec.value();
  ASSERT_GE(bytes.size(), 12u);
  std::vector<CodeSegment> segs;
  uint64_t n = 0;
  if (id == kSectionBoundIdsU) {
    n = bytes[4] | uint64_t(bytes[5]) << 8 | uint64_t(bytes[6]) << 16 | uint64_t(bytes[7]) << 24;
    segs.push_back({0, int64_t(n), bytes});
  } else {
    ByteReader r(bytes);  // S, then the S symbol counts
    uint64_t count = 0;
    ASSERT_TRUE(r.varint(count));
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t c = 0;
      ASSERT_TRUE(r.varint(c));
      n += c;
    }
    ASSERT_TRUE(parse_segmented(bytes, int64_t(n), segs).ok());
  }
  const uint16_t center = id == kSectionBoundIdsU ? 0 : kAnsCodeCenter;
  for (const auto& g : segs) {
    std::vector<uint16_t> sym(size_t(g.count));
    ASSERT_TRUE(ans_decode(g.blob, center, sym, 2).ok());
    stored += g.blob.size();
    v3_blobs += g.blob[0] == kAnsVersionEscapes;
    Bytes v2;
    ASSERT_TRUE(ans_encode(sym, center, v2, 2).ok());
    as_v2 += v2.size();
  }
}

TEST(AnsEscape, RoughFieldsCodesShrinkInVersion9Streams) {
  const VectorField2D f = synth::turbulence(512, 512, 99, 2.0);
  Options o;
  o.mode = Mode::speculative;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-2;
  o.coder = Coder::ans;
  auto s = compress(f, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  uint64_t stored = 0, as_v2 = 0;
  int v3_blobs = 0;
  section_sizes(s.value(), kSectionCodesU, stored, as_v2, v3_blobs);
  section_sizes(s.value(), kSectionCodesV, stored, as_v2, v3_blobs);
  EXPECT_GT(v3_blobs, 0);
  EXPECT_LT(stored, as_v2);
  std::printf("codes: %llu bytes with escapes, %llu as version 2 blobs\n", (unsigned long long)stored,
              (unsigned long long)as_v2);
  auto d = decompress(s.value());
  ASSERT_TRUE(d.ok());
  auto cmp = compare(f, d.value());
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->violations(), 0);
}

TEST(AnsEscape, TheSegmentedGoldenFileHoldsVersion3Blobs) {
  // v9_ans_speculative_rel1e-2_nozstd_segmented_160x120.fz: a reader of version 9 streams
  // must read mode 3 planes (its values are pinned by Golden.*).
  const std::string path = std::string(FACTZ_TEST_DATA_DIR) + "/golden/v9_ans_speculative_rel1e-2_nozstd_segmented_160x120.fz";
  std::FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr) << path;
  Bytes stream;
  for (int c; (c = std::fgetc(file)) != EOF;) stream.push_back(uint8_t(c));
  std::fclose(file);
  uint64_t stored = 0, as_v2 = 0;
  int v3_blobs = 0;
  section_sizes(stream, kSectionCodesU, stored, as_v2, v3_blobs);
  section_sizes(stream, kSectionCodesV, stored, as_v2, v3_blobs);
  EXPECT_GT(v3_blobs, 0);
  EXPECT_LT(stored, as_v2);
}

}  // namespace
}  // namespace factz::detail
