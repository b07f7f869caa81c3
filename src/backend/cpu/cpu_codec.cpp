#include "backend/cpu/cpu_codec.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "codec/coder.hpp"
#include "backend/cpu/frontend.hpp"
#include "backend/cpu/speculative_mode.hpp"
#include "factz/topology.hpp"
#include "streams/mask_sections.hpp"
#include "streams/missing_fill.hpp"
#include "streams/stream_common.hpp"
#include "streams/tiled_lists.hpp"
#include "streams/vector_stream.hpp"

namespace factz::detail {
namespace {

using Stages = std::vector<std::pair<std::string, double>>;

/// The fraction of a compression done when `stage` ends (Options::progress): fixed
/// shares, measured on large fields, so the reports never depend on the machine.
double done_after(const std::string& stage, bool speculative) {
  if (stage == "mask") return 0.02;
  if (stage == "frontend") return speculative ? 0.80 : 0.60;
  if (stage == "encode") return 0.75;
  if (stage == "entropy") return 0.97;
  return 1.0;  // "container"
}

/// StageLaps with this writer's shares (done_after): lap("stage") at the end of a stage.
class Laps {
 public:
  Laps(Stages& out, const ProgressHook& hook, bool speculative) : laps_(out, hook), speculative_(speculative) {}
  void operator()(const std::string& name) { laps_.lap(name, done_after(name, speculative_)); }

 private:
  StageLaps laps_;
  bool speculative_;
};

// One body for float32 and float64 fields (Field = VectorField2D, VectorField2D64; T its
// value type): the frontends, the backbone and the mask sections are overloaded on T, and
// the plan of a float64 field keeps its bound in double (make_plan64).
template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;

/// The bound the frontends take: the plan's float, or a float64 stream's double.
float plan_bound(const StreamPlan& p, float) { return p.eb; }
double plan_bound(const StreamPlan& p, double) { return p.eb64; }

template <class Field>
double value_range(const Field& f, int threads) {
  using T = ValueOf<Field>;
  if (f.size() == 0) return 0.0;
  T lo = f.u[0], hi = f.u[0];
  const int64_t n = f.size();
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : lo) reduction(max : hi)
  for (int64_t k = 0; k < n; ++k) {
    lo = std::min({lo, f.u[size_t(k)], f.v[size_t(k)]});
    hi = std::max({hi, f.u[size_t(k)], f.v[size_t(k)]});
  }
  return double(hi) - double(lo);
}

/// Modes none and block: frontend and tiled backbone into the stream's sections.
template <class Field>
Status tiled_stream_sections(const Field& field, const uint8_t* missing, const StreamPlan& p, Laps& lap,
                             Stages& stages, std::vector<Section>& sections, CompressStats& st) {
  using T = ValueOf<Field>;
  const int threads = p.threads;
  const T eb = plan_bound(p, T(0));
  FrontendResultOf<T> fr;
  if (p.options.mode == Mode::none) run_none(field, eb, threads, fr, p.options.exact_edges, missing);
  else run_block(field, eb, threads, fr, p.options.exact_edges, missing, FrontendKeeps::codes);
  lap("frontend");
  for (auto& sub : fr.stage_seconds) stages.emplace_back("  " + sub.first, sub.second);
  int64_t exact = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : exact)
  for (int64_t k = 0; k < field.size(); ++k)  // with all their bits (not kStoredRounded)
    exact += fr.u.exact[size_t(k)] == kStoredExact || fr.v.exact[size_t(k)] == kStoredExact;
  if constexpr (std::is_same_v<T, float>) {
    // encode_plane derives a float plane's listed values from the field and the flags
    // (listed_value): mode none's reconstructions go before the codes are allocated (peak
    // memory); block mode kept none (FrontendKeeps::codes).
    BigVector<T>().swap(fr.u.recon);
    BigVector<T>().swap(fr.v.recon);
  }
  const TileLayout L(field.nx, field.ny);
  PlanePayload planes[2] = {encode_plane(field.u, L, eb, fr.u, threads, missing),
                            encode_plane(field.v, L, eb, fr.v, threads, missing)};
  for (auto* plane : {&fr.u, &fr.v}) {  // in the exact lists now: the coders reuse the memory
    BigVector<uint8_t>().swap(plane->exact);
    BigVector<T>().swap(plane->recon);
  }
  TiledPayload pl;
  if (p.options.mode == Mode::block) {
    pl.tile_ids = fr.u.tile_ids;
    pl.tile_ids.insert(pl.tile_ids.end(), fr.v.tile_ids.begin(), fr.v.tile_ids.end());
  }
  for (int c = 0; c < 2; ++c) {
    pl.symbols[c] = std::span<const uint16_t>(planes[c].symbols.data(), planes[c].symbols.size());
    pl.outliers[c] = std::move(planes[c].outliers);
    pl.exact_index[c] = std::move(planes[c].exact_index);
    pl.exact_values[c] = std::move(planes[c].exact_values);
  }
  lap("encode");
  FACTZ_RETURN_IF_ERROR(tiled_sections(p, pl, sections));
  lap("entropy");
  st.exact_vertices = exact;
  st.repair_rounds = fr.repair_rounds;
  st.repaired_vertices = fr.repaired_vertices;
  return Status::Ok();
}

/// The planes of a stream's modes, before the mask sections.
template <class T>
Status decode_planes(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<T> u_out,
                     std::span<T> v_out, int threads, const uint8_t* missing) {
  const auto& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny);
  if (h.mode == uint8_t(Mode::speculative)) {
    SpeculativeInputOf<T> in;
    FACTZ_RETURN_IF_ERROR(parse_speculative(stream, pc, threads, in, false, missing));
    return decode_speculative(h, in, threads, u_out, v_out, missing);
  }
  const Decompressor* unzstd = &zstd_stage_decompressor();
  TiledSections ts;
  FACTZ_RETURN_IF_ERROR(read_tiled_sections(stream, pc, unzstd, ts));
  const TileLayout L(nx, ny);
  const size_t ntiles = size_t(L.tile_count());
  BigVector<uint16_t> symbols(static_cast<size_t>(nx * ny));
  const uint32_t code_ids[2] = {kSectionCodesU, kSectionCodesV};
  const std::span<T> planes[2] = {u_out, v_out};
  // The tiles' bound: the header's f32 one, or a float64 stream's f64 one (meta section).
  const T eb = h.dtype == kDtypeFloat64 ? T(ts.eb) : T(h.eb);
  for (int c = 0; c < 2; ++c) {
    auto codes = read_section(stream, pc, code_ids[c], unzstd);
    if (!codes.ok()) return codes.status();
    std::vector<int64_t> outlier_index, outlier_code;
    FACTZ_RETURN_IF_ERROR(parse_outliers(ts.outl[c], uint64_t(nx * ny), {}, outlier_index, outlier_code));
    FACTZ_RETURN_IF_ERROR(decode_tiled_symbols(h, codes.value(), missing, outlier_index, threads, symbols));
    const std::span<const uint8_t> ids(ts.tile_ids.data() + c * ntiles, ntiles);
    FACTZ_RETURN_IF_ERROR(
        decode_plane(L, eb, ids, symbols, outlier_index, outlier_code, ts.idx[c], ts.val[c], threads, planes[c]));
  }
  return Status::Ok();
}

template <class Field>
Result<std::vector<uint8_t>> cpu_compress_any(const Field& field, const Options& o, CompressStats* stats,
                                              Field* given = nullptr) {
  using T = ValueOf<Field>;
  constexpr bool kFloat64 = std::is_same_v<T, double>;
  const int threads = threads_of(o.policy, o.threads, field.size());
  Stages stages;
  Laps lap(stages, o.progress, o.mode == Mode::speculative);
  CompressStats st;
  // The meta section names a predictor (format version 7) in speculative mode, whose
  // payload carries run_speculative's predictor, kDefaultPredictor (checked below); the
  // mask sections are coded in one section then.
  const bool predictor_byte = o.mode == Mode::speculative && kDefaultPredictor != Predictor::linear;
  // Missing vertices: the frontends work on the filled field and never check a triangle
  // touching one; the mask sections carry the original bits (streams/mask_sections.hpp),
  // coded before any fill. A field given up is filled in place (no copy of its planes),
  // any other one into a copy.
  const std::vector<uint8_t> mask = missing_mask(field);
  std::vector<Section> mask_sections;
  Field filled;
  if (!mask.empty()) {
    append_mask_sections(mask, field.nx, field.ny, std::span<const T>(field.u), std::span<const T>(field.v),
                         mask_sections, predictor_byte);
    if (given) fill_missing_in_place(*given, mask);  // *given is `field`
    else filled = fill_missing(field, mask);
    st.masked_vertices = std::count(mask.begin(), mask.end(), uint8_t(1));
    lap("mask");
  }
  const Field& work = mask.empty() || given ? field : filled;
  // Planes the speculative driver may take as its working state (run_speculative's `state`):
  // the caller's field when it was given up, else the filled copy, which is ours.
  Field* state = given ? given : mask.empty() ? nullptr : &filled;
  const uint8_t* missing = mask.empty() ? nullptr : mask.data();
  const double range = o.bound_mode == BoundMode::rel ? value_range(work, threads) : 0.0;
  const StreamPlan p = kFloat64 ? make_plan64(field.nx, field.ny, o, range, threads)
                                : make_plan(field.nx, field.ny, o, range, threads);
  std::vector<Section> sections;
  if (o.mode == Mode::speculative) {
    SpeculativeResultOf<T> sr;
    run_speculative(work, plan_bound(p, T(0)), o.anchor_stride, threads, true, sr, o.exact_edges, missing,
                    kDefaultPredictor, state);
    lap("frontend");
    SpeculativePayload pl;
    speculative_payload(work, o.anchor_stride, sr, pl);
    st.exact_vertices = sr.exact_vertices;
    sr = {};  // the per-vertex state is not needed by the coders: lower peak memory
    FACTZ_RETURN_IF_ERROR(speculative_sections(p, pl, sections));
    if ((pl.predictor != Predictor::linear) != predictor_byte)
      return Status(Code::internal, "the speculative payload's predictor is not the one the mask sections assumed");
    lap("entropy");
  } else {
    FACTZ_RETURN_IF_ERROR(tiled_stream_sections(work, missing, p, lap, stages, sections, st));
  }
  for (Section& m : mask_sections) sections.push_back(std::move(m));
  auto stream = write_vector_stream(p, std::move(sections), predictor_byte);
  if (!stream.ok()) return stream.status();
  lap("container");
  if (stats) {
    *stats = std::move(st);
    stats->stage_seconds = std::move(stages);
    stats->eb_abs = kFloat64 ? p.eb64 : double(p.eb);
  }
  return stream;
}

template <class T>
Status cpu_decode_any(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<T> u_out,
                      std::span<T> v_out, int threads, std::vector<uint8_t>* mask_out) {
  const auto& h = pc.header;
  FACTZ_RETURN_IF_ERROR(require_dtype(h, std::is_same_v<T, double> ? kDtypeFloat64 : kDtypeFloat32));
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny);
  if (int64_t(u_out.size()) != nx * ny || int64_t(v_out.size()) != nx * ny)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(nx * ny) + " values");
  auto masked = stream_has_mask(pc);
  if (!masked.ok()) return masked.status();
  std::vector<uint8_t> mask;  // read first: the speculative sections skip missing vertices
  if (masked.value()) FACTZ_RETURN_IF_ERROR(read_mask(stream, pc, nx, ny, mask));
  FACTZ_RETURN_IF_ERROR(decode_planes(stream, pc, u_out, v_out, threads, mask.empty() ? nullptr : mask.data()));
  if (!masked.value()) return Status::Ok();
  // The missing vertices' bits go over the reconstruction last.
  FACTZ_RETURN_IF_ERROR(apply_mask_sections(stream, pc, nx, ny, u_out, v_out, mask));
  if (mask_out) *mask_out = std::move(mask);
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint8_t>> cpu_compress(const VectorField2D& field, const Options& o, CompressStats* stats) {
  return cpu_compress_any(field, o, stats);
}
Result<std::vector<uint8_t>> cpu_compress(const VectorField2D64& field, const Options& o, CompressStats* stats) {
  return cpu_compress_any(field, o, stats);
}
Result<std::vector<uint8_t>> cpu_compress(VectorField2D&& field, const Options& o, CompressStats* stats) {
  return cpu_compress_any(field, o, stats, &field);
}
Result<std::vector<uint8_t>> cpu_compress(VectorField2D64&& field, const Options& o, CompressStats* stats) {
  return cpu_compress_any(field, o, stats, &field);
}

Status cpu_decode(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<float> u_out,
                  std::span<float> v_out, int threads, std::vector<uint8_t>* mask_out) {
  return cpu_decode_any(stream, pc, u_out, v_out, threads, mask_out);
}
Status cpu_decode(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<double> u_out,
                  std::span<double> v_out, int threads, std::vector<uint8_t>* mask_out) {
  return cpu_decode_any(stream, pc, u_out, v_out, threads, mask_out);
}

}  // namespace factz::detail
