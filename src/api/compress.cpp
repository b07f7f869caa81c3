// The public compress / decompress entry points: option checks, the absolute bound,
// frontend dispatch, entropy coding and the container (docs/format.md).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "codec/coder.hpp"
#include "codec/zstd_stage.hpp"
#include "factz/factz.hpp"
#include "util/byte_io.hpp"
#include "format/container.hpp"
#include "kernels/quantizer.hpp"
#include "modes/frontend.hpp"
#include "modes/speculative_mode.hpp"

namespace factz {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::none: return "none";
    case Mode::block: return "block";
    case Mode::speculative: return "speculative";
  }
  return "unknown";
}

const char* coder_name(Coder c) { return c == Coder::huffman ? "huffman" : c == Coder::ans ? "ans" : "unknown"; }

namespace {

using detail::Section;

constexpr int kZstdLevel = 3;
/// Largest absolute bound: 2 * eb must stay finite for the quantizer's step.
constexpr float kMaxEb = 0x1p126f;

int threads_of(Policy p, int threads) {
  if (p == Policy::serial) return 1;
  return threads > 0 ? threads : omp_get_max_threads();
}

/// The float bound actually used: the largest float not above the requested one.
float float_bound(double eb) {
  if (!(eb > 0.0)) return 0.0f;
  if (eb >= double(kMaxEb)) return kMaxEb;
  float f = float(eb);
  if (double(f) > eb) f = std::nextafter(f, 0.0f);
  return f;
}

double value_range(const VectorField2D& f, int threads) {
  if (f.size() == 0) return 0.0;
  float lo = f.u[0], hi = f.u[0];
  const int64_t n = f.size();
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : lo) reduction(max : hi)
  for (int64_t k = 0; k < n; ++k) {
    lo = std::min({lo, f.u[size_t(k)], f.v[size_t(k)]});
    hi = std::max({hi, f.u[size_t(k)], f.v[size_t(k)]});
  }
  return double(hi) - double(lo);
}

std::vector<uint8_t> meta_section() {
  detail::ByteWriter w;
  w.u8(uint8_t(detail::kMaxBoundId));
  w.u32(uint32_t(detail::kRadius));
  return std::move(w.bytes());
}

}  // namespace

namespace {
Result<std::vector<uint8_t>> compress_impl(const VectorField2D& field, const Options& o, CompressStats* stats);
}  // namespace

Result<std::vector<uint8_t>> compress(const VectorField2D& field, const Options& o, CompressStats* stats) {
  try {
    return compress_impl(field, o, stats);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a " + std::to_string(field.nx) + "x" +
                                      std::to_string(field.ny) + " field");
  }
}

namespace {

using Stages = std::vector<std::pair<std::string, double>>;

/// Wall-clock laps for CompressStats::stage_seconds.
class Laps {
 public:
  explicit Laps(Stages& out) : out_(out), last_(std::chrono::steady_clock::now()) {}
  void operator()(const std::string& name) {
    const auto t = std::chrono::steady_clock::now();
    out_.emplace_back(name, std::chrono::duration<double>(t - last_).count());
    last_ = t;
  }

 private:
  Stages& out_;
  std::chrono::steady_clock::time_point last_;
};

/// Modes none and block: frontend, tiled backbone, Huffman.
Status tiled_sections(const VectorField2D& field, Mode mode, uint8_t exact_edges, detail::EntropyCoder coder, float eb,
                      int threads,
                      Laps& lap, Stages& stages, std::vector<Section>& sections, CompressStats& st) {
  detail::FrontendResult fr;
  if (mode == Mode::none) detail::run_none(field, eb, threads, fr, exact_edges);
  else detail::run_block(field, eb, threads, fr, exact_edges);
  lap("frontend");
  for (auto& sub : fr.stage_seconds) stages.emplace_back("  " + sub.first, sub.second);
  const detail::TileLayout L(field.nx, field.ny);
  detail::PlanePayload pu = detail::encode_plane(field.u, L, eb, fr.u, threads);
  detail::PlanePayload pv = detail::encode_plane(field.v, L, eb, fr.v, threads);
  sections.push_back({detail::kSectionMeta, meta_section()});
  if (mode == Mode::block) {
    std::vector<uint8_t> ids(fr.u.tile_ids);
    ids.insert(ids.end(), fr.v.tile_ids.begin(), fr.v.tile_ids.end());
    sections.push_back({detail::kSectionTileBounds, std::move(ids)});
  }
  lap("encode");
  std::vector<uint8_t> cu, cv;
  FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pu.symbols, detail::kAnsCodeCenter, cu, threads));
  FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pv.symbols, detail::kAnsCodeCenter, cv, threads));
  sections.push_back({detail::kSectionCodesU, std::move(cu)});
  sections.push_back({detail::kSectionCodesV, std::move(cv)});
  sections.push_back({detail::kSectionExactIndex, detail::concat_lists(pu.exact_index, pv.exact_index)});
  sections.push_back({detail::kSectionExactValues, detail::concat_lists(pu.exact_values, pv.exact_values)});
  sections.push_back({detail::kSectionOutliers, detail::concat_lists(pu.outliers, pv.outliers)});
  lap("entropy");
  int64_t exact = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : exact)
  for (int64_t k = 0; k < field.size(); ++k) exact += fr.u.exact[size_t(k)] | fr.v.exact[size_t(k)];
  st.exact_vertices = exact;
  st.repair_rounds = fr.repair_rounds;
  st.repaired_vertices = fr.repaired_vertices;
  return Status::Ok();
}

Result<std::vector<uint8_t>> compress_impl(const VectorField2D& field, const Options& o, CompressStats* stats) {
  FACTZ_RETURN_IF_ERROR(validate_field(field));
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("the error bound must be finite and >= 0");
  if (o.mode != Mode::none && o.mode != Mode::block && o.mode != Mode::speculative)
    return invalid_argument("unknown mode");
  if (o.coder != Coder::huffman && o.coder != Coder::ans) return invalid_argument("unknown coder");
  const auto coder = detail::EntropyCoder(o.coder);
  if (o.bound_mode != BoundMode::abs && o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  if (o.exact_edges > 15)
    return invalid_argument("exact_edges takes the bits 1, 2, 4 and 8 (EdgeBits), got " + std::to_string(o.exact_edges));
  const int64_t s0 = o.anchor_stride;
  if (o.mode == Mode::speculative && (s0 < 2 || s0 > detail::kMaxAnchorStride || (s0 & (s0 - 1)) != 0))
    return invalid_argument("anchor stride must be a power of two in [2, 4096], got " + std::to_string(s0));
  const int threads = threads_of(o.policy, o.threads);
  const double eb_req = o.bound_mode == BoundMode::abs ? o.bound : o.bound * value_range(field, threads);
  const float eb = float_bound(eb_req);

  Stages stages;
  Laps lap(stages);
  CompressStats st;
  std::vector<Section> sections;
  if (o.mode == Mode::speculative) {
    detail::SpeculativeResult sr;
    detail::run_speculative(field, eb, s0, threads, true, sr, o.exact_edges);
    lap("frontend");
    FACTZ_RETURN_IF_ERROR(detail::speculative_sections(field, s0, sr, coder, threads, sections));
    lap("entropy");
    st.exact_vertices = sr.exact_vertices;
  } else {
    FACTZ_RETURN_IF_ERROR(tiled_sections(field, o.mode, o.exact_edges, coder, eb, threads, lap, stages, sections, st));
  }
  for (auto& sec : sections) sec.zstd = o.zstd && sec.id != detail::kSectionMeta;
  detail::Header h;
  h.components = 2;
  h.mode = uint8_t(o.mode);
  h.coder = uint8_t(o.coder);
  h.nx = uint64_t(field.nx);
  h.ny = uint64_t(field.ny);
  h.bound_mode = uint8_t(o.bound_mode);
  h.bound_value = o.bound;
  h.eb = eb;
  h.tile = uint16_t(detail::kTile);
  h.anchor_stride = uint16_t(o.mode == Mode::speculative ? s0 : 0);
  h.flags = o.zstd ? 1 : 0;
  const detail::Compressor zstd = [](std::span<const uint8_t> in, std::vector<uint8_t>& out) {
    return detail::zstd_compress(in, kZstdLevel, out);
  };
  auto stream = detail::write_container(h, std::move(sections), o.zstd ? &zstd : nullptr);
  if (!stream.ok()) return stream.status();
  lap("container");
  if (stats) {
    *stats = std::move(st);
    stats->stage_seconds = std::move(stages);
    stats->eb_abs = eb;
  }
  return stream;
}

}  // namespace

namespace {

/// Container and header checks shared by every decoding entry point.
Result<detail::ParsedContainer> parse_stream(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed.value().header;
  if (h.dtype != 1 || h.components != 2 || h.ndims != 2 || h.nz != 1)
    return Status(Code::unsupported_version, "stream is not a 2D float32 vector field");
  if (h.mode > uint8_t(Mode::speculative))
    return Status(Code::unsupported_version, "stream mode " + std::to_string(h.mode) + " is not supported by this build");
  if (h.coder > uint8_t(Coder::ans))
    return Status(Code::unsupported_version, "stream coder " + std::to_string(h.coder) + " is not supported by this build");
  if (h.tile != detail::kTile) return corrupt_stream("unsupported tile size " + std::to_string(h.tile));
  if (!(h.eb >= 0.0f) || !(h.eb <= kMaxEb)) return corrupt_stream("absolute bound out of range");
  if (h.nx == 0 || h.ny == 0) return corrupt_stream("empty grid");
  const bool speculative = h.mode == uint8_t(Mode::speculative);
  std::vector<uint32_t> required = {detail::kSectionMeta, detail::kSectionCodesU, detail::kSectionCodesV,
                                    detail::kSectionExactValues};
  if (speculative) {
    required.push_back(detail::kSectionBoundIdsU);
  } else {
    required.insert(required.end(), {detail::kSectionExactIndex, detail::kSectionOutliers});
    if (h.mode == uint8_t(Mode::block)) required.push_back(detail::kSectionTileBounds);
  }
  for (uint32_t id : required)
    if (!detail::has_section(parsed.value(), id)) return corrupt_stream("missing section " + detail::section_name(id));
  // The per-vertex symbol stream records its own symbol count: it must match the grid
  // before anything is allocated for the grid (a forged header cannot make us allocate).
  const uint32_t per_vertex = speculative ? detail::kSectionBoundIdsU : detail::kSectionCodesU;
  uint64_t expected = h.nx * h.ny;
  if (speculative) {
    const uint64_t s0 = h.anchor_stride;
    if (s0 < 2 || s0 > uint64_t(detail::kMaxAnchorStride) || (s0 & (s0 - 1)) != 0)
      return corrupt_stream("anchor stride " + std::to_string(s0) + " is not a power of two in [2, 4096]");
    expected -= ((h.nx - 1) / s0 + 1) * ((h.ny - 1) / s0 + 1);
  }
  for (const auto& e : parsed->entries) {
    if (e.id != per_vertex) continue;
    const auto stored = stream.subspan(size_t(e.offset), size_t(e.stored_size));
    std::vector<uint8_t> head(stored.begin(), stored.begin() + std::min<size_t>(stored.size(), detail::kCoderHeaderBytes));
    if (e.flags & detail::kSectionFlagZstd) FACTZ_RETURN_IF_ERROR(detail::zstd_peek(stored, detail::kCoderHeaderBytes, head));
    auto count = detail::coded_symbol_count(detail::EntropyCoder(h.coder), head);
    if (!count.ok()) return count.status();
    if (count.value() != expected)
      return corrupt_stream("grid " + std::to_string(h.nx) + "x" + std::to_string(h.ny) + " needs " +
                            std::to_string(expected) + " symbols in " + detail::section_name(per_vertex) +
                            ", which holds " + std::to_string(count.value()));
  }
  return parsed;
}

}  // namespace

Result<std::pair<int64_t, int64_t>> stream_dims(std::span<const uint8_t> stream) {
  auto parsed = parse_stream(stream);
  if (!parsed.ok()) return parsed.status();
  return std::pair<int64_t, int64_t>{int64_t(parsed->header.nx), int64_t(parsed->header.ny)};
}

namespace {

/// Decodes a parsed, header-checked stream into caller planes.
Status decode_parsed(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, std::span<float> u_out,
                     std::span<float> v_out, const DecompressOptions& o) {
  const auto& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny);
  if (int64_t(u_out.size()) != nx * ny || int64_t(v_out.size()) != nx * ny)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(nx * ny) + " values");
  const int threads = threads_of(o.policy, o.threads);
  const detail::Decompressor unzstd = [](std::span<const uint8_t> in, uint64_t raw, std::vector<uint8_t>& out) {
    return detail::zstd_decompress(in, raw, out);
  };
  if (h.mode == uint8_t(Mode::speculative))
    return detail::decode_speculative(stream, pc, &unzstd, threads, u_out, v_out);
  detail::TiledSections ts;
  FACTZ_RETURN_IF_ERROR(detail::read_tiled_sections(stream, pc, &unzstd, ts));
  const detail::TileLayout L(nx, ny);
  const size_t ntiles = size_t(L.tile_count());
  detail::BigVector<uint16_t> symbols(static_cast<size_t>(nx * ny));
  const uint32_t code_ids[2] = {detail::kSectionCodesU, detail::kSectionCodesV};
  const std::span<float> planes[2] = {u_out, v_out};
  for (int c = 0; c < 2; ++c) {
    auto codes = detail::read_section(stream, pc, code_ids[c], &unzstd);
    if (!codes.ok()) return codes.status();
    FACTZ_RETURN_IF_ERROR(
        detail::entropy_decode(detail::EntropyCoder(h.coder), codes.value(), detail::kAnsCodeCenter, symbols, threads));
    const std::span<const uint8_t> ids(ts.tile_ids.data() + c * ntiles, ntiles);
    FACTZ_RETURN_IF_ERROR(
        detail::decode_plane(L, h.eb, ids, symbols, ts.outl[c], ts.idx[c], ts.val[c], threads, planes[c]));
  }
  return Status::Ok();
}

}  // namespace

Status decompress_into(std::span<const uint8_t> stream, std::span<float> u_out, std::span<float> v_out,
                       const DecompressOptions& o) {
  try {
    auto parsed = parse_stream(stream);
    if (!parsed.ok()) return parsed.status();
    return decode_parsed(stream, parsed.value(), u_out, v_out, o);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decompressing");
  }
}

Result<VectorField2D> decompress(std::span<const uint8_t> stream, const DecompressOptions& o) try {
  auto parsed = parse_stream(stream);
  if (!parsed.ok()) return parsed.status();
  VectorField2D f;
  f.nx = int64_t(parsed->header.nx);
  f.ny = int64_t(parsed->header.ny);
  const size_t n = static_cast<size_t>(f.nx * f.ny);
  for (auto* p : {&f.u, &f.v}) {
    p->reserve(n);
    detail::hint_huge_pages(p->data(), n * sizeof(float));
    p->resize(n);
  }
  FACTZ_RETURN_IF_ERROR(decode_parsed(stream, parsed.value(), f.u, f.v, o));
  return f;
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of memory decompressing");
}

}  // namespace factz
