// Multi-block files of float64 fields (docs/multiblock.md, issue 18): the global guarantee
// in double for every mode and uneven layouts, shared lines stored with all 64 bits, every
// block a float64 stream, the data type in the file's header (version 2; float32 files are
// version 1 as before), byte-identical files for any thread count, regions, masks with their
// 64 bits, damaged files, the decoders' type rules, and the command line (--blocks, --region,
// --per-rank, verify --blocks with '<f8' .npy and raw float64 files).
//
// Traps for a float32 shortcut anywhere on the multi-block path (the range, the bound, the
// block copies, the shared lines, the decode): values whose detail lies below float32
// precision, critical points that exist only in double, and bounds below float32's spacing
// of the values. G0 is checked exactly with kernels/exact64.hpp within_bound64, G1 with
// compare() on VectorField2D64 (the exact float64 extractor) over the assembled field.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/topology.hpp"
#include "format/crc32.hpp"
#include "kernels/exact64.hpp"
#include "support/precision.hpp"
#include "synth.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

/// Uniform noise p, q in [-1, 1) mapped to (p + eps q, p - eps q): rounded to float, u and v
/// agree and the critical points are gone; in double they are those of (p, q).
VectorField2D64 detail_below_float(int64_t nx, int64_t ny, uint64_t seed, double eps = 0x1p-40) {
  std::mt19937_64 rng(seed);
  const auto unit = [&rng]() { return double(rng() >> 11) * 0x1p-52 - 1.0; };
  VectorField2D64 f{nx, ny, {}, {}};
  for (int64_t k = 0; k < nx * ny; ++k) {
    const double p = unit(), q = unit();
    f.u.push_back(p + eps * q);
    f.v.push_back(p - eps * q);
  }
  return f;
}

/// A smooth double field about `centre` with detail of `scale`: float32 spaces values near
/// 0.5 by 6e-8, so with scale 1e-5 and a bound of 1e-9 no float can stand in for a value.
VectorField2D64 fine_detail(int64_t nx, int64_t ny, uint64_t seed, double centre, double scale) {
  VectorField2D64 f = synth::turbulence64(nx, ny, seed);
  for (double& x : f.u) x = centre + scale * x;
  for (double& x : f.v) x = centre - scale * x;
  return f;
}

Options options(Mode m, BoundMode bm, double bound, Coder c = Coder::ans) {
  Options o;
  o.mode = m;
  o.coder = c;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

std::string name_of(const Options& o, int px, int py) {
  return std::string(mode_name(o.mode)) + "/" + coder_name(o.coder) +
         (o.bound_mode == BoundMode::abs ? " ABS " : " REL ") + std::to_string(o.bound) + " " + std::to_string(px) +
         "x" + std::to_string(py);
}

struct MultiBlockRun {
  Bytes file;
  VectorField2D64 decoded;
  CompressStats stats;
  Comparison cmp;
};

/// compress_multiblock of a float64 field, decompress_multiblock64, then the global
/// guarantees: a version 2 file whose every block is a float64 (version 6, 7 speculative) stream, G0
/// exactly in double, every shared line and every missing vertex with its 64 bits, the
/// mask, and (topology) no lost, spurious or changed critical point of the float64 mesh.
MultiBlockRun round_trip(const VectorField2D64& f, const Options& o, int px, int py, const std::string& what,
                         bool topology) {
  MultiBlockRun rt;
  auto file = compress_multiblock(f, o, px, py, &rt.stats);
  EXPECT_TRUE(file.ok()) << what << ": " << file.status().to_string();
  if (!file.ok()) return rt;
  rt.file = std::move(file.value());
  auto ix = parse_multiblock_index(rt.file, rt.file.size());
  EXPECT_TRUE(ix.ok()) << what << ": " << ix.status().to_string();
  if (!ix.ok()) return rt;
  EXPECT_EQ(ix->dtype, DType::float64) << what;
  EXPECT_EQ(rt.file[4] | (rt.file[5] << 8), 2) << what << ": a float64 file is version 2";
  EXPECT_EQ(rt.file[7], 2) << what << ": byte 7 holds the data type";
  for (int b = 0; b < ix->layout.count(); ++b) {
    const auto& en = ix->entries[size_t(b)];
    const auto s = std::span<const uint8_t>(rt.file).subspan(size_t(en.offset), size_t(en.length));
    auto info = stream_info(s);
    EXPECT_TRUE(info.ok()) << what;
    if (!info.ok()) continue;
    EXPECT_EQ(info->dtype, DType::float64) << what << " block " << b;
    // Version 6, or 7 in mode speculative (its meta section names the cubic predictor).
    const int version = o.mode == Mode::speculative ? 9 : 6;
    EXPECT_EQ(testing::layout_version(s), version) << what << " block " << b << " holds sections of version " << version;
  }
  auto d = decompress_multiblock64(rt.file);
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return rt;
  rt.decoded = std::move(d.value());
  EXPECT_EQ(rt.decoded.nx, f.nx) << what;
  EXPECT_EQ(rt.decoded.ny, f.ny) << what;
  if (rt.decoded.size() != f.size()) return rt;
  const std::vector<uint8_t> missing = missing_mask(f);
  const double eb = rt.stats.eb_abs;
  int64_t misses = 0, masked_wrong = 0, first = -1;
  for (int64_t k = 0; k < f.size(); ++k) {
    const size_t i = size_t(k);
    if (!missing.empty() && missing[i]) {
      masked_wrong += !same_bits(rt.decoded.u[i], f.u[i]) || !same_bits(rt.decoded.v[i], f.v[i]);
      continue;
    }
    const bool miss = !detail::within_bound64(rt.decoded.u[i], f.u[i], eb) ||
                      !detail::within_bound64(rt.decoded.v[i], f.v[i], eb);
    if (miss && first < 0) first = k;
    misses += miss;
  }
  EXPECT_EQ(misses, 0) << what << ": bound " << eb << " broken, first at " << first;
  EXPECT_EQ(masked_wrong, 0) << what << ": missing vertices must decode bit for bit";
  EXPECT_EQ(rt.decoded.mask, missing) << what;
  // Every shared column and row, all 64 bits (a float32 copy of them would differ).
  int64_t shared_differ = 0;
  for (int b = 0; b < ix->layout.count(); ++b) {
    const auto& e = ix->layout.blocks[size_t(b)];
    if (b % px != px - 1)
      for (int64_t y = e.y0; y < e.y0 + e.ny; ++y) {
        const size_t k = size_t(y * f.nx + e.x0 + e.nx - 1);
        shared_differ += !same_bits(rt.decoded.u[k], f.u[k]) || !same_bits(rt.decoded.v[k], f.v[k]);
      }
    if (b / px != py - 1)
      for (int64_t x = e.x0; x < e.x0 + e.nx; ++x) {
        const size_t k = size_t((e.y0 + e.ny - 1) * f.nx + x);
        shared_differ += !same_bits(rt.decoded.u[k], f.u[k]) || !same_bits(rt.decoded.v[k], f.v[k]);
      }
  }
  EXPECT_EQ(shared_differ, 0) << what << ": shared lines must be stored with all 64 bits";
  auto c = compare(f, rt.decoded);
  EXPECT_TRUE(c.ok()) << what << ": " << c.status().to_string();
  if (!c.ok()) return rt;
  rt.cmp = c.value();
  EXPECT_EQ(rt.cmp.mask_mismatch, 0) << what;
  if (topology) {
    EXPECT_EQ(rt.cmp.lost, 0) << what;
    EXPECT_EQ(rt.cmp.spurious, 0) << what;
    EXPECT_EQ(rt.cmp.type_changed, 0) << what;
  }
  return rt;
}

const Mode kModes[] = {Mode::none, Mode::block, Mode::speculative};
/// Even and uneven bands, blocks thinner than a tile (32) and than an anchor stride of 16,
/// 1-cell blocks.
const std::pair<int, int> kLayouts[] = {{1, 1}, {2, 2}, {3, 2}, {7, 5}, {40, 3}};

TEST(MultiBlock64, EveryModeKeepsTheGlobalGuaranteesInDouble) {
  const VectorField2D64 f = synth::turbulence64(121, 83, 7);
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 20u);
  for (Mode m : kModes)
    for (auto [px, py] : kLayouts)
      for (const Options& o : {options(m, BoundMode::rel, 1e-3), options(m, BoundMode::abs, 1e-6, Coder::huffman)}) {
        const MultiBlockRun rt = round_trip(f, o, px, py, name_of(o, px, py), m != Mode::none);
        if (m != Mode::none) {
          EXPECT_EQ(rt.cmp.cp_decompressed, int64_t(cps->size())) << name_of(o, px, py);
        }
        if (o.bound_mode == BoundMode::abs) {
          EXPECT_EQ(rt.stats.eb_abs, 1e-6) << "the double bound is used as given";
        }
      }
}

TEST(MultiBlock64, CriticalPointsThatExistOnlyInDoubleAreKeptAcrossBlocks) {
  // Rounded to float the field has almost no critical points: a float decision (a block
  // copy, a shared line, a predicate) anywhere would lose them.
  const VectorField2D64 f = detail_below_float(64, 48, 31);
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 300u);
  const auto as_float = critical_points(testing::to_float(f));
  ASSERT_TRUE(as_float.ok());
  ASSERT_LT(as_float->size(), cps->size() / 10);
  for (Mode m : {Mode::block, Mode::speculative})
    for (auto [px, py] : {std::pair{2, 2}, std::pair{5, 3}})
      for (double eb : {1e-3, 1e-13}) {
        const Options o = options(m, BoundMode::abs, eb);
        const MultiBlockRun rt = round_trip(f, o, px, py, name_of(o, px, py), true);
        EXPECT_EQ(rt.cmp.cp_decompressed, int64_t(cps->size())) << name_of(o, px, py);
      }
}

TEST(MultiBlock64, BoundsBelowFloatResolutionAreMetAndTheValuesQuantized) {
  // Turbulence of unit size at a bound of 1e-9: float32 spaces values near 0.5 by 6e-8, so
  // a value or a reconstruction that went through float misses the bound, while the
  // critical points are kept.
  const VectorField2D64 t = synth::turbulence64(96, 70, 17);
  for (Mode m : kModes) {
    const Options o = options(m, BoundMode::abs, 1e-9);
    const MultiBlockRun rt = round_trip(t, o, 3, 2, name_of(o, 3, 2) + " turbulence", m != Mode::none);
    EXPECT_GT(rt.cmp.cp_original, 20) << name_of(o, 3, 2);
    int64_t float_valued = 0;
    for (double x : rt.decoded.u) float_valued += double(float(x)) == x;
    EXPECT_LT(float_valued, t.size() / 2) << name_of(o, 3, 2) << ": the reconstruction is not a float rounding";
  }
  // Values about 0.5 with detail of 1e-5 (no critical point): quantized in double, not
  // stored exactly.
  const VectorField2D64 f = fine_detail(96, 70, 17, 0.5, 1e-5);
  for (Mode m : kModes) {
    const Options o = options(m, BoundMode::abs, 1e-9);
    const MultiBlockRun rt = round_trip(f, o, 3, 2, name_of(o, 3, 2), m != Mode::none);
    if (rt.decoded.size() != f.size()) continue;
    EXPECT_LT(rt.stats.exact_vertices, f.size() / 3) << name_of(o, 3, 2) << ": the values must be quantized";
    int64_t float_valued = 0;
    for (double x : rt.decoded.u) float_valued += double(float(x)) == x;
    EXPECT_LT(float_valued, f.size() / 2) << name_of(o, 3, 2) << ": the reconstruction is not a float rounding";
  }
  // Values 1 + 1e-12 * detail: as floats all are 1 (or a neighbour), 1e-8 away.
  VectorField2D64 g = fine_detail(50, 41, 13, 1.0, 1e-12);
  for (Mode m : kModes) {
    const Options o = options(m, BoundMode::abs, 1e-13);
    round_trip(g, o, 4, 3, name_of(o, 4, 3) + " about 1", m != Mode::none);
  }
}

TEST(MultiBlock64, RelBoundIsResolvedInDoubleOverTheGlobalField) {
  // The range 1e-12 sits beside 1 (as floats: zero) and only block 0 holds the extremes.
  VectorField2D64 f = fine_detail(60, 40, 2, 1.0, 1e-12);
  f.u[0] = 1.0 + 3e-12;
  f.v[0] = 1.0 - 3e-12;
  const Options o = options(Mode::block, BoundMode::rel, 1e-2);
  CompressStats whole;
  ASSERT_TRUE(compress(f, o, &whole).ok());
  const MultiBlockRun rt = round_trip(f, o, 2, 2, "rel 1e-2 about 1", true);
  EXPECT_EQ(rt.stats.eb_abs, whole.eb_abs) << "the bound of one stream of the whole field";
  EXPECT_GT(rt.stats.eb_abs, 0.0);
  EXPECT_LT(rt.stats.eb_abs, 1e-13);
  const ValueRange all = value_range_of(f);
  EXPECT_EQ(all.lo, 1.0 - 3e-12);
  EXPECT_EQ(all.hi, 1.0 + 3e-12);
  auto L = make_block_layout(f.nx, f.ny, 2, 2);
  ASSERT_TRUE(L.ok());
  ValueRange merged;
  for (const auto& e : L->blocks) merged = merge(merged, value_range_of(extract_block(f, e)));
  EXPECT_EQ(merged.lo, all.lo);
  EXPECT_EQ(merged.hi, all.hi);
  auto eb = absolute_bound(o, merged);
  ASSERT_TRUE(eb.ok());
  EXPECT_EQ(eb.value(), o.bound * (all.hi - all.lo));
}

TEST(MultiBlock64, BytesDoNotDependOnTheThreadCountAndEachBlockIsItsOwnStream) {
  const VectorField2D64 f = synth::turbulence64(130, 70, 21);
  for (Mode m : kModes) {
    Options o = options(m, BoundMode::rel, 1e-4);
    o.policy = Policy::serial;
    auto ref = compress_multiblock(f, o, 3, 2);
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    o.policy = Policy::omp;
    for (int t : {1, 2, 3, 8}) {
      o.threads = t;
      auto s = compress_multiblock(f, o, 3, 2);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s.value(), ref.value()) << mode_name(m) << " " << t << " threads";
    }
    // The decode does not depend on them either.
    auto one = decompress_multiblock64(ref.value(), DecompressOptions{Policy::serial, 1});
    auto two = decompress_multiblock64(ref.value(), DecompressOptions{Policy::omp, 2});
    ASSERT_TRUE(one.ok() && two.ok());
    EXPECT_EQ(std::memcmp(one->u.data(), two->u.data(), one->u.size() * 8), 0) << mode_name(m);
    EXPECT_EQ(std::memcmp(one->v.data(), two->v.data(), one->v.size() * 8), 0) << mode_name(m);
    // Each indexed byte range is compress_block of that block alone, and decodes alone.
    auto ix = parse_multiblock_index(ref.value(), ref->size());
    ASSERT_TRUE(ix.ok());
    auto eb = absolute_bound(o, value_range_of(f));
    ASSERT_TRUE(eb.ok());
    for (int b = 0; b < ix->layout.count(); ++b) {
      const auto& en = ix->entries[size_t(b)];
      const Bytes stored(ref->begin() + int64_t(en.offset), ref->begin() + int64_t(en.offset + en.length));
      const VectorField2D64 block = extract_block(f, ix->layout.blocks[size_t(b)]);
      auto alone = compress_block(block, ix->layout, b, o, eb.value());
      ASSERT_TRUE(alone.ok());
      EXPECT_EQ(alone.value(), stored) << mode_name(m) << " block " << b;
      auto d = decompress64(stored);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(d->nx, block.nx);
    }
  }
}

TEST(MultiBlock64, OneBlockDecodesLikeThePlainFloat64Stream) {
  const VectorField2D64 f = synth::turbulence64(90, 50, 8);
  for (Mode m : kModes) {
    const Options o = options(m, BoundMode::rel, 1e-3);
    auto plain = compress(f, o);
    auto one = compress_multiblock(f, o, 1, 1);
    ASSERT_TRUE(plain.ok() && one.ok());
    auto a = decompress64(plain.value());
    auto b = decompress_multiblock64(one.value());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(std::memcmp(a->u.data(), b->u.data(), a->u.size() * 8), 0) << mode_name(m);
    EXPECT_EQ(std::memcmp(a->v.data(), b->v.data(), a->v.size() * 8), 0) << mode_name(m);
  }
}

std::string temp_path(const std::string& name) {
  return (::testing::TempDir().empty() ? std::string("/tmp/") : ::testing::TempDir()) + name + "_" +
         std::to_string(::getpid());
}

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

TEST(MultiBlock64, RegionDecodesTheWindowOfTheWholeFileFromItsBlocksOnly) {
  const VectorField2D64 f = synth::turbulence64(203, 151, 4);
  const Options o = options(Mode::speculative, BoundMode::abs, 1e-9);
  auto file = compress_multiblock(f, o, 4, 3);
  ASSERT_TRUE(file.ok());
  const std::string path = temp_path("factz_region64.fzmb");
  write_file(path, file.value());
  auto whole = decompress_multiblock64(file.value());
  ASSERT_TRUE(whole.ok());
  auto ix = parse_multiblock_index(file.value(), file->size());
  ASSERT_TRUE(ix.ok());
  const BlockLayout& L = ix->layout;
  std::mt19937 rng(99);
  for (int trial = 0; trial < 30; ++trial) {
    Region r;
    r.x0 = int64_t(rng() % uint32_t(f.nx));
    r.y0 = int64_t(rng() % uint32_t(f.ny));
    r.x1 = r.x0 + 1 + int64_t(rng() % uint32_t(f.nx - r.x0));
    r.y1 = r.y0 + 1 + int64_t(rng() % uint32_t(f.ny - r.y0));
    if (trial == 0) r = {0, 0, f.nx, f.ny};
    if (trial == 1) r = {L.blocks[1].x0, 0, L.blocks[1].x0 + 1, 1};  // one vertex on a shared column
    RegionStats st;
    auto w = decompress_region64(path, r, {}, &st);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    ASSERT_EQ(w->nx, r.x1 - r.x0);
    ASSERT_EQ(w->ny, r.y1 - r.y0);
    int64_t differ = 0;
    for (int64_t y = r.y0; y < r.y1; ++y)
      for (int64_t x = r.x0; x < r.x1; ++x) {
        const size_t g = size_t(y * f.nx + x), k = size_t((y - r.y0) * w->nx + (x - r.x0));
        differ += !same_bits(w->u[k], whole->u[g]) || !same_bits(w->v[k], whole->v[g]);
      }
    EXPECT_EQ(differ, 0) << "trial " << trial;
    int owners = 0;
    uint64_t bytes = multiblock_header_size(L.count());
    for (int b = 0; b < L.count(); ++b) {
      const auto& e = L.blocks[size_t(b)];
      const int64_t ox1 = e.x0 + e.nx - (b % 4 == 3 ? 0 : 1), oy1 = e.y0 + e.ny - (b / 4 == 2 ? 0 : 1);
      if (std::max(e.x0, r.x0) < std::min(ox1, r.x1) && std::max(e.y0, r.y0) < std::min(oy1, r.y1)) {
        ++owners;
        bytes += ix->entries[size_t(b)].length;
      }
    }
    EXPECT_EQ(st.blocks_decoded, owners) << "trial " << trial;
    EXPECT_EQ(st.bytes_read, bytes) << "trial " << trial;
  }
  EXPECT_EQ(decompress_region64(path, {0, 0, 0, 5}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region64(path, {0, 0, f.nx + 1, 5}).status().code(), Code::invalid_argument);
  std::remove(path.c_str());
}

TEST(MultiBlock64, EachDecoderRefusesTheOtherDataType) {
  const VectorField2D64 f64 = synth::turbulence64(60, 40, 3);
  const VectorField2D f32 = testing::to_float(f64);
  const Options o = options(Mode::block, BoundMode::rel, 1e-3);
  auto a64 = compress_multiblock(f64, o, 2, 2);
  auto a32 = compress_multiblock(f32, o, 2, 2);
  ASSERT_TRUE(a64.ok() && a32.ok());
  auto ix32 = parse_multiblock_index(a32.value(), a32->size());
  ASSERT_TRUE(ix32.ok());
  EXPECT_EQ(ix32->dtype, DType::float32);
  EXPECT_EQ(a32.value()[4], 1) << "a float32 file stays version 1";
  EXPECT_EQ(a32.value()[7], 0) << "with byte 7 zero, as every earlier build wrote it";
  const auto f = decompress_multiblock(a64.value());
  EXPECT_EQ(f.status().code(), Code::invalid_argument);
  EXPECT_NE(f.status().message().find("decompress_multiblock64"), std::string::npos) << f.status().message();
  const auto d = decompress_multiblock64(a32.value());
  EXPECT_EQ(d.status().code(), Code::invalid_argument);
  EXPECT_NE(d.status().message().find("decompress_multiblock"), std::string::npos) << d.status().message();
  const std::string p64 = temp_path("factz_dtype64.fzmb"), p32 = temp_path("factz_dtype32.fzmb");
  write_file(p64, a64.value());
  write_file(p32, a32.value());
  EXPECT_EQ(decompress_region(p64, {0, 0, 5, 5}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region64(p32, {0, 0, 5, 5}).status().code(), Code::invalid_argument);
  std::remove(p64.c_str());
  std::remove(p32.c_str());
}

/// `file` with its header's bytes [6, 8) set to (b6, b7), version `version`, and the header
/// checksum fixed: a forged header that only the data-type rules can refuse.
Bytes forged(Bytes file, uint16_t version, uint8_t b7) {
  file[4] = uint8_t(version);
  file[5] = uint8_t(version >> 8);
  file[7] = b7;
  const uint32_t crc = detail::crc32c(std::span<const uint8_t>(file).first(44));
  for (int k = 0; k < 4; ++k) file[size_t(44 + k)] = uint8_t(crc >> (8 * k));
  return file;
}

TEST(MultiBlock64, TheHeaderAndEveryBlockMustAgreeOnTheDataType) {
  const VectorField2D64 f64 = synth::turbulence64(48, 36, 9);
  const Options o = options(Mode::speculative, BoundMode::rel, 1e-3);
  auto a64 = compress_multiblock(f64, o, 2, 2);
  auto a32 = compress_multiblock(testing::to_float(f64), o, 2, 2);
  ASSERT_TRUE(a64.ok() && a32.ok());
  ASSERT_TRUE(decompress_multiblock64(forged(a64.value(), 2, 2)).ok()) << "the forger itself changes nothing";
  // Version and byte 7 go together: version 1 with 0 (float32), version 2 with 2 (float64).
  EXPECT_EQ(decompress_multiblock64(forged(a64.value(), 2, 0)).status().code(), Code::corrupt_stream);
  EXPECT_EQ(decompress_multiblock64(forged(a64.value(), 2, 1)).status().code(), Code::corrupt_stream);
  EXPECT_EQ(decompress_multiblock(forged(a64.value(), 1, 2)).status().code(), Code::corrupt_stream);
  EXPECT_EQ(decompress_multiblock64(forged(a64.value(), 3, 2)).status().code(), Code::unsupported_version);
  // A float64 header over float32 block streams (and the reverse) is a corrupt file.
  const auto over32 = decompress_multiblock64(forged(a32.value(), 2, 2));
  EXPECT_EQ(over32.status().code(), Code::corrupt_stream);
  EXPECT_NE(over32.status().message().find("float32"), std::string::npos) << over32.status().message();
  EXPECT_EQ(decompress_multiblock(forged(a64.value(), 1, 0)).status().code(), Code::corrupt_stream);
  const std::string path = temp_path("factz_forged64.fzmb");
  write_file(path, forged(a32.value(), 2, 2));
  EXPECT_EQ(decompress_region64(path, {0, 0, 5, 5}).status().code(), Code::corrupt_stream);
  std::remove(path.c_str());
  // Every byte of header and index is covered; flips inside blocks are caught by their CRCs.
  const Bytes& good = a64.value();
  const uint64_t hsize = multiblock_header_size(4);
  for (uint64_t at = 0; at < hsize; ++at) {
    Bytes bad = good;
    bad[size_t(at)] ^= 0x10;
    EXPECT_FALSE(decompress_multiblock64(bad).ok()) << "flip at " << at;
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    Bytes bad = good;
    bad[size_t(hsize + rng() % (good.size() - hsize))] ^= uint8_t(1 + rng() % 255);
    EXPECT_FALSE(decompress_multiblock64(bad).ok());
  }
  for (size_t len : {size_t(3), size_t(40), size_t(hsize - 1), size_t(hsize + 10), good.size() - 1})
    EXPECT_EQ(decompress_multiblock64(std::span<const uint8_t>(good).first(len)).status().code(), Code::corrupt_stream)
        << len;
}

TEST(MultiBlock64, MissingVerticesKeepTheirSixtyFourBitsInTheFileAndInRegions) {
  VectorField2D64 f = synth::turbulence64(151, 97, 6);
  const double payload_nan = std::bit_cast<double>(uint64_t(0x7ff8dead12345678));
  const double fill = 9.969209968386869e36;  // netCDF's default double fill value
  f.mask.assign(size_t(f.size()), 0);
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      const size_t k = size_t(y * f.nx + x);
      if (std::abs(x - y - 20) <= 1) f.mask[k] = 1, f.u[k] = 0.5 + 0x1p-50 * double(k);  // a masked channel
      if (x < 9 && y < 7) f.u[k] = payload_nan, f.v[k] = -payload_nan;
      if (x > 140 && y > 90) f.u[k] = f.v[k] = fill, f.mask[k] = 1;
    }
  auto L = make_block_layout(f.nx, f.ny, 3, 2);
  ASSERT_TRUE(L.ok());
  for (const auto& e : L->blocks) f.mask[size_t(e.y0 * f.nx + e.x0)] = 1;  // every block's first corner
  const std::string path = temp_path("factz_region_mask64.fzmb");
  for (Mode m : {Mode::block, Mode::speculative}) {
    const Options o = options(m, BoundMode::abs, 1e-9);
    const MultiBlockRun rt = round_trip(f, o, 3, 2, std::string("masked ") + mode_name(m), true);
    ASSERT_EQ(rt.decoded.size(), f.size());
    EXPECT_GT(rt.cmp.cp_original, 20);
    write_file(path, rt.file);
    const std::vector<uint8_t> missing = missing_mask(f);
    for (Region r : {Region{0, 0, f.nx, f.ny}, Region{5, 3, 60, 50}, Region{100, 10, 151, 97}, Region{60, 60, 80, 70}}) {
      auto w = decompress_region64(path, r);
      ASSERT_TRUE(w.ok()) << w.status().to_string();
      bool any = false;
      for (int64_t y = r.y0; y < r.y1; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x) any = any || missing[size_t(y * f.nx + x)];
      ASSERT_EQ(w->mask.empty(), !any);
      for (int64_t y = r.y0; y < r.y1; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x) {
          const size_t k = size_t(y * f.nx + x), j = size_t((y - r.y0) * w->nx + (x - r.x0));
          if (any) {
            ASSERT_EQ(w->mask[j] != 0, missing[k] != 0) << x << "," << y;
          }
          ASSERT_TRUE(same_bits(w->u[j], rt.decoded.u[k]) && same_bits(w->v[j], rt.decoded.v[k])) << x << "," << y;
        }
    }
  }
  std::remove(path.c_str());
}

// ---- The command line ------------------------------------------------------------------------

/// Runs the factz CLI in `dir` with `args`; its stdout and stderr go to `dir`/out.txt.
int run_cli(const std::filesystem::path& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.string() + "' && '" + std::string(FACTZ_CLI_PATH) + "' " + args + " > out.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const std::filesystem::path& p) {
  auto b = read_bytes(p.string());
  return b.ok() ? std::string(b->begin(), b->end()) : std::string();
}

Bytes raw64(const std::vector<double>& plane) {
  Bytes raw;
  for (double x : plane)
    for (int i = 0; i < 8; ++i) raw.push_back(uint8_t(std::bit_cast<uint64_t>(x) >> (8 * i)));
  return raw;
}

Bytes npy64(const std::vector<double>& plane, int64_t nx, int64_t ny) {
  const int64_t shape[2] = {ny, nx};
  const std::string header = npy_header("<f8", shape);
  Bytes out(header.begin(), header.end());
  const Bytes raw = raw64(plane);
  out.insert(out.end(), raw.begin(), raw.end());
  return out;
}

/// The doubles of a raw float64 file, or of a '<f8' .npy (after its header).
std::vector<double> doubles_of(const std::filesystem::path& p) {
  auto bytes = read_bytes(p.string());
  if (!bytes.ok()) return {};
  std::span<const uint8_t> data(bytes.value());
  if (p.extension() == ".npy") {
    auto h = parse_npy_header(bytes.value());
    if (!h.ok() || h->descr != "<f8") return {};
    data = data.subspan(size_t(h->data_offset));
  }
  std::vector<double> out(data.size() / 8);
  std::memcpy(out.data(), data.data(), out.size() * 8);
  return out;
}

TEST(MultiBlock64Cli, BlocksRegionPerRankAndVerifyTakeAndGiveFloat64) {
  const auto dir = std::filesystem::temp_directory_path() / ("factz_mb64_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const int64_t nx = 70, ny = 50;
  VectorField2D64 f = synth::turbulence64(nx, ny, 41);
  f.u[7] = -9999.0;  // a fill value
  ASSERT_TRUE(write_bytes((dir / "u.npy").string(), npy64(f.u, nx, ny)).ok());
  ASSERT_TRUE(write_bytes((dir / "v.npy").string(), npy64(f.v, nx, ny)).ok());
  ASSERT_TRUE(write_bytes((dir / "u.f64").string(), raw64(f.u)).ok());
  ASSERT_TRUE(write_bytes((dir / "v.f64").string(), raw64(f.v)).ok());
  // compress --blocks: '<f8' .npy and raw --dtype f64 give one file, the library's.
  ASSERT_EQ(run_cli(dir, "compress -i u.npy -i v.npy -z a.fzmb --blocks 3 2 -M ABS 1e-9 --fill -9999 --json"), 0)
      << slurp(dir / "out.txt");
  const std::string stats = slurp(dir / "out.txt");
  EXPECT_NE(stats.find("\"dtype\": \"float64\""), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"raw_bytes\": 56000"), std::string::npos) << "70 x 50 x 2 doubles: " << stats;
  ASSERT_EQ(run_cli(dir, "compress -2 70 50 --dtype f64 -i u.f64 -i v.f64 -z b.fzmb --blocks 3 2 -M ABS 1e-9 "
                         "--fill -9999"),
            0)
      << slurp(dir / "out.txt");
  EXPECT_EQ(slurp(dir / "a.fzmb"), slurp(dir / "b.fzmb")) << ".npy and raw float64 give one file";
  VectorField2D64 marked = f;
  mark_missing(marked, FillValues64{-9999.0, -9999.0});
  auto lib = compress_multiblock(marked, options(Mode::speculative, BoundMode::abs, 1e-9), 3, 2);
  ASSERT_TRUE(lib.ok());
  const std::string a = slurp(dir / "a.fzmb");
  EXPECT_EQ(a, std::string(lib->begin(), lib->end())) << "the CLI writes compress_multiblock's bytes";
  // decompress writes float64: '<f8' .npy and raw, the library's values.
  auto whole = decompress_multiblock64(lib.value());
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(run_cli(dir, "decompress -z a.fzmb -o du.npy -o dv.npy"), 0) << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "decompress -z a.fzmb -o du.f64 -o dv.f64"), 0) << slurp(dir / "out.txt");
  EXPECT_EQ(doubles_of(dir / "du.npy"), whole->u);
  EXPECT_EQ(doubles_of(dir / "dv.npy"), whole->v);
  EXPECT_EQ(slurp(dir / "du.f64").size(), size_t(nx * ny) * 8);
  EXPECT_EQ(doubles_of(dir / "du.f64"), whole->u);
  EXPECT_EQ(whole->u[7], -9999.0) << "the fill value's bits";
  const std::string piped = "cd '" + dir.string() + "' && cat a.fzmb | '" + std::string(FACTZ_CLI_PATH) +
                            "' decompress -z - -o pu.f64 -o pv.f64 > out.txt 2>&1";
  ASSERT_EQ(std::system(piped.c_str()), 0) << slurp(dir / "out.txt");
  EXPECT_EQ(doubles_of(dir / "pv.f64"), whole->v) << "a float64 file from a pipe";
  // verify, one field and block by block: no violation of the float64 mesh.
  ASSERT_EQ(run_cli(dir, "verify -i u.npy -i v.npy -d du.npy -d dv.npy --fill -9999 --json"), 0) << slurp(dir / "out.txt");
  EXPECT_NE(slurp(dir / "out.txt").find("\"violations\": 0"), std::string::npos) << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "verify -i u.npy -i v.npy -d du.npy -d dv.npy --fill -9999 --blocks 3 2 --json"), 0)
      << slurp(dir / "out.txt");
  const std::string vb = slurp(dir / "out.txt");
  EXPECT_NE(vb.find("\"violations\": 0"), std::string::npos) << vb;
  EXPECT_EQ(vb.find("\"cp_original\": 0,"), std::string::npos) << "the field has critical points: " << vb;
  EXPECT_NE(vb.find("\"dtype\": \"float64\""), std::string::npos) << vb;
  EXPECT_EQ(run_cli(dir, "verify -i u.npy -i v.npy -d du.f64 -d dv.f64 --blocks 3 2"), 1) << "float32 -d beside <f8 -i";
  // --region: the window of the whole decode.
  ASSERT_EQ(run_cli(dir, "decompress -z a.fzmb --region 10 5 50 40 -o ru.npy -o rv.f64 --json"), 0)
      << slurp(dir / "out.txt");
  EXPECT_NE(slurp(dir / "out.txt").find("\"dtype\": \"float64\""), std::string::npos);
  const std::vector<double> ru = doubles_of(dir / "ru.npy"), rv = doubles_of(dir / "rv.f64");
  ASSERT_EQ(ru.size(), size_t(40 * 35));
  ASSERT_EQ(rv.size(), size_t(40 * 35));
  int64_t differ = 0;
  for (int64_t y = 5; y < 40; ++y)
    for (int64_t x = 10; x < 50; ++x) {
      const size_t k = size_t((y - 5) * 40 + (x - 10)), g = size_t(y * nx + x);
      differ += !same_bits(ru[k], whole->u[g]) || !same_bits(rv[k], whole->v[g]);
    }
  EXPECT_EQ(differ, 0);
  // --per-rank in one process: each block's own '<f8' .npy files give the same file, and
  // decompress --per-rank writes each block's float64 planes.
  auto L = make_block_layout(nx, ny, 3, 2);
  ASSERT_TRUE(L.ok());
  for (int b = 0; b < L->count(); ++b) {
    const VectorField2D64 blk = extract_block(f, L->blocks[size_t(b)]);
    ASSERT_TRUE(write_bytes((dir / ("pu_" + std::to_string(b) + ".npy")).string(), npy64(blk.u, blk.nx, blk.ny)).ok());
    ASSERT_TRUE(write_bytes((dir / ("pv_" + std::to_string(b) + ".npy")).string(), npy64(blk.v, blk.nx, blk.ny)).ok());
  }
  ASSERT_EQ(run_cli(dir, "compress -2 70 50 --blocks 3 2 --per-rank -i pu_%r.npy -i pv_%r.npy -z p.fzmb -M ABS 1e-9 "
                         "--fill -9999"),
            0)
      << slurp(dir / "out.txt");
  EXPECT_EQ(slurp(dir / "p.fzmb"), a) << "per-rank files give the file of the global field";
  ASSERT_EQ(run_cli(dir, "decompress -z a.fzmb --per-rank -o qu_%r.npy -o qv_%r.f64"), 0) << slurp(dir / "out.txt");
  for (int b = 0; b < L->count(); ++b) {
    const auto& e = L->blocks[size_t(b)];
    const std::vector<double> qu = doubles_of(dir / ("qu_" + std::to_string(b) + ".npy"));
    ASSERT_EQ(qu.size(), size_t(e.nx * e.ny)) << b;
    int64_t off = 0;
    for (int64_t y = 0; y < e.ny; ++y)
      for (int64_t x = 0; x < e.nx; ++x)
        off += !same_bits(qu[size_t(y * e.nx + x)], whole->u[size_t((e.y0 + y) * nx + e.x0 + x)]);
    EXPECT_EQ(off, 0) << "block " << b;
  }
  ASSERT_EQ(run_cli(dir, "verify -2 70 50 --blocks 3 2 --per-rank -i pu_%r.npy -i pv_%r.npy -d qu_%r.npy "
                         "-d qv_%r.f64 --dtype f64 --fill -9999 --json"),
            0)
      << slurp(dir / "out.txt");
  EXPECT_NE(slurp(dir / "out.txt").find("\"violations\": 0"), std::string::npos) << slurp(dir / "out.txt");
  EXPECT_EQ(run_cli(dir, "verify -2 70 50 --blocks 3 2 --per-rank -i pu_%r.npy -i pv_%r.npy -d qu_%r.npy "
                         "-d qv_%r.f64 --fill -9999"),
            1)
      << "a raw -d file is float32 unless --dtype f64 says otherwise: " << slurp(dir / "out.txt");
  // Per-rank files that mix float32 and float64 are refused with one line.
  std::filesystem::copy_file(dir / "pu_1.npy", dir / "wu_1.npy");
  for (int b : {0, 2, 3, 4, 5}) {
    const VectorField2D blk = testing::to_float(extract_block(f, L->blocks[size_t(b)]));
    ASSERT_TRUE(write_plane((dir / ("wu_" + std::to_string(b) + ".npy")).string(), blk.u, blk.nx, blk.ny).ok());
  }
  EXPECT_EQ(run_cli(dir, "compress -2 70 50 --blocks 3 2 --per-rank -i wu_%r.npy -i pv_%r.npy -z w.fzmb"), 1);
  // A float32 file still decodes to float32 planes.
  const VectorField2D f32 = testing::to_float(f);
  ASSERT_TRUE(write_plane((dir / "u32.f32").string(), f32.u, nx, ny).ok());
  ASSERT_TRUE(write_plane((dir / "v32.f32").string(), f32.v, nx, ny).ok());
  ASSERT_EQ(run_cli(dir, "compress -2 70 50 -i u32.f32 -i v32.f32 -z c.fzmb --blocks 3 2"), 0) << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "decompress -z c.fzmb -o cu.f32 -o cv.f32"), 0) << slurp(dir / "out.txt");
  EXPECT_EQ(slurp(dir / "cu.f32").size(), size_t(nx * ny) * 4);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace factz
