// 3D critical-point extraction (issue 22): median of repeated factz::critical_points on a
// synthetic 3D flow of N^3 vertices (bench/lib/synth3d.hpp), and optionally the field as raw
// float32 files for timing the whole `factz cp -3` process.
//   cp3d_bench FLOW N [REPEATS [THREADS [PREFIX]]]
//     FLOW: modes (random band-limited, seed 1), abc (ABC flow), tg (Taylor-Green with
//     w = 0.5 cos x cos y sin z); THREADS 0: the OpenMP default; PREFIX: also writes
//     PREFIX_u.f32, PREFIX_v.f32, PREFIX_w.f32.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "factz/io.hpp"
#include "factz/topology3d.hpp"
#include "synth3d.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cp3d_bench modes|abc|tg N [REPEATS [THREADS [PREFIX]]]\n");
    return 2;
  }
  const std::string flow = argv[1];
  const int64_t n = std::atoll(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  if (n < 2 || repeats < 1) {
    std::fprintf(stderr, "cp3d_bench: N must be at least 2 and REPEATS at least 1\n");
    return 2;
  }
  factz::VectorField3D f;
  if (flow == "modes") f = factz::testing::random_modes(n, n, n, 1);
  else if (flow == "abc") f = factz::testing::abc_flow(n, n, n);
  else if (flow == "tg") f = factz::testing::taylor_green(n, n, n, 0.5);
  else {
    std::fprintf(stderr, "cp3d_bench: unknown flow '%s' (modes, abc, tg)\n", flow.c_str());
    return 2;
  }
  if (argc > 5) {
    const std::string prefix = argv[5];
    for (const auto& [name, plane] : {std::pair{"_u.f32", &f.u}, std::pair{"_v.f32", &f.v}, std::pair{"_w.f32", &f.w}}) {
      const factz::Status s = factz::write_plane(prefix + name, *plane, n, n * n);
      if (!s.ok()) {
        std::fprintf(stderr, "cp3d_bench: %s\n", s.to_string().c_str());
        return 1;
      }
    }
  }
  std::vector<double> secs;
  size_t count = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto cps = factz::critical_points(f, factz::Exec{threads});
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!cps.ok()) {
      std::fprintf(stderr, "cp3d_bench: %s\n", cps.status().to_string().c_str());
      return 1;
    }
    count = cps.value().size();
  }
  std::sort(secs.begin(), secs.end());
  const double median = secs[secs.size() / 2];
  std::printf("flow=%s n=%lld threads=%d critical_points=%zu median_seconds=%.4f mb_per_s=%.1f\n", flow.c_str(),
              static_cast<long long>(n), threads, count, median, double(f.size()) * 12.0 / median / 1e6);
  return 0;
}
