// Per-vertex, per-cube and per-target bodies of the CUDA 3D speculative mode (FaCTz-S on the
// Freudenthal mesh, float32; issue 22; backend/cpu/speculative3d_mode.cpp).
//
// Encoder: the original signature table one thread per cube (the extractor's decisions,
// kernels/cube_signatures3d.hpp), then one kernel per phase of kernels/interpolation3d.hpp's
// schedule, one thread per target, calling kernels/speculation3d.hpp's speculate_vertex3d
// and committing to the per-vertex arrays (targets of a phase share no tetrahedron, so the
// result does not depend on the order). The host then builds the stream from the per-vertex
// ids and symbols with the payload function the CPU path calls (streams/vector3d_modes.hpp).
// Decoder: the anchors, then one kernel per phase; each target's code and exact-value
// positions come from exclusive scans of the id stream (schedule order).
// gpu_model3d.cpp replays the same bodies on the host in launch order.
#pragma once

#include <cstdint>

#include "backend/cuda/block3d_bodies.hpp"  // Grid3D, Planes3
#include "kernels/cube_signatures3d.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation3d.hpp"
#include "kernels/speculative_decode.hpp"  // kMissingVertex

namespace factz::cuda_detail {

/// Kernel body, one thread per vertex: the current state starts as the original, id 0 and
/// symbols 0; a missing vertex (`missing`, null for none) holds the stand-in for the whole
/// run and id kMissingVertex (run_speculative3d's initialisation).
FACTZ_HD void speculative3d_init_body(int64_t k, Planes3 f, const uint8_t* missing, MutablePlanes3 cur, uint8_t* id,
                                      uint16_t* s0, uint16_t* s1, uint16_t* s2) {
  const bool miss = missing && missing[k];
  for (int c = 0; c < 3; ++c) cur.c[c][k] = miss ? detail::kMissingStandIn3D : f.c[c][k];
  s0[k] = s1[k] = s2[k] = 0;
  id[k] = miss ? detail::kMissingVertex : 0;
}

/// Kernel body, one thread per cube: the original signatures of its six tetrahedra into
/// sig[6 cube ..] (signatures_on_mesh's table), kMaskedTet for those touching a missing
/// vertex (`missing`, null for none: mark_masked_tets).
FACTZ_HD void mesh_signatures3d_body(const Grid3D& g, int64_t cube, Planes3 f, const uint8_t* missing, uint8_t* sig) {
  int64_t off[8];
  detail::cube_corner_offsets3d(g.nx, g.ny, off);
  const int64_t base = g.cube_base(cube);
  detail::mesh_cube_signatures3d(f.c[0], f.c[1], f.c[2], missing, base, off, sig + 6 * cube);
  const uint8_t off_mesh = detail::cube_masked_tets(missing, base, g.nx, g.ny);
  for (int t = 0; t < 6; ++t)
    if ((off_mesh >> t) & 1) sig[6 * cube + t] = detail::kMaskedTet;
}

/// Coordinates of target t of lattice L.
FACTZ_HD void lattice_coords3d(const detail::PhaseLattice3D& L, int64_t t, int64_t& x, int64_t& y, int64_t& z) {
  const int64_t r = t / L.count_x;
  x = L.x0 + (t % L.count_x) * L.d;
  y = L.y0 + (r % L.count_y) * L.d;
  z = L.z0 + (r / L.count_y) * L.d;
}

/// Kernel body, one thread per target t of phase ph: the decision and its commit (the
/// current state, the id and the three symbols code + kRadius of the vertex); a missing
/// target keeps its stand-in.
FACTZ_HD void speculate_target3d_body(const Grid3D& g, const detail::ScheduledPhase3D& ph, int64_t t, Planes3 f,
                                      const uint8_t* missing, MutablePlanes3 cur, const uint8_t* sig,
                                      const float* bound, uint8_t* ids, uint16_t* s0, uint16_t* s1, uint16_t* s2) {
  int64_t x, y, z;
  lattice_coords3d(ph.lattice, t, x, y, z);
  const int64_t k = (z * g.ny + y) * g.nx + x;
  if (missing && missing[k]) return;
  const detail::Speculation3D sp = detail::speculate_vertex3d(g.nx, g.ny, g.nz, x, y, z, ph.step, ph.axes, ph.along, f.c, cur.c,
                                                              sig, bound, detail::kRadius, true);
  uint16_t* const sym[3] = {s0, s1, s2};
  for (int c = 0; c < 3; ++c) {
    cur.c[c][k] = sp.recon[c];
    sym[c][k] = uint16_t(sp.code[c] + detail::kRadius);
  }
  ids[k] = sp.id;
}

// ---- decoder ------------------------------------------------------------------------

/// The flags the decoder scans: target i of the id stream has a code (1 <= id <= 30) or an
/// exact value (id 0).
FACTZ_HD uint8_t id_coded3d(uint16_t id) { return id >= 1 && id <= detail::kMaxBoundId ? 1 : 0; }
FACTZ_HD uint8_t id_exact3d(uint16_t id) { return id == 0 ? 1 : 0; }

/// Kernel body, one thread per anchor a: its exact values (stored first, u, v, w each).
FACTZ_HD void decode_anchor3d_body(const detail::PhaseLattice3D& A, int64_t nx, int64_t ny, int64_t a,
                                   const float* exact, MutablePlanes3 out) {
  const int64_t k = detail::lattice_vertex3d(A, nx, ny, a);
  for (int c = 0; c < 3; ++c) out.c[c][k] = exact[3 * a + c];
}

/// Kernel body, one thread per target t of phase ph: its reconstruction from the planes
/// decoded so far. ids: the stream's ids (schedule order; kMissingVertex for a missing
/// target, which takes the stand-in: host_stream3d.cpp spreads a masked stream's ids so);
/// code_at / exact_at: exclusive scans of id_coded3d / id_exact3d over them (exact_at
/// counting the anchors first); codes: the three code lists. *bad set for an id out of
/// range or a value that is not finite.
FACTZ_HD void decode_target3d_body(const Grid3D& g, const detail::ScheduledPhase3D& ph, int64_t t, const uint16_t* ids,
                                   const int64_t* code_at, const int64_t* exact_at, const uint16_t* c0,
                                   const uint16_t* c1, const uint16_t* c2, const float* exact, const float* bound,
                                   MutablePlanes3 out, int* bad) {
  const int64_t i = ph.offset + t;
  const uint16_t id = ids[i];
  int64_t x, y, z;
  lattice_coords3d(ph.lattice, t, x, y, z);
  if (id == detail::kMissingVertex) {
    const int64_t k = (z * g.ny + y) * g.nx + x;
    for (int c = 0; c < 3; ++c) out.c[c][k] = detail::kMissingStandIn3D;
    return;
  }
  const bool coded = id_coded3d(id), is_exact = id_exact3d(id);
  if (!coded && !is_exact && id != detail::kZeroVectorId) {
    *bad = 1;
    return;
  }
  uint16_t s[3] = {0, 0, 0};
  if (coded) {
    s[0] = c0[code_at[i]];
    s[1] = c1[code_at[i]];
    s[2] = c2[code_at[i]];
  }
  if (!detail::decode_speculative_target3d(out.c, g.nx, g.ny, g.nz, x, y, z, ph.step, ph.axes, ph.along, id,
                                           is_exact ? exact + 3 * exact_at[i] : nullptr, s, bound, detail::kRadius))
    *bad = 1;
}

}  // namespace factz::cuda_detail
