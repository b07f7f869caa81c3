// Multi-block files of float64 3D fields (FZMB version 4, docs/multiblock.md "3D blocks"): the
// global guarantee checked in double by the exact float64 3D extractor over the reassembled
// field, the bound decided exactly (kernels/exact64.hpp within_bound64), shared faces stored
// with all 64 bits, bytes independent of the thread count, regions and single blocks equal to
// the whole decode, masked / NaN vertices kept bit for bit, each decoder refusing the other's
// files by name, damaged files; and the command line (compress -3 --dtype f64 --blocks,
// decompress, --region X0 Y0 Z0 X1 Y1 Z1, --per-rank, verify, info) for float64 and float32.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "factz/topology3d.hpp"
#include "format/crc32.hpp"
#include "kernels/exact64.hpp"
#include "support/cli_process.hpp"
#include "support/fields3d.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

Options opts(Mode mode, BoundMode bm, double bound) {
  Options o;
  o.mode = mode;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

/// A float32 flow in double with detail below float32 precision: a float32 shortcut anywhere
/// on the path (range, block copies, shared faces, decode) changes values or topology.
VectorField3D64 double_field(int64_t nx, int64_t ny, int64_t nz, uint64_t seed) {
  const VectorField3D f = testing::random_modes(nx, ny, nz, seed);
  VectorField3D64 g;
  g.nx = nx, g.ny = ny, g.nz = nz;
  for (size_t k = 0; k < f.u.size(); ++k) {
    g.u.push_back(double(f.u[k]) + 0x1p-35 * double(int(k % 7) - 3));
    g.v.push_back(double(f.v[k]) - 0x1p-36 * double(int(k % 5) - 2));
    g.w.push_back(double(f.w[k]) + 0x1p-37 * double(int(k % 3) - 1));
  }
  return g;
}

/// Components whose bits differ at vertex ka of a and kb of b.
int differing(const VectorField3D64& a, size_t ka, const VectorField3D64& b, size_t kb) {
  return !same_bits(a.u[ka], b.u[kb]) + !same_bits(a.v[ka], b.v[kb]) + !same_bits(a.w[ka], b.w[kb]);
}

/// Compresses f in layout (px, py, pz), decodes the whole file and checks: version 4 with
/// the float64 byte; no violation against the exact float64 extractor over the whole field
/// (for the topology-preserving modes); G0 decided exactly at every valid vertex; every
/// vertex on a shared plane keeps the original's 64 bits; missing vertices their bits and mask.
Bytes check_global(const VectorField3D64& f, const Options& o, int px, int py, int pz, const std::string& what) {
  const std::string tag = what + " " + std::to_string(px) + "x" + std::to_string(py) + "x" + std::to_string(pz) +
                          " " + mode_name(o.mode);
  CompressStats st;
  auto file = compress_multiblock(f, o, px, py, pz, &st);
  EXPECT_TRUE(file.ok()) << tag << ": " << file.status().to_string();
  if (!file.ok()) return {};
  EXPECT_EQ(file->at(4), 4) << tag;
  EXPECT_EQ(file->at(5), 0) << tag;
  EXPECT_EQ(file->at(7), uint8_t(DType::float64)) << tag;
  auto d = decompress_multiblock3d64(file.value());
  EXPECT_TRUE(d.ok()) << tag << ": " << d.status().to_string();
  if (!d.ok()) return {};
  EXPECT_EQ(d->nx, f.nx);
  EXPECT_EQ(d->ny, f.ny);
  EXPECT_EQ(d->nz, f.nz);
  if (o.mode != Mode::none) {
    auto c = compare(f, d.value());
    EXPECT_TRUE(c.ok()) << tag;
    if (c.ok()) {
      EXPECT_EQ(c->violations(), 0) << tag << ": lost " << c->lost << " spurious " << c->spurious << " type "
                                    << c->type_changed << " mask " << c->mask_mismatch;
      EXPECT_GT(c->cp_original, 0) << tag;
    }
  }
  const auto L = make_block_layout3d(f.nx, f.ny, f.nz, px, py, pz).value();
  const std::vector<uint8_t> missing = missing_mask(f);
  int64_t beyond = 0, shared_changed = 0, missing_changed = 0;
  auto on_shared_plane = [&](int64_t x, int64_t y, int64_t z) {
    for (const auto& e : L.blocks) {
      if ((x == e.x0 && e.x0 > 0) || (y == e.y0 && e.y0 > 0) || (z == e.z0 && e.z0 > 0)) return true;
    }
    return false;
  };
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y)
      for (int64_t x = 0; x < f.nx; ++x) {
        const size_t k = size_t((z * f.ny + y) * f.nx + x);
        if (!missing.empty() && missing[k]) {
          missing_changed += differing(f, k, d.value(), k);
          continue;
        }
        for (auto [a, b] : {std::pair{f.u[k], d->u[k]}, std::pair{f.v[k], d->v[k]}, std::pair{f.w[k], d->w[k]}})
          beyond += !detail::within_bound64(a, b, st.eb_abs);
        if (on_shared_plane(x, y, z)) shared_changed += differing(f, k, d.value(), k);
      }
  EXPECT_EQ(beyond, 0) << tag;
  EXPECT_EQ(shared_changed, 0) << tag;
  EXPECT_EQ(missing_changed, 0) << tag;
  if (!missing.empty()) {
    EXPECT_EQ(d->mask, missing) << tag;
  }
  return file.value();
}

TEST(Multiblock3D64, EveryModeKeepsTheGlobalGuaranteesInDouble) {
  const VectorField3D64 f = double_field(15, 13, 12, 5);
  for (Mode m : {Mode::speculative, Mode::block, Mode::none})
    for (auto [px, py, pz] : {std::tuple{1, 1, 1}, std::tuple{2, 2, 2}, std::tuple{3, 2, 1}, std::tuple{1, 1, 4}})
      check_global(f, opts(m, BoundMode::rel, 1e-2), px, py, pz, "random_modes64");
  // An absolute bound below float32's spacing of the values.
  check_global(f, opts(Mode::speculative, BoundMode::abs, 1e-9), 2, 1, 2, "tiny bound");
}

TEST(Multiblock3D64, RelBoundIsResolvedInDoubleOverTheGlobalField) {
  const VectorField3D64 f = double_field(11, 10, 9, 2);
  auto file = compress_multiblock(f, opts(Mode::block, BoundMode::rel, 1e-3), 2, 2, 1);
  ASSERT_TRUE(file.ok());
  const ValueRange r = value_range_of(f);
  ASSERT_FALSE(r.empty);
  auto one = compress_multiblock(f, opts(Mode::block, BoundMode::abs, 1e-3 * (r.hi - r.lo)), 2, 2, 1);
  ASSERT_TRUE(one.ok());
  // The same blocks: only the user's bound in the header differs.
  auto a = parse_multiblock3d_index(file.value(), file->size()), b = parse_multiblock3d_index(one.value(), one->size());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->dtype, DType::float64);
  EXPECT_EQ(a->bound_mode, uint8_t(BoundMode::rel));
  EXPECT_EQ(Bytes(file->begin() + std::ptrdiff_t(a->header_bytes), file->end()),
            Bytes(one->begin() + std::ptrdiff_t(b->header_bytes), one->end()));
}

TEST(Multiblock3D64, BytesDoNotDependOnTheThreadCountAndEachBlockIsItsOwnStream) {
  const VectorField3D64 f = double_field(13, 12, 11, 8);
  for (Mode m : {Mode::block, Mode::speculative}) {
    Bytes first;
    for (int threads : {1, 2, 3, 8}) {
      Options o = opts(m, BoundMode::rel, 1e-2);
      o.threads = threads;
      auto file = compress_multiblock(f, o, 2, 2, 2);
      ASSERT_TRUE(file.ok());
      if (first.empty()) first = file.value();
      EXPECT_EQ(file.value(), first) << mode_name(m) << " threads " << threads;
    }
    Options serial = opts(m, BoundMode::rel, 1e-2);
    serial.policy = Policy::serial;
    EXPECT_EQ(compress_multiblock(f, serial, 2, 2, 2).value(), first);
    DecompressOptions d1, d8;
    d1.policy = Policy::serial;
    d8.threads = 8;
    auto a = decompress_multiblock3d64(first, d1), b = decompress_multiblock3d64(first, d8);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->u, b->u);
    EXPECT_EQ(a->w, b->w);
    // Every block is a float64 stream; compress_block gives the same stream.
    const auto ix = parse_multiblock3d_index(first, first.size()).value();
    const Options o = opts(m, BoundMode::rel, 1e-2);
    const double eb = absolute_bound(o, value_range_of(f)).value();
    for (int blk = 0; blk < ix.layout.count(); ++blk) {
      const auto& en = ix.entries[size_t(blk)];
      const std::span<const uint8_t> s(first.data() + en.offset, size_t(en.length));
      EXPECT_EQ(stream_dtype3d(s).value(), DType::float64);
      auto own = compress_block(extract_block(f, ix.layout.blocks[size_t(blk)]), ix.layout, blk, o, eb);
      ASSERT_TRUE(own.ok());
      EXPECT_EQ(own.value(), Bytes(s.begin(), s.end())) << "block " << blk;
    }
  }
}

TEST(Multiblock3D64, RegionsAndSingleBlocksEqualTheWholeDecode) {
  const VectorField3D64 f = double_field(17, 15, 13, 3);
  auto file = compress_multiblock(f, opts(Mode::block, BoundMode::rel, 1e-2), 3, 2, 2);
  ASSERT_TRUE(file.ok());
  auto whole = decompress_multiblock3d64(file.value());
  ASSERT_TRUE(whole.ok());
  testing::TempDir dir;
  const std::string path = dir / "f.fzmb";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file->data()), std::streamsize(file->size()));
  for (Region3D r : {Region3D{0, 0, 0, 17, 15, 13}, Region3D{3, 2, 1, 9, 8, 7}, Region3D{8, 7, 6, 9, 8, 7},
                     Region3D{16, 14, 12, 17, 15, 13}, Region3D{5, 0, 0, 6, 15, 13}}) {
    RegionStats st;
    auto w = decompress_region3d64(path, r, {}, &st);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    EXPECT_GE(st.blocks_decoded, 1);
    int64_t differ = 0;
    for (int64_t z = r.z0; z < r.z1; ++z)
      for (int64_t y = r.y0; y < r.y1; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x)
          differ += differing(w.value(), size_t(((z - r.z0) * w->ny + y - r.y0) * w->nx + x - r.x0), whole.value(),
                              size_t((z * f.ny + y) * f.nx + x));
    EXPECT_EQ(differ, 0);
  }
  RegionStats one;
  ASSERT_TRUE(decompress_region3d64(path, Region3D{0, 0, 0, 2, 2, 2}, {}, &one).ok());
  EXPECT_EQ(one.blocks_decoded, 1);
  EXPECT_LT(one.bytes_read, file->size());
  EXPECT_EQ(decompress_region3d64(path, Region3D{0, 0, 0, 18, 1, 1}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region3d64(path, Region3D{2, 0, 0, 2, 1, 1}).status().code(), Code::invalid_argument);
  // Block b alone: its whole extent, equal to the whole decode there.
  const auto ix = read_multiblock3d_index(path).value();
  EXPECT_EQ(ix.dtype, DType::float64);
  for (int b : {0, 5, 11}) {
    auto blk = decompress_block3d64(file.value(), b);
    ASSERT_TRUE(blk.ok());
    const auto& e = ix.layout.blocks[size_t(b)];
    int64_t differ = 0;
    for (int64_t z = 0; z < e.nz; ++z)
      for (int64_t y = 0; y < e.ny; ++y)
        for (int64_t x = 0; x < e.nx; ++x)
          differ += differing(blk.value(), size_t((z * e.ny + y) * e.nx + x), whole.value(),
                              size_t(((e.z0 + z) * f.ny + e.y0 + y) * f.nx + e.x0 + x));
    EXPECT_EQ(differ, 0) << "block " << b;
  }
  EXPECT_EQ(decompress_block3d64(file.value(), 12).status().code(), Code::invalid_argument);
}

TEST(Multiblock3D64, MissingVerticesKeepTheirSixtyFourBitsInTheFileAndInRegions) {
  VectorField3D64 f = double_field(12, 11, 10, 4);
  const double payload_nan = std::bit_cast<double>(uint64_t(0x7FF8DEADBEEF0123ull));
  f.mask.assign(size_t(f.size()), 0);
  // On a shared plane of 2 x 2 x 2 (x = 5 or 6 is the shared column of 12 vertices), inside,
  // and at a corner; a NaN with a payload, and a fill value held under the mask.
  const size_t on_plane = size_t((3 * 11 + 4) * 12 + 5), inner = size_t((7 * 11 + 8) * 12 + 9), corner = 0;
  f.u[on_plane] = payload_nan;
  f.mask[on_plane] = 1;
  f.v[inner] = -9.969209968386869e36;
  f.mask[inner] = 1;
  f.w[corner] = payload_nan;
  f.mask[corner] = 1;
  for (Mode m : {Mode::speculative, Mode::block}) {
    const Bytes file = check_global(f, opts(m, BoundMode::rel, 1e-2), 2, 2, 2, "masked");
    ASSERT_FALSE(file.empty());
    testing::TempDir dir;
    const std::string path = dir / "m.fzmb";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    auto w = decompress_region3d64(path, Region3D{4, 2, 2, 8, 6, 5});
    ASSERT_TRUE(w.ok());
    ASSERT_EQ(w->mask.size(), size_t(w->size()));
    const size_t at = size_t(((3 - 2) * w->ny + (4 - 2)) * w->nx + (5 - 4));
    EXPECT_EQ(w->mask[at], 1);
    EXPECT_TRUE(same_bits(w->u[at], payload_nan));
    EXPECT_EQ(std::count(w->mask.begin(), w->mask.end(), uint8_t(1)), 1);
    // A window without a missing vertex has an empty mask.
    auto clean = decompress_region3d64(path, Region3D{1, 1, 1, 3, 3, 3});
    ASSERT_TRUE(clean.ok());
    EXPECT_TRUE(clean->mask.empty());
  }
}

TEST(Multiblock3D64, EachDecoderRefusesTheOtherDataTypeByName) {
  const VectorField3D64 f = double_field(9, 8, 7, 6);
  const Bytes f64 = compress_multiblock(f, opts(Mode::block, BoundMode::rel, 1e-2), 2, 2, 1).value();
  const Bytes f32 = compress_multiblock(testing::random_modes(9, 8, 7, 6), opts(Mode::block, BoundMode::rel, 1e-2),
                                        2, 2, 1)
                        .value();
  EXPECT_EQ(f32.at(4), 3);
  EXPECT_TRUE(is_multiblock3d(f64));
  auto wrong32 = decompress_multiblock3d(f64);
  ASSERT_FALSE(wrong32.ok());
  EXPECT_EQ(wrong32.status().code(), Code::invalid_argument);
  EXPECT_NE(wrong32.status().message().find("decompress_multiblock3d64"), std::string::npos);
  auto wrong64 = decompress_multiblock3d64(f32);
  ASSERT_FALSE(wrong64.ok());
  EXPECT_EQ(wrong64.status().code(), Code::invalid_argument);
  EXPECT_NE(wrong64.status().message().find("decompress_multiblock3d "), std::string::npos)
      << wrong64.status().message();
  EXPECT_EQ(decompress_block3d(f64, 0).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_block3d64(f32, 0).status().code(), Code::invalid_argument);
  testing::TempDir dir;
  for (const auto& [name, bytes] : {std::pair{"a64.fzmb", &f64}, std::pair{"a32.fzmb", &f32}})
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()), std::streamsize(bytes->size()));
  auto r32 = decompress_region3d(dir / "a64.fzmb", Region3D{0, 0, 0, 2, 2, 2});
  EXPECT_EQ(r32.status().code(), Code::invalid_argument);
  EXPECT_NE(r32.status().message().find("decompress_region3d64"), std::string::npos);
  auto r64 = decompress_region3d64(dir / "a32.fzmb", Region3D{0, 0, 0, 2, 2, 2});
  EXPECT_EQ(r64.status().code(), Code::invalid_argument);
  // The 2D readers: unsupported_version naming the float64 3D decoder.
  auto as2d = decompress_multiblock(f64);
  ASSERT_FALSE(as2d.ok());
  EXPECT_EQ(as2d.status().code(), Code::unsupported_version);
  EXPECT_NE(as2d.status().message().find("decompress_multiblock3d64"), std::string::npos);
  EXPECT_EQ(read_multiblock_index(dir / "a64.fzmb").status().code(), Code::unsupported_version);
  // Version and data type byte must agree (checksums resealed).
  auto reseal = [](Bytes b) {
    auto put32 = [&b](size_t at, uint32_t x) {
      for (int k = 0; k < 4; ++k) b[at + size_t(k)] = uint8_t(x >> (8 * k));
    };
    put32(44, detail::crc32c(std::span<const uint8_t>(b).subspan(0, 44)));
    put32(60, detail::crc32c(std::span<const uint8_t>(b).subspan(0, 60)));
    return b;
  };
  Bytes v4_as_f32 = f64;
  v4_as_f32[7] = 0;
  EXPECT_EQ(decompress_multiblock3d64(reseal(v4_as_f32)).status().code(), Code::corrupt_stream);
  Bytes v3_as_f64 = f32;
  v3_as_f64[7] = uint8_t(DType::float64);
  EXPECT_EQ(decompress_multiblock3d(reseal(v3_as_f64)).status().code(), Code::corrupt_stream);
  // A version 4 header over float32 blocks: the blocks' own type is checked.
  Bytes relabelled = f32;
  relabelled[4] = 4;
  relabelled[7] = uint8_t(DType::float64);
  auto d = decompress_multiblock3d64(reseal(relabelled));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
}

TEST(Multiblock3D64, BadInputIsRefusedNeverACrash) {
  const VectorField3D64 f = double_field(8, 7, 6, 1);
  auto fine = compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 8, 1, 1);
  ASSERT_FALSE(fine.ok());
  EXPECT_EQ(fine.status().code(), Code::invalid_argument);
  EXPECT_NE(fine.status().message().find("PX = 8"), std::string::npos);
  EXPECT_EQ(compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 1, 1, 0).status().code(),
            Code::invalid_argument);
  VectorField3D64 inf = f;
  inf.v[3] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(compress_multiblock(inf, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2, 1).ok());
  const Bytes file = compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2, 2).value();
  const auto ix = parse_multiblock3d_index(file, file.size()).value();
  for (size_t n = 0; n < file.size(); n += (n < 700 ? 1 : 89)) {
    const Bytes cut(file.begin(), file.begin() + std::ptrdiff_t(n));
    EXPECT_FALSE(decompress_multiblock3d64(cut).ok()) << "truncated to " << n;
  }
  for (size_t at = 0; at < file.size(); at += (at < ix.header_bytes ? 1 : 17)) {
    Bytes bad = file;
    bad[at] ^= 0x5A;
    EXPECT_FALSE(decompress_multiblock3d64(bad).ok()) << "byte " << at << " flipped";
  }
}

// ---- the command line ----------------------------------------------------------------------

template <class T>
void write_raw(const std::string& path, const std::vector<T>& values) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(T)));
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

TEST(Multiblock3D64Cli, Float64BlocksRegionPerRankVerifyAndInfo) {
  testing::TempDir dir;
  VectorField3D64 f = double_field(14, 12, 11, 9);
  f.u[size_t((4 * 12 + 6) * 14 + 7)] = std::nan("");  // on the shared plane y = 6 of 2 x 2 x 2
  write_raw(dir / "u.f64", f.u);
  write_raw(dir / "v.f64", f.v);
  write_raw(dir / "w.f64", f.w);
  const std::string cli = testing::shell_quoted(FACTZ_CLI_PATH);
  const std::string in = " -3 14 12 11 -i u.f64 -i v.f64 -i w.f64 --dtype f64";
  auto ok = [&](const std::string& args) {
    const auto o = testing::run_in(dir, cli + " " + args);
    EXPECT_EQ(o.exit_code, 0) << args << "\n" << o.describe();
    return o;
  };
  auto refused = [&](const std::string& args, int code, const std::string& needle) {
    const auto o = testing::run_in(dir, cli + " " + args);
    EXPECT_EQ(o.exit_code, code) << args << "\n" << o.describe();
    EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\n" << o.describe();
  };
  // Statistics lines go to stderr (stdout may carry a component), verify's to stdout.
  const auto c =
      testing::key_values(ok("compress" + in + " -z m.fzmb --blocks 2 2 2 --mode block -M REL 1e-2 -x omp=2").err);
  EXPECT_EQ(c.at("blocks"), "8");
  VectorField3D64 marked = f;
  mark_missing(marked, FillValues3D64{});
  const Bytes lib = compress_multiblock(marked, opts(Mode::block, BoundMode::rel, 1e-2), 2, 2, 2).value();
  EXPECT_EQ(testing::read_text_file(dir / "m.fzmb"), std::string(lib.begin(), lib.end()));
  ok("decompress -z m.fzmb -o du.f64 -o dv.npy -o dw.f64");
  const VectorField3D64 d = decompress_multiblock3d64(lib).value();
  EXPECT_EQ(testing::read_text_file(dir / "du.f64"), bytes_of(d.u));
  EXPECT_EQ(testing::read_text_file(dir / "dw.f64"), bytes_of(d.w));
  ok("decompress -z m.fzmb -o du.f64 -o dv.f64 -o dw.f64");
  const auto whole = testing::key_values(ok("verify" + in + " -d du.f64 -d dv.f64 -d dw.f64").out);
  const auto blocks = testing::key_values(ok("verify" + in + " -d du.f64 -d dv.f64 -d dw.f64 --blocks 2 2 2").out);
  EXPECT_EQ(whole.at("violations"), "0");
  for (const char* k : {"cp_original", "cp_decompressed", "violations", "max_abs_error_u", "max_abs_error_w", "rmse"})
    EXPECT_EQ(blocks.at(k), whole.at(k)) << k;
  const auto info = ok("info -z m.fzmb --json").out;
  EXPECT_NE(info.find("\"dtype\": \"float64\""), std::string::npos) << info;
  EXPECT_NE(info.find("\"pz\": 2"), std::string::npos) << info;
  // --region X0 Y0 Z0 X1 Y1 Z1: the window of the whole decode, from the blocks it touches.
  const auto r =
      testing::key_values(ok("decompress -z m.fzmb -o ru.f64 -o rv.f64 -o rw.f64 --region 3 4 2 9 10 6").err);
  EXPECT_EQ(r.at("nx"), "6");
  EXPECT_EQ(r.at("nz"), "4");
  std::vector<double> window;
  for (int64_t z = 2; z < 6; ++z)
    for (int64_t y = 4; y < 10; ++y)
      for (int64_t x = 3; x < 9; ++x) window.push_back(d.v[size_t((z * 12 + y) * 14 + x)]);
  EXPECT_EQ(testing::read_text_file(dir / "rv.f64"), bytes_of(window));
  refused("decompress -z m.fzmb -o a -o b -o c --region 0 0 0 15 1 1", 1, "outside");
  refused("decompress -z m.fzmb -o a -o b -o c --region 0 0 2 2", 2, "X0 Y0 Z0 X1 Y1 Z1");
  // --per-rank in one process: each block's own files, then compressed back to the same file.
  ok("decompress -z m.fzmb -o pu%r.f64 -o pv%r.f64 -o pw%r.f64 --per-rank");
  const auto L = make_block_layout3d(14, 12, 11, 2, 2, 2).value();
  for (int b : {0, 7}) {
    const auto blk = decompress_block3d64(lib, b).value();
    EXPECT_EQ(testing::read_text_file(dir / ("pw" + std::to_string(b) + ".f64")), bytes_of(blk.w)) << b;
  }
  // Per-rank originals: each block's extent cut from the global field.
  for (int b = 0; b < L.count(); ++b) {
    const auto blk = extract_block(f, L.blocks[size_t(b)]);
    write_raw(dir / ("iu" + std::to_string(b) + ".f64"), blk.u);
    write_raw(dir / ("iv" + std::to_string(b) + ".f64"), blk.v);
    write_raw(dir / ("iw" + std::to_string(b) + ".f64"), blk.w);
  }
  const std::string per = " -3 14 12 11 -i iu%r.f64 -i iv%r.f64 -i iw%r.f64 --dtype f64 --per-rank --blocks 2 2 2";
  ok("compress" + per + " -z p.fzmb --mode block -M REL 1e-2");
  EXPECT_EQ(testing::read_text_file(dir / "p.fzmb"), std::string(lib.begin(), lib.end()));
  const auto pv = testing::key_values(ok("verify" + per + " -d pu%r.f64 -d pv%r.f64 -d pw%r.f64").out);
  EXPECT_EQ(pv.at("violations"), "0");
  EXPECT_EQ(pv.at("cp_original"), whole.at("cp_original"));
  // Per-rank files that disagree on a shared plane are refused.
  {
    auto blk = extract_block(f, L.blocks[1]);
    blk.w[0] += 1.0;  // x = x0 of block 1: the plane it shares with block 0
    write_raw(dir / "iw1.f64", blk.w);
  }
  refused("compress" + per + " -z q.fzmb", 1, "shared plane x=");
  // Layouts too fine, and a float32 reconstruction against a float64 original.
  refused("compress" + in + " -z x.fzmb --blocks 1 12 1", 1, "PY = 12");
  // A float32 reconstruction ('<f4' .npy) of a float64 original ('<f8' .npy) is refused.
  const int64_t shape[3] = {11, 12, 14};
  for (const auto& [name, descr, bytes] :
       {std::tuple{"o8.npy", "<f8", bytes_of(f.v)},
        std::tuple{"r4.npy", "<f4", bytes_of(std::vector<float>(f.v.size()))}})
    std::ofstream(dir / name, std::ios::binary) << npy_header(descr, shape) << bytes;
  refused("verify -3 14 12 11 -i o8.npy -i o8.npy -i o8.npy -d r4.npy -d r4.npy -d r4.npy --blocks 2 2 2", 1,
          "-i is float64, -d float32");
}

TEST(Multiblock3DCli, Float32RegionAndPerRank) {
  testing::TempDir dir;
  const VectorField3D f = testing::random_modes(13, 12, 10, 2);
  write_raw(dir / "u.f32", f.u);
  write_raw(dir / "v.f32", f.v);
  write_raw(dir / "w.f32", f.w);
  const std::string cli = testing::shell_quoted(FACTZ_CLI_PATH);
  auto ok = [&](const std::string& args) {
    const auto o = testing::run_in(dir, cli + " " + args);
    EXPECT_EQ(o.exit_code, 0) << args << "\n" << o.describe();
    return o;
  };
  ok("compress -3 13 12 10 -i u.f32 -i v.f32 -i w.f32 -z m.fzmb --blocks 3 1 2 -M REL 1e-2");
  const Bytes lib = compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 3, 1, 2).value();
  EXPECT_EQ(testing::read_text_file(dir / "m.fzmb"), std::string(lib.begin(), lib.end()));
  const VectorField3D d = decompress_multiblock3d(lib).value();
  ok("decompress -z m.fzmb -o ru.f32 -o rv.f32 -o rw.npy --region 0 5 4 13 7 10");
  std::vector<float> window;
  for (int64_t z = 4; z < 10; ++z)
    for (int64_t y = 5; y < 7; ++y)
      for (int64_t x = 0; x < 13; ++x) window.push_back(d.u[size_t((z * 12 + y) * 13 + x)]);
  EXPECT_EQ(testing::read_text_file(dir / "ru.f32"), bytes_of(window));
  ok("decompress -z m.fzmb -o pu%r.f32 -o pv%r.f32 -o pw%r.f32 --per-rank");
  for (int b = 0; b < 6; ++b)
    EXPECT_EQ(testing::read_text_file(dir / ("pv" + std::to_string(b) + ".f32")),
              bytes_of(decompress_block3d(lib, b).value().v))
        << b;
  const auto o = testing::run_in(dir, cli + " decompress -z m.fzmb -o a -o b --region 0 0 1 1");
  EXPECT_NE(o.exit_code, 0);
}

}  // namespace
}  // namespace factz
