// float64 compression of 2D vector fields (issue 18): every mode, coder and zstd setting on
// double fields, masks (NaN, fill values, caller masks) with their 64 bits, degenerate grids,
// bound 0, the edges of double, byte-identical streams for any thread count, damaged
// streams, the dtype rules between the float32 and float64 entry points, and traps that
// fail when any value, bound or decision of the float64 path goes through float: values
// that differ only below float precision, critical points that exist only in double, bounds
// far below float's resolution of the values, and magnitudes outside float's range.
//
// G0 is checked with the exact float64 predicate (kernels/exact64.hpp within_bound64, which
// has its own independent reference tests), G1 with compare() on VectorField2D64 (the exact
// float64 extractor).
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "format/container.hpp"
#include "kernels/exact64.hpp"
#include "support/compact_places.hpp"
#include "support/precision.hpp"
#include "synth.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

using testing::to_double;
using testing::to_float;

VectorField2D64 filled(int64_t nx, int64_t ny, double u, double v) {
  return VectorField2D64{nx, ny, std::vector<double>(size_t(nx * ny), u), std::vector<double>(size_t(nx * ny), v)};
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

/// A smooth double field with many critical points (the turbulence computed in double).
VectorField2D64 turbulence(int64_t nx, int64_t ny, uint64_t seed = 7) { return synth::turbulence64(nx, ny, seed); }

/// Uniform noise p, q in [-1, 1) (many critical points), mapped to (p + eps q, p - eps q): u
/// and v agree to float precision, so rounded to float every vector lies on the diagonal and
/// the critical points are gone; in double they are those of (p, q).
VectorField2D64 below_float_field(int64_t nx, int64_t ny, uint64_t seed, double eps = 0x1p-40) {
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

Options options(Mode m, Coder c, bool zstd, BoundMode bm, double bound) {
  Options o;
  o.mode = m;
  o.coder = c;
  o.zstd = zstd;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

std::string name_of(const Options& o) {
  return std::string(mode_name(o.mode)) + "/" + coder_name(o.coder) + (o.zstd ? "/zstd" : "") +
         (o.bound_mode == BoundMode::abs ? " ABS " : " REL ") + std::to_string(o.bound);
}

struct RoundTrip64 {
  Bytes stream;
  VectorField2D64 decoded;
  CompressStats stats;
  Comparison cmp;
};

/// Compress, decompress64, then the guarantees: G0 exactly in double at every valid vertex
/// (bit for bit at bound 0, a zero's sign aside), the missing vertices' 64 bits and the
/// mask, and (topology) no lost, spurious or changed critical point of the float64 mesh.
RoundTrip64 round_trip(const VectorField2D64& f, const Options& o, const std::string& what, bool topology) {
  RoundTrip64 rt;
  auto s = compress(f, o, &rt.stats);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return rt;
  rt.stream = std::move(s.value());
  EXPECT_EQ(rt.stream[4] | (rt.stream[5] << 8), testing::expected_compact_version(rt.stream, detail::kFormatVersionCompact))
      << what;
  const detail::Header h = testing::header_of(rt.stream);
  EXPECT_EQ(h.dtype, detail::kDtypeFloat64) << what;
  // Layout version 6, or 9 for a speculative stream: its meta section names the cubic
  // predictor and its codes are segmented.
  EXPECT_EQ(h.version, o.mode == Mode::speculative ? detail::kFormatVersionSegmentedCodes : detail::kFormatVersionFloat64)
      << what;
  auto d = decompress64(rt.stream);
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
    bool miss = !detail::within_bound64(rt.decoded.u[i], f.u[i], eb) ||
                !detail::within_bound64(rt.decoded.v[i], f.v[i], eb);
    if (eb == 0.0) miss = miss || rt.decoded.u[i] != f.u[i] || rt.decoded.v[i] != f.v[i];
    if (miss && first < 0) first = k;
    misses += miss;
  }
  EXPECT_EQ(misses, 0) << what << ": bound " << eb << " broken, first at " << first;
  EXPECT_EQ(masked_wrong, 0) << what << ": missing vertices must decode bit for bit";
  std::vector<uint8_t> want_mask = missing;
  EXPECT_EQ(rt.decoded.mask, want_mask) << what;
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
const Coder kCoders[] = {Coder::huffman, Coder::ans};

TEST(Float64Codec, EveryModeCoderAndZstdSettingKeepsTheGuarantees) {
  const VectorField2D64 f = turbulence(131, 97);
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 20u);
  for (Mode m : kModes)
    for (Coder c : kCoders)
      for (bool z : {false, true})
          for (double rel : {1e-2, 1e-4, 1e-7}) {
          const Options o = options(m, c, z, BoundMode::rel, rel);
          const RoundTrip64 rt = round_trip(f, o, name_of(o), m != Mode::none);
          EXPECT_GT(rt.stats.eb_abs, 0.0);
          if (rel >= 1e-4) {
            EXPECT_LT(rt.stream.size(), size_t(f.size()) * 16) << name_of(o);
          }
          const auto info = stream_info(rt.stream);
          ASSERT_TRUE(info.ok());
          EXPECT_EQ(info->dtype, DType::float64);
          EXPECT_EQ(info->nx, f.nx);
          EXPECT_EQ(info->ny, f.ny);
        }
}

TEST(Float64Codec, AbsoluteBoundsAndAnchorStridesAndExactEdges) {
  const VectorField2D64 f = turbulence(70, 45, 3);
  for (Mode m : kModes) {
    for (double eb : {0.5, 1e-3, 1e-9}) {
      Options o = options(m, Coder::ans, true, BoundMode::abs, eb);
      const RoundTrip64 rt = round_trip(f, o, name_of(o), m != Mode::none);
      EXPECT_EQ(rt.stats.eb_abs, eb) << "the double bound is used as given";
    }
    Options o = options(m, Coder::huffman, false, BoundMode::rel, 1e-3);
    o.exact_edges = 15;
    if (m == Mode::speculative) o.anchor_stride = 4;
    const RoundTrip64 rt = round_trip(f, o, name_of(o) + " exact edges", m != Mode::none);
    for (int64_t x = 0; x < f.nx; ++x)
      for (int64_t y : {int64_t(0), f.ny - 1}) {
        const size_t k = size_t(y * f.nx + x);
        EXPECT_TRUE(same_bits(rt.decoded.u[k], f.u[k]) && same_bits(rt.decoded.v[k], f.v[k])) << x << "," << y;
      }
  }
}

TEST(Float64Codec, MaskedVerticesKeepTheirSixtyFourBits) {
  VectorField2D64 f = turbulence(67, 53, 11);
  const double payload_nan = std::bit_cast<double>(uint64_t(0x7ff8dead12345678));
  const double fill = 9.969209968386869e36;  // netCDF's default double fill value
  f.mask.assign(size_t(f.size()), 0);
  for (int64_t k = 0; k < f.size(); ++k) {
    const int64_t x = k % f.nx, y = k / f.nx;
    if ((x - 20) * (x - 20) + (y - 25) * (y - 25) < 80) {  // a land blob of NaN with a payload
      f.u[size_t(k)] = payload_nan;
      f.v[size_t(k)] = -payload_nan;
    } else if (x > 55 && y < 12) {  // a fill-valued corner
      f.u[size_t(k)] = fill;
      f.v[size_t(k)] = fill;
    } else if (k % 97 == 5) {  // caller-masked vertices holding arbitrary doubles
      f.mask[size_t(k)] = 1;
      f.u[size_t(k)] = 1.0 + 0x1p-50 * double(k);
      f.v[size_t(k)] = -std::ldexp(1.0, -1060);  // a subnormal
    }
  }
  EXPECT_GT(mark_missing(f, FillValues64{fill, fill}), 100);
  for (Mode m : kModes)
    for (Coder c : kCoders)
      for (bool z : {false, true}) {
        const Options o = options(m, c, z, BoundMode::rel, 1e-3);
        const RoundTrip64 rt = round_trip(f, o, name_of(o) + " masked", m != Mode::none);
        EXPECT_GT(rt.stats.masked_vertices, 100);
      }
  // Every vertex missing: the stream holds the bits alone.
  VectorField2D64 none = filled(5, 4, std::nan(""), 1.0);
  for (Mode m : kModes) round_trip(none, options(m, Coder::ans, true, BoundMode::rel, 1e-2), "all missing", true);
}

TEST(Float64Codec, DegenerateFieldsAndTinyGrids) {
  std::vector<std::pair<std::string, VectorField2D64>> fields = {
      {"zeros", filled(40, 33, 0.0, 0.0)},
      {"constant", filled(33, 40, 1.0 + 0x1p-45, -3.25)},
      {"1x1", filled(1, 1, 0.1, -0.2)},
      {"2x2", VectorField2D64{2, 2, {1.0, -1.0, -1.0, 1.0}, {1.0, 1.0, -1.0, -1.0}}},
      {"1x9", turbulence(1, 9, 5)},
      {"9x1", turbulence(9, 1, 6)},
      {"3x2", below_float_field(3, 2, 8)},
      {"33x2", below_float_field(33, 2, 9)},
  };
  for (const auto& [name, f] : fields)
    for (Mode m : kModes)
      for (Coder c : kCoders)
        for (double rel : {0.0, 1e-2}) round_trip(f, options(m, c, true, BoundMode::rel, rel), name, m != Mode::none);
}

TEST(Float64Codec, BoundZeroIsLosslessToTheBit) {
  VectorField2D64 f = below_float_field(45, 38, 21);
  f.u[3] = -0.0;
  f.v[3] = 0.5;
  for (Mode m : kModes)
    for (Coder c : kCoders) {
      const Options o = options(m, c, true, BoundMode::abs, 0.0);
      const RoundTrip64 rt = round_trip(f, o, name_of(o), true);
      if (rt.decoded.size() != f.size()) continue;
      int64_t differ = 0;
      for (int64_t k = 0; k < f.size(); ++k) {
        const size_t i = size_t(k);
        // A -0.0 may come back as +0.0 (the same value), as for float32 streams.
        differ += !(same_bits(rt.decoded.u[i], f.u[i]) || (f.u[i] == 0.0 && rt.decoded.u[i] == 0.0));
        differ += !(same_bits(rt.decoded.v[i], f.v[i]) || (f.v[i] == 0.0 && rt.decoded.v[i] == 0.0));
      }
      EXPECT_EQ(differ, 0) << name_of(o);
    }
}

/// A field of double's extreme values, seeded: +-DBL_MAX, huge beside tiny, subnormals,
/// signed zeros, any finite bit pattern, plateaus.
VectorField2D64 extreme_field(int64_t nx, int64_t ny, uint64_t seed) {
  std::mt19937_64 rng(seed);
  VectorField2D64 f = filled(nx, ny, 0.0, 0.0);
  double last = DBL_MAX;
  auto value = [&]() {
    const double sign = rng() % 2 ? -1.0 : 1.0;
    switch (rng() % 10) {
      case 0: return sign * DBL_MAX;
      case 1: return sign * 1e300;
      case 2: return sign * 1e-300;
      case 3: return std::bit_cast<double>((rng() & 0xfffffffffffffull) | 1 | (sign < 0 ? 1ull << 63 : 0));  // subnormal
      case 4: return sign * 0.0;
      case 5: {
        double x;
        do x = std::bit_cast<double>(uint64_t(rng())); while (!std::isfinite(x));
        return x;
      }
      case 6: return last;
      case 7: return sign * std::ldexp(1.0, int(rng() % 2098) - 1074);
      default: return sign * double(rng() >> 11) * 0x1p-53;
    }
  };
  for (int64_t k = 0; k < f.size(); ++k) {
    f.u[size_t(k)] = last = value();
    f.v[size_t(k)] = last = value();
  }
  return f;
}

TEST(Float64Codec, EdgesOfDoubleDecodeAndMeetTheBound) {
  std::vector<std::pair<std::string, VectorField2D64>> fields = {
      {"+-DBL_MAX", VectorField2D64{3, 2, {DBL_MAX, -DBL_MAX, DBL_MAX, -DBL_MAX, DBL_MAX, 0.0},
                                    {-DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -0.0, DBL_MAX}}},
      {"subnormals", VectorField2D64{2, 2, {4.9e-324, -4.9e-324, 1e-310, -0.0}, {-1e-315, 2e-320, 0.0, 1e-308}}},
      {"random 1", extreme_field(37, 35, 1)},
      {"random 2", extreme_field(70, 3, 2)},
      {"random 3", extreme_field(5, 41, 3)},
  };
  for (const auto& [name, f] : fields)
    for (Mode m : kModes)
      for (Coder c : kCoders)
        for (double eb : {0.0, 4.9e-324, 1e-300, 1.0, 1e300, DBL_MAX}) {
          const Options o = options(m, c, c == Coder::ans, BoundMode::abs, eb);
          round_trip(f, o, name + " " + name_of(o), m != Mode::none);
        }
  // REL over a range that overflows double: the bound clamps, every value still decodes.
  for (Mode m : kModes) round_trip(fields[0].second, options(m, Coder::ans, true, BoundMode::rel, 0.5), "rel huge", m != Mode::none);
}

// ---- Traps: each fails when a float64 value, bound or decision goes through float ---------

TEST(Float64Codec, CriticalPointsThatExistOnlyInDoubleAreKept) {
  const VectorField2D64 f = below_float_field(64, 48, 31);
  const auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 300u);
  // Rounded to float the field has almost none: a float decision anywhere would lose them.
  const auto as_float = critical_points(to_float(f));
  ASSERT_TRUE(as_float.ok());
  ASSERT_LT(as_float->size(), cps->size() / 10);
  for (Mode m : {Mode::block, Mode::speculative})
    for (Coder c : kCoders)
      for (double eb : {1e-3, 1e-9, 1e-13}) {
        const Options o = options(m, c, true, BoundMode::abs, eb);
        const RoundTrip64 rt = round_trip(f, o, name_of(o), true);
        EXPECT_EQ(rt.cmp.cp_decompressed, int64_t(cps->size())) << name_of(o);
      }
}

// Block mode stores the vertices it cannot quantize (a critical point's triangle, a tile's
// exact choice) as their float32 rounding where that meets eb, and the exact check stores a
// vertex with all 64 bits only where the rounding changes a triangle's float64 signature.
TEST(Float64Codec, BlockModeRoundsItsExactVerticesOnlyWhereTheExactCheckAllows) {
  const VectorField2D64 f = turbulence(256, 256, 5);
  const Options o = options(Mode::block, Coder::ans, true, BoundMode::rel, 1e-2);
  const RoundTrip64 rt = round_trip(f, o, "turbulence " + name_of(o), true);
  ASSERT_EQ(rt.decoded.size(), f.size());
  // Listed short: the 24-bit rounding, or the value on the grid of the vertex's own bound
  // (kernels/exact_rounding.hpp list_exact), both at most 24 significant bits; a quantized
  // value has its low 29 bits all zero by chance only.
  int64_t rounded = 0;
  for (size_t i = 0; i < f.u.size(); ++i)
    for (auto [d, x] : {std::pair{rt.decoded.u[i], f.u[i]}, std::pair{rt.decoded.v[i], f.v[i]}})
      rounded += !same_bits(d, x) && (std::bit_cast<uint64_t>(d) & ((uint64_t(1) << 29) - 1)) == 0;
  EXPECT_GT(rounded, 1000) << "critical points' triangles should be stored rounded to 24 bits";
  EXPECT_LT(rt.stats.exact_vertices, rounded / 10) << "few vertices need all 64 bits";
  // The bound, not the storage type, decides the size: within 10 % of the float32 rounding's.
  const auto f32 = compress(to_float(f), options(Mode::block, Coder::ans, true, BoundMode::abs, rt.stats.eb_abs));
  ASSERT_TRUE(f32.ok());
  EXPECT_LE(double(rt.stream.size()), 1.10 * double(f32->size()));

  // Rounded to float this field loses its critical points: every rounding of a vertex of a
  // critical point's triangle breaks the check, which then keeps all 64 bits.
  const VectorField2D64 g = below_float_field(64, 48, 31);
  const auto cps = critical_points(g);
  ASSERT_TRUE(cps.ok());
  const RoundTrip64 rg = round_trip(g, options(Mode::block, Coder::ans, true, BoundMode::abs, 1e-3), "below float", true);
  EXPECT_GT(rg.stats.repaired_vertices, 0);
  EXPECT_EQ(rg.cmp.cp_decompressed, int64_t(cps->size()));
  int64_t full = 0;
  for (size_t i = 0; i < g.u.size(); ++i) full += same_bits(rg.decoded.u[i], g.u[i]) && same_bits(rg.decoded.v[i], g.v[i]);
  EXPECT_GE(full, rg.stats.repaired_vertices);
}

TEST(Float64Codec, BoundsFarBelowFloatResolutionAreMet) {
  // Values 1 + offsets of 1e-12: as floats every value is 1 (or its neighbour), so a value
  // that went through float would miss a bound of 1e-10 by 1e-8.
  VectorField2D64 f = turbulence(50, 41, 13);
  for (double& x : f.u) x = 1.0 + 1e-12 * x;
  for (double& x : f.v) x = 1.0 - 1e-12 * x;
  for (Mode m : kModes)
    for (double eb : {1e-10, 1e-13}) {
      const Options o = options(m, Coder::ans, true, BoundMode::abs, eb);
      const RoundTrip64 rt = round_trip(f, o, name_of(o), m != Mode::none);
      if (rt.decoded.size() != f.size()) continue;
      // The reconstruction is not the float rounding of the values. (Block mode and mode
      // none cannot quantize these values, |q| would pass 2^30, and list them on the grid of
      // their own bound or rounded to 24 bits where that meets the bound: at 1e-10 both give
      // 1 for 1 +- 1e-12 x, a valid reconstruction; at 1e-13 neither is short enough, and a
      // float shortcut would show here.)
      if (m != Mode::speculative && eb == 1e-10) continue;
      int64_t float_valued = 0;
      for (double x : rt.decoded.u) float_valued += double(float(x)) == x;
      EXPECT_LT(float_valued, f.size() / 2) << name_of(o);
    }
  // Values about 0.5 with smooth detail of 1e-5 and a bound of 1e-9 (float's spacing there
  // is 6e-8): quantized, not stored exactly, in every mode, with steps and bound ids
  // computed in double.
  VectorField2D64 g = turbulence(64, 64, 17);
  for (double& x : g.u) x = 0.5 + 1e-5 * x;
  for (double& x : g.v) x = 0.5 - 1e-5 * x;
  for (Mode m : kModes) {
    const Options o = options(m, Coder::ans, true, BoundMode::abs, 1e-9);
    const RoundTrip64 rt = round_trip(g, o, name_of(o), m != Mode::none);
    EXPECT_LT(rt.stats.exact_vertices, g.size() / 4) << name_of(o) << ": the values must be quantized";
    EXPECT_LT(rt.stream.size(), size_t(g.size()) * 16 * 3 / 4) << name_of(o);
  }
}

TEST(Float64Codec, MagnitudesOutsideFloatRangeAreCompressedAndKeepTheirCriticalPoints) {
  // 2^-664 (about 1e-200) and 2^664 (about 1e200) are 0 and inf as floats, and so are the
  // bounds. Scaling by a power of two is exact, and every decision is scale-free, so the
  // scaled field makes the unscaled one's decisions (the same exact vertices) and decodes to
  // its values times the same power of two.
  const VectorField2D64 base = turbulence(48, 40, 19);
  const auto cps = critical_points(base);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 5u);
  for (int e : {-664, 664}) {
    VectorField2D64 f = base;
    for (double& x : f.u) x = std::ldexp(x, e);
    for (double& x : f.v) x = std::ldexp(x, e);
    for (Mode m : kModes) {
      const Options o = options(m, Coder::ans, true, BoundMode::rel, 1e-3);
      const std::string what = name_of(o) + " scale 2^" + std::to_string(e);
      const RoundTrip64 ref = round_trip(base, o, what + " (unscaled)", m != Mode::none);
      const RoundTrip64 rt = round_trip(f, o, what, m != Mode::none);
      EXPECT_EQ(rt.stats.eb_abs, std::ldexp(ref.stats.eb_abs, e)) << what;
      EXPECT_EQ(rt.stats.exact_vertices, ref.stats.exact_vertices) << what;
      // Only the exact values' exponent bytes differ (zstd packs them a little differently).
      EXPECT_NEAR(double(rt.stream.size()), double(ref.stream.size()), 0.01 * double(ref.stream.size())) << what;
      if (m != Mode::none) {
        EXPECT_EQ(rt.cmp.cp_decompressed, int64_t(cps->size())) << what;
      }
      if (rt.decoded.size() != f.size() || ref.decoded.size() != f.size()) continue;
      int64_t differ = 0;
      for (size_t k = 0; k < size_t(f.size()); ++k)
        differ += !same_bits(rt.decoded.u[k], std::ldexp(ref.decoded.u[k], e)) ||
                  !same_bits(rt.decoded.v[k], std::ldexp(ref.decoded.v[k], e));
      EXPECT_EQ(differ, 0) << what;
    }
  }
}

TEST(Float64Codec, FloatValuedFieldDecodesLikeItsFloat32Stream) {
  // A field whose doubles are floats, at a bound that is a float: the float64 stream meets
  // the same guarantees and its size stays within 10 % of the float32 stream's in modes none
  // and speculative; block mode stores its exact vertices in 8 bytes instead of 4 and stays
  // within 15 % here (docs/benchmarks.md "float64": within 10 % on every real field).
  const VectorField2D f32 = synth::turbulence(120, 100, 23);
  const VectorField2D64 f64 = to_double(f32);
  for (Mode m : kModes)
    for (double rel : {1e-2, 1e-3, 1e-4}) {
      const Options o = options(m, Coder::ans, true, BoundMode::rel, rel);
      CompressStats s32;
      auto a = compress(f32, o, &s32);
      ASSERT_TRUE(a.ok());
      Options oa = o;
      oa.bound_mode = BoundMode::abs;
      oa.bound = s32.eb_abs;
      const RoundTrip64 rt = round_trip(f64, oa, name_of(oa), m != Mode::none);
      EXPECT_LE(double(rt.stream.size()), (m == Mode::block ? 1.15 : 1.10) * double(a->size())) << name_of(o);
    }
}

// ---- Determinism, dtype rules, damaged streams ----------------------------------------------

TEST(Float64Codec, BytesDoNotDependOnTheThreadCount) {
  VectorField2D64 f = turbulence(150, 90, 29);
  f.u[77] = std::nan("");
  for (Mode m : kModes)
    for (Coder c : kCoders) {
      Options o = options(m, c, true, BoundMode::rel, 1e-3);
      o.policy = Policy::serial;
      const auto ref = compress(f, o);
      ASSERT_TRUE(ref.ok());
      for (int t : {1, 2, 3}) {
        o.policy = Policy::omp;
        o.threads = t;
        const auto s = compress(f, o);
        ASSERT_TRUE(s.ok());
        EXPECT_EQ(s.value(), ref.value()) << name_of(o) << " threads " << t;
        DecompressOptions d;
        d.threads = t;
        const auto a = decompress64(ref.value(), d), b = decompress64(ref.value(), DecompressOptions{Policy::serial});
        ASSERT_TRUE(a.ok() && b.ok());
        for (int64_t k = 0; k < f.size(); ++k) ASSERT_TRUE(same_bits(a->u[size_t(k)], b->u[size_t(k)]));
      }
    }
}

TEST(Float64Codec, EachDecoderRefusesTheOtherDataType) {
  const VectorField2D64 f = turbulence(20, 20, 31);
  const auto s64 = compress(f, Options{});
  ASSERT_TRUE(s64.ok());
  const auto s32 = compress(to_float(f), Options{});
  ASSERT_TRUE(s32.ok());
  const auto a = decompress(s64.value());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::invalid_argument);
  EXPECT_NE(a.status().message().find("float64"), std::string::npos) << a.status().to_string();
  std::vector<float> u(400), v(400);
  EXPECT_EQ(decompress_into(s64.value(), u, v).code(), Code::invalid_argument);
  const auto b = decompress64(s32.value());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::invalid_argument);
  EXPECT_NE(b.status().message().find("float32"), std::string::npos) << b.status().to_string();
  std::vector<double> du(400), dv(400);
  std::vector<uint8_t> mask(400);
  EXPECT_EQ(decompress_into(s32.value(), du, dv).code(), Code::invalid_argument);
  EXPECT_TRUE(decompress_into(s64.value(), du, dv, mask).ok());
  EXPECT_EQ(decompress_into(s64.value(), std::span<double>(du).first(399), dv).code(), Code::invalid_argument);
  // Both report their grid and type.
  EXPECT_EQ(stream_info(s32.value())->dtype, DType::float32);
  EXPECT_EQ(stream_dims(s64.value())->first, 20);
  EXPECT_STREQ(dtype_name(DType::float64), "float64");
  // Policy::cuda takes float64 fields too: on a GPU the CPU's bytes and values, elsewhere
  // backend_unavailable; never a silent run on the CPU.
  Options cuda;
  cuda.policy = Policy::cuda;
  const auto c = compress(f, cuda);
  const auto g = decompress64(s64.value(), DecompressOptions{Policy::cuda});
  if (c.ok()) {
    EXPECT_EQ(c.value(), s64.value());
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    const auto cpu = decompress64(s64.value());
    ASSERT_TRUE(cpu.ok());
    EXPECT_EQ(g->u, cpu->u);
    EXPECT_EQ(g->v, cpu->v);
    // The GPU path checks the data type as the CPU's does.
    EXPECT_EQ(decompress64(s32.value(), DecompressOptions{Policy::cuda}).status().code(), Code::invalid_argument);
  } else {
    EXPECT_EQ(c.status().code(), Code::backend_unavailable) << c.status().to_string();
    EXPECT_EQ(g.status().code(), Code::backend_unavailable) << g.status().to_string();
  }
}

TEST(Float64Codec, DamagedStreamsAreRefusedCleanly) {
  VectorField2D64 f = turbulence(40, 36, 37);
  f.u[50] = std::nan("");
  for (Mode m : kModes) {
    const auto s = compress(f, options(m, Coder::ans, false, BoundMode::rel, 1e-3));
    ASSERT_TRUE(s.ok());
    const Bytes& good = s.value();
    for (size_t i = 0; i < good.size(); i += 1 + good.size() / 400) {
      Bytes b = good;
      b[i] ^= 0x5a;
      const auto d = decompress64(b);
      EXPECT_FALSE(d.ok()) << mode_name(m) << " byte " << i;
    }
    for (size_t n : {size_t(0), size_t(10), size_t(64), good.size() / 2, good.size() - 1}) {
      const auto d = decompress64(std::span<const uint8_t>(good).first(n));
      EXPECT_FALSE(d.ok()) << mode_name(m) << " truncated to " << n;
    }
    // A float32 build's version byte with the float64 data type (or the reverse) is corrupt.
    auto parsed = detail::parse_container(good);
    ASSERT_TRUE(parsed.ok());
    detail::Header h = parsed->header;
    h.version = 5;
    EXPECT_FALSE(detail::write_container(h, {}, nullptr).ok());
  }
}

TEST(Float64Codec, TheMetaSectionHoldsTheDoubleBound) {
  const VectorField2D64 f = turbulence(30, 30, 41);
  const double eb = 1.0 / 3.0 * 1e-7;  // not a float
  CompressStats st;
  const auto s = compress(f, options(Mode::block, Coder::ans, false, BoundMode::abs, eb), &st);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(st.eb_abs, eb);
  const auto parsed = detail::parse_container(s.value());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->header.dtype, detail::kDtypeFloat64);
  float rounded_down = float(eb);  // the header's informative f32 copy: the largest float not above eb
  if (double(rounded_down) > eb) rounded_down = std::nextafter(rounded_down, 0.0f);
  EXPECT_EQ(parsed->header.eb, rounded_down);
  const auto meta = detail::read_section(s.value(), parsed.value(), detail::kSectionMeta, nullptr);
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(meta->size(), 13u);
  double stored = 0;
  std::memcpy(&stored, meta->data() + 5, 8);
  EXPECT_EQ(stored, eb);
  EXPECT_NE(describe_container(parsed.value()).find("float64"), std::string::npos);
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

TEST(Float64Cli, NpyAndRawFloat64RoundTripThroughCompressDecompressVerifyCpInfo) {
  const auto dir = std::filesystem::temp_directory_path() / ("factz_f64_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  VectorField2D64 f = below_float_field(40, 30, 51);
  f.u[7] = -9999.0;  // a fill value
  const int64_t shape[2] = {f.ny, f.nx};
  for (const auto& [name, plane] : {std::pair{"u", &f.u}, std::pair{"v", &f.v}}) {
    const std::string header = npy_header("<f8", shape);
    Bytes npy(header.begin(), header.end()), raw;
    for (double x : *plane)
      for (int i = 0; i < 8; ++i) raw.push_back(uint8_t(std::bit_cast<uint64_t>(x) >> (8 * i)));
    npy.insert(npy.end(), raw.begin(), raw.end());
    ASSERT_TRUE(write_bytes((dir / (std::string(name) + ".npy")).string(), npy).ok());
    ASSERT_TRUE(write_bytes((dir / (std::string(name) + ".f64")).string(), raw).ok());
  }
  ASSERT_EQ(run_cli(dir, "compress -i u.npy -i v.npy -z a.fz -M ABS 1e-9 --fill -9999 --json"), 0) << slurp(dir / "out.txt");
  EXPECT_NE(slurp(dir / "out.txt").find("\"dtype\": \"float64\""), std::string::npos) << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "compress -2 40 30 --dtype f64 -i u.f64 -i v.f64 -z b.fz -M ABS 1e-9 --fill -9999"), 0);
  EXPECT_EQ(slurp(dir / "a.fz"), slurp(dir / "b.fz")) << ".npy and raw float64 give one stream";
  ASSERT_EQ(run_cli(dir, "info -z a.fz"), 0);
  EXPECT_NE(slurp(dir / "out.txt").find("float64"), std::string::npos);
  ASSERT_EQ(run_cli(dir, "info -z a.fz --json"), 0);
  EXPECT_NE(slurp(dir / "out.txt").find("\"raw_bytes\": 19200"), std::string::npos)
      << "40 x 30 x 2 doubles: " << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "decompress -z a.fz -o u2.npy -o v2.npy"), 0) << slurp(dir / "out.txt");
  ASSERT_EQ(run_cli(dir, "verify -i u.npy -i v.npy -d u2.npy -d v2.npy --fill -9999 --json"), 0) << slurp(dir / "out.txt");
  const std::string verify = slurp(dir / "out.txt");
  EXPECT_NE(verify.find("\"violations\": 0"), std::string::npos) << verify;
  EXPECT_NE(verify.find("\"lost\": 0"), std::string::npos) << verify;
  ASSERT_EQ(run_cli(dir, "decompress -z a.fz -o u3.f64 -o v3.f64"), 0);
  const auto back = decompress64(read_bytes((dir / "a.fz").string()).value());
  ASSERT_TRUE(back.ok());
  const std::string u3 = slurp(dir / "u3.f64");
  ASSERT_EQ(u3.size(), size_t(f.size()) * 8);
  EXPECT_EQ(std::memcmp(u3.data(), back->u.data(), u3.size()), 0) << "raw float64 out, little-endian";
  EXPECT_EQ(back->u[7], -9999.0) << "the fill value's bits";
  ASSERT_EQ(run_cli(dir, "cp -i u.npy -i v.npy --json"), 0);
  EXPECT_NE(slurp(dir / "out.txt").find("\"dtype\": \"float64\""), std::string::npos);
  // Multi-block files of float64 fields: the same doubles back, through the CLI too.
  ASSERT_EQ(run_cli(dir, "compress -2 40 30 --dtype f64 -i u.f64 -i v.f64 -z c.fz --blocks 2 2"), 0);
  ASSERT_EQ(run_cli(dir, "decompress -z c.fz -o u4.f64 -o v4.f64"), 0);
  EXPECT_EQ(slurp(dir / "u4.f64").size(), size_t(f.size()) * 8);
  ASSERT_EQ(run_cli(dir, "verify -2 40 30 --dtype f64 -i u.f64 -i v.f64 -d u4.f64 -d v4.f64 --json"), 0);
  EXPECT_NE(slurp(dir / "out.txt").find("\"lost\": 0"), std::string::npos) << slurp(dir / "out.txt");
  // Refusals with one line: a float64 .npy beside a raw float32 file.
  EXPECT_EQ(run_cli(dir, "compress -2 40 30 -i u.npy -i v.f64 -z c.fz"), 1);
  EXPECT_NE(slurp(dir / "out.txt").find("--dtype f64"), std::string::npos) << slurp(dir / "out.txt");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace factz
