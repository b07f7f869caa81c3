// The signatures of one cube's six Freudenthal tetrahedra, as the CPU backend decides them,
// in the FACTZ_HD form every backend can call (issue 22, the CUDA mirror of the 3D modes):
//
//  - mesh_cube_signatures3d: the extractor's table (topology/extract3d.cpp cube_signatures),
//    which the 3D speculative mode compares against (signatures_on_mesh);
//  - check_cube_signatures3d and changed_cube_tets3d: the 3D block mode's exact check, which
//    derives only the tetrahedra a caller asks for (backend/cpu/block3d_mode.cpp calls them
//    for float and double fields).
//
// Each screen is exact (kernels/tet.hpp): a cube or tetrahedron with one component of one
// strict sign holds no critical point, nor does one with a flat image; the rest take
// tet_signature. The extractor keeps its own copy of the first (with its per-cube buffers);
// the GPU model tests (tests/cuda/test_gpu_model3d.cpp) compare the bytes these give with the
// CPU pipeline's, so a drift between the copies fails there.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/block_bounds.hpp"  // float_bits
#include "kernels/hd.hpp"
#include "kernels/tet.hpp"

namespace factz::detail {

/// Index offsets of a cube's eight corners: corner j adds one step along each axis whose
/// bit is set in j (kernels/safe_bound3d.hpp cube_safe_bounds's numbering).
FACTZ_HD void cube_corner_offsets3d(int64_t nx, int64_t ny, int64_t off[8]) {
  for (int j = 0; j < 8; ++j) off[j] = (j & 1) + ((j >> 1) & 1) * nx + ((j >> 2) & 1) * nx * ny;
}

/// The extractor's signatures of the cube whose corner 0 is vertex `base` into out[0..5]
/// (tetrahedron order); `m` the missing vertices or null: a tetrahedron touching one is off
/// the mesh (0 here; the speculative mode marks it kMaskedTet afterwards).
FACTZ_HD void mesh_cube_signatures3d(const float* u, const float* v, const float* w, const uint8_t* m, int64_t base,
                                     const int64_t off[8], uint8_t out[6]) {
  float cu[8], cv[8], cw[8];
  bool any_missing = false;
  for (int k = 0; k < 8; ++k) {
    const int64_t i = base + off[k];
    cu[k] = u[i];
    cv[k] = v[i];
    cw[k] = w[i];
    any_missing = any_missing || (m && m[i]);
  }
  // A cube whose eight vectors are equal (a zero or constant region) has only flat images.
  bool constant = true;
  for (int k = 1; k < 8; ++k) constant = constant && cu[k] == cu[0] && cv[k] == cv[0] && cw[k] == cw[0];
  const bool quiet = strictly_one_sided(cu, 8) || strictly_one_sided(cv, 8) || strictly_one_sided(cw, 8);
  if (!any_missing && (constant || quiet)) {
    for (int t = 0; t < 6; ++t) out[t] = 0;
    return;
  }
  for (int t = 0; t < 6; ++t) {
    int axes[3], corner[4] = {0, 0, 0, 7};
    for (int k = 0; k < 3; ++k) axes[k] = tet_axis(t, k);
    corner[1] = 1 << axes[0];
    corner[2] = corner[1] | (1 << axes[1]);
    int64_t idx[4];
    float tu[4], tv[4], tw[4];
    bool off_mesh = false;
    for (int k = 0; k < 4; ++k) {
      idx[k] = base + off[corner[k]];
      off_mesh = off_mesh || (m && m[idx[k]]);
      tu[k] = cu[corner[k]];
      tv[k] = cv[corner[k]];
      tw[k] = cw[corner[k]];
    }
    if (off_mesh || strictly_one_sided(tu, 4) || strictly_one_sided(tv, 4) || strictly_one_sided(tw, 4)) {
      out[t] = 0;
      continue;
    }
    SosPoint3 p[4];
    for (int k = 0; k < 4; ++k) p[k] = {tu[k], tv[k], tw[k], idx[k]};
    out[t] = flat_image(p) ? uint8_t(0) : tet_signature(idx, axes, tu, tv, tw);
  }
}

/// The block check's signatures of the cube at `base` on the planes p (u, v, w) of the
/// tetrahedra whose bit is set in `which` (the others' out[t] is left alone). T is float, or
/// double on the CPU (kernels/tet64.hpp then supplies the float64 flat_image and
/// tet_signature).
template <class T>
FACTZ_HD void check_cube_signatures3d(const T* const p[3], int64_t base, const int64_t off[8], uint8_t which,
                                      uint8_t out[6]) {
  T c[3][8];
  for (int j = 0; j < 8; ++j)
    for (int comp = 0; comp < 3; ++comp) c[comp][j] = p[comp][base + off[j]];
  if (strictly_one_sided(c[0], 8) || strictly_one_sided(c[1], 8) || strictly_one_sided(c[2], 8)) {
    for (int t = 0; t < 6; ++t) out[t] = 0;
    return;
  }
  for (int t = 0; t < 6; ++t) {
    if (!((which >> t) & 1)) continue;
    int axes[3];
    for (int k = 0; k < 3; ++k) axes[k] = tet_axis(t, k);
    const int corner[4] = {0, 1 << axes[0], (1 << axes[0]) | (1 << axes[1]), 7};
    int64_t idx[4];
    T tu[4], tv[4], tw[4];
    for (int k = 0; k < 4; ++k) {
      idx[k] = base + off[corner[k]];
      tu[k] = c[0][corner[k]];
      tv[k] = c[1][corner[k]];
      tw[k] = c[2][corner[k]];
    }
    if (strictly_one_sided(tu, 4) || strictly_one_sided(tv, 4) || strictly_one_sided(tw, 4)) {
      out[t] = 0;
      continue;
    }
    SosPoint3Of<T> pts[4];
    for (int k = 0; k < 4; ++k) pts[k] = {tu[k], tv[k], tw[k], idx[k]};
    out[t] = flat_image(pts) ? uint8_t(0) : tet_signature(idx, axes, tu, tv, tw);
  }
}

/// The bits of a value (float or double), for comparisons that tell -0 from +0.
template <class T>
FACTZ_HD auto value_bits3d(T x) {
  if constexpr (sizeof(T) == 8) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
  } else {
    return float_bits(x);
  }
}

/// The cube's tetrahedra (bit t) with a corner whose bits differ between the planes a and b:
/// the others have the same values and indices in both, hence the same signature.
template <class T>
FACTZ_HD uint8_t changed_cube_tets3d(const T* const a[3], const T* const b[3], int64_t base, const int64_t off[8]) {
  unsigned corners = 0;
  for (int j = 0; j < 8; ++j)
    for (int comp = 0; comp < 3; ++comp)
      if (value_bits3d(a[comp][base + off[j]]) != value_bits3d(b[comp][base + off[j]])) corners |= 1u << j;
  return tets_touching(corners);
}

}  // namespace factz::detail
