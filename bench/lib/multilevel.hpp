// What the predictor studies share (predictor_bench, block_interp_bench): the order-0 entropy
// of a set of codes, the tiled backbone's Lorenzo prediction, and SZ3-style multilevel cubic
// interpolation on a 2D grid with anchors every kAnchor vertices.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace factz::bench {

inline constexpr int64_t kAnchor = 32;

/// Order-0 entropy of `codes` in bits, over all of them (not per code).
inline double entropy_total_bits(const std::vector<int64_t>& codes) {
  std::map<int64_t, int64_t> counts;
  for (int64_t c : codes) ++counts[c];
  double h = 0.0;
  const double n = double(codes.size());
  for (const auto& [code, m] : counts) h -= double(m) * std::log2(double(m) / n);
  return h;
}

/// The Lorenzo prediction of integer q[i] inside its kAnchor x kAnchor tile (neighbours
/// outside the tile count 0), as the tiled backbone predicts (modes none and block).
inline double tile_lorenzo(const std::vector<double>& q, int64_t nx, int64_t i) {
  const int64_t x = i % nx, y = i / nx;
  const bool l = x % kAnchor != 0, t = y % kAnchor != 0;
  return (l ? q[size_t(i - 1)] : 0.0) + (t ? q[size_t(i - nx)] : 0.0) - (l && t ? q[size_t(i - nx - 1)] : 0.0);
}

/// Interpolation at i (stride s) along a line of length len whose value j is at(j): cubic
/// where four points exist, else linear, else the left value.
template <class At>
double interpolate(const At& at, int64_t i, int64_t s, int64_t len) {
  if (i + s >= len) return at(i - s);
  if (i - 3 * s >= 0 && i + 3 * s < len)
    return (-at(i - 3 * s) + 9.0 * at(i - s) + 9.0 * at(i + s) - at(i + 3 * s)) / 16.0;
  return (at(i - s) + at(i + s)) / 2.0;
}

/// Calls visit(index, prediction) for every vertex in the multilevel order: the anchors by
/// Lorenzo on the anchor grid, then strides kAnchor / 2 .. 1, along x then y, predictions from
/// `vals`, which visit may update (a decoded value) before the next prediction reads it.
template <class Visit>
void multilevel(int64_t nx, int64_t ny, const std::vector<double>& vals, const Visit& visit) {
  for (int64_t y = 0; y < ny; y += kAnchor)
    for (int64_t x = 0; x < nx; x += kAnchor) {
      const int64_t i = y * nx + x;
      const double l = x ? vals[size_t(i - kAnchor)] : 0.0, t = y ? vals[size_t(i - kAnchor * nx)] : 0.0;
      const double tl = (x && y) ? vals[size_t(i - kAnchor * nx - kAnchor)] : 0.0;
      visit(i, l + t - tl);
    }
  for (int64_t s = kAnchor / 2; s >= 1; s /= 2) {
    for (int64_t y = 0; y < ny; y += 2 * s)
      for (int64_t x = s; x < nx; x += 2 * s)
        visit(y * nx + x, interpolate([&](int64_t j) { return vals[size_t(y * nx + j)]; }, x, s, nx));
    for (int64_t y = s; y < ny; y += 2 * s)
      for (int64_t x = 0; x < nx; x += s)
        visit(y * nx + x, interpolate([&](int64_t j) { return vals[size_t(j * nx + x)]; }, y, s, ny));
  }
}

}  // namespace factz::bench
