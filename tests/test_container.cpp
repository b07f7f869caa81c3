// The container format v1 as a specification: byte layout, round trips, and rejection of
// every corrupted, truncated or crafted stream with a clean error (docs/format.md).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "format/container.hpp"
#include "format/crc32.hpp"

namespace factz::detail {
namespace {

using Bytes = std::vector<uint8_t>;

// This file pins the classic container (versions 1 to 17), which every build reads; the
// compact one (version 18, what compress writes) is pinned by test_container_compact.cpp.
Result<Bytes> write_classic(const Header& h, std::vector<Section> sections, const Compressor* zstd) {
  return write_container(h, std::move(sections), zstd, ContainerLayout::classic);
}

// ---- Helpers that know the documented layout (independently of container.cpp) ---------
void put(Bytes& s, std::size_t off, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const Bytes& s, std::size_t off, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{s[off + i]} << (8 * i);
  return v;
}
uint32_t crc_of(const Bytes& s, std::size_t off, std::size_t n) {
  return crc32c(std::span<const uint8_t>(s.data() + off, n));
}
std::size_t entry_at(std::size_t i) { return 64 + 40 * i; }
void reseal_header(Bytes& s) { put(s, 60, crc_of(s, 0, 60), 4); }
void reseal_entry(Bytes& s, std::size_t i) {
  put(s, entry_at(i) + 36, crc_of(s, entry_at(i), 36), 4);
}
// Sets a table field of entry i and recomputes that entry's checksum, so the table
// validation (not the checksum) is what the test exercises.
void set_entry(Bytes& s, std::size_t i, std::size_t field_off, uint64_t v, int bytes) {
  put(s, entry_at(i) + field_off, v, bytes);
  reseal_entry(s, i);
}

Bytes iota_bytes(std::size_t n, uint8_t start) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(start + 7 * i);
  return b;
}

Header sample_header() {
  Header h;
  h.components = 2;
  h.mode = kModeSpeculative;
  h.coder = kCoderAns;
  h.nx = 300;
  h.ny = 200;
  h.bound_mode = kBoundRel;
  h.bound_value = 0.01;
  h.eb = 0.0375f;
  h.tile = 32;
  h.anchor_stride = 16;
  return h;
}

std::vector<Section> sample_sections() {
  return {{kSectionMeta, iota_bytes(4, 1), false},
          {kSectionCodesU, iota_bytes(8, 50), false},
          {kSectionCodesV, iota_bytes(8, 90), false}};
}

Bytes sample_stream() {
  auto r = write_classic(sample_header(), sample_sections(), nullptr);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.value();
}

// Byte-wise run-length coder standing in for zstd: (count, byte) pairs.
const Compressor kFakeZstd = [](std::span<const uint8_t> in, Bytes& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size();) {
    std::size_t run = 1;
    while (i + run < in.size() && run < 255 && in[i + run] == in[i]) ++run;
    out.push_back(static_cast<uint8_t>(run));
    out.push_back(in[i]);
    i += run;
  }
  return Status::Ok();
};
const Decompressor kFakeUnzstd = [](std::span<const uint8_t> in, uint64_t raw_size, Bytes& out) {
  out.clear();
  if (in.size() % 2 != 0) return corrupt_stream("odd RLE length");
  for (std::size_t i = 0; i < in.size(); i += 2) {
    if (out.size() + in[i] > raw_size) return corrupt_stream("RLE output too long");
    out.insert(out.end(), in[i], in[i + 1]);
  }
  return Status::Ok();
};

std::vector<Section> compressible_sections() {
  return {{kSectionMeta, iota_bytes(5, 3), true},           // offered, does not shrink
          {kSectionCodesU, Bytes(1000, 0x11), true},        // offered, shrinks
          {kSectionCodesV, Bytes(600, 0x22), false},        // not offered
          {kSectionOutliers, Bytes{}, true}};               // empty
}

void expect_rejected(const Bytes& s, const std::string& substring,
                     Code code = Code::corrupt_stream) {
  auto r = parse_container(s);
  ASSERT_FALSE(r.ok()) << "accepted a stream that should fail with: " << substring;
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(substring), std::string::npos)
      << "message was: " << r.status().message();
}

// ---- CRC-32C ----------------------------------------------------------------------------
uint32_t crc32c_bitwise(std::span<const uint8_t> data, uint32_t seed) {
  uint32_t c = ~seed;
  for (uint8_t b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
  }
  return ~c;
}

TEST(Crc32c, MatchesPublishedTestVectors) {
  const char* digits = "123456789";
  EXPECT_EQ(crc32c({reinterpret_cast<const uint8_t*>(digits), 9}), 0xE3069283u);
  EXPECT_EQ(crc32c({}), 0u);
  // RFC 3720, appendix B.4.
  Bytes zeros(32, 0x00), ones(32, 0xFF), inc(32), dec(32);
  for (int i = 0; i < 32; ++i) {
    inc[i] = static_cast<uint8_t>(i);
    dec[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(inc), 0x46DD794Eu);
  EXPECT_EQ(crc32c(dec), 0x113FDB5Cu);
}

TEST(Crc32c, TableCodeEqualsBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  Bytes data(300);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (std::size_t start = 0; start < 9; ++start)
    for (std::size_t n = 0; start + n <= data.size(); n += (n < 40 ? 1 : 13)) {
      std::span<const uint8_t> piece(data.data() + start, n);
      ASSERT_EQ(crc32c(piece, 0x1234u), crc32c_bitwise(piece, 0x1234u)) << start << " " << n;
    }
}

TEST(Crc32c, SeedChainsPieces) {
  Bytes data = iota_bytes(1000, 5);
  std::span<const uint8_t> all(data);
  for (std::size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000})
    EXPECT_EQ(crc32c(all.subspan(cut), crc32c(all.first(cut))), crc32c(all)) << cut;
}

// ---- Layout -----------------------------------------------------------------------------
TEST(Container, HeaderFieldsSitAtTheDocumentedOffsets) {
  Header h = sample_header();
  h.nx = 0x0102030405ull;
  h.ny = 7;
  const Bytes s = write_classic(h, sample_sections(), nullptr).value();
  ASSERT_EQ(s.size(), 64u + 3 * 40 + 4 + 8 + 8);
  EXPECT_EQ(std::memcmp(s.data(), "FCTZ", 4), 0);
  EXPECT_EQ(get(s, 4, 2), 2u);
  EXPECT_EQ(s[6], kDtypeFloat32);
  EXPECT_EQ(s[7], 2u);
  EXPECT_EQ(s[8], 2u);
  EXPECT_EQ(s[9], kModeSpeculative);
  EXPECT_EQ(s[10], kCoderAns);
  EXPECT_EQ(s[11], 0u);
  EXPECT_EQ(get(s, 12, 8), 0x0102030405ull);
  EXPECT_EQ(get(s, 20, 8), 7u);
  EXPECT_EQ(get(s, 28, 8), 1u);
  EXPECT_EQ(s[36], kBoundRel);
  EXPECT_EQ(get(s, 37, 3), 0u);
  EXPECT_EQ(get(s, 40, 8), std::bit_cast<uint64_t>(0.01));
  EXPECT_EQ(get(s, 48, 4), std::bit_cast<uint32_t>(0.0375f));
  EXPECT_EQ(get(s, 52, 2), 32u);
  EXPECT_EQ(get(s, 54, 2), 16u);
  EXPECT_EQ(get(s, 56, 4), 3u);
  EXPECT_EQ(get(s, 60, 4), crc_of(s, 0, 60));
}

TEST(Container, SectionTableEntriesSitAtTheDocumentedOffsets) {
  const Bytes s = sample_stream();
  const uint64_t sizes[3] = {4, 8, 8};
  const uint32_t ids[3] = {kSectionMeta, kSectionCodesU, kSectionCodesV};
  uint64_t offset = 64 + 3 * 40;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t e = entry_at(i);
    EXPECT_EQ(get(s, e + 0, 4), ids[i]);
    EXPECT_EQ(get(s, e + 4, 4), 0u);
    EXPECT_EQ(get(s, e + 8, 8), offset);
    EXPECT_EQ(get(s, e + 16, 8), sizes[i]);
    EXPECT_EQ(get(s, e + 24, 8), sizes[i]);
    EXPECT_EQ(get(s, e + 32, 4), crc_of(s, offset, sizes[i]));
    EXPECT_EQ(get(s, e + 36, 4), crc_of(s, e, 36));
    offset += sizes[i];
  }
  EXPECT_EQ(offset, s.size());
}

// Pins format version 2 byte for byte; if this fails, the format changed: bump the version.
TEST(Container, GoldenVersion2Stream) {
  Header h;
  h.components = 2;
  h.mode = kModeBlock;
  h.coder = kCoderHuffman;
  h.nx = 3;
  h.ny = 2;
  h.bound_mode = kBoundAbs;
  h.bound_value = 0.5;
  h.eb = 0.5f;
  const Bytes s =
      write_classic(h, {{kSectionMeta, {1, 2, 3}, false}, {kSectionCodesU, {0xAA}, false}},
                      nullptr)
          .value();
  const Bytes golden = {
      // header
      0x46, 0x43, 0x54, 0x5A, 0x02, 0x00, 0x01, 0x02, 0x02, 0x01, 0x00, 0x00,  //
      0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // nx
      0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // ny
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // nz
      0x00, 0x00, 0x00, 0x00,                                                  // bound mode
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0, 0x3F,                          // 0.5 (f64)
      0x00, 0x00, 0x00, 0x3F,                                                  // 0.5f
      0x20, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,                          // tile..count
      0x06, 0xF9, 0xC6, 0xB0,                                                  // header crc
      // entry 0: meta
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          //
      0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // offset 144
      0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // stored
      0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // raw
      0x1E, 0xF2, 0x30, 0xF1, 0xD6, 0x44, 0xA5, 0xE1,                          // crc, entry crc
      // entry 1: codes_u
      0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          //
      0x93, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // offset 147
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // stored
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // raw
      0xCF, 0xCE, 0xD4, 0x9B, 0x7C, 0x0B, 0x35, 0xAC,                          // crc, entry crc
      // sections
      0x01, 0x02, 0x03, 0xAA};
  ASSERT_EQ(s.size(), golden.size());
  for (std::size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i], golden[i]) << "byte " << i;
}

// ---- Round trips ------------------------------------------------------------------------
TEST(Container, RoundTripsHeaderAndSections) {
  const std::vector<Section> in = sample_sections();
  const Bytes s = sample_stream();
  auto parsed = parse_container(s);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const Header& h = parsed->header;
  const Header want = sample_header();
  EXPECT_EQ(h.version, 2);
  EXPECT_EQ(h.components, want.components);
  EXPECT_EQ(h.mode, want.mode);
  EXPECT_EQ(h.coder, want.coder);
  EXPECT_EQ(h.nx, want.nx);
  EXPECT_EQ(h.ny, want.ny);
  EXPECT_EQ(h.bound_mode, want.bound_mode);
  EXPECT_EQ(h.bound_value, want.bound_value);
  EXPECT_EQ(h.eb, want.eb);
  EXPECT_EQ(h.anchor_stride, want.anchor_stride);
  ASSERT_EQ(parsed->entries.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(parsed->entries[i].id, in[i].id);
    EXPECT_TRUE(has_section(*parsed, in[i].id));
    auto raw = read_section(s, *parsed, in[i].id, nullptr);
    ASSERT_TRUE(raw.ok()) << raw.status().to_string();
    EXPECT_EQ(raw.value(), in[i].raw);
  }
  EXPECT_FALSE(has_section(*parsed, kSectionExactIndex));
  auto missing = read_section(s, *parsed, kSectionExactIndex, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::corrupt_stream);
  EXPECT_NE(missing.status().message().find("missing section 5 (exact_index)"), std::string::npos);
}

// Writes a header with `field` set to each value and expects parsing to give it back.
template <class T>
void expect_round_trip(T Header::*field, std::vector<std::type_identity_t<T>> values) {
  for (T v : values) {
    Header h;
    h.nx = 5;
    h.ny = 6;
    h.*field = v;
    auto s = write_classic(h, {}, nullptr);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto p = parse_container(s.value());
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->header.*field, v);
  }
}

TEST(Container, RoundTripsEveryHeaderField) {
  expect_round_trip(&Header::components, {1, 2});
  expect_round_trip(&Header::mode, {kModeNone, kModeBlock, kModeSpeculative});
  expect_round_trip(&Header::coder, {kCoderHuffman, kCoderAns});
  expect_round_trip(&Header::nx, {1, 5, uint64_t{1} << 36});
  expect_round_trip(&Header::ny, {1, 6, uint64_t{1} << 36});
  expect_round_trip(&Header::bound_mode, {kBoundAbs, kBoundRel});
  expect_round_trip(&Header::bound_value, {0.0, 1e-300, 0.1, 3.5e10});
  expect_round_trip(&Header::eb, {0.0f, 1e-40f, 0.1f, 3.4e38f});
  expect_round_trip(&Header::tile, {1, 32, 65535});
  expect_round_trip(&Header::anchor_stride, {0, 16, 65535});

  Header h;
  h.nx = uint64_t{1} << 20;
  h.ny = uint64_t{1} << 20;  // exactly 2^40 elements: the cap is inclusive
  h.flags = kHeaderFlagZstd;  // derived by the writer, not taken from the caller
  auto p = parse_container(write_classic(h, {}, nullptr).value());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->header.nx * p->header.ny, uint64_t{1} << 40);
  EXPECT_EQ(p->header.flags, 0u);
}

TEST(Container, CompressedSectionsRoundTripThroughTheCallbacks) {
  const std::vector<Section> in = compressible_sections();
  auto s = write_classic(sample_header(), in, &kFakeZstd);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto p = parse_container(s.value());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->header.flags, kHeaderFlagZstd);
  ASSERT_EQ(p->entries.size(), 4u);
  EXPECT_EQ(p->entries[0].flags, 0u);  // did not shrink: stored raw
  EXPECT_EQ(p->entries[1].flags, kSectionFlagZstd);
  EXPECT_LT(p->entries[1].stored_size, p->entries[1].raw_size);
  EXPECT_EQ(p->entries[1].raw_size, 1000u);
  EXPECT_EQ(p->entries[2].flags, 0u);  // not offered
  EXPECT_EQ(p->entries[3].flags, 0u);
  for (const Section& sec : in) {
    auto raw = read_section(s.value(), *p, sec.id, &kFakeUnzstd);
    ASSERT_TRUE(raw.ok()) << raw.status().to_string();
    EXPECT_EQ(raw.value(), sec.raw) << section_name(sec.id);
  }
  // Uncompressed sections read without a decompressor; the compressed one fails cleanly.
  EXPECT_TRUE(read_section(s.value(), *p, kSectionCodesV, nullptr).ok());
  auto no_codec = read_section(s.value(), *p, kSectionCodesU, nullptr);
  ASSERT_FALSE(no_codec.ok());
  EXPECT_EQ(no_codec.status().code(), Code::invalid_argument);
  EXPECT_NE(no_codec.status().message().find("section 3 (codes_u)"), std::string::npos);
  const Decompressor empty;
  EXPECT_FALSE(read_section(s.value(), *p, kSectionCodesU, &empty).ok());
}

TEST(Container, WithoutACompressorNothingIsCompressed) {
  auto s = write_classic(sample_header(), compressible_sections(), nullptr);
  ASSERT_TRUE(s.ok());
  auto p = parse_container(s.value());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->header.flags, 0u);
  for (const auto& e : p->entries) EXPECT_EQ(e.flags, 0u);
}

TEST(Container, DecompressorErrorsAreReportedWithTheSectionName) {
  const Bytes s = write_classic(sample_header(), compressible_sections(), &kFakeZstd).value();
  const ParsedContainer p = parse_container(s).value();
  const Decompressor short_output = [](std::span<const uint8_t>, uint64_t, Bytes& out) {
    out.assign(3, 0);
    return Status::Ok();
  };
  auto r = read_section(s, p, kSectionCodesU, &short_output);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::corrupt_stream);
  EXPECT_NE(r.status().message().find("section 3 (codes_u) decompressed to 3 bytes, expected 1000"),
            std::string::npos) << r.status().message();
  const Decompressor failing = [](std::span<const uint8_t>, uint64_t, Bytes&) {
    return corrupt_stream("bad frame");
  };
  r = read_section(s, p, kSectionCodesU, &failing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "section 3 (codes_u): bad frame");
}

TEST(Container, CompressorErrorsArePassedOn) {
  const Compressor failing = [](std::span<const uint8_t>, Bytes&) {
    return Status(Code::internal, "boom");
  };
  auto r = write_classic(sample_header(), compressible_sections(), &failing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::internal);
  EXPECT_NE(r.status().message().find("boom"), std::string::npos);
}

// ---- Writer argument checks ---------------------------------------------------------------
TEST(Container, WriterRejectsInvalidHeadersAndSections) {
  // The rules of the header version are the same in both containers: checked in the compact
  // one, since a stream with a source section has no classic form (version 19).
  auto rejects = [](const Header& h, std::vector<Section> secs = {}) {
    auto r = write_container(h, std::move(secs), nullptr);
    return !r.ok() && r.status().code() == Code::invalid_argument;
  };
  const Header ok = sample_header();
  {
    Header four = ok;
    four.version = 4;
    EXPECT_EQ(write_classic(four, {{kSectionSource, {1}}}, nullptr).status().code(), Code::invalid_argument);
  }
  Header h;
  h = ok; h.version = 1; EXPECT_TRUE(rejects(h));  // version 1 is read, never written
  h = ok; h.version = 3; EXPECT_TRUE(rejects(h));  // version 3 exactly when mask sections are present
  h = ok; h.version = 4; EXPECT_TRUE(rejects(h));
  EXPECT_TRUE(rejects(ok, {{kSectionMask, {1, 2, 3}}}));  // a mask section needs version 3
  h = ok; h.version = 3;
  EXPECT_FALSE(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionMaskedValues, {4}}}));
  // Version 4 exactly when a source section is present, with or without mask sections.
  EXPECT_TRUE(rejects(h, {{kSectionSource, {1}}}));
  EXPECT_TRUE(rejects(ok, {{kSectionSource, {1}}}));
  h = ok; h.version = 4;
  EXPECT_FALSE(rejects(h, {{kSectionSource, {1}}}));
  EXPECT_FALSE(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionMaskedValues, {4}}, {kSectionSource, {1}}}));
  EXPECT_TRUE(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionMaskedValues, {4}}}));
  // Version 5 exactly for a masked vector stream in mode none or block (packed tiled codes).
  for (uint8_t mode : {kModeNone, kModeBlock, kModeSpeculative}) {
    h = ok;
    h.mode = mode;
    h.anchor_stride = mode == kModeSpeculative ? 16 : 0;
    const bool tiled = mode != kModeSpeculative;
    h.version = 5;
    EXPECT_EQ(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionMaskedValues, {4}}}), !tiled) << int(mode);
    EXPECT_EQ(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionSource, {1}}}), !tiled) << int(mode);
    EXPECT_TRUE(rejects(h)) << int(mode);  // no mask, no version 5
    h.version = 3;
    EXPECT_EQ(rejects(h, {{kSectionMask, {1, 2, 3}}, {kSectionMaskedValues, {4}}}), tiled) << int(mode);
  }
  // Version 9 exactly when mask_and_values is present (mask and values in one section; the
  // writer no longer writes version 7, whose streams the reader still takes).
  for (uint16_t v : {3, 4, 5, 6, 7, 8}) {
    h = ok;
    h.version = v;
    EXPECT_TRUE(rejects(h, {{kSectionMaskAndValues, {1, 2, 3}}})) << v;
  }
  h = ok; h.version = 9;
  EXPECT_FALSE(rejects(h, {{kSectionMaskAndValues, {1, 2, 3}}}));
  EXPECT_FALSE(rejects(h, {{kSectionMaskAndValues, {1, 2, 3}}, {kSectionSource, {1}}}));
  EXPECT_EQ(stream_version(std::vector<uint32_t>{kSectionMeta, kSectionMaskAndValues}), kFormatVersionSegmentedCodes);
  EXPECT_EQ(stream_version(std::vector<uint32_t>{kSectionMeta, kSectionMaskAndValues}, false, kDtypeFloat64),
            kFormatVersionSegmentedCodes);
  h = ok; h.dtype = 2; EXPECT_TRUE(rejects(h));
  h = ok; h.components = 0; EXPECT_TRUE(rejects(h));
  h = ok; h.components = 3; EXPECT_TRUE(rejects(h));
  h = ok; h.ndims = 3; EXPECT_TRUE(rejects(h));
  h = ok; h.mode = 3; EXPECT_TRUE(rejects(h));
  h = ok; h.coder = 2; EXPECT_TRUE(rejects(h));  // the context coder: scalar versions 15 to 17 only
  h = ok; h.coder = 3; EXPECT_TRUE(rejects(h));
  h = ok; h.nx = 0; EXPECT_TRUE(rejects(h));
  h = ok; h.nz = 2; EXPECT_TRUE(rejects(h));
  h = ok; h.nx = (uint64_t{1} << 40) + 1; h.ny = 1; EXPECT_TRUE(rejects(h));
  h = ok; h.nx = uint64_t{1} << 32; h.ny = uint64_t{1} << 32; EXPECT_TRUE(rejects(h));
  h = ok; h.bound_mode = 2; EXPECT_TRUE(rejects(h));
  h = ok; h.bound_value = -1; EXPECT_TRUE(rejects(h));
  h = ok; h.eb = std::numeric_limits<float>::quiet_NaN(); EXPECT_TRUE(rejects(h));
  h = ok; h.eb = std::numeric_limits<float>::infinity(); EXPECT_TRUE(rejects(h));
  h = ok; h.tile = 0; EXPECT_TRUE(rejects(h));
  EXPECT_TRUE(rejects(ok, {{0, {}, false}}));
  EXPECT_TRUE(rejects(ok, {{kLastSectionId + 1, {}, false}}));
  EXPECT_TRUE(rejects(ok, {{kSectionMeta, {}, false}, {kSectionMeta, {}, false}}));
  Header tiny = ok;
  tiny.nx = tiny.ny = 1;
  EXPECT_TRUE(rejects(tiny, {{kSectionMeta, Bytes(kRawSizeSlack + 1000), false}}));
}

// ---- Untrusted input ----------------------------------------------------------------------
TEST(Container, EverySingleByteCorruptionIsRejected) {
  const Bytes plain = sample_stream();
  const Bytes packed =
      write_classic(sample_header(), compressible_sections(), &kFakeZstd).value();
  for (const Bytes* good : {&plain, &packed}) {
    for (std::size_t i = 0; i < good->size(); ++i) {
      for (uint8_t mask : {0x01, 0x10, 0x80, 0xFF}) {
        Bytes s = *good;
        s[i] ^= mask;
        auto r = parse_container(s);
        ASSERT_FALSE(r.ok()) << "byte " << i << " mask " << int(mask);
        // A damaged version field names an unsupported version, unless it landed on one this
        // build reads (1 to 18): then the header checksum catches it.
        const uint16_t version = uint16_t(s[4] | s[5] << 8);
        const bool readable = version >= kOldestReadableVersion && version <= kFormatVersion;  // 18: read as a compact header, whose checksum fails
        const Code want = (i == 4 || i == 5) && !readable ? Code::unsupported_version : Code::corrupt_stream;
        EXPECT_EQ(r.status().code(), want) << "byte " << i << ": " << r.status().to_string();
      }
    }
  }
}

TEST(Container, ChecksumMismatchNamesTheSection) {
  Bytes s = sample_stream();
  s[entry_at(3) + 4 + 2] ^= 1;  // third byte of codes_u (after meta's 4 bytes)
  expect_rejected(s, "section 3 (codes_u) checksum mismatch");
  s = sample_stream();
  s[20] ^= 1;
  expect_rejected(s, "header checksum mismatch");
  s = sample_stream();
  s[entry_at(1) + 3] ^= 1;
  expect_rejected(s, "section table entry 1 checksum mismatch");
}

TEST(Container, EveryTruncationIsRejected) {
  const Bytes good = write_classic(sample_header(), compressible_sections(), &kFakeZstd).value();
  for (std::size_t n = 0; n < good.size(); ++n) {
    auto r = parse_container(std::span<const uint8_t>(good.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), Code::corrupt_stream) << n;
  }
  expect_rejected(Bytes(good.begin(), good.begin() + 30), "truncated in the header");
  expect_rejected(Bytes(good.begin(), good.begin() + 100), "truncated in the section table");
  expect_rejected(Bytes(good.begin(), good.end() - 1), "lies outside the stream");
  Bytes longer = good;
  longer.push_back(0);
  expect_rejected(longer, "unexpected data after the last section (1 bytes)");
}

TEST(Container, RandomBytesAreRejected) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 2000; ++trial) {
    Bytes s(rng() % 400);
    for (auto& b : s) b = static_cast<uint8_t>(rng());
    if (trial % 2 == 0 && s.size() >= 6) {  // get past the magic and version checks
      std::memcpy(s.data(), "FCTZ\x01\x00", 6);
    }
    auto r = parse_container(s);
    ASSERT_FALSE(r.ok()) << trial;
    EXPECT_TRUE(r.status().code() == Code::corrupt_stream ||
                r.status().code() == Code::unsupported_version);
  }
  expect_rejected(Bytes{'N', 'O', 'P', 'E'}, "bad magic");
  expect_rejected(Bytes(100, 0), "bad magic");
}

// Mutations whose checksums are recomputed reach the field checks: they must never crash,
// read out of bounds or hang, and every accepted stream must be readable.
TEST(Container, ResealedRandomMutationsFailCleanlyOrParse) {
  const Bytes good = write_classic(sample_header(), compressible_sections(), &kFakeZstd).value();
  const std::size_t table_end = entry_at(4);
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    Bytes s = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) s[6 + rng() % (table_end - 6)] = static_cast<uint8_t>(rng());
    reseal_header(s);
    for (std::size_t i = 0; i < 4; ++i) reseal_entry(s, i);
    auto r = parse_container(s);
    if (!r.ok()) {
      EXPECT_NE(r.status().code(), Code::ok);
      continue;
    }
    for (const auto& e : r->entries) (void)read_section(s, *r, e.id, &kFakeUnzstd);
  }
}

TEST(Container, UnsupportedVersionIsReportedAsSuch) {
  // 1 to 17 are read (6: float64, 7: the predictor byte, 8: 3D vectors, 9 and 10: segmented
  // codes, 11: the scalar lattice, 12: masked 3D vectors, 13: float64 3D vectors, 14: the
  // scalar lattice with coded exact values, 15 to 17: scalar streams with context-coded codes);
  // 18 to 23 are the compact container, whose header is not this one
  // (test_container_compact.cpp)
  for (uint16_t v : {0, 24, 0xFFFF}) {
    Bytes s = sample_stream();
    put(s, 4, v, 2);
    expect_rejected(s, "format version " + std::to_string(v), Code::unsupported_version);
    reseal_header(s);  // with a consistent checksum, too
    expect_rejected(s, "format version", Code::unsupported_version);
  }
}

// Version 8 is the 3D vector version: a version 8 stream of a 2D field is corrupt (the
// version is readable, the contents are not those of version 8), and so is a 3D vector
// header in a version 7 stream.
TEST(Container, Version8IsThe3DVectorVersion) {
  Bytes s = sample_stream();
  put(s, 4, 8, 2);
  reseal_header(s);
  expect_rejected(s, "2 component(s) in a version 8 stream");
  s = sample_stream();
  put(s, 4, 7, 2);
  put(s, 7, 3, 1);   // components 3
  put(s, 8, 3, 1);   // ndims 3
  put(s, 28, 2, 8);  // nz 2
  reseal_header(s);
  expect_rejected(s, "3 component(s) in a version 7 stream");
  // Version 9 (segmented codes) is a 2D version too.
  put(s, 4, 9, 2);
  reseal_header(s);
  expect_rejected(s, "3 component(s) in a version 9 stream");
  // Version 10 is 3D (segmented codes in mode speculative), and only in mode speculative.
  s = sample_stream();
  put(s, 4, 10, 2);
  reseal_header(s);
  expect_rejected(s, "2 component(s) in a version 10 stream");
  put(s, 7, 3, 1);   // components 3
  put(s, 8, 3, 1);   // ndims 3
  put(s, 28, 2, 8);  // nz 2
  reseal_header(s);
  EXPECT_TRUE(parse_container(s).ok()) << "a 3D speculative stream may be version 10";
  put(s, 9, kModeBlock, 1);
  reseal_header(s);
  expect_rejected(s, "mode 1 in a version 10 stream (only 3D speculative streams are version 10)");
  // Version 12 is 3D (with missing vertices), in any mode.
  s = sample_stream();
  put(s, 4, 12, 2);
  reseal_header(s);
  expect_rejected(s, "2 component(s) in a version 12 stream");
  put(s, 7, 3, 1);
  put(s, 8, 3, 1);
  put(s, 28, 2, 8);
  for (uint8_t mode : {kModeNone, kModeBlock, kModeSpeculative}) {
    put(s, 9, mode, 1);
    reseal_header(s);
    EXPECT_TRUE(parse_container(s).ok()) << "a masked 3D stream of mode " << int(mode) << " is version 12";
  }
  const uint32_t ids3d[] = {kSectionMeta, kSectionCodesU, kSectionCodesW, kSectionMaskAndValues};
  EXPECT_EQ(stream_version(ids3d), kFormatVersionMasked3D);
  const uint32_t ids3d_plain[] = {kSectionMeta, kSectionCodesU, kSectionCodesW};
  EXPECT_EQ(stream_version(ids3d_plain), kFormatVersionVector3D);
}

// Version 13 is the float64 3D vector version: every float64 3D vector stream, in any mode,
// masked or not, and nothing else; a float64 3D header in versions 8, 10 or 12 is corrupt.
TEST(Container, Version13IsTheFloat643DVectorVersion) {
  Bytes s = sample_stream();
  put(s, 4, 13, 2);
  reseal_header(s);
  expect_rejected(s, "2 component(s) in a version 13 stream");
  put(s, 7, 3, 1);   // components 3
  put(s, 8, 3, 1);   // ndims 3
  put(s, 28, 2, 8);  // nz 2
  reseal_header(s);
  expect_rejected(s, "data type 1 in a version 13 3D vector stream");
  put(s, 6, kDtypeFloat64, 1);
  for (uint8_t mode : {kModeNone, kModeBlock, kModeSpeculative}) {
    put(s, 9, mode, 1);
    reseal_header(s);
    EXPECT_TRUE(parse_container(s).ok()) << "a float64 3D stream of mode " << int(mode) << " is version 13";
  }
  for (uint16_t v : {8, 10, 12}) {
    put(s, 4, v, 2);
    put(s, 9, kModeSpeculative, 1);
    reseal_header(s);
    expect_rejected(s, "data type 2 in a version " + std::to_string(v) + " 3D vector stream");
  }
  const uint32_t ids3d[] = {kSectionMeta, kSectionCodesU, kSectionCodesW, kSectionMaskAndValues};
  EXPECT_EQ(stream_version(ids3d, false, kDtypeFloat64), kFormatVersionFloat64Vector3D);
  const uint32_t ids3d_plain[] = {kSectionMeta, kSectionCodesU, kSectionCodesW};
  EXPECT_EQ(stream_version(ids3d_plain, false, kDtypeFloat64), kFormatVersionFloat64Vector3D);
  EXPECT_EQ(stream_version(ids3d_plain), kFormatVersionVector3D);  // float32: unchanged
  EXPECT_EQ(kNewestLayoutVersion, kFormatVersionScalarLatticeCodedContext);
  EXPECT_EQ(kFormatVersion, kFormatVersionCompactShuffled);  // the newest: the compact container of version 23
}

// Versions 11 and 14 are the scalar lattice versions: a vector stream, or a scalar one in
// mode none, of either version is corrupt; a contour-tree scalar header parses.
TEST(Container, Versions11And14AreTheScalarLatticeVersions) {
  for (uint16_t v : {11, 14}) {
    const std::string vs = std::to_string(v);
    Bytes s = sample_stream();
    put(s, 4, v, 2);
    reseal_header(s);
    expect_rejected(s, "2 component(s) in a version " + vs +
                           " stream (only contour-tree scalar streams are versions 11, 14, 16 and 17)");
    put(s, 7, 1, 1);  // components 1
    reseal_header(s);
    expect_rejected(s, "1 component(s) in a version " + vs + " stream");
    put(s, 9, kModeContourTree, 1);
    reseal_header(s);
    EXPECT_TRUE(parse_container(s).ok()) << "a contour-tree scalar stream may be version " << vs;
  }
}

// Versions 15 to 17 are the context-coded scalar versions: coder 2 there and only there, a
// scalar field there, and 16 and 17 on the lattice (contour-tree mode) as 11 and 14 are.
TEST(Container, Versions15To17AreTheContextCodedScalarVersions) {
  for (uint16_t v : {15, 16, 17}) {
    const std::string vs = std::to_string(v);
    Bytes s = sample_stream();
    put(s, 4, v, 2);
    reseal_header(s);
    expect_rejected(s, "in a version " + vs + " stream (coder 2, the context coder, is that of versions 15 to 17");
    put(s, 10, kCoderContext, 1);
    reseal_header(s);
    expect_rejected(s, "2 components in a version " + vs + " stream (versions 15 to 17 hold scalar fields)");
    put(s, 7, 1, 1);  // components 1
    put(s, 9, kModeContourTree, 1);
    reseal_header(s);
    EXPECT_TRUE(parse_container(s).ok()) << "a context-coded contour-tree scalar stream may be version " << vs;
    put(s, 9, kModeNone, 1);
    reseal_header(s);
    if (v == 15) {
      EXPECT_TRUE(parse_container(s).ok()) << "mode none is version 15";
    } else {
      expect_rejected(s, "1 component(s) in a version " + vs + " stream");
    }
  }
  Bytes s = sample_stream();  // coder 2 in a version 2 vector stream
  put(s, 10, kCoderContext, 1);
  reseal_header(s);
  expect_rejected(s, "coder 2 in a version 2 stream");
  Header h = sample_header();  // and the writer refuses to write it
  h.coder = kCoderContext;
  EXPECT_FALSE(write_classic(h, sample_sections(), nullptr).ok());
}

TEST(Container, Version1StreamsAreReadUnlessTheyUseTheOldAnsBlob) {
  // Version 1 had the same layout: a Huffman vector stream still parses; one coded with the
  // version 1 ANS blob, or holding what only version 2 can (a scalar field), does not.
  Header h = sample_header();
  h.coder = kCoderHuffman;
  Bytes s = write_classic(h, sample_sections(), nullptr).value();
  put(s, 4, 1, 2);
  reseal_header(s);
  auto r = parse_container(s);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->header.version, 1);
  h.coder = kCoderAns;
  s = write_classic(h, sample_sections(), nullptr).value();
  put(s, 4, 1, 2);
  reseal_header(s);
  expect_rejected(s, "version 1 ANS blob", Code::unsupported_version);
  h.coder = kCoderHuffman;
  h.components = 1;
  h.mode = kModeContourTree;
  s = write_classic(h, {{kSectionMeta, {1}, false}}, nullptr).value();
  put(s, 4, 1, 2);
  reseal_header(s);
  expect_rejected(s, "version 1 stream holds a 2D vector field", Code::corrupt_stream);
}

TEST(Container, CraftedHeaderValuesAreRejected) {
  struct Case {
    std::size_t offset;
    uint64_t value;
    int bytes;
    const char* message;
  };
  const Case cases[] = {
      {6, 3, 1, "unknown data type 3"},
      {6, 2, 1, "data type 2 in a version 2 stream"},  // float64 streams are version 6
      {7, 0, 1, "component count 0"},
      {7, 4, 1, "component count 4"},
      {7, 3, 1, "3 components in a 2D field"},
      {8, 3, 1, "ndims 3"},
      {9, 3, 1, "unknown mode 3"},
      {10, 3, 1, "unknown coder 3"},
      {10, 2, 1, "coder 2 in a version 2 stream"},
      {11, 2, 1, "reserved header flag bits"},
      {11, kHeaderFlagZstd, 1, "header zstd flag is set but no section is compressed"},
      {12, 0, 8, "empty dimensions"},
      {20, 0, 8, "empty dimensions"},
      {28, 2, 8, "nz 2"},
      {28, 0, 8, "nz 0"},
      {12, uint64_t{1} << 40, 8, "exceed 2^40"},
      {12, ~uint64_t{0}, 8, "exceed 2^40"},
      {36, 2, 1, "unknown bound mode 2"},
      {37, 1, 1, "reserved bytes"},
      {39, 0x80, 1, "reserved bytes"},
      {40, std::bit_cast<uint64_t>(-1.0), 8, "bound value"},
      {40, std::bit_cast<uint64_t>(std::numeric_limits<double>::quiet_NaN()), 8, "bound value"},
      {48, std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity()), 4, "eb"},
      {48, std::bit_cast<uint32_t>(-0.5f), 4, "eb"},
      {52, 0, 2, "tile size 0"},
      {56, 257, 4, "section count 257 exceeds 256"},
      {56, 4, 4, "truncated in the section table"},
  };
  for (const Case& c : cases) {
    Bytes s = sample_stream();
    put(s, c.offset, c.value, c.bytes);
    reseal_header(s);
    SCOPED_TRACE(c.message);
    expect_rejected(s, c.message);
  }
  Bytes s = sample_stream();
  put(s, 56, 1000, 4);  // table cannot fit (and exceeds the cap)
  reseal_header(s);
  expect_rejected(s, "section count 1000");
  s = sample_stream();
  put(s, 56, 200, 4);
  reseal_header(s);
  expect_rejected(s, "truncated in the section table");
}

TEST(Container, OverlappingAndOutOfRangeSectionsAreRejected) {
  const uint64_t data_start = entry_at(3);  // three entries
  Bytes s;
  s = sample_stream(); set_entry(s, 0, 8, 0, 8);
  expect_rejected(s, "section 1 (meta) overlaps the preceding data (offset 0");
  s = sample_stream(); set_entry(s, 1, 8, data_start + 3, 8);
  expect_rejected(s, "section 3 (codes_u) overlaps the preceding data");
  s = sample_stream(); set_entry(s, 1, 8, data_start + 5, 8);
  expect_rejected(s, "section 3 (codes_u) leaves a gap");
  s = sample_stream(); set_entry(s, 2, 8, uint64_t{1} << 63, 8);
  expect_rejected(s, "section 4 (codes_v) lies outside the stream");
  s = sample_stream(); set_entry(s, 2, 16, ~uint64_t{0}, 8);
  expect_rejected(s, "section 4 (codes_v) lies outside the stream");
  s = sample_stream(); set_entry(s, 2, 16, 9, 8); set_entry(s, 2, 24, 9, 8);
  expect_rejected(s, "section 4 (codes_v) lies outside the stream");
  s = sample_stream(); set_entry(s, 0, 16, 3, 8); set_entry(s, 0, 24, 3, 8);
  expect_rejected(s, "section 3 (codes_u) leaves a gap");
  s = sample_stream(); set_entry(s, 2, 16, 7, 8); set_entry(s, 2, 24, 7, 8);
  expect_rejected(s, "unexpected data after the last section (1 bytes)");
  s = sample_stream(); set_entry(s, 1, 8, data_start, 8);  // same start as meta
  expect_rejected(s, "overlaps");
}

TEST(Container, CraftedSectionTableValuesAreRejected) {
  Bytes s;
  s = sample_stream(); set_entry(s, 1, 0, 0, 4);
  expect_rejected(s, "section table entry 1: unknown section id 0");
  s = sample_stream(); set_entry(s, 1, 0, kLastSectionId + 1, 4);
  expect_rejected(s, "unknown section id " + std::to_string(kLastSectionId + 1));
  // The mask sections exist from version 3 on: a version 2 stream must not hold one.
  s = sample_stream(); set_entry(s, 1, 0, kSectionMask, 4);
  expect_rejected(s, "section table entry 1: section 10 (mask) in a version 2 stream");
  // The source section exists from version 4 on: versions 2 and 3 must not hold one.
  for (uint16_t version : {2, 3}) {
    s = sample_stream();
    put(s, 4, version, 2);
    reseal_header(s);
    set_entry(s, 1, 0, kSectionSource, 4);
    expect_rejected(s, "section table entry 1: section 12 (source) in a version " + std::to_string(version) + " stream");
  }
  s = sample_stream();
  put(s, 4, 4, 2);
  reseal_header(s);
  set_entry(s, 1, 0, kSectionSource, 4);
  EXPECT_TRUE(parse_container(s).ok()) << "a version 4 stream may hold it";
  // mask_and_values exists from version 7 on.
  for (uint16_t version : {2, 3, 4, 5}) {  // (a float32 version 6 stream fails on its header)
    s = sample_stream();
    put(s, 4, version, 2);
    reseal_header(s);
    set_entry(s, 1, 0, kSectionMaskAndValues, 4);
    expect_rejected(s, "section table entry 1: section 13 (mask_and_values) in a version " + std::to_string(version) +
                           " stream");
  }
  s = sample_stream();
  put(s, 4, 7, 2);
  reseal_header(s);
  set_entry(s, 1, 0, kSectionMaskAndValues, 4);
  EXPECT_TRUE(parse_container(s).ok()) << "a version 7 stream may hold it";
  s = sample_stream(); set_entry(s, 2, 0, kSectionCodesU, 4);
  expect_rejected(s, "section table entry 2: duplicate section 3 (codes_u)");
  s = sample_stream(); set_entry(s, 0, 4, 8, 4);
  expect_rejected(s, "section 1 (meta): reserved flag bits set");
  // Bits 1 and 2 (byte shuffle) are version 23's: a classic stream holds neither.
  s = sample_stream(); set_entry(s, 0, 4, kSectionFlagZstd | kSectionFlagShuffle4, 4);
  expect_rejected(s, "section 1 (meta): byte-shuffled (only section 6 (exact_values) may be)");
  s = sample_stream(); set_entry(s, 1, 24, 9, 8);
  expect_rejected(s, "raw size differs from stored size");
  s = sample_stream(); set_entry(s, 1, 4, kSectionFlagZstd, 4);
  expect_rejected(s, "compressed but the header zstd flag is clear");
  s = sample_stream(); set_entry(s, 1, 4, kSectionFlagZstd, 4);
  put(s, 11, kHeaderFlagZstd, 1);
  reseal_header(s);
  expect_rejected(s, "compressed size is not smaller");
  s = sample_stream();
  set_entry(s, 1, 4, kSectionFlagZstd, 4);
  set_entry(s, 1, 24, uint64_t{1} << 50, 8);
  put(s, 11, kHeaderFlagZstd, 1);
  reseal_header(s);
  expect_rejected(s, "implausible");
}

TEST(Container, ReadSectionChecksBoundsAgainstTheGivenStream) {
  const Bytes s = sample_stream();
  const ParsedContainer p = parse_container(s).value();
  const Bytes shorter(s.begin(), s.begin() + 70);
  auto r = read_section(shorter, p, kSectionCodesV, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
}

// ---- Names and summary ----------------------------------------------------------------------
TEST(Container, SectionNames) {
  const char* names[] = {"meta",         "tile_bounds", "codes_u",     "codes_v",    "exact_index",
                         "exact_values", "outliers",    "bound_ids_u", "bound_ids_v", "mask",
                         "masked_values", "source",     "mask_and_values", "codes_w"};
  static_assert(std::size(names) == kLastSectionId);
  for (uint32_t id = 1; id <= kLastSectionId; ++id) EXPECT_EQ(section_name(id), names[id - 1]);
  EXPECT_EQ(section_name(0), "section_0");
  EXPECT_EQ(section_name(77), "section_77");
}

TEST(Container, DescribeListsHeaderAndSections) {
  const Bytes s = write_classic(sample_header(), compressible_sections(), &kFakeZstd).value();
  const std::string text = describe_container(parse_container(s).value());
  for (const char* want : {"format version 2", "float32", "nx=300 ny=200 nz=1", "speculative",
                           "ans", "REL 0.01", "0.0375", "anchor stride", "16", "codes_u",
                           "outliers", "1000", "yes", "0x"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_NE(text.find(std::to_string(s.size())), std::string::npos) << text;
}

}  // namespace
}  // namespace factz::detail
