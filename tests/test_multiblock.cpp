// Domain decomposition (docs/multiblock.md): layouts with shared boundaries, exactly
// stored edges, the multi-block file, and the global guarantee checked by the exact
// extractor on the assembled field.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "factz/topology.hpp"
#include "support/fields.hpp"
#include "synth.hpp"

namespace factz {
namespace {

VectorField2D make_field(int64_t nx, int64_t ny, uint32_t seed) {
  // Smooth vortices plus a little noise: many critical points, no symmetry.
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  f.u.resize(size_t(nx * ny));
  f.v.resize(size_t(nx * ny));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      const double a = 0.37 * double(x), b = 0.29 * double(y);
      f.u[size_t(y * nx + x)] = float(std::sin(a) * std::cos(b) + 0.3 * std::sin(0.11 * double(x + 2 * y)) + noise(rng));
      f.v[size_t(y * nx + x)] = float(-std::cos(a) * std::sin(b) + 0.2 * std::cos(0.17 * double(2 * x - y)) + noise(rng));
    }
  return f;
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

TEST(BlockLayout, SharedBoundariesCoverEveryCellOnce) {
  for (auto [nx, ny, px, py] : std::vector<std::array<int64_t, 4>>{
           {100, 60, 1, 1}, {100, 60, 2, 2}, {101, 61, 3, 2}, {37, 5, 36, 4}, {8, 8, 7, 1}, {2, 2, 1, 1}, {1, 9, 1, 8}}) {
    auto L = make_block_layout(nx, ny, int(px), int(py));
    ASSERT_TRUE(L.ok()) << L.status().to_string();
    ASSERT_EQ(L->count(), px * py);
    std::vector<int> cell_owner(size_t(std::max<int64_t>(nx - 1, 0) * std::max<int64_t>(ny - 1, 0)), 0);
    for (int b = 0; b < L->count(); ++b) {
      const auto& e = L->blocks[size_t(b)];
      EXPECT_GE(e.nx, 1);
      EXPECT_GE(e.ny, 1);
      EXPECT_LE(e.x0 + e.nx, nx);
      EXPECT_LE(e.y0 + e.ny, ny);
      // Neighbours share exactly one column / row.
      if (b % px != px - 1) {
        EXPECT_EQ(L->blocks[size_t(b + 1)].x0, e.x0 + e.nx - 1);
      }
      if (b / px != py - 1) {
        EXPECT_EQ(L->blocks[size_t(b + px)].y0, e.y0 + e.ny - 1);
      }
      for (int64_t y = e.y0; y + 1 < e.y0 + e.ny; ++y)
        for (int64_t x = e.x0; x + 1 < e.x0 + e.nx; ++x) ++cell_owner[size_t(y * (nx - 1) + x)];
      // Shared edges are exactly the inner ones.
      const uint8_t s = L->shared_edges(b);
      EXPECT_EQ(bool(s & kEdgeXMin), b % px != 0);
      EXPECT_EQ(bool(s & kEdgeXMax), b % px != px - 1);
      EXPECT_EQ(bool(s & kEdgeYMin), b / px != 0);
      EXPECT_EQ(bool(s & kEdgeYMax), b / px != py - 1);
    }
    for (int c : cell_owner) EXPECT_EQ(c, 1) << nx << "x" << ny << " " << px << "x" << py;
    // Band sizes differ by at most one cell.
    int64_t lo = INT64_MAX, hi = 0;
    for (int b = 0; b < int(px); ++b) {
      lo = std::min(lo, L->blocks[size_t(b)].nx);
      hi = std::max(hi, L->blocks[size_t(b)].nx);
    }
    EXPECT_LE(hi - lo, 1);
  }
}

TEST(BlockLayout, RejectsImpossibleSplits) {
  EXPECT_EQ(make_block_layout(10, 10, 0, 1).status().code(), Code::invalid_argument);
  EXPECT_EQ(make_block_layout(10, 10, 1, -2).status().code(), Code::invalid_argument);
  EXPECT_EQ(make_block_layout(10, 10, 10, 1).status().code(), Code::invalid_argument);  // 9 cells
  EXPECT_EQ(make_block_layout(1, 10, 2, 1).status().code(), Code::invalid_argument);
  EXPECT_EQ(make_block_layout(0, 10, 1, 1).status().code(), Code::invalid_argument);
  EXPECT_EQ(make_block_layout(5000, 5000, 2048, 1024).status().code(), Code::invalid_argument);  // > 2^20 blocks
  EXPECT_TRUE(make_block_layout(10, 10, 9, 9).ok());
}

TEST(ExactEdges, EdgesDecodeBitForBitInEveryMode) {
  const VectorField2D f = make_field(77, 45, 3);
  for (Mode m : {Mode::none, Mode::block, Mode::speculative})
    for (uint8_t edges : {uint8_t(kEdgeXMin), uint8_t(kEdgeYMax), uint8_t(kEdgeXMax | kEdgeYMin), uint8_t(kEdgeAll)}) {
      Options o;
      o.mode = m;
      o.bound = 5e-2;
      o.exact_edges = edges;
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      auto d = decompress(s.value());
      ASSERT_TRUE(d.ok());
      int64_t differ = 0, changed_inside = 0;
      for (int64_t y = 0; y < f.ny; ++y)
        for (int64_t x = 0; x < f.nx; ++x) {
          const size_t k = size_t(y * f.nx + x);
          const bool edge = ((edges & kEdgeXMin) && x == 0) || ((edges & kEdgeXMax) && x == f.nx - 1) ||
                            ((edges & kEdgeYMin) && y == 0) || ((edges & kEdgeYMax) && y == f.ny - 1);
          const bool same = same_bits(d->u[k], f.u[k]) && same_bits(d->v[k], f.v[k]);
          if (edge && !same) ++differ;
          if (!edge && !same) ++changed_inside;
        }
      EXPECT_EQ(differ, 0) << mode_name(m) << " edges " << int(edges);
      EXPECT_GT(changed_inside, 0) << "the bound is loose: the inside must be lossy (" << mode_name(m) << ")";
      if (m != Mode::none) {
        auto c = compare(f, d.value());
        ASSERT_TRUE(c.ok());
        EXPECT_EQ(c->lost + c->spurious + c->type_changed, 0) << mode_name(m);
      }
    }
  Options bad;
  bad.exact_edges = 16;
  EXPECT_EQ(compress(f, bad).status().code(), Code::invalid_argument);
}

TEST(ExactEdges, ZeroAndNegativeZeroEdgesKeepTheirBits) {
  VectorField2D f = make_field(40, 36, 5);
  for (int64_t x = 0; x < f.nx; ++x) {
    f.u[size_t(x)] = (x % 3 == 0) ? -0.0f : 0.0f;  // bottom row: signed zeros
    f.v[size_t(x)] = (x % 2 == 0) ? 0.0f : -0.0f;
  }
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    Options o;
    o.mode = m;
    o.exact_edges = kEdgeYMin;
    auto s = compress(f, o);
    ASSERT_TRUE(s.ok());
    auto d = decompress(s.value());
    ASSERT_TRUE(d.ok());
    for (int64_t x = 0; x < f.nx; ++x) {
      EXPECT_TRUE(same_bits(d->u[size_t(x)], f.u[size_t(x)])) << mode_name(m) << " x=" << x;
      EXPECT_TRUE(same_bits(d->v[size_t(x)], f.v[size_t(x)])) << mode_name(m) << " x=" << x;
    }
  }
}

/// Compresses f into a multi-block file, decodes it whole, and checks G0 (against the
/// global bound), G1 on the global field with the exact extractor, and exact shared lines.
void check_multiblock(const VectorField2D& f, const Options& o, int px, int py, const std::string& what) {
  CompressStats st;
  auto file = compress_multiblock(f, o, px, py, &st);
  ASSERT_TRUE(file.ok()) << what << ": " << file.status().to_string();
  ASSERT_TRUE(is_multiblock(file.value()));
  auto d = decompress_multiblock(file.value());
  ASSERT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  ASSERT_EQ(d->nx, f.nx);
  ASSERT_EQ(d->ny, f.ny);
  const double eb = st.eb_abs;
  int64_t misses = 0;
  for (int64_t k = 0; k < f.size(); ++k)
    misses += !(std::fabs(double(d->u[size_t(k)]) - double(f.u[size_t(k)])) <= eb) ||
              !(std::fabs(double(d->v[size_t(k)]) - double(f.v[size_t(k)])) <= eb);
  EXPECT_EQ(misses, 0) << what;
  auto L = make_block_layout(f.nx, f.ny, px, py);
  ASSERT_TRUE(L.ok());
  int64_t shared_differ = 0;
  for (int b = 0; b < L->count(); ++b) {
    const auto& e = L->blocks[size_t(b)];
    if (b % px != px - 1)
      for (int64_t y = e.y0; y < e.y0 + e.ny; ++y) {
        const size_t k = size_t(y * f.nx + e.x0 + e.nx - 1);
        shared_differ += !same_bits(d->u[k], f.u[k]) || !same_bits(d->v[k], f.v[k]);
      }
    if (b / px != py - 1)
      for (int64_t x = e.x0; x < e.x0 + e.nx; ++x) {
        const size_t k = size_t((e.y0 + e.ny - 1) * f.nx + x);
        shared_differ += !same_bits(d->u[k], f.u[k]) || !same_bits(d->v[k], f.v[k]);
      }
  }
  EXPECT_EQ(shared_differ, 0) << what;
  if (o.mode != Mode::none) {
    auto c = compare(f, d.value());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->lost, 0) << what;
    EXPECT_EQ(c->spurious, 0) << what;
    EXPECT_EQ(c->type_changed, 0) << what;
  }
}

TEST(MultiBlock, GlobalGuaranteesOnSyntheticFields) {
  const VectorField2D f = make_field(161, 97, 11);
  for (Mode m : {Mode::block, Mode::speculative, Mode::none})
    for (auto [px, py] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 2}, {5, 7}, {40, 3}, {160, 1}})
      for (Coder c : {Coder::ans, Coder::huffman}) {
        if (c == Coder::huffman && px * py > 6) continue;  // the coder is independent of the layout
        Options o;
        o.mode = m;
        o.coder = c;
        o.bound = 2e-2;
        check_multiblock(f, o, px, py,
                         std::string(mode_name(m)) + " " + coder_name(c) + " " + std::to_string(px) + "x" +
                             std::to_string(py));
      }
}

TEST(MultiBlock, GlobalGuaranteesOnSyntheticAndDegenerateSets) {
  for (const auto& nf : testing::synthetic_fields()) {
    if (nf.field.size() > 300000) continue;
    for (Mode m : {Mode::block, Mode::speculative}) {
      Options o;
      o.mode = m;
      check_multiblock(nf.field, o, nf.field.nx > 4 ? 3 : 1, nf.field.ny > 3 ? 2 : 1, nf.name + " " + mode_name(m));
    }
  }
  for (const auto& nf : testing::degenerate_fields()) {
    const int px = nf.field.nx > 2 ? 2 : 1, py = nf.field.ny > 2 ? 2 : 1;
    for (Mode m : {Mode::block, Mode::speculative, Mode::none}) {
      Options o;
      o.mode = m;
      check_multiblock(nf.field, o, px, py, nf.name + " " + mode_name(m));
    }
  }
}

TEST(MultiBlock, GlobalGuaranteesOnRealFields) {
  const auto fields = testing::real_vector_fields();
  if (fields.empty()) GTEST_SKIP() << "no real vector fields in tests/data or ../shared/data";
  for (const auto& nf : fields) {
    if (nf.field.size() > 100000) continue;  // the big ones run in the MPI and bench checks
    for (Mode m : {Mode::block, Mode::speculative}) {
      Options o;
      o.mode = m;
      check_multiblock(nf.field, o, 3, 2, nf.name + " " + mode_name(m));
    }
  }
}

TEST(MultiBlock, BlocksAreIndependentStreamsAndBytesIgnoreThreads) {
  const VectorField2D f = make_field(130, 70, 21);
  Options o;
  o.mode = Mode::speculative;
  o.policy = Policy::serial;
  auto ref = compress_multiblock(f, o, 3, 2);
  ASSERT_TRUE(ref.ok());
  o.policy = Policy::omp;
  for (int t : {1, 2, 3}) {
    o.threads = t;
    auto s = compress_multiblock(f, o, 3, 2);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.value(), ref.value()) << t << " threads";
  }
  // Each indexed byte range is exactly compress_block of that block alone, and decodes alone.
  auto ix = parse_multiblock_index(ref.value(), ref->size());
  ASSERT_TRUE(ix.ok()) << ix.status().to_string();
  auto eb = absolute_bound(o, value_range_of(f));
  ASSERT_TRUE(eb.ok());
  for (int b = 0; b < ix->layout.count(); ++b) {
    const auto& en = ix->entries[size_t(b)];
    const std::vector<uint8_t> stored(ref->begin() + int64_t(en.offset), ref->begin() + int64_t(en.offset + en.length));
    auto alone = compress_block(extract_block(f, ix->layout.blocks[size_t(b)]), ix->layout, b, o, eb.value());
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(alone.value(), stored) << "block " << b;
    auto d = decompress(stored);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->nx, ix->layout.blocks[size_t(b)].nx);
  }
  // The index records the user's bound, the blocks the resolved absolute one.
  EXPECT_EQ(ix->bound_mode, uint8_t(BoundMode::rel));
  EXPECT_EQ(ix->bound_value, o.bound);
  EXPECT_EQ(ix->file_bytes, ref->size());
}

TEST(MultiBlock, OneBlockDecodesLikeThePlainStream) {
  const VectorField2D f = make_field(90, 50, 8);
  for (Mode m : {Mode::block, Mode::speculative, Mode::none}) {
    Options o;
    o.mode = m;
    auto plain = compress(f, o);
    auto one = compress_multiblock(f, o, 1, 1);
    ASSERT_TRUE(plain.ok() && one.ok());
    auto a = decompress(plain.value());
    auto b = decompress_multiblock(one.value());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->u, b->u) << mode_name(m);
    EXPECT_EQ(a->v, b->v) << mode_name(m);
  }
}

TEST(MultiBlock, CompressBlockChecksItsArguments) {
  const VectorField2D f = make_field(20, 20, 1);
  auto L = make_block_layout(20, 20, 2, 2);
  ASSERT_TRUE(L.ok());
  Options o;
  EXPECT_EQ(compress_block(f, L.value(), 0, o, 0.1).status().code(), Code::invalid_argument);  // wrong size
  const auto blk = extract_block(f, L->blocks[0]);
  EXPECT_EQ(compress_block(blk, L.value(), 4, o, 0.1).status().code(), Code::invalid_argument);
  EXPECT_EQ(compress_block(blk, L.value(), 0, o, -1.0).status().code(), Code::invalid_argument);
  EXPECT_EQ(compress_block(blk, L.value(), 0, o, NAN).status().code(), Code::invalid_argument);
  EXPECT_TRUE(compress_block(blk, L.value(), 0, o, 0.1).ok());
  VectorField2D inf = f;  // NaN marks a vertex missing (tests/test_masks.cpp); infinity is an error
  inf.u[7] = INFINITY;
  EXPECT_EQ(compress_multiblock(inf, o, 2, 2).status().code(), Code::invalid_argument);
  EXPECT_EQ(compress_multiblock(f, o, 25, 1).status().code(), Code::invalid_argument);
}

std::string temp_path(const std::string& name) {
  return (::testing::TempDir().empty() ? std::string("/tmp/") : ::testing::TempDir()) + name;
}

TEST(MultiBlock, RegionDecodesOnlyTheBlocksItTouches) {
  const VectorField2D f = make_field(203, 151, 4);
  Options o;
  o.mode = Mode::block;
  auto file = compress_multiblock(f, o, 4, 3);
  ASSERT_TRUE(file.ok());
  const std::string path = temp_path("factz_region_test.fzmb");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(file->data()), std::streamsize(file->size()));
  }
  auto whole = decompress_multiblock(file.value());
  ASSERT_TRUE(whole.ok());
  auto L = make_block_layout(f.nx, f.ny, 4, 3);
  ASSERT_TRUE(L.ok());
  std::mt19937 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    Region r;
    r.x0 = int64_t(rng() % uint32_t(f.nx));
    r.y0 = int64_t(rng() % uint32_t(f.ny));
    r.x1 = r.x0 + 1 + int64_t(rng() % uint32_t(f.nx - r.x0));
    r.y1 = r.y0 + 1 + int64_t(rng() % uint32_t(f.ny - r.y0));
    if (trial == 0) r = {0, 0, f.nx, f.ny};
    if (trial == 1) r = {L->blocks[1].x0, 0, L->blocks[1].x0 + 1, 1};  // one vertex on a shared column
    RegionStats st;
    auto w = decompress_region(path, r, {}, &st);
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
    // Blocks read: those owning a vertex of the window (owner: the block whose extent minus
    // its shared last column / row holds it).
    int owners = 0;
    uint64_t bytes = multiblock_header_size(L->count());
    auto ix = parse_multiblock_index(file.value(), file->size());
    ASSERT_TRUE(ix.ok());
    for (int b = 0; b < L->count(); ++b) {
      const auto& e = L->blocks[size_t(b)];
      const int64_t ox1 = e.x0 + e.nx - (b % 4 == 3 ? 0 : 1), oy1 = e.y0 + e.ny - (b / 4 == 2 ? 0 : 1);
      if (std::max(e.x0, r.x0) < std::min(ox1, r.x1) && std::max(e.y0, r.y0) < std::min(oy1, r.y1)) {
        ++owners;
        bytes += ix->entries[size_t(b)].length;
      }
    }
    EXPECT_EQ(st.blocks_decoded, owners) << "trial " << trial;
    EXPECT_EQ(st.bytes_read, bytes) << "trial " << trial;
    if (trial == 1) {
      EXPECT_EQ(st.blocks_decoded, 1);
    }
  }
  EXPECT_EQ(decompress_region(path, {0, 0, 0, 5}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region(path, {0, 0, f.nx + 1, 5}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region(path, {-1, 0, 5, 5}).status().code(), Code::invalid_argument);
  EXPECT_EQ(decompress_region(path + ".missing", {0, 0, 5, 5}).status().code(), Code::io);
  std::remove(path.c_str());
}

TEST(MultiBlock, MissingVerticesComeBackInTheMaskOfTheWholeFieldAndOfARegion) {
  // Land along a diagonal channel, a masked block corner, NaN and a fill value: the mask of
  // the assembled field and of any region is the original's, the missing vertices keep their
  // bits, and the critical points of the valid mesh are kept.
  VectorField2D f = make_field(151, 97, 6);
  f.mask.assign(size_t(f.nx * f.ny), 0);
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      const size_t k = size_t(y * f.nx + x);
      if (std::abs(x - y - 20) <= 1) f.mask[k] = 1;
      if (x < 9 && y < 7) f.u[k] = std::nanf(""), f.mask[k] = 1;
      if (x > 140 && y > 90) f.u[k] = f.v[k] = 1e20f, f.mask[k] = 1;
    }
  auto L = make_block_layout(f.nx, f.ny, 3, 2);
  ASSERT_TRUE(L.ok());
  for (const auto& e : L->blocks) f.mask[size_t(e.y0 * f.nx + e.x0)] = 1;  // every block's first corner
  const std::string path = temp_path("factz_region_mask_test.fzmb");
  for (Mode mode : {Mode::block, Mode::speculative}) {
    Options o;
    o.mode = mode;
    auto file = compress_multiblock(f, o, 3, 2);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto whole = decompress_multiblock(file.value());
    ASSERT_TRUE(whole.ok()) << whole.status().to_string();
    ASSERT_EQ(whole->mask.size(), f.mask.size());
    for (size_t k = 0; k < f.mask.size(); ++k) {
      ASSERT_EQ(whole->mask[k] != 0, f.mask[k] != 0) << "vertex " << k;
      if (f.mask[k]) {
        EXPECT_TRUE(same_bits(whole->u[k], f.u[k]) && same_bits(whole->v[k], f.v[k])) << "vertex " << k;
      }
    }
    auto cmp = compare(f, whole.value());
    ASSERT_TRUE(cmp.ok());
    EXPECT_EQ(cmp->violations(), 0) << mode_name(mode);
    EXPECT_EQ(cmp->mask_mismatch, 0);
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(file->data()), std::streamsize(file->size()));
    }
    for (Region r : {Region{0, 0, f.nx, f.ny}, Region{5, 3, 60, 50}, Region{100, 10, 151, 97}, Region{60, 60, 80, 70}}) {
      auto w = decompress_region(path, r);
      ASSERT_TRUE(w.ok()) << w.status().to_string();
      bool any = false;
      for (int64_t y = r.y0; y < r.y1; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x) any = any || f.mask[size_t(y * f.nx + x)];
      ASSERT_EQ(w->mask.empty(), !any);
      for (int64_t y = r.y0; y < r.y1 && any; ++y)
        for (int64_t x = r.x0; x < r.x1; ++x) {
          const size_t k = size_t(y * f.nx + x), j = size_t((y - r.y0) * w->nx + (x - r.x0));
          ASSERT_EQ(w->mask[j] != 0, f.mask[k] != 0) << x << "," << y;
          EXPECT_TRUE(same_bits(w->u[j], whole->u[k]) && same_bits(w->v[j], whole->v[k]));
        }
    }
  }
  std::remove(path.c_str());
}

TEST(MultiBlock, CorruptFilesGiveClearErrorsNeverACrash) {
  const VectorField2D f = make_field(64, 48, 6);
  Options o;
  o.mode = Mode::block;
  auto file = compress_multiblock(f, o, 2, 2);
  ASSERT_TRUE(file.ok());
  const auto& good = file.value();
  const uint64_t hsize = multiblock_header_size(4);
  // Every byte of header and index is covered by a checksum or a consistency rule.
  for (uint64_t at = 0; at < hsize; ++at) {
    auto bad = good;
    bad[size_t(at)] ^= 0x10;
    auto d = decompress_multiblock(bad);
    EXPECT_FALSE(d.ok()) << "flip at " << at;
  }
  // Flips in block streams: caught by their CRCs.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    auto bad = good;
    bad[size_t(hsize + rng() % (good.size() - hsize))] ^= uint8_t(1 + rng() % 255);
    EXPECT_FALSE(decompress_multiblock(bad).ok());
  }
  for (size_t len : {size_t(0), size_t(3), size_t(40), size_t(hsize - 1), size_t(hsize + 10), good.size() - 1}) {
    auto d = decompress_multiblock(std::span<const uint8_t>(good).first(len));
    EXPECT_FALSE(d.ok()) << len;
    if (len >= 4) {
      EXPECT_EQ(d.status().code(), Code::corrupt_stream) << len;
    }
  }
  auto longer = good;
  longer.push_back(0);
  EXPECT_EQ(decompress_multiblock(longer).status().code(), Code::corrupt_stream);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> junk(size_t(rng() % 600));
    for (auto& b : junk) b = uint8_t(rng());
    if (junk.size() >= 4) {
      junk[0] = 'F';
      junk[1] = 'Z';
      junk[2] = 'M';
      junk[3] = 'B';
    }
    EXPECT_FALSE(decompress_multiblock(junk).ok());
  }
  // A plain stream is not a multi-block file.
  auto plain = compress(f, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(is_multiblock(plain.value()));
  EXPECT_EQ(decompress_multiblock(plain.value()).status().code(), Code::corrupt_stream);
}

TEST(MultiBlock, RelBoundIsResolvedOverTheGlobalField) {
  VectorField2D f = make_field(60, 40, 2);
  f.u[0] = 50.0f;  // the range lives in block 0 only
  Options o;
  o.bound = 1e-2;
  CompressStats whole, blocks;
  ASSERT_TRUE(compress(f, o, &whole).ok());
  ASSERT_TRUE(compress_multiblock(f, o, 2, 2, &blocks).ok());
  EXPECT_EQ(whole.eb_abs, blocks.eb_abs);
  const ValueRange a = value_range_of(extract_block(f, {0, 0, 30, 40})), b = value_range_of(extract_block(f, {29, 0, 31, 40}));
  const ValueRange m = merge(a, b), all = value_range_of(f);
  EXPECT_EQ(m.lo, all.lo);
  EXPECT_EQ(m.hi, all.hi);
  EXPECT_TRUE(value_range_of(VectorField2D{}).empty);
  EXPECT_EQ(merge(ValueRange{}, a).hi, a.hi);
}

TEST(MultiBlock, ProgressReportsEveryBlockThenTheEndAndLeavesTheBytesAlone) {
  const VectorField2D f = synth::turbulence(96, 80, 11);
  for (int threads : {1, 3}) {
    Options o;
    o.mode = Mode::block;
    o.threads = threads;
    auto plain = compress_multiblock(f, o, 3, 2);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    std::vector<std::pair<std::string, double>> calls;
    o.progress = [&calls](const Progress& p) { calls.emplace_back(std::string(p.stage), p.fraction); };
    auto reported = compress_multiblock(f, o, 3, 2);
    ASSERT_TRUE(reported.ok()) << reported.status().to_string();
    EXPECT_EQ(plain.value(), reported.value()) << threads;
    ASSERT_EQ(calls.size(), 7u) << "six blocks, then the end";
    for (size_t k = 0; k < 6; ++k) EXPECT_EQ(calls[k].first, "block") << k;
    EXPECT_EQ(calls.back().first, "container");
    EXPECT_EQ(calls.back().second, 1.0);
    for (size_t k = 1; k < calls.size(); ++k) EXPECT_GT(calls[k].second, calls[k - 1].second) << k;
    // One plain compression reports its own stages, in order, ending at 1.
    calls.clear();
    ASSERT_TRUE(compress(f, o).ok());
    std::vector<std::string> stages;
    for (const auto& c : calls) stages.push_back(c.first);
    EXPECT_EQ(stages, (std::vector<std::string>{"frontend", "encode", "entropy", "container"}));
  }
}

}  // namespace
}  // namespace factz
