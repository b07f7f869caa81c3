// An independent, brute-force exact reference of the topology contract
// (ARCHITECTURE.md section 3), written from the contract text alone. It shares no code
// with src/kernels/: every decision is made on exact integers (a small fixed-capacity
// big integer defined here), never on a rounded floating-point value, and the formulas
// are written in a different (but algebraically equal) form from the kernels', so that a
// shared mistake is unlikely. It is slow on purpose; tests use it as the oracle.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "factz/cp_type.hpp"

namespace factz::testref {

/// Signed integer of at most 32 * L bits in sign-magnitude form. Every operation checks
/// for overflow and throws std::overflow_error instead of wrapping, so a capacity that is
/// too small can never produce a wrong sign silently.
template <int L>
class BigInt {
 public:
  BigInt() = default;

  /// magnitude * 2^shift with the given sign.
  static BigInt from_shifted(uint64_t magnitude, int shift, bool negative) {
    BigInt r;
    if (magnitude == 0) return r;
    if (shift < 0) throw std::invalid_argument("BigInt: negative shift");
    const int word = shift / 32;
    const int bit = shift % 32;
    // The shifted magnitude has at most 64 + 31 bits: spread it over three words.
    const uint64_t low = magnitude << bit;
    const uint64_t high = bit == 0 ? 0 : magnitude >> (64 - bit);
    const uint32_t words[3] = {static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32),
                               static_cast<uint32_t>(high)};
    for (int k = 0; k < 3; ++k) {
      const uint32_t w = words[k];
      if (w == 0) continue;
      if (word + k >= L) throw std::overflow_error("BigInt: capacity exceeded");
      r.limb_[word + k] = w;
      r.used_ = word + k + 1;
    }
    r.negative_ = negative;
    return r;
  }

  static BigInt from_int(int64_t v) {
    const bool neg = v < 0;
    const uint64_t mag = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    return from_shifted(mag, 0, neg);
  }

  int sign() const { return used_ == 0 ? 0 : (negative_ ? -1 : 1); }

  BigInt operator-() const {
    BigInt r = *this;
    if (r.used_ != 0) r.negative_ = !r.negative_;
    return r;
  }

  friend BigInt operator+(const BigInt& a, const BigInt& b) { return add(a, b, false); }
  friend BigInt operator-(const BigInt& a, const BigInt& b) { return add(a, b, true); }

  friend BigInt operator*(const BigInt& a, const BigInt& b) {
    BigInt r;
    if (a.used_ == 0 || b.used_ == 0) return r;
    if (a.used_ + b.used_ - 1 > L) throw std::overflow_error("BigInt: capacity exceeded");
    std::array<uint64_t, 2 * L + 1> acc{};
    for (int i = 0; i < a.used_; ++i) {
      uint64_t carry = 0;
      for (int j = 0; j < b.used_; ++j) {
        const uint64_t cur = acc[i + j] + uint64_t(a.limb_[i]) * b.limb_[j] + carry;
        acc[i + j] = cur & 0xffffffffu;
        carry = cur >> 32;
      }
      acc[i + b.used_] += carry;
    }
    int used = a.used_ + b.used_;
    while (used > 0 && acc[used - 1] == 0) --used;
    if (used > L) throw std::overflow_error("BigInt: capacity exceeded");
    for (int k = 0; k < used; ++k) r.limb_[k] = static_cast<uint32_t>(acc[k]);
    r.used_ = used;
    r.negative_ = a.negative_ != b.negative_;
    return r;
  }

  /// -1, 0, +1 as a < b, a == b, a > b.
  friend int compare(const BigInt& a, const BigInt& b) { return (a - b).sign(); }
  friend bool operator==(const BigInt& a, const BigInt& b) { return compare(a, b) == 0; }

 private:
  // |a| vs |b|: -1, 0, +1.
  static int compare_magnitude(const BigInt& a, const BigInt& b) {
    if (a.used_ != b.used_) return a.used_ < b.used_ ? -1 : 1;
    for (int k = a.used_ - 1; k >= 0; --k) {
      if (a.limb_[k] != b.limb_[k]) return a.limb_[k] < b.limb_[k] ? -1 : 1;
    }
    return 0;
  }

  // a + b (subtract: a - b) by the schoolbook rules of signed magnitudes.
  static BigInt add(const BigInt& a, const BigInt& b, bool subtract) {
    const bool b_negative = (b.used_ != 0) && (b.negative_ != subtract);
    BigInt r;
    if (a.negative_ == b_negative || a.used_ == 0 || b.used_ == 0) {
      // Same signs (or a zero operand): add magnitudes.
      const int n = a.used_ > b.used_ ? a.used_ : b.used_;
      uint64_t carry = 0;
      for (int k = 0; k < n; ++k) {
        const uint64_t cur = uint64_t(k < a.used_ ? a.limb_[k] : 0) +
                             uint64_t(k < b.used_ ? b.limb_[k] : 0) + carry;
        r.limb_[k] = static_cast<uint32_t>(cur);
        carry = cur >> 32;
      }
      r.used_ = n;
      if (carry != 0) {
        if (n >= L) throw std::overflow_error("BigInt: capacity exceeded");
        r.limb_[n] = static_cast<uint32_t>(carry);
        r.used_ = n + 1;
      }
      r.negative_ = a.used_ != 0 ? a.negative_ : b_negative;
    } else {
      // Opposite signs: subtract the smaller magnitude from the larger.
      const int c = compare_magnitude(a, b);
      if (c == 0) return r;
      const BigInt& big = c > 0 ? a : b;
      const BigInt& small = c > 0 ? b : a;
      int64_t borrow = 0;
      for (int k = 0; k < big.used_; ++k) {
        int64_t cur = int64_t(big.limb_[k]) - int64_t(k < small.used_ ? small.limb_[k] : 0) -
                      borrow;
        borrow = cur < 0 ? 1 : 0;
        if (cur < 0) cur += int64_t(1) << 32;
        r.limb_[k] = static_cast<uint32_t>(cur);
      }
      r.used_ = big.used_;
      r.negative_ = c > 0 ? a.negative_ : b_negative;
    }
    while (r.used_ > 0 && r.limb_[r.used_ - 1] == 0) --r.used_;
    if (r.used_ == 0) r.negative_ = false;
    return r;
  }

  std::array<uint32_t, L> limb_{};
  int used_ = 0;
  bool negative_ = false;
};

/// Exact value of a float32 in units of 2^-149 (the smallest subnormal): every finite
/// float is an integer multiple of it, below 2^277 in magnitude. Products of two such
/// values and the few sums the contract needs stay below 2^561, far inside 20 * 32 bits.
using FloatInt = BigInt<20>;
/// Exact value of a double in units of 2^-1074: below 2^2098; sums of up to 64 of them fit.
using DoubleInt = BigInt<72>;

/// Throws std::invalid_argument for NaN and Inf.
FloatInt float_to_int(float f);
DoubleInt double_to_int(double d);

/// Exact sign (-1, 0, +1) of t[0] + ... + t[n-1] for any finite doubles (n <= 64).
int ref_sign_of_sum(const double* t, int n);

/// A point of the vector plane with its global vertex index (the origin has index -1).
struct RefPoint {
  float x = 0;
  float y = 0;
  int64_t index = 0;
};

/// Exact sign of D = det[[x0,y0,1],[x1,y1,1],[x2,y2,1]] without perturbation (may be 0).
int ref_orient_plain(RefPoint a, RefPoint b, RefPoint c);

/// Orientation with Simulation of Simplicity, exactly as the contract words it; +1 or -1.
/// Indices must be pairwise distinct (throws std::invalid_argument otherwise).
int ref_orient_sos(RefPoint a, RefPoint b, RefPoint c);

/// Inside test: s = orient(p0,p1,p2), s_k with point k replaced by the origin; all equal.
bool ref_contains_origin(RefPoint p0, RefPoint p1, RefPoint p2);

/// Exact signs of det J, tr J and disc = tr^2 - 4 det J for triangle kind t (0: T0, 1: T1)
/// with vertex values in contract order.
struct RefJacobianSigns {
  int det = 0;
  int tr = 0;
  int disc = 0;
};
RefJacobianSigns ref_jacobian_signs(int t, const float u[3], const float v[3]);

/// Type of the linear interpolant's Jacobian (regardless of whether the triangle is inside).
CpType ref_type(int t, const float u[3], const float v[3]);

/// Signature byte: 0 = no critical point, 1 + CpType otherwise.
uint8_t ref_signature(int t, const int64_t idx[3], const float u[3], const float v[3]);

/// The contract's mesh, restated: vertex indices of triangle `triangle` in contract order.
std::array<int64_t, 3> ref_triangle_vertices(int64_t nx, int64_t ny, int64_t triangle);
int64_t ref_triangle_count(int64_t nx, int64_t ny);

/// Signature of every triangle of an nx * ny field (planes x fastest).
std::vector<uint8_t> ref_signatures(int64_t nx, int64_t ny, const float* u, const float* v);

struct RefCriticalPoint {
  int64_t triangle = 0;
  CpType type{};
};
/// Every critical point, ordered by triangle id.
std::vector<RefCriticalPoint> ref_critical_points(int64_t nx, int64_t ny, const float* u,
                                                  const float* v);

/// Counts per CpType (index = numeric value of CpType).
std::array<int64_t, kCpTypeCount> ref_type_counts(const std::vector<RefCriticalPoint>& cps);

}  // namespace factz::testref
