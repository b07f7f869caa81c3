// The scalar streams' interpolation predictor (format versions 22 and 23; docs/toposz.md,
// "Predictors"): a multilevel cubic interpolation from already decoded values, the order
// SZ3's interpolation compressors made common (Zhao et al., ICDE 2021), written here from
// that description. Writer (scalar_quantizer.cpp) and decoder (scalar_codec.cpp) walk the
// vertices through interp_walk and predict with interp_predict, so they agree bit for bit
// (fixed operation order in T; the build turns floating-point contraction off).
//
// Order: vertex 0 first (predicted as 0), then for h = S / 2, S / 4, ..., 1, where S is the
// smallest power of two at least the largest dimension, three passes: along x the vertices
// with x = h mod 2h, y = 0 mod 2h, z = 0 mod 2h; along y those with x = 0 mod h,
// y = h mod 2h, z = 0 mod 2h; along z those with x = 0 mod h, y = 0 mod h, z = h mod 2h;
// each pass in index order. After level h every vertex whose coordinates are multiples of h
// is known, so a pass predicts from its axis neighbours at -3h, -h, +h, +3h, all known.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "scalar/grid.hpp"

namespace factz::detail {

/// The prediction of the vertex at offset `v`, coordinate `c` along an axis of `len`
/// vertices whose neighbours lie `d` elements apart, from decoded values `r` at c - h
/// (always inside), c + h, c - 3h and c + 3h where inside: cubic with all four, quadratic
/// with three, the mean of the two inner ones, or past the end a linear extrapolation from
/// c - 3h and c - h (the value at c - h alone when that is all there is).
template <class T>
inline T interp_predict(const T* r, int64_t v, int64_t c, int64_t h, int64_t len, int64_t d) {
  const int64_t s = h * d;
  const T b = r[v - s];
  const bool left = c >= 3 * h;
  if (c + h >= len) return left ? T(1.5) * b - T(0.5) * r[v - 3 * s] : b;
  const T e = r[v + s];
  const bool right = c + 3 * h < len;
  if (left && right) return (T(9) * (b + e) - (r[v - 3 * s] + r[v + 3 * s])) * T(0.0625);
  if (right) return ((T(3) * b + T(6) * e) - r[v + 3 * s]) * T(0.125);
  if (left) return ((T(6) * b + T(3) * e) - r[v - 3 * s]) * T(0.125);
  return (b + e) * T(0.5);
}

/// The step of each level (level-wise bounds, as SZ3's successors tighten the coarse
/// levels, whose errors every finer prediction inherits): a vertex of half-stride h = 2^l
/// is quantized with step / min(1.2^l, 2) (1.2^l by repeated multiplication in double, one
/// division, then rounded to T: the same bits on every machine). Its error stays within the
/// bound (a smaller step); measured in docs/benchmarks.md.
inline constexpr double kInterpLevelGrowth = 1.2;
inline constexpr double kInterpLevelCap = 2.0;

template <class T>
struct InterpSteps {
  std::array<T, 64> by_level{};
  explicit InterpSteps(T step) {
    double f = 1.0;
    for (T& s : by_level) {
      s = T(double(step) / f);
      f = std::min(f * kInterpLevelGrowth, kInterpLevelCap);
    }
  }
  /// The step of a vertex visited with half-stride h (a power of two).
  T at(int64_t h) const { return by_level[size_t(std::bit_width(uint64_t(h)) - 1)]; }
};

/// The top stride S of interp_walk: the smallest power of two >= the largest dimension.
inline int64_t interp_top_stride(const ScalarGrid& g) {
  const int64_t m = g.nx > g.ny ? (g.nx > g.nz ? g.nx : g.nz) : (g.ny > g.nz ? g.ny : g.nz);
  int64_t s = 1;
  while (s < m) s <<= 1;
  return s;
}

/// Calls visit(v, pred, h) for every vertex v of the grid once, in the order above, with its
/// prediction from `r` and its level's half-stride h (S for vertex 0); visit must set r[v]
/// (the decoded value) before it returns.
template <class T, class Visit>
void interp_walk(const ScalarGrid& g, const T* r, Visit&& visit) {
  visit(int64_t(0), T(0), interp_top_stride(g));
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  for (int64_t h = interp_top_stride(g) / 2; h >= 1; h /= 2) {
    const int64_t h2 = 2 * h;
    for (int64_t z = 0; z < g.nz; z += h2)  // along x
      for (int64_t y = 0; y < g.ny; y += h2)
        for (int64_t x = h; x < g.nx; x += h2) {
          const int64_t v = z * sz + y * sy + x;
          visit(v, interp_predict(r, v, x, h, g.nx, int64_t(1)), h);
        }
    for (int64_t z = 0; z < g.nz; z += h2)  // along y
      for (int64_t y = h; y < g.ny; y += h2)
        for (int64_t x = 0; x < g.nx; x += h) {
          const int64_t v = z * sz + y * sy + x;
          visit(v, interp_predict(r, v, y, h, g.ny, sy), h);
        }
    for (int64_t z = h; z < g.nz; z += h2)  // along z
      for (int64_t y = 0; y < g.ny; y += h)
        for (int64_t x = 0; x < g.nx; x += h) {
          const int64_t v = z * sz + y * sy + x;
          visit(v, interp_predict(r, v, z, h, g.nz, sz), h);
        }
  }
}

}  // namespace factz::detail
