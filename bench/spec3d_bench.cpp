// The 3D compressors (issue 22; the speculative mode by default, or the block mode or mode
// none with --mode) on synthetic 3D flows of N^3 vertices (bench/lib/synth3d.hpp): median
// compression and decompression times of factz::compress / factz::decompress3d, the ratio,
// the fraction of vertices stored exactly, and the ratio proxy of mode none: the three
// components compressed as 3D scalar fields in mode none at the same absolute bound (no
// topology guarantee), their stream sizes summed; and the process CPU seconds (all threads)
// of the median runs, which a busy machine does not inflate as it inflates wall time.
//   spec3d_bench [--mode speculative|block|none] FLOW N [REPEATS [THREADS [REL...]]]
//     FLOW: modes (random band-limited, seed 1), rough (48 random modes up to wavenumber 24,
//     seed 1: many critical points), abc, tg (Taylor-Green, w = 0.5 cos x cos y sin z),
//     file:PREFIX (the float32 planes PREFIX_u_NxNxN.f32, PREFIX_v_..., PREFIX_w_...);
//     THREADS 0: the OpenMP default; REL: bounds (default 1e-2 1e-3 1e-4).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/scalar.hpp"
#include "synth3d.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  factz::Mode mode = factz::Mode::speculative;
  if (argc > 2 && std::string(argv[1]) == "--mode") {
    const std::string m = argv[2];
    if (m == "block") mode = factz::Mode::block;
    else if (m == "none") mode = factz::Mode::none;
    else if (m != "speculative") {
      std::fprintf(stderr, "spec3d_bench: --mode takes speculative, block or none\n");
      return 2;
    }
    argv += 2;
    argc -= 2;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: spec3d_bench [--mode speculative|block|none] modes|rough|abc|tg|file:PREFIX N [REPEATS [THREADS [REL...]]]\n");
    return 2;
  }
  const std::string flow = argv[1];
  const int64_t n = std::atoll(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  std::vector<double> rels;
  for (int i = 5; i < argc; ++i) rels.push_back(std::atof(argv[i]));
  if (rels.empty()) rels = {1e-2, 1e-3, 1e-4};
  if (n < 2 || repeats < 1) {
    std::fprintf(stderr, "spec3d_bench: N must be at least 2 and REPEATS at least 1\n");
    return 2;
  }
  factz::VectorField3D f;
  if (flow == "modes") f = factz::testing::random_modes(n, n, n, 1);
  else if (flow == "rough") f = factz::testing::random_modes(n, n, n, 1, 48, 24);
  else if (flow == "abc") f = factz::testing::abc_flow(n, n, n);
  else if (flow == "tg") f = factz::testing::taylor_green(n, n, n, 0.5);
  else if (flow.rfind("file:", 0) == 0) {  // file:PREFIX reads PREFIX_{u,v,w}_NxNxN.f32
    f.nx = f.ny = f.nz = n;
    const std::string dims = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
    std::vector<float>* planes[3] = {&f.u, &f.v, &f.w};
    for (int c = 0; c < 3; ++c) {
      const std::string path = flow.substr(5) + "_" + "uvw"[c] + "_" + dims + ".f32";
      planes[c]->resize(size_t(n * n * n));
      std::FILE* in = std::fopen(path.c_str(), "rb");
      const size_t got = in ? std::fread(planes[c]->data(), sizeof(float), planes[c]->size(), in) : 0;
      if (in) std::fclose(in);
      if (got != planes[c]->size()) {
        std::fprintf(stderr, "spec3d_bench: cannot read %zu floats from %s\n", planes[c]->size(), path.c_str());
        return 2;
      }
    }
  } else {
    std::fprintf(stderr, "spec3d_bench: unknown flow '%s' (modes, rough, abc, tg, file:PREFIX)\n", flow.c_str());
    return 2;
  }
  const double raw = double(f.size()) * 12.0;
  std::printf("%-6s %5s %8s %9s %9s %10s %10s %9s %11s %10s %10s\n", "flow", "N", "REL", "ratio", "none_3x1",
              "comp_MB/s", "dec_MB/s", "exact_%", "frontend_s", "comp_cpu_s", "dec_cpu_s");
  for (double rel : rels) {
    factz::Options o;
    o.mode = mode;
    o.bound_mode = factz::BoundMode::rel;
    o.bound = rel;
    o.threads = threads;
    std::vector<double> ct, dt, ccpu, dcpu;
    std::vector<uint8_t> stream;
    factz::CompressStats st;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      auto s = factz::compress(f, o, &st);
      ct.push_back(seconds_since(t0));
      ccpu.push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
      if (!s.ok()) {
        std::fprintf(stderr, "spec3d_bench: %s\n", s.status().to_string().c_str());
        return 1;
      }
      stream = std::move(s.value());
    }
    factz::DecompressOptions d;
    d.threads = threads;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      auto g = factz::decompress3d(stream, d);
      dt.push_back(seconds_since(t0));
      dcpu.push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
      if (!g.ok()) {
        std::fprintf(stderr, "spec3d_bench: %s\n", g.status().to_string().c_str());
        return 1;
      }
    }
    // Mode none's proxy: each component as a 3D scalar field at the same absolute bound.
    size_t none_bytes = 0;
    for (const std::vector<float>* plane : {&f.u, &f.v, &f.w}) {
      factz::ScalarField s;
      s.nx = f.nx, s.ny = f.ny, s.nz = f.nz;
      s.values = *plane;
      factz::ScalarOptions so;
      so.mode = factz::ScalarMode::none;
      so.bound_mode = factz::BoundMode::abs;
      so.bound = st.eb_abs;
      so.threads = threads;
      auto c = factz::compress_scalar(s, so);
      if (!c.ok()) {
        std::fprintf(stderr, "spec3d_bench: %s\n", c.status().to_string().c_str());
        return 1;
      }
      none_bytes += c->size();
    }
    double frontend = 0;
    for (const auto& [stage, secs] : st.stage_seconds)
      if (stage == "frontend") frontend = secs;
    std::printf("%-6s %5lld %8.0e %9.2f %9.2f %10.1f %10.1f %9.3f %11.3f %10.3f %10.3f\n", flow.c_str(), (long long)n,
                rel, raw / double(stream.size()), raw / double(none_bytes), raw / median(ct) / 1e6,
                raw / median(dt) / 1e6, 100.0 * double(st.exact_vertices) / double(f.size()), frontend, median(ccpu),
                median(dcpu));
    // The stages of the last compression (the block frontend's own first), on stderr.
    std::fprintf(stderr, "  stages:");
    for (const auto& [stage, secs] : st.stage_seconds) std::fprintf(stderr, " %s %.3f", stage.c_str(), secs);
    std::fprintf(stderr, "\n");
  }
  return 0;
}
