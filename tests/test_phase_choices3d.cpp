// The per-phase choices of 3D speculative streams with predictor 2
// (streams/phase_choices3d.hpp): code transforms undone exactly, the choice table written and
// read back and damaged tables refused, axes chosen exactly where a component is constant
// along them, and whole streams that carry choices keeping every critical point and the bound,
// with bytes that do not depend on the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"
#include "backend/cpu/speculative3d_mode.hpp"
#include "streams/phase_choices3d.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector3d_modes.hpp"
#include "support/fields3d.hpp"
#include "synth3d.hpp"
#include "util/byte_io.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

/// A phase lattice with holes: the positions of `cells` that hold a code (about 4 in 5), and
/// symbols for them drawn from `draw`.
struct PhaseCodes {
  int64_t cells[3];
  std::vector<int64_t> at;
  std::vector<uint16_t> sym;
};

template <class Draw>
PhaseCodes phase_codes(int64_t cx, int64_t cy, int64_t cz, uint32_t seed, Draw draw) {
  PhaseCodes p{{cx, cy, cz}, {}, {}};
  std::mt19937 rng(seed);
  for (int64_t t = 0; t < cx * cy * cz; ++t) {
    if (rng() % 5 == 0) continue;  // exact, zero vector or missing: no code
    p.at.push_back(t);
    p.sym.push_back(draw(rng, t));
  }
  return p;
}

TEST(PhaseChoices3D, EveryTransformIsUndoneExactlyEvenWhereTheDifferencesWrap) {
  detail::CodeLattice lattice;
  int checked = 0;
  for (auto [cx, cy, cz] : {std::array<int64_t, 3>{7, 5, 4}, {1, 9, 3}, {16, 1, 1}, {3, 3, 1}, {1, 1, 1}}) {
    // Small codes, and codes at the ends of the int16 range whose differences wrap.
    for (int kind = 0; kind < 2; ++kind) {
      const PhaseCodes p = phase_codes(cx, cy, cz, uint32_t(cx * 100 + cy * 10 + cz + kind),
                                       [&](std::mt19937& rng, int64_t) -> uint16_t {
                                         if (kind == 0) return uint16_t(32768 + int(rng() % 7) - 3);
                                         const uint16_t ends[4] = {0, 1, 65534, 65535};
                                         return ends[rng() % 4];
                                       });
      for (int tr = 0; tr < detail::kCodeTransforms; ++tr) {
        std::vector<uint16_t> sym = p.sym;
        lattice.reset(p.cells, p.at);
        lattice.apply(tr, sym);
        if (tr != 0 && cx > 1 && cy > 1 && cz > 1) {
          EXPECT_NE(sym, p.sym) << "transform " << tr << " changed nothing";
        }
        lattice.reset(p.cells, p.at);  // the reader's lattice starts afresh
        lattice.undo(tr, sym);
        EXPECT_EQ(sym, p.sym) << "transform " << tr << " on " << cx << "x" << cy << "x" << cz << " kind " << kind;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 5 * 2 * detail::kCodeTransforms);
}

TEST(PhaseChoices3D, TheWriterPicksTheTransformThatMakesCodesSmall) {
  detail::CodeLattice lattice;
  const int64_t cx = 12, cy = 10, cz = 9;
  auto rnd = [](uint32_t s) { return int(std::mt19937(s)() % 41) - 20; };
  // Codes that repeat along x, y, z; that are a sum of a function of x and one of y (the
  // Lorenzo step on xy zeroes them); and noise.
  struct Case {
    const char* what;
    int want;
    int (*code)(int64_t, int64_t, int64_t, int (*)(uint32_t));
  };
  const Case cases[] = {
      {"repeats along x", 1, [](int64_t, int64_t y, int64_t z, int (*r)(uint32_t)) { return r(uint32_t(y * 31 + z)); }},
      {"repeats along y", 2, [](int64_t x, int64_t, int64_t z, int (*r)(uint32_t)) { return r(uint32_t(x * 31 + z)); }},
      {"repeats along z", 3, [](int64_t x, int64_t y, int64_t, int (*r)(uint32_t)) { return r(uint32_t(x * 31 + y)); }},
      {"f(x) + g(y)", 4,
       [](int64_t x, int64_t y, int64_t z, int (*r)(uint32_t)) { return r(uint32_t(x + 100 * z)) + r(uint32_t(y + 7000)); }},
      {"noise", 0, [](int64_t x, int64_t y, int64_t z, int (*r)(uint32_t)) { return r(uint32_t((z * 10 + y) * 12 + x)); }},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> at;
    std::vector<uint16_t> sym;
    for (int64_t t = 0; t < cx * cy * cz; ++t) {  // every target coded: a clean pattern
      at.push_back(t);
      sym.push_back(uint16_t(32768 + c.code(t % cx, (t / cx) % cy, t / (cx * cy), rnd)));
    }
    const std::vector<uint16_t> before = sym;
    const int64_t cells[3] = {cx, cy, cz};
    lattice.reset(cells, at);
    const int tr = lattice.choose_and_apply(sym);
    EXPECT_EQ(tr, c.want) << c.what;
    lattice.reset(cells, at);
    lattice.undo(tr, sym);
    EXPECT_EQ(sym, before) << c.what;
  }
}

TEST(PhaseChoices3D, TheChoiceTableReadsBackAndDamagedTablesAreRefused) {
  const int64_t nx = 37, ny = 20, nz = 17, s0 = 8;
  const int64_t phases = detail::phase_count3d(s0);
  std::vector<uint8_t> along(size_t(3 * phases), 0), transforms(size_t(3 * phases), 0);
  detail::PhaseSchedule3D schedule(nx, ny, nz, s0);
  int64_t index = 0, with_along = 0, with_transform = 0;
  for (detail::ScheduledPhase3D ph; schedule.next(ph); ++index)
    for (int c = 0; c < 3; ++c) {
      const size_t i = size_t(3 * index + c);
      if (detail::has_axis_choice(ph.lattice, ph.axes)) {
        for (int a = 2; a >= 0; --a)  // the last of its axes, then the first, ...
          if ((ph.axes >> a) & 1 && (index + c) % 3 != 0) along[i] = uint8_t(a + 1);
        ++with_along;
      }
      if (detail::has_transform_choice(ph.lattice)) {
        transforms[i] = uint8_t((index + c) % detail::kCodeTransforms);
        ++with_transform;
      }
    }
  ASSERT_GT(with_along, 0);
  ASSERT_GT(with_transform, 0);
  detail::ByteWriter w;
  detail::append_choice_table(w, nx, ny, nz, s0, along, transforms);
  const Bytes table = w.bytes();
  EXPECT_EQ(table.size(), size_t((2 * with_along + 7) / 8 + (4 * with_transform + 7) / 8));
  std::vector<uint8_t> a2, t2;
  ASSERT_TRUE(detail::parse_choice_table(table, nx, ny, nz, s0, a2, t2).ok());
  EXPECT_EQ(a2, along);
  EXPECT_EQ(t2, transforms);
  auto refused = [&](const Bytes& bad, const std::string& what) {
    std::vector<uint8_t> a, t;
    const Status st = detail::parse_choice_table(bad, nx, ny, nz, s0, a, t);
    EXPECT_EQ(st.code(), Code::corrupt_stream) << what << ": " << st.to_string();
  };
  refused(Bytes(table.begin(), table.end() - 1), "short");
  Bytes longer = table;
  longer.push_back(0);
  refused(longer, "long");
  // The first along entry belongs to the first phase with several axes (xy of the coarsest
  // level): 3 names z, not one of its axes.
  Bytes wrong_axis = table;
  wrong_axis[0] = uint8_t((wrong_axis[0] & ~3) | 3);
  refused(wrong_axis, "an axis the phase does not have");
  // A transform above 6: the first transform entry is the low nibble after the along bytes.
  const size_t first_transform = size_t((2 * with_along + 7) / 8);
  Bytes bad_transform = table;
  bad_transform[first_transform] = uint8_t((bad_transform[first_transform] & 0xF0) | 7);
  refused(bad_transform, "transform 7");
  if ((4 * with_transform) % 8 != 0) {  // an unused nibble set
    Bytes tail = table;
    tail.back() = uint8_t(tail.back() | 0x80);
    refused(tail, "unused bits");
  }
}

TEST(PhaseChoices3D, AnAxisIsChosenWhereAComponentIsConstantAlongItAndNowhereElse) {
  const int64_t n = 24, s0 = 4096;
  // u constant along x, v along y, w along z (the ABC flow).
  const VectorField3D abc = testing::abc_flow(n, n, n);
  const std::vector<uint8_t> along = detail::choose_axes3d(abc, s0, 1e-3, nullptr);
  detail::PhaseSchedule3D schedule(n, n, n, s0);
  int64_t index = 0, phases_with_choices = 0;
  for (detail::ScheduledPhase3D ph; schedule.next(ph); ++index) {
    for (int c = 0; c < 3; ++c) {
      const uint8_t a = along[size_t(3 * index + c)];
      EXPECT_TRUE(detail::valid_along(a, ph.axes));
      if (!detail::has_axis_choice(ph.lattice, ph.axes)) {
        EXPECT_EQ(a, 0);
        continue;
      }
      // Component c is constant along axis c: chosen whenever the phase has that axis.
      if ((ph.axes >> c) & 1) {
        EXPECT_EQ(a, c + 1) << "phase " << index << " component " << c;
      }
    }
    phases_with_choices += detail::has_axis_choice(ph.lattice, ph.axes);
  }
  EXPECT_GT(phases_with_choices, 0);
  EXPECT_EQ(detail::choose_axes3d(abc, s0, 1e-3, nullptr, 2), along) << "the choice depends on the thread count";
  // A generic field: the mean everywhere; and no choice at bound 0.
  const VectorField3D generic = testing::random_modes(n, n, n, 3);
  for (uint8_t a : detail::choose_axes3d(generic, s0, 1e-3, nullptr)) EXPECT_EQ(a, 0);
  for (uint8_t a : detail::choose_axes3d(abc, s0, 0.0, nullptr)) EXPECT_EQ(a, 0);
  // A missing vertex is not counted: a generic value there does not stop the choice.
  VectorField3D holed = abc;
  std::vector<uint8_t> missing(size_t(holed.size()), 0);
  const int64_t k = (5 * n + 7) * n + 9;  // a target of several phases' neighbourhoods
  missing[size_t(k)] = 1;
  holed.u[size_t(k)] = 1234.5f;
  EXPECT_EQ(detail::choose_axes3d(holed, s0, 1e-3, missing.data()), along);
  EXPECT_NE(detail::choose_axes3d(holed, s0, 1e-3, nullptr), along) << "the changed value counts when valid";
}

/// Fields whose streams carry choices: the ABC flow (constant along an axis per component)
/// on grids that are and are not powers of two, one with missing vertices, and the
/// Taylor-Green vortex (w = 0).
std::vector<std::pair<std::string, VectorField3D>> chosen_fields() {
  std::vector<std::pair<std::string, VectorField3D>> out;
  out.push_back({"abc_32", testing::abc_flow(32, 32, 32)});
  out.push_back({"abc_29x23x19", testing::abc_flow(29, 23, 19)});
  VectorField3D masked = testing::abc_flow(26, 24, 22);
  masked.mask.assign(size_t(masked.size()), 0);
  for (int64_t k = 0; k < masked.size(); ++k) {
    const int64_t x = k % masked.nx, y = (k / masked.nx) % masked.ny;
    if ((x - 8) * (x - 8) + (y - 9) * (y - 9) < 16) masked.mask[size_t(k)] = 1;  // a column
  }
  out.push_back({"abc_masked_26x24x22", std::move(masked)});
  out.push_back({"taylor_green_20x18x16", testing::taylor_green(20, 18, 16)});
  return out;
}

TEST(PhaseChoices3D, StreamsWithChoicesKeepEveryCriticalPointAndTheBoundOnAnyThreadCount) {
  for (const auto& [name, f] : chosen_fields())
    for (double rel : {1e-1, 1e-2, 1e-3, 1e-4})
      for (Coder coder : {Coder::ans, Coder::huffman}) {
        const std::string what = name + " REL " + std::to_string(rel) + " " + coder_name(coder);
        Options o;
        o.mode = Mode::speculative;
        o.bound_mode = BoundMode::rel;
        o.bound = rel;
        o.coder = coder;
        o.policy = Policy::omp;
        o.threads = 1;
        const Bytes one = testing::round_trip3d(f, o, true, what);  // G0, G1 and the bound
        ASSERT_FALSE(one.empty()) << what;
        EXPECT_EQ(testing::predictor3d_of(one), 2) << what << ": the stream carries choices";
        o.threads = 2;
        auto two = compress(f, o);
        ASSERT_TRUE(two.ok()) << what;
        EXPECT_EQ(two.value(), one) << what << ": bytes depend on the thread count";
      }
}

TEST(PhaseChoices3D, LargePhasesTransformedSideBySideGiveTheSameBytesAndValues) {
  // 96 x 88 x 80: the last level's phases hold over 65536 codes each (kSideBySideCodes), so
  // two threads transform and undo the three components side by side.
  const VectorField3D f = testing::abc_flow(96, 88, 80);
  Options o;
  o.mode = Mode::speculative;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-4;
  o.policy = Policy::omp;
  o.threads = 1;
  auto one = compress(f, o);
  o.threads = 2;
  auto two = compress(f, o);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(two.value(), one.value());
  EXPECT_EQ(testing::predictor3d_of(one.value()), 2);
  DecompressOptions d1{Policy::omp, 1}, d2{Policy::omp, 2};
  auto a = decompress3d(one.value(), d1);
  auto b = decompress3d(one.value(), d2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->u, b->u);
  EXPECT_EQ(a->v, b->v);
  EXPECT_EQ(a->w, b->w);
  auto c = compare(f, a.value());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->violations(), 0);
}

/// The stream of f written without choices (predictor 1: the mean everywhere, the codes as
/// they are), through the same stream layer as compress.
Bytes without_choices(const VectorField3D& f, const Options& o) {
  detail::Prepared3D<VectorField3D> prep;
  EXPECT_TRUE(detail::prepare3d(f, o, 1, prep).ok());
  prep.plan.along.clear();
  detail::Speculative3DResult r;
  detail::run_speculative3d(prep.work(), prep.plan.eb, o.anchor_stride, 1, true, r, prep.missing);
  detail::Speculative3DPayload payload;
  detail::speculative3d_payload(prep.work(), o.anchor_stride, r, payload, /*transform=*/false);
  auto s = detail::assemble_speculative3d(prep.plan, payload, std::move(prep.mask_section));
  EXPECT_TRUE(s.ok());
  return s.ok() ? s.value() : Bytes{};
}

TEST(PhaseChoices3D, ChoicesMakeTheStreamOfAFieldConstantAlongItsAxesSmaller) {
  const VectorField3D f = testing::abc_flow(32, 32, 32);
  for (double rel : {1e-3, 1e-4}) {
    Options o;
    o.mode = Mode::speculative;
    o.bound_mode = BoundMode::rel;
    o.bound = rel;
    auto chosen = compress(f, o);
    ASSERT_TRUE(chosen.ok());
    const Bytes mean = without_choices(f, o);
    EXPECT_EQ(testing::predictor3d_of(chosen.value()), 2);
    ASSERT_EQ(testing::predictor3d_of(mean), 1);
    const Bytes& with = chosen.value();
    for (const Bytes* s : {&with, &mean}) {  // both decode, with every critical point
      auto d = decompress3d(*s);
      ASSERT_TRUE(d.ok()) << d.status().to_string();
      auto c = compare(f, d.value());
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(c->violations(), 0);
      for (double e : c->max_abs_error) EXPECT_LE(e, double(detail::float_bound(rel * c->value_range)));
    }
    EXPECT_LT(double(chosen->size()) * 1.5, double(mean.size()))
        << "REL " << rel << ": " << chosen->size() << " bytes with choices, " << mean.size() << " without";
  }
}

}  // namespace
}  // namespace factz
