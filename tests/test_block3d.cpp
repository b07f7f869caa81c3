// The 3D block mode (FaCTz-B on the Freudenthal mesh, issue 22) and the 3D mode none:
// every block round trip keeps every critical point (compare() with the exact extractor:
// the same tetrahedra, the same types, none new) and the pointwise bound, on smooth flows,
// tie fields, zeros, constants, linear fields of every type and tiny grids, at every bound,
// with both coders, with and without zstd; mode none keeps the bound; the per-tetrahedron
// safe bound keeps every signature on its own (the exact check then repairs nothing), and
// the exact check with repair keeps them on its own too, where plain quantization loses
// them; the bytes do not depend on the thread count; golden streams pin the format; damaged
// and forged streams fail cleanly; the command line round-trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <iterator>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/block3d_mode.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "kernels/safe_bound3d.hpp"
#include "kernels/tet.hpp"
#include "kernels/tiles3d.hpp"
#include "streams/vector3d_stream.hpp"
#include "format/crc32.hpp"
#include "support/cli_process.hpp"
#include "support/fields3d.hpp"
#include "support/polynomial3d.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

Options block(double r, Coder coder = Coder::ans, bool zstd = true, Mode mode = Mode::block) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = r;
  o.coder = coder;
  o.zstd = zstd;
  return o;
}

VectorField3D from_planes(const VectorField3D& like, const detail::Tiled3DResult& r) {
  VectorField3D g;
  g.nx = like.nx, g.ny = like.ny, g.nz = like.nz;
  g.u.assign(r.recon[0].begin(), r.recon[0].end());
  g.v.assign(r.recon[1].begin(), r.recon[1].end());
  g.w.assign(r.recon[2].begin(), r.recon[2].end());
  return g;
}

using testing::beyond;

/// Compresses, decompresses and checks G0 and, in mode block, G1 (tests/support/fields3d.hpp).
/// Returns the stream.
Bytes round_trip(const VectorField3D& f, const Options& o, const std::string& what, int64_t* cps = nullptr,
                 CompressStats* stats = nullptr) {
  return testing::round_trip3d(f, o, o.mode == Mode::block, what, cps, stats);
}

std::vector<std::pair<std::string, VectorField3D>> flows(int64_t n) { return testing::flows3d(n, true); }

TEST(Block3D, KeepsEveryCriticalPointAndTheBoundOnFlows) {
  for (const auto& [name, f] : flows(32)) {
    int64_t cps = 0;
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4}) round_trip(f, block(r), name + " REL " + std::to_string(r), &cps);
    if (name != "taylor_green") {
      EXPECT_GT(cps, 0) << name << ": a field with critical points";
    }
  }
}

TEST(Block3D, ModeNoneKeepsTheBound) {
  for (const auto& [name, f] : flows(24))
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4})
      round_trip(f, block(r, Coder::ans, true, Mode::none), name + " none REL " + std::to_string(r));
  Options zero = block(0, Coder::huffman, false, Mode::none);  // bound 0: every value exact
  const VectorField3D f = testing::random_modes(13, 12, 11, 2);
  const Bytes s = round_trip(f, zero, "none bound 0");
  auto d = decompress3d(s);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->u, f.u);
  EXPECT_EQ(d->w, f.w);
}

TEST(Block3D, EveryCoderAndZstdSettingKeepsThemToo) {
  const VectorField3D f = testing::random_modes(33, 30, 28, 3);
  for (Coder coder : {Coder::huffman, Coder::ans})
    for (bool zstd : {false, true})
      for (double r : {1e-1, 1e-2, 1e-3, 1e-4})
        round_trip(f, block(r, coder, zstd),
                   std::string(coder_name(coder)) + (zstd ? " zstd" : "") + " REL " + std::to_string(r));
  Options abs = block(0);
  abs.bound_mode = BoundMode::abs;
  abs.bound = 0.01;
  round_trip(testing::abc_flow(40, 36, 33), abs, "ABS 0.01");
  abs.bound = 0;  // bound 0: every vertex exact
  const VectorField3D g = testing::abc_flow(20, 17, 18);
  auto d = decompress3d(round_trip(g, abs, "bound 0"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->u, g.u);
  EXPECT_EQ(d->v, g.v);
}

TEST(Block3D, ZerosConstantsTiesAndLinearFields) {
  const VectorField3D zeros = testing::filled3d(24, 20, 18, 0, 0, 0);
  const Bytes z = round_trip(zeros, block(1e-2), "zeros");
  EXPECT_LT(z.size(), 2000u) << "a zero field costs next to nothing";
  auto dz = decompress3d(z);
  ASSERT_TRUE(dz.ok());
  EXPECT_EQ(dz->v, zeros.v);
  round_trip(testing::filled3d(24, 20, 18, 1.5f, -2.0f, 0.25f), block(1e-2), "constant");
  round_trip(testing::filled3d(9, 8, 7, 0.0f, 0.0f, 1.0f), block(1e-3), "constant with zero components");
  for (uint64_t seed : {1, 2, 3})
    for (double r : {1e-1, 1e-2}) round_trip(testing::tie_field(17, 14, 13, seed), block(r), "ties");
  for (int t = 0; t <= int(CpType3::center); ++t) {
    const CpType3 type = CpType3(t);
    const VectorField3D f =
        testing::linear_field(12, 11, 10, testing::jacobian_of(type), testing::tet_centroid(5, 4, 6, t % 6));
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4}) {
      int64_t cps = 0;
      round_trip(f, block(r), std::string("linear ") + cp_type3_name(type), &cps);
      EXPECT_EQ(cps, 1) << cp_type3_name(type);
    }
  }
}

TEST(Block3D, TinyGridsAndFlatGrids) {
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {2, 2, 2}, {3, 2, 2}, {2, 3, 2}, {2, 2, 3},
                            {3, 1, 5}, {5, 4, 1}, {1, 6, 5}, {7, 1, 3}, {17, 1, 1}, {3, 3, 3}, {33, 17, 5},
                            {16, 16, 16}, {17, 16, 18}}) {
    const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    const VectorField3D modes = testing::random_modes(nx, ny, nz, 11);
    for (double r : {1e-1, 1e-2, 1e-3, 1e-4}) round_trip(modes, block(r), what + " modes");
    round_trip(testing::tie_field(nx, ny, nz, 2), block(1e-1), what + " ties");
    round_trip(modes, block(1e-2, Coder::huffman, false, Mode::none), what + " none");
  }
}

TEST(Block3D, BytesDoNotDependOnTheThreadCount) {
  for (Mode m : {Mode::block, Mode::none}) {
    const VectorField3D f = testing::random_modes(37, 29, 23, 4);
    Options o = block(1e-3, Coder::ans, true, m);
    o.policy = Policy::serial;
    auto ref = compress(f, o);
    ASSERT_TRUE(ref.ok());
    DecompressOptions serial;
    serial.policy = Policy::serial;
    auto b = decompress3d(ref.value(), serial);
    ASSERT_TRUE(b.ok());
    for (int t : {1, 2, 3}) {
      o.policy = Policy::omp;
      o.threads = t;
      auto s = compress(f, o);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s.value(), ref.value()) << mode_name(m) << " " << t << " threads";
      DecompressOptions d;
      d.threads = t;
      auto a = decompress3d(ref.value(), d);
      ASSERT_TRUE(a.ok());
      EXPECT_EQ(a->u, b->u);
      EXPECT_EQ(a->v, b->v);
      EXPECT_EQ(a->w, b->w);
    }
  }
}

/// The frontend's planes are what the decoder rebuilds, bit for bit.
TEST(Block3D, TheDecoderRebuildsTheWritersValuesBitForBit) {
  const VectorField3D f = testing::abc_flow(30, 26, 22);
  const float eb = 1e-3f;
  detail::Tiled3DResult r;
  detail::run_block3d(f, eb, 2, r);
  Options o = block(0);
  o.bound_mode = BoundMode::abs;
  o.bound = double(eb);
  auto s = compress(f, o);
  ASSERT_TRUE(s.ok());
  auto d = decompress3d(s.value());
  ASSERT_TRUE(d.ok());
  for (size_t k = 0; k < f.u.size(); ++k) {
    ASSERT_EQ(std::bit_cast<uint32_t>(d->u[k]), std::bit_cast<uint32_t>(r.recon[0][k])) << k;
    ASSERT_EQ(std::bit_cast<uint32_t>(d->v[k]), std::bit_cast<uint32_t>(r.recon[1][k])) << k;
    ASSERT_EQ(std::bit_cast<uint32_t>(d->w[k]), std::bit_cast<uint32_t>(r.recon[2][k])) << k;
  }
  EXPECT_LT(r.exact_vertices, f.size() / 4) << "most vertices are coded, not stored";
}

/// The two halves of the guarantee each hold alone. With the safe bounds and no exact check,
/// every signature survives (the derivation of kernels/safe_bound3d.hpp; the check then has
/// nothing to repair). Without the safe bounds (every vertex at eb), quantization loses or
/// invents critical points, and the exact check with repair restores every one.
TEST(Block3D, TheSafeBoundsAndTheRepairEachKeepTheCriticalPoints) {
  std::vector<std::pair<std::string, VectorField3D>> fields = flows(24);
  fields.emplace_back("linear saddle", testing::linear_field(9, 10, 11, testing::jacobian_of(CpType3::saddle_2_stable),
                                                             testing::tet_centroid(4, 4, 5, 2)));
  int64_t lost_without = 0, repaired = 0;
  for (const auto& [name, f] : fields) {
    float lo = f.u[0], hi = f.u[0];
    for (const auto* p : {&f.u, &f.v, &f.w})
      for (float x : *p) lo = std::min(lo, x), hi = std::max(hi, x);
    for (double rel : {1e-1, 1e-3}) {
      const float eb = float(rel) * (hi - lo);
      const std::string what = name + " REL " + std::to_string(rel);
      for (bool bounds : {true, false})
        for (bool check : {false, true}) {
          detail::Tiled3DResult r;
          detail::run_block3d(f, eb, 2, r, {bounds, check});
          const VectorField3D g = from_planes(f, r);
          EXPECT_EQ(beyond(f, g, eb), 0) << what;
          auto c = compare(f, g);
          ASSERT_TRUE(c.ok());
          if (bounds || check) {
            EXPECT_EQ(c->violations(), 0) << what << " bounds " << bounds << " check " << check;
          }
          if (bounds && check) {
            EXPECT_EQ(r.repaired_vertices, 0) << what << ": the safe bounds left something to repair";
            EXPECT_EQ(r.repair_rounds, 1) << what;
          }
          if (!bounds && !check) lost_without += c->violations();
          if (!bounds && check) repaired += r.repaired_vertices;
        }
    }
  }
  EXPECT_GT(lost_without, 0) << "plain quantization keeps every critical point: the control shows nothing";
  EXPECT_GT(repaired, 0);
}

/// The derivation itself, tetrahedron by tetrahedron: random and adversarial tetrahedra
/// without a critical point, every component of every vertex moved by up to the bound the
/// tetrahedron hands it (extremes and random moves), never gain one; critical ones are never
/// proven free.
TEST(Block3D, TheSafeBoundKeepsRandomTetrahedraCriticalPointFree) {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  auto uniform = [&] { return double(next() >> 11) * 0x1p-53; };
  int64_t tested = 0, positive = 0, general = 0, flipped = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    float u[4], v[4], w[4];
    const int kind = trial % 4;
    for (int k = 0; k < 4; ++k) {
      float* comp[3] = {&u[k], &v[k], &w[k]};
      for (float* x : comp) {
        double val = 2.0 * uniform() - 1.0;
        if (kind == 1) val = std::ldexp(val, int(next() % 40) - 20);          // wide magnitudes
        if (kind == 2) val = double(int(next() % 5) - 2);                      // ties
        if (kind == 3) val = 0.5 + 1e-3 * (2.0 * uniform() - 1.0) * (k + 1);  // near-parallel
        if (kind == 3 && (x != comp[0])) val = 2.0 * uniform() - 1.0;
        *x = float(val);
      }
    }
    const float eb = trial % 3 == 0 ? 1e-3f : (trial % 3 == 1 ? 0.1f : 10.0f);
    const int64_t idx[4] = {10, 11, 15, 40};
    const int axes[3] = {0, 1, 2};
    float bound[4][3];
    const bool proven = detail::tet_safe_bounds(u, v, w, eb, bound);
    if (detail::tet_signature(idx, axes, u, v, w) != 0) {
      EXPECT_FALSE(proven) << "a critical tetrahedron has no margin";
      continue;
    }
    ++tested;
    if (!proven) continue;
    ++positive;
    bool one_sign = false;
    for (const float* x : {u, v, w}) one_sign = one_sign || detail::strictly_one_sided(x, 4);
    general += !one_sign;
    for (int move = 0; move < 24; ++move) {
      float a[4], b[4], c[4];
      for (int k = 0; k < 4; ++k) {
        const float* src[3] = {&u[k], &v[k], &w[k]};
        float* dst[3] = {&a[k], &b[k], &c[k]};
        for (int comp = 0; comp < 3; ++comp) {
          ASSERT_GE(bound[k][comp], 0.0f);
          ASSERT_LE(bound[k][comp], eb);
          const double x = *src[comp], lim = bound[k][comp];
          const double t = move < 8 ? ((next() & 1) ? 1.0 : -1.0) : 2.0 * uniform() - 1.0;
          // The largest float move within the limit, as a bound-checked quantizer may make.
          float y = float(x + t * lim);
          while (std::fabs(double(y) - x) > lim) y = std::nextafter(y, *src[comp]);
          *dst[comp] = y;
        }
      }
      flipped += detail::tet_signature(idx, axes, a, b, c) != 0;
    }
  }
  EXPECT_EQ(flipped, 0);
  EXPECT_GT(positive, tested / 4) << "most critical-point-free tetrahedra get a positive bound";
  EXPECT_GT(general, 1000) << "the determinant and half-space margins are exercised";
}

TEST(Block3D, TheStreamIsVersion8ModeBlockOnSixteenCubedTiles) {
  const VectorField3D f = testing::random_modes(40, 18, 17, 2);
  for (Mode m : {Mode::block, Mode::none}) {
    auto s = compress(f, block(1e-2, Coder::ans, true, m));
    ASSERT_TRUE(s.ok());
    auto p = detail::parse_container(s.value());
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->header.version, 8);
    EXPECT_EQ(p->header.components, 3);
    EXPECT_EQ(p->header.mode, uint8_t(m));
    EXPECT_EQ(p->header.tile, 16);
    EXPECT_EQ(p->header.anchor_stride, 0);
    for (uint32_t id : {detail::kSectionMeta, detail::kSectionCodesU, detail::kSectionCodesV, detail::kSectionCodesW,
                        detail::kSectionExactIndex, detail::kSectionExactValues, detail::kSectionOutliers})
      EXPECT_TRUE(detail::has_section(p.value(), id)) << detail::section_name(id);
    EXPECT_EQ(detail::has_section(p.value(), detail::kSectionTileBounds), m == Mode::block);
    EXPECT_FALSE(detail::has_section(p.value(), detail::kSectionBoundIdsU));
    auto dims = stream_dims3d(s.value());
    ASSERT_TRUE(dims.ok());
    EXPECT_EQ(dims.value(), (std::array<int64_t, 3>{40, 18, 17}));
    auto d2 = decompress(s.value());
    ASSERT_FALSE(d2.ok());
    EXPECT_NE(d2.status().message().find("decompress3d"), std::string::npos) << d2.status().to_string();
  }
  // 3 x 2 x 2 tiles: the tile table holds 12 ids per component.
  const detail::TileLayout3D L(40, 18, 17);
  EXPECT_EQ(L.tile_count(), 12);
}

TEST(Block3D, SmoothFlowsCompressWell) {
  const VectorField3D f = testing::abc_flow(48, 48, 48);
  for (double r : {1e-2, 1e-3}) {
    CompressStats st;
    auto s = compress(f, block(r), &st);
    ASSERT_TRUE(s.ok());
    const double ratio = double(f.size()) * 12.0 / double(s->size());
    EXPECT_GT(ratio, r == 1e-2 ? 5.0 : 3.0) << "REL " << r;
    EXPECT_LT(st.exact_vertices, f.size() / 10) << "REL " << r;
  }
}

/// Truncates, flips bits in and randomizes a stream: every result is an error and nothing
/// crashes.
TEST(Block3D, DamagedStreamsAreRejected) {
  const VectorField3D f = testing::random_modes(14, 12, 11, 6);
  for (Mode m : {Mode::block, Mode::none})
    for (bool zstd : {false, true}) {
      auto s = compress(f, block(1e-2, Coder::ans, zstd, m));
      ASSERT_TRUE(s.ok());
      const Bytes good = s.value();
      for (size_t len :
           {size_t(0), size_t(3), size_t(63), size_t(64), size_t(100), good.size() / 2, good.size() - 1}) {
        auto d = decompress3d(std::span<const uint8_t>(good.data(), len));
        ASSERT_FALSE(d.ok()) << len;
        EXPECT_EQ(d.status().code(), Code::corrupt_stream) << len << ": " << d.status().to_string();
      }
      for (size_t i = 0; i < good.size(); i += (i < 400 ? 1 : 7)) {
        Bytes b = good;
        b[i] ^= uint8_t(1u << (i % 8));
        auto d = decompress3d(b);
        EXPECT_FALSE(d.ok()) << "byte " << i;
      }
    }
}

// Streams whose checksums are right but whose contents lie: re-sealed by the container writer
// from forged payloads. Each is corrupt_stream with a message naming the problem.
TEST(Block3D, ForgedContentsAreCorruptStreams) {
  const VectorField3D f = testing::random_modes(20, 19, 18, 3);
  const float eb = 0.01f;
  detail::Tiled3DResult r;
  detail::run_block3d(f, eb, 1, r);
  detail::Stream3DPlan p;
  p.nx = f.nx, p.ny = f.ny, p.nz = f.nz;
  p.options = block(0, Coder::huffman, false);
  p.options.bound_mode = BoundMode::abs;
  p.options.bound = eb;
  p.eb = eb;
  auto payload = [&] {
    detail::Tiled3DPayload pl;
    detail::Tiled3DResult copy = r;
    detail::tiled3d_payload(copy, true, 1, pl);
    return pl;
  };
  auto forged = [&](auto&& edit, const std::string& says) {
    detail::Tiled3DPayload pl = payload();
    edit(pl);
    auto s = detail::assemble_tiled3d(p, pl);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto d = decompress3d(s.value());
    ASSERT_FALSE(d.ok()) << says;
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
    EXPECT_NE(d.status().message().find(says), std::string::npos) << d.status().to_string();
  };
  {  // the unforged payload decodes
    detail::Tiled3DPayload pl = payload();
    auto s = detail::assemble_tiled3d(p, pl);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(decompress3d(s.value()).ok());
  }
  forged([](detail::Tiled3DPayload& pl) { pl.tile_ids[1] = 31; }, "tile bound id out of range");
  forged([](detail::Tiled3DPayload& pl) { pl.tile_ids.pop_back(); }, "tile bound section");
  forged([](detail::Tiled3DPayload& pl) { pl.symbols[0].pop_back(); }, "needs");
  forged([](detail::Tiled3DPayload& pl) { pl.symbols[2].pop_back(); }, "codes_w holds");
  forged([](detail::Tiled3DPayload& pl) { pl.symbols[1][5] = 0; }, "escape");
  forged([](detail::Tiled3DPayload& pl) { pl.exact_values[1].push_back(0); }, "exact");
  forged([](detail::Tiled3DPayload& pl) { pl.exact_index[2] = {1, 200}; }, "exact");
  forged(
      [](detail::Tiled3DPayload& pl) {
        pl.exact_index[0] = {1, 0};
        const float inf = INFINITY;
        pl.exact_values[0].assign(4, 0);
        std::memcpy(pl.exact_values[0].data(), &inf, 4);
      },
      "not finite");
  forged(
      [](detail::Tiled3DPayload& pl) {
        pl.symbols[0][0] = 0;  // an escape to a code that puts q out of range
        pl.outliers[0] = {1, 0, 0x80, 0x80, 0x80, 0x80, 0x10};
      },
      "out of range");
}

// ---- Golden streams of format version 8, modes 1 and 0 (tests/data/golden/README.md) ----


std::vector<testing::Golden3DCase> golden_cases() {
  return {{"v8_block3d_rel1e-2_huffman_nozstd_20x18x17.fz", block(1e-2, Coder::huffman, false), 0x70a67879u},
          {"v8_block3d_rel1e-4_ans_zstd_20x18x17.fz", block(1e-4, Coder::ans, true), 0x942ddd85u},
          {"v8_none3d_rel1e-3_ans_zstd_20x18x17.fz", block(1e-3, Coder::ans, true, Mode::none), 0x8eab41beu}};
}

// FACTZ_REGENERATE_GOLDEN=1 rewrites the files (only when the format version is bumped or a
// case is added) and prints the CRCs to paste above.
TEST(Block3D, GoldenVersion8StreamsDecodeToThePinnedValuesAndAreReproduced) {
  const VectorField3D f = testing::polynomial3d(20, 18, 17);  // 2 x 2 x 2 tiles
  testing::check_golden3d(f, golden_cases(), [&](const testing::Golden3DCase& g, const Bytes& file, const VectorField3D& d) {
    auto header = detail::parse_container(file);
    ASSERT_TRUE(header.ok());
    EXPECT_EQ(beyond(f, d, header->header.eb), 0) << g.file;
    if (g.options.mode == Mode::block) {
      auto c = compare(f, d);
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(c->violations(), 0) << g.file;
      EXPECT_GT(c->cp_original, 0) << g.file;
    }
  });
}

// ---- The command line --------------------------------------------------------------------

std::string float_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());  // little-endian host (docs/usage.md)
  return s;
}

std::vector<float> read_floats(const std::string& path) {
  const std::string s = testing::read_text_file(path);
  std::vector<float> v(s.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}

TEST(Block3D, CommandLineRoundTrip) {
  const std::string cli = testing::shell_quoted(FACTZ_CLI_PATH);
  testing::TempDir dir;
  const VectorField3D f = testing::random_modes(21, 17, 13, 4);
  std::string in, dec;
  for (auto [name, plane] : {std::pair{"u", &f.u}, {"v", &f.v}, {"w", &f.w}}) {
    std::ofstream(dir / (std::string("m_") + name + ".f32"), std::ios::binary) << float_bytes(*plane);
    in += std::string(" -i m_") + name + ".f32";
    dec += std::string(" -d d_") + name + ".f32";
  }
  const std::string dims = " -3 21 17 13";
  std::string reference;
  for (const char* x : {"serial", "omp=2", "omp=3"}) {
    const testing::Outcome c =
        testing::run_in(dir, cli + " compress" + dims + in + " -z m.fz -M REL 1e-3 --mode block -x " + x);
    ASSERT_EQ(c.exit_code, 0) << c.describe();
    auto kv = testing::key_values(c.err + c.out);
    EXPECT_EQ(kv["mode"], "block") << c.describe();
    const std::string bytes = testing::read_text_file(dir / "m.fz");
    if (reference.empty()) reference = bytes;
    EXPECT_EQ(bytes, reference) << x;
  }
  auto lib = compress(f, block(1e-3));
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(std::string(lib->begin(), lib->end()), reference) << "the library writes the same stream";
  const testing::Outcome d = testing::run_in(dir, cli + " decompress -z m.fz -o d_u.f32 -o d_v.f32 -o d_w.f32");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  auto back = decompress3d(lib.value());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(read_floats(dir / "d_v.f32"), back->v);
  const testing::Outcome v = testing::run_in(dir, cli + " verify" + dims + in + dec);
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  auto kv = testing::key_values(v.out);
  EXPECT_EQ(kv["violations"], "0") << v.describe();
  EXPECT_NE(kv["cp_original"], "0") << v.describe();
  const testing::Outcome info = testing::run_in(dir, cli + " info -z m.fz");
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  for (const char* want : {"format version 8", "3D vector field (u, v, w)", "block", "tile_bounds", "codes_w"})
    EXPECT_NE(info.out.find(want), std::string::npos) << want << "\n" << info.out;
  const testing::Outcome none =
      testing::run_in(dir, cli + " compress" + dims + in + " -z n.fz -M REL 1e-3 --mode none");
  ASSERT_EQ(none.exit_code, 0) << none.describe();
  EXPECT_EQ(testing::run_in(dir, cli + " decompress -z n.fz -o e_u.f32 -o e_v.f32 -o e_w.f32").exit_code, 0);
  const testing::Outcome stride =
      testing::run_in(dir, cli + " compress" + dims + in + " -z o.fz --mode block --anchor-stride 4");
  EXPECT_EQ(stride.exit_code, 2) << stride.describe();
}

}  // namespace
}  // namespace factz
