#include "streams/tiled_lists.hpp"

#include <cmath>
#include <string>

#include "factz/factz.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tiles.hpp"
#include "streams/stream_common.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {

Status parse_outliers(std::span<const uint8_t> in, uint64_t n, std::span<const uint16_t> symbols,
                      std::vector<int64_t>& index, std::vector<int64_t>& code) {
  ByteReader r(in);
  uint64_t count;
  if (!r.varint(count) || count > n) return corrupt_stream("outlier list header is invalid");
  index.resize(size_t(count));
  code.resize(size_t(count));
  int64_t last = -1;
  for (uint64_t e = 0; e < count; ++e) {
    uint64_t gap;
    int64_t c;
    if (!r.varint(gap) || !r.zigzag(c)) return corrupt_stream("outlier list truncated");
    if (gap >= n || int64_t(gap) >= int64_t(n) - last - 1) return corrupt_stream("outlier index out of range");
    last += int64_t(gap) + 1;
    if (c < -(int64_t(1) << 40) || c > (int64_t(1) << 40)) return corrupt_stream("outlier code out of range");
    index[e] = last;
    code[e] = c;
  }
  if (!r.at_end()) return corrupt_stream("trailing bytes after outlier list");
  if (symbols.empty()) return Status::Ok();
  return check_outlier_escapes(symbols, index);
}

Status check_outlier_escapes(std::span<const uint16_t> symbols, std::span<const int64_t> outlier_index) {
  for (int64_t k : outlier_index)
    if (symbols[size_t(k)] != 0) return corrupt_stream("outlier at a vertex without escape symbol");
  int64_t escapes = 0;
  for (uint16_t s : symbols) escapes += s == 0;
  if (escapes != int64_t(outlier_index.size())) return corrupt_stream("escape symbols and outlier list disagree");
  return Status::Ok();
}

Status check_stored_symbols(uint64_t stored, uint64_t valid) {
  if (stored == valid) return Status::Ok();
  return corrupt_stream("the codes hold " + std::to_string(stored) + " symbols for " + std::to_string(valid) +
                        " valid vertices");
}

Status spread_valid_symbols(std::span<uint16_t> symbols, uint64_t stored, const uint8_t* missing,
                            std::span<const int64_t> outlier_index) {
  const int64_t n = int64_t(symbols.size());
  uint64_t valid = 0;
  for (int64_t k = 0; k < n; ++k) valid += missing[k] == 0;
  FACTZ_RETURN_IF_ERROR(check_stored_symbols(stored, valid));
  // Backwards, in place: the j-th stored symbol belongs at or after index j.
  uint64_t j = stored;
  auto oit = outlier_index.end();
  for (int64_t k = n - 1; k >= 0; --k) {
    if (!missing[k]) {
      symbols[size_t(k)] = symbols[size_t(--j)];
      continue;
    }
    while (oit != outlier_index.begin() && *(oit - 1) > k) --oit;
    const bool escaped = oit != outlier_index.begin() && *(oit - 1) == k;
    symbols[size_t(k)] = escaped ? uint16_t(0) : uint16_t(kRadius);
  }
  return Status::Ok();
}

namespace {

bool get_value(ByteReader& r, float& x) { return r.f32(x); }
bool get_value(ByteReader& r, double& x) { return r.f64(x); }

template <class T>
Status parse_exact_any(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                       std::vector<int64_t>& index, std::vector<T>& value) {
  ByteReader ri(exact_index), rv(exact_values);
  uint64_t count;
  if (!ri.varint(count) || count > n) return corrupt_stream("exact list header is invalid");
  if (rv.remaining() != count * sizeof(T)) return corrupt_stream("exact value count does not match its index");
  index.resize(size_t(count));
  value.resize(size_t(count));
  int64_t last = -1;
  for (uint64_t e = 0; e < count; ++e) {
    uint64_t gap;
    T x;
    if (!ri.varint(gap) || !get_value(rv, x)) return corrupt_stream("exact list truncated");
    if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
    if (gap >= n || int64_t(gap) >= int64_t(n) - last - 1) return corrupt_stream("exact index out of range");
    last += int64_t(gap) + 1;
    index[e] = last;
    value[e] = x;
  }
  if (!ri.at_end()) return corrupt_stream("trailing bytes after exact list");
  return Status::Ok();
}

}  // namespace

Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<float>& value) {
  return parse_exact_any(exact_index, exact_values, n, index, value);
}
Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<double>& value) {
  return parse_exact_any(exact_index, exact_values, n, index, value);
}

Status check_meta_section(std::span<const uint8_t> meta) {
  ByteReader r(meta);
  uint8_t max_id;
  uint32_t radius;
  if (!r.u8(max_id) || !r.u32(radius) || !r.at_end()) return corrupt_stream("meta section is malformed");
  if (max_id != kMaxBoundId || radius != uint32_t(kRadius))
    return corrupt_stream("meta section parameters are not those of format v1");
  return Status::Ok();
}

Status parse_meta_section(std::span<const uint8_t> meta, const Header& h, double& eb) {
  if (h.dtype != kDtypeFloat64) {
    eb = h.eb;
    return check_meta_section(meta);
  }
  ByteReader r(meta);
  uint8_t max_id;
  uint32_t radius;
  double eb64;
  if (!r.u8(max_id) || !r.u32(radius) || !r.f64(eb64) || !r.at_end())
    return corrupt_stream("meta section is malformed (a float64 stream's holds 13 bytes)");
  if (max_id != kMaxBoundId || radius != uint32_t(kRadius))
    return corrupt_stream("meta section parameters are not those of format v1");
  if (!(eb64 >= 0.0) || !(eb64 <= kMaxEb64)) return corrupt_stream("meta section: float64 bound out of range");
  // The header's f32 bound is float_bound of it (the largest float not above, clamped).
  if (float_bound(eb64) != h.eb) return corrupt_stream("meta section: float64 bound disagrees with the header's");
  eb = eb64;
  return Status::Ok();
}

Status read_tile_ids(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd, uint8_t mode,
                     int components, size_t ntiles, bool positive_bound, std::vector<uint8_t>& out) {
  const size_t count = size_t(components) * ntiles;
  if (mode != uint8_t(Mode::block)) {  // mode none: one uniform id
    out.assign(count, uint8_t(positive_bound ? kMaxBoundId : 0));
    return Status::Ok();
  }
  auto t = read_section(stream, pc, kSectionTileBounds, zstd);
  if (!t.ok()) return t.status();
  out = std::move(t.value());
  if (out.size() != count) return corrupt_stream("tile bound section has the wrong size");
  for (uint8_t id : out)
    if (id > kMaxBoundId) return corrupt_stream("tile bound id out of range");
  return Status::Ok();
}

Status read_tiled_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd,
                           TiledSections& out) {
  const auto& h = pc.header;
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, zstd); };
  auto meta = section(kSectionMeta);
  if (!meta.ok()) return meta.status();
  FACTZ_RETURN_IF_ERROR(parse_meta_section(meta.value(), h, out.eb));
  const TileLayout L(int64_t(h.nx), int64_t(h.ny));
  const size_t ntiles = size_t(L.tile_count());
  FACTZ_RETURN_IF_ERROR(read_tile_ids(stream, pc, zstd, h.mode, 2, ntiles, out.eb > 0.0, out.tile_ids));
  auto ex_idx = section(kSectionExactIndex);
  if (!ex_idx.ok()) return ex_idx.status();
  auto ex_val = section(kSectionExactValues);
  if (!ex_val.ok()) return ex_val.status();
  auto outl = section(kSectionOutliers);
  if (!outl.ok()) return outl.status();
  out.exact_index = std::move(ex_idx.value());
  out.exact_values = std::move(ex_val.value());
  out.outliers = std::move(outl.value());
  FACTZ_RETURN_IF_ERROR(split_lists(out.exact_index, out.idx[0], out.idx[1], "exact_index"));
  FACTZ_RETURN_IF_ERROR(split_lists(out.exact_values, out.val[0], out.val[1], "exact_values"));
  return split_lists(out.outliers, out.outl[0], out.outl[1], "outliers");
}

std::vector<uint8_t> concat_lists(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  ByteWriter w;
  w.varint(a.size());
  auto& out = w.bytes();
  out.insert(out.end(), a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return std::move(out);
}

Status split_lists(std::span<const uint8_t> in, std::span<const uint8_t>& a, std::span<const uint8_t>& b,
                   const char* what) {
  ByteReader r(in);
  uint64_t size_a;
  if (!r.varint(size_a) || size_a > r.remaining())
    return corrupt_stream(std::string(what) + " section is malformed");
  const size_t head = in.size() - r.remaining();
  a = in.subspan(head, size_t(size_a));
  b = in.subspan(head + size_t(size_a));
  return Status::Ok();
}

}  // namespace factz::detail
