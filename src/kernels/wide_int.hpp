// A fixed-width two's-complement integer for the 3D vector-field predicates (issue 22,
// docs/architecture.md "3D vector fields"). No heap, host and device.
//
// Every float is an integer multiple of 2^-149 (the smallest subnormal), so x * 2^149 is an
// integer below 2^277: `scaled(x)`. A polynomial of degree k in such integers, with a
// bounded number of terms, has a proven bit length, and a WideInt<N> of 32 * N bits holds it
// exactly. Arithmetic is modulo 2^(32 N) (ring arithmetic: the exact result whenever it fits,
// which each caller proves for its N), so the sign of the result is the exact sign.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/hd.hpp"

namespace factz::detail {

template <int N>
struct WideInt {
  uint32_t w[N];  ///< little-endian limbs, two's complement

  FACTZ_HD static WideInt zero() {
    WideInt r;
    for (int i = 0; i < N; ++i) r.w[i] = 0;
    return r;
  }

  FACTZ_HD static WideInt from_int(int64_t v) {
    WideInt r;
    const uint64_t u = uint64_t(v);
    const uint32_t fill = v < 0 ? 0xffffffffu : 0u;
    for (int i = 0; i < N; ++i) r.w[i] = i == 0 ? uint32_t(u) : (i == 1 ? uint32_t(u >> 32) : fill);
    return r;
  }

  /// The finite float x times 2^149: an integer of at most 277 bits (N >= 10).
  FACTZ_HD static WideInt scaled(float x) {
#if defined(__CUDA_ARCH__)
    const uint32_t b = __float_as_uint(x);
#else
    uint32_t b;
    std::memcpy(&b, &x, 4);
#endif
    const uint32_t e = (b >> 23) & 0xffu;
    const uint64_t m = e == 0 ? (b & 0x7fffffu) : ((b & 0x7fffffu) | 0x800000u);
    const int shift = e == 0 ? 0 : int(e) - 1;  // x = m * 2^(e - 150) for e > 0
    WideInt r = zero();
    const int word = shift / 32, bit = shift % 32;
    const uint64_t lo = m << bit;  // m < 2^24, bit < 32: fits in 56 bits
    r.w[word] = uint32_t(lo);
    if (word + 1 < N) r.w[word + 1] = uint32_t(lo >> 32);
    return (b >> 31) ? -r : r;
  }

  FACTZ_HD WideInt operator-() const {
    WideInt r;
    uint64_t carry = 1;
    for (int i = 0; i < N; ++i) {
      const uint64_t s = uint64_t(~w[i]) + carry;
      r.w[i] = uint32_t(s);
      carry = s >> 32;
    }
    return r;
  }

  FACTZ_HD friend WideInt operator+(const WideInt& a, const WideInt& b) {
    WideInt r;
    uint64_t carry = 0;
    for (int i = 0; i < N; ++i) {
      const uint64_t s = uint64_t(a.w[i]) + b.w[i] + carry;
      r.w[i] = uint32_t(s);
      carry = s >> 32;
    }
    return r;
  }

  FACTZ_HD friend WideInt operator-(const WideInt& a, const WideInt& b) { return a + (-b); }

  /// The product modulo 2^(32 N) (exact when it fits). Out of line: its loops are long.
  FACTZ_HD_COLD friend WideInt operator*(const WideInt& a, const WideInt& b) {
    WideInt r = zero();
    int na = N, nb = N;  // skip the leading limbs that only carry the sign
    const bool a_neg = a.negative(), b_neg = b.negative();
    const WideInt ma = a_neg ? -a : a, mb = b_neg ? -b : b;
    while (na > 0 && ma.w[na - 1] == 0) --na;
    while (nb > 0 && mb.w[nb - 1] == 0) --nb;
    for (int i = 0; i < na; ++i) {
      uint64_t carry = 0;
      for (int j = 0; j < nb && i + j < N; ++j) {
        const uint64_t cur = uint64_t(r.w[i + j]) + uint64_t(ma.w[i]) * mb.w[j] + carry;
        r.w[i + j] = uint32_t(cur);
        carry = cur >> 32;
      }
      if (i + nb < N) r.w[i + nb] = uint32_t(carry);
    }
    return a_neg != b_neg ? -r : r;
  }

  FACTZ_HD friend WideInt operator*(int64_t k, const WideInt& a) { return from_int(k) * a; }

  FACTZ_HD bool negative() const { return (w[N - 1] >> 31) != 0; }

  FACTZ_HD int sign() const {
    if (negative()) return -1;
    for (int i = 0; i < N; ++i)
      if (w[i] != 0) return 1;
    return 0;
  }
};

}  // namespace factz::detail
