// The SZ-style backbone shared by every 2D mode: per-tile error bounds on the bound-id
// grid, pre-quantization, Lorenzo prediction inside 32 x 32 tiles on the integers
// (decoding is a 2D prefix sum), escape of out-of-range codes, and a side stream for
// values stored exactly. Modes only decide the bound ids and which vertices are exact.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "factz/status.hpp"
#include "format/container.hpp"
#include "kernels/exact_rounding.hpp"
#include "kernels/tiles.hpp"
#include "streams/tiled_lists.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// One component plane in the encoder: what the decoder will reconstruct, and why. The
/// pre-quantized integers q are a pure function of (value, tile id) and are recomputed
/// where needed instead of stored. T: float, or double for a float64 field.
template <class T>
struct QuantizedPlaneOf {
  std::vector<uint8_t> tile_ids;  ///< bound id per tile (0: the tile is stored exactly)
  /// The decoder's value, per vertex; empty where the frontend did not keep it (block mode
  /// coding its bands, FrontendKeeps::codes, float planes): reconstruction_at and
  /// reconstruction_row derive it from the value, the tile id and the exact flag then.
  BigVector<T> recon;
  /// Per vertex: 0 coded; kStoredExact: stored in the exact list with all its bits;
  /// kStoredRounded (float64 block mode only, which keeps recon): stored in the exact list
  /// rounded to 24 significant bits, which meets eb (block_mode.cpp round_exact_values). The
  /// exact list holds recon either way.
  BigVector<uint8_t> exact;
  /// Filled by a frontend that codes the plane band by band (block mode, FrontendKeeps::codes),
  /// else empty: code_tile_row's symbols of every vertex and its escapes per tile row, which
  /// encode_plane takes instead of computing them. Symbols do not depend on the exact flags.
  BigVector<uint16_t> symbols;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> escapes;
};
inline constexpr uint8_t kStoredExact = kExactListFull;  // kernels/exact_rounding.hpp
inline constexpr uint8_t kStoredRounded = kExactListRounded;
using QuantizedPlane = QuantizedPlaneOf<float>;
using QuantizedPlane64 = QuantizedPlaneOf<double>;

/// Quantizes plane x with the given tile ids. A vertex whose reconstruction misses its
/// own required bound (vertex_ids, or the tile bound when null) is stored exactly, unless
/// it is missing (`missing`, optional): a missing vertex keeps its reconstruction.
/// The float64 overload does every step in double (kernels/quantizer.hpp).
void quantize_plane(std::span<const float> x, const TileLayout& layout, float eb,
                    std::vector<uint8_t> tile_ids, const uint8_t* vertex_ids, int threads,
                    QuantizedPlane& out, const uint8_t* missing = nullptr);
void quantize_plane(std::span<const double> x, const TileLayout& layout, double eb,
                    std::vector<uint8_t> tile_ids, const uint8_t* vertex_ids, int threads,
                    QuantizedPlane64& out, const uint8_t* missing = nullptr);

/// quantize_plane in pieces, for a frontend that decides the tile ids band by band:
/// start_quantized_plane sizes `out` (tile ids all 0, per-vertex arrays uninitialized), then
/// quantize_rows quantizes rows [y0, y1) (whole tile rows) with the tile ids out.tile_ids
/// holds for them; `row_ids` (or null) is the vertex ids of those rows, row y0 first. Bands
/// may run in parallel (they write disjoint rows). The reconstructions go to out.recon, or
/// to `recon_rows` (row y0 first) when given: a frontend that keeps no recon passes a band
/// buffer (start_quantized_plane with keep_recon false).
template <class T>
void start_quantized_plane(const TileLayout& layout, QuantizedPlaneOf<T>& out, bool keep_recon = true);
void quantize_rows(std::span<const float> x, const TileLayout& layout, float eb, int64_t y0, int64_t y1,
                   const uint8_t* row_ids, QuantizedPlane& out, const uint8_t* missing = nullptr,
                   float* recon_rows = nullptr, int32_t* q_rows = nullptr);
void quantize_rows(std::span<const double> x, const TileLayout& layout, double eb, int64_t y0, int64_t y1,
                   const uint8_t* row_ids, QuantizedPlane64& out, const uint8_t* missing = nullptr,
                   double* recon_rows = nullptr);

/// The symbols of tile row ty of plane x with the given tile ids (kernels/tiles.hpp
/// tile_lorenzo_code and tiled_symbol; a missing vertex's integer is missing_vertex_quant's):
/// symbols[k] for every vertex k of the tile row (the plane's array), and the escaped codes
/// (vertex, code) appended in index order. Tile rows are independent.
void code_tile_row(std::span<const float> x, const TileLayout& layout, float eb, std::span<const uint8_t> tile_ids,
                   int64_t ty, const uint8_t* missing, uint16_t* symbols,
                   std::vector<std::pair<int64_t, int64_t>>& escapes);
void code_tile_row(std::span<const double> x, const TileLayout& layout, double eb, std::span<const uint8_t> tile_ids,
                   int64_t ty, const uint8_t* missing, uint16_t* symbols,
                   std::vector<std::pair<int64_t, int64_t>>& escapes);
/// code_tile_row of a float plane from the integers quantize_rows gave to `q_rows` for tile
/// row ty (`q_band`, row ty * kTile first; the same q prequantize derives): the same symbols
/// and escapes without deriving q again. A missing vertex's integer is replaced in q_band by
/// its prediction, as code_tile_row does in its own rows.
void code_tile_row_quantized(int32_t* q_band, const TileLayout& layout, float eb, std::span<const uint8_t> tile_ids,
                             int64_t ty, const uint8_t* missing, uint16_t* symbols,
                             std::vector<std::pair<int64_t, int64_t>>& escapes);

/// The decoder's value of vertex k (reconstruction_at) or of the nx vertices of row y
/// (reconstruction_row) of a quantized plane of x: p.recon's, or, where p keeps none, the
/// original for an exact vertex and float(q) * step of its tile otherwise (quantize_rows's
/// values bit for bit).
float reconstruction_at(std::span<const float> x, const TileLayout& layout, float eb, const QuantizedPlane& p,
                        int64_t k);
double reconstruction_at(std::span<const double> x, const TileLayout& layout, double eb, const QuantizedPlane64& p,
                         int64_t k);
void reconstruction_row(std::span<const float> x, const TileLayout& layout, float eb, const QuantizedPlane& p,
                        int64_t y, float* out);
void reconstruction_row(std::span<const double> x, const TileLayout& layout, double eb, const QuantizedPlane64& p,
                        int64_t y, double* out);

/// Block mode step 3 for n vertices of a float field: ids[k] = kernels/block_bounds.hpp
/// vertex_bound_id(eb, r[k], cap[k], x[k], free_grid), the same ids, with the vertices whose
/// bound is eb itself (most of them) decided in a loop GCC vectorizes.
void band_vertex_ids(const float* x, const float* r, const float* cap, int64_t n, float eb, bool free_grid,
                     uint8_t* ids);

/// Block mode steps 1-2 of one band of a float field (vertex rows [y0, y1) of an nx x ny
/// grid with nx, ny >= 2): the per-vertex minima of the incident triangles' relative bounds
/// of u (`ru`) and v (`rv`) and of their caps (`rc`), band vertex k = (y - y0) * nx + x, and
/// the cp_free bits of cell rows [y0, min(y1, ny - 1)) (`cp_rows`, cell (y, j) at
/// (y - y0) * (nx - 1) + j: bit t for triangle t proven critical-point free). The values of kernels/block_bounds.hpp
/// cell_block_bounds_on_mesh folded as block_mode.cpp did, in a form GCC vectorizes: a
/// triangle with a component of one strict sign (most of them) is decided in a loop without
/// branches, the others (and every cell touching a missing vertex) by
/// cell_block_bounds_on_mesh itself; tests/test_block_bounds.cpp holds the two to the same
/// values. Compiled with -fno-trapping-math (exception flags only).
void band_vertex_bounds(const float* u, const float* v, const uint8_t* missing, int64_t nx, int64_t ny, int64_t y0,
                        int64_t y1, float eb, float* ru, float* rv, float* rc, uint8_t* cp_rows);

/// Serialized payloads of one plane (see docs/format.md, "Backbone sections").
struct PlanePayload {
  BigVector<uint16_t> symbols;    ///< one per vertex, entropy-coded by the caller
  std::vector<uint8_t> outliers;  ///< varint list of escaped codes
  std::vector<uint8_t> exact_index;
  std::vector<uint8_t> exact_values;
};

/// `missing` (optional): a missing vertex is not quantized: its integer is its Lorenzo
/// prediction (kernels/tiles.hpp missing_vertex_quant), so its code is 0, and it has no
/// symbol (`symbols` holds the valid vertices' only; a code that is not 0 escapes).
/// Exact values are f32, or f64 (all 64 bits) for a float64 plane. The symbols and escapes
/// are p's when the frontend coded the plane (they are moved out), else computed here.
PlanePayload encode_plane(std::span<const float> x, const TileLayout& layout, float eb, QuantizedPlane& p,
                          int threads, const uint8_t* missing = nullptr);
PlanePayload encode_plane(std::span<const double> x, const TileLayout& layout, double eb, QuantizedPlane64& p,
                          int threads, const uint8_t* missing = nullptr);

/// Inverse of encode_plane: reconstructs the plane (out holds nx * ny floats; every one
/// is written) from tile ids, the grid's symbols (streams/vector_stream.hpp
/// decode_tiled_symbols), the parsed outlier list and the exact list.
Status decode_plane(const TileLayout& layout, float eb, std::span<const uint8_t> tile_ids,
                    std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index,
                    std::span<const int64_t> outlier_code, std::span<const uint8_t> exact_index,
                    std::span<const uint8_t> exact_values, int threads, std::span<float> out);
/// decode_plane of a float64 stream (eb: the meta section's f64 bound; f64 exact values).
Status decode_plane(const TileLayout& layout, double eb, std::span<const uint8_t> tile_ids,
                    std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index,
                    std::span<const int64_t> outlier_code, std::span<const uint8_t> exact_index,
                    std::span<const uint8_t> exact_values, int threads, std::span<double> out);

}  // namespace factz::detail
