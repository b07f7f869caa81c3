// FaCTz-S per-vertex decision (paper Algorithm 1), shared by every backend: the CPU driver
// (backend/cpu/speculative_mode.cpp) calls it for each target of a phase; the CUDA backend's
// phase kernel (backend/cuda/speculative_bodies.hpp) calls the same function, one thread
// per target.
#pragma once

#include <climits>
#include <cstdint>

#include "kernels/interpolation.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/signature.hpp"
#include "kernels/signature64.hpp"

namespace factz::detail {

/// Bound id of a vertex stored as the zero vector (no value stored).
inline constexpr int kZeroVectorId = kMaxBoundId + 1;

/// An exact shortcut of signatures_hold for the common case: every incident triangle held
/// no critical point (or is outside the mesh), and after the change u, or v, has one strict
/// sign on the vertex and all its grid neighbours (a superset of its star). Then no
/// triangle of the star holds the origin in its hull (even under the symbolic perturbation,
/// which moves nothing by a finite amount), so each keeps the signature kNoCriticalPoint:
/// true means signatures_hold is true; false means nothing (the full test decides).
template <class T>
FACTZ_HD bool star_keeps_no_critical_point(const Grid2D& g, int64_t x, int64_t y, T cu, T cv, const T* cur_u,
                                           const T* cur_v, const uint8_t* original, const int64_t* tris, int m) {
  for (int t = 0; t < m; ++t)
    if (original[tris[t]] != kNoCriticalPoint && original[tris[t]] != kMaskedTriangle) return false;
  T su[7] = {cu}, sv[7] = {cv};  // the vertex, then its grid neighbours
  int n = 1;
  const int64_t k = y * g.nx + x;
  auto take = [&](int64_t j) {
    su[n] = cur_u[j];
    sv[n] = cur_v[j];
    ++n;
  };
  const bool left = x > 0, right = x + 1 < g.nx, down = y > 0, up = y + 1 < g.ny;
  if (left) take(k - 1);
  if (right) take(k + 1);
  if (down) {
    take(k - g.nx);
    if (left) take(k - g.nx - 1);
  }
  if (up) {
    take(k + g.nx);
    if (right) take(k + g.nx + 1);
  }
  return strictly_one_sided(su, n) || strictly_one_sided(sv, n);
}

/// Do all triangles around vertex (x, y) keep their original signature (`original`, one
/// byte per triangle; kMaskedTriangle for a triangle outside the mesh, which is skipped)
/// when the vertex takes (cu, cv) and every other vertex its current value? T: float, or
/// double (the float64 predicates of signature64.hpp).
template <class T>
FACTZ_HD bool signatures_hold(const Grid2D& g, int64_t x, int64_t y, T cu, T cv, const T* cur_u,
                              const T* cur_v, const uint8_t* original) {
  int64_t tris[6];
  const int m = incident_triangles(g, y, x, tris);
  const int64_t k = y * g.nx + x;
  if (star_keeps_no_critical_point(g, x, y, cu, cv, cur_u, cur_v, original, tris, m)) return true;
  for (int t = 0; t < m; ++t) {
    if (original[tris[t]] == kMaskedTriangle) continue;  // outside the mesh: never compared
    int64_t idx[3];
    triangle_vertices(g, tris[t], idx);
    T uu[3], vv[3];
    for (int c = 0; c < 3; ++c) {
      uu[c] = idx[c] == k ? cu : cur_u[idx[c]];
      vv[c] = idx[c] == k ? cv : cur_v[idx[c]];
    }
    if (triangle_signature(int(tris[t] & 1), idx, uu, vv) != original[tris[t]]) return false;
  }
  return true;
}

/// The original signatures of cell (i, j)'s triangles that speculate_vertex compares with
/// (out[t] for triangle t, cell_signatures' order): kMaskedTriangle for a triangle outside
/// the mesh (it touches a vertex marked in `missing`; null = none).
template <class T>
FACTZ_HD void original_signatures(const Grid2D& g, int64_t i, int64_t j, const T* u, const T* v,
                                  const uint8_t* missing, Signature out[2]) {
  cell_signatures(g, i, j, u, v, out);
  const uint8_t off_mesh = cell_masked_triangles(missing, g.nx, i, j);
  if (off_mesh & 1) out[0] = kMaskedTriangle;
  if (off_mesh & 2) out[1] = kMaskedTriangle;
}

/// original_signatures with an exact shortcut for the common cell: where u, or v, has one
/// strict sign on the four corners and no corner is missing, neither triangle can hold the
/// origin in its hull (the symbolic perturbation moves nothing by a finite amount), so both
/// are kNoCriticalPoint without the determinants. The same values as original_signatures.
template <class T>
FACTZ_HD void original_signatures_quick(const Grid2D& g, int64_t i, int64_t j, const T* u, const T* v,
                                        const uint8_t* missing, Signature out[2]) {
  const int64_t a = i * g.nx + j, c = a + g.nx;
  const bool on_mesh = !missing || !(missing[a] | missing[a + 1] | missing[c] | missing[c + 1]);
  const T cu[4] = {u[a], u[a + 1], u[c], u[c + 1]}, cv[4] = {v[a], v[a + 1], v[c], v[c + 1]};
  if (on_mesh && (strictly_one_sided(cu, 4) || strictly_one_sided(cv, 4))) {
    out[0] = out[1] = kNoCriticalPoint;
    return;
  }
  original_signatures(g, i, j, u, v, missing, out);
}

/// Level-wise bound: with a tight step `tight`, the targets of the coarse levels (step >=
/// tight) start at half the bound (id kMaxBoundId - 1), since their errors propagate into
/// every finer level's predictions; the finer levels start at the full bound. kNoTightLevel
/// starts every level at the full bound (the linear predictor's streams, format versions up
/// to 6, always). The encoder chooses per field (streams/speculative_trial.hpp); the decoder
/// needs no rule: every target's id is in the stream.
inline constexpr int64_t kNoTightLevel = INT64_MAX;
FACTZ_HD int first_bound_id(int64_t step, int64_t tight) { return step >= tight ? kMaxBoundId - 1 : kMaxBoundId; }

template <class T>
struct SpeculationOf {
  uint8_t id = 0;              ///< 0 exact, 1..kMaxBoundId bound id, kZeroVectorId
  int32_t code_u = 0, code_v = 0;
  T recon_u = 0, recon_v = 0;  ///< the committed values (the original when exact)
};
using Speculation = SpeculationOf<float>;
using Speculation64 = SpeculationOf<double>;

/// Deferred-commit speculation for target (x, y) of `phase` at level `step`: bound ids
/// from the largest down, candidate reconstructions of u and v, accept the first whose
/// incident triangles all keep their signature on the current state (`check` false skips
/// that test: for tests only). A zero vector takes the zero-vector id directly; a vertex
/// without an accepted candidate keeps its original value (exact), which changes nothing.
/// `bound` holds bound_of_id for every id; `radius` limits the codes. T: float, or double
/// for a float64 field (prediction, quantization, bound check and signatures all on doubles).
/// `pred`: the stream's predictor (interpolation.hpp). `tight`: the level-wise bound's
/// tight step (first_bound_id).
template <class T>
FACTZ_HD SpeculationOf<T> speculate_vertex(const Grid2D& g, int64_t x, int64_t y, int64_t step, Phase phase,
                                           const T* u, const T* v, const T* cur_u, const T* cur_v,
                                           const uint8_t* original, const T* bound, int32_t radius, bool check,
                                           Predictor pred = Predictor::linear, int64_t tight = kNoTightLevel) {
  const int64_t k = y * g.nx + x;
  SpeculationOf<T> s;
  s.recon_u = u[k];
  s.recon_v = v[k];
  if (s.recon_u == T(0) && s.recon_v == T(0)) {
    s.id = uint8_t(kZeroVectorId);
    s.recon_u = s.recon_v = T(0);  // +0 even for a -0 input: the same value
    return s;
  }
  if (!(bound[kMaxBoundId] > T(0))) return s;
  const T pu = predict(cur_u, g.nx, g.ny, x, y, step, phase, pred);
  const T pv = predict(cur_v, g.nx, g.ny, x, y, step, phase, pred);
  for (int id = first_bound_id(step, tight); id >= 1; --id) {
    int32_t cu, cv;
    T ru, rv;
    // A code out of range only grows as the bound shrinks: stop there.
    if (!quantize_residual(u[k], pu, bound[id], radius, cu, ru)) break;
    if (!quantize_residual(v[k], pv, bound[id], radius, cv, rv)) break;
    if (!within_bound(ru, u[k], bound[id]) || !within_bound(rv, v[k], bound[id])) continue;
    if (check && !signatures_hold(g, x, y, ru, rv, cur_u, cur_v, original)) continue;
    s.id = uint8_t(id);
    s.code_u = cu;
    s.code_v = cv;
    s.recon_u = ru;
    s.recon_v = rv;
    return s;
  }
  return s;
}

}  // namespace factz::detail
