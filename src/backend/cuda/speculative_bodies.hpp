// Per-target bodies of the CUDA speculative mode (FaCTz-S; backend/cpu/speculative_mode.cpp).
//
// Encoder: one kernel per phase, one thread per target, calling kernels/speculation.hpp's
// speculate_vertex and committing (targets of a phase share no triangle, so the result
// does not depend on the order). The stream order (anchors, then phases in schedule
// order, targets row-major) is reproduced by writing each target's id at
// phase_offset + t; codes and exact values are then stable compactions of that order.
// Decoder: the positions of each target's code and exact value come from exclusive scans
// of the id stream; one kernel per phase reconstructs its targets.
// Missing vertices (a masked field or stream): the encoder records kMissingVertex at a
// missing target's stream position, and the stream's ids are a compaction without them;
// the decoder expands the ids it reads back to every stream position. Stored anchors are
// the valid ones, in row-major order.
// T is the field's value type: float, or double for a float64 field or stream (predictions,
// codes, checks and signatures in double; 16-byte exact pairs).
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
using detail::kMissingVertex;
using detail::lattice_vertex;

/// Kernel body, one thread per vertex: the current state starts as the original.
template <class T>
FACTZ_HD void speculative_init(int64_t k, const T* u, const T* v, T* cur_u, T* cur_v, uint8_t* id) {
  cur_u[k] = u[k];
  cur_v[k] = v[k];
  id[k] = 0;
}

/// Kernel body, one thread per cell c: the original signatures of its triangles
/// (kMaskedTriangle off the mesh; `missing` null = none), speculative_mode.cpp's table.
template <class T>
FACTZ_HD void speculative_signatures(const Grid2D& g, int64_t c, const T* u, const T* v, const uint8_t* missing,
                                     uint8_t* sig) {
  const int64_t i = c / (g.nx - 1), j = c - i * (g.nx - 1);
  detail::original_signatures(g, i, j, u, v, missing, sig + 2 * c);
}

/// Kernel body, one thread per target t of a phase: the decision and the commit; the
/// target's id and symbols go to stream position `offset + t`. A target marked in
/// `missing` (null = none) takes its prediction as its stand-in and the id kMissingVertex.
/// `pred`: the stream's predictor (kernels/interpolation.hpp), `tight` the level-wise
/// bound's tight step (streams/speculative_trial.hpp), both as the CPU encoder's.
template <class T>
FACTZ_HD void speculate_target(const Grid2D& g, const PhaseLattice& L, int64_t step, Phase phase, int64_t t,
                               const T* u, const T* v, const uint8_t* missing, T* cur_u, T* cur_v,
                               const uint8_t* original, const T* bound, int64_t offset, uint16_t* ids,
                               uint16_t* sym_u, uint16_t* sym_v, detail::Predictor pred, int64_t tight) {
  const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
  const int64_t k = y * g.nx + x;
  if (missing && missing[k]) {
    detail::predict_missing_target(cur_u, cur_v, g.nx, g.ny, x, y, step, phase, pred);
    ids[offset + t] = kMissingVertex;
    sym_u[offset + t] = sym_v[offset + t] = 0;
    return;
  }
  const detail::SpeculationOf<T> sp =
      detail::speculate_vertex(g, x, y, step, phase, u, v, cur_u, cur_v, original, bound, kRadius, true, pred, tight);
  cur_u[k] = sp.recon_u;
  cur_v[k] = sp.recon_v;
  ids[offset + t] = sp.id;
  sym_u[offset + t] = uint16_t(sp.code_u + kRadius);
  sym_v[offset + t] = uint16_t(sp.code_v + kRadius);
}

/// Kernel body, one thread per anchor a: its vertex and whether it is stored (valid in
/// `missing`); the stored anchors are the stable compaction of vertex by flag.
FACTZ_HD void anchor_vertex(const PhaseLattice& A, int64_t nx, int64_t a, const uint8_t* missing, int64_t* vertex,
                            uint8_t* stored) {
  vertex[a] = lattice_vertex(A, nx, a);
  stored[a] = missing[vertex[a]] == 0;
}

/// Kernel body, one thread per exact-value entry e of the speculative exact section:
/// entries [0, anchors) are the stored anchors (stored_anchor: their vertices, compacted;
/// null: every anchor of A in row-major order), then the exact targets in stream order
/// (exact_vertex: their vertices, compacted). Writes 2 sizeof(T) bytes (u then v,
/// little-endian) at dst + 2 sizeof(T) e.
template <class T>
FACTZ_HD void write_speculative_exact(const PhaseLattice& A, int64_t nx, int64_t e, int64_t anchors,
                                      const int64_t* stored_anchor, const int64_t* exact_vertex, const T* u,
                                      const T* v, uint8_t* dst) {
  const int64_t k = e >= anchors ? exact_vertex[e - anchors] : stored_anchor ? stored_anchor[e] : lattice_vertex(A, nx, e);
  const uint64_t bu = value_bits(u[k]), bv = value_bits(v[k]);
  constexpr int kBytes = int(sizeof(T));
  for (int i = 0; i < kBytes; ++i) {
    dst[2 * kBytes * e + i] = uint8_t(bu >> (8 * i));
    dst[2 * kBytes * e + kBytes + i] = uint8_t(bv >> (8 * i));
  }
}

/// Kernel body, one thread per target t of a phase: stored[offset + t] = 1 when the
/// target has an entry in the stream's ids (it is valid in `missing`), else 0.
FACTZ_HD void target_stored(const PhaseLattice& L, int64_t nx, int64_t t, int64_t offset, const uint8_t* missing,
                            int64_t* stored) {
  stored[offset + t] = missing[lattice_vertex(L, nx, t)] == 0 ? 1 : 0;
}

/// Kernel body, one thread per stream position p: the id of every target, from the ids
/// the stream holds for the stored ones (pos: exclusive scan of stored); kMissingVertex
/// for a missing target.
FACTZ_HD void expand_target_id(int64_t p, const int64_t* stored, const int64_t* pos, const uint16_t* stream_ids,
                               uint16_t* ids) {
  ids[p] = stored[p] ? stream_ids[pos[p]] : uint16_t(kMissingVertex);
}

/// Kernel body, one thread per target t of a phase at stream position p = offset + t:
/// reconstructs the target from its id, its code (code_pos[p]: exclusive scan of
/// id_has_code) or its exact value (exact_pos[p]: exclusive scan of id_is_exact, after the
/// `anchors` stored anchors), with the CPU decoder's kernel (kernels/speculative_decode.hpp);
/// a missing target (kMissingVertex) takes its prediction. bad is set for a non-finite
/// result (corrupt input only). `pred`: the stream's predictor (SpeculativeInputOf::predictor).
template <class T>
FACTZ_HD void decode_target(const Grid2D& g, const PhaseLattice& L, int64_t step, Phase phase, int64_t t, int64_t offset,
                            const uint16_t* ids, const uint16_t* cu, const uint16_t* cv, const int64_t* code_pos,
                            const int64_t* exact_pos, int64_t anchors, const T* exact, const T* bound, T* u, T* v,
                            int* bad, detail::Predictor pred) {
  const int64_t x = L.x0 + (t % L.count_x) * L.dx, y = L.y0 + (t / L.count_x) * L.dy;
  const int64_t p = offset + t;
  const uint16_t id = ids[p];
  if (id == kMissingVertex) {
    detail::predict_missing_target(u, v, g.nx, g.ny, x, y, step, phase, pred);
    return;
  }
  const bool coded = id_has_code(id);
  const T* ex = id_is_exact(id) ? exact + 2 * (anchors + exact_pos[p]) : nullptr;
  if (!detail::decode_speculative_target(u, v, g.nx, g.ny, x, y, step, phase, id, ex, coded ? cu[code_pos[p]] : 0,
                                         coded ? cv[code_pos[p]] : 0, bound, pred))
    *bad = 1;
}

/// Kernel body, one thread per anchor a: its exact value, entry a, or with `missing`
/// (null = none) entry pos[a] (exclusive scan of the stored flags of anchor_vertex) for a
/// valid anchor and nothing for a missing one (fill_missing_anchors gives it its stand-in).
template <class T>
FACTZ_HD void decode_anchor(const PhaseLattice& A, int64_t nx, int64_t a, const uint8_t* missing, const int64_t* pos,
                            const T* exact, T* u, T* v) {
  const int64_t k = lattice_vertex(A, nx, a);
  if (missing && missing[k]) return;
  const int64_t e = missing ? pos[a] : a;
  u[k] = exact[2 * e];
  v[k] = exact[2 * e + 1];
}

}  // namespace factz::cuda_detail
