#include "streams/vector3d_stream.hpp"

#include <algorithm>
#include <cmath>

#include "codec/coder.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation3d.hpp"
#include "kernels/tiles.hpp"
#include "kernels/tiles3d.hpp"
#include "streams/code_segments.hpp"
#include "streams/mask_sections.hpp"
#include "streams/phase_choices3d.hpp"
#include "streams/source_section.hpp"
#include "streams/stream_common.hpp"
#include "streams/tiled_lists.hpp"
#include "util/byte_io.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {
namespace {

constexpr uint32_t kCodeSections[3] = {kSectionCodesU, kSectionCodesV, kSectionCodesW};

/// The meta section: the bound-id range, the radius, the f64 bound in a float64 stream
/// (version 13), and the predictor (6 bytes, 14 in a float64 stream); with predictor 2 the
/// choice table follows (streams/phase_choices3d.hpp).
std::vector<uint8_t> meta_section3d(const Stream3DPlan& p, const Speculative3DPayload& pl) {
  ByteWriter w;
  w.u8(uint8_t(kMaxBoundId));
  w.u32(uint32_t(kRadius));
  if (p.dtype == kDtypeFloat64) w.f64(p.eb64);
  if (!any_choice(p.along, pl.transforms)) {
    w.u8(kPredictor3DCubic);
  } else {
    w.u8(kPredictor3DChosen);
    append_choice_table(w, p.nx, p.ny, p.nz, p.options.anchor_stride, p.along, pl.transforms);
  }
  return std::move(w.bytes());
}

/// The predictor byte and what follows it: predictor 1 alone (no choices), or predictor 2
/// and its choice table.
Status parse_predictor3d(std::span<const uint8_t> rest, const Header& h, std::vector<uint8_t>& along,
                         std::vector<uint8_t>& transforms) {
  along.clear();
  transforms.clear();
  if (rest.empty()) return corrupt_stream("meta section of a 3D vector stream has no predictor byte");
  if (rest[0] == kPredictor3DCubic) {
    if (rest.size() != 1) return corrupt_stream("meta section of a 3D vector stream (predictor 1) is too long");
    return Status::Ok();
  }
  if (rest[0] != kPredictor3DChosen)
    return corrupt_stream("meta section: unknown 3D predictor " + std::to_string(int(rest[0])));
  return parse_choice_table(rest.subspan(1), int64_t(h.nx), int64_t(h.ny), int64_t(h.nz), int64_t(h.anchor_stride),
                            along, transforms);
}

/// The meta section of a float64 3D speculative stream: parse_meta_section's 13 bytes (the
/// f64 bound, checked against the header's), then the predictor.
Status check_meta_section3d64(std::span<const uint8_t> meta, const Header& h, double& eb, std::vector<uint8_t>& along,
                              std::vector<uint8_t>& transforms) {
  if (meta.size() < 14) return corrupt_stream("meta section of a float64 3D vector stream holds at least 14 bytes");
  FACTZ_RETURN_IF_ERROR(parse_meta_section(meta.first(13), h, eb));
  return parse_predictor3d(meta.subspan(13), h, along, transforms);
}

Status check_meta_section3d(std::span<const uint8_t> meta, const Header& h, std::vector<uint8_t>& along,
                            std::vector<uint8_t>& transforms) {
  ByteReader r(meta);
  uint8_t max_id = 0;
  uint32_t radius = 0;
  if (meta.size() < 6 || !r.u8(max_id) || !r.u32(radius))
    return corrupt_stream("meta section of a 3D vector stream is malformed (it holds at least 6 bytes)");
  if (max_id != kMaxBoundId || radius != uint32_t(kRadius))
    return corrupt_stream("meta section: bound-id range or radius is not that of format version 8");
  return parse_predictor3d(meta.subspan(5), h, along, transforms);
}

/// Undoes the code transforms of a stream (parse_speculative3d's last step): a walk of the
/// ids over the schedule (missing targets have none) finds each transformed phase's coded
/// targets, whose three components are then undone (side by side on a large phase).
Status untransform_codes3d(const Header& h, const uint8_t* missing, std::span<const uint16_t> ids,
                           std::span<const uint8_t> transforms, std::vector<uint16_t> (&codes)[3], int threads) {
  if (!any_choice({}, transforms)) return Status::Ok();
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), nz = int64_t(h.nz);
  PhaseSchedule3D schedule(nx, ny, nz, int64_t(h.anchor_stride));
  std::vector<int64_t> at;  // the phase's coded targets: lattice positions
  CodeLattice lattices[3];
  size_t d = 0, c = 0;
  int64_t index = 0;
  for (ScheduledPhase3D ph; schedule.next(ph); ++index) {
    const PhaseLattice3D& L = ph.lattice;
    const uint8_t* tr = &transforms[size_t(3 * index)];
    const bool any = tr[0] || tr[1] || tr[2];
    const size_t first = c;
    at.clear();
    const int64_t count = L.count();
    if (!missing && d + size_t(count) > ids.size()) return corrupt_stream("the bound ids run short of the grid");
    for (int64_t t = 0; t < count; ++t) {
      if (missing) {
        if (missing[lattice_vertex3d(L, nx, ny, t)]) continue;
        if (d >= ids.size()) return corrupt_stream("the bound ids run short of the grid");
      }
      const uint16_t id = ids[d++];
      if (id >= 1 && id <= kMaxBoundId) {
        if (any) at.push_back(t);
        ++c;
      }
    }
    if (c > codes[0].size()) return corrupt_stream("the codes run short of the bound ids");
    if (!any || at.empty()) continue;
    const int64_t cells[3] = {L.count_x, L.count_y, L.count_z};
    for_each_component(cells, CodeLattice::padded_positions(cells, at), threads, lattices,
                       [&](int k, CodeLattice& lattice) {
                         lattice.undo(tr[k], std::span<uint16_t>(codes[k]).subspan(first, at.size()));
                       });
  }
  return Status::Ok();
}

/// Targets of a grid (vertices minus anchors).
uint64_t target_count(const Header& h) {
  const uint64_t s0 = h.anchor_stride;
  return h.nx * h.ny * h.nz - ((h.nx - 1) / s0 + 1) * ((h.ny - 1) / s0 + 1) * ((h.nz - 1) / s0 + 1);
}

}  // namespace

Status check_vector3d_options(int64_t nx, int64_t ny, int64_t nz, const Options& o) {
  if (nx <= 0 || ny <= 0 || nz <= 0) return invalid_argument("field dimensions must be positive");
  if (uint64_t(nx) > kMaxElements / uint64_t(ny) || uint64_t(nx * ny) > kMaxElements / uint64_t(nz))
    return invalid_argument("field has too many values");
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("the error bound must be finite and >= 0");
  if (o.mode != Mode::none && o.mode != Mode::block && o.mode != Mode::speculative)
    return invalid_argument("unknown mode");
  if (o.coder == Coder::smallest || o.coder == Coder::context)
    return invalid_argument(std::string("coder '") + coder_name(o.coder) +
                            "' applies to scalar fields only; choose ans or huffman");
  if (o.coder != Coder::huffman && o.coder != Coder::ans) return invalid_argument("unknown coder");
  if (o.bound_mode != BoundMode::abs && o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  if (o.exact_edges > 63)
    return invalid_argument("exact_edges of a 3D field takes the face bits 1, 2, 4, 8, 16 and 32, got " +
                            std::to_string(o.exact_edges));
  FACTZ_RETURN_IF_ERROR(
      check_source_bytes(o.source, 3, record_grid(uint64_t(nx), uint64_t(ny), uint64_t(nz), 3), "Options::source"));
  if (o.mode == Mode::speculative && !valid_anchor_stride(o.anchor_stride))
    return invalid_argument("anchor stride must be a power of two in [2, 4096], got " +
                            std::to_string(o.anchor_stride));
  return Status::Ok();
}

Result<std::vector<uint8_t>> assemble_speculative3d(const Stream3DPlan& p, Speculative3DPayload& pl,
                                                    std::vector<Section> mask) {
  const auto coder = EntropyCoder(p.options.coder);
  std::vector<Section> sections;
  sections.push_back({kSectionMeta, meta_section3d(p, pl)});
  // The three codes sections (segmented by phase, format version 10) and the ids, side by side.
  std::vector<uint8_t> coded[3], ids;
  const CodingJob jobs[4] = {
      [&](int t) { return encode_segmented(coder, pl.codes[0], pl.phase_codes, t, coded[0]); },
      [&](int t) { return encode_segmented(coder, pl.codes[1], pl.phase_codes, t, coded[1]); },
      [&](int t) { return encode_segmented(coder, pl.codes[2], pl.phase_codes, t, coded[2]); },
      [&](int t) { return entropy_encode(coder, pl.ids, 0, ids, t, /*escapes=*/true); }};
  FACTZ_RETURN_IF_ERROR(run_side_by_side(p.threads, jobs));
  for (int c = 0; c < 3; ++c) sections.push_back({kCodeSections[c], std::move(coded[c])});
  sections.push_back({kSectionExactValues, std::move(pl.exact)});
  sections.push_back({kSectionBoundIdsU, std::move(ids)});
  const bool masked = !mask.empty();
  for (Section& m : mask) sections.push_back(std::move(m));
  const Options& o = p.options;
  append_source_section(o, sections);  // the container becomes version 19
  offer_zstd(sections, o.zstd);
  Header h = stream_header(uint64_t(p.nx), uint64_t(p.ny), uint64_t(p.nz), o.bound_mode, o.bound, p.eb);
  // 8 (codes_w) with segmented codes; 12 with the mask (segmented as well); 13 when float64
  h.dtype = p.dtype;
  h.version = p.dtype == kDtypeFloat64 ? kFormatVersionFloat64Vector3D
                                       : (masked ? kFormatVersionMasked3D : kFormatVersionSegmented3D);
  h.components = 3;
  h.ndims = 3;
  h.mode = uint8_t(Mode::speculative);
  h.coder = uint8_t(o.coder);
  h.tile = uint16_t(kTile);  // unused in 3D; the value every vector stream carries
  h.anchor_stride = uint16_t(o.anchor_stride);
  return write_stream(h, std::move(sections));
}

Result<ParsedContainer> parse_vector3d_stream(std::span<const uint8_t> stream) {
  auto parsed = parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  const auto& h = parsed.value().header;
  if (h.components != 3 || h.ndims != 3) {
    const std::string what = h.components == 1 ? "a scalar field (factz::decompress_scalar)"
                                                : "a 2D vector field (factz::decompress)";
    return Status(Code::unsupported_version, "stream is not a 3D vector field: it holds " + what);
  }
  if (h.mode != kModeNone && h.mode != kModeBlock && h.mode != kModeSpeculative)
    return Status(Code::unsupported_version,
                  "3D vector stream of mode " + std::to_string(h.mode) + ": this build decodes modes none, block and "
                  "speculative");
  if (!(h.eb >= 0.0f) || !(h.eb <= kMaxEb)) return corrupt_stream("absolute bound out of range");
  const bool tiled = h.mode != kModeSpeculative;
  // Version 12 holds the mask; version 13 (float64) when it has the section.
  const bool masked =
      h.version == kFormatVersionMasked3D ||
      (h.version == kFormatVersionFloat64Vector3D && has_section(parsed.value(), kSectionMaskAndValues));
  std::vector<uint32_t> sections = {kSectionMeta, kSectionCodesU, kSectionCodesV, kSectionCodesW, kSectionExactValues};
  if (masked) sections.push_back(kSectionMaskAndValues);
  if (tiled) {
    if (h.tile != kTile3D) return corrupt_stream("unsupported 3D tile size " + std::to_string(h.tile));
    if (h.anchor_stride != 0) return corrupt_stream("anchor stride in a 3D stream of mode none or block");
    sections.insert(sections.end(), {kSectionExactIndex, kSectionOutliers});
    if (h.mode == kModeBlock) sections.push_back(kSectionTileBounds);
  } else {
    if (h.tile != kTile) return corrupt_stream("unsupported tile size " + std::to_string(h.tile));
    if (!valid_anchor_stride(int64_t(h.anchor_stride)))
      return corrupt_stream("anchor stride " + std::to_string(h.anchor_stride) + " is not a power of two in [2, 4096]");
    sections.push_back(kSectionBoundIdsU);
  }
  for (uint32_t id : sections)
    if (!has_section(parsed.value(), id)) return corrupt_stream("missing section " + section_name(id));
  // A source record (version 19, which the container checks) is optional, and must describe
  // this grid.
  if (has_section(parsed.value(), kSectionSource)) {
    sections.push_back(kSectionSource);
    FACTZ_RETURN_IF_ERROR(check_source_section(stream, parsed.value()));
  }
  // Any other section (a mask outside version 12, the two-section mask of 2D tiled streams,
  // another mode's sections) is not part of a 3D vector stream of this mode.
  for (const auto& e : parsed->entries)
    if (std::find(sections.begin(), sections.end(), e.id) == sections.end())
      return corrupt_stream("section " + section_name(e.id) + " in a 3D vector stream of mode " +
                            mode_name(Mode(h.mode)));
  // The per-vertex stream (the bound ids, or in a tiled stream the u codes) records its own
  // symbol count: it must match the grid before anything is allocated for the grid (a forged
  // header cannot make us allocate). A masked stream has no id or code for a missing vertex:
  // fewer here, and exactly the valid ones once the mask is read (read_mask3d's callers).
  // With the mask's recorded count (read without the bitmap): a tiled stream holds exactly
  // one code per valid vertex, a speculative one between the targets less the missing
  // vertices and the targets.
  const uint32_t per_vertex = tiled ? kSectionCodesU : kSectionBoundIdsU;
  uint64_t expected = tiled ? h.nx * h.ny * h.nz : target_count(h), least = expected;
  if (masked) {
    auto missing = recorded_missing_count(stream, parsed.value(), h.nx * h.ny * h.nz);
    if (!missing.ok()) return missing.status();
    least = expected - std::min(expected, missing.value());
    if (tiled) expected = least;
  }
  for (const auto& e : parsed->entries) {
    if (e.id != per_vertex) continue;
    auto count = peek_symbol_count(stream, e, h.coder);
    if (!count.ok()) return count.status();
    if (count.value() > expected || count.value() < least)
      return corrupt_stream("grid " + std::to_string(h.nx) + "x" + std::to_string(h.ny) + "x" + std::to_string(h.nz) +
                            (masked ? " with its mask's missing vertices" : "") + " needs " +
                            (least == expected ? std::to_string(expected)
                                               : std::to_string(least) + " to " + std::to_string(expected)) +
                            (tiled ? " codes" : " bound ids") + ", the stream holds " + std::to_string(count.value()));
  }
  return parsed;
}

namespace {

/// Whether a stream accepted by parse_vector3d_stream holds missing vertices.
bool masked3d(const ParsedContainer& pc) {
  return pc.header.version == kFormatVersionMasked3D ||
         (pc.header.version == kFormatVersionFloat64Vector3D && has_section(pc, kSectionMaskAndValues));
}

/// The value type of a decoder's planes must be the stream's (invalid_argument otherwise: a
/// float decoder would round a float64 stream's values, a double one is the wrong API).
template <class T>
Status require_value_type3d(const Header& h) {
  const bool f64 = h.dtype == kDtypeFloat64;
  if (f64 == (sizeof(T) == 8)) return Status::Ok();
  return invalid_argument(f64 ? "the stream holds a float64 3D vector field: decode it with factz::decompress3d64"
                              : "the stream holds a float32 3D vector field: decode it with factz::decompress3d");
}

/// Reads one exact value (f32, or f64 in a float64 stream).
bool get_exact(ByteReader& r, float& x) { return r.f32(x); }
bool get_exact(ByteReader& r, double& x) { return r.f64(x); }

template <class T>
Status apply_mask3d_any(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<T> u, std::span<T> v,
                        std::span<T> w, std::vector<uint8_t>& mask) {
  if (!masked3d(pc)) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(require_value_type3d<T>(pc.header));
  const auto& h = pc.header;
  return apply_mask_section3d(stream, pc, int64_t(h.nx), int64_t(h.ny * h.nz), u, v, w, mask);
}

/// The meta section of a 3D speculative stream, checked: the bound the decoder uses (a
/// float64 stream's f64 one, else the header's), the predictor byte and its choices.
Status read_meta3d(std::span<const uint8_t> stream, const ParsedContainer& pc, double& eb, uint8_t& predictor,
                   std::vector<uint8_t>& along, std::vector<uint8_t>& transforms) {
  const Header& h = pc.header;
  auto meta = read_section(stream, pc, kSectionMeta, &zstd_stage_decompressor());
  if (!meta.ok()) return meta.status();
  const bool f64 = h.dtype == kDtypeFloat64;
  eb = h.eb;
  FACTZ_RETURN_IF_ERROR(f64 ? check_meta_section3d64(meta.value(), h, eb, along, transforms)
                            : check_meta_section3d(meta.value(), h, along, transforms));
  predictor = meta.value()[f64 ? 13 : 5];  // checked above: 1 or 2
  return Status::Ok();
}

template <class T>
Status parse_speculative3d_any(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                               Speculative3DInputOf<T>& out, const uint8_t* missing) {
  const auto& h = pc.header;
  FACTZ_RETURN_IF_ERROR(require_value_type3d<T>(h));
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, &zstd_stage_decompressor()); };
  std::vector<uint8_t> transforms;
  {
    double eb = 0;
    uint8_t predictor = 0;
    FACTZ_RETURN_IF_ERROR(read_meta3d(stream, pc, eb, predictor, out.along, transforms));
    out.eb = T(eb);  // exact: the header's f32 bound, or the stream's f64 one
  }
  const auto coder = EntropyCoder(h.coder);
  const uint64_t s0 = h.anchor_stride;
  int64_t anchors = int64_t(((h.nx - 1) / s0 + 1) * ((h.ny - 1) / s0 + 1) * ((h.nz - 1) / s0 + 1));
  // A missing vertex has no id (a target) and no exact value (an anchor).
  uint64_t ids = target_count(h);
  if (missing) {
    const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), nz = int64_t(h.nz);
    const PhaseLattice3D A = anchor_lattice3d(nx, ny, nz, int64_t(s0));
    int64_t missing_anchors = 0, all = 0;
    for (int64_t a = 0; a < A.count(); ++a) missing_anchors += missing[lattice_vertex3d(A, nx, ny, a)] != 0;
    for (int64_t k = 0; k < nx * ny * nz; ++k) all += missing[k] != 0;
    anchors -= missing_anchors;
    ids -= uint64_t(all - missing_anchors);
  }
  {
    auto hid = section(kSectionBoundIdsU);
    if (!hid.ok()) return hid.status();
    auto count = coded_symbol_count(coder, hid.value());
    if (!count.ok()) return count.status();
    if (count.value() != ids)
      return corrupt_stream("bound_ids_u holds " + std::to_string(count.value()) + " ids, the valid targets are " +
                            std::to_string(ids));
    resize_fresh(out.ids, size_t(ids));
    FACTZ_RETURN_IF_ERROR(entropy_decode(coder, hid.value(), 0, out.ids, threads));
  }
  int64_t n_codes = 0, n_exact = anchors;
  for (uint16_t id : out.ids) {
    if (id > kMaxBoundId && id != kZeroVectorId) return corrupt_stream("bound id out of range");
    n_codes += id >= 1 && id <= kMaxBoundId;
    n_exact += id == 0;
  }
  for (int c = 0; c < 3; ++c) {
    auto coded = section(kCodeSections[c]);
    if (!coded.ok()) return coded.status();
    if (h.version >= kFormatVersionSegmented3D) {  // 10, 12, 13; parse_segmented checks the counts first
      resize_fresh(out.codes[c], size_t(n_codes));
      FACTZ_RETURN_IF_ERROR(decode_segmented(coder, coded.value(), kAnsCodeCenter, out.codes[c], threads));
      continue;
    }
    auto count = coded_symbol_count(coder, coded.value());
    if (!count.ok()) return count.status();
    if (count.value() != uint64_t(n_codes))
      return corrupt_stream(section_name(kCodeSections[c]) + " holds " + std::to_string(count.value()) +
                            " codes, the bound ids need " + std::to_string(n_codes));
    resize_fresh(out.codes[c], size_t(n_codes));
    FACTZ_RETURN_IF_ERROR(entropy_decode(coder, coded.value(), kAnsCodeCenter, out.codes[c], threads));
  }
  FACTZ_RETURN_IF_ERROR(untransform_codes3d(h, missing, out.ids, transforms, out.codes, threads));
  auto ex = section(kSectionExactValues);
  if (!ex.ok()) return ex.status();
  if (uint64_t(ex->size()) != uint64_t(n_exact) * 3 * sizeof(T))
    return corrupt_stream("exact value count does not match the bound ids (" + std::to_string(ex->size()) +
                          " bytes for " + std::to_string(n_exact) + " vertices)");
  out.exact.resize(size_t(3 * n_exact));
  ByteReader r(ex.value());
  for (T& x : out.exact) {
    if (!get_exact(r, x)) return corrupt_stream("exact values truncated");
    if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
  }
  return Status::Ok();
}

}  // namespace

Status read_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::vector<uint8_t>& mask) {
  mask.clear();
  if (!masked3d(pc)) return Status::Ok();
  const auto& h = pc.header;
  return read_mask(stream, pc, int64_t(h.nx), int64_t(h.ny * h.nz), mask);
}

Status apply_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<float> u,
                    std::span<float> v, std::span<float> w, std::vector<uint8_t>& mask) {
  return apply_mask3d_any(stream, pc, u, v, w, mask);
}
Status apply_mask3d(std::span<const uint8_t> stream, const ParsedContainer& pc, std::span<double> u,
                    std::span<double> v, std::span<double> w, std::vector<uint8_t>& mask) {
  return apply_mask3d_any(stream, pc, u, v, w, mask);
}

Status parse_speculative3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                           Speculative3DInput& out, const uint8_t* missing) {
  return parse_speculative3d_any(stream, pc, threads, out, missing);
}
Status parse_speculative3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                           Speculative3DInput64& out, const uint8_t* missing) {
  return parse_speculative3d_any(stream, pc, threads, out, missing);
}

Result<Speculative3DChoices> speculative3d_choices(std::span<const uint8_t> stream, const ParsedContainer& pc) {
  const Header& h = pc.header;
  if (h.components != 3 || h.ndims != 3 || h.mode != kModeSpeculative)
    return invalid_argument("not a 3D speculative stream");
  Speculative3DChoices c;
  double eb = 0;
  FACTZ_RETURN_IF_ERROR(read_meta3d(stream, pc, eb, c.predictor, c.along, c.transforms));
  return c;
}

// ---- The 3D tiled modes (none and block) --------------------------------------------------

namespace {

constexpr const char* kPlaneNames[3] = {"u", "v", "w"};

/// "Three planes" sections: concat_lists(u, concat_lists(v, w)), i.e.
/// varint(size of u's part) | u | varint(size of v's part) | v | w.
std::vector<uint8_t> concat_lists3(const std::vector<uint8_t> (&lists)[3]) {
  return concat_lists(lists[0], concat_lists(lists[1], lists[2]));
}

Status split_lists3(std::span<const uint8_t> in, std::span<const uint8_t> (&out)[3], const char* what) {
  std::span<const uint8_t> rest;
  FACTZ_RETURN_IF_ERROR(split_lists(in, out[0], rest, what));
  return split_lists(rest, out[1], out[2], what);
}

}  // namespace

Result<std::vector<uint8_t>> assemble_tiled3d(const Stream3DPlan& p, Tiled3DPayload& pl, std::vector<Section> mask) {
  const Options& o = p.options;
  const auto coder = EntropyCoder(o.coder);
  std::vector<Section> sections;
  {
    ByteWriter w;  // the 2D tiled meta section: bound-id range and radius (5 bytes), the f64 bound when float64
    w.u8(uint8_t(kMaxBoundId));
    w.u32(uint32_t(kRadius));
    if (p.dtype == kDtypeFloat64) w.f64(p.eb64);
    sections.push_back({kSectionMeta, std::move(w.bytes())});
  }
  if (o.mode == Mode::block) sections.push_back({kSectionTileBounds, std::move(pl.tile_ids)});
  std::vector<uint8_t> coded[3];  // side by side
  const CodingJob jobs[3] = {
      [&](int t) { return entropy_encode(coder, pl.symbols[0], kAnsCodeCenter, coded[0], t); },
      [&](int t) { return entropy_encode(coder, pl.symbols[1], kAnsCodeCenter, coded[1], t); },
      [&](int t) { return entropy_encode(coder, pl.symbols[2], kAnsCodeCenter, coded[2], t); }};
  FACTZ_RETURN_IF_ERROR(run_side_by_side(p.threads, jobs));
  for (int c = 0; c < 3; ++c) sections.push_back({kCodeSections[c], std::move(coded[c])});
  sections.push_back({kSectionExactIndex, concat_lists3(pl.exact_index)});
  sections.push_back({kSectionExactValues, concat_lists3(pl.exact_values)});
  sections.push_back({kSectionOutliers, concat_lists3(pl.outliers)});
  for (Section& m : mask) sections.push_back(std::move(m));
  append_source_section(o, sections);  // the container becomes version 19
  offer_zstd(sections, o.zstd);
  Header h = stream_header(uint64_t(p.nx), uint64_t(p.ny), uint64_t(p.nz), o.bound_mode, o.bound, p.eb);
  std::vector<uint32_t> section_ids;
  for (const auto& s : sections) section_ids.push_back(s.id);
  h.dtype = p.dtype;
  h.version = stream_version(section_ids, false, p.dtype);  // 8: codes_w; 12 with mask_and_values; 13 when float64
  h.components = 3;
  h.ndims = 3;
  h.mode = uint8_t(o.mode);
  h.coder = uint8_t(o.coder);
  h.tile = uint16_t(kTile3D);
  h.anchor_stride = 0;
  return write_stream(h, std::move(sections));
}

namespace {

template <class T>
Status parse_tiled3d_any(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads,
                         Tiled3DInputOf<T>& out, const uint8_t* missing) {
  const auto& h = pc.header;
  FACTZ_RETURN_IF_ERROR(require_value_type3d<T>(h));
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, &zstd_stage_decompressor()); };
  {
    auto meta = section(kSectionMeta);
    if (!meta.ok()) return meta.status();
    if constexpr (sizeof(T) == 8) {
      FACTZ_RETURN_IF_ERROR(parse_meta_section(meta.value(), h, out.eb));  // 13 bytes: the f64 bound
    } else {
      FACTZ_RETURN_IF_ERROR(check_meta_section(meta.value()));
      out.eb = h.eb;
    }
  }
  const uint64_t n = h.nx * h.ny * h.nz;
  const TileLayout3D L(int64_t(h.nx), int64_t(h.ny), int64_t(h.nz));
  const size_t ntiles = size_t(L.tile_count());
  FACTZ_RETURN_IF_ERROR(
      read_tile_ids(stream, pc, &zstd_stage_decompressor(), h.mode, 3, ntiles, out.eb > T(0), out.tile_ids));
  auto ex_idx = section(kSectionExactIndex);
  if (!ex_idx.ok()) return ex_idx.status();
  auto ex_val = section(kSectionExactValues);
  if (!ex_val.ok()) return ex_val.status();
  auto outl = section(kSectionOutliers);
  if (!outl.ok()) return outl.status();
  std::span<const uint8_t> idx[3], val[3], ol[3];
  FACTZ_RETURN_IF_ERROR(split_lists3(ex_idx.value(), idx, "exact_index"));
  FACTZ_RETURN_IF_ERROR(split_lists3(ex_val.value(), val, "exact_values"));
  FACTZ_RETURN_IF_ERROR(split_lists3(outl.value(), ol, "outliers"));
  const auto coder = EntropyCoder(h.coder);
  for (int c = 0; c < 3; ++c) {
    auto coded = section(kCodeSections[c]);
    if (!coded.ok()) return coded.status();
    auto count = coded_symbol_count(coder, coded.value());
    if (!count.ok()) return count.status();
    if (missing) {  // the valid vertices' symbols; a missing vertex's is implied (kernels/tiles.hpp tiled_symbol)
      if (count.value() > n) return corrupt_stream(section_name(kCodeSections[c]) + " holds more codes than vertices");
      resize_fresh(out.symbols[c], size_t(n));
      FACTZ_RETURN_IF_ERROR(entropy_decode(coder, coded.value(), kAnsCodeCenter,
                                           std::span<uint16_t>(out.symbols[c]).first(size_t(count.value())), threads));
      FACTZ_RETURN_IF_ERROR(parse_outliers(ol[c], n, {}, out.outlier_index[c], out.outlier_code[c]));
      FACTZ_RETURN_IF_ERROR(spread_valid_symbols(out.symbols[c], count.value(), missing, out.outlier_index[c]));
      FACTZ_RETURN_IF_ERROR(check_outlier_escapes(out.symbols[c], out.outlier_index[c]));
    } else {
      if (count.value() != n)
        return corrupt_stream(section_name(kCodeSections[c]) + " holds " + std::to_string(count.value()) +
                              " codes for " + std::to_string(n) + " vertices");
      resize_fresh(out.symbols[c], size_t(n));
      FACTZ_RETURN_IF_ERROR(entropy_decode(coder, coded.value(), kAnsCodeCenter, out.symbols[c], threads));
      FACTZ_RETURN_IF_ERROR(parse_outliers(ol[c], n, out.symbols[c], out.outlier_index[c], out.outlier_code[c]));
    }
    Status st = parse_exact(idx[c], val[c], n, out.exact_index[c], out.exact_value[c]);
    if (!st.ok()) return corrupt_stream(std::string(kPlaneNames[c]) + " plane: " + st.message());
  }
  return Status::Ok();
}

}  // namespace

Status parse_tiled3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, Tiled3DInput& out,
                     const uint8_t* missing) {
  return parse_tiled3d_any(stream, pc, threads, out, missing);
}
Status parse_tiled3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int threads, Tiled3DInput64& out,
                     const uint8_t* missing) {
  return parse_tiled3d_any(stream, pc, threads, out, missing);
}

}  // namespace factz::detail
