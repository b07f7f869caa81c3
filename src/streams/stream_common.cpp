#include "streams/stream_common.hpp"

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <new>

#include "codec/coder.hpp"
#include "codec/zstd_stage.hpp"

namespace factz::detail {

Status run_side_by_side(int threads, std::span<const CodingJob> jobs) {
  const int n = int(jobs.size());
  const int outer = std::clamp(threads, 1, std::max(n, 1)), inner = std::max(threads / outer, 1);
  std::vector<Status> status(jobs.size(), Status::Ok());
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer) if (outer > 1)
  for (int j = 0; j < n; ++j) {
    try {  // no exception may leave an OpenMP region
      status[size_t(j)] = jobs[size_t(j)](inner);
    } catch (const std::bad_alloc&) {
      status[size_t(j)] = Status(Code::internal, "out of memory coding a section");
    }
  }
  for (const Status& s : status) FACTZ_RETURN_IF_ERROR(s);
  return Status::Ok();
}

float float_bound(double eb) {
  if (!(eb > 0.0)) return 0.0f;
  if (eb >= double(kMaxEb)) return kMaxEb;
  float f = float(eb);
  if (double(f) > eb) f = std::nextafter(f, 0.0f);
  return f;
}

Header stream_header(uint64_t nx, uint64_t ny, uint64_t nz, BoundMode bound_mode, double bound_value, float eb) {
  Header h;
  h.nx = nx;
  h.ny = ny;
  h.nz = nz;
  h.bound_mode = uint8_t(bound_mode);
  h.bound_value = bound_value;
  h.eb = eb;
  return h;
}

void offer_zstd(std::vector<Section>& sections, bool on) {
  for (auto& s : sections) s.zstd = s.zstd || (on && s.id != kSectionMeta);
}

namespace {

/// The zstd stage at kZstdLevel.
const Compressor& zstd_stage_compressor() {
  static const Compressor zstd = [](std::span<const uint8_t> in, std::vector<uint8_t>& out) {
    return zstd_compress(in, kZstdLevel, out);
  };
  return zstd;
}

}  // namespace

Result<std::vector<uint8_t>> write_stream(const Header& header, std::vector<Section> sections) {
  // The exact values hold the data type's values one after the other: their bytes also go
  // to the zstd stage shuffled (format version 23 where that is smaller).
  for (auto& s : sections)
    if (s.zstd && s.id == kSectionExactValues) s.shuffle = value_bytes(header.dtype);
  return write_container(header, std::move(sections), &zstd_stage_compressor());
}

Result<size_t> stored_values_size(std::span<const uint8_t> raw, bool zstd, uint8_t dtype) {
  if (!zstd || raw.empty()) return raw.size();
  std::vector<uint8_t> frame;
  uint32_t flags = 0;
  FACTZ_RETURN_IF_ERROR(zstd_stage_section(raw, value_bytes(dtype), zstd_stage_compressor(), frame, flags));
  return flags != 0 ? frame.size() : raw.size();
}

Result<std::vector<uint8_t>> section_head(std::span<const uint8_t> stream, const ParsedContainer::Entry& e,
                                          size_t count) {
  const auto stored = stream.subspan(size_t(e.offset), size_t(e.stored_size));
  std::vector<uint8_t> head(stored.begin(), stored.begin() + std::min<size_t>(stored.size(), count));
  if (e.flags & kSectionFlagZstd) FACTZ_RETURN_IF_ERROR(zstd_peek(stored, count, head));
  return head;
}

Result<uint64_t> peek_symbol_count(std::span<const uint8_t> stream, const ParsedContainer::Entry& e, uint8_t coder) {
  auto head = section_head(stream, e, kCoderHeaderBytes);
  if (!head.ok()) return head.status();
  return coded_symbol_count(EntropyCoder(coder), head.value());
}

const Decompressor& zstd_stage_decompressor() {
  static const Decompressor unzstd = [](std::span<const uint8_t> in, uint64_t raw, std::vector<uint8_t>& out) {
    return zstd_decompress(in, raw, out);
  };
  return unzstd;
}

Status out_of_memory_decoding(std::span<const uint8_t> stream, const std::string& where) {
  const std::string what = "out of memory decompressing";
  auto pc = parse_container(stream);
  if (!pc.ok()) return Status(Code::internal, what + where);
  const Header& h = pc->header;
  const uint64_t planes = h.components, bytes = h.dtype == kDtypeFloat64 ? 8 : 4;
  const double need = double(h.nx) * double(h.ny) * double(h.nz) * double(planes * bytes);
  char size[32];
  if (need >= 1e9) std::snprintf(size, sizeof size, "%.3g GB", need / 1e9);
  else std::snprintf(size, sizeof size, "%.3g MB", need / 1e6);
  const std::string grid = std::to_string(h.nx) + " x " + std::to_string(h.ny) +
                           (h.ndims == 3 ? " x " + std::to_string(h.nz) : std::string());
  const char* kind = h.components == 1 ? "scalar field" : h.components == 2 ? "2D vector field" : "3D vector field";
  return Status(Code::internal, what + " a " + grid + (bytes == 8 ? " float64 " : " float32 ") + kind + where + ": its output " +
                                    (planes == 1 ? "plane alone needs " : "planes alone need ") + size);
}

}  // namespace factz::detail
