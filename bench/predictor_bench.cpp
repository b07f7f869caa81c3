// predictor_bench: how far each kind of predictor can take a field's codes, as the order-0
// entropy of the codes (bits per value; the coders add their tables, the zstd stage can take
// runs below it). Issue 20 asks block mode for cpSZ's ratio; this measures why the tiled
// backbone cannot reach it with any predictor on pre-quantized integers.
//
//   predictor_bench U V NX NY REL [REL ...]
//
// For each REL, eb = REL x the value range over u and v together (factz's REL), one bound
// for every vertex (no critical-point bound), and three predictors:
//   lorenzo   the tiled backbone's codes (modes none and block): q = round(x / 2eb), the
//             Lorenzo residual of q inside 32 x 32 tiles (neighbours outside the tile count 0).
//             On one lattice this equals Lorenzo on decoded values: the prediction of decoded
//             values is itself a lattice point, so code and value are the same.
//   interp-q  multilevel interpolation of the same integers q (anchors every 32 vertices coded
//             by Lorenzo on the anchor grid; then strides 16 .. 1, along x then y, cubic where
//             four points exist, else linear, else the left value), rounded to an integer.
//   interp-d  the same interpolation on decoded values (SZ3's and cpSZ's 2D predictor): the
//             code is round((x - p) / 2eb) and the value p + code * 2eb, a miss stored (one
//             symbol). A prediction within eb of the value costs code 0 and moves the value
//             off the lattice: what pre-quantized integers cannot do.
// Prints bits per value and 32 / bits (an order-0 estimate of the ratio).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "factz/io.hpp"

namespace {

constexpr int64_t kAnchor = 32;

double entropy_bits(const std::vector<int64_t>& codes) {
  std::map<int64_t, int64_t> counts;
  for (int64_t c : codes) ++counts[c];
  double h = 0.0;
  const double n = double(codes.size());
  for (const auto& [code, m] : counts) h -= double(m) / n * std::log2(double(m) / n);
  return h;
}

/// Interpolation at i (stride s) along a line of length len whose value j is at(j).
template <class At>
double interpolate(const At& at, int64_t i, int64_t s, int64_t len) {
  if (i + s >= len) return at(i - s);
  if (i - 3 * s >= 0 && i + 3 * s < len)
    return (-at(i - 3 * s) + 9.0 * at(i - s) + 9.0 * at(i + s) - at(i + 3 * s)) / 16.0;
  return (at(i - s) + at(i + s)) / 2.0;
}

/// Calls visit(index, prediction) for every vertex in the multilevel order, predictions from
/// `vals` (which visit may update before the next prediction reads them).
template <class Visit>
void multilevel(int64_t nx, int64_t ny, const std::vector<double>& vals, const Visit& visit) {
  for (int64_t y = 0; y < ny; y += kAnchor)
    for (int64_t x = 0; x < nx; x += kAnchor) {
      const int64_t i = y * nx + x;
      const double l = x ? vals[i - kAnchor] : 0.0, t = y ? vals[i - kAnchor * nx] : 0.0;
      const double tl = (x && y) ? vals[i - kAnchor * nx - kAnchor] : 0.0;
      visit(i, l + t - tl);
    }
  for (int64_t s = kAnchor / 2; s >= 1; s /= 2) {
    for (int64_t y = 0; y < ny; y += 2 * s)
      for (int64_t x = s; x < nx; x += 2 * s)
        visit(y * nx + x, interpolate([&](int64_t j) { return vals[y * nx + j]; }, x, s, nx));
    for (int64_t y = s; y < ny; y += 2 * s)
      for (int64_t x = 0; x < nx; x += s)
        visit(y * nx + x, interpolate([&](int64_t j) { return vals[j * nx + x]; }, y, s, ny));
  }
}

struct Bits {
  double lorenzo = 0, interp_q = 0, interp_d = 0;
};

Bits component_bits(const std::vector<float>& f, int64_t nx, int64_t ny, double eb) {
  const double step = 2.0 * eb;
  const int64_t n = nx * ny;
  std::vector<double> q(size_t(n), 0.0);
  for (int64_t i = 0; i < n; ++i) q[size_t(i)] = std::nearbyint(double(f[size_t(i)]) / step);
  std::vector<int64_t> codes(static_cast<size_t>(n));
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) {
      const int64_t i = y * nx + x;
      const bool l = x % kAnchor != 0, t = y % kAnchor != 0;
      const double p = (l ? q[size_t(i - 1)] : 0.0) + (t ? q[size_t(i - nx)] : 0.0) - (l && t ? q[size_t(i - nx - 1)] : 0.0);
      codes[size_t(i)] = int64_t(q[size_t(i)] - p);
    }
  Bits b;
  b.lorenzo = entropy_bits(codes);
  codes.clear();
  multilevel(nx, ny, q, [&](int64_t i, double p) { codes.push_back(int64_t(q[size_t(i)] - std::nearbyint(p))); });
  b.interp_q = entropy_bits(codes);
  codes.clear();
  std::vector<double> d(size_t(n), 0.0);
  constexpr int64_t kStored = int64_t(1) << 40;
  multilevel(nx, ny, d, [&](int64_t i, double p) {
    const double x = double(f[size_t(i)]);
    int64_t c = int64_t(std::nearbyint((x - p) / step));
    double r = p + double(c) * step;
    if (!(std::fabs(r - x) <= eb)) {
      r = x;
      c = kStored;
    }
    d[size_t(i)] = r;
    codes.push_back(c);
  });
  b.interp_d = entropy_bits(codes);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s U V NX NY REL [REL ...]\n", argv[0]);
    return 2;
  }
  const int64_t nx = std::atoll(argv[3]), ny = std::atoll(argv[4]);
  auto u = factz::read_plane(argv[1], nx, ny);
  auto v = factz::read_plane(argv[2], nx, ny);
  if (!u.ok() || !v.ok()) {
    std::fprintf(stderr, "%s\n", (!u.ok() ? u.status() : v.status()).to_string().c_str());
    return 1;
  }
  float lo = u.value()[0], hi = lo;
  for (const auto* p : {&u.value(), &v.value()})
    for (float x : *p) {
      lo = std::fmin(lo, x);
      hi = std::fmax(hi, x);
    }
  std::printf("| REL | lorenzo bits | interp-q bits | interp-d bits | lorenzo ~ratio | interp-q ~ratio | interp-d ~ratio |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int k = 5; k < argc; ++k) {
    const double rel = std::atof(argv[k]), eb = rel * (double(hi) - double(lo));
    const Bits bu = component_bits(u.value(), nx, ny, eb), bv = component_bits(v.value(), nx, ny, eb);
    const double l = (bu.lorenzo + bv.lorenzo) / 2, iq = (bu.interp_q + bv.interp_q) / 2,
                 id = (bu.interp_d + bv.interp_d) / 2;
    std::printf("| %g | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f |\n", rel, l, iq, id, 32 / l, 32 / iq, 32 / id);
  }
  return 0;
}
