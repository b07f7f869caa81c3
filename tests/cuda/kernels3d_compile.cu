// Compile-only check: the 3D vector-field kernels (src/kernels/tet.hpp, wide_int.hpp, and the
// 3D speculative mode's interpolation3d.hpp, speculation3d.hpp) are
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

// The 3D speculative mode (kernels/interpolation3d.hpp, speculation3d.hpp): one thread per
// target of a phase, deciding and committing, and the decoder's side.
#include "kernels/speculation3d.hpp"

/// A phase's per-component predictor choices, by value.
struct d3_along {
  uint8_t a[3];
};

__global__ void speculate_phase3d(const float* u, const float* v, const float* w, float* cu, float* cv, float* cw,
                                  const uint8_t* sig, const float* bound, uint8_t* ids, int64_t nx, int64_t ny,
                                  int64_t nz, int64_t step, uint8_t axes, d3_along along) {
  namespace d = factz::detail;
  const d::PhaseLattice3D L = d::phase_lattice3d(nx, ny, nz, step, axes);
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.count()) return;
  const int64_t k = d::lattice_vertex3d(L, nx, ny, t);
  const int64_t x = k % nx, y = (k / nx) % ny, z = k / (nx * ny);
  const float* const f[3] = {u, v, w};
  float* const cur[3] = {cu, cv, cw};
  const d::Speculation3D s = d::speculate_vertex3d(nx, ny, nz, x, y, z, step, axes, along.a, f, cur, sig, bound, 32768, true);
  for (int c = 0; c < 3; ++c) cur[c][k] = s.recon[c];
  ids[k] = s.id;
}

__global__ void decode_phase3d(float* u, float* v, float* w, const uint16_t* ids, const float* exact,
                               const uint16_t* sym, const float* bound, int64_t nx, int64_t ny, int64_t nz,
                               int64_t step, uint8_t axes, d3_along along, int* bad) {
  namespace d = factz::detail;
  const d::PhaseLattice3D L = d::phase_lattice3d(nx, ny, nz, step, axes);
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.count()) return;
  const int64_t k = d::lattice_vertex3d(L, nx, ny, t);
  const int64_t x = k % nx, y = (k / nx) % ny, z = k / (nx * ny);
  float* const out[3] = {u, v, w};
  if (!d::decode_speculative_target3d(out, nx, ny, nz, x, y, z, step, axes, along.a, ids[t], exact + 3 * t, sym + 3 * t, bound,
                                      32768))
    *bad = 1;
}

// The 3D block mode (kernels/safe_bound3d.hpp, tiles3d.hpp): the safe bounds of one cube per
// thread, the tile id of one tile per thread, and the 3D Lorenzo prediction of a tile.
#include "kernels/safe_bound3d.hpp"
#include "kernels/tiles3d.hpp"

__global__ void cube_bounds3d(const float* u, const float* v, const float* w, float* bounds, uint8_t* cp_free,
                              int64_t nx, int64_t ny, int64_t nz, float eb) {
  namespace d = factz::detail;
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (nx < 2 || ny < 2 || nz < 2 || c >= (nx - 1) * (ny - 1) * (nz - 1)) return;
  const int64_t x = c % (nx - 1), y = (c / (nx - 1)) % (ny - 1), z = c / ((nx - 1) * (ny - 1));
  float(*corner_bounds)[3] = reinterpret_cast<float(*)[3]>(bounds + 24 * c);  // 8 corners x 3 components
  cp_free[c] = d::cube_safe_bounds(u, v, w, (z * ny + y) * nx + x, nx, ny, eb, corner_bounds);
}

__global__ void tile_ids3d(const float* x, const uint8_t* ids, uint8_t* tile_ids, int64_t nx, int64_t ny, int64_t nz,
                           float eb, const int64_t* q, int64_t* pred) {
  namespace d = factz::detail;
  const d::TileLayout3D L(nx, ny, nz);
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.tile_count()) return;
  int64_t lo[3], hi[3];
  L.box(t, lo, hi);
  tile_ids[t] = d::choose_tile_id3d(x, ids, nx, ny, lo, hi, eb);
  pred[t] = d::tile_lorenzo3d(q, 1, 1, 1);
}
