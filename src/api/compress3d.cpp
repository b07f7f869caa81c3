// The public entry points of 3D vector fields (factz/compress3d.hpp): validation, option
// rules, missing vertices (the filled working copy and the mask section, as for 2D fields),
// the CPU backend's 3D modes (speculative; block and none, the tiled ones) and the stream
// layer (streams/vector3d_stream).
#include "factz/compress3d.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "api/device_backend.hpp"
#include "backend/cpu/block3d_mode.hpp"
#include "backend/cpu/speculative3d_mode.hpp"
#include "factz/topology3d.hpp"
#include "util/big_vector.hpp"
#include "streams/mask_sections.hpp"
#include "streams/missing_fill.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector3d_stream.hpp"
#include "streams/vector_stream.hpp"  // threads_of

namespace factz {
namespace {

/// The policy of a float64 3D field or stream (float32 ones take Policy::cuda to
/// device_dispatch.cpp before they get here).
Status cpu_policy3d(Policy p) {
  if (p == Policy::cuda)
    return Status(Code::backend_unavailable,
                  "float64 3D vector fields are compressed on the CPU only (policy serial or omp); float32 ones also "
                  "with policy cuda");
  if (p != Policy::serial && p != Policy::omp) return invalid_argument("unknown execution policy");
  return Status::Ok();
}

/// The frontend's bound: the plan's float32 one, or its float64 one for a float64 field.
float bound_of(const detail::Stream3DPlan& p, const VectorField3D&) { return p.eb; }
double bound_of(const detail::Stream3DPlan& p, const VectorField3D64&) { return p.eb64; }

template <class T>
struct Modes3D {
  using Tiled = detail::Tiled3DResultOf<T>;
  using Speculative = detail::Speculative3DResultOf<T>;
};

/// `given` (null: none): the field itself, given up by the caller; missing vertices are then
/// filled in its own planes (prepare3d), and the CPU's speculative mode works in them
/// (run_speculative3d's state), as it does in a masked field's filled copy otherwise.
template <class Field>
Result<std::vector<uint8_t>> compress3d_any(const Field& field, const Options& o, CompressStats* stats,
                                            Field* given = nullptr) try {
  using T = typename decltype(field.u)::value_type;
  if constexpr (std::is_same_v<Field, VectorField3D>)
    if (o.policy == Policy::cuda) return detail::compress3d_on_device(field, o, stats);  // api/device_dispatch.cpp
  FACTZ_RETURN_IF_ERROR(cpu_policy3d(o.policy));
  // Checks, missing vertices (the modes work on the filled copy and never check a
  // tetrahedron touching one; the mask section carries the original bits), the plan.
  std::vector<std::pair<std::string, double>> stages;
  detail::StageLaps laps(stages, o.progress);
  detail::Prepared3D<Field> prep;
  FACTZ_RETURN_IF_ERROR(detail::prepare3d(field, o, detail::threads_of(o.policy, o.threads), prep, given));
  laps.lap("prepare", 0.05);
  const Field& work = prep.work();
  const uint8_t* missing = prep.missing;
  const detail::Stream3DPlan& p = prep.plan;
  const T eb = bound_of(p, field);
  if (o.mode != Mode::speculative) {
    typename Modes3D<T>::Tiled r;
    if (o.mode == Mode::block) detail::run_block3d(work, eb, p.threads, r, {}, missing, o.exact_edges);
    else detail::run_none3d(work, eb, p.threads, r, missing, o.exact_edges);
    laps.lap("frontend", 0.8);
    detail::Tiled3DPayload payload;
    detail::tiled3d_payload(r, o.mode == Mode::block, p.threads, payload, missing);
    laps.lap("encode", 0.85);
    // The frontend's planes are done with: the coders' buffers reuse their memory (touching
    // fresh pages costs more than coding them on a virtual machine, docs/benchmarks.md).
    for (int c = 0; c < 3; ++c) {
      detail::release(r.recon[c]);
      detail::release(r.exact[c]);
      detail::release(r.symbols[c]);
      detail::release(r.escapes[c]);
    }
    auto stream = detail::assemble_tiled3d(p, payload, std::move(prep.mask_section));
    if (!stream.ok()) return stream.status();
    laps.lap("container", 1.0);
    if (stats) {
      *stats = CompressStats{};
      stats->eb_abs = double(eb);
      stats->exact_vertices = r.exact_vertices;
      stats->repair_rounds = r.repair_rounds;
      stats->repaired_vertices = r.repaired_vertices;
      stats->masked_vertices = prep.masked;
      stats->stage_seconds = std::move(r.stage_seconds);  // the block frontend's own stages first
      stats->stage_seconds.insert(stats->stage_seconds.end(), stages.begin(), stages.end());
    }
    return stream;
  }
  typename Modes3D<T>::Speculative r;
  Field* const state = given ? given : missing ? &prep.filled : nullptr;  // given: filled in place
  detail::run_speculative3d(work, eb, o.anchor_stride, p.threads, true, r, missing, o.exact_edges,
                            p.along.empty() ? nullptr : p.along.data(), state);
  laps.lap("frontend", 0.8);
  detail::Speculative3DPayload payload;
  detail::speculative3d_payload(work, o.anchor_stride, r, payload, true, p.threads, state != nullptr);
  laps.lap("encode", 0.85);
  for (int c = 0; c < 3; ++c) {  // as above: the coders reuse the memory
    detail::release(r.recon[c]);
    detail::release(r.sym[c]);
  }
  detail::release(r.id);
  auto stream = detail::assemble_speculative3d(p, payload, std::move(prep.mask_section));
  if (!stream.ok()) return stream.status();
  laps.lap("container", 1.0);
  if (stats) {
    *stats = CompressStats{};
    stats->eb_abs = double(eb);
    stats->exact_vertices = r.exact_vertices;
    stats->masked_vertices = prep.masked;
    stats->stage_seconds = std::move(stages);
  }
  return stream;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                    std::to_string(field.ny) + "x" + std::to_string(field.nz) + " field");
}

template <class Field>
Result<Field> decompress3d_any(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  using T = typename decltype(Field::u)::value_type;
  if constexpr (std::is_same_v<Field, VectorField3D>)
    if (o.policy == Policy::cuda) return detail::decompress3d_on_device(stream, o);
  FACTZ_RETURN_IF_ERROR(cpu_policy3d(o.policy));
  auto parsed = detail::parse_vector3d_stream(stream);
  if (!parsed.ok()) return parsed.status();
  const int threads = detail::threads_of(o.policy, o.threads);
  const auto& h = parsed->header;
  if ((h.dtype == detail::kDtypeFloat64) != (sizeof(T) == 8))
    return invalid_argument(h.dtype == detail::kDtypeFloat64
                                ? "the stream holds a float64 3D vector field: decode it with factz::decompress3d64"
                                : "the stream holds a float32 3D vector field: decode it with factz::decompress3d");
  std::vector<uint8_t> mask;  // read first: the modes' sections leave the missing vertices out
  FACTZ_RETURN_IF_ERROR(detail::read_mask3d(stream, parsed.value(), mask));
  const uint8_t* missing = mask.empty() ? nullptr : mask.data();
  detail::Speculative3DInputOf<T> in;
  detail::Tiled3DInputOf<T> tiled;
  const bool speculative = h.mode == detail::kModeSpeculative;
  if (speculative) FACTZ_RETURN_IF_ERROR(detail::parse_speculative3d(stream, parsed.value(), threads, in, missing));
  else FACTZ_RETURN_IF_ERROR(detail::parse_tiled3d(stream, parsed.value(), threads, tiled, missing));
  Field f;
  f.nx = int64_t(h.nx);
  f.ny = int64_t(h.ny);
  f.nz = int64_t(h.nz);
  const size_t n = size_t(f.size());
  for (auto* plane : {&f.u, &f.v, &f.w}) detail::resize_fresh(*plane, n);  // huge pages before the zero fill
  if (speculative) FACTZ_RETURN_IF_ERROR(detail::decode_speculative3d(h, in, threads, f.u, f.v, f.w, missing));
  else FACTZ_RETURN_IF_ERROR(detail::decode_tiled3d(h, tiled, threads, f.u, f.v, f.w));
  if (missing) {  // the missing vertices' bits go over the reconstruction last
    FACTZ_RETURN_IF_ERROR(detail::apply_mask3d(stream, parsed.value(), f.u, f.v, f.w, mask));
    f.mask = std::move(mask);
  }
  return f;
} catch (const std::bad_alloc&) {
  return detail::out_of_memory_decoding(stream);
}

}  // namespace

Result<std::vector<uint8_t>> compress(const VectorField3D& field, const Options& o, CompressStats* stats) {
  return compress3d_any(field, o, stats);
}
Result<std::vector<uint8_t>> compress(const VectorField3D64& field, const Options& o, CompressStats* stats) {
  return compress3d_any(field, o, stats);
}
Result<std::vector<uint8_t>> compress(VectorField3D&& field, const Options& o, CompressStats* stats) {
  auto out = compress3d_any(std::as_const(field), o, stats, &field);
  field = VectorField3D{};
  return out;
}
Result<std::vector<uint8_t>> compress(VectorField3D64&& field, const Options& o, CompressStats* stats) {
  auto out = compress3d_any(std::as_const(field), o, stats, &field);
  field = VectorField3D64{};
  return out;
}

Result<std::array<int64_t, 3>> stream_dims3d(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_vector3d_stream(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed->header;
  return std::array<int64_t, 3>{int64_t(h.nx), int64_t(h.ny), int64_t(h.nz)};
}

Result<DType> stream_dtype3d(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_vector3d_stream(stream);
  if (!parsed.ok()) return parsed.status();
  return parsed->header.dtype == detail::kDtypeFloat64 ? DType::float64 : DType::float32;
}

Result<VectorField3D> decompress3d(std::span<const uint8_t> stream, const DecompressOptions& o) {
  return decompress3d_any<VectorField3D>(stream, o);
}
Result<VectorField3D64> decompress3d64(std::span<const uint8_t> stream, const DecompressOptions& o) {
  return decompress3d_any<VectorField3D64>(stream, o);
}

}  // namespace factz
