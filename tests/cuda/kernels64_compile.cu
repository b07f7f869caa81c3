// Compile-only check: the float64 exact kernels (kernels/exact64.hpp, orient64.hpp,
// signature64.hpp) are __host__ __device__ ready, including the out-of-line exact stages
// (TwoProduct by fma, the scaled expansion, the wide-integer fallback), and so is float64
// block mode's 24-bit rounding (kernels/exact_rounding.hpp). Built by nvcc from
// the test KernelsCompileForTheGpu.Float64 when nvcc is installed; never run.
#include <cstdint>

#include "kernels/exact64.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/orient64.hpp"
#include "kernels/signature64.hpp"

__global__ void signatures64_compile(const double* u, const double* v, const uint8_t* mask, uint8_t* sig,
                                     int64_t nx, int64_t ny) {
  const factz::detail::Grid2D g{nx, ny};
  const int64_t cell = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (cell >= g.cell_count()) return;
  const int64_t i = cell / (nx - 1), j = cell - i * (nx - 1);
  if (factz::detail::cell_masked_triangles(mask, nx, i, j) == 0) {
    factz::detail::cell_signatures(g, i, j, u, v, sig + 2 * cell);
  } else {
    sig[2 * cell] = factz::detail::signature_at(g, 2 * cell, u, v);
  }
}

__global__ void predicates64_compile(const double* x, int* out, bool* ok, int n) {
  const int k = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (k + 6 > n) return;
  const factz::detail::SosPoint64 a{x[k], x[k + 1], 1}, b{x[k + 2], x[k + 3], 2}, c{x[k + 4], x[k + 5], 3};
  out[4 * k] = factz::detail::orient_sos64(a, b, c) + int(factz::detail::contains_origin64(a, b, c));
  const factz::detail::ProductTerm t[3] = {{x[k], x[k + 1], 0}, {x[k + 2], x[k + 3], 1}, {x[k + 4], x[k + 5], 2}};
  out[4 * k + 1] = factz::detail::exact_sign_of_products(t, 3);
  out[4 * k + 2] = factz::detail::sign_of_products_wide(t, 3) + factz::detail::sign_of_products_scaled(t, 3);
  out[4 * k + 3] = int(factz::detail::classify_jacobian64(x[k], x[k + 1], x[k + 2], x[k + 3], x[k + 4], x[k + 5],
                                                         x[k], x[k + 2]));
  ok[k] = factz::detail::within_bound64(x[k], x[k + 1], x[k + 2]);
}

__global__ void rounding64_compile(const double* x, double eb, double* r, bool* rounded, int n) {
  const int k = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (k >= n) return;
  rounded[k] = factz::detail::rounded_exact_value(x[k], eb, r[k]);
  r[k] += factz::detail::round_to_24_bits(x[k]);
}
