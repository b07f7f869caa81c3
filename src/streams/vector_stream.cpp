#include "streams/vector_stream.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "codec/coder.hpp"
#include "kernels/interpolation.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculative_decode.hpp"
#include "kernels/tiles.hpp"
#include "streams/code_segments.hpp"
#include "streams/mask_sections.hpp"
#include "streams/source_section.hpp"
#include "streams/stream_common.hpp"
#include "streams/tiled_lists.hpp"
#include "util/byte_io.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {
namespace {

/// The meta section of the tiled and speculative modes: the bound-id range and the radius,
/// and in a float64 stream the f64 bound every decoder uses (the header's is a float).
std::vector<uint8_t> meta_section(const StreamPlan& p) {
  ByteWriter w;
  w.u8(uint8_t(kMaxBoundId));
  w.u32(uint32_t(kRadius));
  if (p.dtype == kDtypeFloat64) w.f64(p.eb64);
  return std::move(w.bytes());
}

/// Hands a section CRC computed by the backend to the container writer (used for sections
/// stored without zstd; with zstd the writer checksums the stored bytes itself).
void set_raw_crc(Section& s, std::optional<uint32_t> crc) { s.raw_crc = crc; }

}  // namespace

int threads_of(Policy p, int threads) {
  if (p == Policy::serial) return 1;
  return threads > 0 ? threads : omp_get_max_threads();
}

int threads_of(Policy p, int threads, int64_t values) {
  if (p == Policy::serial) return 1;
  if (threads > 0) return threads;
  return threads_capped(omp_get_max_threads(), values);
}

Status check_vector_options(int64_t nx, int64_t ny, const Options& o) {
  if (nx <= 0 || ny <= 0) return invalid_argument("field dimensions must be positive");
  if (uint64_t(nx) * uint64_t(ny) > kMaxElements) return invalid_argument("field has too many values");
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("the error bound must be finite and >= 0");
  if (o.mode != Mode::none && o.mode != Mode::block && o.mode != Mode::speculative)
    return invalid_argument("unknown mode");
  if (o.coder == Coder::smallest || o.coder == Coder::context)
    return invalid_argument(std::string("coder '") + coder_name(o.coder) +
                            "' applies to scalar fields only; choose ans or huffman");
  if (o.coder != Coder::huffman && o.coder != Coder::ans) return invalid_argument("unknown coder");
  if (o.bound_mode != BoundMode::abs && o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  if (o.exact_edges > 15)
    return invalid_argument("exact_edges takes the bits 1, 2, 4 and 8 (EdgeBits), got " + std::to_string(o.exact_edges));
  if (o.mode == Mode::speculative && !valid_anchor_stride(o.anchor_stride))
    return invalid_argument("anchor stride must be a power of two in [2, 4096], got " +
                            std::to_string(o.anchor_stride));
  return check_source_option(nx, ny, o);
}

StreamPlan make_plan(int64_t nx, int64_t ny, const Options& o, double range, int threads) {
  StreamPlan p;
  p.nx = nx;
  p.ny = ny;
  p.options = o;
  p.eb = float_bound(o.bound_mode == BoundMode::abs ? o.bound : o.bound * range);
  p.threads = threads;
  return p;
}

double double_bound(double eb) {
  if (!(eb > 0.0)) return 0.0;
  return eb < kMaxEb64 ? eb : kMaxEb64;
}

StreamPlan make_plan64(int64_t nx, int64_t ny, const Options& o, double range, int threads) {
  StreamPlan p = make_plan(nx, ny, o, range, threads);
  p.dtype = kDtypeFloat64;
  p.eb64 = double_bound(o.bound_mode == BoundMode::abs ? o.bound : o.bound * range);
  p.eb = float_bound(p.eb64);
  return p;
}

Status require_dtype(const Header& h, uint8_t dtype) {
  if (h.dtype == dtype) return Status::Ok();
  if (h.dtype == kDtypeFloat64)
    return invalid_argument("the stream holds float64 values: decode it with factz::decompress64 or the "
                            "decompress_into overload that takes double planes (a float32 decoder would round them)");
  return invalid_argument("the stream holds float32 values: decode it with factz::decompress or the "
                          "decompress_into overload that takes float planes");
}

Status tiled_sections(const StreamPlan& p, TiledPayload& pl, std::vector<Section>& sections) {
  const auto coder = EntropyCoder(p.options.coder);
  sections.push_back({kSectionMeta, meta_section(p)});
  if (p.options.mode == Mode::block) sections.push_back({kSectionTileBounds, std::move(pl.tile_ids)});
  std::vector<uint8_t> coded[2];
  if (pl.precoded) {
    for (int c = 0; c < 2; ++c) coded[c] = std::move(pl.coded[c]);
  } else {  // side by side
    const CodingJob jobs[2] = {
        [&](int t) { return entropy_encode(coder, pl.symbols[0], kAnsCodeCenter, coded[0], t); },
        [&](int t) { return entropy_encode(coder, pl.symbols[1], kAnsCodeCenter, coded[1], t); }};
    FACTZ_RETURN_IF_ERROR(run_side_by_side(p.threads, jobs));
  }
  sections.push_back({kSectionCodesU, std::move(coded[0])});
  set_raw_crc(sections.back(), pl.coded_crc[0]);
  sections.push_back({kSectionCodesV, std::move(coded[1])});
  set_raw_crc(sections.back(), pl.coded_crc[1]);
  sections.push_back({kSectionExactIndex, concat_lists(pl.exact_index[0], pl.exact_index[1])});
  sections.push_back({kSectionExactValues, concat_lists(pl.exact_values[0], pl.exact_values[1])});
  sections.push_back({kSectionOutliers, concat_lists(pl.outliers[0], pl.outliers[1])});
  return Status::Ok();
}

Status speculative_sections(const StreamPlan& p, SpeculativePayload& pl, std::vector<Section>& sections) {
  const auto coder = EntropyCoder(p.options.coder);
  std::vector<uint8_t> hid, hu, hv;
  if (pl.precoded) {
    hid = std::move(pl.coded_ids);
    hu = std::move(pl.coded_u);
    hv = std::move(pl.coded_v);
  } else {
    // Segmented codes (format version 9) come with ANS blobs of version 3 (escapes) for the
    // codes and the bound ids; older layouts keep version 2 blobs, byte for byte.
    // (Format version 9: segmented codes.) The three sections side by side.
    const bool segmented = pl.predictor != Predictor::linear, escapes = segmented;
    auto codes = [&](std::span<const uint16_t> c, int t, std::vector<uint8_t>& out) {
      return segmented ? encode_segmented(coder, c, pl.phase_codes, t, out)
                       : entropy_encode(coder, c, kAnsCodeCenter, out, t);
    };
    const CodingJob jobs[3] = {[&](int t) { return entropy_encode(coder, pl.ids, 0, hid, t, escapes); },
                               [&](int t) { return codes(pl.codes_u, t, hu); },
                               [&](int t) { return codes(pl.codes_v, t, hv); }};
    FACTZ_RETURN_IF_ERROR(run_side_by_side(p.threads, jobs));
  }
  std::vector<uint8_t> meta = meta_section(p);
  if (pl.predictor != Predictor::linear) meta.push_back(uint8_t(pl.predictor));  // absent: linear
  sections.push_back({kSectionMeta, std::move(meta)});
  sections.push_back({kSectionCodesU, std::move(hu)});
  set_raw_crc(sections.back(), pl.coded_u_crc);
  sections.push_back({kSectionCodesV, std::move(hv)});
  set_raw_crc(sections.back(), pl.coded_v_crc);
  sections.push_back({kSectionExactValues, std::move(pl.exact)});
  sections.push_back({kSectionBoundIdsU, std::move(hid)});
  set_raw_crc(sections.back(), pl.coded_ids_crc);
  return Status::Ok();
}

Result<std::vector<uint8_t>> write_vector_stream(const StreamPlan& p, std::vector<Section> sections,
                                                 bool predictor_byte) {
  const Options& o = p.options;
  append_source_section(o, sections);
  offer_zstd(sections, o.zstd);
  Header h = stream_header(uint64_t(p.nx), uint64_t(p.ny), 1, o.bound_mode, o.bound, p.eb);
  std::vector<uint32_t> ids;
  for (const auto& s : sections) ids.push_back(s.id);
  // 3 with mask sections, 4 with a source section, 5 with masked tiled codes, 6 for float64,
  // 7 with a predictor byte
  h.dtype = p.dtype;
  h.version = stream_version(ids, tiled_codes_are_packed(2, uint8_t(o.mode)), p.dtype, predictor_byte);
  h.components = 2;
  h.mode = uint8_t(o.mode);
  h.coder = uint8_t(o.coder);
  h.tile = uint16_t(kTile);
  h.anchor_stride = uint16_t(o.mode == Mode::speculative ? o.anchor_stride : 0);
  return write_stream(h, std::move(sections));
}

Result<std::vector<uint8_t>> assemble_tiled(const StreamPlan& p, TiledPayload& payload) {
  std::vector<Section> sections;
  FACTZ_RETURN_IF_ERROR(tiled_sections(p, payload, sections));
  return write_vector_stream(p, std::move(sections));
}

Result<std::vector<uint8_t>> assemble_speculative(const StreamPlan& p, SpeculativePayload& payload) {
  std::vector<Section> sections;
  FACTZ_RETURN_IF_ERROR(speculative_sections(p, payload, sections));
  return write_vector_stream(p, std::move(sections), payload.predictor != Predictor::linear);
}

Result<ParsedContainer> parse_vector_stream(std::span<const uint8_t> stream) {
  auto parsed = parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed.value().header;
  if (h.components == 3)
    return Status(Code::unsupported_version, "stream holds a 3D vector field: decode it with factz::decompress3d");
  if ((h.dtype != kDtypeFloat32 && h.dtype != kDtypeFloat64) || h.components != 2 || h.ndims != 2 || h.nz != 1)
    return Status(Code::unsupported_version, "stream is not a 2D float32 or float64 vector field");
  if (h.mode > uint8_t(Mode::speculative))
    return Status(Code::unsupported_version, "stream mode " + std::to_string(h.mode) + " is not supported by this build");
  if (h.coder > uint8_t(Coder::ans))
    return Status(Code::unsupported_version, "stream coder " + std::to_string(h.coder) + " is not supported by this build");
  if (h.tile != kTile) return corrupt_stream("unsupported tile size " + std::to_string(h.tile));
  if (!(h.eb >= 0.0f) || !(h.eb <= kMaxEb)) return corrupt_stream("absolute bound out of range");
  if (h.nx == 0 || h.ny == 0) return corrupt_stream("empty grid");
  const bool speculative = h.mode == uint8_t(Mode::speculative);
  std::vector<uint32_t> required = {kSectionMeta, kSectionCodesU, kSectionCodesV, kSectionExactValues};
  if (speculative) {
    required.push_back(kSectionBoundIdsU);
  } else {
    required.insert(required.end(), {kSectionExactIndex, kSectionOutliers});
    if (h.mode == uint8_t(Mode::block)) required.push_back(kSectionTileBounds);
  }
  for (uint32_t id : required)
    if (!has_section(parsed.value(), id)) return corrupt_stream("missing section " + section_name(id));
  auto masked = stream_has_mask(parsed.value());
  if (!masked.ok()) return masked.status();
  FACTZ_RETURN_IF_ERROR(check_source_section(stream, parsed.value()));
  // The per-vertex symbol stream records its own symbol count: it must match the grid
  // before anything is allocated for the grid (a forged header cannot make us allocate).
  const uint32_t per_vertex = speculative ? kSectionBoundIdsU : kSectionCodesU;
  uint64_t expected = h.nx * h.ny;
  if (speculative) {
    const uint64_t s0 = h.anchor_stride;
    if (!valid_anchor_stride(int64_t(s0)))
      return corrupt_stream("anchor stride " + std::to_string(s0) + " is not a power of two in [2, 4096]");
    expected -= ((h.nx - 1) / s0 + 1) * ((h.ny - 1) / s0 + 1);
  }
  // A speculative stream has no id for a missing target, a version 5 tiled one no code for
  // a missing vertex: with the mask's recorded count (read without the bitmap) a tiled
  // stream needs exactly one code per valid vertex, a speculative one between the targets
  // less the missing vertices and the targets. The bitmap itself is checked against the
  // symbols when they are decoded (parse_speculative, spread_valid_symbols).
  uint64_t least = expected;
  if (masked.value() && (speculative || h.version >= kFormatVersionPackedTiledCodes)) {
    auto missing = recorded_missing_count(stream, parsed.value(), h.nx * h.ny);
    if (!missing.ok()) return missing.status();
    least = expected - std::min(expected, missing.value());
    if (!speculative) expected = least;
  }
  for (const auto& e : parsed->entries) {
    if (e.id != per_vertex) continue;
    auto count = peek_symbol_count(stream, e, h.coder);
    if (!count.ok()) return count.status();
    if (count.value() > expected || count.value() < least)
      return corrupt_stream("grid " + std::to_string(h.nx) + "x" + std::to_string(h.ny) +
                            (masked.value() ? " with its mask's missing vertices" : "") + " needs " +
                            (least == expected ? std::to_string(expected)
                                               : std::to_string(least) + " to " + std::to_string(expected)) +
                            " symbols in " + section_name(per_vertex) + ", which holds " +
                            std::to_string(count.value()));
  }
  return parsed;
}

bool codes_skip_missing(const Header& h, const uint8_t* missing) {
  return missing && h.version >= kFormatVersionPackedTiledCodes;
}

Status decode_tiled_symbols(const Header& h, std::span<const uint8_t> coded, const uint8_t* missing,
                            std::span<const int64_t> outlier_index, int threads, std::span<uint16_t> symbols) {
  if (!codes_skip_missing(h, missing)) {
    FACTZ_RETURN_IF_ERROR(entropy_decode(EntropyCoder(h.coder), coded, kAnsCodeCenter, symbols, threads));
    return check_outlier_escapes(symbols, outlier_index);
  }
  auto stored = coded_symbol_count(EntropyCoder(h.coder), coded);
  if (!stored.ok()) return stored.status();
  if (stored.value() > symbols.size()) return corrupt_stream("the codes hold more symbols than the grid has vertices");
  FACTZ_RETURN_IF_ERROR(
      entropy_decode(EntropyCoder(h.coder), coded, kAnsCodeCenter, symbols.first(size_t(stored.value())), threads));
  FACTZ_RETURN_IF_ERROR(spread_valid_symbols(symbols, stored.value(), missing, outlier_index));
  return check_outlier_escapes(symbols, outlier_index);
}

Status parse_tiled(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, TiledDecodeInput& out,
                   bool leave_coded, const uint8_t* missing) {
  const auto& h = pc.header;
  const int64_t n = int64_t(h.nx) * int64_t(h.ny);
  TiledSections ts;
  FACTZ_RETURN_IF_ERROR(read_tiled_sections(stream, pc, &zstd_stage_decompressor(), ts));
  out.tile_ids = std::move(ts.tile_ids);
  out.codes_skip_missing = codes_skip_missing(h, missing);
  const uint32_t code_ids[2] = {kSectionCodesU, kSectionCodesV};
  for (int c = 0; c < 2; ++c) {
    auto codes = read_section(stream, pc, code_ids[c], &zstd_stage_decompressor());
    if (!codes.ok()) return codes.status();
    FACTZ_RETURN_IF_ERROR(parse_outliers(ts.outl[c], uint64_t(n), {}, out.outlier_index[c], out.outlier_code[c]));
    if (leave_coded) {
      out.device_coded = true;
      out.coded[c] = std::move(codes.value());
    } else {
      resize_fresh(out.symbols[c], size_t(n));
      FACTZ_RETURN_IF_ERROR(decode_tiled_symbols(h, codes.value(), missing, out.outlier_index[c], threads, out.symbols[c]));
    }
    FACTZ_RETURN_IF_ERROR(parse_exact(ts.idx[c], ts.val[c], uint64_t(n), out.exact_index[c], out.exact_value[c]));
  }
  return Status::Ok();
}

namespace {

bool get_value(ByteReader& r, float& x) { return r.f32(x); }
bool get_value(ByteReader& r, double& x) { return r.f64(x); }

template <class T>
Status parse_speculative_exact_any(std::span<const uint8_t> raw, int64_t n_exact, std::vector<T>& out) {
  if (uint64_t(raw.size()) != uint64_t(n_exact) * 2 * sizeof(T))
    return corrupt_stream("exact value count does not match the bound ids");
  out.resize(size_t(2 * n_exact));
  ByteReader r(raw);
  for (T& x : out) {
    if (!get_value(r, x)) return corrupt_stream("exact values truncated");
    if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
  }
  return Status::Ok();
}

template <class T>
Status parse_speculative_any(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                             SpeculativeInputOf<T>& out, bool leave_coded, const uint8_t* missing,
                             Predictor device_predictors) {
  const auto& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), n = nx * ny;
  const int64_t s0 = h.anchor_stride;
  if (!valid_anchor_stride(s0))
    return corrupt_stream("anchor stride " + std::to_string(s0) + " is not a power of two in [2, 4096]");
  {
    auto meta = read_section(stream, pc, kSectionMeta, &zstd_stage_decompressor());
    if (!meta.ok()) return meta.status();
    FACTZ_RETURN_IF_ERROR(parse_speculative_meta(meta.value(), h, out.eb, out.predictor));
  }
  if (leave_coded && uint8_t(out.predictor) > uint8_t(device_predictors))
    return Status(Code::backend_unavailable, "the device decoder does not implement the stream's predictor " +
                                                 std::to_string(int(out.predictor)) + " (docs/format.md, mode 2)");
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, &zstd_stage_decompressor()); };
  const auto coder = EntropyCoder(h.coder);
  const PhaseLattice A = anchor_lattice(nx, ny, s0);
  auto hid = section(kSectionBoundIdsU);
  if (!hid.ok()) return hid.status();
  auto su = section(kSectionCodesU);
  if (!su.ok()) return su.status();
  auto sv = section(kSectionCodesV);
  if (!sv.ok()) return sv.status();
  auto ex = section(kSectionExactValues);
  if (!ex.ok()) return ex.status();
  const bool segmented = h.version >= kFormatVersionSegmentedCodes;
  if (leave_coded) {
    out.device_coded = true;
    out.codes_segmented = segmented;
    out.coded_ids = std::move(hid.value());
    out.coded_u = std::move(su.value());
    out.coded_v = std::move(sv.value());
    out.exact_raw = std::move(ex.value());
    return Status::Ok();
  }
  // Missing vertices have no entry: anchors are stored for valid anchors only, and only
  // valid targets have ids.
  int64_t missing_anchors = 0, missing_all = 0;
  if (missing) {
    for (int64_t a = 0; a < A.count(); ++a) missing_anchors += missing[size_t(lattice_vertex(A, nx, a))] != 0;
    for (int64_t k = 0; k < n; ++k) missing_all += missing[size_t(k)] != 0;
  }
  resize_fresh(out.ids, size_t(n - A.count() - (missing_all - missing_anchors)));
  FACTZ_RETURN_IF_ERROR(entropy_decode(coder, hid.value(), 0, out.ids, threads));
  // The ids checked and counted phase by phase (a missing target has no id): the codes of
  // each phase tell a deferred decoder which part of the code sections each phase reads.
  int64_t n_codes = 0, n_exact = A.count() - missing_anchors;
  out.phase_codes.clear();
  size_t at = 0;
  PhaseSchedule schedule(nx, ny, s0);
  for (ScheduledPhase ph; schedule.next(ph);) {
    const PhaseLattice& L = ph.lattice;
    size_t targets = size_t(L.count());
    if (missing) {
      targets = 0;
      for (int64_t j = 0; j < L.count_y; ++j)
        for (int64_t i = 0; i < L.count_x; ++i)
          targets += missing[size_t((L.y0 + j * L.dy) * nx + L.x0 + i * L.dx)] == 0;
    }
    if (targets > out.ids.size() - at)
      return Status(Code::internal, "speculative decoder: the phases hold more targets than the bound ids");
    int64_t codes = 0;
    for (const uint16_t* id = out.ids.data() + at; id != out.ids.data() + at + targets; ++id) {
      if (!valid_target_id(*id)) return corrupt_stream("bound id out of range");
      codes += id_has_code(*id);
      n_exact += id_is_exact(*id);
    }
    at += targets;
    n_codes += codes;
    out.phase_codes.push_back(codes);
  }
  if (at != out.ids.size())
    return Status(Code::internal, "speculative decoder: the phases hold fewer targets than the bound ids");
  if (segmented) {
    // Checked whole here (counts, sizes); decoded by the decoder a window at a time.
    std::vector<CodeSegment> segs;
    FACTZ_RETURN_IF_ERROR(parse_segmented(su.value(), n_codes, segs));
    FACTZ_RETURN_IF_ERROR(parse_segmented(sv.value(), n_codes, segs));
    out.codes_segmented = true;
    out.codes_deferred = true;
    out.coded_u = std::move(su.value());
    out.coded_v = std::move(sv.value());
  } else {
    resize_fresh(out.codes_u, size_t(n_codes));
    resize_fresh(out.codes_v, size_t(n_codes));
    FACTZ_RETURN_IF_ERROR(entropy_decode(coder, su.value(), kAnsCodeCenter, out.codes_u, threads));
    FACTZ_RETURN_IF_ERROR(entropy_decode(coder, sv.value(), kAnsCodeCenter, out.codes_v, threads));
  }
  return parse_speculative_exact(ex.value(), n_exact, out.exact);
}

}  // namespace

Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<float>& out) {
  return parse_speculative_exact_any(raw, n_exact, out);
}
Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<double>& out) {
  return parse_speculative_exact_any(raw, n_exact, out);
}

Status parse_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput& out, bool leave_coded, const uint8_t* missing,
                         Predictor device_predictors) {
  return parse_speculative_any(stream, pc, threads, out, leave_coded, missing, device_predictors);
}
Status parse_speculative(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput64& out, bool leave_coded, const uint8_t* missing,
                         Predictor device_predictors) {
  return parse_speculative_any(stream, pc, threads, out, leave_coded, missing, device_predictors);
}

Status parse_speculative_meta(std::span<const uint8_t> meta, const Header& h, double& eb, Predictor& pred) {
  // The bytes of parse_meta_section: 5, or 13 in a float64 stream.
  const size_t base = h.dtype == kDtypeFloat64 ? 13 : 5;
  pred = Predictor::linear;
  // The version says whether the byte is there: one encoding per stream, and a build that
  // predates the predictor refuses the stream as unsupported instead of misdecoding it.
  if (has_predictor_byte(h.version)) {
    if (meta.size() != base + 1)
      return corrupt_stream("meta section of a version " + std::to_string(h.version) + " speculative stream holds " +
                            std::to_string(meta.size()) + " bytes (" + std::to_string(base + 1) +
                            ": the bound parameters, then the predictor)");
    // A linear stream has no predictor byte.
    const uint8_t p = meta[base];
    if (!valid_predictor(p) || p == uint8_t(Predictor::linear))
      return corrupt_stream("meta section: unknown predictor " + std::to_string(int(p)));
    pred = Predictor(p);
    meta = meta.first(base);
  }
  return parse_meta_section(meta, h, eb);
}

Result<double> stream_bound(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd) {
  auto meta = read_section(stream, pc, kSectionMeta, zstd);
  if (!meta.ok()) return meta.status();
  double eb = 0;
  if (pc.header.mode == kModeSpeculative) {
    Predictor pred;
    FACTZ_RETURN_IF_ERROR(parse_speculative_meta(meta.value(), pc.header, eb, pred));
  } else {
    FACTZ_RETURN_IF_ERROR(parse_meta_section(meta.value(), pc.header, eb));
  }
  return eb;
}

}  // namespace factz::detail
