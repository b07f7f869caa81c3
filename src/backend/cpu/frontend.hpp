// Frontends decide how much error each vertex may take and which vertices are stored
// exactly; the backbone (tiled_quantizer) does the rest. Each frontend returns the exact
// planes the decoder will reconstruct.
//
// `missing` (optional, one byte per vertex, nonzero = missing): the field passed in is the
// filled working copy (streams/missing_fill.hpp); triangles touching a missing vertex are
// outside the mesh, so they constrain no bound and are never checked, and a missing vertex
// is never stored exactly (its value is the mask sections').
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "factz/field.hpp"
#include "backend/cpu/tiled_quantizer.hpp"

namespace factz::detail {

/// What block mode leaves in its planes besides tile ids and exact flags:
/// the reconstructions (`reconstructions`: what the GPU model and the tests compare), or the
/// symbols and escapes of every band, coded while the band is in cache (`codes`: what the
/// codec takes; a float plane then keeps no recon, which saves a pass and a plane-sized
/// array; a float64 plane keeps it for its rounded exact values). The streams are the same.
enum class FrontendKeeps { reconstructions, codes };

/// T: float, or double for a float64 field.
template <class T>
struct FrontendResultOf {
  QuantizedPlaneOf<T> u, v;
  T eb = T(0);                    ///< the bound the planes were quantized with (their tile ids' steps)
  int64_t repair_rounds = 0;      ///< exact check passes (block mode)
  int64_t repaired_vertices = 0;  ///< vertices sent to exact storage by the check
  /// Cell rows the exact check's first round visited (block mode: each of the ny - 1 once,
  /// in the band stage or after it; tests hold both ways to that).
  int64_t checked_cell_rows = 0;
  std::vector<std::pair<std::string, double>> stage_seconds;  ///< wall time per step
};
using FrontendResult = FrontendResultOf<float>;
using FrontendResult64 = FrontendResultOf<double>;

/// Mode none: one uniform bound eb everywhere (eb == 0: every tile exact). exact_edges
/// (EdgeBits): outer rows/columns whose vertices are stored exactly (force_exact_edges).
void run_none(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges = 0,
              const uint8_t* missing = nullptr);
void run_none(const VectorField2D64& f, double eb, int threads, FrontendResult64& out, uint8_t exact_edges = 0,
              const uint8_t* missing = nullptr);

/// Mode block (FaCTz-B): safe bounds per triangle, per vertex, per tile; then the exact
/// signature check with repair until every triangle keeps its signature.
void run_block(const VectorField2D& f, float eb, int threads, FrontendResult& out, uint8_t exact_edges = 0,
               const uint8_t* missing = nullptr, FrontendKeeps keeps = FrontendKeeps::reconstructions);
/// The float64 FaCTz-B: safe bounds, ids and quantization in double; its exact check
/// derives every original triangle's signature (it takes no triangle as proven
/// critical-point free by a safe bound, which rounds for doubles).
void run_block(const VectorField2D64& f, double eb, int threads, FrontendResult64& out, uint8_t exact_edges = 0,
               const uint8_t* missing = nullptr, FrontendKeeps keeps = FrontendKeeps::reconstructions);

/// Whether vertex (x, y) lies on one of the outer rows/columns named by `edges` (EdgeBits:
/// 1 x = 0, 2 x = nx - 1, 4 y = 0, 8 y = ny - 1).
inline bool on_exact_edge(int64_t x, int64_t y, int64_t nx, int64_t ny, uint8_t edges) {
  return ((edges & 1) && x == 0) || ((edges & 2) && x == nx - 1) || ((edges & 4) && y == 0) ||
         ((edges & 8) && y == ny - 1);
}

/// Stores the vertices of the named edges exactly in both planes, unless the
/// reconstruction already equals the original bit for bit (then the decoder reproduces it
/// whatever the tile's bound). Exact vertices keep their quantized integer for prediction,
/// so no other vertex's reconstruction changes.
void force_exact_edges(const VectorField2D& f, uint8_t edges, FrontendResult& out);
void force_exact_edges(const VectorField2D64& f, uint8_t edges, FrontendResult64& out);

/// The exact check with repair shared by frontends: vertices of every triangle whose
/// signature on the reconstruction (u.recon and v.recon, or reconstruction_row/_at where the
/// planes keep none) differs from its signature on the original field
/// become exact in both planes, and the triangles around them are checked again, until
/// none differs. cp_free (optional, one byte per cell, bit t for triangle t) marks
/// triangles already proven critical-point free in the original, whose original signature
/// is then known to be 0.
void repair_signatures(const VectorField2D& f, const uint8_t* cp_free, int threads, FrontendResult& out,
                       const uint8_t* missing = nullptr);
void repair_signatures(const VectorField2D64& f, const uint8_t* cp_free, int threads, FrontendResult64& out,
                       const uint8_t* missing = nullptr);

}  // namespace factz::detail
