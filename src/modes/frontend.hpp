// Frontends decide how much error each vertex may take and which vertices are stored
// exactly; the backbone (tiled_quantizer) does the rest. Each frontend returns the exact
// planes the decoder will reconstruct.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "factz/field.hpp"
#include "modes/tiled_quantizer.hpp"

namespace factz::detail {

struct FrontendResult {
  QuantizedPlane u, v;
  int64_t repair_rounds = 0;      ///< exact check passes (block mode)
  int64_t repaired_vertices = 0;  ///< vertices sent to exact storage by the check
  std::vector<std::pair<std::string, double>> stage_seconds;  ///< wall time per step
};

/// Mode none: one uniform bound eb everywhere (eb == 0: every tile exact).
void run_none(const VectorField2D& f, float eb, int threads, FrontendResult& out);

/// Mode block (FaCTz-B): safe bounds per triangle, per vertex, per tile; then the exact
/// signature check with repair until every triangle keeps its signature.
void run_block(const VectorField2D& f, float eb, int threads, FrontendResult& out);

/// The exact check with repair shared by frontends: vertices of every triangle whose
/// signature on (u.recon, v.recon) differs from its signature on the original field
/// become exact in both planes, and the triangles around them are checked again, until
/// none differs. cp_free (optional, one byte per cell, bit t for triangle t) marks
/// triangles already proven critical-point free in the original, whose original signature
/// is then known to be 0.
void repair_signatures(const VectorField2D& f, const uint8_t* cp_free, int threads, FrontendResult& out);

}  // namespace factz::detail
