// The compact container (format version 18, docs/format.md "Compact container") as a
// specification: the byte layout written out by hand from the document, the conversion to
// and from the classic container (same header fields, same section bytes), and rejection of
// every corrupted, truncated or crafted stream with a clean error. The classic container is
// pinned by test_container.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "synth.hpp"
#include "support/compact_places.hpp"

namespace factz::detail {
namespace {

using Bytes = std::vector<uint8_t>;

// ---- The layout, from docs/format.md (independently of container.cpp) -------------------
void append_le(Bytes& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(uint8_t(v >> (8 * i)));
}
void append_varint(Bytes& s, uint64_t v) {
  for (; v >= 0x80; v >>= 7) s.push_back(uint8_t(v | 0x80));
  s.push_back(uint8_t(v));
}
uint32_t crc_of(const Bytes& s, std::size_t off, std::size_t n) {
  return crc32c(std::span<const uint8_t>(s.data() + off, n));
}
void reseal(Bytes& s) { testing::reseal_compact(s); }

Header sample_header() {
  Header h;
  h.version = kFormatVersionWithoutMask;
  h.dtype = kDtypeFloat32;
  h.components = 2;
  h.ndims = 2;
  h.mode = kModeSpeculative;
  h.coder = kCoderAns;
  h.nx = 300;  // two varint bytes
  h.ny = 7;
  h.bound_mode = kBoundRel;
  h.bound_value = 0.01;
  h.eb = 0.0375f;
  h.tile = 32;
  h.anchor_stride = 4096;  // two varint bytes
  return h;
}

Bytes iota_bytes(std::size_t n, uint8_t start) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = uint8_t(start + 7 * i);
  return b;
}

std::vector<Section> sample_sections() {
  return {{kSectionMeta, iota_bytes(4, 1), false},
          {kSectionCodesU, iota_bytes(200, 50), false},
          {kSectionCodesV, iota_bytes(8, 90), false}};
}

// Byte-wise run-length coder standing in for zstd: (count, byte) pairs.
const Compressor kFakeZstd = [](std::span<const uint8_t> in, Bytes& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size();) {
    std::size_t run = 1;
    while (i + run < in.size() && run < 255 && in[i + run] == in[i]) ++run;
    out.push_back(uint8_t(run));
    out.push_back(in[i]);
    i += run;
  }
  return Status::Ok();
};

std::vector<Section> compressible_sections() {
  return {{kSectionMeta, iota_bytes(5, 3), true},     // offered, does not shrink
          {kSectionCodesU, Bytes(1000, 0x11), true},  // offered, shrinks: 1000 -> 8 bytes
          {kSectionCodesV, Bytes(600, 0x22), false},  // not offered
          {kSectionOutliers, Bytes{}, true}};         // empty
}

Bytes sample_stream() { return write_container(sample_header(), sample_sections(), nullptr).value(); }
Bytes packed_stream() { return write_container(sample_header(), compressible_sections(), &kFakeZstd).value(); }

void expect_rejected(const Bytes& s, const std::string& substring, Code code = Code::corrupt_stream) {
  auto r = parse_container(s);
  ASSERT_FALSE(r.ok()) << "accepted a stream that should fail with: " << substring;
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(substring), std::string::npos) << "message was: " << r.status().message();
}

// The compact prefix of the sample header with these entry bytes (each entry written by the
// caller), the header CRC appended.
Bytes prefix_with(const Header& h, uint8_t count, const Bytes& entries, uint8_t layout = 2) {
  Bytes s = {'F', 'C', 'T', 'Z'};
  append_le(s, 18, 2);
  for (uint8_t b : {layout, h.dtype, h.components, h.ndims, h.mode, h.coder, h.flags, h.bound_mode}) s.push_back(b);
  append_le(s, std::bit_cast<uint64_t>(h.bound_value), 8);
  append_le(s, std::bit_cast<uint32_t>(h.eb), 4);
  for (uint64_t v : {h.nx, h.ny, h.nz, uint64_t{h.tile}, uint64_t{h.anchor_stride}}) append_varint(s, v);
  s.push_back(count);
  s.insert(s.end(), entries.begin(), entries.end());
  append_le(s, crc_of(s, 0, s.size()), 4);
  return s;
}

TEST(CompactContainer, TheBytesAreThoseOfTheDocument) {
  const Bytes s = sample_stream();
  const auto sections = sample_sections();
  Bytes entries;
  for (const auto& sec : sections) {
    entries.push_back(uint8_t(sec.id));
    entries.push_back(0);  // flags: stored raw
    append_varint(entries, sec.raw.size());
    append_le(entries, crc32c(sec.raw), 4);
  }
  Bytes want = prefix_with(sample_header(), 3, entries);
  EXPECT_EQ(want.size(), 26u + 2 + 1 + 1 + 1 + 2 + 1 + (1 + 1 + 1 + 4) * 2 + (1 + 1 + 2 + 4) + 4);
  for (const auto& sec : sections) want.insert(want.end(), sec.raw.begin(), sec.raw.end());
  EXPECT_EQ(s, want);
  // The fixed part at its offsets.
  EXPECT_EQ(s[4] | (s[5] << 8), 18);
  EXPECT_EQ(s[6], kFormatVersionWithoutMask);
  EXPECT_EQ(s[8], 2);   // components
  EXPECT_EQ(s[10], kModeSpeculative);
  EXPECT_EQ(s[12], 0);  // flags: no zstd stage
  auto p = parse_container(s);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->layout, ContainerLayout::compact);
  EXPECT_EQ(p->format_version(), kFormatVersionCompact);
  EXPECT_EQ(p->header.version, kFormatVersionWithoutMask);
  EXPECT_EQ(p->header.nx, 300u);
  EXPECT_EQ(p->header.anchor_stride, 4096);
  EXPECT_EQ(p->data_offset, want.size() - 212);
  ASSERT_EQ(p->entries.size(), 3u);
  EXPECT_EQ(p->entries[1].offset, p->data_offset + 4);
  EXPECT_EQ(p->entries[2].offset, p->data_offset + 204);
}

TEST(CompactContainer, AZstdSectionCarriesItsRawSizeAndTheHeaderItsFlag) {
  const Bytes s = packed_stream();
  EXPECT_EQ(s[12], kHeaderFlagZstd);
  auto p = parse_container(s);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_EQ(p->entries.size(), 4u);
  EXPECT_EQ(p->entries[1].flags, kSectionFlagZstd);
  EXPECT_EQ(p->entries[1].stored_size, 8u);
  EXPECT_EQ(p->entries[1].raw_size, 1000u);
  // codes_u's entry: id 3, flag 1, stored 8, raw 1000 (two varint bytes), then its CRC.
  const Bytes entry = {3, 1, 8, 0xE8, 0x07};
  EXPECT_NE(std::search(s.begin(), s.begin() + std::ptrdiff_t(p->data_offset), entry.begin(), entry.end()),
            s.begin() + std::ptrdiff_t(p->data_offset));
  const Decompressor unrle = [](std::span<const uint8_t> in, uint64_t raw, Bytes& out) {
    out.clear();
    for (std::size_t i = 0; i + 1 < in.size(); i += 2) out.insert(out.end(), in[i], in[i + 1]);
    return out.size() == raw ? Status::Ok() : corrupt_stream("bad run");
  };
  auto codes = read_section(s, p.value(), kSectionCodesU, &unrle);
  ASSERT_TRUE(codes.ok());
  EXPECT_EQ(codes.value(), Bytes(1000, 0x11));
}

TEST(CompactContainer, ClassicAndCompactHoldTheSameFieldsAndSectionBytes) {
  for (const Bytes& compact : {sample_stream(), packed_stream()}) {
    auto classic = recontain(compact, ContainerLayout::classic);
    ASSERT_TRUE(classic.ok()) << classic.status().to_string();
    EXPECT_EQ(classic->size(), compact.size() + 64 + 40 * parse_container(compact)->entries.size() -
                                   parse_container(compact)->data_offset);
    EXPECT_EQ(classic.value()[4], kFormatVersionWithoutMask);  // a classic header carries the layout version
    auto a = parse_container(compact), b = parse_container(classic.value());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->layout, ContainerLayout::classic);
    EXPECT_EQ(a->header.nx, b->header.nx);
    EXPECT_EQ(a->header.version, b->header.version);
    EXPECT_EQ(a->header.flags, b->header.flags);
    EXPECT_EQ(a->header.anchor_stride, b->header.anchor_stride);
    ASSERT_EQ(a->entries.size(), b->entries.size());
    for (std::size_t i = 0; i < a->entries.size(); ++i) {
      const auto& x = a->entries[i];
      const auto& y = b->entries[i];
      EXPECT_EQ(x.id, y.id);
      EXPECT_EQ(x.flags, y.flags);
      EXPECT_EQ(x.raw_size, y.raw_size);
      EXPECT_EQ(x.crc, y.crc);
      EXPECT_TRUE(std::equal(compact.begin() + std::ptrdiff_t(x.offset),
                             compact.begin() + std::ptrdiff_t(x.offset + x.stored_size),
                             classic->begin() + std::ptrdiff_t(y.offset)));
    }
    auto back = recontain(classic.value(), ContainerLayout::compact);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.value(), compact);
    // Only a valid stream is converted.
    EXPECT_FALSE(recontain(Bytes(compact.begin(), compact.end() - 1), ContainerLayout::classic).ok());
  }
  // A version 1 stream has no compact form (its layout byte would be 1, which no compact
  // stream holds).
  Bytes old = write_container(sample_header(), sample_sections(), nullptr, ContainerLayout::classic).value();
  old[4] = 1;
  old[10] = kCoderHuffman;
  const uint32_t crc = crc32c(std::span<const uint8_t>(old.data(), 60));
  for (int b = 0; b < 4; ++b) old[std::size_t(60 + b)] = uint8_t(crc >> (8 * b));
  ASSERT_TRUE(parse_container(old).ok());
  EXPECT_EQ(recontain(old, ContainerLayout::compact).status().code(), Code::invalid_argument);
  EXPECT_TRUE(recontain(old, ContainerLayout::classic).ok());
  // The classic writer gives the same classic bytes.
  EXPECT_EQ(write_container(sample_header(), sample_sections(), nullptr, ContainerLayout::classic).value(),
            recontain(sample_stream(), ContainerLayout::classic).value());
}

TEST(CompactContainer, EverySingleByteCorruptionIsRejected) {
  for (const Bytes& good : {sample_stream(), packed_stream()}) {
    for (std::size_t i = 0; i < good.size(); ++i)
      for (uint8_t mask : {0x01, 0x10, 0x80, 0xFF}) {
        Bytes s = good;
        s[i] ^= mask;
        auto r = parse_container(s);
        ASSERT_FALSE(r.ok()) << "byte " << i << " mask " << int(mask);
        // A damaged version names an unsupported version unless it landed on one this build
        // reads (then the classic header's checksum, or its length, catches it).
        const uint16_t version = uint16_t(s[4] | s[5] << 8);
        const bool readable = version >= kOldestReadableVersion && version <= kFormatVersion;
        const Code want = (i == 4 || i == 5) && !readable ? Code::unsupported_version : Code::corrupt_stream;
        EXPECT_EQ(r.status().code(), want) << "byte " << i << ": " << r.status().to_string();
      }
  }
}

TEST(CompactContainer, EveryTruncationAndEveryExtensionIsRejected) {
  for (const Bytes& good : {sample_stream(), packed_stream()}) {
    for (std::size_t n = 0; n < good.size(); ++n) {
      auto r = parse_container(Bytes(good.begin(), good.begin() + std::ptrdiff_t(n)));
      ASSERT_FALSE(r.ok()) << n;
      EXPECT_EQ(r.status().code(), Code::corrupt_stream) << n << ": " << r.status().to_string();
    }
    Bytes longer = good;
    longer.push_back(0);
    expect_rejected(longer, "unexpected data after the last section (1 bytes)");
  }
  Bytes s = sample_stream();
  s.resize(20);
  expect_rejected(s, "stream truncated in the header (20 of at least 26 bytes)");
  s = sample_stream();
  s.resize(30);
  expect_rejected(s, "truncated in the header or section table");
}

TEST(CompactContainer, ResealedRandomMutationsFailCleanlyOrParse) {
  std::mt19937_64 rng(18);
  int parsed = 0, rejected = 0;
  for (const Bytes& good : {sample_stream(), packed_stream()}) {
    const std::size_t table_end = parse_container(good)->data_offset;
    for (int t = 0; t < 3000; ++t) {
      Bytes s = good;
      for (int k = 0, edits = 1 + int(rng() % 3); k < edits; ++k) s[6 + rng() % (table_end - 6)] = uint8_t(rng());
      reseal(s);
      auto r = parse_container(s);
      if (r.ok()) {
        ++parsed;
        // What parses is consistent: sections inside the stream, back to back, to its end.
        uint64_t at = r->data_offset;
        for (const auto& e : r->entries) {
          EXPECT_EQ(e.offset, at);
          at += e.stored_size;
        }
        EXPECT_EQ(at, s.size());
      } else {
        ++rejected;
        EXPECT_TRUE(r.status().code() == Code::corrupt_stream) << r.status().to_string();
        EXPECT_FALSE(r.status().message().empty());
      }
    }
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(parsed, 0);  // mutations of the bound value, eb's low bits and the like
}

TEST(CompactContainer, CraftedFieldsAreRejectedByName) {
  const Header h = sample_header();
  Bytes meta;  // one raw section of 4 bytes
  meta = {1, 0, 4};
  append_le(meta, crc32c(iota_bytes(4, 1)), 4);
  auto with_meta = [](Bytes prefix) {
    const Bytes body = iota_bytes(4, 1);
    prefix.insert(prefix.end(), body.begin(), body.end());
    return prefix;
  };
  ASSERT_TRUE(parse_container(with_meta(prefix_with(h, 1, meta))).ok());
  for (uint8_t layout : {0, 1, 18, 19, 255})
    expect_rejected(with_meta(prefix_with(h, 1, meta, layout)), "layout version " + std::to_string(layout));
  // A varint longer than it needs to be: nx 300 as three bytes.
  Bytes s = with_meta(prefix_with(h, 1, meta));
  s[26] |= 0x80;
  s[27] |= 0x80;
  s.insert(s.begin() + 28, 0x00);
  reseal(s);
  expect_rejected(s, "nx is not in its shortest varint form");
  // A varint of eleven bytes, and one whose tenth byte carries more than bit 63.
  Bytes eleven = with_meta(prefix_with(h, 1, meta));
  eleven.insert(eleven.begin() + 26, 9, 0xFF);
  eleven[26 + 9] |= 0x80;
  reseal(eleven);
  expect_rejected(eleven, "nx does not fit 64 bits");
  Header big = h;
  big.tile = 1;
  Bytes t = prefix_with(big, 1, meta);
  t[26 + 2 + 1 + 1] = 0x80;  // tile 1 -> 65536 in three bytes
  t.insert(t.begin() + 31, {0x80, 0x04});
  t.resize(t.size() - 4);
  append_le(t, crc_of(t, 0, t.size()), 4);
  expect_rejected(with_meta(t), "above 65535");
  // More than 256 sections.
  Bytes many = prefix_with(h, 0, {});
  many[26 + 2 + 1 + 1 + 1 + 2] = 0x81;  // count 0 -> 257 in two bytes
  many.insert(many.begin() + 34, 0x02);
  reseal(many);
  expect_rejected(many, "section count 257 exceeds 256");
  // An unknown id, a reserved flag bit, a zstd section under a clear header flag.
  Bytes unknown = {15, 0, 4};
  append_le(unknown, crc32c(iota_bytes(4, 1)), 4);
  expect_rejected(with_meta(prefix_with(h, 1, unknown)), "unknown section id 15");
  Bytes reserved = {1, 8, 4};
  append_le(reserved, crc32c(iota_bytes(4, 1)), 4);
  expect_rejected(with_meta(prefix_with(h, 1, reserved)), "reserved flag bits");
  Bytes zstd = {1, 1, 4, 9};
  append_le(zstd, crc32c(iota_bytes(4, 1)), 4);
  expect_rejected(with_meta(prefix_with(h, 1, zstd)), "header zstd flag is clear");
  Header flagged = h;
  flagged.flags = kHeaderFlagZstd;
  Bytes same = {1, 1, 4, 4};
  append_le(same, crc32c(iota_bytes(4, 1)), 4);
  expect_rejected(with_meta(prefix_with(flagged, 1, same)), "compressed size is not smaller");
  // A section past the end, and a header field the classic header refuses too.
  Bytes far = {1, 0, 5};
  append_le(far, crc32c(iota_bytes(4, 1)), 4);
  expect_rejected(with_meta(prefix_with(h, 1, far)), "lies outside the stream");
  Header three = h;
  three.components = 3;
  expect_rejected(with_meta(prefix_with(three, 1, meta)), "3 components in a 2D field");
}

TEST(CompactContainer, StreamsBackToBackAreToldApart) {
  const Bytes a = sample_stream(), b = packed_stream();
  const Bytes c = recontain(a, ContainerLayout::classic).value();
  Bytes all = a;
  all.insert(all.end(), c.begin(), c.end());
  all.insert(all.end(), b.begin(), b.end());
  std::span<const uint8_t> rest(all);
  for (const Bytes* one : {&a, &c, &b}) {
    auto n = leading_stream_size(rest);
    ASSERT_TRUE(n.ok()) << n.status().to_string();
    EXPECT_EQ(n.value(), one->size());
    rest = rest.subspan(n.value());
  }
  EXPECT_TRUE(rest.empty());
  for (std::size_t cut : {std::size_t{10}, a.size() - 1}) {
    auto n = leading_stream_size(std::span<const uint8_t>(a.data(), cut));
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().code(), Code::corrupt_stream) << n.status().to_string();
  }
  Bytes damaged = all;
  damaged[a.size() + 3] ^= 1;  // the second stream's magic
  auto first = leading_stream_size(damaged);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(leading_stream_size(std::span<const uint8_t>(damaged).subspan(first.value())).ok());
}

TEST(CompactContainer, TheComponentsByteIsFoundInEitherContainer) {
  Header scalar = sample_header();
  scalar.components = 1;
  scalar.mode = kModeNone;
  const Bytes s = write_container(scalar, sample_sections(), nullptr).value();
  EXPECT_EQ(peek_components(s), 1);
  EXPECT_EQ(peek_components(recontain(s, ContainerLayout::classic).value()), 1);
  EXPECT_EQ(peek_components(sample_stream()), 2);
  EXPECT_EQ(stream_components(sample_stream()), 2);
  Bytes damaged = sample_stream();
  damaged[4] ^= 0x5A;  // no version this build reads: nothing to say
  EXPECT_EQ(peek_components(damaged), 0);
  EXPECT_EQ(peek_components(Bytes{'F', 'C', 'T'}), 0);
  EXPECT_EQ(peek_components(Bytes{'N', 'O', 'P', 'E', 18, 0, 2, 1, 2}), 0);
}

TEST(CompactContainer, DescribeNamesTheContainerAndTheLayoutVersion) {
  auto p = parse_container(packed_stream());
  ASSERT_TRUE(p.ok());
  const std::string d = describe_container(p.value());
  EXPECT_NE(d.find("format version 18: compact container, sections of format version 2"), std::string::npos) << d;
  EXPECT_NE(d.find("stream bytes    " + std::to_string(packed_stream().size())), std::string::npos) << d;
}

// Version 19: the compact container of every stream with a source section, and only of such a
// stream; a scalar or 3D vector stream holds one only there (docs/format.md "Compact
// container"; the record's own version is the stream layer's, test_source_record.cpp).
TEST(CompactContainer, Version19IsExactlyAStreamWithASource) {
  // The container reads only the record's first byte, its version: 2 makes version 19.
  const Bytes record = iota_bytes(12, 2);
  auto with_source = [&](std::vector<Section> sections) {
    sections.push_back({kSectionSource, record, false});
    return sections;
  };
  Header scalar = sample_header();
  scalar.components = 1;
  scalar.mode = kModeNone;
  scalar.anchor_stride = 0;
  Header vector2d = sample_header();
  vector2d.mode = kModeNone;
  vector2d.anchor_stride = 0;
  Header h3 = sample_header();
  h3.components = 3;
  h3.ndims = 3;
  h3.nz = 2;
  h3.mode = kModeNone;
  h3.anchor_stride = 0;
  h3.tile = 16;
  h3.version = kFormatVersionVector3D;
  std::vector<Section> s3 = sample_sections();
  s3.push_back({kSectionCodesW, iota_bytes(5, 9), false});
  // Without a source: version 18.
  EXPECT_EQ(write_container(scalar, sample_sections(), nullptr).value()[4], 18);
  EXPECT_EQ(write_container(vector2d, sample_sections(), nullptr).value()[4], 18);
  EXPECT_EQ(write_container(h3, s3, nullptr).value()[4], 18);
  // With one: version 19 (layout version 4 for the 2D and scalar ones), parsed, described, no
  // classic form.
  scalar.version = kFormatVersionWithSource;
  vector2d.version = kFormatVersionWithSource;
  const Bytes s19 = write_container(scalar, with_source(sample_sections()), nullptr).value();
  const Bytes v2 = write_container(vector2d, with_source(sample_sections()), nullptr).value();
  const Bytes v3 = write_container(h3, with_source(s3), nullptr).value();
  for (const Bytes* b : {&s19, &v2, &v3}) {
    EXPECT_EQ((*b)[4] | (*b)[5] << 8, kFormatVersionCompactSource);
    auto p = parse_container(*b);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->format_version(), 19);
    EXPECT_EQ(recontain(*b, ContainerLayout::classic).status().code(), Code::invalid_argument);
    EXPECT_EQ(recontain(*b, ContainerLayout::compact).value(), *b);
  }
  auto p = parse_container(s19);
  EXPECT_EQ(p->header.version, kFormatVersionWithSource);
  EXPECT_EQ(peek_components(s19), 1);
  EXPECT_NE(describe_container(p.value()).find("format version 19: compact container, sections of format version 4"),
            std::string::npos);
  EXPECT_EQ(write_container(scalar, with_source(sample_sections()), nullptr, ContainerLayout::classic).status().code(),
            Code::invalid_argument);
  // Forged (checksums resealed): a scalar or 3D stream with a source as version 18, a stream
  // without one as 19, version 20. A 2D stream with a source in version 18 is one an earlier
  // build wrote: the container takes it (its record must then be of version 1), and converts
  // it both ways keeping its version.
  expect_rejected(testing::relabelled(s19, 18), "scalar and 3D vector streams hold it from version 19 on");
  expect_rejected(testing::relabelled(v3, 18), "from version 19 on");
  expect_rejected(testing::relabelled(sample_stream(), 19), "a version 19 stream without a source section");
  const Bytes old2d = testing::relabelled(v2, 18);
  ASSERT_TRUE(parse_container(old2d).ok());
  const Bytes classic2d = recontain(old2d, ContainerLayout::classic).value();
  EXPECT_EQ(recontain(classic2d, ContainerLayout::compact).value(), old2d);
  const Bytes forged = testing::relabelled(s19, kFormatVersion + 1);
  EXPECT_EQ(parse_container(forged).status().code(), Code::unsupported_version);
  // Version 22 holds the layouts 22 and 23 only (the interpolation predictor's scalar streams).
  expect_rejected(testing::relabelled(s19, 22), "layout version 4 in a version 22 stream (22 or 23)");
  // A record of version 3 (its first byte; auxiliary variables) makes version 20, one of
  // version 4 (auxiliary variables with own dimensions, such as CF bounds) version 21; neither
  // has a classic form, and either without a source section is corrupt. (Which record version
  // goes with which stream version is the stream layer's check: test_source_record.cpp.)
  for (const auto& [record_version, stream_version] :
       {std::pair<uint8_t, uint16_t>{3, kFormatVersionCompactAuxiliary}, {4, kFormatVersionCompactOwnDimensions}}) {
    SCOPED_TRACE(stream_version);
    Bytes later = record;
    later[0] = record_version;
    std::vector<Section> sections = sample_sections();
    sections.push_back({kSectionSource, later, false});
    const Bytes v = write_container(vector2d, sections, nullptr).value();
    EXPECT_EQ(v[4] | v[5] << 8, stream_version);
    ASSERT_TRUE(parse_container(v).ok());
    EXPECT_TRUE(testing::is_compact(v));
    EXPECT_EQ(recontain(v, ContainerLayout::classic).status().code(), Code::invalid_argument);
    EXPECT_EQ(recontain(v, ContainerLayout::compact).value(), v);
    EXPECT_EQ(write_container(vector2d, sections, nullptr, ContainerLayout::classic).status().code(),
              Code::invalid_argument);
    expect_rejected(testing::relabelled(sample_stream(), stream_version),
                    "a version " + std::to_string(stream_version) + " stream without a source section");
  }
}

// What compress writes: version 18 around the sections it wrote before, and a small field's
// stream shorter by the classic container's overhead; with the zstd stage, version 23 where
// the exact values went to it byte-shuffled, which has no classic form.
TEST(CompactContainer, CompressWritesItAndSmallStreamsShrink) {
  const VectorField2D f = synth::vortices(36, 33, 5, 3);
  int shuffled = 0;
  for (bool zstd : {false, true})
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
      SCOPED_TRACE(std::string("zstd ") + (zstd ? "on" : "off") + ", mode " + std::to_string(int(mode)));
      Options o;
      o.mode = mode;
      o.bound_mode = BoundMode::rel;
      o.bound = 1e-3;
      o.zstd = zstd;
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_TRUE(testing::is_compact(s.value()));
      const auto p = parse_container(s.value());
      ASSERT_TRUE(p.ok());
      EXPECT_LE(p->data_offset, 26u + 6 * 3 + 13 * p->entries.size() + 4);
      if (p->compact_version == kFormatVersionCompactShuffled) {
        ++shuffled;
        EXPECT_TRUE(zstd);
        EXPECT_EQ(recontain(s.value(), ContainerLayout::classic).status().code(), Code::invalid_argument);
        EXPECT_TRUE(decompress(s.value()).ok());
        continue;
      }
      EXPECT_EQ(p->compact_version, kFormatVersionCompact);
      const Bytes classic = recontain(s.value(), ContainerLayout::classic).value();
      const std::size_t classic_overhead = 64 + 40 * p->entries.size();
      EXPECT_EQ(classic.size() - s->size(), classic_overhead - p->data_offset);
      EXPECT_GE(classic_overhead - p->data_offset, 20 + 28 * p->entries.size());
      auto a = decompress(s.value()), b = decompress(classic);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->u, b->u);
      EXPECT_EQ(a->v, b->v);
    }
  EXPECT_GE(shuffled, 1) << "no mode's exact values were stored shuffled (the test no longer sees version 23)";
}

}  // namespace
}  // namespace factz::detail
