// The field a benchmark runs on: two raw files when given, else synthetic turbulence.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "factz/io.hpp"
#include "synth.hpp"

namespace factz::bench {

/// Reads U and V (when both are non-null) or synthesizes turbulence (seed 7). Prints
/// the error and returns nothing on failure.
inline std::optional<VectorField2D> load_field(int64_t nx, int64_t ny, const char* u, const char* v) {
  if (!u || !v) return synth::turbulence(nx, ny, 7);
  auto r = read_vector_field(u, v, nx, ny);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().to_string().c_str());
    return std::nullopt;
  }
  return std::move(r.value());
}

/// The field of a study run as `PROGRAM U V NX NY REL [REL ...]` (predictor_bench,
/// block_interp_bench): 0 with `out` read, 2 after printing the usage (fewer arguments), 1
/// after printing why the files could not be read.
inline int load_uv_args(int argc, char** argv, VectorField2D& out) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s U V NX NY REL [REL ...]\n", argv[0]);
    return 2;
  }
  auto f = load_field(std::atoll(argv[3]), std::atoll(argv[4]), argv[1], argv[2]);
  if (!f) return 1;
  out = std::move(*f);
  return 0;
}

/// max - min over both components, in double (factz's REL range).
inline double value_range(const VectorField2D& f) {
  float lo = f.u.empty() ? 0.0f : f.u[0], hi = lo;
  for (const auto* p : {&f.u, &f.v})
    for (float x : *p) {
      lo = std::fmin(lo, x);
      hi = std::fmax(hi, x);
    }
  return double(hi) - double(lo);
}

}  // namespace factz::bench
