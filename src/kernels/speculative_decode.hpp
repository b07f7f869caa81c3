// FaCTz-S decoding of one target, shared by every backend (the CPU decoder in
// backend/cpu/speculative_mode.cpp walks the phases with OpenMP; the CUDA decoder runs one
// thread per target of a phase). The id says where the value comes from: the zero vector
// (kZeroVectorId), the exact section (id 0), or the prediction plus the dequantized code
// (1..kMaxBoundId). The writer's commit (speculate_vertex) computes the same expression.
#pragma once

#include <cstdint>

#include "kernels/interpolation.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation.hpp"
#include "kernels/tiles.hpp"

namespace factz::detail {

/// Ids a speculative stream may hold for a target.
FACTZ_HD bool valid_target_id(uint16_t id) { return id <= kMaxBoundId || id == kZeroVectorId; }
/// The target has a code in each code section.
FACTZ_HD bool id_has_code(uint16_t id) { return id >= 1 && id <= kMaxBoundId; }
/// The target has an entry (u, v) in the exact section.
FACTZ_HD bool id_is_exact(uint16_t id) { return id == 0; }

/// Reconstructs target (x, y) of `phase` at level `step` into u[k], v[k] (k = y * nx + x)
/// from the planes decoded so far. `exact` points at the target's (u, v) pair when
/// id_is_exact(id); sym_u, sym_v are its symbols (code + kRadius) when id_has_code(id).
/// bound[id] is bound_of_id(eb, id). Returns false when a coded value is not finite, which
/// the writer never produces (a damaged stream).
FACTZ_HD bool decode_speculative_target(float* u, float* v, int64_t nx, int64_t ny, int64_t x, int64_t y,
                                        int64_t step, Phase phase, uint16_t id, const float* exact, uint16_t sym_u,
                                        uint16_t sym_v, const float* bound) {
  const int64_t k = y * nx + x;
  if (id == kZeroVectorId) {
    u[k] = v[k] = 0.0f;
    return true;
  }
  if (id_is_exact(id)) {
    u[k] = exact[0];
    v[k] = exact[1];
    return true;
  }
  const float pu = predict(u, nx, ny, x, y, step, phase);
  const float pv = predict(v, nx, ny, x, y, step, phase);
  const float ru = dequantize_residual(pu, bound[id], int32_t(sym_u) - kRadius);
  const float rv = dequantize_residual(pv, bound[id], int32_t(sym_v) - kRadius);
  u[k] = ru;
  v[k] = rv;
  return ru - ru == 0.0f && rv - rv == 0.0f;  // finite (isfinite differs between host and device)
}

// ---- Missing vertices (format version 3) -------------------------------------------------
// A stream with missing vertices stores nothing for them in the speculative sections: the
// decoder knows the mask first, and both sides give a missing vertex the same stand-in value,
// which later predictions read (its own value comes from the mask sections at the end).

/// Missing anchors: in row-major order over the anchor lattice A each takes the stand-in of
/// its left anchor, else of the anchor above, else the first valid anchor's value (0 when no
/// anchor is valid). Valid anchors must already hold their values in u, v.
FACTZ_HD void fill_missing_anchors(const PhaseLattice& A, int64_t nx, const uint8_t* missing, float* u, float* v) {
  float first_u = 0.0f, first_v = 0.0f;
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex(A, nx, a);
    if (!missing[k]) {
      first_u = u[k];
      first_v = v[k];
      break;
    }
  }
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex(A, nx, a);
    if (!missing[k]) continue;
    const int64_t i = a % A.count_x;
    const int64_t from = i > 0 ? k - A.dx : (a >= A.count_x ? k - A.dy * nx : -1);
    u[k] = from >= 0 ? u[from] : first_u;
    v[k] = from >= 0 ? v[from] : first_v;
  }
}

/// A missing target's stand-in: its prediction.
FACTZ_HD void predict_missing_target(float* u, float* v, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t step,
                                     Phase phase) {
  const int64_t k = y * nx + x;
  u[k] = predict(u, nx, ny, x, y, step, phase);
  v[k] = predict(v, nx, ny, x, y, step, phase);
}

}  // namespace factz::detail
