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

/// The vertices of one pass of interp_walk (the pass along `axis` at half-stride h): the
/// coordinate on each axis b runs from first[b] by step[b] below the grid's length, x fastest.
struct InterpPass {
  int axis = 0;
  int64_t first[3] = {0, 0, 0}, step[3] = {1, 1, 1};
};

/// The passes of level h in walk order (`order`): along axis a the vertices whose coordinate
/// on a is h mod 2h, whose coordinates on the axes passed before it in this level are
/// multiples of h and on the others multiples of 2h.
inline std::array<InterpPass, 3> interp_passes(int64_t h, InterpOrder order) {
  const int axes[2][3] = {{0, 1, 2}, {2, 1, 0}};
  const int* pass_axes = axes[order == InterpOrder::zyx ? 1 : 0];
  std::array<InterpPass, 3> out;
  bool done[3] = {false, false, false};
  for (int k = 0; k < 3; ++k) {
    const int a = pass_axes[k];
    out[size_t(k)].axis = a;
    for (int b = 0; b < 3; ++b) {
      out[size_t(k)].first[b] = b == a ? h : 0;
      out[size_t(k)].step[b] = b == a || !done[b] ? 2 * h : h;
    }
    done[a] = true;
  }
  return out;
}

/// Calls visit(v, pred, h) for every vertex v of the grid once, in the order above (the
/// passes of each level in `order`, interp_passes), with its prediction from `r` and its
/// level's half-stride h (S for vertex 0); visit must set r[v] (the decoded value) before it
/// returns. Each pass in index order. Kept beside interp_walk_parts rather than written as
/// its one-thread case: that version made the decoder's walk slower (a 256^3 mode-none
/// stream decoded in 0.261 s against 0.224 s, medians of 15).
template <class T, class Visit>
void interp_walk(const ScalarGrid& g, const T* r, Visit&& visit, InterpOrder order = InterpOrder::xyz) {
  visit(int64_t(0), T(0), interp_top_stride(g));
  const int64_t len[3] = {g.nx, g.ny, g.nz};
  const int64_t stride[3] = {1, g.nx, g.nx * g.ny};
  for (int64_t h = interp_top_stride(g) / 2; h >= 1; h /= 2)
    for (const InterpPass& p : interp_passes(h, order)) {
      const int a = p.axis;
      for (int64_t z = p.first[2]; z < g.nz; z += p.step[2])
        for (int64_t y = p.first[1]; y < g.ny; y += p.step[1])
          for (int64_t x = p.first[0]; x < g.nx; x += p.step[0]) {
            const int64_t v = z * stride[2] + y * stride[1] + x;
            const int64_t c = a == 0 ? x : a == 1 ? y : z;
            visit(v, interp_predict(r, v, c, h, len[a], stride[a]), h);
          }
    }
}

/// A pass of at least this many vertices is shared among threads by interp_walk_parts.
inline constexpr int64_t kInterpPartsFrom = int64_t(1) << 15;

/// interp_walk with each pass's rows (its lines along x) shared among at most `threads`
/// threads: visit(v, pred, h, part) is called for every vertex with what interp_walk gives
/// visit(v, pred, h), `part` numbering the contiguous runs of rows the pass was cut into, in
/// walk order (part p's vertices all come before part p + 1's in interp_walk's order). A pass
/// predicts only from vertices of earlier passes and levels, so its visits are independent:
/// visit may write r[v] and data of its part only. After vertex 0 and after every pass,
/// merged(parts) is called on the calling thread with the number of parts used (1 for a pass
/// under kInterpPartsFrom vertices), so that the caller can append the parts' outputs in
/// walk order: the result is then the same for any number of threads.
template <class T, class Visit, class Merged>
void interp_walk_parts(const ScalarGrid& g, const T* r, int threads, Visit&& visit, Merged&& merged,
                       InterpOrder order = InterpOrder::xyz) {
  visit(int64_t(0), T(0), interp_top_stride(g), 0);
  merged(1);
  const int64_t len[3] = {g.nx, g.ny, g.nz};
  const int64_t stride[3] = {1, g.nx, g.nx * g.ny};
  auto count = [](int64_t first, int64_t step, int64_t n) { return first < n ? (n - 1 - first) / step + 1 : 0; };
  for (int64_t h = interp_top_stride(g) / 2; h >= 1; h /= 2)
    for (const InterpPass& p : interp_passes(h, order)) {
      const int a = p.axis;
      const int64_t ny = count(p.first[1], p.step[1], g.ny), rows = count(p.first[2], p.step[2], g.nz) * ny;
      const int64_t per_row = count(p.first[0], p.step[0], g.nx);
      const int parts = rows * per_row >= kInterpPartsFrom ? int(std::max<int64_t>(1, std::min<int64_t>(threads, rows))) : 1;
      auto run = [&](int part) {
        for (int64_t i = rows * part / parts, end = rows * (part + 1) / parts; i < end; ++i) {
          const int64_t z = p.first[2] + (i / ny) * p.step[2], y = p.first[1] + (i % ny) * p.step[1];
          for (int64_t x = p.first[0]; x < g.nx; x += p.step[0]) {
            const int64_t v = z * stride[2] + y * stride[1] + x;
            const int64_t c = a == 0 ? x : a == 1 ? y : z;
            visit(v, interp_predict(r, v, c, h, len[a], stride[a]), h, part);
          }
        }
      };
      if (parts == 1) {
        run(0);
      } else {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
        for (int part = 0; part < parts; ++part) run(part);
      }
      merged(parts);
    }
}

}  // namespace factz::detail
