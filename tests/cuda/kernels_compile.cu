// Compile-only check: the per-element kernels of src/kernels/ are __host__ __device__
// ready (no allocation, no exceptions, no host-only library calls). Built by nvcc from
// the test KernelsCompileForTheGpu when nvcc is installed; never run.
#include <cstdint>

#include "kernels/block_bounds.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/safe_bound.hpp"
#include "kernels/signature.hpp"
#include "kernels/speculation.hpp"
#include "kernels/rans.hpp"
#include "kernels/speculative_decode.hpp"
#include "kernels/tile_decode.hpp"
#include "kernels/tiles.hpp"
#include "kernels/varint.hpp"

__global__ void kernels_compile(const float* u, const float* v, uint8_t* sig, float* xi, float* q, int64_t nx,
                                int64_t ny) {
  const factz::detail::Grid2D g{nx, ny};
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= g.triangle_count()) return;
  sig[t] = factz::detail::signature_at(g, t, u, v);
  int64_t idx[3];
  factz::detail::triangle_vertices(g, t, idx);
  const float uu[3] = {u[idx[0]], u[idx[1]], u[idx[2]]}, vv[3] = {v[idx[0]], v[idx[1]], v[idx[2]]};
  xi[t] = float(factz::detail::triangle_safe_bound(uu, vv));
  const float step = 2.0f * factz::detail::bound_of_id(0.5f, factz::detail::id_for_bound(0.5f, 0.1));
  q[t] = factz::detail::reconstruct(factz::detail::prequantize(u[idx[0]], step), step);
}

__global__ void speculation_compiles(const float* u, const float* v, float* cur_u, float* cur_v, const uint8_t* sig,
                                     const float* bound, uint8_t* id, int64_t nx, int64_t ny) {
  const factz::detail::Grid2D g{nx, ny};
  const factz::detail::PhaseLattice L = factz::detail::phase_lattice(nx, ny, 1, factz::detail::Phase::center);
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.count()) return;
  const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
  const auto s = factz::detail::speculate_vertex(g, x, y, 1, factz::detail::Phase::center, u, v, cur_u, cur_v, sig,
                                                 bound, 32768, true);
  cur_u[y * nx + x] = s.recon_u;
  cur_v[y * nx + x] = s.recon_v;
  id[y * nx + x] = s.id;
}

// One rANS decoding step per lane of a chunk with contexts, as a GPU warp would run it
// (docs/codec.md): the lane's segment, the entry of its state in its context's table, the
// advance and the refill; plus the encoder's step.
__global__ void rans_lanes_compile(const uint32_t* entries, const uint16_t* sym, const uint16_t* words,
                                   uint32_t* states, uint32_t* contexts, uint16_t* out, uint64_t m,
                                   uint32_t lanes) {
  const uint32_t l = threadIdx.x;
  if (l >= lanes) return;
  const uint64_t begin = factz::detail::rans_lane_begin(m, lanes, l);
  uint32_t x = states[l];
  const uint32_t i = factz::detail::rans_decode_index(contexts[l], x);
  const uint32_t e = entries[i];
  out[begin] = sym[i];
  contexts[l] = factz::detail::rans_entry_next_context(e);
  uint32_t consumed = 0;
  x = factz::detail::rans_decode_refill(factz::detail::rans_decode_advance(x, e), words[l], consumed);
  const factz::detail::RansEncodeSymbol s = factz::detail::rans_encode_symbol(0, 7);
  uint16_t word = 0;
  (void)factz::detail::rans_encode_renorm(x, s, word);
  states[l] = factz::detail::rans_encode_put(x, s) + consumed + word;
}

// The backbone's per-vertex glue (quantization, Lorenzo code, symbol, decode decision, list
// varints) and the speculative decoder's target, as the device runs them.
__global__ void backbone_glue_compiles(const float* x, int32_t* q, uint16_t* sym, float* out, uint8_t* bytes,
                                       const float* bound, int64_t nx, int64_t ny) {
  const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= nx * ny) return;
  const int64_t y = k / nx, xi = k - y * nx;
  const factz::detail::TileLayout L(nx, ny);
  const int id = int(L.tile_of(xi, y) % 31);
  const factz::detail::TiledVertex tv = factz::detail::quantize_tiled_vertex(x[k], id, 2.0f * bound[id], bound[id]);
  q[k] = tv.q;
  const int64_t code = factz::detail::tile_lorenzo_code(q + y * nx, y > 0 ? q + (y - 1) * nx : nullptr, xi, y);
  sym[k] = factz::detail::code_symbol(code);
  factz::detail::put_varint_at(bytes + 10 * k, factz::detail::zigzag_encode(code));
  float value;
  if (!factz::detail::decode_tiled_vertex(tv.q, 2.0f * bound[id], tv.exact, x[k], value)) value = 0.0f;
  out[k] = value;
  factz::detail::PhaseSchedule schedule(nx, ny, 16);
  factz::detail::ScheduledPhase ph;
  if (schedule.next(ph) && k < ph.lattice.count()) {
    const int64_t v = factz::detail::lattice_vertex(ph.lattice, nx, k);
    factz::detail::decode_speculative_target(out, out, nx, ny, v % nx, v / nx, ph.step, ph.phase, uint16_t(id), x,
                                             sym[k], sym[k], bound);
  }
}

// Missing vertices (issue 17): the mesh's masked triangles in the safe bounds and the
// original signatures, a missing vertex's quantization and integer, the anchors' stand-ins
// by column and row, a missing target's stand-in.
__global__ void missing_vertices_compile(const float* u, const float* v, const uint8_t* missing, float* cur_u,
                                         float* cur_v, int32_t* q, uint8_t* sig, const float* bound, int64_t nx,
                                         int64_t ny) {
  const factz::detail::Grid2D g{nx, ny};
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= g.cell_count()) return;
  const int64_t i = c / (nx - 1), j = c % (nx - 1);
  factz::detail::TriangleBounds<float> tb[2];
  uint8_t free_bits;
  factz::detail::cell_block_bounds_on_mesh(u, v, missing, nx, i, j, 0.5f, tb, free_bits);
  const float x0 = tb[0].xi_u, x1 = tb[1].xi_v;
  factz::detail::original_signatures(g, i, j, u, v, missing, sig + 2 * c);
  const factz::detail::TiledVertex tv = factz::detail::quantize_tiled_vertex(u[c], 30, 2.0f * bound[30], x0,
                                                                              missing[c] != 0);
  q[c] = missing[c] ? factz::detail::missing_vertex_quant(q + i * nx, i > 0 ? q + (i - 1) * nx : nullptr, j, i,
                                                           2.0f * bound[30])
                    : tv.q;
  const factz::detail::PhaseLattice A = factz::detail::anchor_lattice(nx, ny, 4);
  constexpr factz::detail::Predictor kPred = factz::detail::kDefaultPredictor;
  if (c == 0) factz::detail::fill_missing_anchor_column(A, nx, missing, factz::detail::first_valid_anchor(A, nx, missing),
                                                        cur_u, cur_v, kPred);
  if (c < A.count_y) factz::detail::fill_missing_anchor_row(A, nx, missing, c, cur_u, cur_v, kPred);
  if (i % 2 == 1 && j % 2 == 1 && x1 > 0.0f)
    factz::detail::predict_missing_target(cur_u, cur_v, nx, ny, j, i, 1, factz::detail::Phase::center, kPred);
}
