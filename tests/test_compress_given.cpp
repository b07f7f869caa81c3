// compress(std::move(field)): the field given up is the speculative mode's working state
// (run_speculative's `state`). The stream must be the one compress(field) writes, for every
// mode, with and without missing vertices, float32 and float64, one and two threads, and
// the field must be left empty, also when compress fails; a masked field given up is filled
// in its own planes, a field kept is never written to. The same for 3D fields
// (run_speculative3d's `state`; the exact values then come from the state).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/factz.hpp"
#include "synth.hpp"
#include "support/fields3d.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

Options options_for(Mode mode, int threads) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = 1e-2;
  o.policy = threads > 1 ? Policy::omp : Policy::serial;
  o.threads = threads;
  return o;
}

/// Whether a field given up was left empty (2D, or 3D with its w plane and nz too).
template <class Field>
bool left_empty(const Field& f) {
  bool empty = f.u.empty() && f.v.empty() && f.mask.empty() && f.nx == 0 && f.ny == 0;
  if constexpr (requires { f.w; }) empty = empty && f.w.empty() && f.nz == 0;
  return empty;
}

/// Whether two planes hold the same bits (NaN payloads included).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class Field>
void expect_same_stream(const Field& f, const Options& o, const std::string& what) {
  const Field before = f;
  auto kept = compress(f, o);
  ASSERT_TRUE(kept.ok()) << what << ": " << kept.status().message();
  // A field kept by its caller is never written to (missing vertices are filled in place
  // only in a field given up).
  bool untouched = same_bits(f.u, before.u) && same_bits(f.v, before.v);
  if constexpr (requires { f.w; }) untouched = untouched && same_bits(f.w, before.w);
  EXPECT_TRUE(untouched) << what << ": compress wrote to the caller's field";
  Field given = f;
  CompressStats st;
  auto taken = compress(std::move(given), o, &st);
  ASSERT_TRUE(taken.ok()) << what << ": " << taken.status().message();
  EXPECT_EQ(*taken, *kept) << what << ": giving the field up changed the stream";
  EXPECT_TRUE(left_empty(given)) << what;  // NOLINT: the moved-from field's state is specified
  EXPECT_GT(kept->size(), size_t(0));
}

TEST(CompressGiven, TheStreamIsTheOneOfTheKeptFieldInEveryMode) {
  VectorField2D f = synth::turbulence(97, 61, 3);
  VectorField2D masked = f;
  masked.mask.assign(f.u.size(), 0);
  for (size_t k = 0; k < f.u.size(); k += 7) masked.mask[k] = 1;  // anchors and targets among them
  masked.u[5] = NAN;                                               // a NaN component is missing too
  VectorField2D holes = f;  // NaN in both components, one region: every missing tuple the same
  for (int64_t y = 10; y < 30; ++y)
    for (int64_t x = 20; x < 50; ++x) holes.u[size_t(y * f.nx + x)] = holes.v[size_t(y * f.nx + x)] = NAN;
  const VectorField2D64 f64 = synth::turbulence64(53, 40, 5);
  VectorField2D64 masked64 = f64;
  for (size_t k = 3; k < f64.u.size(); k += 11) masked64.v[k] = NAN;
  for (Mode mode : {Mode::speculative, Mode::block, Mode::none})
    for (int threads : {1, 2}) {
      const std::string what = "mode " + std::to_string(int(mode)) + " threads " + std::to_string(threads);
      expect_same_stream(f, options_for(mode, threads), what);
      expect_same_stream(masked, options_for(mode, threads), what + " masked");
      expect_same_stream(holes, options_for(mode, threads), what + " NaN holes");
      expect_same_stream(f64, options_for(mode, threads), what + " float64");
      expect_same_stream(masked64, options_for(mode, threads), what + " float64 masked");
    }
  Options edges = options_for(Mode::speculative, 2);
  edges.exact_edges = 0xF;  // every outer row and column kept as it is
  expect_same_stream(f, edges, "exact edges");
}

TEST(CompressGiven, AFailureStillLeavesTheFieldEmpty) {
  VectorField2D f = synth::turbulence(16, 16, 1);
  f.u[3] = INFINITY;  // an infinite value at a valid vertex: invalid_argument
  auto r = compress(std::move(f), options_for(Mode::speculative, 1));
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_TRUE(f.u.empty() && f.v.empty() && f.nx == 0);  // NOLINT: the moved-from field's state is specified
  VectorField2D g = synth::turbulence(16, 16, 1);
  Options bad = options_for(Mode::speculative, 1);
  bad.policy = Policy(99);
  EXPECT_FALSE(compress(std::move(g), bad).ok());
  EXPECT_TRUE(g.u.empty() && g.nx == 0);  // NOLINT
}

TEST(CompressGiven, ThreeDStreamsAreTheOnesOfTheKeptField) {
  const VectorField3D abc = testing::abc_flow(19, 17, 15);
  const VectorField3D modes = testing::random_modes(15, 13, 11, 5);
  const VectorField3D ties = testing::tie_field(9, 8, 7, 3);
  VectorField3D masked = modes;
  masked.mask.assign(masked.u.size(), 0);
  for (size_t k = 0; k < masked.u.size(); k += 7) masked.mask[k] = 1;  // anchors and targets among them
  masked.w[10] = NAN;                                                   // a NaN component is missing too
  const VectorField3D64 modes64 = testing::widen(modes);
  for (Mode mode : {Mode::speculative, Mode::block, Mode::none})
    for (int threads : {1, 2})
      for (double rel : {1e-1, 1e-3}) {
        Options o = options_for(mode, threads);
        o.bound = rel;
        const std::string what =
            "3D mode " + std::to_string(int(mode)) + " threads " + std::to_string(threads) + " REL " + std::to_string(rel);
        expect_same_stream(abc, o, what + " abc");
        expect_same_stream(modes, o, what + " modes");
        expect_same_stream(ties, o, what + " ties");
        expect_same_stream(masked, o, what + " masked");
        expect_same_stream(modes64, o, what + " float64");
      }
  Options o = options_for(Mode::speculative, 2);
  o.anchor_stride = 4;  // many anchors: their exact values come from the state
  expect_same_stream(modes, o, "anchor stride 4");
  Options exact = options_for(Mode::speculative, 2);
  exact.bound = 0.0;  // every vertex exact
  expect_same_stream(abc, exact, "bound 0");
  Options faces = options_for(Mode::speculative, 2);
  faces.exact_edges = 0x3F;  // every outer face kept as it is
  expect_same_stream(abc, faces, "exact faces");
  expect_same_stream(testing::widen(abc), faces, "exact faces float64");
}

TEST(CompressGiven, AThreeDFailureStillLeavesTheFieldEmpty) {
  VectorField3D f = testing::random_modes(8, 7, 6, 1);
  f.v[3] = INFINITY;  // an infinite value at a valid vertex: invalid_argument
  auto r = compress(std::move(f), options_for(Mode::speculative, 1));
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_TRUE(f.u.empty() && f.w.empty() && f.nx == 0);  // NOLINT: the moved-from field's state is specified
  VectorField3D g = testing::random_modes(8, 7, 6, 1);
  Options bad = options_for(Mode::speculative, 1);
  bad.policy = Policy(99);
  EXPECT_FALSE(compress(std::move(g), bad).ok());
  EXPECT_TRUE(g.u.empty() && g.nz == 0);  // NOLINT
}

}  // namespace
}  // namespace factz
