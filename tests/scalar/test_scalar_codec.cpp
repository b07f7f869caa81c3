// Scalar compression: TopoSZ keeps the simplified contour tree (zero false positives,
// negatives and types, same arcs and pairing, checked by the same contour-tree code that
// `factz verify` uses) and the pointwise bound, on synthetic, degenerate and real fields;
// streams are thread-independent and untrusted bytes never crash the decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>
#include <utility>

#include "factz/compress3d.hpp"
#include "factz/contour_tree.hpp"
#include "factz/factz.hpp"
#include "factz/scalar.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

ScalarField grid(int64_t nx, int64_t ny, int64_t nz) {
  ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values.assign(size_t(nx * ny * nz), 0.0f);
  return f;
}

ScalarField random_field(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  ScalarField f = grid(nx, ny, nz);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : f.values) v = u(rng);
  return f;
}

ScalarField smooth_field(int64_t nx, int64_t ny, int64_t nz, float noise_level, uint32_t seed) {
  ScalarField f = grid(nx, ny, nz);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  size_t i = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        f.values[i++] = 10.0f * std::sin(0.21f * float(x)) * std::cos(0.17f * float(y)) +
                        3.0f * std::cos(0.3f * float(z) + 0.1f * float(x)) + noise_level * u(rng);
  return f;
}

// Plateaus: values rounded to steps, with a zero "land" block, as in quantized ocean data.
ScalarField plateau_field(int64_t nx, int64_t ny) {
  ScalarField f = smooth_field(nx, ny, 1, 0.5f, 3);
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      float& v = f.values[size_t(y * nx + x)];
      v = (x > nx / 2 && y < ny / 3) ? 0.0f : std::round(v * 2.0f) / 2.0f;
    }
  return f;
}

struct Outcome {
  ScalarCompressStats stats;
  size_t bytes = 0;
  ScalarComparison cmp;
};

Outcome round_trip(const ScalarField& f, ScalarMode mode, double rel, double persistence, int threads = 0) {
  ScalarOptions o;
  o.mode = mode;
  o.bound = rel;
  o.persistence = persistence;
  o.threads = threads;
  Outcome out;
  auto stream = compress_scalar(f, o, &out.stats);
  EXPECT_TRUE(stream.ok()) << stream.status().to_string();
  if (!stream.ok()) return out;
  out.bytes = stream->size();
  auto back = decompress_scalar(stream.value());
  EXPECT_TRUE(back.ok()) << back.status().to_string();
  if (!back.ok()) return out;
  EXPECT_EQ(back->nx, f.nx);
  EXPECT_EQ(back->ny, f.ny);
  EXPECT_EQ(back->nz, f.nz);
  auto c = compare_scalar(f, back.value(), BoundMode::rel, persistence);
  EXPECT_TRUE(c.ok());
  if (c.ok()) out.cmp = c.value();
  return out;
}

// The acceptance property: same simplified tree (no false case, same arcs and pairs) and
// every value within the absolute bound.
void expect_tree_and_bound_kept(const ScalarField& f, double rel, double persistence) {
  SCOPED_TRACE("REL " + std::to_string(rel) + " persistence " + std::to_string(persistence));
  const Outcome r = round_trip(f, ScalarMode::contour_tree, rel, persistence);
  const CtComparison& t = r.cmp.tree;
  EXPECT_EQ(t.false_positive, 0);
  EXPECT_EQ(t.false_negative, 0);
  EXPECT_EQ(t.false_type, 0);
  EXPECT_TRUE(t.same()) << "arcs " << t.arcs_missing << "/" << t.arcs_extra << " pairs " << t.pairs_missing << "/"
                        << t.pairs_extra;
  EXPECT_LE(r.cmp.max_abs_error, r.stats.eb_abs);
  EXPECT_GT(t.nodes_original, 0);
}

const double kBounds[] = {1e-2, 1e-3};
const double kPersistences[] = {1e-2, 1e-3};

void expect_all_settings(const ScalarField& f) {
  for (double rel : kBounds)
    for (double p : kPersistences) expect_tree_and_bound_kept(f, rel, p);
}

TEST(TopoSZ, KeepsTheTreeOnRandomFields) {
  expect_all_settings(random_field(40, 30, 1, 1));
  expect_all_settings(random_field(9, 8, 7, 2));
}

TEST(TopoSZ, KeepsTheTreeOnSmoothNoisyFields) {
  expect_all_settings(smooth_field(90, 70, 1, 0.2f, 4));
  expect_all_settings(smooth_field(30, 24, 18, 0.3f, 5));
}

TEST(TopoSZ, KeepsTheTreeOnPlateausConstantsAndZeros) {
  expect_all_settings(plateau_field(60, 50));
  ScalarField c = grid(13, 11, 1);
  std::fill(c.values.begin(), c.values.end(), 4.25f);
  expect_all_settings(c);
  expect_all_settings(grid(12, 9, 1));     // all zero
  expect_all_settings(grid(5, 4, 3));      // all zero, 3D
  ScalarField signs = grid(6, 5, 1);       // -0 and +0 tie: the index decides
  for (size_t i = 0; i < signs.values.size(); ++i) signs.values[i] = (i % 2) ? -0.0f : 0.0f;
  expect_all_settings(signs);
}

TEST(TopoSZ, KeepsTheTreeOnTinyGrids) {
  for (auto [nx, ny] : {std::pair{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 1}, {1, 7}}) {
    SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny));
    ScalarField f = random_field(nx, ny, 1, uint32_t(nx * 10 + ny));
    expect_all_settings(f);
  }
  expect_all_settings(random_field(2, 2, 2, 9));
}

TEST(TopoSZ, NoneModeKeepsOnlyThePointwiseBound) {
  const ScalarField f = smooth_field(80, 60, 1, 0.05f, 6);
  for (double rel : kBounds) {
    const Outcome r = round_trip(f, ScalarMode::none, rel, 1e-2);
    EXPECT_LE(r.cmp.max_abs_error, r.stats.eb_abs);
    EXPECT_GT(double(f.values.size()) * 4.0 / double(r.bytes), 3.0);  // smooth: it compresses
    EXPECT_EQ(r.stats.iterations, 0);
  }
}

TEST(TopoSZ, ZeroBoundIsLossless) {
  const ScalarField f = random_field(20, 10, 1, 7);
  for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
    ScalarOptions o;
    o.mode = mode;
    o.bound = 0;
    auto s = compress_scalar(f, o);
    ASSERT_TRUE(s.ok());
    auto back = decompress_scalar(s.value());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->values, f.values);
  }
}

TEST(TopoSZ, BytesDoNotDependOnTheThreadCount) {
  const ScalarField f = smooth_field(40, 30, 20, 0.3f, 8);
  ScalarOptions o;
  o.bound = 1e-2;
  o.persistence = 1e-3;
  o.threads = 1;
  auto a = compress_scalar(f, o);
  o.threads = 2;
  auto b = compress_scalar(f, o);
  o.policy = Policy::serial;
  auto c = compress_scalar(f, o);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a.value(), b.value());
  EXPECT_EQ(a.value(), c.value());
}

// A sea-ice-like 3D field: a smooth field clamped to [0, 1] (plateaus at both ends) and
// rounded to 1/64, so that many steps race for many rounds.
ScalarField ice_field(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  ScalarField f = smooth_field(nx, ny, nz, 0.4f, seed);
  for (float& v : f.values) v = std::round(std::clamp(v / 8.0f + 0.5f, 0.0f, 1.0f) * 64.0f) / 64.0f;
  return f;
}

TEST(TopoSZ, TwoThreadsRunRoundsAheadForOneThreadsStream) {
  // race_steps on two threads: a second step's round runs ahead of the race, and the
  // finalists run side by side. The stream and the counts must be one thread's, the hook
  // must run on the calling thread only and end with the kept step's last round, and the
  // rounds run ahead must be some of the race's (else this test checks nothing of them).
  for (const auto& [rel, p] : {std::pair{1e-2, 1e-2}, std::pair{3e-2, 1e-2}}) {
    const ScalarField f = ice_field(40, 30, 24, 5);
    std::vector<uint8_t> streams[2];
    ScalarCompressStats st[2];
    for (int t : {1, 2}) {
      ScalarOptions o;
      o.bound = rel;
      o.persistence = p;
      o.threads = t;
      std::vector<ScalarProgress> seen;
      bool elsewhere = false;
      const std::thread::id caller = std::this_thread::get_id();
      o.progress = [&](const ScalarProgress& pr) {
        elsewhere = elsewhere || std::this_thread::get_id() != caller;
        seen.push_back(pr);
      };
      auto s = compress_scalar(f, o, &st[t - 1]);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      streams[t - 1] = std::move(s.value());
      EXPECT_FALSE(elsewhere) << t << " threads";
      ASSERT_FALSE(seen.empty());
      EXPECT_EQ(seen.back().nodes_to_fix, 0);
      EXPECT_EQ(seen.back().round, st[t - 1].iterations);
    }
    EXPECT_EQ(streams[0], streams[1]) << "REL " << rel;
    EXPECT_EQ(st[0].race_rounds, st[1].race_rounds);
    EXPECT_EQ(st[0].iterations, st[1].iterations);
    EXPECT_EQ(st[0].exact_vertices, st[1].exact_vertices);
    EXPECT_EQ(st[0].rounds_ahead, 0);
    EXPECT_GT(st[1].rounds_ahead, 0) << "REL " << rel;
    EXPECT_LT(st[1].rounds_ahead, st[1].race_rounds);
    auto back = decompress_scalar(streams[1]);
    ASSERT_TRUE(back.ok());
    auto c = compare_scalar(f, back.value(), BoundMode::rel, p);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->same());
  }
}

TEST(TopoSZ, IterationsAreRecorded) {
  // Noisy fields at coarse bounds: the first reconstruction has false cases somewhere, so
  // the encoder must iterate (and then store more vertices exactly) before it writes.
  int64_t most = 0;
  for (float noise : {0.5f, 2.0f})
    for (double rel : {1e-1, 3e-2})
      for (double p : {1e-2, 3e-2}) {
        const ScalarField f = smooth_field(60, 50, 1, noise, 9);
        const Outcome r = round_trip(f, ScalarMode::contour_tree, rel, p);
        EXPECT_TRUE(r.cmp.tree.same());
        EXPECT_LE(r.stats.iterations, 41);
        // Every saddle of the tree is stored exactly (its own value, or on the lattice's grid);
        // the extrema are coded outward where a code fits (test_scalar_lattice.cpp).
        CtOptions co;
        co.persistence = p;
        auto tree = contour_tree(f, co);
        ASSERT_TRUE(tree.ok());
        int64_t saddles = 0;
        for (const CtNode& n : tree->nodes)
          saddles += n.type != CtNodeType::minimum && n.type != CtNodeType::maximum && n.type != CtNodeType::isolated;
        EXPECT_EQ(int64_t(tree->nodes.size()), r.cmp.tree.nodes_original);
        EXPECT_GE(r.stats.exact_vertices, saddles);
        most = std::max(most, r.stats.iterations);
      }
  EXPECT_GE(most, 1);
}

TEST(TopoSZ, StoresOnlyAFewValuesExactlyAndReportsEveryRound) {
  // Issue 19: only the nodes and the vertices of differing regions are constrained, so a
  // smooth field keeps nearly every value quantized; the hook sees every round, the last
  // one with nothing left to fix.
  const ScalarField f = smooth_field(64, 48, 16, 0.01f, 13);
  std::vector<ScalarProgress> seen;
  ScalarOptions o;
  o.bound = 1e-2;
  o.persistence = 1e-2;
  o.progress = [&](const ScalarProgress& p) { seen.push_back(p); };
  ScalarCompressStats st;
  auto s = compress_scalar(f, o, &st);
  ASSERT_TRUE(s.ok());
  auto back = decompress_scalar(s.value());
  ASSERT_TRUE(back.ok());
  auto c = compare_scalar(f, back.value(), BoundMode::rel, 1e-2);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->same());
  EXPECT_LT(double(st.exact_vertices), 0.01 * double(f.values.size()));
  ASSERT_FALSE(seen.empty());
  // The race's first round is a round 0, of whichever step quantized smallest.
  EXPECT_GE(seen.front().step, 0);
  EXPECT_LT(seen.front().step, 20);
  EXPECT_EQ(seen.front().round, 0);
  EXPECT_EQ(seen.back().nodes_to_fix, 0);
}

TEST(TopoSZ, RejectsBadInput) {
  ScalarField inf = grid(3, 3, 1);  // infinity at a valid vertex; NaN would be a missing vertex
  inf.values[4] = std::numeric_limits<float>::infinity();
  auto r = compress_scalar(inf, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_FALSE(compress_scalar(grid(0, 3, 1), {}).ok());
  ScalarOptions o;
  o.bound = -1;
  EXPECT_FALSE(compress_scalar(grid(3, 3, 1), o).ok());
  o = {};
  o.persistence = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(compress_scalar(grid(3, 3, 1), o).ok());
}

// Coder::smallest (the default) writes the stream of each coder and keeps the smallest, ANS on
// ties: byte for byte the stream of the coder it names, on fields and modes where ANS and
// another coder win. The contour-tree race runs with ANS, so the explicit coders' streams can
// hold different quantizations; smallest is then compared with the ANS race's quantization,
// which the explicit ANS stream is, and is never larger than it (three coders:
// test_scalar_context.cpp).
TEST(TopoSZ, SmallestCoderKeepsTheSmallerStream) {
  struct Case {
    const char* name;
    ScalarField f;
    ScalarMode mode;
  };
  const Case cases[] = {{"smooth none", smooth_field(64, 48, 1, 0.05f, 1), ScalarMode::none},
                        {"smooth 3D none", smooth_field(24, 20, 12, 0.2f, 2), ScalarMode::none},
                        {"random none", random_field(40, 30, 1, 3), ScalarMode::none},
                        {"plateaus none", plateau_field(48, 40), ScalarMode::none},
                        {"tiny none", smooth_field(3, 2, 1, 0.5f, 4), ScalarMode::none},
                        {"smooth contour tree", smooth_field(64, 48, 1, 0.05f, 1), ScalarMode::contour_tree},
                        {"plateaus contour tree", plateau_field(48, 40), ScalarMode::contour_tree},
                        {"random contour tree", random_field(40, 30, 1, 3), ScalarMode::contour_tree},
                        {"zeros contour tree", grid(9, 7, 1), ScalarMode::contour_tree}};
  int chose[2] = {0, 0};
  // With one predictor each: the default predictor (best) may keep another predictor with
  // another coder (test_scalar_interp.cpp: BestKeepsTheSmallerModeNoneStream).
  for (ScalarPredictor predictor : {ScalarPredictor::lorenzo, ScalarPredictor::interpolation})
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + std::string(predictor == ScalarPredictor::lorenzo ? " lorenzo" : " interpolation"));
    ScalarOptions o;
    EXPECT_EQ(o.coder, Coder::smallest);
    o.predictor = predictor;
    o.mode = c.mode;
    ScalarCompressStats st;
    auto s = compress_scalar(c.f, o, &st);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    o.coder = Coder::ans;
    ScalarCompressStats sa;
    auto a = compress_scalar(c.f, o, &sa);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(sa.coder, Coder::ans);
    ASSERT_GE(s->size(), 11u);
    EXPECT_EQ(testing::header_of(s.value()).coder, uint8_t(st.coder));  // the header's coder byte
    EXPECT_LE(s->size(), a->size());
    if (st.coder == Coder::ans) {
      EXPECT_EQ(s.value(), a.value());
    } else {
      EXPECT_LT(s->size(), a->size());
      if (c.mode == ScalarMode::none) {  // one quantization: the explicit coder's stream itself
        o.coder = st.coder;
        auto h = compress_scalar(c.f, o);
        ASSERT_TRUE(h.ok());
        EXPECT_EQ(s.value(), h.value());
      }
    }
    ++chose[st.coder != Coder::ans];
    auto back = decompress_scalar(s.value());
    auto back_a = decompress_scalar(a.value());
    ASSERT_TRUE(back.ok() && back_a.ok());
    if (c.mode == ScalarMode::none) {
      // One quantization: whichever coder it holds, the values the ANS stream decodes to.
      EXPECT_EQ(back->values, back_a->values);
    } else {
      // The contour-tree race's finalists are each written with every coder asked for, so
      // the smallest stream may hold another candidate than the ANS one: both keep the tree
      // and the bound.
      for (const ScalarField* d : {&back.value(), &back_a.value()}) {
        auto cmp = compare_scalar(c.f, *d, BoundMode::rel, o.persistence);
        ASSERT_TRUE(cmp.ok());
        EXPECT_TRUE(cmp->same());
        EXPECT_LE(cmp->max_abs_error, st.eb_abs);
      }
    }
  }
  EXPECT_GT(chose[0], 0) << "no case kept ANS";
  EXPECT_GT(chose[1], 0) << "no case kept another coder";
}

// The vector APIs refuse Coder::smallest (their GPU path writes the CPU's bytes with the one
// coder asked for), naming the coders they take.
TEST(TopoSZ, SmallestCoderIsForScalarFieldsOnly) {
  VectorField2D v;
  v.nx = 8;
  v.ny = 8;
  v.u.assign(64, 1.0f);
  v.v.assign(64, -1.0f);
  Options o;
  o.coder = Coder::smallest;
  auto r = compress(v, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("scalar fields only"), std::string::npos) << r.status().message();
  VectorField3D w;
  w.nx = w.ny = w.nz = 4;
  w.u.assign(64, 1.0f);
  w.v.assign(64, -1.0f);
  w.w.assign(64, 0.5f);
  auto r3 = compress(w, o);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.status().code(), Code::invalid_argument);
  EXPECT_STREQ(coder_name(Coder::smallest), "smallest");
}

TEST(TopoSZ, VectorAndScalarStreamsAreNotConfused) {
  auto scalar = compress_scalar(smooth_field(16, 12, 1, 0.1f, 10), {});
  ASSERT_TRUE(scalar.ok());
  auto as_vector = decompress(scalar.value());
  ASSERT_FALSE(as_vector.ok());
  EXPECT_NE(as_vector.status().message().find("vector"), std::string::npos) << as_vector.status().message();
  VectorField2D v;
  v.nx = 8;
  v.ny = 8;
  v.u.assign(64, 1.0f);
  v.v.assign(64, -1.0f);
  auto vec = compress(v, {});
  ASSERT_TRUE(vec.ok());
  auto as_scalar = decompress_scalar(vec.value());
  ASSERT_FALSE(as_scalar.ok());
  EXPECT_EQ(as_scalar.status().code(), Code::invalid_argument);
  EXPECT_NE(as_scalar.status().message().find("vector field"), std::string::npos);
}

TEST(TopoSZ, CorruptStreamsAreRejectedWithoutCrashing) {
  auto s = compress_scalar(smooth_field(12, 10, 3, 0.2f, 11), {});
  ASSERT_TRUE(s.ok());
  const std::vector<uint8_t> good = s.value();
  for (size_t cut = 0; cut < good.size(); cut += 7) {
    auto r = decompress_scalar(std::span<const uint8_t>(good.data(), cut));
    EXPECT_FALSE(r.ok());
  }
  std::mt19937 rng(12);
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= uint8_t(1 + rng() % 255);
    auto r = decompress_scalar(bad);
    EXPECT_FALSE(r.ok()) << "byte " << i;  // every byte is under a checksum
  }
}

// ---- The scalar fields of ../shared/data -------------------------------------------------
bool load(const std::string& name, int64_t nx, int64_t ny, int64_t nz, ScalarField& f) {
  std::ifstream in(std::string(FACTZ_SHARED_DATA_DIR) + "/" + name, std::ios::binary);
  if (!in) return false;
  f = grid(nx, ny, nz);
  in.read(reinterpret_cast<char*>(f.values.data()), std::streamsize(f.values.size() * 4));
  return bool(in);
}

void expect_shared_field(const std::string& name, int64_t nx, int64_t ny, int64_t nz) {
  ScalarField f;
  if (!load(name, nx, ny, nz, f)) GTEST_SKIP() << name << " not found in " << FACTZ_SHARED_DATA_DIR;
  SCOPED_TRACE(name);
  expect_all_settings(f);
}

TEST(TopoSZShared, PopOceanTemp) { expect_shared_field("pop_ocean_temp_320x384.f32", 320, 384, 1); }
TEST(TopoSZShared, EraintZ500) { expect_shared_field("eraint_z500_480x241.f32", 480, 241, 1); }
TEST(TopoSZShared, HeatedCylinder) { expect_shared_field("ttk_heatedcyl_sim10_t4.5_128x256.f32", 128, 256, 1); }
TEST(TopoSZShared, IsabelVelocityMagnitude3D) {
  expect_shared_field("ttk_isabel02_velmag_125x125x25.f32", 125, 125, 25);
}
TEST(TopoSZShared, ViscousFingers3D) { expect_shared_field("ttk_viscousfingers_t050_64x64x64.f32", 64, 64, 64); }

}  // namespace
}  // namespace factz
