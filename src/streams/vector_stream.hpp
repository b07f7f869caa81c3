// The stream layer of 2D vector fields (modes none, block, speculative): it owns the option
// rules, the absolute bound, the header, each mode's sections and their order, the checks
// of a stream before decoding, and the parsing of sections into what a decoder consumes.
// Backends (src/backend/cpu, src/backend/cuda) only produce payloads for `assemble_*` and
// consume the inputs `parse_*` gives them, so a byte-level rule exists here once
// (docs/format.md is the spec; docs/architecture.md draws the layering).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"
#include "kernels/interpolation.hpp"

namespace factz::detail {

/// Everything about (nx, ny, options) that does not need the values, for every backend:
/// dimensions, bound, mode, coder, bound mode, exact_edges bits, anchor stride.
Status check_vector_options(int64_t nx, int64_t ny, const Options& o);

/// The checked settings of one compression.
struct StreamPlan {
  int64_t nx = 0, ny = 0;
  Options options;
  /// The absolute bound used (float_bound of the requested one); for a float64 stream the
  /// header's informative f32 copy, float_bound(eb64).
  float eb = 0;
  uint8_t dtype = kDtypeFloat32;  ///< kDtypeFloat64: a float64 stream (format version 6)
  double eb64 = 0;  ///< float64 streams: the absolute bound used (double_bound), in the meta section
  int threads = 1;  ///< host threads for entropy coding (the bytes never depend on it)
};

/// The plan for a field whose value range (max - min over both components) is `range`
/// (read only for relative bounds).
StreamPlan make_plan(int64_t nx, int64_t ny, const Options& o, double range, int threads);
/// The plan of a float64 field: the bound stays a double (double_bound), never a float.
StreamPlan make_plan64(int64_t nx, int64_t ny, const Options& o, double range, int threads);

/// The double bound used for a requested absolute bound of a float64 field: itself, clamped
/// to kMaxEb64 (streams/tiled_lists.hpp); 0 for anything not > 0 (NaN included).
double double_bound(double eb);

/// Host threads of a policy: 1 for serial, else `threads` or OpenMP's default.
int threads_of(Policy p, int threads);

/// Values per thread below which the default thread count (threads <= 0) is lowered: a
/// thread's start and its share of the barriers cost about what this much work does (the
/// 360 x 181 wind decompressed in 14.9 ms on one thread, 18-25 ms on two).
inline constexpr int64_t kValuesPerDefaultThread = int64_t{1} << 17;

/// At most `threads` (>= 1), and at most one per kValuesPerDefaultThread values (at least 1).
inline int threads_capped(int threads, int64_t values) {
  const int64_t useful = values / kValuesPerDefaultThread;
  return int(useful < 1 ? 1 : useful < threads ? useful : threads);
}

/// threads_of for a field of `values` values (nx * ny, or nx * ny * nz): a count the caller
/// asked for is kept; the default is OpenMP's, but threads_capped by the field's values.
/// Bytes never depend on it.
int threads_of(Policy p, int threads, int64_t values);

/// What a backend produced for modes none and block.
struct TiledPayload {
  std::vector<uint8_t> tile_ids;         ///< u's then v's per-tile ids (block mode only)
  std::span<const uint16_t> symbols[2];  ///< per-vertex symbols, entropy-coded by assemble
  std::vector<uint8_t> outliers[2], exact_index[2], exact_values[2];
  /// When set, symbols[] is ignored and coded[] holds the blobs (Huffman or ANS) the backend
  /// wrote, coded_crc[] their crc32c when it computed them (the CUDA backend, on the device).
  bool precoded = false;
  std::vector<uint8_t> coded[2];
  std::optional<uint32_t> coded_crc[2];
};

/// What a backend produced for mode speculative (stream order).
struct SpeculativePayload {
  std::vector<uint16_t> ids, codes_u, codes_v;
  std::vector<uint8_t> exact;  ///< anchors then exact targets, u and v f32 each
  /// The predictor the codes were made with, recorded in the meta section (linear: the
  /// meta section of format versions up to 6, byte for byte).
  Predictor predictor = Predictor::linear;
  /// Codes per phase in schedule order (they sum to codes_u.size()): where the codes
  /// sections of a stream with a predictor byte (format version 9) may be cut into segments
  /// (streams/code_segments.hpp). Unused for the linear predictor, whose codes are one blob.
  std::vector<int64_t> phase_codes;
  /// When set, ids/codes_* are ignored and these hold the coded blobs, with their crc32c
  /// (coded_u / coded_v segmented as write_segmented writes them when the predictor is not
  /// linear).
  bool precoded = false;
  std::vector<uint8_t> coded_ids, coded_u, coded_v;
  std::optional<uint32_t> coded_ids_crc, coded_u_crc, coded_v_crc;
};

/// The sections of a payload, in stream order, entropy-coded with the plan's coder.
Status tiled_sections(const StreamPlan& p, TiledPayload& payload, std::vector<Section>& sections);
Status speculative_sections(const StreamPlan& p, SpeculativePayload& payload, std::vector<Section>& sections);

/// The header of a plan and the container of its sections (the zstd stage as the plan says).
/// `predictor_byte`: the meta section ends with a predictor byte (speculative_sections of a
/// payload whose predictor is not linear), which makes the stream version 7.
Result<std::vector<uint8_t>> write_vector_stream(const StreamPlan& p, std::vector<Section> sections,
                                                 bool predictor_byte = false);

/// tiled_sections / speculative_sections, then write_vector_stream (with the payload's
/// predictor byte, if any).
Result<std::vector<uint8_t>> assemble_tiled(const StreamPlan& p, TiledPayload& payload);
Result<std::vector<uint8_t>> assemble_speculative(const StreamPlan& p, SpeculativePayload& payload);

/// The container (checksums included) and header of a vector stream, its required sections
/// and the symbol count of its per-vertex section against the grid, checked once, before
/// anything is allocated for the grid. Float32 and float64 streams alike (header dtype):
/// each decoder refuses the other type (require_dtype).
Result<ParsedContainer> parse_vector_stream(std::span<const uint8_t> stream);

/// invalid_argument unless the parsed stream's values are of data type `dtype` (a float64
/// stream given to a float32 decoder, or the reverse, names the decoder to use instead:
/// neither narrows nor widens the values silently).
Status require_dtype(const Header& h, uint8_t dtype);

/// What a decoder reads for modes none and block; lists are validated and sorted.
struct TiledDecodeInput {
  std::vector<uint8_t> tile_ids;  ///< 2 * tile count: u's then v's
  std::vector<uint16_t> symbols[2];
  std::vector<int64_t> outlier_index[2], outlier_code[2];
  std::vector<int64_t> exact_index[2];
  std::vector<float> exact_value[2];
  /// Set when the entropy-coded blobs are left to a device decoder: symbols[] is empty,
  /// coded[] holds the blobs, and the outlier checks that need the symbols (an escape at
  /// every outlier, as many escapes as outliers) are the device's to make.
  bool device_coded = false;
  std::vector<uint8_t> coded[2];
  /// Set for a masked stream of format version 5: the coded symbols are the valid
  /// vertices' only (spread_valid_symbols; symbols[] already holds them spread).
  bool codes_skip_missing = false;
};

/// What a decoder reads for mode speculative. T: float, or double for a float64 stream.
template <class T>
struct SpeculativeInputOf {
  double eb = 0;  ///< the absolute bound (parse_meta_section: the header's, or the f64 one)
  Predictor predictor = Predictor::linear;  ///< from the meta section (parse_speculative_meta)
  std::vector<uint16_t> ids, codes_u, codes_v;
  std::vector<T> exact;  ///< 2 per exactly stored vertex (anchors first)
  /// Set when the coded blobs are left to a device: ids/codes_*/exact are empty; the
  /// device decodes coded_ids, checks and counts the ids, then parse_speculative_exact
  /// reads exact_raw and the device decodes coded_u/v.
  bool device_coded = false;
  std::vector<uint8_t> coded_ids, coded_u, coded_v, exact_raw;
  /// coded_u / coded_v are segmented sections (format version 9; parse_segmented), not
  /// single blobs.
  bool codes_segmented = false;
  /// Set by a host parse of a segmented stream (codes_segmented): codes_u / codes_v are
  /// empty and coded_u / coded_v hold the checked sections, which the decoder decodes a
  /// window at a time (code_windows), just before the phases that read them, so a large
  /// field's codes never sit in memory whole. phase_codes: the codes of each phase of the
  /// schedule, in order (from the ids).
  bool codes_deferred = false;
  std::vector<int64_t> phase_codes;
};
using SpeculativeDecodeInput = SpeculativeInputOf<float>;
using SpeculativeDecodeInput64 = SpeculativeInputOf<double>;

/// The exact section of a speculative stream holding `n_exact` vertices (anchors included):
/// f32 pairs, or f64 pairs in a float64 stream.
Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<float>& out);
Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<double>& out);

/// The decode inputs of a stream checked by parse_vector_stream. leave_coded: the coded
/// blobs are kept for a device decoder (device_coded). `missing`: the stream's mask
/// (read_mask), when it has one: from version 5 on the codes skip missing vertices.
Status parse_tiled(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, TiledDecodeInput& out,
                   bool leave_coded = false, const uint8_t* missing = nullptr);

/// Whether the tiled codes of a stream with header `h` and mask `missing` (null: none)
/// leave out the missing vertices (format version 5 on).
bool codes_skip_missing(const Header& h, const uint8_t* missing);

/// One plane's tiled symbols (n of them, the grid's) from its coded blob: the valid
/// vertices' spread over the grid when codes_skip_missing, and the outlier checks
/// (check_outlier_escapes).
Status decode_tiled_symbols(const Header& h, std::span<const uint8_t> coded, const uint8_t* missing,
                            std::span<const int64_t> outlier_index, int threads, std::span<uint16_t> symbols);
/// `missing`: the stream's mask (read_mask), when it has one: missing vertices have no
/// entries in the speculative sections. With leave_coded, `device_predictors` is the highest
/// predictor the device decoder implements: a stream needing another is backend_unavailable
/// (a decoder never applies the wrong predictor).
Status parse_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput& out, bool leave_coded = false, const uint8_t* missing = nullptr,
                         Predictor device_predictors = Predictor::linear);
/// parse_speculative of a float64 stream (f64 exact values; eb from the meta section).
Status parse_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput64& out, bool leave_coded = false, const uint8_t* missing = nullptr,
                         Predictor device_predictors = Predictor::linear);

/// The meta section of a speculative stream: parse_meta_section's bytes, then, in a stream
/// of format version 7 or later (and only there), one byte naming the predictor, which is
/// not linear (docs/format.md, mode 2); without it the predictor is linear. Sets eb and pred.
Status parse_speculative_meta(std::span<const uint8_t> meta, const Header& h, double& eb, Predictor& pred);

/// The absolute bound a vector stream's decoder uses, read from its meta section (the
/// header's f32 `eb`, or a float64 stream's f64 one; parse_speculative_meta in mode
/// speculative, parse_meta_section otherwise); `zstd` undoes a zstd-stored section.
Result<double> stream_bound(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd);

}  // namespace factz::detail
