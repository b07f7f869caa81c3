#include "modes/tiled_quantizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "factz/factz.hpp"
#include "util/byte_io.hpp"
#include "kernels/quantizer.hpp"

namespace factz::detail {

void quantize_plane(std::span<const float> x, const TileLayout& L, float eb, std::vector<uint8_t> tile_ids,
                    const uint8_t* vertex_ids, int threads, QuantizedPlane& out) {
  const int64_t n = L.nx * L.ny;
  out.tile_ids = std::move(tile_ids);
  out.recon.resize(size_t(n));  // every element is written below
  out.exact.resize(size_t(n));
  float bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = bound_of_id(eb, id);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t y = 0; y < L.ny; ++y) {
    for (int64_t x0 = 0; x0 < L.nx; x0 += kTile) {
      const int id = out.tile_ids[size_t(L.tile_of(x0, y))];
      const float step = 2.0f * bound[id];
      const int64_t x1 = std::min(L.nx, x0 + kTile);
      for (int64_t k = y * L.nx + x0; k < y * L.nx + x1; ++k) {
        const int32_t q = id > 0 ? prequantize(x[k], step) : 0;
        const float r = reconstruct(q, step);
        const float need = bound[vertex_ids ? vertex_ids[k] : id];
        const bool ok = within_bound(r, x[k], need);
        out.recon[k] = ok ? r : x[k];
        out.exact[k] = ok ? 0 : 1;
      }
    }
  }
}

PlanePayload encode_plane(std::span<const float> x, const TileLayout& L, float eb, const QuantizedPlane& p,
                          int threads) {
  const int64_t n = L.nx * L.ny;
  PlanePayload out;
  out.symbols.resize(size_t(n));
  float step_of[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) step_of[id] = 2.0f * bound_of_id(eb, id);
  // q is a pure function of (x, tile id), recomputed here rather than stored. Tile rows
  // are independent (Lorenzo stops at tile edges), so each is one parallel task; escaped
  // codes are collected per tile row and joined in order.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> escapes(size_t(L.tiles_y));
  std::vector<std::vector<int64_t>> exact(size_t(L.tiles_y));
#pragma omp parallel num_threads(threads)
  {
    std::vector<int32_t> above(size_t(L.nx)), here(size_t(L.nx));
#pragma omp for schedule(static)
    for (int64_t ty = 0; ty < L.tiles_y; ++ty) {
      const int64_t y1 = std::min(L.ny, (ty + 1) * kTile);
      for (int64_t y = ty * kTile; y < y1; ++y) {
        for (int64_t x0 = 0; x0 < L.nx; x0 += kTile) {
          const int id = p.tile_ids[size_t(L.tile_of(x0, y))];
          const int64_t x1 = std::min(L.nx, x0 + kTile);
          for (int64_t xi = x0; xi < x1; ++xi)
            here[size_t(xi)] = id > 0 ? prequantize(x[y * L.nx + xi], step_of[id]) : 0;
        }
        const bool has_up = y % kTile != 0;
        for (int64_t xi = 0; xi < L.nx; ++xi) {
          const bool has_l = xi % kTile != 0;
          const int64_t l = has_l ? here[size_t(xi - 1)] : 0;
          const int64_t t = has_up ? above[size_t(xi)] : 0;
          const int64_t tl = (has_l && has_up) ? above[size_t(xi - 1)] : 0;
          const int64_t code = int64_t(here[size_t(xi)]) - (l + t - tl);
          const bool in_range = code > -kRadius && code < kRadius;
          out.symbols[size_t(y * L.nx + xi)] = in_range ? uint16_t(code + kRadius) : 0;
          if (!in_range) escapes[size_t(ty)].emplace_back(y * L.nx + xi, code);
          if (p.exact[size_t(y * L.nx + xi)]) exact[size_t(ty)].push_back(y * L.nx + xi);
        }
        std::swap(above, here);
      }
    }
  }
  ByteWriter outl, idx, vals;
  int64_t n_out = 0, n_exact = 0;
  for (const auto& e : escapes) n_out += int64_t(e.size());
  for (const auto& e : exact) n_exact += int64_t(e.size());
  outl.varint(uint64_t(n_out));
  int64_t last_o = -1;
  for (const auto& band : escapes) {
    // Within a tile row, escapes were found row by row in index order already.
    for (const auto& [k, code] : band) {
      outl.varint(uint64_t(k - last_o - 1));
      outl.zigzag(code);
      last_o = k;
    }
  }
  idx.varint(uint64_t(n_exact));
  int64_t last_e = -1;
  for (const auto& band : exact) {
    for (int64_t k : band) {
      idx.varint(uint64_t(k - last_e - 1));
      vals.f32(x[size_t(k)]);
      last_e = k;
    }
  }
  out.outliers = std::move(outl.bytes());
  out.exact_index = std::move(idx.bytes());
  out.exact_values = std::move(vals.bytes());
  return out;
}

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
    if (!symbols.empty() && symbols[size_t(last)] != 0)
      return corrupt_stream("outlier at a vertex without escape symbol");
    if (c < -(int64_t(1) << 40) || c > (int64_t(1) << 40)) return corrupt_stream("outlier code out of range");
    index[e] = last;
    code[e] = c;
  }
  if (!r.at_end()) return corrupt_stream("trailing bytes after outlier list");
  if (symbols.empty()) return Status::Ok();
  int64_t escapes = 0;
  for (uint16_t s : symbols) escapes += s == 0;
  if (escapes != int64_t(count)) return corrupt_stream("escape symbols and outlier list disagree");
  return Status::Ok();
}

Status parse_exact(std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, uint64_t n,
                   std::vector<int64_t>& index, std::vector<float>& value) {
  ByteReader ri(exact_index), rv(exact_values);
  uint64_t count;
  if (!ri.varint(count) || count > n) return corrupt_stream("exact list header is invalid");
  if (rv.remaining() != count * 4) return corrupt_stream("exact value count does not match its index");
  index.resize(size_t(count));
  value.resize(size_t(count));
  int64_t last = -1;
  for (uint64_t e = 0; e < count; ++e) {
    uint64_t gap;
    float x;
    if (!ri.varint(gap) || !rv.f32(x)) return corrupt_stream("exact list truncated");
    if (!std::isfinite(x)) return corrupt_stream("exact value is not finite");
    if (gap >= n || int64_t(gap) >= int64_t(n) - last - 1) return corrupt_stream("exact index out of range");
    last += int64_t(gap) + 1;
    index[e] = last;
    value[e] = x;
  }
  if (!ri.at_end()) return corrupt_stream("trailing bytes after exact list");
  return Status::Ok();
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

Status decode_plane(const TileLayout& L, float eb, std::span<const uint8_t> tile_ids,
                    std::span<const uint16_t> symbols, std::span<const uint8_t> outliers,
                    std::span<const uint8_t> exact_index, std::span<const uint8_t> exact_values, int threads,
                    std::span<float> out) {
  const int64_t n = L.nx * L.ny;
  if (int64_t(tile_ids.size()) != L.tile_count()) return corrupt_stream("tile bound table has the wrong size");
  for (uint8_t id : tile_ids)
    if (id > kMaxBoundId) return corrupt_stream("tile bound id out of range");
  if (int64_t(symbols.size()) != n) return corrupt_stream("code count does not match the grid");
  std::vector<int64_t> outlier_index, outlier_code;
  FACTZ_RETURN_IF_ERROR(parse_outliers(outliers, uint64_t(n), symbols, outlier_index, outlier_code));
  if (int64_t(out.size()) != n) return invalid_argument("output plane has the wrong size");
  int bad = 0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) reduction(| : bad)
  for (int64_t t = 0; t < L.tile_count(); ++t) {
    const int64_t tx = t % L.tiles_x, ty = t / L.tiles_x;
    const int64_t x0 = tx * kTile, y0 = ty * kTile;
    const int64_t x1 = std::min(L.nx, x0 + kTile), y1 = std::min(L.ny, y0 + kTile);
    const float step = 2.0f * bound_of_id(eb, tile_ids[size_t(t)]);
    uint64_t row_above[kTile] = {};  // q of the previous row of this tile (wrapping arithmetic)
    auto oit = outlier_index.begin();
    for (int64_t y = y0; y < y1; ++y) {
      uint64_t left = 0, above_left = 0;
      for (int64_t x = x0; x < x1; ++x) {
        const int64_t k = y * L.nx + x;
        int64_t code = int64_t(symbols[size_t(k)]) - kRadius;
        if (symbols[size_t(k)] == 0) {
          oit = std::lower_bound(oit, outlier_index.end(), k);
          code = outlier_code[size_t(oit - outlier_index.begin())];  // parse_outliers: one per escape
        }
        const uint64_t above = row_above[x - x0];
        const uint64_t q = uint64_t(code) + left + above - above_left;
        const int64_t qs = int64_t(q);
        if (qs > kMaxQuant || qs < -int64_t(kMaxQuant)) bad = 1;
        const float r = reconstruct(int32_t(std::clamp<int64_t>(qs, -kMaxQuant, kMaxQuant)), step);
        if (!std::isfinite(r)) bad = 1;  // the encoder never produces one
        out[size_t(k)] = r;
        above_left = above;
        row_above[x - x0] = q;
        left = q;
      }
    }
  }
  if (bad) return corrupt_stream("decoded value out of range");
  std::vector<int64_t> exact_at;
  std::vector<float> exact_value;
  FACTZ_RETURN_IF_ERROR(parse_exact(exact_index, exact_values, uint64_t(n), exact_at, exact_value));
  for (size_t e = 0; e < exact_at.size(); ++e) out[size_t(exact_at[e])] = exact_value[e];
  return Status::Ok();
}

Status read_tiled_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, const Decompressor* zstd,
                           TiledSections& out) {
  const auto& h = pc.header;
  auto section = [&](uint32_t id) { return read_section(stream, pc, id, zstd); };
  auto meta = section(kSectionMeta);
  if (!meta.ok()) return meta.status();
  FACTZ_RETURN_IF_ERROR(check_meta_section(meta.value()));
  const TileLayout L(int64_t(h.nx), int64_t(h.ny));
  const size_t ntiles = size_t(L.tile_count());
  if (h.mode == uint8_t(Mode::block)) {  // per-tile ids; mode none: one uniform id
    auto t = section(kSectionTileBounds);
    if (!t.ok()) return t.status();
    out.tile_ids = std::move(t.value());
    if (out.tile_ids.size() != 2 * ntiles) return corrupt_stream("tile bound section has the wrong size");
    for (uint8_t id : out.tile_ids)
      if (id > kMaxBoundId) return corrupt_stream("tile bound id out of range");
  } else {
    out.tile_ids.assign(2 * ntiles, uint8_t(h.eb > 0.0f ? kMaxBoundId : 0));
  }
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
