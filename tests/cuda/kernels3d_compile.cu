// Compile-only check: the 3D vector-field kernels (src/kernels/tet.hpp, wide_int.hpp) are
// __host__ __device__ ready. Built by nvcc from the test KernelsCompileForTheGpu.Tet3D when
// nvcc is installed; never run.
#include <cstdint>

#include "kernels/tet.hpp"

__global__ void tet_signatures(const float* u, const float* v, const float* w, uint8_t* sig, int64_t nx, int64_t ny,
                               int64_t nz) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= factz::detail::tet_count(nx, ny, nz)) return;
  int64_t idx[4];
  int axes[3];
  factz::detail::tet_vertices(nx, ny, t, idx, axes);
  float uu[4], vv[4], ww[4];
  for (int k = 0; k < 4; ++k) uu[k] = u[idx[k]], vv[k] = v[idx[k]], ww[k] = w[idx[k]];
  sig[t] = factz::detail::tet_signature(idx, axes, uu, vv, ww);
}
