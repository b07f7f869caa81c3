// Round-trip checks shared by the mode tests: compress, decompress, then assert the
// guarantees G0 (every value within eb) and G1 (zero lost / spurious / type-changed
// critical points, by the exact extractor).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "factz/factz.hpp"

namespace factz::testing {

struct RoundTrip {
  std::vector<uint8_t> stream;
  VectorField2D decoded;
  CompressStats stats;
  Comparison cmp;
};

/// Runs the round trip and records gtest failures for any broken guarantee
/// (`expect_topology` false for mode none, which makes no topological promise).
inline RoundTrip check_round_trip(const VectorField2D& f, const Options& o, const std::string& what,
                                  bool expect_topology = true) {
  RoundTrip rt;
  auto s = compress(f, o, &rt.stats);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return rt;
  rt.stream = std::move(s.value());
  auto d = decompress(rt.stream);
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return rt;
  rt.decoded = std::move(d.value());
  EXPECT_EQ(rt.decoded.nx, f.nx) << what;
  EXPECT_EQ(rt.decoded.ny, f.ny) << what;
  if (rt.decoded.size() != f.size()) return rt;
  const double eb = rt.stats.eb_abs;
  int64_t misses = 0, first = -1;
  for (int64_t k = 0; k < f.size(); ++k) {
    const bool miss = !(std::fabs(double(rt.decoded.u[k]) - double(f.u[k])) <= eb) ||
                      !(std::fabs(double(rt.decoded.v[k]) - double(f.v[k])) <= eb);
    if (miss && first < 0) first = k;
    misses += miss;
  }
  EXPECT_EQ(misses, 0) << what << ": pointwise bound " << eb << " broken, first at " << first << " ("
                       << f.u[size_t(std::max<int64_t>(first, 0))] << " -> "
                       << rt.decoded.u[size_t(std::max<int64_t>(first, 0))] << ")";
  auto c = compare(f, rt.decoded);
  EXPECT_TRUE(c.ok()) << what;
  if (!c.ok()) return rt;
  rt.cmp = c.value();
  if (expect_topology) {
    EXPECT_EQ(rt.cmp.lost, 0) << what;
    EXPECT_EQ(rt.cmp.spurious, 0) << what;
    EXPECT_EQ(rt.cmp.type_changed, 0) << what;
  }
  return rt;
}

/// Streams and decoded values must be identical for serial and 1, 2, 3 OpenMP threads.
inline void expect_thread_independent(const VectorField2D& f, Options o) {
  o.policy = Policy::serial;
  auto ref = compress(f, o);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  auto serial = decompress(ref.value(), DecompressOptions{Policy::serial, 1});
  ASSERT_TRUE(serial.ok());
  o.policy = Policy::omp;
  for (int t : {1, 2, 3}) {
    o.threads = t;
    auto s = compress(f, o);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.value(), ref.value()) << t << " threads";
    auto d = decompress(ref.value(), DecompressOptions{Policy::omp, t});
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.value().u, serial.value().u) << t << " threads";
    EXPECT_EQ(d.value().v, serial.value().v) << t << " threads";
  }
}

inline Options options(Mode mode, BoundMode bm, double bound) {
  Options o;
  o.mode = mode;
  o.bound_mode = bm;
  o.bound = bound;
  return o;
}

}  // namespace factz::testing
