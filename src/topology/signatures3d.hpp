// The 3D extractor for callers that already hold a field's mask (compare, and later the 3D
// compressors), and its two quick exclusions, shared so that every caller skips the same
// work. Neither decides anything the kernels would decide otherwise: test_topology3d checks
// the extractor against tet_signature alone and against the independent reference on
// tie-heavy fields, where both exclusions fire constantly.
#pragma once

#include <cstdint>
#include <vector>

#include "factz/topology3d.hpp"
#include "kernels/tet.hpp"

namespace factz::detail {

/// Whether the origin is strictly separated from the points by a coordinate plane: all
/// n values of one component > 0, or all < 0. Then no tetrahedron on these points holds a
/// critical point, perturbation included: Simulation of Simplicity decides as for the
/// points moved by an infinitesimal eps (the origin too), and such moves keep a strict
/// separation, so tet_contains_origin is false. Only a shortcut: the signature is the
/// kernels' (tet_signature) whenever this says no. +-0 count as neither sign.
inline bool strictly_one_sided(const float* x, int n) {
  bool pos = true, neg = true;
  for (int k = 0; k < n; ++k) {
    pos = pos && x[k] > 0.0f;
    neg = neg && x[k] < 0.0f;
  }
  return pos || neg;
}

/// Whether the four vectors (path order) span no volume: their plain orientation is exactly
/// zero (det J = 0). Then the tetrahedron holds no critical point: under the contract's
/// Simulation of Simplicity the perturbed origin always ends up outside a flat image
/// (docs/architecture.md, "Observations for later work"; the reason why `degenerate` is
/// never reported). Worth it because orient3_plain is one double filter, while the
/// symbolic perturbation of a flat image (zero regions, constant regions, ties) walks up
/// to 84 wide-integer minors in each of the five orientations.
inline bool flat_image(const SosPoint3 p[4]) { return orient3_plain(p) == 0; }

/// The signatures of a validated field on the mesh of its missing vertices (`missing`:
/// missing_mask(f), empty for none), in tetrahedron order, for callers that already hold
/// the mask.
std::vector<uint8_t> signatures_on_mesh(const VectorField3D& f, const std::vector<uint8_t>& missing, Exec exec);

}  // namespace factz::detail
