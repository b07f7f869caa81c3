// The stream layer of 3D vector fields (issue 22): the option rules, the sections of the 3D
// speculative mode and of the 3D tiled modes (none and block), their order, the header, the
// checks of a stream before decoding and the parsing of its sections into what a decoder
// consumes. Format version 8 (docs/format.md, "3D vector streams"); the backends produce
// payloads and take inputs (backend/cpu/speculative3d_mode.hpp, block3d_mode.hpp), as for 2D
// fields (vector_stream.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// The meta section's predictor byte of a 3D speculative stream: the cubic interpolation
/// of kernels/interpolation3d.hpp (the only one so far).
inline constexpr uint8_t kPredictor3DCubic = 1;

/// Everything about (nx, ny, nz, options) that does not need the values: dimensions,
/// bound, mode (none, block, speculative), coder, bound mode, anchor stride (speculative);
/// exact_edges and a source record are 2D features (invalid_argument).
Status check_vector3d_options(int64_t nx, int64_t ny, int64_t nz, const Options& o);

/// The checked settings of one 3D compression.
struct Stream3DPlan {
  int64_t nx = 0, ny = 0, nz = 0;
  Options options;
  float eb = 0;     ///< the absolute bound used (float_bound of the requested one)
  int threads = 1;  ///< host threads for entropy coding (the bytes never depend on it)
};

/// What a backend produced for the 3D speculative mode, in stream order.
struct Speculative3DPayload {
  std::vector<uint16_t> ids;       ///< one per target (anchors excluded), schedule order
  std::vector<uint16_t> codes[3];  ///< code + kRadius of each coded target, per component
  std::vector<uint8_t> exact;      ///< anchors then exact targets, (u, v, w) as f32 each
  std::vector<int64_t> phase_codes;  ///< coded targets per phase, schedule order
};

/// The sections of a payload (meta, codes_u, codes_v, codes_w, exact_values, bound_ids_u),
/// entropy-coded with the plan's coder, in a version 8 container.
Result<std::vector<uint8_t>> assemble_speculative3d(const Stream3DPlan& p, Speculative3DPayload& payload);

/// The container, header and required sections of a 3D vector stream, and the id count its
/// bound-id section records against the grid, checked before anything is allocated for the
/// grid. unsupported_version for a stream that is not a float32 3D vector field (a 2D
/// stream names factz::decompress).
Result<ParsedContainer> parse_vector3d_stream(std::span<const uint8_t> stream);

/// What a decoder reads for the 3D speculative mode: ids checked, codes and exact values
/// counted against them.
struct Speculative3DInput {
  float eb = 0;
  std::vector<uint16_t> ids;
  std::vector<uint16_t> codes[3];
  std::vector<float> exact;  ///< 3 per exactly stored vertex (anchors first)
};

/// The decode input of a stream accepted by parse_vector3d_stream.
Status parse_speculative3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                           Speculative3DInput& out);

/// What a backend produced for the 3D tiled modes (none and block), per component u, v, w.
struct Tiled3DPayload {
  std::vector<uint8_t> tile_ids;     ///< block only: u's, then v's, then w's tile ids
  std::vector<uint16_t> symbols[3];  ///< one per vertex, index order
  std::vector<uint8_t> outliers[3], exact_index[3], exact_values[3];
};

/// The sections of a 3D tiled payload (meta, tile_bounds in mode block, codes_u, codes_v,
/// codes_w, exact_index, exact_values, outliers), entropy-coded with the plan's coder, in a
/// version 8 container of mode p.options.mode.
Result<std::vector<uint8_t>> assemble_tiled3d(const Stream3DPlan& p, Tiled3DPayload& payload);

/// What a decoder reads for the 3D tiled modes; lists validated and sorted per component.
struct Tiled3DInput {
  float eb = 0;
  std::vector<uint8_t> tile_ids;  ///< 3 * tile count (mode none: every id 30, or 0 when eb is 0)
  std::vector<uint16_t> symbols[3];
  std::vector<int64_t> outlier_index[3], outlier_code[3], exact_index[3];
  std::vector<float> exact_value[3];
};

/// The decode input of a 3D tiled stream accepted by parse_vector3d_stream.
Status parse_tiled3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, Tiled3DInput& out);

}  // namespace factz::detail
