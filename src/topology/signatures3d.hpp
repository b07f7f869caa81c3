// The 3D extractor for callers that already hold a field's mask (compare, and the 3D
// speculative compressor for its original signatures). Its two quick exclusions
// (strictly_one_sided, flat_image) live in kernels/tet.hpp, shared with the compressor's
// per-vertex check so that every caller skips the same work. Neither decides anything the
// kernels would decide otherwise: test_topology3d checks the extractor against tet_signature
// alone and against the independent reference on tie-heavy fields, where both exclusions
// fire constantly.
#pragma once

#include <cstdint>
#include <vector>

#include "factz/topology3d.hpp"
#include "kernels/tet.hpp"

namespace factz::detail {

/// The signatures of a validated field on the mesh of its missing vertices (`missing`:
/// missing_mask(f), empty for none), in tetrahedron order, for callers that already hold
/// the mask.
std::vector<uint8_t> signatures_on_mesh(const VectorField3D& f, const std::vector<uint8_t>& missing, Exec exec);
std::vector<uint8_t> signatures_on_mesh(const VectorField3D64& f, const std::vector<uint8_t>& missing, Exec exec);

}  // namespace factz::detail
