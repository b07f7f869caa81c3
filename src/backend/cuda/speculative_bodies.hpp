// Per-target bodies of the CUDA speculative mode (FaCTz-S; backend/cpu/speculative_mode.cpp).
//
// Encoder: one kernel per phase, one thread per target, calling kernels/speculation.hpp's
// speculate_vertex and committing (targets of a phase share no triangle, so the result
// does not depend on the order). The stream order (anchors, then phases in schedule
// order, targets row-major) is reproduced by writing each target's id at
// phase_offset + t; codes and exact values are then stable compactions of that order.
// Decoder: the positions of each target's code and exact value come from exclusive scans
// of the id stream; one kernel per phase reconstructs its targets.
#pragma once

#include <cstdint>

#include "backend/cuda/backbone_bodies.hpp"
#include "kernels/speculation.hpp"
#include "kernels/speculative_decode.hpp"

namespace factz::cuda_detail {

using detail::Phase;
using detail::PhaseLattice;

using detail::id_has_code;
using detail::id_is_exact;
using detail::lattice_vertex;

/// Kernel body, one thread per vertex: the current state starts as the original.
FACTZ_HD void speculative_init(int64_t k, const float* u, const float* v, float* cur_u, float* cur_v, uint8_t* id) {
  cur_u[k] = u[k];
  cur_v[k] = v[k];
  id[k] = 0;
}

/// Kernel body, one thread per target t of a phase: the decision and the commit; the
/// target's id and symbols go to stream position `offset + t`.
FACTZ_HD void speculate_target(const Grid2D& g, const PhaseLattice& L, int64_t step, Phase phase, int64_t t,
                               const float* u, const float* v, float* cur_u, float* cur_v, const uint8_t* original,
                               const float* bound, int64_t offset, uint16_t* ids, uint16_t* sym_u, uint16_t* sym_v) {
  const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
  const int64_t k = y * g.nx + x;
  const detail::Speculation sp =
      detail::speculate_vertex(g, x, y, step, phase, u, v, cur_u, cur_v, original, bound, kRadius, true);
  cur_u[k] = sp.recon_u;
  cur_v[k] = sp.recon_v;
  ids[offset + t] = sp.id;
  sym_u[offset + t] = uint16_t(sp.code_u + kRadius);
  sym_v[offset + t] = uint16_t(sp.code_v + kRadius);
}

/// Kernel body, one thread per exact-value entry e of the speculative exact section:
/// entries [0, anchors) are the anchors in row-major order, then the exact targets in
/// stream order (exact_pos holds their stream positions, compacted). Writes 8 bytes
/// (u then v, little-endian) at dst + 8 e.
FACTZ_HD void write_speculative_exact(const PhaseLattice& A, int64_t nx, int64_t e, const int64_t* exact_vertex,
                                      const float* u, const float* v, uint8_t* dst) {
  const int64_t anchors = A.count();
  const int64_t k = e < anchors ? (e / A.count_x) * A.dy * nx + (e % A.count_x) * A.dx : exact_vertex[e - anchors];
  const uint32_t bu = float_bits(u[k]), bv = float_bits(v[k]);
  for (int i = 0; i < 4; ++i) {
    dst[8 * e + i] = uint8_t(bu >> (8 * i));
    dst[8 * e + 4 + i] = uint8_t(bv >> (8 * i));
  }
}

/// Kernel body, one thread per target t of a phase at stream position p = offset + t:
/// reconstructs the target from its id, its code (code_pos[p]: exclusive scan of
/// id_has_code) or its exact value (exact_pos[p]: exclusive scan of id_is_exact, after the
/// anchors), with the CPU decoder's kernel (kernels/speculative_decode.hpp). bad is set for
/// a non-finite result (corrupt input only).
FACTZ_HD void decode_target(const Grid2D& g, const PhaseLattice& L, int64_t step, Phase phase, int64_t t, int64_t offset,
                            const uint16_t* ids, const uint16_t* cu, const uint16_t* cv, const int64_t* code_pos,
                            const int64_t* exact_pos, int64_t anchors, const float* exact, const float* bound, float* u,
                            float* v, int* bad) {
  const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
  const int64_t p = offset + t;
  const uint16_t id = ids[p];
  const bool coded = id_has_code(id);
  const float* ex = id_is_exact(id) ? exact + 2 * (anchors + exact_pos[p]) : nullptr;
  if (!detail::decode_speculative_target(u, v, g.nx, g.ny, x, y, step, phase, id, ex, coded ? cu[code_pos[p]] : 0,
                                         coded ? cv[code_pos[p]] : 0, bound))
    *bad = 1;
}

/// Kernel body, one thread per anchor a: its exact value (entries 0 .. anchors-1).
FACTZ_HD void decode_anchor(const PhaseLattice& A, int64_t nx, int64_t a, const float* exact, float* u, float* v) {
  const int64_t k = (a / A.count_x) * A.dy * nx + (a % A.count_x) * A.dx;
  u[k] = exact[2 * a];
  v[k] = exact[2 * a + 1];
}

}  // namespace factz::cuda_detail
