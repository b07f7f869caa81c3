// The CUDA backend's side of the stream layer (streams/vector_stream.hpp): the option rule
// only this backend adds (no exact_edges yet), the host thread count, the missing vertices
// of a field and of a stream (the CPU backend's mask and working copy, and the mask
// sections), and the stream layer's names under cuda_detail. The device produces payloads
// for assemble_stream; parse_* gives the device decoder its inputs. The CPU model of the
// GPU (gpu_model.hpp) uses the same calls, so the CPU tests cover them.
#pragma once

#include <omp.h>

#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "streams/mask_sections.hpp"
#include "streams/missing_fill.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::cuda_detail {

using Plan = detail::StreamPlan;
using detail::SpeculativeDecodeInput;
using detail::SpeculativePayload;
using detail::TiledDecodeInput;
using detail::TiledPayload;
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

/// A field's missing vertices as the CPU backend finds them (factz::missing_mask: the
/// caller's mask and every vertex with a NaN component) and the working copy every backend
/// compresses instead of the field (streams/missing_fill.hpp), computed on the host.
struct MissingVertices {
  std::vector<uint8_t> mask;     ///< nx * ny bytes, 1 = missing; empty when no vertex is
  VectorField2D work;            ///< the filled copy (built only when a vertex is missing)
  std::span<const float> u, v;   ///< the field's own planes: the mask sections keep their bits
  bool any() const { return !mask.empty(); }
};

/// The missing vertices of a validated field f (which must outlive the result).
inline MissingVertices find_missing(const VectorField2D& f) {
  MissingVertices m;
  m.mask = missing_mask(f);
  m.u = f.u;
  m.v = f.v;
  if (m.any()) m.work = detail::fill_missing(f, m.mask);
  return m;
}

/// The stream of a payload as the CPU backend writes it (backend/cpu/cpu_codec.cpp): the
/// mode's sections, then, when a vertex is missing (m non-null with any()), the mask
/// sections of the field's bits (a version 3 stream), then header and container.
template <class Payload>
Result<std::vector<uint8_t>> assemble_stream(const Plan& p, Payload& payload, const MissingVertices* m) {
  std::vector<detail::Section> sections;
  if constexpr (std::is_same_v<Payload, TiledPayload>)
    FACTZ_RETURN_IF_ERROR(detail::tiled_sections(p, payload, sections));
  else
    FACTZ_RETURN_IF_ERROR(detail::speculative_sections(p, payload, sections));
  if (m && m->any()) detail::append_mask_sections(m->mask, p.nx, p.ny, m->u, m->v, sections);
  return detail::write_vector_stream(p, std::move(sections));
}

/// A stream checked once (container, checksums, header, symbol count, mask sections in
/// pairs): streams with missing vertices are decoded too.
inline Result<detail::ParsedContainer> parse_checked(std::span<const uint8_t> stream) {
  return detail::parse_vector_stream(stream);
}

/// The mask of a checked stream into `mask` (nx * ny bytes, 1 = missing), or `mask` left
/// empty for a stream without missing vertices. The decoders read it first: the
/// speculative sections have no entries for missing vertices.
inline Status read_stream_mask(std::span<const uint8_t> stream, const detail::ParsedContainer& pc,
                               std::vector<uint8_t>& mask) {
  mask.clear();
  auto masked = detail::stream_has_mask(pc);
  if (!masked.ok()) return masked.status();
  if (!masked.value()) return Status::Ok();
  return detail::read_mask(stream, pc, int64_t(pc.header.nx), int64_t(pc.header.ny), mask);
}

/// The bits a masked stream stores for its missing vertices (streams/mask_sections.hpp
/// apply_mask_sections, whose checks reject a damaged section), as the list the device lays
/// over its reconstruction last: index (increasing), u bits, v bits.
struct MaskedValues {
  std::vector<int64_t> index;
  std::vector<float> u, v;
};
inline Status masked_values(std::span<const uint8_t> stream, const detail::ParsedContainer& pc,
                            std::vector<uint8_t>& mask, MaskedValues& out) {
  const int64_t n = int64_t(pc.header.nx) * int64_t(pc.header.ny);
  // Planes without zero fill: apply_mask_sections writes only the missing vertices, so only
  // their pages are touched.
  detail::BigVector<float> u(static_cast<size_t>(n)), v(static_cast<size_t>(n));
  FACTZ_RETURN_IF_ERROR(
      detail::apply_mask_sections(stream, pc, int64_t(pc.header.nx), int64_t(pc.header.ny), u, v, mask));
  out = MaskedValues{};
  for (int64_t k = 0; k < n; ++k) {
    if (!mask[size_t(k)]) continue;
    out.index.push_back(k);
    out.u.push_back(u[size_t(k)]);
    out.v.push_back(v[size_t(k)]);
  }
  return Status::Ok();
}

}  // namespace factz::cuda_detail
