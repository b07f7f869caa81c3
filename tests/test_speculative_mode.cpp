// FaCTz-S (mode speculative): guarantees G0 and G1 on the block mode's field set, odd
// sizes against the anchor stride, determinism, and proof that the check is what keeps
// the critical points. The cubic predictor (issue 20): its formulas, its record in the meta
// section, and linear streams written and decoded exactly as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "factz/factz.hpp"
#include "factz/multiblock.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "kernels/interpolation.hpp"
#include "kernels/quantizer.hpp"
#include "streams/speculative_trial.hpp"
#include "backend/cpu/speculative_mode.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector_stream.hpp"
#include "support/fields.hpp"
#include "support/roundtrip.hpp"
#include "support/shear_layer.hpp"
#include "synth.hpp"
#include "support/resealed.hpp"

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

// ---- The cubic predictor (issue 20) ------------------------------------------------------

using detail::Predictor;

/// The meta section of a stream.
std::vector<uint8_t> meta_of(const std::vector<uint8_t>& stream) {
  auto pc = detail::parse_container(stream);
  EXPECT_TRUE(pc.ok());
  for (const auto& e : pc->entries)
    if (e.id == detail::kSectionMeta)
      return {stream.begin() + std::ptrdiff_t(e.offset), stream.begin() + std::ptrdiff_t(e.offset + e.stored_size)};
  ADD_FAILURE() << "no meta section";
  return {};
}

/// The sections of a speculative stream of `f` written with `pred` (the CPU driver).
template <class Field>
std::vector<detail::Section> sections_with(const Field& f, const Options& o, Predictor pred, double eb_abs) {
  const bool f64 = std::is_same_v<Field, VectorField2D64>;
  Options abs = o;
  abs.bound_mode = BoundMode::abs;
  abs.bound = eb_abs;
  const detail::StreamPlan p = f64 ? detail::make_plan64(f.nx, f.ny, abs, 0.0, 1) : detail::make_plan(f.nx, f.ny, abs, 0.0, 1);
  detail::SpeculativeResultOf<typename decltype(f.u)::value_type> r;
  if constexpr (std::is_same_v<Field, VectorField2D64>)
    detail::run_speculative(f, p.eb64, abs.anchor_stride, 2, true, r, 0, nullptr, pred);
  else
    detail::run_speculative(f, p.eb, abs.anchor_stride, 2, true, r, 0, nullptr, pred);
  detail::SpeculativePayload pl;
  detail::speculative_payload(f, abs.anchor_stride, r, pl);
  EXPECT_EQ(pl.predictor, pred);
  std::vector<detail::Section> sections;
  EXPECT_TRUE(detail::speculative_sections(p, pl, sections).ok());
  return sections;
}

template <class Field>
std::vector<uint8_t> stream_with(const Field& f, const Options& o, Predictor pred, double eb_abs) {
  Options abs = o;
  abs.bound_mode = BoundMode::abs;
  abs.bound = eb_abs;
  const bool f64 = std::is_same_v<Field, VectorField2D64>;
  const detail::StreamPlan p = f64 ? detail::make_plan64(f.nx, f.ny, abs, 0.0, 1) : detail::make_plan(f.nx, f.ny, abs, 0.0, 1);
  auto s = detail::write_vector_stream(p, sections_with(f, o, pred, eb_abs), pred != Predictor::linear);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? s.value() : std::vector<uint8_t>{};
}

TEST(SpeculativeCubic, InterpolatesCubicsExactlyAndFallsBackAtTheEdges) {
  // A line of 13 points at spacing s = 1 around targets p: f(x) = x^3 - 4x^2 + 2x - 7 on
  // integers, exact in double. The cubic through 4 points reproduces it; the quadratic and
  // linear fallbacks reproduce polynomials of their degree.
  auto cubic = [](double x) { return ((x - 4.0) * x + 2.0) * x - 7.0; };
  auto quad = [](double x) { return (3.0 * x - 5.0) * x + 1.0; };
  auto line = [](double x) { return 2.5 * x - 1.0; };
  std::vector<double> fc(13), fq(13), fl(13);
  for (int i = 0; i < 13; ++i) {
    fc[size_t(i)] = cubic(i);
    fq[size_t(i)] = quad(i);
    fl[size_t(i)] = line(i);
  }
  bool two_sided = false;
  // Interior (points at p - 3, p - 1, p + 1, p + 3): the cubic.
  EXPECT_EQ(detail::cubic_along(fc.data(), 5, 5, 13, 1, 1, two_sided), cubic(5));
  EXPECT_TRUE(two_sided);
  // p = 1: no point 3 before, quadratic from p - 1, p + 1, p + 3.
  EXPECT_EQ(detail::cubic_along(fq.data(), 1, 1, 13, 1, 1, two_sided), quad(1));
  // p = 11 of 13: no point 3 after, quadratic from p - 3, p - 1, p + 1.
  EXPECT_EQ(detail::cubic_along(fq.data(), 11, 11, 13, 1, 1, two_sided), quad(11));
  // p = 1 of 3: linear from p - 1, p + 1.
  EXPECT_EQ(detail::cubic_along(fl.data(), 1, 1, 3, 1, 1, two_sided), line(1));
  // p = 12 of 13: p + 1 is outside: the point before.
  EXPECT_EQ(detail::cubic_along(fc.data(), 12, 12, 13, 1, 1, two_sided), fc[11]);
  EXPECT_FALSE(two_sided);
  // A stride along y: the same line stored as a column of a 3-wide grid, step 2.
  std::vector<float> col(3 * 13, 0.0f);
  for (int i = 0; i < 13; ++i) col[size_t(3 * i + 1)] = float(line(i));
  EXPECT_EQ(detail::cubic_along(col.data(), 3 * 6 + 1, 6, 13, 2, 3, two_sided), float(line(6)));
}

TEST(SpeculativeCubic, CenterAveragesBothDirections) {
  // f(x, y) = x^2 + 3 y on a 9 x 9 grid at step 1: both directions interpolate it exactly
  // (cubics at (3, 3) and (5, 5), quadratics at (1, 1), which has no point 3 before), so
  // their mean is exact too.
  const int64_t n = 9;
  std::vector<double> f(size_t(n * n));
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x) f[size_t(y * n + x)] = double(x * x + 3 * y);
  for (int64_t c : {1, 3, 5}) {
    const double want = double(c * c + 3 * c);
    EXPECT_EQ(detail::predict(f.data(), n, n, c, c, 1, detail::Phase::center, Predictor::cubic), want) << c;
    EXPECT_EQ(detail::predict(f.data(), n, n, c, 0, 1, detail::Phase::horizontal, Predictor::cubic),
              double(c * c))
        << c;
  }
  // The last row and column: neither x + 1 nor y + 1 inside, T + L - TL.
  const double corner = detail::predict(f.data(), 8, 8, 7, 7, 1, detail::Phase::center, Predictor::cubic);
  EXPECT_EQ(corner, (f[size_t(6 * 8 + 7)] + f[size_t(7 * 8 + 6)]) - f[size_t(6 * 8 + 6)]);
  // The linear predictor is the one of format versions up to 6.
  EXPECT_EQ(detail::predict(f.data(), n, n, 3, 3, 1, detail::Phase::center, Predictor::linear),
            detail::predict(f.data(), n, n, 3, 3, 1, detail::Phase::center));
}

TEST(SpeculativeCubic, NewStreamsNameTheCubicPredictorInTheMetaSection) {
  const auto f = synth::turbulence(64, 48, 3);
  auto s = compress(f, options(Mode::speculative, BoundMode::rel, 1e-2));
  ASSERT_TRUE(s.ok());
  const auto meta = meta_of(s.value());
  ASSERT_EQ(meta.size(), 6u);
  EXPECT_EQ(meta[5], uint8_t(Predictor::cubic));
  const auto f64 = synth::turbulence64(64, 48, 3);
  auto s64 = compress(f64, options(Mode::speculative, BoundMode::rel, 1e-2));
  ASSERT_TRUE(s64.ok());
  const auto meta64 = meta_of(s64.value());
  ASSERT_EQ(meta64.size(), 14u);
  EXPECT_EQ(meta64[13], uint8_t(Predictor::cubic));
}

TEST(SpeculativeCubic, KeepsEverySignatureOnTinyAndOddGrids) {
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{1, 1}, {2, 2}, {3, 5}, {5, 3}, {7, 7}, {9, 4}, {17, 33}, {63, 65},
                        {100, 37}})
    for (double rel : {1e-1, 1e-2, 1e-4})
      for (int64_t s0 : {2, 16, 4096}) {
        Options o = options(Mode::speculative, BoundMode::rel, rel);
        o.anchor_stride = s0;
        const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + " REL " + std::to_string(rel) +
                                 " s0 " + std::to_string(s0);
        check_round_trip(synth::turbulence(nx, ny, uint64_t(nx * 7 + ny)), o, what);
        check_round_trip(synth::noise(nx, ny, uint64_t(nx * 11 + ny)), o, what + " noise");
      }
}

TEST(SpeculativeCubic, KeepsEverySignatureOnMaskedFields) {
  auto f = synth::turbulence(90, 70, 41);
  for (int64_t k = 0; k < f.size(); k += 7) f.u[size_t(k)] = f.v[size_t(k)] = std::nanf("");
  for (double rel : {1e-2, 1e-3}) {
    CompressStats st;
    const auto s = compress(f, options(Mode::speculative, BoundMode::rel, rel), &st);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const auto d = decompress(s.value());
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    for (int64_t k = 0; k < f.size(); ++k) {
      if (k % 7 == 0) {
        EXPECT_TRUE(std::isnan(d->u[size_t(k)]) && std::isnan(d->v[size_t(k)])) << k;
        continue;
      }
      ASSERT_LE(std::fabs(double(d->u[size_t(k)]) - double(f.u[size_t(k)])), st.eb_abs) << k;
      ASSERT_LE(std::fabs(double(d->v[size_t(k)]) - double(f.v[size_t(k)])), st.eb_abs) << k;
    }
    const auto c = compare(f, d.value());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->violations(), 0) << "REL " << rel;
  }
  // Streams and decoded bits (NaN included) do not depend on the thread count.
  Options o = options(Mode::speculative, BoundMode::rel, 1e-2);
  o.policy = Policy::serial;
  const auto ref = compress(f, o);
  ASSERT_TRUE(ref.ok());
  const auto serial = decompress(ref.value(), DecompressOptions{Policy::serial, 1});
  ASSERT_TRUE(serial.ok());
  o.policy = Policy::omp;
  for (int t : {1, 2, 3}) {
    o.threads = t;
    EXPECT_EQ(compress(f, o).value(), ref.value()) << t << " threads";
    const auto d = decompress(ref.value(), DecompressOptions{Policy::omp, t});
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(std::memcmp(d->u.data(), serial->u.data(), 4 * f.u.size()), 0) << t << " threads";
    EXPECT_EQ(std::memcmp(d->v.data(), serial->v.data(), 4 * f.v.size()), 0) << t << " threads";
  }
}

TEST(SpeculativeCubic, KeepsEverySignatureOnFloat64Fields) {
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{1, 1}, {2, 2}, {3, 5}, {61, 47}, {128, 96}})
    for (double rel : {1e-2, 1e-4}) {
      const auto f = synth::turbulence64(nx, ny, uint64_t(nx + ny));
      CompressStats st;
      auto s = compress(f, options(Mode::speculative, BoundMode::rel, rel), &st);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      auto d = decompress64(s.value());
      ASSERT_TRUE(d.ok()) << d.status().to_string();
      for (int64_t k = 0; k < f.size(); ++k) {
        ASSERT_LE(std::fabs(d->u[size_t(k)] - f.u[size_t(k)]), st.eb_abs) << k;
        ASSERT_LE(std::fabs(d->v[size_t(k)] - f.v[size_t(k)]), st.eb_abs) << k;
      }
      auto c = compare(f, d.value());
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(c->violations(), 0) << nx << "x" << ny << " REL " << rel;
      // Threads never change the bytes.
      Options o = options(Mode::speculative, BoundMode::rel, rel);
      for (int t : {1, 2, 3}) {
        o.threads = t;
        auto again = compress(f, o);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(again.value(), s.value()) << t << " threads";
      }
    }
}

TEST(SpeculativeCubic, DegenerateFieldsKeepTheirValuesExactlyWhereTheyMust) {
  for (const auto& nf : testing::degenerate_fields()) {
    auto rt = check_round_trip(nf.field, options(Mode::speculative, BoundMode::rel, 1e-2), nf.name);
    if (nf.name == "zeros" || nf.name == "constant") {
      ASSERT_EQ(rt.decoded.size(), nf.field.size());
      EXPECT_EQ(rt.decoded.u, nf.field.u) << nf.name << ": a constant is predicted exactly";
      EXPECT_EQ(rt.decoded.v, nf.field.v) << nf.name;
    }
  }
}

TEST(SpeculativeCubic, IsSmallerThanLinearOnTheRealFields) {
  const auto fields = testing::real_vector_fields();
  if (fields.empty()) GTEST_SKIP() << "no real vector fields in tests/data or ../shared/data";
  int64_t linear = 0, cubic = 0;
  for (const auto& nf : fields) {
    if (nf.field.size() < 10000) continue;  // tiny fields say little about a predictor
    float lo = nf.field.u[0], hi = nf.field.u[0];
    for (size_t k = 0; k < nf.field.u.size(); ++k) {
      lo = std::min({lo, nf.field.u[k], nf.field.v[k]});
      hi = std::max({hi, nf.field.u[k], nf.field.v[k]});
    }
    const double eb = 1e-2 * (double(hi) - double(lo));
    const Options o = options(Mode::speculative, BoundMode::abs, eb);
    linear += int64_t(stream_with(nf.field, o, Predictor::linear, eb).size());
    cubic += int64_t(stream_with(nf.field, o, Predictor::cubic, eb).size());
  }
  if (linear == 0) GTEST_SKIP() << "no real field of at least 10000 vertices";
  EXPECT_LT(double(cubic), 0.97 * double(linear)) << "cubic " << cubic << " bytes, linear " << linear;
}

TEST(SpeculativeCubic, LinearStreamsAreWrittenAsInFormatVersion2) {
  // The golden file v2_speculative_abs0.05_nozstd_land_48x40.fz (tests/test_golden.cpp),
  // written again through the driver with the linear predictor: byte for byte.
  VectorField2D f = synth::turbulence(48, 40, 202, 4.0);
  synth::add_zero_region(f, 203, 0.25);
  Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  o.coder = Coder::huffman;
  o.zstd = false;
  o.anchor_stride = 16;  // the golden file's (the default was 16 then)
  const std::string path = std::string(FACTZ_TEST_DATA_DIR) + "/golden/v2_speculative_abs0.05_nozstd_land_48x40.fz";
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> golden{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(golden.empty()) << path;
  const auto s = stream_with(f, o, Predictor::linear, 0.05);
  EXPECT_EQ(meta_of(s).size(), 5u) << "a linear stream has no predictor byte";
  // Skip when this libm synthesises another input (tests/test_golden.cpp does the same).
  auto d = decompress(golden);
  ASSERT_TRUE(d.ok());
  if (s != golden) {
    auto mine = decompress(s);
    ASSERT_TRUE(mine.ok());
    if (mine->u != d->u) GTEST_SKIP() << "synthetic input differs on this platform";
  }
  EXPECT_EQ(s, testing::compact(golden));  // the golden file's sections, in the compact container
}

TEST(SpeculativeCubic, BothPredictorsDecodeToTheDriversValues) {
  auto f = synth::turbulence(77, 53, 19);
  synth::add_zero_region(f, 20, 0.2);
  for (Predictor pred : {Predictor::linear, Predictor::cubic}) {
    const double eb = 0.02;
    Options o = options(Mode::speculative, BoundMode::abs, eb);
    const auto s = stream_with(f, o, pred, eb);
    detail::SpeculativeResult r;
    detail::run_speculative(f, detail::make_plan(f.nx, f.ny, o, 0.0, 1).eb, o.anchor_stride, 3, true, r, 0, nullptr,
                            pred);
    for (int t : {1, 2, 3}) {
      auto d = decompress(s, DecompressOptions{Policy::omp, t});
      ASSERT_TRUE(d.ok()) << d.status().to_string();
      EXPECT_TRUE(std::equal(d->u.begin(), d->u.end(), r.recon_u.begin())) << int(pred) << " " << t;
      EXPECT_TRUE(std::equal(d->v.begin(), d->v.end(), r.recon_v.begin())) << int(pred) << " " << t;
    }
  }
}

TEST(SpeculativeCubic, UnknownPredictorBytesAreCorrupt) {
  const auto f = synth::turbulence(40, 30, 23);
  const Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  const detail::StreamPlan p = detail::make_plan(f.nx, f.ny, o, 0.0, 1);
  for (uint8_t bad : {uint8_t(0), uint8_t(2), uint8_t(255)}) {
    auto sections = sections_with(f, o, Predictor::linear, 0.05);
    ASSERT_EQ(sections[0].id, detail::kSectionMeta);
    sections[0].raw.push_back(bad);  // 0 too: a linear stream has no predictor byte
    auto s = detail::write_vector_stream(p, std::move(sections), /*predictor_byte=*/true);
    ASSERT_TRUE(s.ok());
    auto d = decompress(s.value());
    ASSERT_FALSE(d.ok()) << int(bad);
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
  }
  auto sections = sections_with(f, o, Predictor::cubic, 0.05);
  sections[0].raw.push_back(1);  // two predictor bytes
  auto s = detail::write_vector_stream(p, std::move(sections), /*predictor_byte=*/true);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(decompress(s.value()).status().code(), Code::corrupt_stream);
}

/// The format version of a stream (header bytes 4 and 5).
uint16_t version_of(const std::vector<uint8_t>& s) { return testing::layout_version(s); }

TEST(SpeculativeCubic, StreamsWithAPredictorByteAreVersion9AndLinearOnesKeepTheirVersion) {
  const auto f = synth::turbulence(40, 30, 31);
  const auto f64 = synth::turbulence64(40, 30, 31);
  const Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  EXPECT_EQ(version_of(stream_with(f, o, Predictor::cubic, 0.05)), detail::kFormatVersionSegmentedCodes);
  EXPECT_EQ(version_of(stream_with(f64, o, Predictor::cubic, 0.05)), detail::kFormatVersionSegmentedCodes);
  EXPECT_EQ(version_of(stream_with(f, o, Predictor::linear, 0.05)), detail::kFormatVersionWithoutMask);
  EXPECT_EQ(version_of(stream_with(f64, o, Predictor::linear, 0.05)), detail::kFormatVersionFloat64);
  auto s = compress(f, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(version_of(s.value()), detail::kFormatVersionSegmentedCodes);
  auto s64 = compress(f64, o);
  ASSERT_TRUE(s64.ok());
  EXPECT_EQ(version_of(s64.value()), detail::kFormatVersionSegmentedCodes);
}

TEST(SpeculativeCubic, AVersion9StreamWithoutItsPredictorByteIsCorrupt) {
  const auto f = synth::turbulence(40, 30, 37);
  const auto f64 = synth::turbulence64(40, 30, 37);
  const Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  const detail::StreamPlan p = detail::make_plan(f.nx, f.ny, o, 0.0, 1);
  const detail::StreamPlan p64 = detail::make_plan64(f64.nx, f64.ny, o, 0.0, 1);
  // The cubic stream with its byte removed, sealed again as version 9 (every CRC rewritten)...
  auto cubic = sections_with(f, o, Predictor::cubic, 0.05);
  ASSERT_EQ(cubic[0].id, detail::kSectionMeta);
  cubic[0].raw.pop_back();
  auto s = detail::write_vector_stream(p, std::move(cubic), /*predictor_byte=*/true);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(version_of(s.value()), detail::kFormatVersionSegmentedCodes);
  EXPECT_EQ(decompress(s.value()).status().code(), Code::corrupt_stream);
  // ... and a linear one written as version 9, float32 and float64.
  s = detail::write_vector_stream(p, sections_with(f, o, Predictor::linear, 0.05), true);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(decompress(s.value()).status().code(), Code::corrupt_stream);
  s = detail::write_vector_stream(p64, sections_with(f64, o, Predictor::linear, 0.05), true);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(version_of(s.value()), detail::kFormatVersionSegmentedCodes);
  EXPECT_EQ(decompress64(s.value()).status().code(), Code::corrupt_stream);
  // factz info's bound reads the meta section with the same rule.
  auto pc = detail::parse_vector_stream(s.value());
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(detail::stream_bound(s.value(), pc.value(), &detail::zstd_stage_decompressor()).status().code(),
            Code::corrupt_stream);
}

TEST(SpeculativeCubic, AStreamBeforeVersion7WithAPredictorByteIsCorrupt) {
  const auto f = synth::turbulence(40, 30, 41);
  const auto f64 = synth::turbulence64(40, 30, 41);
  const Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  // Version 6 (float64) and version 2 (float32), the cubic sections and their byte.
  auto s64 = detail::write_vector_stream(detail::make_plan64(f64.nx, f64.ny, o, 0.0, 1),
                                         sections_with(f64, o, Predictor::cubic, 0.05), /*predictor_byte=*/false);
  ASSERT_TRUE(s64.ok()) << s64.status().to_string();
  ASSERT_EQ(version_of(s64.value()), detail::kFormatVersionFloat64);
  EXPECT_EQ(decompress64(s64.value()).status().code(), Code::corrupt_stream);
  auto s = detail::write_vector_stream(detail::make_plan(f.nx, f.ny, o, 0.0, 1),
                                       sections_with(f, o, Predictor::cubic, 0.05), false);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(version_of(s.value()), detail::kFormatVersionWithoutMask);
  EXPECT_EQ(decompress(s.value()).status().code(), Code::corrupt_stream);
  auto pc = detail::parse_vector_stream(s64.value());
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(detail::stream_bound(s64.value(), pc.value(), &detail::zstd_stage_decompressor()).status().code(),
            Code::corrupt_stream);
}

TEST(SpeculativeCubic, Versions7And9AreOnlyForSpeculativeVectorStreams) {
  const auto f = synth::turbulence(40, 30, 43);
  for (uint16_t version : {detail::kFormatVersionPredictor, detail::kFormatVersionSegmentedCodes})
  for (Mode m : {Mode::none, Mode::block}) {
    const Options o = options(m, BoundMode::abs, 0.05);
    auto s = compress(f, o);
    ASSERT_TRUE(s.ok());
    auto pc = detail::parse_container(s.value());
    ASSERT_TRUE(pc.ok());
    detail::Header h = pc->header;
    h.version = version;
    std::vector<detail::Section> sections;
    for (const auto& e : pc->entries)
      sections.push_back({e.id, detail::read_section(s.value(), pc.value(), e.id, &detail::zstd_stage_decompressor())
                                    .value()});
    EXPECT_EQ(detail::write_container(h, sections, nullptr).status().code(), Code::invalid_argument);
    // The same header forged by hand: version 7 or 9 in mode none or block is corrupt.
    std::vector<uint8_t> forged = s.value();
    forged[4] = uint8_t(version);
    forged[5] = 0;
    const uint32_t crc = detail::crc32c(std::span<const uint8_t>(forged).first(detail::kHeaderCrcOffset));
    for (int i = 0; i < 4; ++i) forged[detail::kHeaderCrcOffset + size_t(i)] = uint8_t(crc >> (8 * i));
    auto d = decompress(forged);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
  }
}

TEST(SpeculativeCubic, ADeviceDecoderWithoutTheCubicPredictorRefusesTheStream) {
  const auto f = synth::turbulence(40, 30, 29);
  const Options o = options(Mode::speculative, BoundMode::abs, 0.05);
  for (Predictor pred : {Predictor::linear, Predictor::cubic}) {
    const auto s = stream_with(f, o, pred, 0.05);
    auto pc = detail::parse_vector_stream(s);
    ASSERT_TRUE(pc.ok());
    detail::SpeculativeDecodeInput in;
    const Status st = detail::parse_speculative(s, pc.value(), 1, in, /*leave_coded=*/true);
    if (pred == Predictor::linear) {
      EXPECT_TRUE(st.ok()) << st.to_string();
    } else {
      EXPECT_EQ(st.code(), Code::backend_unavailable) << st.to_string();
    }
    detail::SpeculativeDecodeInput in2;
    EXPECT_TRUE(detail::parse_speculative(s, pc.value(), 1, in2, true, nullptr, Predictor::cubic).ok());
    EXPECT_EQ(in2.predictor, pred);
  }
}

// ---- The level-wise bound's trial (streams/speculative_trial.hpp) -------------------------

using testing::shear_layer_crop;

/// The absolute bound of REL `rel` (the range over both components), as compress has it.
float abs_bound(const VectorField2D& f, double rel) {
  const ValueRange r = value_range_of(f);
  return detail::make_plan(f.nx, f.ny, options(Mode::speculative, BoundMode::rel, rel), r.hi - r.lo, 1).eb;
}

TEST(SpeculativeTrial, ChoosesTheTightLevelsWhereTheyPayAndNeverForTheLinearPredictor) {
  const VectorField2D smooth = shear_layer_crop(128);
  const float eb = abs_bound(smooth, 3e-2);
  auto choose = [&](const VectorField2D& f, float b, detail::Predictor p, int threads) {
    return detail::choose_tight_step(f.nx, f.ny, f.u.data(), f.v.data(), nullptr, b, 4096, p, threads);
  };
  // The whole 128 x 128 crop is the trial here: 511 bytes against 533 with the full bound.
  EXPECT_EQ(choose(smooth, eb, detail::kDefaultPredictor, 1), detail::kTrialTightStep);
  EXPECT_EQ(choose(smooth, eb, detail::kDefaultPredictor, 2), detail::kTrialTightStep);
  EXPECT_EQ(choose(smooth, eb, detail::Predictor::linear, 1), detail::kNoTightLevel);
  EXPECT_EQ(choose(smooth, 0.0f, detail::kDefaultPredictor, 1), detail::kNoTightLevel);
  const VectorField2D noise = synth::noise(128, 128, 5);
  EXPECT_EQ(choose(noise, abs_bound(noise, 1e-2), detail::kDefaultPredictor, 1), detail::kNoTightLevel);
  EXPECT_EQ(detail::trial_crop_side(300), 300);
  EXPECT_EQ(detail::trial_crop_side(1500), 750);
  EXPECT_EQ(detail::trial_crop_side(4096), 1024);
}

TEST(SpeculativeTrial, TheCoarseLevelsStartAtHalfTheBoundAndTheStreamsKeepTheGuarantees) {
  const VectorField2D f = shear_layer_crop(128);
  const float eb = abs_bound(f, 3e-2);
  detail::SpeculativeResult r;
  detail::run_speculative(f, eb, 4096, 2, true, r);
  detail::PhaseSchedule schedule(f.nx, f.ny, 4096);
  size_t at = 0;
  int64_t coarse = 0, fine_full = 0;
  for (detail::ScheduledPhase ph; schedule.next(ph);)
    for (int64_t t = 0; t < ph.lattice.count(); ++t, ++at) {
      const uint16_t id = r.ids[at];
      if (ph.step >= detail::kTrialTightStep) {
        ++coarse;
        EXPECT_LE(id, detail::kMaxBoundId - 1) << "step " << ph.step;
      } else {
        fine_full += id == detail::kMaxBoundId;
      }
    }
  EXPECT_GT(coarse, 0);
  EXPECT_GT(fine_full, 0) << "the finer levels start at the full bound";
  Options o = options(Mode::speculative, BoundMode::rel, 3e-2);
  check_round_trip(f, o, "shear layer crop, tight levels");
  testing::expect_thread_independent(f, o);
  VectorField2D holes = f;  // the trial on a field with missing vertices
  holes.mask.assign(holes.u.size(), 0);
  for (int64_t k = 300; k < int64_t(holes.u.size()); k += 977) holes.mask[size_t(k)] = 1;
  check_round_trip(holes, o, "shear layer crop with holes");
  testing::expect_thread_independent(holes, o);
}

}  // namespace
}  // namespace factz

namespace factz {
namespace {

// Fields whose trial crop is the whole field: the driver runs the schedule both ways and
// chooses by the trial's estimate on its own runs (speculative_mode.cpp). The choice must be
// the trial's (choose_tight_step), whichever it is, on smooth fields (tight levels) and
// rough ones (full bound), with missing vertices, float64, one and two threads; above 512
// per axis the trial itself runs and is recorded the same way.
TEST(SpeculativeTrial, TheDriversOwnRunsChooseWhatTheTrialChooses) {
  std::vector<std::pair<std::string, VectorField2D>> fields;
  fields.emplace_back("shear 128", testing::shear_layer_crop(128));
  fields.emplace_back("turbulence", synth::turbulence(90, 61, 41));
  fields.emplace_back("noise", synth::noise(40, 44, 42));
  fields.emplace_back("vortices", synth::vortices(96, 64, 43, 8));
  fields.emplace_back("wide", synth::turbulence(520, 12, 44));  // the trial proper (520 > 512)
  int chose[2] = {0, 0};
  for (auto& [name, f] : fields) {
    const ValueRange range = value_range_of(f);
    for (double rel : {3e-2, 1e-3}) {
      const float eb = float(rel * (range.hi - range.lo));
      std::vector<uint8_t> holes(f.u.size(), 0);
      for (size_t k = 37; k < holes.size(); k += 211) holes[k] = 1;
      for (const uint8_t* missing : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(holes.data())}) {
        VectorField2D filled = f;
        if (missing)  // the driver's input is the filled working copy: zeros stand in
          for (size_t k = 0; k < holes.size(); ++k)
            if (holes[k]) filled.u[k] = filled.v[k] = 0.0f;
        const int64_t want = detail::choose_tight_step(f.nx, f.ny, filled.u.data(), filled.v.data(), missing, eb,
                                                       int64_t(4096), detail::kDefaultPredictor, 1);
        for (int threads : {1, 2}) {
          detail::SpeculativeResult r;
          detail::run_speculative(filled, eb, 4096, threads, true, r, 0, missing);
          EXPECT_EQ(r.tight_step, want) << name << " REL " << rel << (missing ? " masked" : "") << " threads "
                                        << threads;
        }
        ++chose[want == detail::kTrialTightStep ? 1 : 0];
        // float64: the same choice rule on doubles.
        VectorField2D64 d{f.nx, f.ny, {}, {}, {}};
        for (size_t k = 0; k < f.u.size(); ++k) {
          d.u.push_back(double(filled.u[k]) + 0x1p-30 * double(k % 3));
          d.v.push_back(double(filled.v[k]));
        }
        const int64_t want64 = detail::choose_tight_step(d.nx, d.ny, d.u.data(), d.v.data(), missing, double(eb),
                                                         int64_t(4096), detail::kDefaultPredictor, 1);
        detail::SpeculativeResult64 r64;
        detail::run_speculative(d, double(eb), 4096, 2, true, r64, 0, missing);
        EXPECT_EQ(r64.tight_step, want64) << name << " float64 REL " << rel << (missing ? " masked" : "");
      }
    }
  }
  EXPECT_GT(chose[0], 0) << "no field where the full bound wins";
  EXPECT_GT(chose[1], 0) << "no field where the tight levels win";
}

}  // namespace
}  // namespace factz
