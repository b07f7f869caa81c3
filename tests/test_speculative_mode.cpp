// FaCTz-S (mode speculative): guarantees G0 and G1 on the block mode's field set, odd
// sizes against the anchor stride, determinism, and proof that the check is what keeps
// the critical points.
#include <gtest/gtest.h>

#include <cmath>

#include "factz/factz.hpp"
#include "kernels/quantizer.hpp"
#include "backend/cpu/speculative_mode.hpp"
#include "support/fields.hpp"
#include "support/roundtrip.hpp"
#include "synth.hpp"

namespace factz {
namespace {

using testing::check_round_trip;
using testing::options;

const double kRelBounds[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};

TEST(Speculative, KeepsEverySignatureOnSyntheticFieldsAtEveryRelBound) {
  for (const auto& nf : testing::synthetic_fields())
    for (double rel : kRelBounds)
      check_round_trip(nf.field, options(Mode::speculative, BoundMode::rel, rel), nf.name + " REL " + std::to_string(rel));
}

TEST(Speculative, KeepsEverySignatureAtAbsBounds) {
  const auto f = synth::turbulence(96, 96, 21);
  for (double abs : {1.0, 0.1, 0.01, 1e-4, 0.0})
    check_round_trip(f, options(Mode::speculative, BoundMode::abs, abs), "ABS " + std::to_string(abs));
}

TEST(Speculative, KeepsEverySignatureOnRealFields) {
  const auto fields = testing::real_vector_fields();
  if (fields.empty()) GTEST_SKIP() << "no real vector fields in tests/data or ../shared/data";
  for (const auto& nf : fields) {
    for (double rel : kRelBounds)
      check_round_trip(nf.field, options(Mode::speculative, BoundMode::rel, rel), nf.name + " REL " + std::to_string(rel));
    check_round_trip(nf.field, options(Mode::speculative, BoundMode::abs, 0.05), nf.name + " ABS 0.05");
  }
}

TEST(Speculative, HandlesDegenerateFields) {
  for (const auto& nf : testing::degenerate_fields())
    for (double rel : {1e-1, 1e-3, 0.0})
      check_round_trip(nf.field, options(Mode::speculative, BoundMode::rel, rel), nf.name + " REL " + std::to_string(rel));
}

TEST(Speculative, HandlesSizesThatAreNotMultiplesOfTheAnchorStrideOrSmallerThanIt) {
  for (int64_t nx : {1, 2, 3, 5, 15, 16, 17, 33, 47})
    for (int64_t ny : {1, 2, 7, 16, 31}) {
      auto f = synth::turbulence(nx, ny, uint64_t(nx * 100 + ny));
      for (int64_t s0 : {2, 4, 16, 64}) {
        Options o = options(Mode::speculative, BoundMode::rel, 1e-2);
        o.anchor_stride = s0;
        check_round_trip(f, o, std::to_string(nx) + "x" + std::to_string(ny) + " s0=" + std::to_string(s0));
      }
    }
}

TEST(Speculative, StoresZeroVectorsWithoutValues) {
  auto f = synth::turbulence(120, 90, 5);
  synth::add_zero_region(f, 6, 0.5);
  auto rt = check_round_trip(f, options(Mode::speculative, BoundMode::rel, 1e-2), "land");
  ASSERT_EQ(rt.decoded.size(), f.size());
  int64_t zeros = 0, kept = 0;
  for (int64_t k = 0; k < f.size(); ++k) {
    if (f.u[k] == 0.0f && f.v[k] == 0.0f) {
      ++zeros;
      kept += rt.decoded.u[k] == 0.0f && rt.decoded.v[k] == 0.0f;
    }
  }
  EXPECT_GT(zeros, f.size() / 3);
  EXPECT_GT(kept, zeros * 9 / 10) << "land stays exactly zero (prediction from zeros, or the zero-vector id)";
}

TEST(Speculative, OutputIsIdenticalForSerialAndAnyThreadCount) {
  auto f = synth::turbulence(150, 110, 31);
  synth::add_zero_region(f, 32, 0.2);
  testing::expect_thread_independent(f, options(Mode::speculative, BoundMode::rel, 1e-2));
}

TEST(Speculative, TheSignatureCheckIsWhatKeepsTheCriticalPoints) {
  const auto f = synth::turbulence(256, 256, 61);
  const float eb = 0.1f * 6.0f;  // loose: about REL 0.1 for unit-RMS turbulence
  for (bool check : {false, true}) {
    detail::SpeculativeResult r;
    detail::run_speculative(f, eb, 16, 2, check, r);
    VectorField2D recon{f.nx, f.ny, {r.recon_u.begin(), r.recon_u.end()}, {r.recon_v.begin(), r.recon_v.end()}};
    auto c = compare(f, recon);
    ASSERT_TRUE(c.ok());
    if (check) EXPECT_EQ(c->violations(), 0);
    else EXPECT_GT(c->violations(), 0) << "without the check the same data must lose critical points";
    EXPECT_LE(std::max(c->max_abs_error[0], c->max_abs_error[1]), double(eb));
  }
}

TEST(Speculative, BeatsBlockModeOnRatio) {
  const auto f = synth::turbulence(256, 256, 71);
  auto spec = compress(f, options(Mode::speculative, BoundMode::rel, 1e-2));
  auto block = compress(f, options(Mode::block, BoundMode::rel, 1e-2));
  ASSERT_TRUE(spec.ok() && block.ok());
  EXPECT_LT(double(spec->size()) * 1.5, double(block->size()));
}

TEST(Speculative, RejectsBadAnchorStrides) {
  const auto f = synth::turbulence(16, 16, 1);
  for (int64_t s0 : {0, 1, 3, 12, 8192}) {
    Options o = options(Mode::speculative, BoundMode::rel, 1e-2);
    o.anchor_stride = s0;
    auto s = compress(f, o);
    ASSERT_FALSE(s.ok()) << s0;
    EXPECT_EQ(s.status().code(), Code::invalid_argument);
  }
}

}  // namespace
}  // namespace factz
