// Mixed-radix complex FFT for the synthetic-field generators (bench support only).
//
// A plain recursive decimation-in-time transform (radix 4, 2, 3, 5, then any prime),
// written here so that the generators need no third-party FFT. Sizes whose prime
// factors are 2, 3 and 5 (see fft_good_size) are fast; other sizes are correct but
// cost O(n * largest prime factor).
//
// Determinism: execute() is serial and its floating-point operations depend only on
// the plan size and direction, so callers that split rows over threads get bytes that
// do not depend on the thread count.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace factz::synth {

using Complex = std::complex<double>;

/// forward: X[k] = sum_n x[n] exp(-2 pi i n k / N).
/// inverse: x[n] = sum_k X[k] exp(+2 pi i n k / N), not divided by N.
enum class FftDirection { forward, inverse };

/// Smallest m >= n whose only prime factors are 2, 3 and 5 (1 for n <= 1).
int64_t fft_good_size(int64_t n);

/// A transform of one fixed size and direction. Immutable after construction, so one
/// plan may be shared by many threads.
class FftPlan {
 public:
  /// n >= 1 points.
  FftPlan(int64_t n, FftDirection direction);

  int64_t size() const { return n_; }

  /// Transforms the n values at `in` into the n values at `out`. The two ranges must
  /// not overlap; `in` is not modified.
  void execute(const Complex* in, Complex* out) const;

 private:
  void work(Complex* out, const Complex* in, int64_t stride, size_t level) const;
  void butterfly2(Complex* out, int64_t stride, int64_t m) const;
  void butterfly4(Complex* out, int64_t stride, int64_t m) const;
  void butterfly3(Complex* out, int64_t stride, int64_t m) const;
  void butterfly5(Complex* out, int64_t stride, int64_t m) const;
  void butterfly_any(Complex* out, int64_t stride, int64_t m, int64_t p) const;

  int64_t n_;
  bool inverse_;
  std::vector<int64_t> radices_;    ///< radix applied at each recursion level
  std::vector<int64_t> remaining_;  ///< product of the radices after each level
  std::vector<Complex> twiddles_;   ///< exp(+-2 pi i j / n) for j < n, sign by direction
};

}  // namespace factz::synth
