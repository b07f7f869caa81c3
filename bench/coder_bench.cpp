// Entropy coder throughput and size: canonical Huffman against byte-plane rANS on
// synthetic quantization codes (32768 plus residuals of several shapes and scales).
//   coder_bench [N_MILLION_SYMBOLS [THREADS]]
// Throughput is MB/s of uint16 input symbols (2 bytes each), the median of 5 in-memory
// runs; every decode is checked against the input. Set OMP_WAIT_POLICY=passive on small
// machines so idle OpenMP workers do not spin against the timed thread.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "codec/ans.hpp"
#include "codec/huffman.hpp"

namespace {

using factz::Status;
namespace d = factz::detail;

constexpr int kRepeats = 5;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// splitmix64: fast, reproducible, good enough for synthetic residuals.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
};

uint16_t code_of(int64_t residual) {
  return static_cast<uint16_t>(std::clamp<int64_t>(32768 + residual, 0, 65535));
}

// Two-sided geometric (discrete Laplacian) residuals with mean magnitude about `scale`.
std::vector<uint16_t> laplacian_codes(uint64_t n, double scale, uint64_t seed) {
  Rng rng{seed};
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const int64_t mag = static_cast<int64_t>(std::floor(-scale * std::log(rng.uniform())));
    x = code_of((rng.next() & 1) ? -mag : mag);
  }
  return v;
}

// Rounded Gaussian residuals of standard deviation sigma (not memoryless, so the byte
// planes are not independent).
std::vector<uint16_t> gaussian_codes(uint64_t n, double sigma, uint64_t seed) {
  Rng rng{seed};
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const double r = std::sqrt(-2.0 * std::log(rng.uniform())) * std::cos(6.283185307179586 * rng.uniform());
    x = code_of(std::llround(sigma * r));
  }
  return v;
}

// A smooth field: 97% exact predictions, the rest small Laplacian residuals.
std::vector<uint16_t> mostly_zero_codes(uint64_t n, uint64_t seed) {
  std::vector<uint16_t> v = laplacian_codes(n, 3.0, seed);
  Rng rng{seed + 1};
  for (auto& x : v) {
    if (rng.uniform() < 0.97) x = 32768;
  }
  return v;
}

double entropy_bits(const std::vector<uint16_t>& v) {
  std::vector<uint64_t> hist(65536, 0);
  for (uint16_t s : v) ++hist[s];
  double bits = 0;
  for (uint64_t c : hist) {
    if (c != 0) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / static_cast<double>(v.size()));
  }
  return bits;
}

struct Timing {
  uint64_t bytes = 0;
  double encode_mbs = 0, decode_mbs = 0;
  bool ok = true;
};

using Encoder = std::function<Status(std::span<const uint16_t>, std::vector<uint8_t>&)>;
using Decoder = std::function<Status(std::span<const uint8_t>, std::span<uint16_t>)>;

Timing measure(const std::vector<uint16_t>& v, const Encoder& enc, const Decoder& dec) {
  Timing t;
  const double mb = 2.0 * static_cast<double>(v.size()) / 1e6;
  std::vector<uint8_t> blob;
  std::vector<uint16_t> back(v.size());
  std::vector<double> te, td;
  for (int r = 0; r < kRepeats; ++r) {
    const double t0 = now_s();
    t.ok = t.ok && enc(v, blob).ok();
    te.push_back(now_s() - t0);
  }
  for (int r = 0; r < kRepeats; ++r) {
    const double t0 = now_s();
    t.ok = t.ok && dec(blob, back).ok();
    td.push_back(now_s() - t0);
  }
  t.ok = t.ok && back == v;
  t.bytes = blob.size();
  t.encode_mbs = mb / median(te);
  t.decode_mbs = mb / median(td);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const double millions = argc > 1 ? std::atof(argv[1]) : 16.0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  const uint64_t n = static_cast<uint64_t>(millions * 1e6);
  if (n == 0 || threads < 1) {
    std::fprintf(stderr, "usage: coder_bench [N_MILLION_SYMBOLS [THREADS]]\n");
    return 2;
  }

  struct Dataset {
    std::string name;
    std::vector<uint16_t> codes;
  };
  std::vector<Dataset> sets;
  sets.push_back({"mostly-zero", mostly_zero_codes(n, 1)});
  char name[32];
  for (const double scale : {0.5, 2.0, 8.0, 32.0, 128.0, 1024.0}) {
    std::snprintf(name, sizeof name, "laplace b=%g", scale);
    sets.push_back({name, laplacian_codes(n, scale, 2 + static_cast<uint64_t>(scale))});
  }
  for (const double sigma : {4.0, 100.0}) {
    std::snprintf(name, sizeof name, "gauss s=%g", sigma);
    sets.push_back({name, gaussian_codes(n, sigma, 3)});
  }

  const Encoder huff_enc = [&](std::span<const uint16_t> s, std::vector<uint8_t>& out) {
    return d::huffman_encode(s, out, threads);
  };
  const Decoder huff_dec = [&](std::span<const uint8_t> in, std::span<uint16_t> s) {
    return d::huffman_decode(in, s, threads);
  };
  const Encoder ans_enc = [&](std::span<const uint16_t> s, std::vector<uint8_t>& out) {
    return d::ans_encode(s, d::kAnsCodeCenter, out, threads);
  };
  const Decoder ans_dec = [&](std::span<const uint8_t> in, std::span<uint16_t> s) {
    return d::ans_decode(in, d::kAnsCodeCenter, s, threads);
  };

  std::printf("coder_bench: %llu symbols (%.1f MB of uint16), %d threads, medians of %d runs\n",
              static_cast<unsigned long long>(n), 2.0 * static_cast<double>(n) / 1e6, threads, kRepeats);
  std::printf("%-15s %8s | %10s %8s %8s | %10s %8s %8s | %8s\n", "codes", "H bits", "huff B", "enc MB/s",
              "dec MB/s", "ans B", "enc MB/s", "dec MB/s", "ans/huff");
  bool all_ok = true;
  for (const Dataset& s : sets) {
    const double h = entropy_bits(s.codes) / static_cast<double>(n);
    const Timing th = measure(s.codes, huff_enc, huff_dec);
    const Timing ta = measure(s.codes, ans_enc, ans_dec);
    all_ok = all_ok && th.ok && ta.ok;
    std::printf("%-15s %8.3f | %10llu %8.0f %8.0f | %10llu %8.0f %8.0f | %8.4f%s\n", s.name.c_str(), h,
                static_cast<unsigned long long>(th.bytes), th.encode_mbs, th.decode_mbs,
                static_cast<unsigned long long>(ta.bytes), ta.encode_mbs, ta.decode_mbs,
                static_cast<double>(ta.bytes) / static_cast<double>(th.bytes), th.ok && ta.ok ? "" : "  ROUND TRIP FAILED");
  }
  return all_ok ? 0 : 1;
}
