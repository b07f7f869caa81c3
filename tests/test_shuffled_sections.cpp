// Byte-shuffled exact values (format version 23, docs/format.md "Byte-shuffled sections"):
// the shuffle itself, what the writer keeps, what a reader refuses, and that every stream kind
// decodes to the values of the same stream without the zstd stage.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codec/zstd_stage.hpp"
#include "factz/compress3d.hpp"
#include "factz/factz.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/compact_places.hpp"
#include "synth.hpp"
#include "synth3d.hpp"

namespace factz::detail {
namespace {

using Bytes = std::vector<uint8_t>;

uint16_t container_version(const Bytes& s) { return uint16_t(s[4] | s[5] << 8); }

const Compressor kZstd = [](std::span<const uint8_t> in, Bytes& out) { return zstd_compress(in, 3, out); };

Header vector_header() {
  Header h;
  h.version = kFormatVersionWithoutMask;
  h.dtype = kDtypeFloat32;
  h.components = 2;
  h.ndims = 2;
  h.mode = kModeBlock;
  h.coder = kCoderAns;
  h.nx = 64;
  h.ny = 40;
  h.bound_mode = kBoundRel;
  h.bound_value = 0.01;
  h.eb = 0.0375f;
  h.tile = 32;
  return h;
}

/// Values as a block stream lists them: smooth, few significant bits, one after the other.
Bytes smooth_values(int n) {
  Bytes b;
  for (int i = 0; i < n; ++i) {
    const float x = std::ldexp(std::round(std::ldexp(std::sin(0.01f * float(i)) * 3.0f, 10)), -10);
    const auto u = std::bit_cast<uint32_t>(x);
    for (int k = 0; k < 4; ++k) b.push_back(uint8_t(u >> (8 * k)));
  }
  return b;
}

std::vector<Section> sections_with(Bytes values, uint8_t shuffle) {
  std::vector<Section> s;
  s.push_back({kSectionMeta, Bytes{1, 2, 3, 4, 5}});
  s.push_back({kSectionCodesU, Bytes(300, 7), true});
  Section ex{kSectionExactValues, std::move(values), true};
  ex.shuffle = shuffle;
  s.push_back(std::move(ex));
  return s;
}

const ParsedContainer::Entry& entry(const ParsedContainer& p, uint32_t id) {
  for (const auto& e : p.entries)
    if (e.id == id) return e;
  throw std::runtime_error("no such section");
}

/// Offset of section `index`'s flags byte in a compact stream's table.
std::size_t flags_offset(const Bytes& s, std::size_t index) {
  std::size_t at = testing::kCompactFixed;
  auto skip_varint = [&] {
    while (s[at++] & 0x80) {
    }
  };
  for (int i = 0; i < 6; ++i) skip_varint();  // nx, ny, nz, tile, anchor stride, count
  for (std::size_t i = 0;; ++i) {
    if (i == index) return at + 1;
    const uint8_t flags = s[at + 1];
    at += 2;
    skip_varint();
    if (flags & kSectionFlagZstd) skip_varint();
    at += 4;
  }
}

void expect_corrupt(const Bytes& s, const std::string& substring) {
  auto r = parse_container(s);
  ASSERT_FALSE(r.ok()) << "accepted; expected: " << substring;
  EXPECT_EQ(r.status().code(), Code::corrupt_stream) << r.status().to_string();
  EXPECT_NE(r.status().message().find(substring), std::string::npos) << r.status().message();
}

TEST(ShuffledSections, TheShuffleGroupsBytesByTheirPlaceInAValue) {
  const Bytes ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(shuffle_bytes(ten, 4), (Bytes{0, 4, 8, 1, 5, 9, 2, 6, 3, 7}));
  EXPECT_EQ(shuffle_bytes(ten, 8), (Bytes{0, 8, 1, 9, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(unshuffle_bytes(Bytes{0, 4, 8, 1, 5, 9, 2, 6, 3, 7}, 4), ten);
  std::mt19937 rng(3);
  for (unsigned w : {4u, 8u})
    for (std::size_t n = 0; n < 70; ++n) {
      Bytes b(n);
      for (auto& x : b) x = uint8_t(rng());
      const Bytes s = shuffle_bytes(b, w);
      ASSERT_EQ(s.size(), n);
      EXPECT_EQ(unshuffle_bytes(s, w), b) << "width " << w << ", " << n << " bytes";
    }
}

TEST(ShuffledSections, TheWriterKeepsTheShuffleOnlyWhereItIsSmaller) {
  const Bytes values = smooth_values(2000);
  auto plain = write_container(vector_header(), sections_with(values, 0), &kZstd);
  auto shuffled = write_container(vector_header(), sections_with(values, 4), &kZstd);
  ASSERT_TRUE(plain.ok() && shuffled.ok()) << shuffled.status().to_string();
  EXPECT_EQ(container_version(plain.value()), kFormatVersionCompact);
  EXPECT_EQ(container_version(shuffled.value()), kFormatVersionCompactShuffled);
  EXPECT_LT(shuffled->size(), plain->size());
  auto p = parse_container(shuffled.value());
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(entry(p.value(), kSectionExactValues).flags, kSectionFlagZstd | kSectionFlagShuffle4);
  EXPECT_EQ(entry(p.value(), kSectionCodesU).flags, kSectionFlagZstd);
  EXPECT_EQ(p->header.version, kFormatVersionWithoutMask);  // the layout is unchanged
  auto back = read_section(shuffled.value(), p.value(), kSectionExactValues, &zstd_stage_decompressor());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), values);
  EXPECT_NE(describe_container(p.value()).find("4 bytes"), std::string::npos);
  // Width 8 (float64 values) reads back too.
  auto wide = write_container(vector_header(), sections_with(values, 8), &kZstd);
  ASSERT_TRUE(wide.ok());
  auto pw = parse_container(wide.value());
  ASSERT_TRUE(pw.ok());
  if (shuffle_width(entry(pw.value(), kSectionExactValues).flags) == 8) {
    EXPECT_EQ(container_version(wide.value()), kFormatVersionCompactShuffled);
    EXPECT_EQ(read_section(wide.value(), pw.value(), kSectionExactValues, &zstd_stage_decompressor()).value(), values);
  }
  // Bytes the shuffle does not shrink (random) stay unshuffled, and the stream version 18.
  std::mt19937 rng(5);
  Bytes noise(4000);
  for (auto& x : noise) x = uint8_t(rng());
  auto n = write_container(vector_header(), sections_with(noise, 4), &kZstd);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(container_version(n.value()), kFormatVersionCompact);
  EXPECT_FALSE(testing::has_shuffled_section(n.value()));
  // No zstd stage: nothing is shuffled.
  auto raw = write_container(vector_header(), sections_with(values, 4), nullptr);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(container_version(raw.value()), kFormatVersionCompact);
}

TEST(ShuffledSections, AWriterRefusesWhatTheFormatDoesNotHold) {
  const Bytes values = smooth_values(2000);
  // Only exact_values, only widths 4 and 8.
  std::vector<Section> other = sections_with(values, 0);
  other[1].shuffle = 4;
  EXPECT_EQ(write_container(vector_header(), other, &kZstd).status().code(), Code::invalid_argument);
  EXPECT_EQ(write_container(vector_header(), sections_with(values, 3), &kZstd).status().code(), Code::invalid_argument);
  // Version 23 has no classic container, either way.
  EXPECT_EQ(write_container(vector_header(), sections_with(values, 4), &kZstd, ContainerLayout::classic).status().code(),
            Code::invalid_argument);
  const Bytes s = write_container(vector_header(), sections_with(values, 4), &kZstd).value();
  auto c = recontain(s, ContainerLayout::classic);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("byte-shuffled"), std::string::npos) << c.status().message();
  EXPECT_EQ(recontain(s, ContainerLayout::compact).value(), s);
}

TEST(ShuffledSections, AReaderRefusesShufflesTheFormatDoesNotHold) {
  const Bytes values = smooth_values(2000);
  const Bytes s = write_container(vector_header(), sections_with(values, 4), &kZstd).value();
  ASSERT_TRUE(parse_container(s).ok());
  // Another version: 18 to 22 hold no shuffled section (22 holds only the scalar interpolation
  // layouts); a version 23 stream without one is corrupt.
  expect_corrupt(testing::relabelled(s, 18), "byte-shuffled in a format version 18 stream");
  expect_corrupt(testing::relabelled(s, 19), "byte-shuffled in a format version 19 stream");
  expect_corrupt(testing::relabelled(s, 22), "layout version 2 in a version 22 stream");
  const Bytes plain = write_container(vector_header(), sections_with(values, 0), &kZstd).value();
  expect_corrupt(testing::relabelled(plain, 23), "a version 23 stream without a byte-shuffled section");
  // Both widths at once; the shuffle on another section; the shuffle without the zstd stage.
  Bytes both = s;
  both[flags_offset(both, 2)] |= kSectionFlagShuffle8;
  testing::reseal_compact(both);
  expect_corrupt(both, "shuffled with two widths");
  Bytes codes = s;
  codes[flags_offset(codes, 1)] |= kSectionFlagShuffle4;
  testing::reseal_compact(codes);
  expect_corrupt(codes, "section 3 (codes_u): byte-shuffled (only section 6 (exact_values) may be)");
  Bytes unzstd = write_container(vector_header(), sections_with(values, 0), nullptr).value();
  unzstd[4] = uint8_t(kFormatVersionCompactShuffled);
  unzstd[flags_offset(unzstd, 2)] = uint8_t(kSectionFlagShuffle4);
  testing::reseal_compact(unzstd);
  expect_corrupt(unzstd, "byte-shuffled but not zstd-compressed");
  // A reserved bit beside the shuffle.
  Bytes reserved = s;
  reserved[flags_offset(reserved, 2)] |= 0x08;
  testing::reseal_compact(reserved);
  expect_corrupt(reserved, "reserved flag bits set");
  // Every damaged byte is refused or decodes; nothing crashes.
  for (std::size_t i = 0; i < s.size(); i += 7) {
    Bytes d = s;
    d[i] ^= 0x5a;
    testing::reseal_compact(d);
    auto p = parse_container(d);
    if (p.ok()) (void)read_section(d, p.value(), kSectionExactValues, &zstd_stage_decompressor());
  }
}

/// The options of a stream with the zstd stage on (`[0]`) and off (`[1]`).
std::array<Options, 2> with_and_without_zstd(Mode mode, double rel) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = rel;
  o.zstd = true;
  Options off = o;
  off.zstd = false;
  return {o, off};
}

// What the zstd stage does to the exact values changes no decoded value: every vector stream
// kind, with the stage on, decodes to the values of the same stream with it off, and some of
// them are version 23 (scalar streams: tests/scalar/test_scalar_shuffle.cpp).
TEST(ShuffledSections, EveryStreamKindDecodesToTheValuesOfItsUnshuffledStream) {
  int shuffled = 0;
  {  // 2D vector, float32 and float64, modes none and block (the exact lists) and speculative
    const VectorField2D f = synth::turbulence(96, 80, 31, 2.0);
    VectorField2D64 f64;
    f64.nx = f.nx;
    f64.ny = f.ny;
    f64.u.assign(f.u.begin(), f.u.end());
    f64.v.assign(f.v.begin(), f.v.end());
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
      for (double rel : {1e-2, 1e-3}) {
        SCOPED_TRACE("2D mode " + std::to_string(int(mode)) + " REL " + std::to_string(rel));
        const auto [o, off] = with_and_without_zstd(mode, rel);
        auto on32 = compress(f, o), off32 = compress(f, off);
        ASSERT_TRUE(on32.ok() && off32.ok());
        shuffled += testing::has_shuffled_section(on32.value());
        EXPECT_EQ(container_version(on32.value()),
                  testing::expected_compact_version(on32.value(), kFormatVersionCompact));
        auto a = decompress(on32.value()), b = decompress(off32.value());
        ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string();
        EXPECT_EQ(a->u, b->u);
        EXPECT_EQ(a->v, b->v);
        auto on64 = compress(f64, o), off64 = compress(f64, off);
        ASSERT_TRUE(on64.ok() && off64.ok());
        shuffled += testing::has_shuffled_section(on64.value());
        auto c = decompress64(on64.value()), d = decompress64(off64.value());
        ASSERT_TRUE(c.ok() && d.ok()) << c.status().to_string();
        EXPECT_EQ(c->u, d->u);
        EXPECT_EQ(c->v, d->v);
      }
  }
  {  // 3D vector, modes none and block
    const VectorField3D f = testing::random_modes(20, 18, 16, 7, 24, 6);
    for (Mode mode : {Mode::none, Mode::block}) {
      SCOPED_TRACE("3D mode " + std::to_string(int(mode)));
      const auto [o, off] = with_and_without_zstd(mode, 1e-2);
      auto on = compress(f, o), no = compress(f, off);
      ASSERT_TRUE(on.ok() && no.ok());
      shuffled += testing::has_shuffled_section(on.value());
      auto a = decompress3d(on.value()), b = decompress3d(no.value());
      ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string();
      EXPECT_EQ(a->u, b->u);
      EXPECT_EQ(a->v, b->v);
      EXPECT_EQ(a->w, b->w);
    }
  }
  EXPECT_GE(shuffled, 4) << "too few streams kept the shuffle for this test to see version 23";
}

}  // namespace
}  // namespace factz::detail
