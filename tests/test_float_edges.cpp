// Finite inputs at the edges of float (issue 17): values near +-FLT_MAX, fields mixing
// 1e38 and 1e-38, denormals, signed zeros, all-equal huge values, and seeded random
// mixtures of them, on grids from 1x1 to two tiles wide, in every mode and coder, with and
// without zstd, under huge, tiny and zero bounds (ABS and REL, including bounds clamped to
// 2^126). Every stream compress writes must decode, every value must meet the bound
// exactly (bit for bit apart from the sign of a zero when the bound is 0), modes block and
// speculative must keep every critical point, and the decoder must reconstruct exactly
// what the writer decided (kernels/tile_decode.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "kernels/tile_decode.hpp"
#include "backend/cpu/frontend.hpp"
#include "backend/cpu/speculative_mode.hpp"
#include "backend/cpu/tiled_quantizer.hpp"
#include "support/roundtrip.hpp"
#include "synth.hpp"

namespace factz {
namespace {

struct EdgeField {
  std::string name;
  VectorField2D f;
};

VectorField2D make(int64_t nx, int64_t ny, std::vector<float> u, std::vector<float> v) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  f.u = std::move(u);
  f.v = std::move(v);
  return f;
}

VectorField2D filled(int64_t nx, int64_t ny, float u, float v) {
  return make(nx, ny, std::vector<float>(size_t(nx * ny), u), std::vector<float>(size_t(nx * ny), v));
}

/// One value from the edges of float, or an ordinary one to mix with them.
float edge_value(std::mt19937_64& rng, float previous) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const float sign = rng() % 2 ? -1.0f : 1.0f;
  switch (rng() % 12) {
    case 0: return sign * FLT_MAX;
    case 1: return sign * std::nextafter(FLT_MAX, 0.0f);
    case 2: return sign * float(1e38 * (1.0 + 2.4 * unit(rng)));  // [1e38, 3.4e38)
    case 3: return sign * float(1e-38 * (1.0 + 9.0 * unit(rng)));
    case 4: return std::bit_cast<float>(uint32_t(1 + rng() % 0x7fffff) | (sign < 0 ? 0x80000000u : 0u));  // denormal
    case 5: return sign * 0.0f;
    case 6: return float(2.0 * unit(rng) - 1.0);
    case 7: return sign * std::ldexp(1.0f, int(rng() % 277) - 149);  // every power of two
    case 8: {  // any finite bit pattern
      float x;
      do x = std::bit_cast<float>(uint32_t(rng())); while (!std::isfinite(x));
      return x;
    }
    case 9: return sign * FLT_MIN * float(1 + rng() % 8);
    case 10: return previous;  // plateaus of equal (often huge) values
    default: return sign;
  }
}

VectorField2D random_edges(int64_t nx, int64_t ny, uint64_t seed) {
  std::mt19937_64 rng(seed);
  VectorField2D f = filled(nx, ny, 0.0f, 0.0f);
  float last = FLT_MAX;
  for (int64_t k = 0; k < f.size(); ++k) {
    f.u[size_t(k)] = last = edge_value(rng, last);
    f.v[size_t(k)] = last = edge_value(rng, last);
  }
  return f;
}

/// A smooth field with critical points, scaled towards an end of the float range.
VectorField2D scaled_vortices(int64_t nx, int64_t ny, uint64_t seed, double scale) {
  VectorField2D f = synth::vortices(nx, ny, seed, 4);
  for (auto* p : {&f.u, &f.v})
    for (float& x : *p) x = float(std::clamp(double(x) * scale, -double(FLT_MAX), double(FLT_MAX)));
  return f;
}

std::vector<EdgeField> edge_fields() {
  std::vector<EdgeField> out;
  const float M = FLT_MAX;
  out.push_back({"issue17_2x2", make(2, 2, {-M, 0, 0, 1}, {0, 0, 0, 0})});
  out.push_back({"flt_max_1x1", filled(1, 1, M, -M)});
  out.push_back({"all_equal_huge_4x3", filled(4, 3, M, -M)});
  out.push_back({"all_equal_1e38_3x3", filled(3, 3, 1e38f, 1e38f)});
  {
    VectorField2D f = filled(5, 4, 0, 0);
    for (int64_t k = 0; k < f.size(); ++k) {
      f.u[size_t(k)] = (k % 2 ? -M : M);
      f.v[size_t(k)] = (k % 3 ? M : -M);
    }
    out.push_back({"flt_max_signs_5x4", std::move(f)});
  }
  {
    VectorField2D f = filled(5, 5, 0, 0);
    f.u[12] = M;
    f.v[12] = -1e38f;
    f.u[3] = -M;
    out.push_back({"huge_beside_zeros_5x5", std::move(f)});
  }
  {
    VectorField2D f = filled(7, 6, 0, 0);
    for (int64_t k = 0; k < f.size(); ++k) {
      f.u[size_t(k)] = (k % 2 ? 1e38f : 1e-38f) * (k % 5 < 2 ? -1.0f : 1.0f);
      f.v[size_t(k)] = (k % 2 ? -1e-38f : 1e38f) * (k % 7 < 3 ? -1.0f : 1.0f);
    }
    out.push_back({"mixed_1e38_1e-38_7x6", std::move(f)});
  }
  {
    VectorField2D f = filled(9, 5, 0, 0);
    for (int64_t k = 0; k < f.size(); ++k) {
      f.u[size_t(k)] = std::bit_cast<float>(uint32_t(1 + 97 * k) | (k % 3 ? 0u : 0x80000000u));
      f.v[size_t(k)] = std::bit_cast<float>(uint32_t(0x7fffff - 131 * k) | (k % 4 ? 0x80000000u : 0u));
    }
    out.push_back({"denormals_9x5", std::move(f)});
  }
  {
    VectorField2D f = filled(6, 6, 0, 0);
    for (int64_t k = 0; k < f.size(); ++k) {
      f.u[size_t(k)] = k % 2 ? -0.0f : 0.0f;
      f.v[size_t(k)] = k % 3 ? 0.0f : -0.0f;
    }
    f.u[7] = std::bit_cast<float>(uint32_t(1));
    f.v[20] = -std::bit_cast<float>(uint32_t(1));
    out.push_back({"signed_zeros_6x6", std::move(f)});
  }
  out.push_back({"vortices_huge_33x17", scaled_vortices(33, 17, 5, 1e38)});
  out.push_back({"vortices_denormal_33x17", scaled_vortices(33, 17, 6, 1e-40)});
  const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {3, 3}, {5, 4}, {33, 17}, {34, 33}};
  uint64_t seed = 17;
  for (auto [nx, ny] : sizes)
    for (int r = 0; r < (nx * ny > 100 ? 3 : 5); ++r, ++seed)
      out.push_back({"random_" + std::to_string(nx) + "x" + std::to_string(ny) + "_seed" + std::to_string(seed),
                     random_edges(nx, ny, seed)});
  return out;
}

struct Bound {
  BoundMode mode;
  double value;
};

std::vector<Bound> edge_bounds() {
  return {
      {BoundMode::rel, 0.0},     {BoundMode::rel, 1e-30},    {BoundMode::rel, 1e-6},
      {BoundMode::rel, 3e-2},    {BoundMode::rel, 1.0},      {BoundMode::rel, 1e10},  // the last two clamp
      {BoundMode::abs, 0.0},     {BoundMode::abs, 1e-45},    {BoundMode::abs, 1e-38},
      {BoundMode::abs, 1e-3},    {BoundMode::abs, 1e30},     {BoundMode::abs, 0x1p126},
      {BoundMode::abs, 3e38},    {BoundMode::abs, 1e300},  // clamped to 2^126
  };
}

std::string describe(const EdgeField& ef, const Options& o) {
  return ef.name + " " + mode_name(o.mode) + "/" + coder_name(o.coder) + (o.zstd ? "+zstd" : "") +
         (o.bound_mode == BoundMode::abs ? " ABS " : " REL ") + std::to_string(o.bound) +
         (o.exact_edges ? " exact_edges " + std::to_string(o.exact_edges) : "");
}

/// |d - x| <= eb, decided exactly (independently of the library's within_bound): TwoSum
/// gives d - x = s + e exactly (doubles of floats never overflow), |e| is at most half the
/// gap between s and its neighbours, and eb is a double, so s decides unless |s| == eb.
bool within_exactly(float d, float x, double eb) {
  const double a = d, b = -double(x);
  const double s = a + b, bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  const double abs_s = std::fabs(s), e_away = s < 0 ? -e : e;
  return abs_s < eb || (abs_s == eb && e_away <= 0.0);
}

/// Counts the values of `decoded` that break the bound eb against `original`; at eb 0 a
/// value must also keep its bits (a zero may lose its sign: -0.0 and +0.0 are the same
/// value, and no exact predicate can tell them apart).
int64_t bound_misses(const std::vector<float>& original, const std::vector<float>& decoded, double eb) {
  int64_t misses = 0;
  for (size_t k = 0; k < original.size(); ++k) {
    const float x = original[k], d = decoded[k];
    bool ok = std::isfinite(d) && within_exactly(d, x, eb);
    if (eb == 0.0 && x != 0.0f) ok = ok && std::bit_cast<uint32_t>(d) == std::bit_cast<uint32_t>(x);
    misses += !ok;
  }
  return misses;
}

int64_t edge_bit_misses(const VectorField2D& f, const VectorField2D& d, uint8_t edges) {
  int64_t misses = 0;
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      if (!detail::on_exact_edge(x, y, f.nx, f.ny, edges)) continue;
      const size_t k = size_t(y * f.nx + x);
      misses += std::bit_cast<uint32_t>(d.u[k]) != std::bit_cast<uint32_t>(f.u[k]) ||
                std::bit_cast<uint32_t>(d.v[k]) != std::bit_cast<uint32_t>(f.v[k]);
    }
  return misses;
}

template <class A, class B>
int64_t bit_differences(const A& a, const B& b) {
  if (a.size() != b.size()) return -1;
  int64_t n = 0;
  for (size_t k = 0; k < a.size(); ++k) n += std::bit_cast<uint32_t>(a[k]) != std::bit_cast<uint32_t>(b[k]);
  return n;
}

/// The writer's own reconstruction (the frontends' recon planes, which the encoder
/// quantized against) must be the decoder's output bit for bit.
void expect_decoder_reconstructs_the_writer(const VectorField2D& f, const Options& o, float eb,
                                            const VectorField2D& decoded) {
  if (o.mode == Mode::speculative) {
    detail::SpeculativeResult r;
    detail::run_speculative(f, eb, o.anchor_stride, 1, true, r, o.exact_edges);
    EXPECT_EQ(bit_differences(r.recon_u, decoded.u), 0) << "u: writer and decoder disagree";
    EXPECT_EQ(bit_differences(r.recon_v, decoded.v), 0) << "v: writer and decoder disagree";
  } else {
    detail::FrontendResult fr;
    if (o.mode == Mode::none) detail::run_none(f, eb, 1, fr, o.exact_edges);
    else detail::run_block(f, eb, 1, fr, o.exact_edges);
    EXPECT_EQ(bit_differences(fr.u.recon, decoded.u), 0) << "u: writer and decoder disagree";
    EXPECT_EQ(bit_differences(fr.v.recon, decoded.v), 0) << "v: writer and decoder disagree";
  }
}

/// One round trip with every check; returns the number of streams decoded (0 or 1).
int check_edges_round_trip(const EdgeField& ef, const Options& o, bool check_writer) {
  SCOPED_TRACE(describe(ef, o));
  const bool keeps_topology = o.mode != Mode::none;
  auto rt = testing::check_round_trip(ef.f, o, describe(ef, o), keeps_topology);
  if (rt.decoded.size() != ef.f.size() || rt.decoded.u.size() != ef.f.u.size()) return 0;
  const double eb = rt.stats.eb_abs;
  EXPECT_TRUE(eb >= 0.0 && eb <= 0x1p126) << eb;
  EXPECT_EQ(bound_misses(ef.f.u, rt.decoded.u, eb), 0) << "u breaks the bound " << eb;
  EXPECT_EQ(bound_misses(ef.f.v, rt.decoded.v, eb), 0) << "v breaks the bound " << eb;
  if (o.exact_edges) { EXPECT_EQ(edge_bit_misses(ef.f, rt.decoded, o.exact_edges), 0); }
  if (check_writer) expect_decoder_reconstructs_the_writer(ef.f, o, float(eb), rt.decoded);
  // Decoding is deterministic: a second decoder run, serial, gives the same bits.
  auto again = decompress(rt.stream, DecompressOptions{Policy::serial, 1});
  EXPECT_TRUE(again.ok()) << again.status().to_string();
  if (again.ok()) {
    EXPECT_EQ(bit_differences(again->u, rt.decoded.u), 0);
    EXPECT_EQ(bit_differences(again->v, rt.decoded.v), 0);
  }
  return 1;
}

// ---- the property --------------------------------------------------------------------------

TEST(FloatEdges, EveryStreamDecodesWithinTheBoundAndKeepsTheCriticalPoints) {
  const auto fields = edge_fields();
  const auto bounds = edge_bounds();
  int streams = 0;
  for (const auto& ef : fields)
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
      for (size_t bi = 0; bi < bounds.size(); ++bi) {
        const Bound& b = bounds[bi];
        bool first = true;  // the writer's planes depend on neither coder nor zstd
        for (Coder coder : {Coder::huffman, Coder::ans})
          for (bool zstd : {false, true}) {
            Options o = testing::options(mode, b.mode, b.value);
            o.coder = coder;
            o.zstd = zstd;
            o.threads = 1;
            o.anchor_stride = int64_t(2) << (2 * (bi % 3));  // 2, 8, 32: every phase, some on small grids
            streams += check_edges_round_trip(ef, o, first);
            first = false;
            if (HasFailure()) return;  // one reproducer (in the trace) instead of thousands
          }
      }
  EXPECT_EQ(streams, int(fields.size() * bounds.size() * 3 * 4));
  RecordProperty("streams", streams);
}

TEST(FloatEdges, ExactEdgesStayBitExactAtTheEdgesOfFloat) {
  const auto fields = edge_fields();
  int streams = 0;
  for (const auto& ef : fields)
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
      for (const Bound& b : {Bound{BoundMode::rel, 3e-2}, Bound{BoundMode::abs, 1e30}, Bound{BoundMode::abs, 1e300},
                             Bound{BoundMode::abs, 1e-45}})
        for (uint8_t edges : {uint8_t(15), uint8_t(1 | 8)}) {
          Options o = testing::options(mode, b.mode, b.value);
          o.coder = edges == 15 ? Coder::ans : Coder::huffman;
          o.threads = 1;
          o.anchor_stride = 4;
          o.exact_edges = edges;
          streams += check_edges_round_trip(ef, o, true);
          if (HasFailure()) return;
        }
  EXPECT_EQ(streams, int(fields.size() * 3 * 4 * 2));
}

// Thread counts change neither the bytes nor the decoded values at the edges of float.
TEST(FloatEdges, StreamsDoNotDependOnTheThreadCount) {
  const auto fields = edge_fields();
  for (const auto& ef : fields) {
    if (ef.f.size() < 100) continue;
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
      SCOPED_TRACE(ef.name + " " + mode_name(mode));
      testing::expect_thread_independent(ef.f, testing::options(mode, BoundMode::rel, 3e-2));
    }
  }
}

// ---- the issue's example and the decoder's rule ----------------------------------------

std::vector<uint8_t> issue17_stream(Coder coder) {
  const float M = FLT_MAX;
  Options o = testing::options(Mode::none, BoundMode::rel, 3e-2);
  o.coder = coder;
  o.zstd = false;
  auto s = compress(make(2, 2, {-M, 0, 0, 1}, {0, 0, 0, 0}), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? s.value() : std::vector<uint8_t>{};
}

TEST(FloatEdges, Issue17ExampleDecodesItsExactlyStoredFltMax) {
  for (Coder coder : {Coder::huffman, Coder::ans}) {
    auto d = decompress(issue17_stream(coder));
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(d->u[0], -FLT_MAX);
    EXPECT_EQ(d->u[1], 0.0f);
    EXPECT_EQ(d->u[2], 0.0f);
    EXPECT_EQ(d->v, std::vector<float>(4, 0.0f));
  }
}

// The same stream with vertex 0 taken off u's exact list: its reconstruction float(q) * step
// overflows, and a vertex that is not stored exactly may not have one: corrupt_stream.
TEST(FloatEdges, AnOverflowingReconstructionOfAVertexNotStoredExactlyIsCorrupt) {
  const auto stream = issue17_stream(Coder::huffman);
  auto pc = detail::parse_container(stream);
  ASSERT_TRUE(pc.ok());
  std::vector<detail::Section> sections;
  for (const auto& e : pc->entries) {
    auto raw = detail::read_section(stream, pc.value(), e.id, nullptr);
    ASSERT_TRUE(raw.ok());
    sections.push_back({e.id, raw.value(), false});
  }
  for (auto& s : sections) {
    if (s.id != detail::kSectionExactIndex && s.id != detail::kSectionExactValues) continue;
    std::span<const uint8_t> u_list, v_list;
    ASSERT_TRUE(detail::split_lists(s.raw, u_list, v_list, "exact").ok());
    const std::vector<uint8_t> empty_u = s.id == detail::kSectionExactIndex ? std::vector<uint8_t>{0}  // count 0
                                                                             : std::vector<uint8_t>{};
    ASSERT_EQ(u_list.size(), s.id == detail::kSectionExactIndex ? 2u : 4u);  // one entry: vertex 0
    s.raw = detail::concat_lists(empty_u, std::vector<uint8_t>(v_list.begin(), v_list.end()));
  }
  auto damaged = detail::write_container(pc->header, sections, nullptr);
  ASSERT_TRUE(damaged.ok());
  auto d = decompress(damaged.value());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
}

TEST(FloatEdges, TileDecodeRuleTakesExactValuesAndRejectsWhatNoWriterWrites) {
  using detail::decode_tiled_vertex;
  using detail::kMaxQuant;
  const float huge_step = 0x1p127f;
  float x = 1.0f;
  // Not stored exactly: float(q) * step, finite, q within +-kMaxQuant.
  EXPECT_TRUE(decode_tiled_vertex(-3, 0.5f, false, 0.0f, x));
  EXPECT_EQ(x, -1.5f);
  EXPECT_TRUE(decode_tiled_vertex(1, huge_step, false, 0.0f, x));
  EXPECT_EQ(x, 0x1p127f);
  EXPECT_FALSE(decode_tiled_vertex(2, huge_step, false, 0.0f, x));   // 2^128 overflows
  EXPECT_FALSE(decode_tiled_vertex(-2, huge_step, false, 0.0f, x));
  EXPECT_FALSE(decode_tiled_vertex(kMaxQuant + 1, 1.0f, false, 0.0f, x));
  EXPECT_FALSE(decode_tiled_vertex(-int64_t(kMaxQuant) - 1, 1.0f, false, 0.0f, x));
  EXPECT_TRUE(decode_tiled_vertex(kMaxQuant, 1e-30f, false, 0.0f, x));
  // Stored exactly: the stored value, whatever float(q) * step would be.
  EXPECT_TRUE(decode_tiled_vertex(-2, huge_step, true, -FLT_MAX, x));
  EXPECT_EQ(x, -FLT_MAX);
  EXPECT_TRUE(decode_tiled_vertex(kMaxQuant, FLT_MAX, true, -0.0f, x));
  EXPECT_EQ(std::bit_cast<uint32_t>(x), 0x80000000u);
  // ... but its q is still a writer's q, and its value a finite one.
  EXPECT_FALSE(decode_tiled_vertex(kMaxQuant + 1, 1.0f, true, 1.0f, x));
  EXPECT_FALSE(decode_tiled_vertex(0, 1.0f, true, INFINITY, x));
  EXPECT_FALSE(decode_tiled_vertex(0, 1.0f, true, NAN, x));
  // The wrapping prefix sum read as signed: a huge unsigned sum is a negative q.
  EXPECT_FALSE(decode_tiled_vertex(int64_t(uint64_t(1) << 63), 1.0f, true, 1.0f, x));
}

}  // namespace
}  // namespace factz
