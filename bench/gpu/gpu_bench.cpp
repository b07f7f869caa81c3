// GPU throughput of FaCTz: synthetic turbulence (bench/lib synth::turbulence) of the given
// sizes, per mode and coder, compression and decompression from device-resident input to
// device-resident output (compression: device planes -> stream bytes; decompression:
// stream bytes -> device planes), input bytes (8 per vertex) over the median wall time of
// repeated runs after one warm-up. Also the device part alone (everything up to the
// coded payloads back in host memory: both entropy coders run on the device; without the
// host stages: code lengths and ANS plans, zstd, container and CRC), the device CRC-32C
// over the input planes (the container's section checksums), and cudaMemcpy
// device-to-device bandwidth of the same GPU for scale. Prints a markdown table.
//
//   factz_gpu_bench [--sizes 10000,20000] [--reps 3] [--bound 1e-2] [--modes none,block,speculative]
//                   [--coders huffman,ans]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/cuda_internal.hpp"
#include "factz/cuda.hpp"
#include "factz/factz.hpp"
#include "synth.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = std::min(s.find(',', a), s.size());
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

template <class F>
double median_seconds(int reps, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int fail(const std::string& what, const factz::Status& s) {
  std::fprintf(stderr, "factz_gpu_bench: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {10000, 20000};
  int reps = 3;
  double bound = 1e-2;
  std::vector<std::string> modes = {"none", "block", "speculative"}, coders = {"huffman", "ans"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--sizes") {
      sizes.clear();
      for (auto& s : split(v)) sizes.push_back(std::atoll(s.c_str()));
    } else if (k == "--reps") {
      reps = std::max(1, std::atoi(v.c_str()));
    } else if (k == "--bound") {
      bound = std::atof(v.c_str());
    } else if (k == "--modes") {
      modes = split(v);
    } else if (k == "--coders") {
      coders = split(v);
    } else {
      std::fprintf(stderr, "usage: factz_gpu_bench [--sizes A,B] [--reps N] [--bound REL] [--modes ...] [--coders ...]\n");
      return 2;
    }
  }
  if (auto st = factz::cuda::device_status(); !st.ok()) return fail("device", st);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("GPU: %s (%d SMs, %.1f GiB)\n\n", prop.name, prop.multiProcessorCount,
              double(prop.totalGlobalMem) / double(1u << 30));
  std::printf("| size | mode | coder | ratio | compress GB/s | decompress GB/s | device part of compress GB/s |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|\n");
  for (int64_t n1 : sizes) {
    const auto f = factz::synth::turbulence(n1, n1, 2026);
    const size_t bytes = size_t(f.size()) * 4;
    float *u = nullptr, *v = nullptr, *ou = nullptr, *ov = nullptr;
    for (float** p : {&u, &v, &ou, &ov})
      if (auto e = cudaMalloc(reinterpret_cast<void**>(p), bytes); e != cudaSuccess)
        return fail("cudaMalloc", factz::Status(factz::Code::cuda, cudaGetErrorString(e)));
    cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice);
    const double in_gb = 2.0 * double(bytes) / 1e9;
    factz::cuda::Workspace ws;
    for (const auto& mode_s : modes)
      for (const auto& coder_s : coders) {
        factz::Options o;
        o.mode = mode_s == "none" ? factz::Mode::none : mode_s == "block" ? factz::Mode::block : factz::Mode::speculative;
        o.coder = coder_s == "huffman" ? factz::Coder::huffman : factz::Coder::ans;
        o.bound = bound;
        o.zstd = false;  // the lossless stage is host-side and optional; off for throughput
        std::vector<uint8_t> stream;
        factz::Status st;
        const double tc = median_seconds(reps, [&] {
          auto r = factz::cuda::compress(u, v, f.nx, f.ny, o, nullptr, &ws);
          if (r.ok()) stream = std::move(r.value());
          else st = r.status();
        });
        if (!st.ok()) return fail("compress", st);
        const double td = median_seconds(reps, [&] {
          auto s2 = factz::cuda::decompress(stream, ou, ov, f.nx, f.ny, nullptr, &ws);
          if (!s2.ok()) st = s2;
        });
        if (!st.ok()) return fail("decompress", st);
        // The device part alone: the pipeline up to the payload copied back to the host.
        double range = 0.0;
        st = factz::cuda_detail::device_value_range(*ws.impl(), u, v, f.size(), nullptr, range);
        if (!st.ok()) return fail("range", st);
        const auto plan = factz::cuda_detail::make_plan(f.nx, f.ny, o, range);
        const double tdev = median_seconds(reps, [&] {
          if (o.mode == factz::Mode::speculative) {
            factz::cuda_detail::SpeculativePayload pl;
            st = factz::cuda_detail::device_compress_speculative(*ws.impl(), plan, u, v, /*missing=*/nullptr,
                                                                 nullptr, pl);
          } else {
            factz::cuda_detail::TiledPayload pl;
            st = factz::cuda_detail::device_compress_tiled(*ws.impl(), plan, u, v, /*missing=*/nullptr, nullptr, pl);
          }
        });
        if (!st.ok()) return fail("device part", st);
        std::printf("| %lldx%lld | %s | %s | %.2f | %.2f | %.2f | %.2f |\n", (long long)n1, (long long)n1, mode_s.c_str(),
                    coder_s.c_str(), in_gb * 1e9 / double(stream.size()), in_gb / tc, in_gb / td, in_gb / tdev);
        std::fflush(stdout);
      }
    const double tm = median_seconds(reps, [&] {
      cudaMemcpy(ou, u, bytes, cudaMemcpyDeviceToDevice);
      cudaMemcpy(ov, v, bytes, cudaMemcpyDeviceToDevice);
      cudaDeviceSynchronize();
    });
    std::printf("| %lldx%lld | cudaMemcpy D2D | - | - | %.2f (copied bytes / time) | | |\n", (long long)n1, (long long)n1,
                in_gb / tm);
    uint32_t crc = 0;
    factz::Status crc_st;
    const double tcrc = median_seconds(reps, [&] {
      crc_st = factz::cuda_detail::device_crc32c(*ws.impl(), reinterpret_cast<const uint8_t*>(u), bytes, nullptr, crc);
    });
    if (!crc_st.ok()) return fail("device crc32c", crc_st);
    std::printf("| %lldx%lld | device CRC-32C of u | - | - | %.2f (checksummed bytes / time) | | |\n", (long long)n1,
                (long long)n1, double(bytes) / 1e9 / tcrc);
    for (float* p : {u, v, ou, ov}) cudaFree(p);
  }
  std::printf("\nreps %d (median after one warm-up), bound REL %g, zstd off; GB = 1e9 bytes of input (8 per vertex).\n",
              reps, bound);
  return 0;
}
