// Critical-point extraction throughput: median of repeated runs of factz::critical_points
// on a synthetic turbulent field (or on given raw files).
//   extract_bench [NX NY [REPEATS [THREADS]]]            synthetic turbulence, seed 7
//   extract_bench NX NY REPEATS THREADS U.f32 V.f32      a given field
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "bench_field.hpp"

int main(int argc, char** argv) {
  const int64_t nx = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int64_t ny = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  auto loaded = factz::bench::load_field(nx, ny, argc > 6 ? argv[5] : nullptr, argc > 6 ? argv[6] : nullptr);
  if (!loaded) return 1;
  const factz::VectorField2D f = std::move(*loaded);
  std::vector<double> secs;
  size_t count = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto cps = factz::critical_points(f, factz::Exec{threads});
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!cps.ok()) return 1;
    count = cps.value().size();
  }
  std::sort(secs.begin(), secs.end());
  const double med = secs[secs.size() / 2];
  std::printf("field=%lldx%lld threads=%d repeats=%d critical_points=%zu median_s=%.3f min_s=%.3f MB/s=%.1f\n",
              (long long)nx, (long long)ny, threads, repeats, count, med, secs.front(),
              double(f.size()) * 8 / med / 1e6);
  return 0;
}
