// Contour tree and TopoSZ benchmark.
//   ct_bench tree FILE|synthetic NX NY [NZ] [P]     time the contour tree (P: REL persistence)
//   ct_bench codec FILE NX NY [NZ] REL P            compress (none and contour-tree), verify
// Prints one key=value line per measurement. "synthetic" is a smooth field with noise.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "factz/contour_tree.hpp"
#include "factz/io.hpp"
#include "factz/scalar.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

factz::ScalarField synthetic(int64_t nx, int64_t ny, int64_t nz) {
  factz::ScalarField f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values.resize(size_t(nx * ny * nz));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> noise(-0.01f, 0.01f);
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        f.values[size_t((z * ny + y) * nx + x)] = std::sin(0.05f * float(x)) * std::cos(0.07f * float(y)) +
                                                  0.5f * std::sin(0.03f * float(z + x)) + noise(rng);
  return f;
}

bool load(const std::string& path, int64_t nx, int64_t ny, int64_t nz, factz::ScalarField& f) {
  if (path == "synthetic") {
    f = synthetic(nx, ny, nz);
    return true;
  }
  auto r = factz::read_plane(path, nx, ny * nz);
  if (!r.ok()) {
    std::fprintf(stderr, "ct_bench: %s\n", r.status().to_string().c_str());
    return false;
  }
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  f.values = std::move(r.value());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: ct_bench tree FILE|synthetic NX NY [NZ] [P]\n       ct_bench codec FILE NX NY NZ REL P\n");
    return 2;
  }
  const std::string what = argv[1], path = argv[2];
  const int64_t nx = std::atoll(argv[3]), ny = std::atoll(argv[4]), nz = argc > 5 ? std::atoll(argv[5]) : 1;
  factz::ScalarField f;
  if (!load(path, nx, ny, nz, f)) return 1;
  if (what == "tree") {
    factz::CtOptions o;
    o.persistence = argc > 6 ? std::atof(argv[6]) : 0.0;
    for (bool seg : {false, true}) {
      o.segmentation = seg;
      const auto t0 = Clock::now();
      auto t = factz::contour_tree(f, o);
      const double s = since(t0);
      if (!t.ok()) return 1;
      std::printf("field=%s nx=%lld ny=%lld nz=%lld persistence=%g segmentation=%d seconds=%.3f full_nodes=%lld "
                  "nodes=%zu pruned_pairs=%lld\n",
                  path.c_str(), (long long)nx, (long long)ny, (long long)nz, o.persistence, int(seg), s,
                  (long long)t->full_nodes, t->nodes.size(), (long long)t->pruned_pairs);
    }
    return 0;
  }
  if (what == "codec" && argc >= 8) {
    const double rel = std::atof(argv[6]), p = std::atof(argv[7]);
    for (auto mode : {factz::ScalarMode::none, factz::ScalarMode::contour_tree}) {
      factz::ScalarOptions o;
      o.mode = mode;
      o.bound = rel;
      o.persistence = p;
      factz::ScalarCompressStats st;
      auto t0 = Clock::now();
      auto s = factz::compress_scalar(f, o, &st);
      const double cs = since(t0);
      if (!s.ok()) return 1;
      t0 = Clock::now();
      auto d = factz::decompress_scalar(s.value());
      const double ds = since(t0);
      if (!d.ok()) return 1;
      auto c = factz::compare_scalar(f, d.value(), factz::BoundMode::rel, p);
      if (!c.ok()) return 1;
      std::printf("field=%s mode=%s rel=%g persistence=%g ratio=%.3f exact=%lld iterations=%lld compress_s=%.3f "
                  "decompress_s=%.3f fp=%lld fn=%lld ft=%lld arcs_diff=%lld pairs_diff=%lld max_err=%.6g eb=%.6g "
                  "psnr=%.2f nodes=%lld\n",
                  path.c_str(), mode == factz::ScalarMode::none ? "none" : "contour-tree", rel, p,
                  double(f.values.size()) * 4.0 / double(s->size()), (long long)st.exact_vertices,
                  (long long)st.iterations, cs, ds, (long long)c->tree.false_positive,
                  (long long)c->tree.false_negative, (long long)c->tree.false_type,
                  (long long)(c->tree.arcs_missing + c->tree.arcs_extra),
                  (long long)(c->tree.pairs_missing + c->tree.pairs_extra), c->max_abs_error, st.eb_abs, c->psnr,
                  (long long)c->tree.nodes_original);
    }
    return 0;
  }
  std::fprintf(stderr, "ct_bench: unknown command '%s'\n", what.c_str());
  return 2;
}
