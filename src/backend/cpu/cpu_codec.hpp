// The CPU backend (OpenMP): runs a mode's frontend and backbone on the host and hands the
// payload to the stream layer (streams/vector_stream.hpp); decodes what the stream layer
// parsed. factz::compress / decompress (api/compress.cpp) call it for Policy::serial and
// Policy::omp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "format/container.hpp"

namespace factz::detail {

/// Compresses a validated field with options checked by check_vector_options.
Result<std::vector<uint8_t>> cpu_compress(const VectorField2D& field, const Options& o, CompressStats* stats);
/// The same for a float64 field: a float64 stream (format version 6), every value decision in double.
Result<std::vector<uint8_t>> cpu_compress(const VectorField2D64& field, const Options& o, CompressStats* stats);
/// The same with a field the caller gives up: the speculative mode takes its planes as its
/// working state instead of copying them (run_speculative's `state`). The same bytes; the
/// field's planes are unspecified afterwards.
Result<std::vector<uint8_t>> cpu_compress(VectorField2D&& field, const Options& o, CompressStats* stats);
Result<std::vector<uint8_t>> cpu_compress(VectorField2D64&& field, const Options& o, CompressStats* stats);

/// Decodes a stream checked by parse_vector_stream into caller planes of nx * ny floats;
/// missing vertices get their stored bits, and *mask_out (when given) the mask of a masked
/// stream (left as it is for a stream without one).
/// invalid_argument for a float64 stream (require_dtype).
Status cpu_decode(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<float> u, std::span<float> v,
                  int threads, std::vector<uint8_t>* mask_out = nullptr);
/// The same for a float64 stream into double planes (invalid_argument for a float32 stream).
Status cpu_decode(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<double> u,
                  std::span<double> v, int threads, std::vector<uint8_t>* mask_out = nullptr);

}  // namespace factz::detail
