// Missing data (issue 17): masks, NaN and fill values in every mode and coder. Each round
// trip checks, independently of the compressor: missing vertices decode to their exact
// bits; valid vertices meet the bound computed exactly in double; the critical points of
// the valid mesh (the regular triangulation minus every triangle touching a missing
// vertex), extracted by the independent reference, are those of the reconstruction; the
// decompressed mask is the original mask.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/exact_reference.hpp"
#include "support/fields.hpp"
#include "support/resealed.hpp"
#include "synth.hpp"

namespace factz {
namespace {

namespace r = testref;

using Mask = std::vector<uint8_t>;

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

/// The reference's critical points on the valid mesh: triangles touching a missing vertex
/// are dropped.
std::vector<std::pair<int64_t, uint8_t>> valid_mesh_points(const VectorField2D& f, const Mask& m) {
  std::vector<float> u = f.u, v = f.v;
  for (size_t k = 0; k < u.size(); ++k)
    if (!m.empty() && m[k]) u[k] = v[k] = 0.0f;  // never read for a kept triangle
  const auto sig = r::ref_signatures(f.nx, f.ny, u.data(), v.data());
  std::vector<std::pair<int64_t, uint8_t>> out;
  const int64_t cw = f.nx - 1;
  for (int64_t t = 0; t < int64_t(sig.size()); ++t) {
    if (sig[size_t(t)] == 0) continue;
    const int64_t cell = t / 2, i = cell / cw, j = cell % cw;
    const int64_t a = i * f.nx + j, b = a + 1, c = a + f.nx, d = c + 1;
    const int64_t tri[3] = {a, (t & 1) ? b : c, d};
    bool off = false;
    for (int64_t k : tri) off = off || (!m.empty() && m[size_t(k)]);
    if (!off) out.emplace_back(t, sig[size_t(t)]);
  }
  return out;
}

/// The missing vertices the test expects: the field's mask, NaN, and declared fills.
Mask expected_mask(const VectorField2D& f) {
  Mask m(size_t(f.size()), 0);
  bool any = false;
  for (size_t k = 0; k < m.size(); ++k) {
    m[k] = (!f.mask.empty() && f.mask[k]) || std::isnan(f.u[k]) || std::isnan(f.v[k]);
    any = any || m[k];
  }
  if (!any) m.clear();
  return m;
}

struct Checked {
  std::vector<uint8_t> stream;
  VectorField2D decoded;
  CompressStats stats;
};

Checked check_masked_round_trip(const VectorField2D& f, const Options& o, const std::string& what) {
  Checked out;
  auto s = compress(f, o, &out.stats);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return out;
  out.stream = s.value();
  auto d = decompress(out.stream);
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return out;
  out.decoded = d.value();
  const Mask m = expected_mask(f);
  EXPECT_EQ(out.decoded.mask, m) << what << ": decompressed mask";
  int64_t masked = 0;
  for (uint8_t x : m) masked += x;
  EXPECT_EQ(out.stats.masked_vertices, masked) << what;
  // G0 on valid vertices, exactly in double; missing vertices bit for bit.
  const double eb = out.stats.eb_abs;
  int64_t misses = 0, wrong_bits = 0;
  for (int64_t k = 0; k < f.size(); ++k) {
    if (!m.empty() && m[size_t(k)]) {
      wrong_bits += bits(out.decoded.u[size_t(k)]) != bits(f.u[size_t(k)]) ||
                    bits(out.decoded.v[size_t(k)]) != bits(f.v[size_t(k)]);
      continue;
    }
    misses += !(std::fabs(double(out.decoded.u[size_t(k)]) - double(f.u[size_t(k)])) <= eb) ||
              !(std::fabs(double(out.decoded.v[size_t(k)]) - double(f.v[size_t(k)])) <= eb);
  }
  EXPECT_EQ(misses, 0) << what << ": pointwise bound " << eb;
  EXPECT_EQ(wrong_bits, 0) << what << ": missing vertices must keep their bits";
  // G1 on the valid mesh against the independent reference.
  if (o.mode != Mode::none) {
    EXPECT_EQ(valid_mesh_points(f, m), valid_mesh_points(out.decoded, m)) << what << ": critical points";
  }
  auto c = compare(f, out.decoded);
  EXPECT_TRUE(c.ok()) << what;
  if (c.ok()) {
    EXPECT_EQ(c->mask_mismatch, 0) << what;
    EXPECT_EQ(c->masked_vertices, masked) << what;
    if (o.mode != Mode::none) { EXPECT_EQ(c->violations(), 0) << what; }
  }
  return out;
}

Options options(Mode m, Coder c, bool zstd, BoundMode bm = BoundMode::rel, double bound = 1e-2) {
  Options o;
  o.mode = m;
  o.coder = c;
  o.zstd = zstd;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

/// Mask shapes: checkerboard, one-pixel channels, a ring touching every border, single
/// vertices, corners of tiles (32) and of anchor lattices (16), a land blob, all but one.
std::vector<std::pair<std::string, Mask>> mask_shapes(int64_t nx, int64_t ny) {
  std::vector<std::pair<std::string, Mask>> out;
  const size_t n = size_t(nx * ny);
  auto make = [&](auto pred) {
    Mask m(n, 0);
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) m[size_t(y * nx + x)] = pred(x, y) ? 1 : 0;
    return m;
  };
  out.emplace_back("single", make([](int64_t x, int64_t y) { return x == 5 && y == 7; }));
  out.emplace_back("checkerboard", make([](int64_t x, int64_t y) { return (x + y) % 2 == 0; }));
  out.emplace_back("channels", make([](int64_t x, int64_t y) { return x % 9 != 4 && y > 3 && y < 20; }));
  out.emplace_back("border_ring", make([&](int64_t x, int64_t y) {
                     return x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
                   }));
  out.emplace_back("tile_corners", make([](int64_t x, int64_t y) {
                     return (x % 32 == 31 || x % 32 == 0) && (y % 32 == 31 || y % 32 == 0);
                   }));
  out.emplace_back("anchors", make([](int64_t x, int64_t y) { return x % 16 == 0 && y % 16 == 0; }));
  out.emplace_back("land", make([&](int64_t x, int64_t y) {
                     const double dx = double(x) - 0.3 * double(nx), dy = double(y) - 0.6 * double(ny);
                     return dx * dx + dy * dy < 0.08 * double(nx * ny) || x > nx - 6;
                   }));
  out.emplace_back("all_but_one", make([](int64_t x, int64_t y) { return !(x == 3 && y == 2); }));
  out.emplace_back("all", make([](int64_t, int64_t) { return true; }));
  return out;
}

TEST(Masks, EveryModeCoderAndShapeKeepsTheGuaranteesOnTheValidMesh) {
  const int64_t nx = 70, ny = 45;
  const VectorField2D base = synth::turbulence(nx, ny, 3);
  int streams = 0;
  for (const auto& [name, mask] : mask_shapes(nx, ny)) {
    for (int how = 0; how < 3; ++how) {  // the caller's mask, NaN, a fill value marked by mark_missing
      VectorField2D f = base;
      for (size_t k = 0; k < mask.size(); ++k) {
        if (!mask[k]) continue;
        if (how == 1) f.u[k] = std::numeric_limits<float>::quiet_NaN();
        if (how == 2) f.u[k] = f.v[k] = 1e20f;
      }
      if (how == 0) f.mask = mask;
      if (how == 2) {
        FillValues fill;
        fill.u = fill.v = 1e20f;
        mark_missing(f, fill);
      }
      for (Mode m : {Mode::none, Mode::block, Mode::speculative})
        for (Coder c : {Coder::huffman, Coder::ans})
          for (bool z : {false, true}) {
            const std::string what = name + " how=" + std::to_string(how) + " " + mode_name(m) + " " +
                                     coder_name(c) + (z ? " zstd" : "");
            check_masked_round_trip(f, options(m, c, z), what);
            ++streams;
          }
    }
  }
  EXPECT_EQ(streams, 9 * 3 * 12);
}

TEST(Masks, AMissingVertexWhosePredictionIsClampedEscapesInTheTiledModes) {
  // Format version 5 stores no code for a missing vertex: the decoder takes code 0 unless
  // the outlier list holds the vertex. Around (1, 1) the integers are +M, +M and -M
  // (M = kMaxQuant: values far beyond the quantizer's range, stored exactly), so its
  // prediction 3M is clamped to M and its code, -2M, must travel as an outlier; with code
  // 0 the decoder would see an integer out of range and call the stream corrupt.
  const float far = 1e30f, nan = std::nanf("");
  VectorField2D f;
  f.nx = 4;
  f.ny = 3;
  f.u = {-far, far, 0.5f, 1.0f, far, nan, -far, 2.0f, 0.0f, nan, far, -1.0f};
  f.v = {-far, far, 0.0f, 1.0f, far, nan, far, 3.0f, 1.0f, nan, -far, 4.0f};
  int checked = 0;
  for (Mode mode : {Mode::none, Mode::block})
    for (Coder coder : {Coder::huffman, Coder::ans})
      for (bool zstd : {false, true}) {
        const std::string what = std::string(mode_name(mode)) + (coder == Coder::ans ? " ans" : " huffman") +
                                 (zstd ? " zstd" : "");
        const Checked c = check_masked_round_trip(f, options(mode, coder, zstd, BoundMode::abs, 0.5), what);
        ASSERT_FALSE(c.stream.empty()) << what;
        EXPECT_EQ(testing::layout_version(c.stream), 5) << what;
        ++checked;
      }
  EXPECT_EQ(checked, 8);
}

TEST(Masks, MissingVerticesBesideTheEdgesOfFloatStillDecode) {
  // A missing vertex's integer continues its neighbours' (the Lorenzo prediction); beside
  // values near +-FLT_MAX with a large step that continuation would reconstruct to +-inf,
  // which the decoder refuses at a vertex not stored exactly. Every stream must decode:
  // every mode, both coders, with and without zstd, REL and huge ABS bounds, masks next to,
  // between and around the extreme values.
  const float big = std::numeric_limits<float>::max();
  struct Case {
    std::string name;
    int64_t nx, ny;
    std::vector<float> u, v;
  };
  std::vector<Case> cases = {
      {"issue 2x2", 2, 2, {-big, std::nanf(""), 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f, 0.0f}},
      {"positive 2x2", 2, 2, {big, big, std::nanf(""), 1.0f}, {1.0f, 0.0f, 0.0f, big}},
      {"ramp 3x3", 3, 3, {-big, -big / 2, std::nanf(""), 0.0f, 1e38f, std::nanf(""), 3e38f, big, std::nanf("")},
       {big, std::nanf(""), -1e-38f, 0.0f, -0.0f, 1.0f, 2e38f, -3e38f, 0.0f}},
  };
  // A larger field: a ramp up to near FLT_MAX with missing stripes and a missing corner.
  Case ramp{"ramp 40x35", 40, 35, {}, {}};
  for (int64_t y = 0; y < ramp.ny; ++y)
    for (int64_t x = 0; x < ramp.nx; ++x) {
      const bool miss = x % 7 == 3 || (x > 30 && y > 28) || (x + y) % 11 == 0;
      ramp.u.push_back(miss ? std::nanf("") : big * (float(x) / 40.0f) * (y % 2 ? 1.0f : -1.0f));
      ramp.v.push_back(miss ? 1e20f : big * (float(y) / 35.0f) - big / 2);
    }
  cases.push_back(ramp);
  int checked = 0;
  for (const Case& c : cases)
    for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
      for (Coder coder : {Coder::huffman, Coder::ans})
        for (bool zstd : {false, true})
          for (auto [bm, bound] : std::vector<std::pair<BoundMode, double>>{
                   {BoundMode::rel, 3e-2}, {BoundMode::rel, 0.5}, {BoundMode::abs, 1e37}, {BoundMode::abs, 1e-3}}) {
            VectorField2D f;
            f.nx = c.nx;
            f.ny = c.ny;
            f.u = c.u;
            f.v = c.v;
            mark_missing(f, FillValues{1e20f, 1e20f});
            check_masked_round_trip(f, options(mode, coder, zstd, bm, bound),
                                    c.name + " " + mode_name(mode) + " " + coder_name(coder) +
                                        (zstd ? " zstd" : "") + " bound " + std::to_string(bound));
            ++checked;
          }
  EXPECT_EQ(checked, 4 * 3 * 2 * 2 * 4);
}

TEST(Masks, NaNPayloadsAndMixedFillsComeBackBitForBit) {
  const int64_t nx = 40, ny = 33;
  VectorField2D f = synth::vortices(nx, ny, 5, 6);
  std::mt19937 rng(11);
  // Many different NaN payloads and signs, and u-only NaN with a valid-looking v.
  for (int i = 0; i < 300; ++i) {
    const size_t k = rng() % size_t(f.size());
    const uint32_t payload = 0x7fc00000u | (rng() & 0x3fffffu) | ((rng() & 1u) << 31);
    f.u[k] = std::bit_cast<float>(payload);
    if (i % 3 == 0) f.v[k] = -0.0f;
  }
  for (Mode m : {Mode::none, Mode::block, Mode::speculative})
    check_masked_round_trip(f, options(m, Coder::ans, true), std::string("payloads ") + mode_name(m));
  // One shared pair: the stream stores it once.
  VectorField2D g = synth::vortices(nx, ny, 6, 6);
  g.mask.assign(size_t(g.size()), 0);
  for (int64_t k = 0; k < g.size(); k += 3) {
    g.mask[size_t(k)] = 1;
    g.u[size_t(k)] = g.v[size_t(k)] = -9999.0f;
  }
  check_masked_round_trip(g, options(Mode::speculative, Coder::ans, false), "one pair");
}

TEST(Masks, RelativeBoundIsRelativeToTheValidRange) {
  VectorField2D f = synth::turbulence(50, 40, 9);
  double lo = 1e300, hi = -1e300;
  for (size_t k = 0; k < f.u.size(); ++k) {
    lo = std::min({lo, double(f.u[k]), double(f.v[k])});
    hi = std::max({hi, double(f.u[k]), double(f.v[k])});
  }
  for (size_t k = 0; k < f.u.size(); k += 7) f.u[k] = f.v[k] = 1e20f;  // the ocean file
  FillValues fill;
  fill.u = fill.v = 1e20f;
  // The valid range is that of the field before the fill values went in (a few of its
  // extremes may sit under a fill value: recompute it over the valid vertices).
  ASSERT_GT(mark_missing(f, fill), 0);
  lo = 1e300, hi = -1e300;
  for (size_t k = 0; k < f.u.size(); ++k) {
    if (f.mask[k]) continue;
    lo = std::min({lo, double(f.u[k]), double(f.v[k])});
    hi = std::max({hi, double(f.u[k]), double(f.v[k])});
  }
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    const auto rt = check_masked_round_trip(f, options(m, Coder::ans, true), mode_name(m));
    EXPECT_LE(rt.stats.eb_abs, 1e-2 * (hi - lo)) << mode_name(m);
    EXPECT_GT(rt.stats.eb_abs, 0.99e-2 * (hi - lo)) << mode_name(m);
  }
}

TEST(Masks, TheMaskedMeshHasTheReferencesCriticalPoints) {
  for (const auto& [name, mask] : mask_shapes(64, 48)) {
    VectorField2D f = synth::vortices(64, 48, 2, 14);
    f.mask = mask;
    auto cps = critical_points(f);
    ASSERT_TRUE(cps.ok()) << name;
    std::vector<std::pair<int64_t, uint8_t>> got;
    for (const auto& cp : cps.value()) got.emplace_back(cp.triangle, uint8_t(1 + int(cp.type)));
    EXPECT_EQ(got, valid_mesh_points(f, mask)) << name;
  }
}

TEST(Masks, StreamsWithoutMissingVerticesKeepVersion2AndMaskedOnesAreVersion3Or5) {
  for (Mode mode : {Mode::none, Mode::block, Mode::speculative}) {
    SCOPED_TRACE(mode_name(mode));
    VectorField2D f = synth::turbulence(40, 30, 1);
    Options o;
    o.mode = mode;
    auto plain = compress(f, o);
    ASSERT_TRUE(plain.ok());
    // The version's low byte (docs/format.md, "Header"); mode speculative is always 9 (the
    // meta section names the cubic predictor, the codes are segmented), whatever its sections.
    EXPECT_EQ(testing::layout_version(plain.value()), mode == Mode::speculative ? 9 : 2);
    EXPECT_EQ(plain.value()[5], 0);
    f.u[17] = std::nanf("");
    auto masked = compress(f, o);
    ASSERT_TRUE(masked.ok());
    // 5: the tiled modes' codes leave the missing vertices out
    EXPECT_EQ(testing::layout_version(masked.value()), mode == Mode::speculative ? 9 : 5);
  }
}

TEST(Masks, InfinityIsAnErrorUnlessItIsTheDeclaredFill) {
  VectorField2D f = synth::turbulence(30, 20, 4);
  f.v[33] = std::numeric_limits<float>::infinity();
  auto s = compress(f, Options{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::invalid_argument);
  EXPECT_NE(s.status().message().find("infinite"), std::string::npos) << s.status().message();
  FillValues fill;
  fill.v = std::numeric_limits<float>::infinity();
  EXPECT_EQ(mark_missing(f, fill), 1);
  check_masked_round_trip(f, options(Mode::block, Coder::ans, true), "inf fill");
}

TEST(Masks, AFieldWithOneValidVertexOrNoneWorks) {
  for (int valid : {0, 1}) {
    VectorField2D f = synth::noise(9, 7, 3);
    f.mask.assign(size_t(f.size()), 1);
    if (valid) f.mask[20] = 0;
    for (Mode m : {Mode::none, Mode::block, Mode::speculative})
      check_masked_round_trip(f, options(m, Coder::ans, true), std::string(mode_name(m)) + " valid=" +
                                                                   std::to_string(valid));
  }
}

TEST(Masks, MaskingTheLandIsNoLargerThanLandAsZeros) {
  // Land as exact zeros (what the shared ocean fields hold) against the same land masked.
  std::vector<testing::NamedField> fields;
  VectorField2D synthetic_land = synth::turbulence(160, 120, 5);
  synth::add_zero_region(synthetic_land, 6, 0.35);
  fields.push_back({"synthetic_land_160x120", synthetic_land});
  // A no-slip coast, as in the POP currents (docs/benchmarks.md): every ocean vertex next to
  // land is an exact zero vector too, so the land's zeros add no constraint and the masked
  // stream can only win by coding nothing for the land (format version 5).
  VectorField2D noslip = synthetic_land;
  const VectorField2D& land_of = synthetic_land;
  for (int64_t y = 0; y < noslip.ny; ++y)
    for (int64_t x = 0; x < noslip.nx; ++x) {
      bool coast = false;
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx) {
          const int64_t xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= noslip.nx || yy >= noslip.ny) continue;
          const size_t j = size_t(yy * noslip.nx + xx);
          coast = coast || (land_of.u[j] == 0.0f && land_of.v[j] == 0.0f);
        }
      if (coast) noslip.u[size_t(y * noslip.nx + x)] = noslip.v[size_t(y * noslip.nx + x)] = 0.0f;
    }
  fields.push_back({"noslip_land_160x120", noslip});
  for (auto& nf : testing::real_vector_fields())
    if (nf.name == "cmems_glob1deg_cur" || nf.name == "metno_arctic20_cur") fields.push_back(std::move(nf));
  for (const auto& nf : fields) {
    VectorField2D masked = nf.field;
    masked.mask.assign(size_t(masked.size()), 0);
    // The land: the zero vectors (the no-slip field's land is its parent's: its coast stays valid).
    const VectorField2D& land_source = nf.name == "noslip_land_160x120" ? synthetic_land : nf.field;
    int64_t land = 0, valid_zeros = 0;
    for (size_t k = 0; k < masked.u.size(); ++k) {
      if (land_source.u[k] == 0.0f && land_source.v[k] == 0.0f) masked.mask[k] = 1, ++land;
      else valid_zeros += masked.u[k] == 0.0f && masked.v[k] == 0.0f;
    }
    ASSERT_GT(land, 0) << nf.name;
    if (nf.name == "noslip_land_160x120") { ASSERT_GT(valid_zeros, 100) << "the coast ring is valid zeros"; }
    for (Mode m : {Mode::none, Mode::block, Mode::speculative})
      for (double rel : {1e-1, 1e-2, 1e-3, 1e-4}) {
        const std::string what = nf.name + " " + mode_name(m) + " REL " + std::to_string(rel);
        const Options o = options(m, Coder::ans, true, BoundMode::rel, rel);
        auto zeros = compress(nf.field, o);
        ASSERT_TRUE(zeros.ok()) << what;
        const auto rt = check_masked_round_trip(masked, o, what);
        // Mode none keeps no critical point, so land as zeros costs it nothing near the coast
        // while the mask costs its bitmap (about 0.1 bit per vertex on the 1-degree ocean):
        // there the masked stream may be larger (docs/benchmarks.md records both).
        if (m != Mode::none) { EXPECT_LE(rt.stream.size(), zeros.value().size()) << what; }
      }
  }
}

TEST(Masks, MultiBlockFilesKeepMasksAcrossBlocks) {
  VectorField2D f = synth::turbulence(90, 70, 8);
  f.mask.assign(size_t(f.size()), 0);
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 40; x < 50; ++x) f.mask[size_t(y * f.nx + x)] = 1;  // across the block edge
  for (int64_t k = 0; k < f.size(); k += 97) f.u[size_t(k)] = std::nanf("");
  for (Mode m : {Mode::block, Mode::speculative}) {
    Options o = options(m, Coder::ans, true);
    auto file = compress_multiblock(f, o, 2, 2);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    auto d = decompress_multiblock(file.value());
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    const Mask m2 = expected_mask(f);
    int64_t wrong = 0;
    for (size_t k = 0; k < m2.size(); ++k)
      if (m2[k]) wrong += bits(d->u[k]) != bits(f.u[k]) || bits(d->v[k]) != bits(f.v[k]);
    EXPECT_EQ(wrong, 0) << mode_name(m);
    VectorField2D back = d.value();
    back.mask = m2;  // the explicit part of the mask is the caller's to restore
    EXPECT_EQ(valid_mesh_points(f, m2), valid_mesh_points(back, m2)) << mode_name(m);
  }
}

TEST(Masks, UndeclaredFillValuesAreSuspected) {
  VectorField2D f = synth::turbulence(40, 30, 2);
  EXPECT_FALSE(suspected_fill_value(f).has_value());
  for (int64_t k = 0; k < 50; ++k) f.u[size_t(k)] = 1e20f;
  auto s = suspected_fill_value(f);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->value, 1e20f);
  EXPECT_EQ(s->count, 50);
  FillValues fill;
  fill.u = 1e20f;
  mark_missing(f, fill);
  EXPECT_FALSE(suspected_fill_value(f).has_value());  // declared: nothing left to warn about
  VectorField2D g = synth::turbulence(40, 30, 2);
  g.v[3] = -9999.0f;
  ASSERT_TRUE(suspected_fill_value(g).has_value());
  EXPECT_EQ(suspected_fill_value(g)->value, -9999.0f);
}

TEST(Masks, DamagedMaskSectionsAreCorruptNotWrong) {
  VectorField2D f = synth::turbulence(40, 30, 6);
  for (int64_t k = 0; k < f.size(); k += 5) f.u[size_t(k)] = std::nanf("");
  auto s = compress(f, options(Mode::block, Coder::ans, false));
  ASSERT_TRUE(s.ok());
  // Flip every byte of the stream once: each damaged stream is refused or decodes to values
  // (never a crash); the checksums make nearly all of them refused.
  int refused = 0;
  for (size_t i = 0; i < s->size(); i += 3) {
    std::vector<uint8_t> bad = s.value();
    bad[i] ^= 0x5a;
    auto d = decompress(bad);
    refused += !d.ok();
  }
  EXPECT_GT(refused, 0);
}

// A masked stream has one code (tiled modes) or at most one bound id (speculative) per
// valid vertex: a header forged to declare a larger grid (checksums right, re-sealed by the
// container writer) is refused from the mask's recorded count and the codes' symbol count,
// before the decoder allocates planes or a bitmap for the declared grid (a 469-byte stream
// declaring 30000 x 30000 vertices took 20 s and 7.9 GB before it was refused as truncated).
TEST(Masks, AForgedGridIsRefusedFromTheMasksCountBeforeAnythingIsAllocated) {
  VectorField2D f = synth::turbulence(40, 30, 6);
  for (int64_t k = 0; k < f.size(); k += 5) f.u[size_t(k)] = std::nanf("");
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    auto s = compress(f, options(m, Coder::ans, true));
    ASSERT_TRUE(s.ok());
    for (uint64_t scale : {uint64_t(2), uint64_t(1000)}) {
      const auto forged = testing::resealed(s.value(), [&](detail::Header& h, auto&) { h.ny *= scale; });
      auto d = decompress(forged);
      ASSERT_FALSE(d.ok()) << mode_name(m) << " x" << scale;
      EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
      EXPECT_NE(d.status().message().find("with its mask's missing vertices needs"), std::string::npos)
          << mode_name(m) << " x" << scale << ": " << d.status().to_string();
    }
  }
}

// Format version 7 on (9 today): a speculative stream keeps the mask and the missing vertices' bits in one
// section (mask_and_values; one table entry less), the tiled modes in two. Damaged contents
// behind valid checksums are refused as corrupt.
TEST(Masks, SpeculativeStreamsHoldMaskAndValuesInOneSection) {
  VectorField2D f = synth::turbulence(40, 30, 6);
  for (int64_t k = 0; k < f.size(); k += 7) f.v[size_t(k)] = std::nanf("");
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    auto s = compress(f, options(m, Coder::ans, true));
    ASSERT_TRUE(s.ok());
    auto pc = detail::parse_container(s.value());
    ASSERT_TRUE(pc.ok());
    const bool one = m == Mode::speculative;
    EXPECT_EQ(detail::has_section(pc.value(), detail::kSectionMaskAndValues), one) << mode_name(m);
    EXPECT_EQ(detail::has_section(pc.value(), detail::kSectionMask), !one) << mode_name(m);
    EXPECT_EQ(detail::has_section(pc.value(), detail::kSectionMaskedValues), !one) << mode_name(m);
    check_masked_round_trip(f, options(m, Coder::ans, true), mode_name(m));
  }
  auto s = compress(f, options(Mode::speculative, Coder::ans, false));
  ASSERT_TRUE(s.ok());
  const detail::ParsedContainer pc = detail::parse_container(s.value()).value();
  std::vector<detail::Section> sections;
  for (const auto& e : pc.entries) {
    auto raw = detail::read_section(s.value(), pc, e.id, &detail::zstd_stage_decompressor());
    ASSERT_TRUE(raw.ok()) << raw.status().message();
    sections.push_back({e.id, std::move(raw.value())});
  }
  auto rewritten = [&](auto change) {
    std::vector<detail::Section> copy = sections;
    change(copy);
    auto w = detail::write_container(pc.header, std::move(copy), nullptr);
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() ? w.value() : std::vector<uint8_t>{};
  };
  auto both = [](std::vector<detail::Section>& secs) -> std::vector<uint8_t>& {
    for (auto& x : secs)
      if (x.id == detail::kSectionMaskAndValues) return x.raw;
    throw std::logic_error("no mask_and_values section");
  };
  const std::vector<std::vector<uint8_t>> damaged = {
      rewritten([&](auto& secs) {  // the mask's size (a one-byte varint here) past the end
        auto& b = both(secs);
        ASSERT_LT(b[0], 0x80);
        b[0] = 0xff;
        b.insert(b.begin() + 1, {0xff, 0x0f});
      }),
      rewritten([&](auto& secs) { both(secs).pop_back(); }),          // the values cut short
      rewritten([&](auto& secs) { both(secs).push_back(0); }),        // a byte after the values
      rewritten([&](auto& secs) { both(secs).resize(1); }),           // the mask's size alone
      rewritten([&](auto& secs) { secs.push_back({detail::kSectionMask, both(secs)}); }),  // beside mask
  };
  for (size_t i = 0; i < damaged.size(); ++i) {
    auto d = decompress(damaged[i]);
    ASSERT_FALSE(d.ok()) << i;
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << i << ": " << d.status().message();
  }
}

}  // namespace
}  // namespace factz
