// FaCTz-B (mode block) and mode none: guarantees G0 and G1 on many fields and bounds,
// determinism across threads, degenerate inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "factz/factz.hpp"
#include "support/fields.hpp"
#include "support/roundtrip.hpp"
#include "synth.hpp"

namespace factz {
namespace {

using testing::check_round_trip;
using testing::options;

const double kRelBounds[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};

TEST(BlockMode, KeepsEverySignatureOnSyntheticFieldsAtEveryRelBound) {
  for (const auto& nf : testing::synthetic_fields())
    for (double rel : kRelBounds) {
      auto rt = check_round_trip(nf.field, options(Mode::block, BoundMode::rel, rel),
                                 nf.name + " REL " + std::to_string(rel));
      EXPECT_GT(rt.stream.size(), 0u);
    }
}

TEST(BlockMode, KeepsEverySignatureAtAbsBounds) {
  const auto f = synth::turbulence(96, 96, 21);
  for (double abs : {1.0, 0.1, 0.01, 1e-4, 0.0})
    check_round_trip(f, options(Mode::block, BoundMode::abs, abs), "ABS " + std::to_string(abs));
}

TEST(BlockMode, KeepsEverySignatureOnRealFields) {
  const auto fields = testing::real_vector_fields();
  if (fields.empty()) GTEST_SKIP() << "no real vector fields in tests/data or ../shared/data";
  for (const auto& nf : fields) {
    for (double rel : kRelBounds) {
      auto rt = check_round_trip(nf.field, options(Mode::block, BoundMode::rel, rel),
                                 nf.name + " REL " + std::to_string(rel));
      if (rel == 1e-2) {
        EXPECT_GT(rt.cmp.cp_original, 0) << nf.name << ": real fields have critical points";
      }
    }
    check_round_trip(nf.field, options(Mode::block, BoundMode::abs, 0.05), nf.name + " ABS 0.05");
  }
}

TEST(BlockMode, HandlesDegenerateFields) {
  for (const auto& nf : testing::degenerate_fields())
    for (double rel : {1e-1, 1e-3, 0.0})
      check_round_trip(nf.field, options(Mode::block, BoundMode::rel, rel), nf.name + " REL " + std::to_string(rel));
}

TEST(BlockMode, StoresZeroFieldsCompactly) {
  VectorField2D f;
  f.nx = 256;
  f.ny = 256;
  f.u.assign(size_t(f.size()), 0.0f);
  f.v.assign(size_t(f.size()), 0.0f);
  auto rt = check_round_trip(f, options(Mode::block, BoundMode::abs, 0.1), "zeros");
  EXPECT_GT(double(f.size()) * 8 / double(rt.stream.size()), 50.0) << "zero vectors need no exact storage";
}

TEST(BlockMode, OutputIsIdenticalForSerialAndAnyThreadCount) {
  auto f = synth::turbulence(150, 110, 31);
  synth::add_zero_region(f, 32, 0.2);
  testing::expect_thread_independent(f, options(Mode::block, BoundMode::rel, 1e-2));
}

TEST(BlockMode, ZstdStageIsLosslessAndOptional) {
  const auto f = synth::vortices(120, 100, 41, 8);
  Options o = options(Mode::block, BoundMode::rel, 1e-3);
  auto with = check_round_trip(f, o, "zstd");
  o.zstd = false;
  auto without = check_round_trip(f, o, "no zstd");
  EXPECT_EQ(with.decoded.u, without.decoded.u);
  EXPECT_EQ(with.decoded.v, without.decoded.v);
  EXPECT_LE(with.stream.size(), without.stream.size());
}

TEST(BlockMode, RejectsInfAtValidVerticesWithTheirPositionAndMasksNaN) {
  // Issue 17: NaN marks a vertex missing (tests/test_masks.cpp); infinity at a valid vertex
  // stays an error, with the count and the first position.
  auto f = synth::turbulence(20, 10, 51);
  f.u[23] = NAN;
  f.v[40] = INFINITY;
  f.u[45] = -INFINITY;
  auto s = compress(f, options(Mode::block, BoundMode::rel, 1e-2));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::invalid_argument);
  EXPECT_NE(s.status().message().find("2 infinite"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("x=0 y=2"), std::string::npos) << s.status().message();
  f.v[40] = f.u[45] = 0.5f;
  auto ok = compress(f, options(Mode::block, BoundMode::rel, 1e-2));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  auto d = decompress(ok.value());
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(std::isnan(d->u[23]));
  EXPECT_EQ(d->mask.size(), f.u.size());
}

TEST(BlockMode, RejectsBadOptions) {
  const auto f = synth::turbulence(8, 8, 1);
  EXPECT_EQ(compress(f, options(Mode::block, BoundMode::rel, -1)).status().code(), Code::invalid_argument);
  EXPECT_EQ(compress(f, options(Mode::block, BoundMode::rel, NAN)).status().code(), Code::invalid_argument);
  VectorField2D bad = f;
  bad.v.pop_back();
  EXPECT_EQ(compress(bad, options(Mode::block, BoundMode::rel, 1e-2)).status().code(), Code::invalid_argument);
}

TEST(NoneMode, MeetsTheBoundButLosesCriticalPointsOnTurbulence) {
  const auto f = synth::turbulence(256, 256, 61);
  auto rt = check_round_trip(f, options(Mode::none, BoundMode::rel, 1e-1), "none REL 0.1", false);
  EXPECT_GT(rt.cmp.violations(), 0) << "the topology checks must be able to fail";
  auto blk = check_round_trip(f, options(Mode::block, BoundMode::rel, 1e-1), "block REL 0.1");
  EXPECT_EQ(blk.cmp.violations(), 0);
}

TEST(NoneMode, MeetsThePointwiseBoundEverywhere) {
  for (const auto& nf : testing::synthetic_fields())
    for (double rel : {1e-1, 1e-4})
      check_round_trip(nf.field, options(Mode::none, BoundMode::rel, rel), nf.name, false);
  for (const auto& nf : testing::degenerate_fields())
    check_round_trip(nf.field, options(Mode::none, BoundMode::rel, 1e-2), nf.name, false);
}

}  // namespace
}  // namespace factz
