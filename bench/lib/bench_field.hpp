// The field a benchmark runs on: two raw files when given, else synthetic turbulence.
#pragma once

#include <cstdio>
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

}  // namespace factz::bench
