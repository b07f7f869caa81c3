// The scalar streams' interpolation predictor (format versions 22 and 23; docs/toposz.md,
// "Predictors"): a multilevel cubic interpolation from already decoded values, the order
// SZ3's interpolation compressors made common (Zhao et al., ICDE 2021), written here from
// that description. Writer (scalar_quantizer.cpp) and decoder (scalar_codec.cpp) walk the
// vertices through interp_walk and predict with interp_predict, so they agree bit for bit
// (fixed operation order in T; the build turns floating-point contraction off).
//
// Order: vertex 0 first (predicted as 0), then for h = S / 2, S / 4, ..., 1, where S is the
// smallest power of two at least the largest dimension, three passes (in the order x, y, z:
// along x the vertices with x = h mod 2h, y = 0 mod 2h, z = 0 mod 2h; along y those with
// x = 0 mod h, y = h mod 2h, z = 0 mod 2h; along z those with x = 0 mod h, y = 0 mod h,
// z = h mod 2h; or in the order z, y, x, the same rule), each pass in index order. After
// level h every vertex whose coordinates are multiples of h is known, so a pass predicts
// from its axis neighbours at -3h, -h, +h, +3h, all known.
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

/// The order of the passes within a level (the stream's meta byte): along x, y, z, or along
/// z, y, x. Which one predicts better depends on the field (the geopotential at REL 1e-2:
/// 354.9 with x first, 621.9 with the slow axis first; the heated cylinder 108.0 and 88.0), so
/// the writer picks it per field (choose_interp_order, scalar_quantizer.hpp).
enum class InterpOrder : uint8_t { xyz = 0, zyx = 1 };
inline constexpr uint8_t kInterpOrderCount = 2;

/// Calls visit(v, pred, h) for every vertex v of the grid once, in the order above (the
/// passes of each level in `order`), with its prediction from `r` and its level's
/// half-stride h (S for vertex 0); visit must set r[v] (the decoded value) before it returns.
/// A pass along axis a visits the vertices whose coordinate on a is h mod 2h, whose
/// coordinates on the axes passed before it in this level are multiples of h and on the
/// others multiples of 2h, in index order.
template <class T, class Visit>
void interp_walk(const ScalarGrid& g, const T* r, Visit&& visit, InterpOrder order = InterpOrder::xyz) {
  visit(int64_t(0), T(0), interp_top_stride(g));
  const int64_t len[3] = {g.nx, g.ny, g.nz};
  const int64_t stride[3] = {1, g.nx, g.nx * g.ny};
  const int axes[2][3] = {{0, 1, 2}, {2, 1, 0}};
  const int* pass_axes = axes[order == InterpOrder::zyx ? 1 : 0];
  for (int64_t h = interp_top_stride(g) / 2; h >= 1; h /= 2) {
    bool done[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      const int a = pass_axes[k];
      int64_t first[3], step[3];
      for (int b = 0; b < 3; ++b) {
        first[b] = b == a ? h : 0;
        step[b] = b == a || !done[b] ? 2 * h : h;
      }
      for (int64_t z = first[2]; z < g.nz; z += step[2])
        for (int64_t y = first[1]; y < g.ny; y += step[1])
          for (int64_t x = first[0]; x < g.nx; x += step[0]) {
            const int64_t v = z * stride[2] + y * stride[1] + x;
            const int64_t c = a == 0 ? x : a == 1 ? y : z;
            visit(v, interp_predict(r, v, c, h, len[a], stride[a]), h);
          }
      done[a] = true;
    }
  }
}

}  // namespace factz::detail
