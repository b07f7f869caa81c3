// Symbol streams shaped like quantization codes (around 32768), for the coder tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace factz::testing {

/// Codes 32768 +- m with m geometric(p) and a random sign: skewed like real residuals.
inline std::vector<uint16_t> geometric_codes(uint64_t n, double p, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::geometric_distribution<int> mag(p);
  std::bernoulli_distribution neg(0.5);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    const int m = std::min(mag(rng), 32767);
    x = static_cast<uint16_t>(neg(rng) ? 32768 - m : 32768 + m);
  }
  return v;
}

/// Uniform over all 65536 symbols.
inline std::vector<uint16_t> uniform_codes(uint64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = static_cast<uint16_t>(rng());
  return v;
}

}  // namespace factz::testing
