#include "backend/cuda/host_stream.hpp"
#include "backend/cuda/section_crc.hpp"

#include <omp.h>

#include <cmath>

#include "codec/coder.hpp"
#include "codec/zstd_stage.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/speculation.hpp"
#include "modes/speculative_mode.hpp"
#include "modes/tiled_quantizer.hpp"
#include "util/byte_io.hpp"

namespace factz::cuda_detail {
namespace {

constexpr int kZstdLevel = 3;          // api/compress.cpp
constexpr float kMaxEb = 0x1p126f;     // api/compress.cpp

/// api/compress.cpp's float_bound: the largest float not above the requested bound.
float float_bound(double eb) {
  if (!(eb > 0.0)) return 0.0f;
  if (eb >= double(kMaxEb)) return kMaxEb;
  float f = float(eb);
  if (double(f) > eb) f = std::nextafter(f, 0.0f);
  return f;
}

std::vector<uint8_t> meta_section() {
  detail::ByteWriter w;
  w.u8(uint8_t(detail::kMaxBoundId));
  w.u32(uint32_t(detail::kRadius));
  return std::move(w.bytes());
}

Result<std::vector<uint8_t>> finish(const Plan& p, std::vector<detail::Section> sections) {
  const Options& o = p.options;
  for (auto& sec : sections) sec.zstd = o.zstd && sec.id != detail::kSectionMeta;
  detail::Header h;
  h.components = 2;
  h.mode = uint8_t(o.mode);
  h.coder = uint8_t(o.coder);
  h.nx = uint64_t(p.nx);
  h.ny = uint64_t(p.ny);
  h.bound_mode = uint8_t(o.bound_mode);
  h.bound_value = o.bound;
  h.eb = p.eb;
  h.tile = uint16_t(detail::kTile);
  h.anchor_stride = uint16_t(o.mode == Mode::speculative ? o.anchor_stride : 0);
  h.flags = o.zstd ? 1 : 0;
  const detail::Compressor zstd = [](std::span<const uint8_t> in, std::vector<uint8_t>& out) {
    return detail::zstd_compress(in, kZstdLevel, out);
  };
  return detail::write_container(h, std::move(sections), o.zstd ? &zstd : nullptr);
}

}  // namespace

int host_threads() { return omp_get_max_threads(); }

Status check_options(int64_t nx, int64_t ny, const Options& o) {
  if (nx <= 0 || ny <= 0) return invalid_argument("field dimensions must be positive");
  if (uint64_t(nx) * uint64_t(ny) > detail::kMaxElements) return invalid_argument("field has too many values");
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("the error bound must be finite and >= 0");
  if (o.mode != Mode::none && o.mode != Mode::block && o.mode != Mode::speculative)
    return invalid_argument("unknown mode");
  if (o.coder != Coder::huffman && o.coder != Coder::ans) return invalid_argument("unknown coder");
  if (o.bound_mode != BoundMode::abs && o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  const int64_t s0 = o.anchor_stride;
  if (o.mode == Mode::speculative && (s0 < 2 || s0 > detail::kMaxAnchorStride || (s0 & (s0 - 1)) != 0))
    return invalid_argument("anchor stride must be a power of two in [2, 4096], got " + std::to_string(s0));
  if (o.exact_edges != 0)
    return Status(Code::backend_unavailable, "exact_edges is not supported by the CUDA backend yet");
  return Status::Ok();
}

Plan make_plan(int64_t nx, int64_t ny, const Options& o, double range) {
  Plan p;
  p.nx = nx;
  p.ny = ny;
  p.options = o;
  p.eb = float_bound(o.bound_mode == BoundMode::abs ? o.bound : o.bound * range);
  p.threads = host_threads();
  return p;
}

Result<std::vector<uint8_t>> assemble_tiled(const Plan& p, TiledPayload& pl) {
  const auto coder = detail::EntropyCoder(p.options.coder);
  std::vector<detail::Section> sections;
  sections.push_back({detail::kSectionMeta, meta_section()});
  if (p.options.mode == Mode::block) sections.push_back({detail::kSectionTileBounds, std::move(pl.tile_ids)});
  std::vector<uint8_t> cu, cv;
  if (pl.precoded) {
    cu = std::move(pl.coded[0]);
    cv = std::move(pl.coded[1]);
  } else {
    FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pl.symbols[0], detail::kAnsCodeCenter, cu, p.threads));
    FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pl.symbols[1], detail::kAnsCodeCenter, cv, p.threads));
  }
  sections.push_back({detail::kSectionCodesU, std::move(cu)});
  offer_section_crc(sections.back(), pl.coded_crc[0]);
  sections.push_back({detail::kSectionCodesV, std::move(cv)});
  offer_section_crc(sections.back(), pl.coded_crc[1]);
  sections.push_back({detail::kSectionExactIndex, detail::concat_lists(pl.exact_index[0], pl.exact_index[1])});
  sections.push_back({detail::kSectionExactValues, detail::concat_lists(pl.exact_values[0], pl.exact_values[1])});
  sections.push_back({detail::kSectionOutliers, detail::concat_lists(pl.outliers[0], pl.outliers[1])});
  return finish(p, std::move(sections));
}

Result<std::vector<uint8_t>> assemble_speculative(const Plan& p, SpeculativePayload& pl) {
  const auto coder = detail::EntropyCoder(p.options.coder);
  detail::ByteWriter meta;
  meta.u8(uint8_t(detail::kMaxBoundId));
  meta.u32(uint32_t(detail::kRadius));
  std::vector<uint8_t> hid, hu, hv;
  if (pl.precoded) {
    hid = std::move(pl.coded_ids);
    hu = std::move(pl.coded_u);
    hv = std::move(pl.coded_v);
  } else {
    FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pl.ids, 0, hid, p.threads));
    FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pl.codes_u, detail::kAnsCodeCenter, hu, p.threads));
    FACTZ_RETURN_IF_ERROR(detail::entropy_encode(coder, pl.codes_v, detail::kAnsCodeCenter, hv, p.threads));
  }
  std::vector<detail::Section> sections;
  sections.push_back({detail::kSectionMeta, std::move(meta.bytes())});
  sections.push_back({detail::kSectionCodesU, std::move(hu)});
  offer_section_crc(sections.back(), pl.coded_u_crc);
  sections.push_back({detail::kSectionCodesV, std::move(hv)});
  offer_section_crc(sections.back(), pl.coded_v_crc);
  sections.push_back({detail::kSectionExactValues, std::move(pl.exact)});
  sections.push_back({detail::kSectionBoundIdsU, std::move(hid)});
  offer_section_crc(sections.back(), pl.coded_ids_crc);
  return finish(p, std::move(sections));
}

Result<detail::ParsedContainer> parse_checked(std::span<const uint8_t> stream) {
  auto dims = stream_dims(stream);  // container, header and symbol-count checks
  if (!dims.ok()) return dims.status();
  return detail::parse_container(stream);
}

namespace {

const detail::Decompressor kUnzstd = [](std::span<const uint8_t> in, uint64_t raw, std::vector<uint8_t>& out) {
  return detail::zstd_decompress(in, raw, out);
};

Status check_meta(std::span<const uint8_t> stream, const detail::ParsedContainer& pc) {
  auto meta = detail::read_section(stream, pc, detail::kSectionMeta, &kUnzstd);
  if (!meta.ok()) return meta.status();
  return detail::check_meta_section(meta.value());
}

}  // namespace

Status parse_tiled(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, int threads,
                   TiledDecodeInput& out, bool leave_coded) {
  const auto& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), n = nx * ny;
  detail::TiledSections ts;
  FACTZ_RETURN_IF_ERROR(detail::read_tiled_sections(stream, pc, &kUnzstd, ts));
  out.tile_ids = std::move(ts.tile_ids);
  const uint32_t code_ids[2] = {detail::kSectionCodesU, detail::kSectionCodesV};
  for (int c = 0; c < 2; ++c) {
    auto codes = detail::read_section(stream, pc, code_ids[c], &kUnzstd);
    if (!codes.ok()) return codes.status();
    if (leave_coded) {
      out.device_coded = true;
      out.coded[c] = std::move(codes.value());
    } else {
      out.symbols[c].resize(size_t(n));
      FACTZ_RETURN_IF_ERROR(detail::entropy_decode(detail::EntropyCoder(h.coder), codes.value(),
                                                   detail::kAnsCodeCenter, out.symbols[c], threads));
    }
    FACTZ_RETURN_IF_ERROR(
        detail::parse_outliers(ts.outl[c], uint64_t(n), out.symbols[c], out.outlier_index[c], out.outlier_code[c]));
    FACTZ_RETURN_IF_ERROR(
        detail::parse_exact(ts.idx[c], ts.val[c], uint64_t(n), out.exact_index[c], out.exact_value[c]));
  }
  return Status::Ok();
}

Status parse_speculative_exact(std::span<const uint8_t> raw, int64_t n_exact, std::vector<float>& out) {
  if (uint64_t(raw.size()) != uint64_t(n_exact) * 8) return corrupt_stream("exact value count does not match the bound ids");
  out.resize(size_t(2 * n_exact));
  detail::ByteReader r(raw);
  for (float& x : out) {
    if (!r.f32(x)) return corrupt_stream("exact values truncated");
    if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
  }
  return Status::Ok();
}

Status parse_speculative(std::span<const uint8_t> stream, const detail::ParsedContainer& pc, int threads,
                         SpeculativeDecodeInput& out, bool leave_coded) {
  const auto& h = pc.header;
  const int64_t nx = int64_t(h.nx), ny = int64_t(h.ny), n = nx * ny;
  const int64_t s0 = h.anchor_stride;
  if (s0 < 2 || s0 > detail::kMaxAnchorStride || (s0 & (s0 - 1)) != 0)
    return corrupt_stream("anchor stride " + std::to_string(s0) + " is not a power of two in [2, 4096]");
  FACTZ_RETURN_IF_ERROR(check_meta(stream, pc));
  auto section = [&](uint32_t id) { return detail::read_section(stream, pc, id, &kUnzstd); };
  const auto coder = detail::EntropyCoder(h.coder);
  const detail::PhaseLattice A = detail::anchor_lattice(nx, ny, s0);
  auto hid = section(detail::kSectionBoundIdsU);
  if (!hid.ok()) return hid.status();
  auto su = section(detail::kSectionCodesU);
  if (!su.ok()) return su.status();
  auto sv = section(detail::kSectionCodesV);
  if (!sv.ok()) return sv.status();
  auto ex = section(detail::kSectionExactValues);
  if (!ex.ok()) return ex.status();
  if (leave_coded) {
    out.device_coded = true;
    out.coded_ids = std::move(hid.value());
    out.coded_u = std::move(su.value());
    out.coded_v = std::move(sv.value());
    out.exact_raw = std::move(ex.value());
    return Status::Ok();
  }
  out.ids.resize(size_t(n - A.count()));
  FACTZ_RETURN_IF_ERROR(detail::entropy_decode(coder, hid.value(), 0, out.ids, threads));
  int64_t n_codes = 0, n_exact = A.count();
  for (uint16_t id : out.ids) {
    if (id > detail::kMaxBoundId && id != detail::kZeroVectorId) return corrupt_stream("bound id out of range");
    n_codes += id >= 1 && id <= detail::kMaxBoundId;
    n_exact += id == 0;
  }
  out.codes_u.resize(size_t(n_codes));
  out.codes_v.resize(size_t(n_codes));
  FACTZ_RETURN_IF_ERROR(detail::entropy_decode(coder, su.value(), detail::kAnsCodeCenter, out.codes_u, threads));
  FACTZ_RETURN_IF_ERROR(detail::entropy_decode(coder, sv.value(), detail::kAnsCodeCenter, out.codes_v, threads));
  return parse_speculative_exact(ex.value(), n_exact, out.exact);
}

}  // namespace factz::cuda_detail
