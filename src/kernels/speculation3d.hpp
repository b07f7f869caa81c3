// The 3D FaCTz-S per-vertex decision and its decoder side (issue 22), shared by every
// backend: the CPU driver (backend/cpu/speculative3d_mode.cpp) calls speculate_vertex3d
// for each target of a phase and decode_speculative_target3d for each target it decodes;
// a CUDA mirror would call the same functions, one thread per target.
//
// The decision is the 2D one (kernels/speculation.hpp) on the Freudenthal mesh: bound ids
// from the largest down; candidate (u, v, w) quantized against the prediction; the exact
// pointwise check against the bound; every tetrahedron around the vertex (24 inside the
// grid) must keep its original signature on the current state. A zero vector takes
// kZeroVectorId (nothing stored); a vertex with no accepted candidate keeps its original
// value (id 0, stored exactly), which changes no signature. Each commit keeps every
// signature, so the field the decoder rebuilds has exactly the original's critical points.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation.hpp"  // kZeroVectorId
#include "kernels/tet.hpp"

namespace factz::detail {

/// The original signature byte of a tetrahedron outside the mesh (it touches a missing
/// vertex): never compared, as kMaskedTriangle in 2D. Signatures are at most 1 + 9.
inline constexpr uint8_t kMaskedTet = 0xFF;

/// The value a missing vertex stands in with, in every component, for the whole schedule:
/// in the writer's current state and in the decoder's planes alike (the 2D cubic streams'
/// zero_stand_ins rule), so the predictions of valid targets agree on both sides and a fill
/// value or a NaN never reaches a predictor. Its bits come from the mask section afterwards.
inline constexpr float kMissingStandIn3D = 0.0f;

/// Whether tetrahedron t of a cube passes through the cube's corner at offset d in
/// {0, 1}^3: d = 0 or (1, 1, 1) always, d = e_p for t's first axis p, d = (1, 1, 1) - e_r
/// for its last axis r.
FACTZ_HD bool tet_through(const int d[3], int t) {
  const int ones = d[0] + d[1] + d[2];
  return ones == 0 || ones == 3 || (ones == 1 && d[tet_axis(t, 0)] == 1) || (ones == 2 && d[tet_axis(t, 2)] == 0);
}

/// Tetrahedron ids around vertex (x, y, z) into out (at most 24); returns their count.
FACTZ_HD int incident_tets(int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z, int64_t out[24]) {
  int m = 0;
  for (int c = 0; c < 8; ++c) {
    const int d[3] = {c & 1, (c >> 1) & 1, (c >> 2) & 1};
    const int64_t cx = x - d[0], cy = y - d[1], cz = z - d[2];
    if (cx < 0 || cy < 0 || cz < 0 || cx >= nx - 1 || cy >= ny - 1 || cz >= nz - 1) continue;
    const int64_t cell = (cz * (ny - 1) + cy) * (nx - 1) + cx;
    for (int t = 0; t < 6; ++t)
      if (tet_through(d, t)) out[m++] = 6 * cell + t;
  }
  return m;
}

/// Whether one component has one strict sign over the 3 x 3 x 3 neighbourhood of vertex k =
/// (x, y, z) (clipped to the grid) when the vertex takes `cand`: then no cube around the
/// vertex holds a critical point (strictly_one_sided, for every cube at once). T (here and
/// below): float, or double for float64 fields (kernels/tet64.hpp decides on the doubles).
template <class T>
FACTZ_HD bool neighbourhood_one_sided(int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z,
                                      const T cand[3], const T* const cur[3]) {
  const int64_t k = (z * ny + y) * nx + x, sy = nx, sz = nx * ny;
  if (x > 0 && y > 0 && z > 0 && x + 1 < nx && y + 1 < ny && z + 1 < nz) {
    // Inside the grid: the least and the greatest of the 26 neighbours and the candidate,
    // without branches (all > 0 iff the least is, all < 0 iff the greatest is; the values
    // are finite: a missing vertex holds its stand-in, and NaN components make it missing).
    for (int comp = 0; comp < 3; ++comp) {
      T lo = cand[comp], hi = cand[comp];
      for (int64_t dz = -1; dz <= 1; ++dz)
        for (int64_t dy = -1; dy <= 1; ++dy) {
          const T* row = cur[comp] + k + dz * sz + dy * sy;
          const T a = row[-1], c = row[1];
          lo = a < lo ? a : lo;
          hi = a > hi ? a : hi;
          lo = c < lo ? c : lo;
          hi = c > hi ? c : hi;
          if (dz != 0 || dy != 0) {
            const T b = row[0];
            lo = b < lo ? b : lo;
            hi = b > hi ? b : hi;
          }
        }
      if (lo > T(0) || hi < T(0)) return true;
    }
    return false;
  }
  for (int comp = 0; comp < 3; ++comp) {
    bool pos = cand[comp] > T(0), neg = cand[comp] < T(0);
    for (int64_t dz = z > 0 ? -1 : 0; dz <= (z + 1 < nz ? 1 : 0) && (pos || neg); ++dz)
      for (int64_t dy = y > 0 ? -1 : 0; dy <= (y + 1 < ny ? 1 : 0) && (pos || neg); ++dy)
        for (int64_t dx = x > 0 ? -1 : 0; dx <= (x + 1 < nx ? 1 : 0); ++dx) {
          if (dx == 0 && dy == 0 && dz == 0) continue;
          const T q = cur[comp][k + dz * sz + dy * sy + dx];
          pos = pos && q > T(0);
          neg = neg && q < T(0);
        }
    if (pos || neg) return true;
  }
  return false;
}

/// neighbourhood_one_sided from the sign classes of the current state (`cls`, one byte per
/// vertex: sign_class3 of its current value) and the candidate's class `cand`: the same answer
/// (strict signs of finite values) in nine loads instead of up to 81, for a vertex inside the
/// grid (x, y, z all in [1, n - 2]).
FACTZ_HD bool neighbourhood_one_sided_classes(int64_t nx, int64_t ny, int64_t k, uint8_t cand, const uint8_t* cls) {
  const int64_t sy = nx, sz = nx * ny;
  uint32_t all = 0x00FFFFFFu;  // three bytes: the neighbours at x - 1, x, x + 1 of each row
  for (int64_t dz = -1; dz <= 1; ++dz)
    for (int64_t dy = -1; dy <= 1; ++dy) {
      const uint8_t* row = cls + k + dz * sz + dy * sy - 1;
      uint32_t three = uint32_t(row[0]) | uint32_t(row[1]) << 8 | uint32_t(row[2]) << 16;
      if (dz == 0 && dy == 0) three = (three & 0x00FF00FFu) | uint32_t(cand) << 8;  // the vertex takes cand
      all &= three;
    }
  return (all & (all >> 8) & (all >> 16) & 0xFFu) != 0;
}

/// A quiet cube's tetrahedra (one component of one strict sign at its eight corners) hold no
/// critical point: those through corner d keep their signature iff their original `want`
/// (the cube's six bytes) is 0.
FACTZ_HD bool quiet_cube_holds(const int d[3], const uint8_t* want) {
  for (int t = 0; t < 6; ++t)
    if (tet_through(d, t) && want[t] != 0 && want[t] != kMaskedTet) return false;
  return true;
}

/// Marks near[v] = 1 for the four vertices (tet_vertices) of every tetrahedron whose
/// `original` signature is a critical point (not 0, not kMaskedTet); `original` holds one
/// byte per tetrahedron of the nx x ny x nz grid, near nx ny nz bytes, zero on entry.
/// signatures_hold3d's near_cp.
FACTZ_HD void mark_near_critical3d(int64_t nx, int64_t ny, int64_t nz, const uint8_t* original, uint8_t* near) {
  const int64_t tets = 6 * (nx - 1) * (ny - 1) * (nz - 1);
  for (int64_t tet = 0; tet < tets; ++tet) {
    // Eight tetrahedra without a critical point (almost all of a field) in one load.
    if ((tet & 7) == 0 && tet + 8 <= tets) {
      uint64_t eight;
      memcpy(&eight, original + tet, 8);
      if (eight == 0) {
        tet += 7;
        continue;
      }
    }
    if (original[tet] == 0 || original[tet] == kMaskedTet) continue;
    int64_t idx[4];
    int axes[3];
    tet_vertices(nx, ny, tet, idx, axes);
    for (int j = 0; j < 4; ++j) near[idx[j]] = 1;
  }
}

/// Do all tetrahedra around vertex k = (x, y, z) keep their original signature (`original`,
/// one byte per tetrahedron) when the vertex takes (cu, cv, cw) and every other vertex its
/// current value? Tetrahedra outside the mesh (`original` kMaskedTet: they touch a missing
/// vertex, whose current value is its stand-in) are skipped. Decided per cube around the
/// vertex (the tetrahedra of incident_tets): a
/// cube whose eight vectors have one component of one strict sign holds no critical point
/// (strictly_one_sided), so its tetrahedra pass iff their original signature is 0 (tested
/// first for the whole neighbourhood at once, neighbourhood_one_sided); the others take the
/// inside test (tet_inside_verdict), and the exact types of the critical points that stay
/// inside are compared last (tet_type_is). The same answer as comparing tet_signature on each tetrahedron alone
/// (Speculative3D.TheCubeScreenDecidesAsEachTetrahedronAlone), with no index division.
/// `near_cp` (optional, mark_near_critical3d): one byte per vertex, nonzero iff some
/// tetrahedron around it holds a critical point in the original; it answers a quiet
/// neighbourhood in one load instead of walking its 24 tetrahedra. `cls` (optional; the CPU
/// writer's): sign_class3 of every vertex's current value, which screens an inside
/// vertex's neighbourhood (neighbourhood_one_sided_classes); the answer is the same without.
template <class T>
FACTZ_HD bool signatures_hold3d(int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z, T cu, T cv,
                                T cw, const T* cur_u, const T* cur_v, const T* cur_w, const uint8_t* original,
                                const uint8_t* near_cp = nullptr, const uint8_t* cls = nullptr) {
  const int64_t k = (z * ny + y) * nx + x;
  const int64_t step[3] = {1, nx, nx * ny};
  const T cand[3] = {cu, cv, cw};
  const T* const cur[3] = {cur_u, cur_v, cur_w};
  const bool inside = x > 0 && y > 0 && z > 0 && x + 1 < nx && y + 1 < ny && z + 1 < nz;
  const uint8_t cand_class = sign_class3(cu, cv, cw);
  const bool all_quiet = cls && inside ? neighbourhood_one_sided_classes(nx, ny, k, cand_class, cls)
                                       : neighbourhood_one_sided(nx, ny, nz, x, y, z, cand, cur);
  // Every cube around the vertex is quiet: its tetrahedra keep their signatures iff none of
  // them holds a critical point in the original, which near_cp says at once.
  if (all_quiet && near_cp) return near_cp[k] == 0;
  // Tetrahedra whose critical point stays inside: their types are compared last, once no
  // cheaper test has failed (the exact type is the costly part of a failing candidate).
  struct Typed {
    uint8_t want;
    int axes[3];
    T u[4], v[4], w[4];
  } typed[24];
  int n_typed = 0;
  for (int c = 0; c < 8; ++c) {
    const int d[3] = {c & 1, (c >> 1) & 1, (c >> 2) & 1};
    const int64_t cx = x - d[0], cy = y - d[1], cz = z - d[2];
    if (cx < 0 || cy < 0 || cz < 0 || cx >= nx - 1 || cy >= ny - 1 || cz >= nz - 1) continue;
    const uint8_t* want = original + 6 * ((cz * (ny - 1) + cy) * (nx - 1) + cx);
    const int64_t base = k - d[0] * step[0] - d[1] * step[1] - d[2] * step[2];
    if (all_quiet) {
      if (!quiet_cube_holds(d, want)) return false;
      continue;
    }
    // The cube's vertices: corner j is base plus the steps of the bits of j (k is corner c).
    int64_t at[8];
    for (int j = 0; j < 8; ++j) at[j] = base + (j & 1) * step[0] + ((j >> 1) & 1) * step[1] + ((j >> 2) & 1) * step[2];
    // With the sign classes, the quiet screens of the cube and of its tetrahedra take bytes
    // (a class bit shared by the corners is a component of one strict sign there: the same
    // answers as strictly_one_sided on the values).
    uint8_t corner_class[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (cls) {
      uint8_t shared = 0x3F;
      for (int j = 0; j < 8; ++j) shared &= corner_class[j] = j == c ? cand_class : cls[at[j]];
      if (shared != 0) {
        if (!quiet_cube_holds(d, want)) return false;
        continue;
      }
    }
    T u[8], v[8], w[8];
    for (int j = 0; j < 8; ++j) {
      u[j] = j == c ? cu : cur_u[at[j]];
      v[j] = j == c ? cv : cur_v[at[j]];
      w[j] = j == c ? cw : cur_w[at[j]];
    }
    if (!cls && (strictly_one_sided(u, 8) || strictly_one_sided(v, 8) || strictly_one_sided(w, 8))) {
      if (!quiet_cube_holds(d, want)) return false;
      continue;
    }
    for (int t = 0; t < 6; ++t) {
      if (!tet_through(d, t) || want[t] == kMaskedTet) continue;  // off the mesh: never compared
      const int axes[3] = {tet_axis(t, 0), tet_axis(t, 1), tet_axis(t, 2)};
      const int corner[4] = {0, 1 << axes[0], (1 << axes[0]) | (1 << axes[1]), 7};
      if (cls && (corner_class[0] & corner_class[corner[1]] & corner_class[corner[2]] & corner_class[7]) != 0) {
        if (want[t] != 0) return false;  // one-sided: no critical point, where the original has one
        continue;
      }
      int64_t idx[4];
      T tu[4], tv[4], tw[4];
      for (int j = 0; j < 4; ++j) {
        const int q = corner[j];
        idx[j] = at[q];
        tu[j] = u[q];
        tv[j] = v[q];
        tw[j] = w[q];
      }
      const InsideVerdict verdict = tet_inside_verdict(want[t], idx, tu, tv, tw, cls != nullptr);
      if (verdict == InsideVerdict::differs) return false;
      if (verdict == InsideVerdict::needs_type) {
        Typed& e = typed[n_typed++];
        e.want = want[t];
        for (int j = 0; j < 4; ++j) {
          if (j < 3) e.axes[j] = axes[j];
          e.u[j] = tu[j];
          e.v[j] = tv[j];
          e.w[j] = tw[j];
        }
      }
    }
  }
  for (int i = 0; i < n_typed; ++i)
    if (!tet_type_is(typed[i].want, typed[i].axes, typed[i].u, typed[i].v, typed[i].w)) return false;
  return true;
}

template <class T>
struct Speculation3DOf {
  uint8_t id = 0;  ///< 0 exact, 1..kMaxBoundId bound id, kZeroVectorId
  int32_t code[3] = {0, 0, 0};
  T recon[3] = {0, 0, 0};  ///< the committed values (the original when exact)
};
using Speculation3D = Speculation3DOf<float>;

/// Deferred-commit speculation for target (x, y, z) of the phase with axis bits `axes` at
/// level `step`, `along` its per-component predictor choices (ScheduledPhase3D::along; the
/// file comment gives the rule). `f` the original planes (u, v, w), `cur`
/// the current state, `original` the original signature per tetrahedron, `bound` holds
/// bound_of_id for every id, `radius` limits the codes; `check` false skips the signature
/// test (tests only: it shows that the check is what keeps the critical points); `near_cp`
/// and `cls` as for signatures_hold3d (a caller passing `cls` keeps it current: the class of
/// each commit).
template <class T>
FACTZ_HD Speculation3DOf<T> speculate_vertex3d(int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y, int64_t z,
                                              int64_t step, uint8_t axes, const uint8_t along[3],
                                              const T* const f[3], T* const cur[3],
                                              const uint8_t* original, const T* bound, int32_t radius, bool check,
                                              const uint8_t* near_cp = nullptr, const uint8_t* cls = nullptr) {
  const int64_t k = (z * ny + y) * nx + x;
  Speculation3DOf<T> s;
  for (int c = 0; c < 3; ++c) s.recon[c] = f[c][k];
  if (s.recon[0] == T(0) && s.recon[1] == T(0) && s.recon[2] == T(0)) {
    s.id = uint8_t(kZeroVectorId);
    s.recon[0] = s.recon[1] = s.recon[2] = T(0);  // +0 even for a -0 input: the same value
    return s;
  }
  if (!(bound[kMaxBoundId] > T(0))) return s;
  T pred[3];
  for (int c = 0; c < 3; ++c) pred[c] = predict3d(cur[c], nx, ny, nz, x, y, z, step, axes, along[c]);
  for (int id = kMaxBoundId; id >= 1; --id) {
    int32_t code[3];
    T r[3];
    bool fits = true, within = true;
    // A code out of range only grows as the bound shrinks: stop there.
    for (int c = 0; c < 3 && fits; ++c) fits = quantize_residual(f[c][k], pred[c], bound[id], radius, code[c], r[c]);
    if (!fits) break;
    for (int c = 0; c < 3 && within; ++c) within = within_bound(r[c], f[c][k], bound[id]);
    if (!within) continue;
    if (check &&
        !signatures_hold3d(nx, ny, nz, x, y, z, r[0], r[1], r[2], cur[0], cur[1], cur[2], original, near_cp, cls))
      continue;
    s.id = uint8_t(id);
    for (int c = 0; c < 3; ++c) {
      s.code[c] = code[c];
      s.recon[c] = r[c];
    }
    return s;
  }
  return s;
}

/// Reconstructs target (x, y, z) into out[c][k] from the planes decoded so far (`along` as
/// for speculate_vertex3d). `exact`
/// points at the target's (u, v, w) when id is 0; sym[c] = code + radius when 1 <= id <=
/// kMaxBoundId. Returns false when a coded value is not finite, which the writer never
/// produces (a damaged stream). The writer's commit computes the same expression.
template <class T>
FACTZ_HD bool decode_speculative_target3d(T* const out[3], int64_t nx, int64_t ny, int64_t nz, int64_t x, int64_t y,
                                          int64_t z, int64_t step, uint8_t axes, const uint8_t along[3],
                                          uint16_t id, const T* exact,
                                          const uint16_t sym[3], const T* bound, int32_t radius) {
  const int64_t k = (z * ny + y) * nx + x;
  if (id == kZeroVectorId) {
    out[0][k] = out[1][k] = out[2][k] = T(0);
    return true;
  }
  if (id == 0) {
    for (int c = 0; c < 3; ++c) out[c][k] = exact[c];
    return true;
  }
  bool finite = true;
  for (int c = 0; c < 3; ++c)
    finite = coded_value(predict3d(out[c], nx, ny, nz, x, y, z, step, axes, along[c]), bound[id], sym[c], radius,
                         out[c][k]) && finite;
  return finite;
}

}  // namespace factz::detail
