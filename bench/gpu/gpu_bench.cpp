// GPU throughput of FaCTz: synthetic turbulence (bench/lib synth::turbulence) of the given
// sizes, per mode and coder, compression and decompression from device-resident input to
// device-resident output (compression: device planes -> stream bytes; decompression:
// stream bytes -> device planes), input bytes (8 per vertex) over the median wall time of
// repeated runs after one warm-up. Also the device part alone (everything up to the
// coded payloads back in host memory: both entropy coders run on the device; without the
// host stages: code lengths and ANS plans, zstd, container and CRC), the device CRC-32C
// over the input planes (the container's section checksums), and cudaMemcpy
// device-to-device bandwidth of the same GPU for scale. Then 3D fields (issue 22): an ABC
// flow of n^3 vertices per --sizes3d entry, modes block and speculative (ANS), through
// factz::compress / decompress3d with Policy::cuda (host memory in and out: the 3D path has
// no device-pointer entry yet), input bytes (12 per vertex) over the median wall time.
// Prints a markdown table.
//
//   factz_gpu_bench [--sizes 10000,20000] [--reps 3] [--bound 1e-2] [--modes none,block,speculative]
//                   [--coders huffman,ans] [--sizes3d 256 (0: none)]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/cuda_internal.hpp"
#include "factz/compress3d.hpp"
#include "factz/cuda.hpp"
#include "factz/factz.hpp"
#include "synth.hpp"
#include "synth3d.hpp"

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
  std::vector<int64_t> sizes = {10000, 20000}, sizes3d = {256};
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
    } else if (k == "--sizes3d") {
      sizes3d.clear();
      for (const auto& x : split(v))
        if (std::atoll(x.c_str()) > 0) sizes3d.push_back(std::atoll(x.c_str()));
    } else if (k == "--coders") {
      coders = split(v);
    } else {
      std::fprintf(stderr, "usage: factz_gpu_bench [--sizes A,B] [--reps N] [--bound REL] [--modes ...] [--coders ...] "
                           "[--sizes3d N,...]\n");
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
  for (int64_t n3 : sizes3d) {
    const auto f = factz::testing::abc_flow(n3, n3, n3);
    const double in_gb = 12.0 * double(f.size()) / 1e9;
    for (const factz::Mode mode : {factz::Mode::block, factz::Mode::speculative}) {
      factz::Options o;
      o.mode = mode;
      o.coder = factz::Coder::ans;
      o.bound = bound;
      o.zstd = false;
      o.policy = factz::Policy::cuda;
      std::vector<uint8_t> stream;
      factz::Status st;
      const double tc = median_seconds(reps, [&] {
        auto r = factz::compress(f, o);
        if (r.ok()) stream = std::move(r.value());
        else st = r.status();
      });
      if (!st.ok()) return fail("compress 3D", st);
      factz::DecompressOptions d;
      d.policy = factz::Policy::cuda;
      const double td = median_seconds(reps, [&] {
        auto r = factz::decompress3d(stream, d);
        if (!r.ok()) st = r.status();
      });
      if (!st.ok()) return fail("decompress 3D", st);
      std::printf("| %lld^3 (3D, ABC flow) | %s | ans | %.2f | %.2f | %.2f | (host memory in and out) |\n",
                  (long long)n3, factz::mode_name(mode), in_gb * 1e9 / double(stream.size()), in_gb / tc, in_gb / td);
      std::fflush(stdout);
    }
  }
  std::printf("\nreps %d (median after one warm-up), bound REL %g, zstd off; GB = 1e9 bytes of input (8 per vertex, "
              "12 in 3D).\n",
              reps, bound);
  return 0;
}
