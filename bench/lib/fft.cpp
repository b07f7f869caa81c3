// Recursive mixed-radix DIT FFT. At a level with radix p, sub-length m and input stride
// s (so p * m * s == n), the p interleaved sub-sequences are transformed recursively
// into out[r*m, r*m + m), then combined:
//   X[k + q m] = sum_r W_n^(r k s) Y_r[k] * W_p^(r q).
#include "fft.hpp"

#include <cmath>
#include <numbers>

namespace factz::synth {
namespace {

// Written out instead of std::complex operator*, which adds NaN/Inf recovery calls.
inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

bool is_smooth(int64_t n) {
  for (int64_t p : {2, 3, 5}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

}  // namespace

int64_t fft_good_size(int64_t n) {
  if (n <= 1) return 1;
  while (!is_smooth(n)) ++n;  // 5-smooth numbers are dense: the gap is a few percent
  return n;
}

FftPlan::FftPlan(int64_t n, FftDirection direction)
    : n_(n < 1 ? 1 : n), inverse_(direction == FftDirection::inverse) {
  int64_t rest = n_;
  // Radix 4 first (fewest operations), then the other small primes, then anything left.
  while (rest % 4 == 0) {
    radices_.push_back(4);
    rest /= 4;
  }
  for (int64_t p : {2, 3, 5}) {
    while (rest % p == 0) {
      radices_.push_back(p);
      rest /= p;
    }
  }
  for (int64_t p = 7; p * p <= rest; p += 2) {
    while (rest % p == 0) {
      radices_.push_back(p);
      rest /= p;
    }
  }
  if (rest > 1) radices_.push_back(rest);
  if (radices_.empty()) radices_.push_back(1);  // n == 1: a copy

  int64_t m = n_;
  for (int64_t p : radices_) {
    m /= p;
    remaining_.push_back(m);
  }

  const double sign = inverse_ ? 1.0 : -1.0;
  twiddles_.resize(static_cast<size_t>(n_));
  for (int64_t j = 0; j < n_; ++j) {
    const double angle = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n_);
    twiddles_[static_cast<size_t>(j)] = {std::cos(angle), sign * std::sin(angle)};
  }
}

void FftPlan::execute(const Complex* in, Complex* out) const { work(out, in, 1, 0); }

void FftPlan::work(Complex* out, const Complex* in, int64_t stride, size_t level) const {
  const int64_t p = radices_[level];
  const int64_t m = remaining_[level];
  if (m == 1) {
    for (int64_t r = 0; r < p; ++r) out[r] = in[r * stride];
  } else {
    for (int64_t r = 0; r < p; ++r) work(out + r * m, in + r * stride, stride * p, level + 1);
  }
  switch (p) {
    case 1:
      break;
    case 2:
      butterfly2(out, stride, m);
      break;
    case 3:
      butterfly3(out, stride, m);
      break;
    case 4:
      butterfly4(out, stride, m);
      break;
    case 5:
      butterfly5(out, stride, m);
      break;
    default:
      butterfly_any(out, stride, m, p);
      break;
  }
}

void FftPlan::butterfly2(Complex* out, int64_t stride, int64_t m) const {
  for (int64_t k = 0; k < m; ++k) {
    const Complex t = mul(out[k + m], twiddles_[static_cast<size_t>(k * stride)]);
    out[k + m] = out[k] - t;
    out[k] += t;
  }
}

void FftPlan::butterfly4(Complex* out, int64_t stride, int64_t m) const {
  for (int64_t k = 0; k < m; ++k) {
    const Complex a0 = out[k];
    const Complex t1 = mul(out[k + m], twiddles_[static_cast<size_t>(k * stride)]);
    const Complex t2 = mul(out[k + 2 * m], twiddles_[static_cast<size_t>(2 * k * stride)]);
    const Complex t3 = mul(out[k + 3 * m], twiddles_[static_cast<size_t>(3 * k * stride)]);
    const Complex s02 = a0 + t2;
    const Complex d02 = a0 - t2;
    const Complex s13 = t1 + t3;
    const Complex d = t1 - t3;
    // d * W_4 with W_4 = -i (forward) or +i (inverse).
    const Complex d13 = inverse_ ? Complex(-d.imag(), d.real()) : Complex(d.imag(), -d.real());
    out[k] = s02 + s13;
    out[k + m] = d02 + d13;
    out[k + 2 * m] = s02 - s13;
    out[k + 3 * m] = d02 - d13;
  }
}

// Radix 3 and 5 pair the outputs q and p - q, whose roots are complex conjugates:
// X_q = s0 + sum_{r < p/2} Re(W^(rq)) (t_r + t_(p-r)) + i Im(W^(rq)) (t_r - t_(p-r)).
void FftPlan::butterfly3(Complex* out, int64_t stride, int64_t m) const {
  const Complex w1 = twiddles_[static_cast<size_t>(stride * m)];  // W_3
  for (int64_t k = 0; k < m; ++k) {
    const Complex s0 = out[k];
    const Complex t1 = mul(out[k + m], twiddles_[static_cast<size_t>(k * stride)]);
    const Complex t2 = mul(out[k + 2 * m], twiddles_[static_cast<size_t>(2 * k * stride)]);
    const Complex sum = t1 + t2;
    const Complex diff = t1 - t2;
    const Complex base = s0 + w1.real() * sum;
    const Complex rotated(-w1.imag() * diff.imag(), w1.imag() * diff.real());  // i Im(W) diff
    out[k] = s0 + sum;
    out[k + m] = base + rotated;
    out[k + 2 * m] = base - rotated;
  }
}

void FftPlan::butterfly5(Complex* out, int64_t stride, int64_t m) const {
  const Complex w1 = twiddles_[static_cast<size_t>(stride * m)];      // W_5
  const Complex w2 = twiddles_[static_cast<size_t>(2 * stride * m)];  // W_5^2
  for (int64_t k = 0; k < m; ++k) {
    const Complex s0 = out[k];
    const Complex t1 = mul(out[k + m], twiddles_[static_cast<size_t>(k * stride)]);
    const Complex t2 = mul(out[k + 2 * m], twiddles_[static_cast<size_t>(2 * k * stride)]);
    const Complex t3 = mul(out[k + 3 * m], twiddles_[static_cast<size_t>(3 * k * stride)]);
    const Complex t4 = mul(out[k + 4 * m], twiddles_[static_cast<size_t>(4 * k * stride)]);
    const Complex sum14 = t1 + t4;
    const Complex diff14 = t1 - t4;
    const Complex sum23 = t2 + t3;
    const Complex diff23 = t2 - t3;
    out[k] = s0 + sum14 + sum23;
    // X_1, X_4: roots W, W^2 on (t1, t4), (t2, t3).
    const Complex base1 = s0 + w1.real() * sum14 + w2.real() * sum23;
    const double im1 = w1.imag() * diff14.real() + w2.imag() * diff23.real();
    const double re1 = -(w1.imag() * diff14.imag() + w2.imag() * diff23.imag());
    out[k + m] = base1 + Complex(re1, im1);
    out[k + 4 * m] = base1 - Complex(re1, im1);
    // X_2, X_3: roots W^2, W^4 = conj(W) on (t1, t4), (t2, t3).
    const Complex base2 = s0 + w2.real() * sum14 + w1.real() * sum23;
    const double im2 = w2.imag() * diff14.real() - w1.imag() * diff23.real();
    const double re2 = -(w2.imag() * diff14.imag() - w1.imag() * diff23.imag());
    out[k + 2 * m] = base2 + Complex(re2, im2);
    out[k + 3 * m] = base2 - Complex(re2, im2);
  }
}

void FftPlan::butterfly_any(Complex* out, int64_t stride, int64_t m, int64_t p) const {
  std::vector<Complex> t(static_cast<size_t>(p));
  const int64_t root_step = stride * m;  // n / p
  for (int64_t k = 0; k < m; ++k) {
    t[0] = out[k];
    for (int64_t r = 1; r < p; ++r) {
      t[static_cast<size_t>(r)] =
          mul(out[k + r * m], twiddles_[static_cast<size_t>(r * k * stride)]);
    }
    for (int64_t q = 0; q < p; ++q) {
      Complex acc = t[0];
      int64_t index = 0;  // (r * q mod p) * n / p, advanced without overflow
      for (int64_t r = 1; r < p; ++r) {
        index += q * root_step;
        if (index >= n_) index -= n_;
        acc += mul(t[static_cast<size_t>(r)], twiddles_[static_cast<size_t>(index)]);
      }
      out[k + q * m] = acc;
    }
  }
}

}  // namespace factz::synth
