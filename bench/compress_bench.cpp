// Compression / decompression throughput and ratio of one mode on one field:
// medians of repeated in-memory runs (no file I/O timed).
//   compress_bench MODE NX NY [REPEATS [THREADS [REL [U.f32 V.f32]]]]
// MODE is speculative, block or none, optionally :huffman or :ans (default huffman); without files the field is synthetic turbulence (seed 7).
// Decompression is timed with decompress_into on preallocated planes (the output buffer
// exists before the call, as on a GPU); the last reconstruction is verified (pointwise
// bound and critical points).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "bench_field.hpp"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: compress_bench MODE NX NY [REPEATS [THREADS [REL [U V]]]]\n");
    return 2;
  }
  // MODE[:CODER], e.g. speculative:ans (the coder defaults to huffman, the library default).
  const std::string spec = argv[1];
  const std::string mode = spec.substr(0, spec.find(':'));
  const std::string coder = spec.find(':') == std::string::npos ? "huffman" : spec.substr(spec.find(':') + 1);
  const int64_t nx = std::atoll(argv[2]), ny = std::atoll(argv[3]);
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;
  const int threads = argc > 5 ? std::atoi(argv[5]) : 0;
  const double rel = argc > 6 ? std::atof(argv[6]) : 1e-2;
  auto loaded = factz::bench::load_field(nx, ny, argc > 8 ? argv[7] : nullptr, argc > 8 ? argv[8] : nullptr);
  if (!loaded) return 1;
  const factz::VectorField2D f = std::move(*loaded);
  factz::Options o;
  o.mode = mode == "none" ? factz::Mode::none : mode == "block" ? factz::Mode::block : factz::Mode::speculative;
  o.coder = coder == "ans" ? factz::Coder::ans : factz::Coder::huffman;
  o.bound_mode = factz::BoundMode::rel;
  o.bound = rel;
  o.threads = threads;
  factz::DecompressOptions d;
  d.threads = threads;
  std::vector<double> tc, td;
  std::vector<uint8_t> stream;
  factz::VectorField2D out;
  out.nx = f.nx;
  out.ny = f.ny;
  out.u.assign(size_t(f.size()), 0.0f);
  out.v.assign(size_t(f.size()), 0.0f);
  factz::CompressStats st;
  for (int r = 0; r < repeats; ++r) {
    double t0 = now_s();
    auto s = factz::compress(f, o, &st);
    tc.push_back(now_s() - t0);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().to_string().c_str());
      return 1;
    }
    stream = std::move(s.value());
    t0 = now_s();
    auto x = factz::decompress_into(stream, out.u, out.v, d);
    td.push_back(now_s() - t0);
    if (!x.ok()) {
      std::fprintf(stderr, "%s\n", x.to_string().c_str());
      return 1;
    }
  }
  auto c = factz::compare(f, out);
  const double raw = double(f.size()) * 8;
  std::printf("mode=%s coder=%s field=%lldx%lld threads=%d rel=%g repeats=%d ratio=%.3f exact=%lld "
              "compress_median_s=%.3f compress_MBs=%.1f decompress_median_s=%.3f decompress_MBs=%.1f "
              "violations=%lld max_err=%.4g eb=%.4g\n",
              mode.c_str(), coder.c_str(), (long long)nx, (long long)ny, threads, rel, repeats, raw / double(stream.size()),
              (long long)st.exact_vertices, median(tc), raw / median(tc) / 1e6, median(td),
              raw / median(td) / 1e6, c.ok() ? (long long)c.value().violations() : -1LL,
              c.ok() ? std::max(c.value().max_abs_error[0], c.value().max_abs_error[1]) : -1.0, st.eb_abs);
  for (const auto& [name, secs] : st.stage_seconds) std::printf("  stage %-10s %.3f s\n", name.c_str(), secs);
  return 0;
}
