// FaCTz-S decoding of one target, shared by every backend (the CPU decoder in
// backend/cpu/speculative_reader.cpp walks the phases with OpenMP; the CUDA decoder runs one
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

/// A coded target's values from its predictions (pu, pv) and symbols (code + kRadius) at
/// bound b: the prediction plus the dequantized code. Returns false when one is not finite
/// (a damaged stream). The CPU reader's row pass calls it with a row's predictions.
template <class T>
FACTZ_HD bool coded_target_values(T pu, T pv, T b, uint16_t sym_u, uint16_t sym_v, T& ru, T& rv) {
  const bool finite_u = coded_value(pu, b, sym_u, kRadius, ru);
  return coded_value(pv, b, sym_v, kRadius, rv) && finite_u;
}

/// Reconstructs target (x, y) of `phase` at level `step` into u[k], v[k] (k = y * nx + x)
/// from the planes decoded so far. `exact` points at the target's (u, v) pair when
/// id_is_exact(id); sym_u, sym_v are its symbols (code + kRadius) when id_has_code(id).
/// bound[id] is bound_of_id(eb, id). Returns false when a coded value is not finite, which
/// the writer never produces (a damaged stream). T: float, or double for a float64 stream.
/// `pred`: the stream's predictor (its meta section).
template <class T>
FACTZ_HD bool decode_speculative_target(T* u, T* v, int64_t nx, int64_t ny, int64_t x, int64_t y,
                                        int64_t step, Phase phase, uint16_t id, const T* exact, uint16_t sym_u,
                                        uint16_t sym_v, const T* bound, Predictor pred = Predictor::linear) {
  const int64_t k = y * nx + x;
  if (id == kZeroVectorId) {
    u[k] = v[k] = T(0);
    return true;
  }
  if (id_is_exact(id)) {
    u[k] = exact[0];
    v[k] = exact[1];
    return true;
  }
  const T pu = predict(u, nx, ny, x, y, step, phase, pred);
  const T pv = predict(v, nx, ny, x, y, step, phase, pred);
  return coded_target_values(pu, pv, bound[id], sym_u, sym_v, u[k], v[k]);
}

// ---- Missing vertices (format version 3) -------------------------------------------------
// A stream with missing vertices stores nothing for them in the speculative sections: the
// decoder knows the mask first, and both sides give a missing vertex the same stand-in value,
// which later predictions read (its own value comes from the mask sections at the end).

/// The id a backend's encoder records for a missing vertex (never written to a stream:
/// valid_target_id, id_has_code and id_is_exact are false for it).
inline constexpr uint8_t kMissingVertex = 0xFE;

/// Index (row-major over A) of the first valid anchor; A.count() when none is.
FACTZ_HD int64_t first_valid_anchor(const PhaseLattice& A, int64_t nx, const uint8_t* missing) {
  int64_t a = 0;
  while (a < A.count() && missing[lattice_vertex(A, nx, a)]) ++a;
  return a;
}

/// The stand-in rule of a stream follows its predictor. Linear streams (format versions 3
/// to 6) give a missing vertex a value continued from its neighbours (below); streams with
/// another predictor (version 7) give every missing vertex the stand-in zero, so a field whose
/// missing vertices hold zeros is predicted exactly as the same field unmasked (issue 20:
/// the mask then only saves).
FACTZ_HD bool zero_stand_ins(Predictor pred) { return pred != Predictor::linear; }

/// Column 0 of the anchor lattice, top to bottom: a missing anchor takes the stand-in of the
/// anchor above; the first row's, the value of anchor `first` (first_valid_anchor; 0 when it
/// is A.count()). With zero_stand_ins(pred): zero.
template <class T>
FACTZ_HD void fill_missing_anchor_column(const PhaseLattice& A, int64_t nx, const uint8_t* missing, int64_t first,
                                         T* u, T* v, Predictor pred) {
  for (int64_t row = 0; row < A.count_y; ++row) {
    const int64_t k = row * A.dy * nx;  // anchor (0, row)
    if (!missing[k]) continue;
    if (zero_stand_ins(pred) || (row == 0 && first >= A.count())) {  // zero, or no valid anchor at all
      u[k] = v[k] = T(0);
      continue;
    }
    const int64_t from = row > 0 ? k - A.dy * nx : lattice_vertex(A, nx, first);
    u[k] = u[from];
    v[k] = v[from];
  }
}

/// Anchor row `row` after column 0 (fill_missing_anchor_column): left to right, a missing
/// anchor takes the stand-in of the anchor to its left (zero with zero_stand_ins(pred)).
template <class T>
FACTZ_HD void fill_missing_anchor_row(const PhaseLattice& A, int64_t nx, const uint8_t* missing, int64_t row, T* u,
                                      T* v, Predictor pred) {
  const int64_t k0 = row * A.dy * nx;
  const bool zero = zero_stand_ins(pred);
  for (int64_t i = 1; i < A.count_x; ++i) {
    const int64_t k = k0 + i * A.dx;
    if (!missing[k]) continue;
    u[k] = zero ? T(0) : u[k - A.dx];
    v[k] = zero ? T(0) : v[k - A.dx];
  }
}

/// Missing anchors: in row-major order over the anchor lattice A each takes the stand-in of
/// its left anchor, else of the anchor above, else the first valid anchor's value (0 when no
/// anchor is valid). Valid anchors must already hold their values in u, v. The parts above
/// compute the same in parallel form: column 0 (it depends on itself only), then every
/// anchor row independently (a row's chain to the left ends in column 0).
template <class T>
FACTZ_HD void fill_missing_anchors(const PhaseLattice& A, int64_t nx, const uint8_t* missing, T* u, T* v,
                                   Predictor pred) {
  fill_missing_anchor_column(A, nx, missing, first_valid_anchor(A, nx, missing), u, v, pred);
  for (int64_t row = 0; row < A.count_y; ++row) fill_missing_anchor_row(A, nx, missing, row, u, v, pred);
}

/// A missing target's stand-in: its prediction (linear streams), or zero (zero_stand_ins).
template <class T>
FACTZ_HD void predict_missing_target(T* u, T* v, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t step,
                                     Phase phase, Predictor pred) {
  const int64_t k = y * nx + x;
  if (zero_stand_ins(pred)) {
    u[k] = v[k] = T(0);
    return;
  }
  u[k] = predict(u, nx, ny, x, y, step, phase, pred);
  v[k] = predict(v, nx, ny, x, y, step, phase, pred);
}

}  // namespace factz::detail
