// The CUDA backend's side of the stream layer (streams/vector_stream.hpp): the option rule
// only this backend adds (no exact_edges yet), the host thread count, the missing vertices
// of a field and of a stream (the CPU backend's mask and working copy, and the mask
// sections), and the stream layer's names under cuda_detail. The device produces payloads
// for assemble_stream; parse_* gives the device decoder its inputs. The CPU model of the
// GPU (gpu_model.hpp) uses the same calls, so the CPU tests cover them. Float32 and float64
// fields and streams alike: T (float, double) is the value type, Field its field type.
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
#include "streams/stream_common.hpp"
#include "streams/tiled_lists.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::cuda_detail {

using Plan = detail::StreamPlan;
using detail::SpeculativeDecodeInput;
using detail::SpeculativePayload;
using detail::SpeculativeDecodeInput64;
using detail::SpeculativeInputOf;
using detail::TiledPayload;
using detail::parse_speculative;
using detail::parse_speculative_exact;

/// The value type of a field type (float for VectorField2D, double for VectorField2D64).
template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;
/// The field type of a value type.
template <class T>
using FieldOf = std::conditional_t<std::is_same_v<T, double>, VectorField2D64, VectorField2D>;
/// The header's data type of a value type.
template <class T>
inline constexpr uint8_t kDtypeOf = std::is_same_v<T, double> ? detail::kDtypeFloat64 : detail::kDtypeFloat32;

/// Host threads for entropy coding and parsing (the bytes never depend on it).
inline int host_threads() { return omp_get_max_threads(); }

/// The stream layer's option rules, plus what the CUDA backend does not support yet.
inline Status check_options(int64_t nx, int64_t ny, const Options& o) {
  FACTZ_RETURN_IF_ERROR(detail::check_vector_options(nx, ny, o));
  if (o.exact_edges != 0)
    return Status(Code::backend_unavailable, "exact_edges is not supported by the CUDA backend yet");
  return Status::Ok();
}

/// The plan for a field of value type T whose value range is `range` (read only for
/// relative bounds): a float64 field's keeps its bound in double (make_plan64).
template <class T>
Plan make_plan(int64_t nx, int64_t ny, const Options& o, double range) {
  if constexpr (std::is_same_v<T, double>) return detail::make_plan64(nx, ny, o, range, host_threads());
  else return detail::make_plan(nx, ny, o, range, host_threads());
}

/// The plan of a float32 field (make_plan<float>).
inline Plan make_plan(int64_t nx, int64_t ny, const Options& o, double range) {
  return make_plan<float>(nx, ny, o, range);
}

/// The absolute bound the frontends take: the plan's float, or a float64 plan's double.
template <class T>
T plan_bound(const Plan& p) {
  if constexpr (std::is_same_v<T, double>) return p.eb64;
  else return p.eb;
}

/// A field's missing vertices as the CPU backend finds them (factz::missing_mask: the
/// caller's mask and every vertex with a NaN component) and the working copy every backend
/// compresses instead of the field (streams/missing_fill.hpp), computed on the host.
template <class Field>
struct MissingVerticesOf {
  using T = ValueOf<Field>;
  std::vector<uint8_t> mask;   ///< nx * ny bytes, 1 = missing; empty when no vertex is
  Field work;                  ///< the filled copy (built only when a vertex is missing)
  std::span<const T> u, v;     ///< the field's own planes: the mask sections keep their bits
  bool any() const { return !mask.empty(); }
};
using MissingVertices = MissingVerticesOf<VectorField2D>;
using MissingVertices64 = MissingVerticesOf<VectorField2D64>;

/// The missing vertices of a validated field f (which must outlive the result).
template <class Field>
MissingVerticesOf<Field> find_missing(const Field& f) {
  MissingVerticesOf<Field> m;
  m.mask = missing_mask(f);
  m.u = f.u;
  m.v = f.v;
  if (m.any()) m.work = detail::fill_missing(f, m.mask);
  return m;
}

/// The stream of a payload as the CPU backend writes it (backend/cpu/cpu_codec.cpp): the
/// mode's sections, then, when a vertex is missing (m non-null with any()), the mask
/// sections of the field's bits (a version 3 stream; 64-bit values for a float64 field),
/// then header and container.
template <class Payload, class Field>
Result<std::vector<uint8_t>> assemble_stream(const Plan& p, Payload& payload, const MissingVerticesOf<Field>* m) {
  std::vector<detail::Section> sections;
  if constexpr (std::is_same_v<Payload, TiledPayload>)
    FACTZ_RETURN_IF_ERROR(detail::tiled_sections(p, payload, sections));
  else
    FACTZ_RETURN_IF_ERROR(detail::speculative_sections(p, payload, sections));
  bool predictor_byte = false;
  if constexpr (!std::is_same_v<Payload, TiledPayload>) predictor_byte = payload.predictor != detail::Predictor::linear;
  if (m && m->any()) detail::append_mask_sections(m->mask, p.nx, p.ny, m->u, m->v, sections, predictor_byte);
  return detail::write_vector_stream(p, std::move(sections), predictor_byte);
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

/// What the device's tiled decoder reads (modes none and block; streams/vector_stream.hpp
/// parse_tiled with its blobs left coded, for either value type): the bound, the tile ids,
/// the coded blobs (decoded and checked against the outliers on the device), the outlier
/// lists and the exact lists with their T values. Lists are validated and sorted.
template <class T>
struct TiledInputOf {
  double eb = 0;                  ///< the absolute bound (the header's, or a float64 stream's f64 one)
  std::vector<uint8_t> tile_ids;  ///< 2 * tile count: u's then v's
  std::vector<uint8_t> coded[2];
  std::vector<int64_t> outlier_index[2], outlier_code[2];
  std::vector<int64_t> exact_index[2];
  std::vector<T> exact_value[2];
  /// A masked stream of format version 5: the coded symbols are the valid vertices' only.
  bool codes_skip_missing = false;
};

/// The inputs of the device's tiled decoder from a stream checked by parse_vector_stream
/// whose data type is T's; `missing`: the stream's mask (read_mask), or null. The stream
/// layer's own pieces (read_tiled_sections, parse_outliers, parse_exact) in parse_tiled's
/// order, with the exact values of either type.
template <class T>
Status parse_tiled_coded(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, TiledInputOf<T>& out,
                         const uint8_t* missing) {
  const auto& h = pc.header;
  const uint64_t n = h.nx * h.ny;
  const detail::Decompressor* unzstd = &detail::zstd_stage_decompressor();
  detail::TiledSections ts;
  FACTZ_RETURN_IF_ERROR(detail::read_tiled_sections(stream, pc, unzstd, ts));
  out.eb = ts.eb;
  out.tile_ids = std::move(ts.tile_ids);
  out.codes_skip_missing = detail::codes_skip_missing(h, missing);
  const uint32_t code_ids[2] = {detail::kSectionCodesU, detail::kSectionCodesV};
  for (int c = 0; c < 2; ++c) {
    auto codes = detail::read_section(stream, pc, code_ids[c], unzstd);
    if (!codes.ok()) return codes.status();
    FACTZ_RETURN_IF_ERROR(detail::parse_outliers(ts.outl[c], n, {}, out.outlier_index[c], out.outlier_code[c]));
    out.coded[c] = std::move(codes.value());
    FACTZ_RETURN_IF_ERROR(detail::parse_exact(ts.idx[c], ts.val[c], n, out.exact_index[c], out.exact_value[c]));
  }
  return Status::Ok();
}

/// The bits a masked stream stores for its missing vertices (streams/mask_sections.hpp
/// apply_mask_sections, whose checks reject a damaged section), as the list the device lays
/// over its reconstruction last: index (increasing), u bits, v bits (T: the stream's type).
template <class T>
struct MaskedValuesOf {
  std::vector<int64_t> index;
  std::vector<T> u, v;
};
template <class T>
Status masked_values(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, std::vector<uint8_t>& mask,
                     MaskedValuesOf<T>& out) {
  const int64_t n = int64_t(pc.header.nx) * int64_t(pc.header.ny);
  // Planes without zero fill: apply_mask_sections writes only the missing vertices, so only
  // their pages are touched.
  detail::BigVector<T> u(static_cast<size_t>(n)), v(static_cast<size_t>(n));
  FACTZ_RETURN_IF_ERROR(detail::apply_mask_sections(stream, pc, int64_t(pc.header.nx), int64_t(pc.header.ny),
                                                    std::span<T>(u), std::span<T>(v), mask));
  out = MaskedValuesOf<T>{};
  for (int64_t k = 0; k < n; ++k) {
    if (!mask[size_t(k)]) continue;
    out.index.push_back(k);
    out.u.push_back(u[size_t(k)]);
    out.v.push_back(v[size_t(k)]);
  }
  return Status::Ok();
}

}  // namespace factz::cuda_detail
