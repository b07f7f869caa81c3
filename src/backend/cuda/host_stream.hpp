// The host side of the CUDA backend, plain C++ (built with or without nvcc): option
// checks, the stream assembly from the payloads the device produced (entropy coding with
// the CPU's codec functions, the container), and the parsing of a stream into the arrays
// the device decoder reads. The CPU model of the GPU pipeline (gpu_model.hpp) uses the same
// functions, so the CPU test covers them too.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::cuda_detail {

/// Checked options of one compression.
struct Plan {
  int64_t nx = 0, ny = 0;
  Options options;
  float eb = 0;        ///< the absolute bound used (float_bound of the requested one)
  int threads = 1;     ///< host threads for entropy coding (the bytes do not depend on it)
};

/// Checks everything about (nx, ny, options) that does not need the values: the same
/// rules as factz::compress, plus what the CUDA backend does not support (exact_edges).
Status check_options(int64_t nx, int64_t ny, const Options& o);

/// The plan for a field whose value range (max - min over both components) is `range`
/// (used only for relative bounds).
Plan make_plan(int64_t nx, int64_t ny, const Options& o, double range);

/// What the device produced for modes none and block (host copies).
struct TiledPayload {
  std::vector<uint8_t> tile_ids;  ///< u's then v's per-tile ids (block mode only)
  std::vector<uint16_t> symbols[2];
  std::vector<uint8_t> outliers[2], exact_index[2], exact_values[2];
  /// When set, symbols[] is empty and coded[] holds the blobs (Huffman or ANS) the device
  /// wrote, coded_crc[] their crc32c (payloads checksummed on the device, section_crc.hpp).
  bool precoded = false;
  std::vector<uint8_t> coded[2];
  std::optional<uint32_t> coded_crc[2];
};

/// What the device produced for mode speculative (stream order).
struct SpeculativePayload {
  std::vector<uint16_t> ids, codes_u, codes_v;
  std::vector<uint8_t> exact;  ///< anchors then exact targets, u and v f32 each
  /// When set, ids/codes_* are empty and these hold the blobs (Huffman or ANS) the device
  /// wrote, with their crc32c (payloads checksummed on the device, section_crc.hpp).
  bool precoded = false;
  std::vector<uint8_t> coded_ids, coded_u, coded_v;
  std::optional<uint32_t> coded_ids_crc, coded_u_crc, coded_v_crc;
};

Result<std::vector<uint8_t>> assemble_tiled(const Plan& p, TiledPayload& payload);
Result<std::vector<uint8_t>> assemble_speculative(const Plan& p, SpeculativePayload& payload);

/// A parsed stream whose container, header and symbol count are checked (the checks of
/// factz::stream_dims).
Result<detail::ParsedContainer> parse_checked(std::span<const uint8_t> stream);

/// What the device decoder reads for modes none and block; lists are validated and sorted.
struct TiledDecodeInput {
  std::vector<uint8_t> tile_ids;  ///< 2 * tile count: u's then v's
  std::vector<uint16_t> symbols[2];
  std::vector<int64_t> outlier_index[2], outlier_code[2];
  std::vector<int64_t> exact_index[2];
  std::vector<float> exact_value[2];
  /// Set when the entropy-coded blobs are left to the device decoder: symbols[] is empty,
  /// coded[] holds the blobs, and the outlier checks that need the symbols (an escape at
  /// every outlier, as many escapes as outliers) are the device's to make.
  bool device_coded = false;
  std::vector<uint8_t> coded[2];
};

/// What the device decoder reads for mode speculative.
struct SpeculativeDecodeInput {
  std::vector<uint16_t> ids, codes_u, codes_v;
  std::vector<float> exact;  ///< 2 per exactly stored vertex (anchors first)
  /// Set when the coded blobs are left to the device: ids/codes_*/exact are empty; the
  /// device decodes coded_ids, checks and counts the ids, then parse_speculative_exact
  /// reads exact_raw and the device decodes coded_u/v.
  bool device_coded = false;
  std::vector<uint8_t> coded_ids, coded_u, coded_v, exact_raw;
};

/// The exact section of a speculative stream holding `n_exact` vertices (anchors included).
Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<float>& out);

/// leave_coded: the coded blobs are kept for the device decoder (device_coded).
Status parse_tiled(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, int threads,
                   TiledDecodeInput& out, bool leave_coded = false);
Status parse_speculative(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput& out, bool leave_coded = false);

/// Host threads for entropy coding and parsing.
int host_threads();

}  // namespace factz::cuda_detail
