// Golden streams of format versions 2, 3, 5, 7 and 9 (tests/data/golden, see its README.md): each
// file must keep decoding to the same values, and compressing the same synthetic input with the
// same options must keep producing the file byte for byte. Masked streams of the tiled modes
// written as version 3 (before version 5 left the missing vertices' codes out) must keep
// decoding to the same values, and so must the speculative streams of the linear predictor
// (versions 2 and 3, before version 7 named the cubic one), and the version 7 speculative
// streams (before version 9 segmented their codes). The version 1 files stay: those
// coded with Huffman must still decode to the same values, those coded with the version 1
// ANS blob must be refused as unsupported_version. Together they pin the format and
// the encoder; a failure here means the bytes changed, which needs a new format version
// (docs/format.md, "Versioning rules"), not regenerated files. An encoder change that keeps
// the format (block mode's listed values, 2026-12-03 and 2026-12-06) rewrites the cases' files
// and keeps the earlier ones, decode only, with their values pinned (kFineGridBlock).
//
// Regenerating (only when the format version is bumped, or a new golden case is added):
//   FACTZ_REGENERATE_GOLDEN=1 ./factz_tests --gtest_filter=Golden.Regenerate
// rewrites the files and prints the CRC lines to paste into kCases below.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "synth.hpp"
#include "support/compact_places.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

const std::string kGoldenDir = std::string(FACTZ_TEST_DATA_DIR) + "/golden";

// ---- The cases ------------------------------------------------------------------------------

VectorField2D turbulent_48x40() { return synth::turbulence(48, 40, 201, 4.0); }
VectorField2D turbulent_land_48x40() {
  VectorField2D f = synth::turbulence(48, 40, 202, 4.0);
  synth::add_zero_region(f, 203, 0.25);
  return f;
}
/// turbulent_land_48x40 with its land missing (NaN), the fill of a masked field.
VectorField2D turbulent_nan_land_48x40() {
  VectorField2D f = turbulent_land_48x40();
  for (size_t k = 0; k < f.u.size(); ++k)
    if (f.u[k] == 0.0f && f.v[k] == 0.0f) f.u[k] = f.v[k] = std::nanf("");
  return f;
}
/// Large enough for the writer to segment the speculative codes (format version 9): four
/// segments per component.
VectorField2D turbulent_160x120() { return synth::turbulence(160, 120, 206, 1.0); }
VectorField2D vortices_48x40() { return synth::vortices(48, 40, 204, 6); }
VectorField2D zeros_40x30() {
  VectorField2D f;
  f.nx = 40;
  f.ny = 30;
  f.u.assign(size_t(f.size()), 0.0f);
  f.v.assign(size_t(f.size()), 0.0f);
  return f;
}
VectorField2D turbulent_33x17() { return synth::turbulence(33, 17, 12); }
VectorField2D noise_24x20() { return synth::noise(24, 20, 205); }

Options options(Mode mode, BoundMode bound_mode, double bound, bool zstd) {
  Options o;
  o.mode = mode;
  o.bound_mode = bound_mode;
  o.bound = bound;
  o.zstd = zstd;
  o.coder = Coder::huffman;  // most files below are written with Huffman; ANS cases set it
  return o;
}

Options with_ans(Options o) {
  o.coder = Coder::ans;
  return o;
}

struct GoldenCase {
  const char* file;              ///< under tests/data/golden
  VectorField2D (*input)();      ///< deterministic synthetic input
  Options options;
  uint32_t input_crc;            ///< CRC-32C of the input's u bytes, then v bytes
  uint32_t decoded_u_crc;        ///< CRC-32C of the decoded u plane (little-endian float32)
  uint32_t decoded_v_crc;        ///< CRC-32C of the decoded v plane
};

const GoldenCase kCases[] = {
    {"v23_block_rel1e-2_zstd_48x40.fz", turbulent_48x40, options(Mode::block, BoundMode::rel, 1e-2, true),
     0x25cdf403u, 0x5d4f1caeu, 0x2d365a37u},
    {"v2_block_abs0.05_nozstd_land_48x40.fz", turbulent_land_48x40,
     options(Mode::block, BoundMode::abs, 0.05, false), 0x3a578d52u, 0xdc798a6au, 0x953d7e6bu},
    {"v2_none_rel1e-2_zstd_48x40.fz", vortices_48x40, options(Mode::none, BoundMode::rel, 1e-2, true),
     0x4ced4afbu, 0x9daf2610u, 0x4ce458e9u},
    {"v2_block_zero_40x30.fz", zeros_40x30, options(Mode::block, BoundMode::rel, 1e-2, true), 0x8e6406b6u,
     0x1e535a59u, 0x1e535a59u},
    {"v2_block_rel1e-3_nozstd_33x17.fz", turbulent_33x17, options(Mode::block, BoundMode::rel, 1e-3, false),
     0xdc6ffeb7u, 0x81fc0ad6u, 0xf51a9311u},
    {"v23_none_abs0_zstd_noise_24x20.fz", noise_24x20, options(Mode::none, BoundMode::abs, 0.0, true),
     0xbfd60a2bu, 0xd39cc116u, 0xdfe75dfeu},
    {"v9_speculative_rel1e-2_zstd_48x40.fz", turbulent_48x40, options(Mode::speculative, BoundMode::rel, 1e-2, true),
     0x25cdf403u, 0xc530c9e8u, 0x948a3a4eu},
    {"v9_speculative_abs0.05_nozstd_land_48x40.fz", turbulent_land_48x40,
     options(Mode::speculative, BoundMode::abs, 0.05, false), 0x3a578d52u, 0x8490b885u, 0xd9f6883cu},
    {"v9_ans_speculative_rel1e-2_zstd_48x40.fz", turbulent_48x40,
     with_ans(options(Mode::speculative, BoundMode::rel, 1e-2, true)), 0x25cdf403u, 0xc530c9e8u, 0x948a3a4eu},
    {"v2_ans_block_rel1e-2_nozstd_land_48x40.fz", turbulent_land_48x40,
     with_ans(options(Mode::block, BoundMode::rel, 1e-2, false)), 0x3a578d52u, 0xa65ccd14u, 0x5f0e623au},
    {"v23_block_rel1e-2_zstd_masked_48x40.fz", turbulent_nan_land_48x40, options(Mode::block, BoundMode::rel, 1e-2, true),
     0xe97cad10u, 0x961a0c30u, 0xc150bcb7u},
    {"v5_none_abs0.05_nozstd_masked_48x40.fz", turbulent_nan_land_48x40,
     with_ans(options(Mode::none, BoundMode::abs, 0.05, false)), 0xe97cad10u, 0x0352b618u, 0x6f504087u},
    {"v9_speculative_rel1e-2_nozstd_masked_48x40.fz", turbulent_nan_land_48x40,
     with_ans(options(Mode::speculative, BoundMode::rel, 1e-2, false)), 0xe97cad10u, 0x01add54cu, 0x47bc0c5bu},
    {"v9_ans_speculative_rel1e-2_nozstd_segmented_160x120.fz", turbulent_160x120,
     with_ans(options(Mode::speculative, BoundMode::rel, 1e-2, false)), 0x5fa975a5u, 0xa56a309au, 0xb6bfe20cu},
};

// Version 1 files (written before the ANS blob gained contexts, lanes per plane and sparse
// planes in format version 2): the Huffman ones decode as they always did.
struct Version1File {
  const char* file;
  uint32_t decoded_u_crc;
  uint32_t decoded_v_crc;
};
const Version1File kVersion1Huffman[] = {
    {"v1_block_rel1e-2_zstd_48x40.fz", 0xc60d051au, 0xebedd7dcu},
    {"v1_block_abs0.05_nozstd_land_48x40.fz", 0xfd1542c5u, 0xa98ff794u},
    {"v1_none_rel1e-2_zstd_48x40.fz", 0x9daf2610u, 0x4ce458e9u},
    {"v1_block_zero_40x30.fz", 0x1e535a59u, 0x1e535a59u},
    {"v1_block_rel1e-3_nozstd_33x17.fz", 0x7456556bu, 0x7d355fa8u},
    {"v1_none_abs0_zstd_noise_24x20.fz", 0xd39cc116u, 0xdfe75dfeu},
    {"v1_speculative_rel1e-2_zstd_48x40.fz", 0x5b992a2cu, 0xc595318du},
    {"v1_speculative_abs0.05_nozstd_land_48x40.fz", 0xd18a7093u, 0x756dab82u},
};
// Version 3 masked streams in the tiled modes (one code per vertex, missing ones included;
// version 5 leaves the missing vertices out): they decode to the values the v5_ cases had
// until block mode began quantizing critical-point triangles (2026-12-03; the block v1_
// files above likewise keep the values of the block v2_ files of that time).
const Version1File kVersion3TiledMasked[] = {
    {"v3_block_rel1e-2_zstd_masked_48x40.fz", 0x4f38d1d1u, 0x566d8d01u},
    {"v3_none_abs0.05_nozstd_masked_48x40.fz", 0x0352b618u, 0x6f504087u},
};
// Speculative streams of the linear predictor (versions 2 and 3, before version 7 recorded the
// cubic predictor in the meta section): written by the earlier encoder with the options of the
// v7_ cases, they decode to the values they always did.
struct VersionedFile {  ///< a decode-only file of a known version (header byte 4)
  const char* file;
  uint8_t version;
  uint32_t decoded_u_crc;
  uint32_t decoded_v_crc;
};
const VersionedFile kLinearSpeculative[] = {
    {"v2_speculative_rel1e-2_zstd_48x40.fz", 2, 0x5b992a2cu, 0xc595318du},
    {"v2_speculative_abs0.05_nozstd_land_48x40.fz", 2, 0xd18a7093u, 0x756dab82u},
    {"v2_ans_speculative_rel1e-2_zstd_48x40.fz", 2, 0x5b992a2cu, 0xc595318du},
    {"v3_speculative_rel1e-2_nozstd_masked_48x40.fz", 3, 0xd0d44317u, 0xec42cbd4u},
};
// Version 7 speculative streams (the cubic predictor, each component's codes one blob, before
// version 9 segmented them): written with the options of the v9_ cases, they decode to the
// same values.
const Version1File kVersion7Speculative[] = {
    {"v7_speculative_rel1e-2_zstd_48x40.fz", 0xc530c9e8u, 0x948a3a4eu},
    {"v7_speculative_abs0.05_nozstd_land_48x40.fz", 0x8490b885u, 0xd9f6883cu},
    {"v7_ans_speculative_rel1e-2_zstd_48x40.fz", 0xc530c9e8u, 0x948a3a4eu},
    {"v7_speculative_rel1e-2_nozstd_masked_48x40.fz", 0x01add54cu, 0x47bc0c5bu},
};
// Block streams written while a stored vertex was listed on the finest power-of-two grid of
// its own bound (2026-12-03 to 2026-12-06; since then the coarsest grid within that bound,
// kernels/exact_rounding.hpp list_exact): the same format and decoder, with the options of
// the v2_ / v5_ block cases above; they decode to the values those cases had then.
const VersionedFile kFineGridBlock[] = {
    {"v2_block_rel1e-2_zstd_48x40_finegrid.fz", 2, 0x91625557u, 0xc0d1a108u},
    {"v2_block_abs0.05_nozstd_land_48x40_finegrid.fz", 2, 0x8dc60a43u, 0xbfd5de8bu},
    {"v2_block_rel1e-3_nozstd_33x17_finegrid.fz", 2, 0x93a62e83u, 0xafa8f90eu},
    {"v2_ans_block_rel1e-2_nozstd_land_48x40_finegrid.fz", 2, 0x72a1cfddu, 0x4c749586u},
    {"v5_block_rel1e-2_zstd_masked_48x40_finegrid.fz", 5, 0xa9d32011u, 0xcbf8b562u},
};
// Streams written before the zstd stage kept exact values byte-shuffled (format version 23,
// 2026-12-07): the three cases above whose exact values it now shuffles, with the same
// options, as classic files of their layout; they decode to the same values.
const VersionedFile kUnshuffled[] = {
    {"v2_block_rel1e-2_zstd_48x40.fz", 2, 0x5d4f1caeu, 0x2d365a37u},
    {"v2_none_abs0_zstd_noise_24x20.fz", 2, 0xd39cc116u, 0xdfe75dfeu},
    {"v5_block_rel1e-2_zstd_masked_48x40.fz", 5, 0x961a0c30u, 0xc150bcb7u},
};
const char* const kVersion1Ans[] = {"v1_ans_speculative_rel1e-2_zstd_48x40.fz",
                                    "v1_ans_block_rel1e-2_nozstd_land_48x40.fz"};

// ---- Helpers ----------------------------------------------------------------------------------

uint32_t plane_crc(const std::vector<float>& plane, uint32_t seed = 0) {
  std::vector<uint8_t> bytes(plane.size() * 4);
  for (size_t k = 0; k < plane.size(); ++k) {
    uint32_t b;
    std::memcpy(&b, &plane[k], 4);
    for (int i = 0; i < 4; ++i) bytes[4 * k + i] = uint8_t(b >> (8 * i));  // little-endian, as stored
  }
  return detail::crc32c(bytes, seed);
}
uint32_t field_crc(const VectorField2D& f) { return plane_crc(f.v, plane_crc(f.u)); }

Bytes read_golden(const char* file) {
  std::ifstream in(kGoldenDir + "/" + file, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
Bytes read_golden(const GoldenCase& c) { return read_golden(c.file); }

/// The case's input, or a skip reason when this platform synthesises different values
/// (synth.hpp: turbulence and vortices may differ in the last bit with another libm).
bool input_of(const GoldenCase& c, VectorField2D& f, std::string& why_not) {
  f = c.input();
  const uint32_t crc = field_crc(f);
  if (crc == c.input_crc) return true;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: synthetic input CRC 0x%08" PRIx32 " differs from 0x%08" PRIx32
                " (another libm?)", c.file, crc, c.input_crc);
  why_not = buf;
  return false;
}

// ---- The pins ---------------------------------------------------------------------------------

TEST(Golden, EveryFileDecodesToThePinnedValues) {
  for (const GoldenCase& c : kCases) {
    const Bytes stream = read_golden(c);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << c.file << " is missing";
    for (Policy policy : {Policy::serial, Policy::omp}) {
      auto r = decompress(stream, DecompressOptions{policy, 2});
      ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
      const VectorField2D& f = r.value();
      EXPECT_EQ(plane_crc(f.u), c.decoded_u_crc) << c.file;
      EXPECT_EQ(plane_crc(f.v), c.decoded_v_crc) << c.file;
    }
  }
}

TEST(Golden, Version1HuffmanStreamsStillDecodeToTheirValues) {
  for (const Version1File& c : kVersion1Huffman) {
    const Bytes stream = read_golden(c.file);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << c.file << " is missing";
    ASSERT_EQ(stream[4], 1) << c.file << " should be a version 1 stream";
    auto r = decompress(stream);
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
    EXPECT_EQ(plane_crc(r->u), c.decoded_u_crc) << c.file;
    EXPECT_EQ(plane_crc(r->v), c.decoded_v_crc) << c.file;
  }
}

TEST(Golden, Version3TiledMaskedStreamsStillDecodeToTheirValues) {
  for (const Version1File& c : kVersion3TiledMasked) {
    const Bytes stream = read_golden(c.file);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << c.file << " is missing";
    ASSERT_EQ(stream[4], 3) << c.file << " should be a version 3 stream";
    for (Policy policy : {Policy::serial, Policy::omp}) {
      auto r = decompress(stream, DecompressOptions{policy, 2});
      ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
      EXPECT_EQ(plane_crc(r->u), c.decoded_u_crc) << c.file;
      EXPECT_EQ(plane_crc(r->v), c.decoded_v_crc) << c.file;
    }
  }
}

/// Each decode-only file is of its version and decodes (serial and OpenMP) to its pinned values.
void expect_versioned_files_decode(std::span<const VersionedFile> files) {
  for (const VersionedFile& c : files) {
    const Bytes stream = read_golden(c.file);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << c.file << " is missing";
    ASSERT_EQ(stream[4], c.version) << c.file << " should be a version " << int(c.version) << " stream";
    for (Policy policy : {Policy::serial, Policy::omp}) {
      auto r = decompress(stream, DecompressOptions{policy, 2});
      ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
      EXPECT_EQ(plane_crc(r->u), c.decoded_u_crc) << c.file;
      EXPECT_EQ(plane_crc(r->v), c.decoded_v_crc) << c.file;
    }
  }
}

TEST(Golden, LinearSpeculativeStreamsStillDecodeToTheirValues) { expect_versioned_files_decode(kLinearSpeculative); }

TEST(Golden, Version7SpeculativeStreamsStillDecodeToTheirValues) {
  for (const Version1File& c : kVersion7Speculative) {
    const Bytes stream = read_golden(c.file);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << c.file << " is missing";
    ASSERT_EQ(stream[4], 7) << c.file << " should be a version 7 stream";
    for (Policy policy : {Policy::serial, Policy::omp}) {
      auto r = decompress(stream, DecompressOptions{policy, 2});
      ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
      EXPECT_EQ(plane_crc(r->u), c.decoded_u_crc) << c.file;
      EXPECT_EQ(plane_crc(r->v), c.decoded_v_crc) << c.file;
    }
  }
}

TEST(Golden, StreamsWrittenBeforeTheByteShuffleStillDecodeToTheirValues) {
  expect_versioned_files_decode(kUnshuffled);
  // Their successors are version 23 (compact only) and hold a shuffled exact_values section.
  for (const GoldenCase& c : kCases) {
    const Bytes stream = read_golden(c);
    ASSERT_FALSE(stream.empty()) << c.file;
    const bool v23 = std::string(c.file).rfind("v23_", 0) == 0;
    EXPECT_EQ(testing::has_shuffled_section(stream), v23) << c.file;
    EXPECT_EQ(stream[4] == detail::kFormatVersionCompactShuffled, v23) << c.file;
  }
}

TEST(Golden, BlockStreamsListedOnTheFinestGridStillDecodeToTheirValues) {
  expect_versioned_files_decode(kFineGridBlock);
}

TEST(Golden, TheSegmentedFileHoldsSeveralSegmentsPerComponent) {
  // The first byte of a version 9 codes section is its segment count (docs/format.md); the
  // file is written without the zstd stage, so the sections lie in the stream as they are.
  const Bytes stream = read_golden("v9_ans_speculative_rel1e-2_nozstd_segmented_160x120.fz");
  ASSERT_FALSE(stream.empty());
  ASSERT_EQ(stream[4], 9);
  auto pc = detail::parse_container(stream);
  ASSERT_TRUE(pc.ok()) << pc.status().to_string();
  for (uint32_t id : {detail::kSectionCodesU, detail::kSectionCodesV}) {
    auto sec = detail::read_section(stream, pc.value(), id, nullptr);
    ASSERT_TRUE(sec.ok()) << sec.status().to_string();
    ASSERT_FALSE(sec->empty());
    EXPECT_EQ(sec.value()[0], 4) << "section " << id;
  }
}

TEST(Golden, Version1AnsStreamsAreRefusedAsUnsupported) {
  for (const char* file : kVersion1Ans) {
    const Bytes stream = read_golden(file);
    ASSERT_FALSE(stream.empty()) << kGoldenDir << "/" << file << " is missing";
    auto r = decompress(stream);
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_EQ(r.status().code(), Code::unsupported_version) << file << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find("version 1"), std::string::npos) << r.status().to_string();
    EXPECT_EQ(stream_dims(stream).status().code(), Code::unsupported_version) << file;
  }
}

TEST(Golden, DecodedValuesMeetTheBoundAndKeepTheCriticalPoints) {
  for (const GoldenCase& c : kCases) {
    VectorField2D in;
    std::string why_not;
    if (!input_of(c, in, why_not)) {
      std::printf("[  SKIP    ] %s\n", why_not.c_str());
      continue;
    }
    auto r = decompress(read_golden(c));
    ASSERT_TRUE(r.ok()) << c.file << ": " << r.status().to_string();
    ASSERT_EQ(r->nx, in.nx) << c.file;
    ASSERT_EQ(r->ny, in.ny) << c.file;
    auto cmp = compare(in, r.value());
    ASSERT_TRUE(cmp.ok()) << c.file;
    if (c.options.mode != Mode::none) {
      EXPECT_EQ(cmp->violations(), 0) << c.file;
    }
    if (c.options.bound_mode == BoundMode::abs) {
      EXPECT_LE(cmp->max_abs_error[0], c.options.bound) << c.file;
      EXPECT_LE(cmp->max_abs_error[1], c.options.bound) << c.file;
    }
    if (c.options.bound == 0.0) {
      EXPECT_EQ(plane_crc(r->u), plane_crc(in.u)) << c.file << ": a zero bound is lossless";
      EXPECT_EQ(plane_crc(r->v), plane_crc(in.v)) << c.file << ": a zero bound is lossless";
    }
  }
}

TEST(Golden, CompressingTheSameInputReproducesEveryFileByteForByte) {
  int compared = 0;
  for (const GoldenCase& c : kCases) {
    VectorField2D in;
    std::string why_not;
    if (!input_of(c, in, why_not)) {
      std::printf("[  SKIP    ] %s\n", why_not.c_str());
      continue;
    }
    const Bytes golden = read_golden(c);
    ASSERT_FALSE(golden.empty()) << c.file << " is missing";
    for (Policy policy : {Policy::serial, Policy::omp}) {
      Options o = c.options;
      o.policy = policy;
      o.threads = 3;
      auto s = compress(in, o);
      ASSERT_TRUE(s.ok()) << c.file << ": " << s.status().to_string();
      // compress writes the compact container (version 18) around the golden file's sections;
      // a version 23 file (byte-shuffled exact values) has no classic form and is stored as is.
      const bool compact_file = testing::is_compact(golden);
      const Bytes want = compact_file ? golden : testing::compact(golden);
      ASSERT_EQ(s->size(), want.size()) << c.file << ": the encoder's output changed size";
      size_t first = 0;
      while (first < want.size() && s.value()[first] == want[first]) ++first;
      EXPECT_EQ(first, want.size()) << c.file << ": first differing byte at offset " << first
                                    << " (the format or the encoder changed: bump the version)";
      if (!compact_file) {
        EXPECT_EQ(testing::classic(s.value()), golden) << c.file << ": the classic container of the fresh stream";
      }
    }
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no synthetic input matched its pinned CRC on this platform";
}

// ---- The generator ------------------------------------------------------------------------------

TEST(Golden, Regenerate) {
  const char* flag = std::getenv("FACTZ_REGENERATE_GOLDEN");
  if (flag == nullptr || std::string(flag) != "1")
    GTEST_SKIP() << "set FACTZ_REGENERATE_GOLDEN=1 to rewrite tests/data/golden";
  std::filesystem::create_directories(kGoldenDir);
  std::printf("// paste into kCases: file, input CRC, decoded u CRC, decoded v CRC\n");
  for (const GoldenCase& c : kCases) {
    const VectorField2D in = c.input();
    Options o = c.options;
    o.policy = Policy::serial;
    auto s = compress(in, o);
    ASSERT_TRUE(s.ok()) << c.file << ": " << s.status().to_string();
    auto d = decompress(s.value());
    ASSERT_TRUE(d.ok()) << c.file << ": " << d.status().to_string();
    // The files are classic streams (their names carry the version of their sections), except
    // those of version 23 (byte-shuffled exact values), which have no classic form.
    const Bytes file = testing::has_shuffled_section(s.value()) ? s.value() : testing::classic(s.value());
    std::ofstream out(kGoldenDir + "/" + c.file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    ASSERT_TRUE(out.good()) << c.file;
    std::printf("%-40s 0x%08" PRIx32 "u, 0x%08" PRIx32 "u, 0x%08" PRIx32 "u  (%zu bytes)\n", c.file,
                field_crc(in), plane_crc(d->u), plane_crc(d->v), s->size());
  }
}

}  // namespace
}  // namespace factz
