// Domain decomposition of 3D vector fields (docs/multiblock.md, "3D blocks"): layouts whose
// blocks share one vertex plane, shared faces stored exactly, the version 3 multi-block file,
// and the global guarantee checked by the exact 3D extractor on the whole decoded field.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "factz/topology3d.hpp"
#include "format/crc32.hpp"
#include "support/cli_process.hpp"
#include "support/fields3d.hpp"
#include "support/temp_dir.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

struct Layout {
  int px, py, pz;
};
std::string name_of(const Layout& l) {
  return std::to_string(l.px) + "x" + std::to_string(l.py) + "x" + std::to_string(l.pz);
}

Options opts(Mode mode, BoundMode bm, double bound) {
  Options o;
  o.mode = mode;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

/// The bundled crop (u, v, w of tests/data/cavity3d_crop_*_24x24x24.f32); empty when a file
/// is missing or short.
VectorField3D cavity_crop() {
  constexpr int64_t n = 24;
  VectorField3D f;
  f.nx = f.ny = f.nz = n;
  for (auto [c, values] : {std::pair{'u', &f.u}, std::pair{'v', &f.v}, std::pair{'w', &f.w}}) {
    const std::string path = std::string(FACTZ_TEST_DATA_DIR) + "/cavity3d_crop_" + c + "_24x24x24.f32";
    std::ifstream in(path, std::ios::binary);
    values->resize(size_t(n * n * n));
    in.read(reinterpret_cast<char*>(values->data()), std::streamsize(n * n * n * 4));
    if (!in || in.gcount() != std::streamsize(n * n * n * 4)) return {};
  }
  return f;
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

/// Values whose bits differ between `a` and `b` at vertex k of their grids.
int differing_components(const VectorField3D& a, size_t ka, const VectorField3D& b, size_t kb) {
  return !same_bits(a.u[ka], b.u[kb]) + !same_bits(a.v[ka], b.v[kb]) + !same_bits(a.w[ka], b.w[kb]);
}

/// Compresses f in the layout, decodes the file and checks: the global comparison by the
/// exact extractor has no violation; G0 at every valid vertex; each block decoded alone
/// agrees with the global field bit for bit on all its vertices (shared faces included), and
/// a shared vertex holds the original's bits. Returns the file (empty on failure).
Bytes check_global(const VectorField3D& f, const Options& o, const Layout& l, const std::string& what,
                   int64_t* cps = nullptr, bool topology = true) {
  const std::string tag = what + " " + name_of(l) + " " + mode_name(o.mode);
  CompressStats st;
  auto file = compress_multiblock(f, o, l.px, l.py, l.pz, &st);
  EXPECT_TRUE(file.ok()) << tag << ": " << file.status().to_string();
  if (!file.ok()) return {};
  auto d = decompress_multiblock3d(file.value());
  EXPECT_TRUE(d.ok()) << tag << ": " << d.status().to_string();
  if (!d.ok()) return {};
  EXPECT_EQ(d->nx, f.nx);
  EXPECT_EQ(d->ny, f.ny);
  EXPECT_EQ(d->nz, f.nz);
  const std::vector<uint8_t> missing = missing_mask(f);
  EXPECT_EQ(d->mask, missing) << tag;
  auto c = compare(f, d.value());
  EXPECT_TRUE(c.ok()) << tag;
  if (c.ok() && topology) {
    EXPECT_EQ(c->violations(), 0) << tag << ": lost " << c->lost << " spurious " << c->spurious << " changed "
                                  << c->type_changed << " mask " << c->mask_mismatch;
    EXPECT_EQ(c->cp_decompressed, c->cp_original) << tag;
    if (cps) *cps += c->cp_original;
  }
  // G0 at the valid vertices with the bound every block used.
  const float eb = float(st.eb_abs);
  int64_t over = 0;
  for (size_t k = 0; k < f.u.size(); ++k) {
    if (!missing.empty() && missing[k]) continue;
    for (auto [x, y] : {std::pair{f.u[k], d->u[k]}, std::pair{f.v[k], d->v[k]}, std::pair{f.w[k], d->w[k]}})
      over += !(std::fabs(double(x) - double(y)) <= double(eb));
  }
  EXPECT_EQ(over, 0) << tag << ": values beyond eb " << eb;
  // Lemma 3: every block's own decoding agrees with the global field on all its vertices,
  // and a vertex on a shared face has the original's bits.
  auto L = make_block_layout3d(f.nx, f.ny, f.nz, l.px, l.py, l.pz);
  EXPECT_TRUE(L.ok());
  if (!L.ok()) return {};
  int64_t disagree = 0, shared_not_exact = 0;
  for (int b = 0; b < L->count(); ++b) {
    auto blk = decompress_block3d(file.value(), b);
    EXPECT_TRUE(blk.ok()) << tag << " block " << b << ": " << blk.status().to_string();
    if (!blk.ok()) continue;
    const BlockExtent3D& e = L->blocks[size_t(b)];
    const uint8_t faces = L->shared_faces(b);
    for (int64_t z = 0; z < e.nz; ++z)
      for (int64_t y = 0; y < e.ny; ++y)
        for (int64_t x = 0; x < e.nx; ++x) {
          const size_t kb = size_t((z * e.ny + y) * e.nx + x);
          const size_t kg = size_t(((z + e.z0) * f.ny + y + e.y0) * f.nx + x + e.x0);
          disagree += differing_components(blk.value(), kb, d.value(), kg) != 0;
          const bool shared = ((faces & kFaceXMin) && x == 0) || ((faces & kFaceXMax) && x == e.nx - 1) ||
                              ((faces & kFaceYMin) && y == 0) || ((faces & kFaceYMax) && y == e.ny - 1) ||
                              ((faces & kFaceZMin) && z == 0) || ((faces & kFaceZMax) && z == e.nz - 1);
          if (shared) shared_not_exact += differing_components(blk.value(), kb, f, kg) != 0;
        }
  }
  EXPECT_EQ(disagree, 0) << tag << ": vertices where a block disagrees with the global field";
  EXPECT_EQ(shared_not_exact, 0) << tag << ": shared vertices not stored exactly";
  return file.value();
}

const std::vector<Layout> kLayouts = {{1, 1, 1}, {2, 1, 1}, {2, 2, 2}, {3, 2, 1}, {1, 3, 2}};

TEST(BlockLayout3D, SharedPlanesCoverEveryCellOnce) {
  for (auto [nx, ny, nz, px, py, pz] : std::vector<std::array<int64_t, 6>>{{20, 17, 15, 1, 1, 1},
                                                                            {20, 17, 15, 2, 2, 2},
                                                                            {21, 18, 16, 3, 2, 1},
                                                                            {9, 5, 6, 8, 4, 5},
                                                                            {2, 2, 2, 1, 1, 1},
                                                                            {1, 7, 3, 1, 6, 1}}) {
    auto L = make_block_layout3d(nx, ny, nz, int(px), int(py), int(pz));
    ASSERT_TRUE(L.ok()) << L.status().to_string();
    ASSERT_EQ(L->count(), px * py * pz);
    const int64_t cx = std::max<int64_t>(nx - 1, 0), cy = std::max<int64_t>(ny - 1, 0);
    const int64_t cz = std::max<int64_t>(nz - 1, 0);
    std::vector<int> cell_owner(size_t(cx * cy * cz), 0);
    for (int b = 0; b < L->count(); ++b) {
      const auto& e = L->blocks[size_t(b)];
      EXPECT_LE(e.x0 + e.nx, nx);
      EXPECT_LE(e.y0 + e.ny, ny);
      EXPECT_LE(e.z0 + e.nz, nz);
      const int bx = b % int(px), by = (b / int(px)) % int(py), bz = b / int(px * py);
      if (bx + 1 < px) {
        EXPECT_EQ(L->blocks[size_t(b + 1)].x0, e.x0 + e.nx - 1);
      }
      if (by + 1 < py) {
        EXPECT_EQ(L->blocks[size_t(b + px)].y0, e.y0 + e.ny - 1);
      }
      if (bz + 1 < pz) {
        EXPECT_EQ(L->blocks[size_t(b + px * py)].z0, e.z0 + e.nz - 1);
      }
      const uint8_t want = uint8_t((bx > 0 ? kFaceXMin : 0) | (bx + 1 < px ? kFaceXMax : 0) |
                                   (by > 0 ? kFaceYMin : 0) | (by + 1 < py ? kFaceYMax : 0) |
                                   (bz > 0 ? kFaceZMin : 0) | (bz + 1 < pz ? kFaceZMax : 0));
      EXPECT_EQ(L->shared_faces(b), want);
      for (int64_t z = e.z0; z < e.z0 + e.nz - 1; ++z)
        for (int64_t y = e.y0; y < e.y0 + e.ny - 1; ++y)
          for (int64_t x = e.x0; x < e.x0 + e.nx - 1; ++x) ++cell_owner[size_t((z * cy + y) * cx + x)];
    }
    for (int owners : cell_owner) EXPECT_EQ(owners, 1);
  }
  EXPECT_FALSE(make_block_layout3d(5, 5, 5, 5, 1, 1).ok());  // 4 cells, 5 blocks
  EXPECT_FALSE(make_block_layout3d(5, 5, 5, 1, 1, 0).ok());
  EXPECT_FALSE(make_block_layout3d(5, 5, 1, 1, 1, 2).ok());
  EXPECT_FALSE(make_block_layout3d(200, 200, 200, 128, 128, 128).ok());  // more than 2^20 blocks
}

TEST(Multiblock3D, ExactFacesKeepTheOriginalBitsInEveryMode) {
  // compress(VectorField3D) with exact_edges: the vertices of the named faces decode to the
  // original's bits (a -0 too), the others stay within the bound.
  VectorField3D f = testing::abc_flow(13, 11, 9);
  f.u[0] = -0.0f;
  for (Mode m : {Mode::none, Mode::block, Mode::speculative})
    for (uint8_t faces : {uint8_t(kFaceXMax), uint8_t(kFaceYMin | kFaceZMax), uint8_t(kFaceAll)}) {
      Options o = opts(m, BoundMode::rel, 5e-2);
      o.exact_edges = faces;
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      auto d = decompress3d(s.value());
      ASSERT_TRUE(d.ok());
      int64_t differ = 0, face_vertices = 0;
      for (int64_t z = 0; z < f.nz; ++z)
        for (int64_t y = 0; y < f.ny; ++y)
          for (int64_t x = 0; x < f.nx; ++x) {
            const bool on = ((faces & 1) && x == 0) || ((faces & 2) && x == f.nx - 1) || ((faces & 4) && y == 0) ||
                            ((faces & 8) && y == f.ny - 1) || ((faces & 16) && z == 0) ||
                            ((faces & 32) && z == f.nz - 1);
            if (!on) continue;
            ++face_vertices;
            const size_t k = size_t((z * f.ny + y) * f.nx + x);
            differ += differing_components(f, k, d.value(), k);
          }
      EXPECT_GT(face_vertices, 0);
      EXPECT_EQ(differ, 0) << mode_name(m) << " faces " << int(faces);
    }
  Options bad = opts(Mode::block, BoundMode::rel, 1e-2);
  bad.exact_edges = 64;
  EXPECT_EQ(compress(f, bad).status().code(), Code::invalid_argument);
}

TEST(Multiblock3D, SyntheticFieldsKeepEveryCriticalPointGlobally) {
  int64_t cps = 0;
  const std::vector<std::pair<std::string, VectorField3D>> fields = {
      {"abc", testing::abc_flow(18, 17, 15)},
      {"random_modes", testing::random_modes(17, 16, 15, 7)},
      {"ties", testing::tie_field(13, 12, 11, 5)},
  };
  for (const auto& [name, f] : fields)
    for (Mode m : {Mode::block, Mode::speculative})
      for (const Layout& l : kLayouts) check_global(f, opts(m, BoundMode::rel, 1e-2), l, name, &cps);
  EXPECT_GT(cps, 100) << "the fields have critical points to keep";
}

TEST(Multiblock3D, ZeroAndConstantFields) {
  for (Mode m : {Mode::block, Mode::speculative})
    for (const Layout& l : {Layout{2, 2, 2}, Layout{3, 2, 1}}) {
      check_global(testing::filled3d(9, 8, 7, 0.0f, 0.0f, 0.0f), opts(m, BoundMode::rel, 1e-2), l, "zero");
      check_global(testing::filled3d(9, 8, 7, 1.5f, -2.0f, 0.25f), opts(m, BoundMode::rel, 1e-2), l, "constant");
      check_global(testing::filled3d(9, 8, 7, -0.0f, 0.0f, -0.0f), opts(m, BoundMode::abs, 0.1), l, "signed zeros");
    }
}

TEST(Multiblock3D, OneCellThickBlocks) {
  // Blocks of two vertex planes along an axis (one cell): thinner than a tile and than the
  // anchor stride.
  const VectorField3D f = testing::random_modes(9, 7, 6, 11);
  for (Mode m : {Mode::block, Mode::speculative})
    for (const Layout& l : {Layout{8, 1, 1}, Layout{1, 6, 1}, Layout{1, 1, 5}, Layout{4, 3, 5}})
      check_global(f, opts(m, BoundMode::rel, 2e-2), l, "thin");
  // Mode none keeps the bound only, but its shared faces are exact too: the blocks agree.
  for (const Layout& l : {Layout{2, 2, 2}, Layout{4, 3, 5}})
    check_global(f, opts(Mode::none, BoundMode::rel, 2e-2), l, "none", nullptr, false);
}

TEST(Multiblock3D, CavityCropKeepsEveryCriticalPointGlobally) {
  const VectorField3D f = cavity_crop();
  ASSERT_EQ(f.size(), 24 * 24 * 24) << "tests/data/cavity3d_crop_*_24x24x24.f32";
  int64_t cps = 0;
  for (Mode m : {Mode::block, Mode::speculative})
    for (const Layout& l : kLayouts) check_global(f, opts(m, BoundMode::rel, 1e-2), l, "cavity", &cps);
  EXPECT_GT(cps, 0);
}

TEST(Multiblock3D, RelativeBoundIsResolvedOverTheGlobalRange) {
  // Blocks with very different ranges: the bound is rel * (global max - global min) in every
  // block, the one a single stream of the whole field uses.
  VectorField3D f = testing::abc_flow(16, 15, 14);
  for (size_t k = 0; k < f.u.size(); ++k)
    if (int64_t(k) % f.nx >= 8) f.u[k] *= 10.0f;
  const Options o = opts(Mode::block, BoundMode::rel, 1e-3);
  CompressStats whole, blocks;
  ASSERT_TRUE(compress(f, o, &whole).ok());
  auto file = compress_multiblock(f, o, 2, 2, 1, &blocks);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(blocks.eb_abs, whole.eb_abs);
  const ValueRange r = value_range_of(f);
  auto eb = absolute_bound(o, r);
  ASSERT_TRUE(eb.ok());
  EXPECT_EQ(float(eb.value()), float(whole.eb_abs));
  auto ix = parse_multiblock3d_index(file.value(), file->size());
  ASSERT_TRUE(ix.ok());
  EXPECT_EQ(ix->bound_mode, uint8_t(BoundMode::rel));
  EXPECT_EQ(ix->bound_value, 1e-3);
}

TEST(Multiblock3D, BytesDoNotDependOnTheThreadCount) {
  const VectorField3D f = testing::random_modes(19, 17, 16, 3);
  for (Mode m : {Mode::block, Mode::speculative})
    for (const Layout& l : {Layout{1, 1, 1}, Layout{2, 2, 2}, Layout{3, 2, 1}}) {
      Bytes first;
      for (int threads : {1, 2, 3, 8}) {
        Options o = opts(m, BoundMode::rel, 1e-2);
        o.threads = threads;
        auto file = compress_multiblock(f, o, l.px, l.py, l.pz);
        ASSERT_TRUE(file.ok());
        if (first.empty()) first = file.value();
        EXPECT_EQ(file.value(), first) << name_of(l) << " " << mode_name(m) << " threads " << threads;
        DecompressOptions d;
        d.threads = threads;
        auto a = decompress_multiblock3d(file.value(), d);
        d.policy = Policy::serial;
        auto b = decompress_multiblock3d(file.value(), d);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(testing::planes_crc(a.value()), testing::planes_crc(b.value()));
      }
      Options serial = opts(m, BoundMode::rel, 1e-2);
      serial.policy = Policy::serial;
      EXPECT_EQ(compress_multiblock(f, serial, l.px, l.py, l.pz).value(), first);
    }
}

TEST(Multiblock3D, BlocksAreTheStreamsOfCompressBlock) {
  // The file is header + index + compress_block of every block with the global bound: what
  // the MPI driver writes from its ranks' blocks.
  const VectorField3D f = testing::abc_flow(14, 13, 12);
  const Options o = opts(Mode::speculative, BoundMode::rel, 1e-2);
  auto file = compress_multiblock(f, o, 3, 2, 1);
  ASSERT_TRUE(file.ok());
  auto L = make_block_layout3d(f.nx, f.ny, f.nz, 3, 2, 1);
  ASSERT_TRUE(L.ok());
  const double eb = absolute_bound(o, value_range_of(f)).value();
  std::vector<Bytes> streams;
  std::vector<uint64_t> lengths;
  for (int b = 0; b < L->count(); ++b) {
    auto s = compress_block(extract_block(f, L->blocks[size_t(b)]), L.value(), b, o, eb);
    ASSERT_TRUE(s.ok());
    lengths.push_back(s->size());
    streams.push_back(s.value());
  }
  Bytes built = multiblock3d_header(L.value(), o, lengths);
  EXPECT_EQ(built.size(), multiblock3d_header_size(L->count()));
  for (const auto& s : streams) built.insert(built.end(), s.begin(), s.end());
  EXPECT_EQ(built, file.value());
  // A block of the wrong size, or not in the layout, is refused.
  EXPECT_EQ(compress_block(f, L.value(), 0, o, eb).status().code(), Code::invalid_argument);
  EXPECT_EQ(compress_block(f, L.value(), 6, o, eb).status().code(), Code::invalid_argument);
}

TEST(Multiblock3D, MaskedFieldsKeepTheirMissingVerticesAndTheValidTetrahedra) {
  VectorField3D f = testing::random_modes(15, 14, 13, 5);
  f.mask.assign(size_t(f.size()), 0);
  uint64_t s = 88172645463325252ull;
  for (auto& m : f.mask) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    m = (s % 100) < 6;
  }
  // Missing vertices on the shared planes of the 2x2x2 layout (x = 7, y = 6 / 7, z = 6),
  // some as NaN, one with a fill value under the mask.
  for (int64_t k = 0; k < f.size(); k += 29) {
    const int64_t x = k % f.nx, y = (k / f.nx) % f.ny, z = k / (f.nx * f.ny);
    if (x == 7 || y == 7 || z == 6) f.mask[size_t(k)] = 1;
  }
  f.u[size_t(7 + 15 * 3)] = NAN;
  f.mask[size_t(7 + 15 * 4)] = 1;
  f.v[size_t(7 + 15 * 4)] = -9999.0f;
  for (Mode m : {Mode::block, Mode::speculative})
    for (const Layout& l : {Layout{2, 2, 2}, Layout{3, 2, 1}, Layout{1, 1, 1}}) {
      const Bytes file = check_global(f, opts(m, BoundMode::rel, 1e-2), l, "masked");
      if (file.empty()) continue;
      auto d = decompress_multiblock3d(file);
      ASSERT_TRUE(d.ok());
      const std::vector<uint8_t> missing = missing_mask(f);
      int64_t kept = 0, held = 0;
      for (size_t k = 0; k < missing.size(); ++k)
        if (missing[k]) {
          ++held;
          kept += differing_components(f, k, d.value(), k) == 0;
        }
      EXPECT_EQ(kept, held) << "missing vertices keep the bits they held";
    }
  // Every vertex missing: nothing to keep, every bit back.
  VectorField3D all = testing::abc_flow(7, 6, 5);
  all.mask.assign(size_t(all.size()), 1);
  check_global(all, opts(Mode::block, BoundMode::rel, 1e-2), Layout{2, 2, 2}, "all missing");
}

TEST(Multiblock3D, RegionsAndSingleBlocksEqualTheGlobalDecoding) {
  const VectorField3D f = testing::abc_flow(17, 15, 13);
  auto file = compress_multiblock(f, opts(Mode::block, BoundMode::rel, 1e-2), 3, 2, 2);
  ASSERT_TRUE(file.ok());
  auto whole = decompress_multiblock3d(file.value());
  ASSERT_TRUE(whole.ok());
  testing::TempDir dir;
  const std::string path = dir / "f.fzmb";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(file->data()), std::streamsize(file->size()));
  for (Region3D r : {Region3D{0, 0, 0, 17, 15, 13}, Region3D{3, 2, 1, 9, 8, 7}, Region3D{8, 7, 6, 9, 8, 7},
                     Region3D{16, 14, 12, 17, 15, 13}}) {
    RegionStats st;
    auto w = decompress_region3d(path, r, {}, &st);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    EXPECT_GE(st.blocks_decoded, 1);
    int64_t differ = 0;
    for (int64_t z = r.z0; z < r.z1; ++z)
      for (int64_t y = r.y0; y < r.y1; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x)
          differ += differing_components(w.value(), size_t(((z - r.z0) * w->ny + y - r.y0) * w->nx + x - r.x0),
                                         whole.value(), size_t((z * f.ny + y) * f.nx + x));
    EXPECT_EQ(differ, 0);
  }
  RegionStats one;
  ASSERT_TRUE(decompress_region3d(path, Region3D{0, 0, 0, 2, 2, 2}, {}, &one).ok());
  EXPECT_EQ(one.blocks_decoded, 1);
  EXPECT_LT(one.bytes_read, file->size());
  EXPECT_EQ(decompress_region3d(path, Region3D{0, 0, 0, 18, 1, 1}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region3d(path, Region3D{2, 0, 0, 2, 1, 1}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_block3d(file.value(), 12).status().code(), Code::invalid_argument);
  auto ix = read_multiblock3d_index(path);
  ASSERT_TRUE(ix.ok());
  EXPECT_EQ(ix->layout.count(), 12);
  EXPECT_EQ(ix->file_bytes, file->size());
}

/// Rewrites the header CRCs of a version 3 file after a forged field (bytes 44 and 60) and
/// the index CRC.
void reseal(Bytes& b) {
  auto put32 = [&b](size_t at, uint32_t x) {
    for (int k = 0; k < 4; ++k) b[at + size_t(k)] = uint8_t(x >> (8 * k));
  };
  put32(44, detail::crc32c(std::span<const uint8_t>(b).subspan(0, 44)));
  put32(60, detail::crc32c(std::span<const uint8_t>(b).subspan(0, 60)));
}

TEST(Multiblock3D, DamagedFilesAreRefusedNeverACrash) {
  const VectorField3D f = testing::abc_flow(10, 9, 8);
  auto made = compress_multiblock(f, opts(Mode::speculative, BoundMode::rel, 1e-2), 2, 2, 2);
  ASSERT_TRUE(made.ok());
  const Bytes file = made.value();
  const auto ix = parse_multiblock3d_index(file, file.size());
  ASSERT_TRUE(ix.ok());
  // Truncation anywhere.
  for (size_t n = 0; n < file.size(); n += (n < 700 ? 1 : 97)) {
    const Bytes cut(file.begin(), file.begin() + std::ptrdiff_t(n));
    EXPECT_FALSE(decompress_multiblock3d(cut).ok()) << "truncated to " << n;
    EXPECT_FALSE(decompress_block3d(cut, 0).ok()) << "truncated to " << n;
  }
  // Every header and index byte flipped, then a sample of block bytes.
  for (size_t at = 0; at < file.size(); at += (at < ix->header_bytes ? 1 : 13)) {
    Bytes bad = file;
    bad[at] ^= 0x5A;
    auto d = decompress_multiblock3d(bad);
    EXPECT_FALSE(d.ok()) << "byte " << at << " flipped";
  }
  // Forged counts and sizes with valid header checksums: refused before any allocation.
  auto forged = [&](size_t at, uint64_t value, int bytes) {
    Bytes bad = file;
    for (int k = 0; k < bytes; ++k) bad[at + size_t(k)] = uint8_t(value >> (8 * k));
    reseal(bad);
    return bad;
  };
  for (const Bytes& bad : {forged(40, 1u << 20, 4), forged(40, 0xFFFFFFFFu, 4), forged(24, 1u << 20, 4),
                           forged(56, 3, 4), forged(48, uint64_t(1) << 40, 8), forged(8, 0, 8),
                           forged(16, 11, 8), forged(40, 4, 4)}) {
    auto d = decompress_multiblock3d(bad);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
  }
  // Versions: a 2D reader refuses the version as an older build does, naming the 3D decoder;
  // a future version is unsupported_version.
  auto as2d = decompress_multiblock(file);
  ASSERT_FALSE(as2d.ok());
  EXPECT_EQ(as2d.status().code(), Code::unsupported_version);
  EXPECT_NE(as2d.status().message().find("decompress_multiblock3d"), std::string::npos);
  Bytes future = file;
  future[4] = 9;
  EXPECT_EQ(decompress_multiblock3d(future).status().code(), Code::unsupported_version);
  // A 2D file to the 3D decoder names the 2D one.
  VectorField2D g;
  g.nx = 9;
  g.ny = 8;
  g.u.assign(72, 1.0f);
  g.v.assign(72, 2.0f);
  auto flat = compress_multiblock(g, opts(Mode::block, BoundMode::rel, 1e-2), 2, 2);
  ASSERT_TRUE(flat.ok());
  auto as3d = decompress_multiblock3d(flat.value());
  ASSERT_FALSE(as3d.ok());
  EXPECT_EQ(as3d.status().code(), Code::invalid_argument);
  EXPECT_TRUE(is_multiblock3d(file));
  EXPECT_FALSE(is_multiblock3d(flat.value()));
  // A block whose stream holds another extent than its index entry: swap two blocks of
  // different sizes keeping the index (lengths adjusted by re-writing the header).
  auto L = ix->layout;
  std::vector<uint64_t> lengths;
  std::vector<Bytes> streams;
  for (int b = 0; b < L.count(); ++b) {
    const auto& en = ix->entries[size_t(b)];
    const auto at = file.begin() + std::ptrdiff_t(en.offset);
    streams.emplace_back(at, at + std::ptrdiff_t(en.length));
  }
  std::swap(streams[0], streams[1]);
  for (const auto& s : streams) lengths.push_back(s.size());
  Bytes swapped = multiblock3d_header(L, opts(Mode::speculative, BoundMode::rel, 1e-2), lengths);
  for (const auto& s : streams) swapped.insert(swapped.end(), s.begin(), s.end());
  auto d = decompress_multiblock3d(swapped);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::corrupt_stream);
}

TEST(Multiblock3DCli, CompressDecompressVerifyAndInfo) {
  // factz compress -3 ... --blocks PX PY PZ writes the library's file; decompress writes the
  // global field (raw and .npy), verify (whole and --blocks) finds no violation, info
  // describes it; a 2D layout for a 3D field, a 3D one for a 2D field, and a pipe are handled.
  testing::TempDir dir;
  const VectorField3D f = testing::random_modes(14, 12, 11, 9);
  for (auto [name, plane] : {std::pair{"u.f32", &f.u}, std::pair{"v.f32", &f.v}, std::pair{"w.f32", &f.w}})
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(plane->data()), std::streamsize(plane->size() * 4));
  const std::string cli = testing::shell_quoted(FACTZ_CLI_PATH);
  const std::string in = " -3 14 12 11 -i u.f32 -i v.f32 -i w.f32";
  auto ok = [&](const std::string& args) {
    const auto o = testing::run_in(dir, cli + " " + args);
    EXPECT_EQ(o.exit_code, 0) << args << "\n" << o.describe();
    return o;
  };
  ok("compress" + in + " -z m.fzmb --blocks 3 2 2 --mode block -M REL 1e-2 -x omp=2");
  auto lib = compress_multiblock(f, opts(Mode::block, BoundMode::rel, 1e-2), 3, 2, 2);
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(testing::read_text_file(dir / "m.fzmb"), std::string(lib->begin(), lib->end()));
  ok("decompress -z m.fzmb -o du.f32 -o dv.npy -o dw.f32");
  const auto piped = testing::run_in(dir, "cat m.fzmb | " + cli + " decompress -z - -o pu.f32 -o pv.f32 -o pw.f32");
  EXPECT_EQ(piped.exit_code, 0) << piped.describe();
  EXPECT_EQ(testing::read_text_file(dir / "pu.f32"), testing::read_text_file(dir / "du.f32"));
  auto d = decompress_multiblock3d(lib.value());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(testing::read_text_file(dir / "du.f32"),
            std::string(reinterpret_cast<const char*>(d->u.data()), d->u.size() * 4));
  ok("decompress -z m.fzmb -o du.f32 -o dv.f32 -o dw.f32");
  const auto whole = testing::key_values(ok("verify" + in + " -d du.f32 -d dv.f32 -d dw.f32").out);
  const auto blocks = testing::key_values(ok("verify" + in + " -d du.f32 -d dv.f32 -d dw.f32 --blocks 3 2 2").out);
  EXPECT_EQ(whole.at("violations"), "0");
  for (const char* k : {"cp_original", "cp_decompressed", "violations", "max_abs_error_u", "max_abs_error_w", "rmse"})
    EXPECT_EQ(blocks.at(k), whole.at(k)) << k;
  const auto info = ok("info -z m.fzmb --json").out;
  EXPECT_NE(info.find("\"field\": \"vector3d\""), std::string::npos) << info;
  EXPECT_NE(info.find("\"pz\": 2"), std::string::npos) << info;
  auto refused = [&](const std::string& args, int code, const std::string& needle) {
    const auto o = testing::run_in(dir, cli + " " + args);
    EXPECT_EQ(o.exit_code, code) << args << "\n" << o.describe();
    EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\n" << o.describe();
  };
  refused("compress" + in + " -z x.fzmb --blocks 3 2", 2, "PX PY PZ");
  refused("compress -2 14 12 -i u.f32 -i v.f32 -z x.fzmb --blocks 3 2 2", 2, "3D vector field");
  refused("compress" + in + " -z x.fzmb --blocks 14 1 1", 1, "PX = 14");
  refused("decompress -z m.fzmb -o a.f32 -o b.f32", 2, "three times");
  refused("compress" + in + " -z x.fzmb --blocks 2 2 2 --per-rank", 2, "--per-rank");
}

}  // namespace
}  // namespace factz
