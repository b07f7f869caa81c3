// The CUDA backend's side of the stream layer (streams/vector_stream.hpp): the option rule
// only this backend adds (no exact_edges yet), the host thread count, and the stream
// layer's names under cuda_detail. The device produces payloads for assemble_*; parse_*
// gives the device decoder its inputs. The CPU model of the GPU (gpu_model.hpp) uses the
// same calls, so the CPU tests cover them.
#pragma once

#include <omp.h>

#include <cstdint>
#include <span>

#include "factz/factz.hpp"
#include "streams/mask_sections.hpp"
#include "streams/vector_stream.hpp"

namespace factz::cuda_detail {

using Plan = detail::StreamPlan;
using detail::SpeculativeDecodeInput;
using detail::SpeculativePayload;
using detail::TiledDecodeInput;
using detail::TiledPayload;
using detail::assemble_speculative;
using detail::assemble_tiled;
using detail::parse_speculative;
using detail::parse_speculative_exact;
using detail::parse_tiled;

/// Host threads for entropy coding and parsing (the bytes never depend on it).
inline int host_threads() { return omp_get_max_threads(); }

/// The stream layer's option rules, plus what the CUDA backend does not support yet.
inline Status check_options(int64_t nx, int64_t ny, const Options& o) {
  FACTZ_RETURN_IF_ERROR(detail::check_vector_options(nx, ny, o));
  if (o.exact_edges != 0)
    return Status(Code::backend_unavailable, "exact_edges is not supported by the CUDA backend yet");
  return Status::Ok();
}

/// The plan for a field whose value range is `range` (read only for relative bounds).
inline Plan make_plan(int64_t nx, int64_t ny, const Options& o, double range) {
  return detail::make_plan(nx, ny, o, range, host_threads());
}

/// A stream checked once (container, checksums, header, symbol count); a stream with mask
/// sections is refused (the device decoder does not lay them yet).
inline Result<detail::ParsedContainer> parse_checked(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_vector_stream(stream);
  if (!parsed.ok()) return parsed;
  auto masked = detail::stream_has_mask(parsed.value());
  if (!masked.ok()) return masked.status();
  if (masked.value())
    return Status(Code::backend_unavailable, "streams with missing vertices (mask sections) are not decoded by "
                                             "the CUDA backend yet");
  return parsed;
}

}  // namespace factz::cuda_detail
