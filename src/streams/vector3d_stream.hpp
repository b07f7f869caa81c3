// The stream layer of 3D vector fields (issue 22): the option rules, the sections of the 3D
// speculative mode and of the 3D tiled modes (none and block), their order, the header, the
// checks of a stream before decoding and the parsing of its sections into what a decoder
// consumes. Format versions 8 and 10, and 11 with missing vertices (docs/format.md, "3D
// vector streams"); the backends produce
// payloads and take inputs (backend/cpu/speculative3d_mode.hpp, block3d_mode.hpp), as for 2D
// fields (vector_stream.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// The least and the greatest of x[0, n) (n > 0, no NaN) in eight explicit lanes, which the
/// compiler vectorizes (a plain min / max reduction it may not reorder): the same values as
/// std::minmax_element, except that a zero extreme may come out as either +0 or -0.
template <class T>
void lane_min_max(const T* x, size_t n, T& lo, T& hi) {
  constexpr size_t kLanes = 8;
  T l[kLanes], h[kLanes];
  for (size_t j = 0; j < kLanes; ++j) l[j] = h[j] = x[0];
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) {
      l[j] = x[i + j] < l[j] ? x[i + j] : l[j];
      h[j] = x[i + j] > h[j] ? x[i + j] : h[j];
    }
  for (; i < n; ++i) {
    l[0] = x[i] < l[0] ? x[i] : l[0];
    h[0] = x[i] > h[0] ? x[i] : h[0];
  }
  lo = l[0], hi = h[0];
  for (size_t j = 1; j < kLanes; ++j) {
    lo = l[j] < lo ? l[j] : lo;
    hi = h[j] > hi ? h[j] : hi;
  }
}

/// max - min over the three components of a 3D field (VectorField3D or VectorField3D64; 0
/// when empty): the range a REL bound scales. Callers pass the filled working copy when
/// vertices are missing, whose values are those of the valid vertices. Shared by the CPU
/// entry points (api/compress3d.cpp) and the CUDA backend's 3D path (host_stream3d.cpp).
template <class Field>
double value_range3d(const Field& f) {
  using T = typename decltype(f.u)::value_type;
  T lo = 0, hi = 0;
  bool any = false;
  for (const std::vector<T>* p : {&f.u, &f.v, &f.w}) {
    if (p->empty()) continue;
    T mn, mx;
    lane_min_max(p->data(), p->size(), mn, mx);
    lo = any ? std::min(lo, mn) : mn;
    hi = any ? std::max(hi, mx) : mx;
    any = true;
  }
  if (lo != T(0) && hi != T(0)) return double(hi) - double(lo);
  // A zero extreme: its sign can reach the bound (an all-zero field's range is +0 or -0),
  // so it is taken as std::minmax_element takes it (the first least, the last greatest).
  any = false;
  for (const std::vector<T>* p : {&f.u, &f.v, &f.w}) {
    if (p->empty()) continue;
    const auto [mn, mx] = std::minmax_element(p->begin(), p->end());
    lo = any ? std::min(lo, *mn) : *mn;
    hi = any ? std::max(hi, *mx) : *mx;
    any = true;
  }
  return double(hi) - double(lo);
}

/// The meta section's predictor byte of a 3D speculative stream: the cubic interpolation
/// of kernels/interpolation3d.hpp with the mean of the phase's axes everywhere and the codes
/// as they are (1), or with per-phase choices (2: the choice table of
/// streams/phase_choices3d.hpp follows the byte). The writer writes 1 when it chose nothing.
inline constexpr uint8_t kPredictor3DCubic = 1;
inline constexpr uint8_t kPredictor3DChosen = 2;

/// Everything about (nx, ny, nz, options) that does not need the values: dimensions,
/// bound, mode (none, block, speculative), coder, bound mode, anchor stride (speculative),
/// exact_edges (face bits, at most 63); a source record is a 2D feature (invalid_argument).
Status check_vector3d_options(int64_t nx, int64_t ny, int64_t nz, const Options& o);

/// The checked settings of one 3D compression.
struct Stream3DPlan {
  int64_t nx = 0, ny = 0, nz = 0;
  Options options;
  float eb = 0;     ///< the absolute bound used (float_bound of the requested one)
  int threads = 1;  ///< host threads for entropy coding (the bytes never depend on it)
  /// kDtypeFloat64: a float64 field (format version 13): exact and masked values are f64,
  /// and the meta section carries eb64 (the header's eb is its float_bound).
  uint8_t dtype = kDtypeFloat32;
  double eb64 = 0;  ///< float64 fields: the absolute bound used (double_bound)
  /// Speculative mode: the predictor's axis per phase and component (choose_axes3d, 3 per
  /// phase of the schedule; empty: the mean everywhere), which the frontend predicts with.
  std::vector<uint8_t> along;
};

/// What a backend produced for the 3D speculative mode, in stream order.
struct Speculative3DPayload {
  std::vector<uint16_t> ids;       ///< one per target (anchors excluded), schedule order
  std::vector<uint16_t> codes[3];  ///< code + kRadius of each coded target, per component
  std::vector<uint8_t> exact;      ///< anchors then exact targets, (u, v, w) as f32 each (f64 in a float64 stream)
  std::vector<int64_t> phase_codes;  ///< coded targets per phase, schedule order
  std::vector<uint8_t> transforms;   ///< code transform per phase and component (3 per phase; empty: none)
};

/// The sections of a payload (meta, codes_u, codes_v, codes_w, exact_values, bound_ids_u),
/// entropy-coded with the plan's coder, in a version 10 container; with `mask` (the section
/// of streams/mask_sections.hpp append_mask_section3d, for a field with missing vertices:
/// the payload then leaves them out) last, in a version 12 container.
Result<std::vector<uint8_t>> assemble_speculative3d(const Stream3DPlan& p, Speculative3DPayload& payload,
                                                    std::vector<Section> mask = {});

/// The container, header and required sections of a 3D vector stream, and the id count its
/// bound-id section records against the grid, checked before anything is allocated for the
/// grid. unsupported_version for a stream that is not a float32 3D vector field (a 2D
/// stream names factz::decompress).
Result<ParsedContainer> parse_vector3d_stream(std::span<const uint8_t> stream);

/// What a decoder reads for the 3D speculative mode: ids checked, codes and exact values
/// counted against them. T: float, or double for a float64 stream (version 13).
template <class T>
struct Speculative3DInputOf {
  T eb = 0;
  std::vector<uint16_t> ids;
  std::vector<uint16_t> codes[3];  ///< code + kRadius (the code transforms undone)
  std::vector<T> exact;  ///< 3 per exactly stored vertex (anchors first)
  std::vector<uint8_t> along;  ///< the predictor's axis per phase and component (empty: the mean everywhere)
};
using Speculative3DInput = Speculative3DInputOf<float>;
using Speculative3DInput64 = Speculative3DInputOf<double>;

/// The mask of a stream accepted by parse_vector3d_stream (1 = missing, nx * ny * nz bytes):
/// read from a version 12 stream's mask_and_values section; left empty for any other.
Status read_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::vector<uint8_t>& mask);

/// Lays the bits a version 12 stream holds for its missing vertices over the decoded planes
/// (the decoder's last step); `mask` from read_mask3d. Nothing for another version.
Status apply_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<float> u,
                    std::span<float> v, std::span<float> w, std::vector<uint8_t>& mask);
Status apply_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<double> u,
                    std::span<double> v, std::span<double> w, std::vector<uint8_t>& mask);

/// The predictor of a 3D speculative stream (kPredictor3DCubic or kPredictor3DChosen) and
/// its choices (3 entries per phase; empty for predictor 1), read from the meta section and
/// checked as the decoder checks them (`factz info`).
struct Speculative3DChoices {
  uint8_t predictor = kPredictor3DCubic;
  std::vector<uint8_t> along, transforms;
};
Result<Speculative3DChoices> speculative3d_choices(std::span<const uint8_t> stream, const ParsedContainer& pc);

/// The decode input of a stream accepted by parse_vector3d_stream; `missing` its mask
/// (read_mask3d; null for none): the ids and exact values leave the missing vertices out.
Status parse_speculative3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                           Speculative3DInput& out, const uint8_t* missing = nullptr);
Status parse_speculative3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                           Speculative3DInput64& out, const uint8_t* missing = nullptr);

/// What a backend produced for the 3D tiled modes (none and block), per component u, v, w.
struct Tiled3DPayload {
  std::vector<uint8_t> tile_ids;     ///< block only: u's, then v's, then w's tile ids
  std::vector<uint16_t> symbols[3];  ///< one per vertex (per valid vertex with a mask), index order
  std::vector<uint8_t> outliers[3], exact_index[3], exact_values[3];
};

/// The sections of a 3D tiled payload (meta, tile_bounds in mode block, codes_u, codes_v,
/// codes_w, exact_index, exact_values, outliers), entropy-coded with the plan's coder, in a
/// version 8 container of mode p.options.mode; with `mask` (as for assemble_speculative3d)
/// last, in a version 12 container.
Result<std::vector<uint8_t>> assemble_tiled3d(const Stream3DPlan& p, Tiled3DPayload& payload,
                                              std::vector<Section> mask = {});

/// What a decoder reads for the 3D tiled modes; lists validated and sorted per component.
template <class T>
struct Tiled3DInputOf {
  T eb = 0;
  std::vector<uint8_t> tile_ids;  ///< 3 * tile count (mode none: every id 30, or 0 when eb is 0)
  std::vector<uint16_t> symbols[3];
  std::vector<int64_t> outlier_index[3], outlier_code[3], exact_index[3];
  std::vector<T> exact_value[3];
};
using Tiled3DInput = Tiled3DInputOf<float>;
using Tiled3DInput64 = Tiled3DInputOf<double>;

/// The decode input of a 3D tiled stream accepted by parse_vector3d_stream; `missing` its
/// mask (read_mask3d; null for none): the codes hold the valid vertices' symbols only, each
/// missing vertex takes its implied one (streams/tiled_lists.hpp spread_valid_symbols).
Status parse_tiled3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, Tiled3DInput& out,
                     const uint8_t* missing = nullptr);
Status parse_tiled3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, Tiled3DInput64& out,
                     const uint8_t* missing = nullptr);

}  // namespace factz::detail
