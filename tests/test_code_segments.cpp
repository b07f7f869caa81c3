// Segmented code sections (format version 9, streams/code_segments.hpp): the writer's rule,
// the parser's checks on hostile sections, and what a speculative stream holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "backend/cpu/speculative_mode.hpp"
#include "streams/code_segments.hpp"
#include "streams/mask_sections.hpp"
#include "streams/vector_stream.hpp"
#include "streams/stream_common.hpp"
#include "synth.hpp"
#include "util/byte_io.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using detail::CodeSegment;
using detail::EntropyCoder;
using Bytes = std::vector<uint8_t>;

TEST(CodeSegments, PhasesMergeUntilASegmentHoldsTheMinimum) {
  using detail::kMinSegmentCodes;
  using detail::phase_segments;
  EXPECT_EQ(phase_segments({}), (std::vector<int64_t>{0}));
  EXPECT_EQ(phase_segments(std::vector<int64_t>{0, 0, 0}), (std::vector<int64_t>{0}));
  EXPECT_EQ(phase_segments(std::vector<int64_t>{5, 7}), (std::vector<int64_t>{12}));
  const int64_t m = kMinSegmentCodes;
  // Small phases merge; a segment closes at the first boundary with at least m codes.
  EXPECT_EQ(phase_segments(std::vector<int64_t>{1, 2, m - 3, 4 * m, 0, 16 * m}),
            (std::vector<int64_t>{m, 4 * m, 16 * m}));
  // A short tail joins the last segment; empty phases never make an empty segment.
  EXPECT_EQ(phase_segments(std::vector<int64_t>{m, 0, 3}), (std::vector<int64_t>{m + 3}));
  EXPECT_EQ(phase_segments(std::vector<int64_t>{0, m, 0, 2 * m, 0}), (std::vector<int64_t>{m, 2 * m}));
}

/// Symbols whose distribution changes from phase to phase: wide first, then ever narrower
/// (what a speculative schedule's levels give on a rough field).
std::vector<uint16_t> leveled_symbols(const std::vector<int64_t>& phases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> out;
  int width = 400;
  for (int64_t count : phases) {
    std::normal_distribution<double> d(0.0, width);
    for (int64_t i = 0; i < count; ++i) out.push_back(uint16_t(32768 + int(std::lround(d(rng))) % 30000));
    width = std::max(1, width / 5);
  }
  return out;
}

Bytes write(EntropyCoder coder, const std::vector<int64_t>& phases, const std::vector<uint16_t>& symbols) {
  Bytes out;
  const std::span<const uint16_t> all(symbols);
  const Status st = detail::write_segmented(
      phases, int64_t(symbols.size()),
      [&](int64_t first, int64_t count, Bytes& blob, std::optional<uint32_t>&) {
        return detail::entropy_encode(coder, all.subspan(size_t(first), size_t(count)), detail::kAnsCodeCenter, blob,
                                      2);
      },
      out);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out;
}

size_t segment_count(const Bytes& section, int64_t n) {
  std::vector<CodeSegment> segs;
  const Status st = detail::parse_segmented(section, n, segs);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return segs.size();
}

TEST(CodeSegments, RoundTripsWithBothCodersAndPicksTheSmallerLayoutForFewCodes) {
  const std::vector<int64_t> phases = {300, 900, 3000, 12000, 50000, 200000};
  const auto symbols = leveled_symbols(phases, 7);
  const int64_t n = int64_t(symbols.size());
  ASSERT_LT(n, detail::kAlwaysSegmentCodes);
  for (EntropyCoder coder : {EntropyCoder::huffman, EntropyCoder::ans}) {
    const Bytes section = write(coder, phases, symbols);
    // Levels this different pay for their own tables: more than one segment, and smaller
    // than one blob (whose section the writer also tried).
    EXPECT_GT(segment_count(section, n), 1u);
    const int64_t whole[1] = {n};
    const Bytes one = write(coder, std::vector<int64_t>(whole, whole + 1), symbols);
    EXPECT_EQ(segment_count(one, n), 1u);
    EXPECT_LT(section.size(), one.size());
    for (int threads : {1, 3}) {
      std::vector<uint16_t> back(symbols.size());
      const Status st = detail::decode_segmented(coder, section, detail::kAnsCodeCenter, back, threads);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(back, symbols);
    }
  }
  // One distribution throughout: the tables of more segments do not pay, one blob is written.
  std::vector<uint16_t> flat(static_cast<size_t>(n));
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d(0.0, 3.0);
  for (auto& s : flat) s = uint16_t(32768 + int(std::lround(d(rng))));
  const Bytes section = write(EntropyCoder::ans, phases, flat);
  EXPECT_EQ(segment_count(section, n), 1u);
  std::vector<uint16_t> back(flat.size());
  ASSERT_TRUE(detail::decode_segmented(EntropyCoder::ans, section, detail::kAnsCodeCenter, back, 2).ok());
  EXPECT_EQ(back, flat);
}

TEST(CodeSegments, ManyCodesAreAlwaysSegmentedByPhase) {
  const std::vector<int64_t> phases = {5000, 20000, 80000, 1000000};
  const auto symbols = leveled_symbols(phases, 11);
  const int64_t n = int64_t(symbols.size());
  ASSERT_GE(n, detail::kAlwaysSegmentCodes);
  const Bytes section = write(EntropyCoder::ans, phases, symbols);
  std::vector<CodeSegment> segs;
  ASSERT_TRUE(detail::parse_segmented(section, n, segs).ok());
  ASSERT_EQ(segs.size(), 4u);
  for (size_t k = 0; k < segs.size(); ++k) EXPECT_EQ(segs[k].count, phases[k]) << k;
  std::vector<uint16_t> back(symbols.size());
  ASSERT_TRUE(detail::decode_segmented(EntropyCoder::ans, section, detail::kAnsCodeCenter, back, 2).ok());
  EXPECT_EQ(back, symbols);
}

TEST(CodeSegments, NoCodesIsOneEmptySegment) {
  const Bytes section = write(EntropyCoder::ans, {0, 0}, {});
  std::vector<CodeSegment> segs;
  ASSERT_TRUE(detail::parse_segmented(section, 0, segs).ok());
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].count, 0);
  std::vector<uint16_t> none;
  EXPECT_TRUE(detail::decode_segmented(EntropyCoder::ans, section, detail::kAnsCodeCenter, none, 1).ok());
  // A count that the bound ids do not give is corrupt.
  std::vector<uint16_t> one(1);
  EXPECT_EQ(detail::decode_segmented(EntropyCoder::ans, section, detail::kAnsCodeCenter, one, 1).code(),
            Code::corrupt_stream);
}

/// A section from raw parts: the segment count, the counts, the sizes, then the blobs.
Bytes forge(uint64_t count, const std::vector<uint64_t>& counts, const std::vector<uint64_t>& sizes,
            const Bytes& blobs) {
  Bytes out;
  detail::put_varint(out, count);
  for (uint64_t c : counts) detail::put_varint(out, c);
  for (uint64_t s : sizes) detail::put_varint(out, s);
  out.insert(out.end(), blobs.begin(), blobs.end());
  return out;
}

void expect_corrupt(const Bytes& section, int64_t n, const std::string& needle, const std::string& what) {
  std::vector<CodeSegment> segs;
  const Status st = detail::parse_segmented(section, n, segs);
  EXPECT_EQ(st.code(), Code::corrupt_stream) << what << ": " << st.to_string();
  EXPECT_NE(st.message().find(needle), std::string::npos) << what << ": " << st.message();
}

TEST(CodeSegments, HostileSectionsAreCorruptNeverACrash) {
  // A valid two-segment section to damage: 10 and 20 symbols, blobs of 3 and 4 bytes (the
  // parser does not open the blobs).
  const Bytes blobs = {1, 2, 3, 4, 5, 6, 7};
  const Bytes good = forge(2, {10, 20}, {3, 4}, blobs);
  std::vector<CodeSegment> segs;
  ASSERT_TRUE(detail::parse_segmented(good, 30, segs).ok());
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[1].first, 10);
  EXPECT_EQ(segs[1].blob.size(), 4u);
  EXPECT_EQ(segs[1].blob[0], 4);

  expect_corrupt({}, 30, "segment count", "empty section");
  expect_corrupt(forge(0, {}, {}, {}), 30, "segment count", "no segment");
  expect_corrupt(forge(31, {}, {}, {}), 30, "segment count", "more segments than symbols");
  expect_corrupt(forge(uint64_t(1) << 62, {}, {}, {}), 30, "segment count", "huge segment count");
  expect_corrupt(forge(2, {10, 21}, {3, 4}, blobs), 30, "more symbols", "counts above the ids");
  expect_corrupt(forge(2, {10, 19}, {3, 4}, blobs), 30, "hold 29 symbols", "counts below the ids");
  expect_corrupt(forge(2, {0, 30}, {3, 4}, blobs), 30, "empty segment", "an empty segment");
  expect_corrupt(forge(2, {10, 20}, {3, 5}, blobs), 30, "exceed", "sizes beyond the section");
  expect_corrupt(forge(2, {10, 20}, {3, uint64_t(1) << 40}, blobs), 30, "exceeds", "huge size");
  expect_corrupt(forge(2, {10, 20}, {3, 3}, blobs), 30, "trailing", "a byte left over");
  expect_corrupt(Bytes(good.begin(), good.begin() + 3), 30, "", "truncated in the counts");
  expect_corrupt(Bytes(good.begin(), good.end() - 1), 30, "exceed", "truncated in the blobs");
  Bytes overlong = {0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  expect_corrupt(overlong, 30, "segment count", "an overlong varint");
  // Every truncation of a real section is refused cleanly, and so is every single-byte change
  // the decoder can notice (the blobs' own checks included).
  const std::vector<int64_t> phases = {3000, 9000, 30000};
  const auto symbols = leveled_symbols(phases, 5);
  const Bytes real = write(EntropyCoder::ans, phases, symbols);
  std::vector<uint16_t> back(symbols.size());
  for (size_t cut = 0; cut < real.size(); cut += 1 + cut / 16) {
    const Bytes part(real.begin(), real.begin() + cut);
    EXPECT_EQ(detail::decode_segmented(EntropyCoder::ans, part, detail::kAnsCodeCenter, back, 1).code(),
              Code::corrupt_stream)
        << "cut at " << cut;
  }
}

/// The codes_u section of a stream, undone from the zstd stage.
Bytes codes_u_of(const Bytes& stream) {
  auto pc = detail::parse_container(stream);
  EXPECT_TRUE(pc.ok());
  auto sec = detail::read_section(stream, pc.value(), detail::kSectionCodesU, &detail::zstd_stage_decompressor());
  EXPECT_TRUE(sec.ok());
  return sec.ok() ? sec.value() : Bytes{};
}

// FaCTz-S at REL 1e-3 with `coder`.
Options speculative_options(Coder coder) {
  Options o;
  o.mode = Mode::speculative;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-3;
  o.coder = coder;
  return o;
}

TEST(CodeSegments, SpeculativeStreamsAreVersion9AndSegmentARoughField) {
  // A rough 256 x 256 field: its levels' residuals differ, so the codes are segmented; the
  // stream keeps the guarantees and decodes to the same values with 1 and 3 threads.
  const VectorField2D f = synth::turbulence(256, 256, 77, 2.0);
  for (Coder coder : {Coder::ans, Coder::huffman}) {
    Options o = speculative_options(coder);
    auto s = compress(f, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(testing::layout_version(s.value()), detail::kFormatVersionSegmentedCodes);
    const Bytes codes = codes_u_of(s.value());
    ASSERT_FALSE(codes.empty());
    detail::ByteReader r(codes);
    uint64_t count = 0;
    ASSERT_TRUE(r.varint(count));
    EXPECT_GT(count, 1u) << "coder " << int(coder);
    DecompressOptions d1{Policy::serial, 1}, d3{Policy::omp, 3};
    auto a = decompress(s.value(), d1), b = decompress(s.value(), d3);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->u, b->u);
    EXPECT_EQ(a->v, b->v);
    auto cmp = compare(f, a.value());
    ASSERT_TRUE(cmp.ok());
    EXPECT_EQ(cmp->violations(), 0);
    // Threads never change the bytes.
    o.policy = Policy::omp;
    o.threads = 3;
    auto s3 = compress(f, o);
    ASSERT_TRUE(s3.ok());
    EXPECT_EQ(s3.value(), s.value());
  }
}

// Segments of the given counts (blobs left empty: code_windows reads the counts only).
std::vector<CodeSegment> segments_of(std::initializer_list<int64_t> counts) {
  std::vector<CodeSegment> out;
  int64_t first = 0;
  for (int64_t c : counts) {
    out.push_back(CodeSegment{first, c, {}});
    first += c;
  }
  return out;
}

TEST(CodeWindows, WholePhasesUntilTheMinimumAtSegmentEndsOfBothComponents) {
  using detail::code_windows;
  using detail::CodeWindow;
  auto eq = [](const CodeWindow& w, int64_t pb, int64_t pe, int64_t first, int64_t count, size_t ub, size_t ue,
               size_t vb, size_t ve) {
    return w.phase_begin == pb && w.phase_end == pe && w.first == first && w.count == count && w.seg_u_begin == ub &&
           w.seg_u_end == ue && w.seg_v_begin == vb && w.seg_v_end == ve;
  };
  const std::vector<int64_t> phases = {0, 3, 5, 0, 10, 7, 20};  // 45 codes
  {  // segments at every phase with codes: a window closes once it holds 10 codes
    const auto s = segments_of({3, 5, 10, 7, 20});
    const auto w = code_windows(phases, s, s, 10);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_TRUE(eq(w[0], 0, 5, 0, 18, 0, 3, 0, 3));  // 3 + 5 + 0 + 10
    EXPECT_TRUE(eq(w[1], 5, 7, 18, 27, 3, 5, 3, 5));  // 7 + 20: the last window takes the rest
  }
  {  // minimum 1: one window per phase that ends a segment (empty phases join the next)
    const auto s = segments_of({3, 5, 10, 7, 20});
    const auto w = code_windows(phases, s, s, 1);
    ASSERT_EQ(w.size(), 5u);
    EXPECT_TRUE(eq(w[0], 0, 2, 0, 3, 0, 1, 0, 1));
    EXPECT_TRUE(eq(w[1], 2, 3, 3, 5, 1, 2, 1, 2));
    EXPECT_TRUE(eq(w[2], 3, 5, 8, 10, 2, 3, 2, 3));
    EXPECT_TRUE(eq(w[4], 6, 7, 25, 20, 4, 5, 4, 5));
  }
  {  // u cut elsewhere than v: windows end only where both end
    const auto u = segments_of({8, 17, 20}), v = segments_of({3, 22, 20});
    const auto w = code_windows(phases, u, v, 1);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_TRUE(eq(w[0], 0, 6, 0, 25, 0, 2, 0, 2));  // 25 = 8 + 17 = 3 + 22, where phase 5 ends
    EXPECT_TRUE(eq(w[1], 6, 7, 25, 20, 2, 3, 2, 3));
  }
  {  // a segment across a phase boundary joins the phases it serves
    const auto s = segments_of({8, 37});
    const auto w = code_windows(phases, s, s, 1);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_TRUE(eq(w[0], 0, 3, 0, 8, 0, 1, 0, 1));
    EXPECT_TRUE(eq(w[1], 3, 7, 8, 37, 1, 2, 1, 2));
  }
  {  // one segment: one window, whatever the minimum
    const auto s = segments_of({45});
    const auto w = code_windows(phases, s, s, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_TRUE(eq(w[0], 0, 7, 0, 45, 0, 1, 0, 1));
  }
  {  // no codes: one window holding the empty segment
    const std::vector<int64_t> none = {0, 0, 0};
    const auto s = segments_of({0});
    const auto w = code_windows(none, s, s, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_TRUE(eq(w[0], 0, 3, 0, 0, 0, 1, 0, 1));
  }
}

TEST(CodeWindows, DecodingAWindowAtATimeGivesTheSameValues) {
  // A rough field (segmented codes), plain and with land: the speculative decoder with
  // windows of one segment each, with a few windows and with one (the codes whole) gives the
  // same bits, on 1 and 2 threads, and the same as decompress.
  VectorField2D f = synth::turbulence(256, 192, 78, 2.0);
  for (bool land : {false, true}) {
    if (land) {
      f.mask.assign(f.u.size(), 0);
      for (int64_t y = 0; y < f.ny; ++y)
        for (int64_t x = 0; x < f.nx; ++x)
          if ((x - 90) * (x - 90) + (y - 70) * (y - 70) < 900 || (x * 7 + y * 3) % 101 == 0)
            f.mask[size_t(y * f.nx + x)] = 1;
    }
    for (Coder coder : {Coder::ans, Coder::huffman}) {
      const Options o = speculative_options(coder);
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      auto whole = decompress(s.value(), DecompressOptions{Policy::serial, 1});
      ASSERT_TRUE(whole.ok()) << whole.status().to_string();
      auto pc = detail::parse_container(s.value());
      ASSERT_TRUE(pc.ok());
      const auto& h = pc->header;
      std::vector<uint8_t> mask;
      if (land) {
        ASSERT_TRUE(detail::read_mask(s.value(), pc.value(), f.nx, f.ny, mask).ok());
      }
      const uint8_t* missing = land ? mask.data() : nullptr;
      detail::SpeculativeDecodeInput in;
      ASSERT_TRUE(detail::parse_speculative(s.value(), pc.value(), 1, in, false, missing).ok());
      ASSERT_TRUE(in.codes_deferred);
      std::vector<CodeSegment> su, sv;
      int64_t n_codes = 0;
      for (int64_t c : in.phase_codes) n_codes += c;
      ASSERT_TRUE(detail::parse_segmented(in.coded_u, n_codes, su).ok());
      ASSERT_TRUE(detail::parse_segmented(in.coded_v, n_codes, sv).ok());
      ASSERT_GT(detail::code_windows(in.phase_codes, su, sv, 1).size(), 2u) << "the windows must be exercised";
      std::vector<float> u0, v0;
      for (int64_t min_window : {int64_t{1}, n_codes / 3, int64_t{1} << 40}) {
        for (int threads : {1, 2}) {
          std::vector<float> u(f.u.size(), -7.f), v(f.v.size(), -7.f);
          const Status st = detail::decode_speculative(h, in, threads, u, v, missing, min_window);
          ASSERT_TRUE(st.ok()) << st.to_string();
          if (u0.empty()) {
            u0 = u;
            v0 = v;
          }
          EXPECT_EQ(std::memcmp(u.data(), u0.data(), u.size() * 4), 0) << min_window << " " << threads;
          EXPECT_EQ(std::memcmp(v.data(), v0.data(), v.size() * 4), 0) << min_window << " " << threads;
        }
      }
      if (coder == Coder::ans) {
        // A damaged blob in the last segment of v (past the section's checksum): the windowed
        // decoder reports it as the whole one does, on any thread count.
        detail::SpeculativeDecodeInput bad = in;
        const CodeSegment& last = sv.back();
        const size_t at = size_t(last.blob.data() - in.coded_v.data()) + last.blob.size() / 2;
        bad.coded_v[at] ^= 0x5A;
        bad.coded_v[at + 1] ^= 0xC3;
        std::string message;
        for (int64_t min_window : {int64_t{1}, int64_t{1} << 40}) {
          for (int threads : {1, 2}) {
            std::vector<float> u(f.u.size()), v(f.v.size());
            const Status st = detail::decode_speculative(h, bad, threads, u, v, missing, min_window);
            EXPECT_EQ(st.code(), Code::corrupt_stream) << st.to_string();
            if (message.empty()) message = st.to_string();
            EXPECT_EQ(st.to_string(), message);
          }
        }
      }
      for (size_t k = 0; k < u0.size(); ++k) {
        if (missing && missing[k]) continue;  // decompress puts the stored bits there
        ASSERT_EQ(std::memcmp(&u0[k], &whole->u[k], 4), 0) << k;
        ASSERT_EQ(std::memcmp(&v0[k], &whole->v[k], 4), 0) << k;
      }
    }
  }
}

}  // namespace
}  // namespace factz
