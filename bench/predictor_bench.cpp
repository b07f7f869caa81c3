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
#include <vector>

#include "bench_field.hpp"
#include "multilevel.hpp"

namespace {

using factz::bench::multilevel;

/// Order-0 entropy of the codes, bits per value.
double entropy_bits(const std::vector<int64_t>& codes) {
  return factz::bench::entropy_total_bits(codes) / double(codes.size());
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
  for (int64_t i = 0; i < n; ++i) codes[size_t(i)] = int64_t(q[size_t(i)] - factz::bench::tile_lorenzo(q, nx, i));
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
  factz::VectorField2D field;
  if (const int rc = factz::bench::load_uv_args(argc, argv, field)) return rc;
  const int64_t nx = field.nx, ny = field.ny;
  const double range = factz::bench::value_range(field);
  std::printf("| REL | lorenzo bits | interp-q bits | interp-d bits | lorenzo ~ratio | interp-q ~ratio | interp-d ~ratio |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int k = 5; k < argc; ++k) {
    const double rel = std::atof(argv[k]), eb = rel * range;
    const Bits bu = component_bits(field.u, nx, ny, eb), bv = component_bits(field.v, nx, ny, eb);
    const double l = (bu.lorenzo + bv.lorenzo) / 2, iq = (bu.interp_q + bv.interp_q) / 2,
                 id = (bu.interp_d + bv.interp_d) / 2;
    std::printf("| %g | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f |\n", rel, l, iq, id, 32 / l, 32 / iq, 32 / id);
  }
  return 0;
}
