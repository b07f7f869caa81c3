// Domain decomposition with shared, exactly stored block boundaries, and the multi-block
// file (docs/multiblock.md, docs/format.md "Multi-block files"). One implementation for
// float32 and float64 fields: the functions below are templates on the field type (Field =
// VectorField2D or VectorField2D64, T its value type) behind the public overloads, and the
// orchestration (block loop, the file's assembly, decoding every block or a window's) is
// shared with the 3D files (src/api/multiblock_common.hpp).
#include "factz/multiblock.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>

#include "api/multiblock_common.hpp"
#include "factz/multiblock3d.hpp"  // multiblock3d_header_size
#include "format/crc32.hpp"
#include "util/big_vector.hpp"
#include "util/byte_io.hpp"

namespace factz {
namespace {

using mb::get_le;
using mb::kDTypeOf;
using mb::ValueOf;

constexpr uint8_t kMagic[4] = {'F', 'Z', 'M', 'B'};
/// Version 1: float32 blocks (header byte 7 zero, as every earlier build wrote it). Version
/// 2: float64 blocks (byte 7 the data type 2), so that a build that reads only version 1
/// answers unsupported_version instead of failing inside a block.
constexpr uint16_t kVersion = 1;
constexpr uint16_t kVersionFloat64 = 2;
/// Versions 3 and 4: a 3D field's blocks (float32, float64; src/api/multiblock3d.cpp), refused
/// here by name.
constexpr uint16_t kVersion3D = 3;
constexpr uint16_t kVersion3D64 = 4;
constexpr uint64_t kFixedHeader = kMultiBlockPrefixBytes;  ///< magic .. header CRC
constexpr uint64_t kEntryBytes = 48;   ///< x0, y0, nx, ny, offset, length
/// At most this many blocks (a forged count must not size an allocation).
constexpr int64_t kMaxBlocks = int64_t(1) << 20;
/// Same limit as the container: nx * ny at most 2^40.
constexpr uint64_t kMaxVertices = uint64_t(1) << 40;
/// The smallest FaCTz stream: its 64-byte header.
constexpr uint64_t kMinStream = 64;

void put_f64(std::vector<uint8_t>& out, double x) { detail::put_le(out, std::bit_cast<uint64_t>(x), 8); }

/// Columns [lo, hi) of band i that block i owns: its own vertices except the shared last
/// column, which the next band owns. Every vertex has exactly one owner.
int64_t owned_end(const BlockExtent& e, bool last_x) { return e.x0 + e.nx - (last_x ? 0 : 1); }
int64_t owned_end_y(const BlockExtent& e, bool last_y) { return e.y0 + e.ny - (last_y ? 0 : 1); }

/// A file's blocks are decoded by the decoder of their type only (as decompress and
/// decompress64 refuse each other's streams): invalid_argument naming the other call.
Status require_file_dtype(DType file, DType want) {
  if (file == want) return Status::Ok();
  if (file == DType::float64)
    return invalid_argument("the multi-block file holds float64 values: decode it with factz::decompress_multiblock64 "
                            "(a window with decompress_region64); a float32 decoder would round them");
  return invalid_argument("the multi-block file holds float32 values: decode it with factz::decompress_multiblock "
                          "(a window with decompress_region)");
}

template <class Field>
Field extract(const Field& g, const BlockExtent& e) {
  using T = ValueOf<Field>;
  Field b;
  b.nx = e.nx;
  b.ny = e.ny;
  b.u.resize(size_t(e.nx * e.ny));
  b.v.resize(size_t(e.nx * e.ny));
  if (!g.mask.empty()) b.mask.resize(size_t(e.nx * e.ny));
  for (int64_t y = 0; y < e.ny; ++y) {
    const size_t src = size_t((e.y0 + y) * g.nx + e.x0), dst = size_t(y * e.nx);
    std::memcpy(b.u.data() + dst, g.u.data() + src, size_t(e.nx) * sizeof(T));
    std::memcpy(b.v.data() + dst, g.v.data() + src, size_t(e.nx) * sizeof(T));
    if (!g.mask.empty()) std::memcpy(b.mask.data() + dst, g.mask.data() + src, size_t(e.nx));
  }
  return b;
}

template <class Field>
Result<std::vector<uint8_t>> compress_one_block(const Field& block, const BlockLayout& L, int b, const Options& o,
                                                double eb_abs, CompressStats* stats) {
  if (b < 0 || b >= L.count() || size_t(L.count()) != L.blocks.size())
    return invalid_argument("block " + std::to_string(b) + " is not in the layout");
  const BlockExtent& e = L.blocks[size_t(b)];
  if (block.nx != e.nx || block.ny != e.ny)
    return invalid_argument("block " + std::to_string(b) + " must be " + std::to_string(e.nx) + " x " +
                            std::to_string(e.ny) + ", got " + std::to_string(block.nx) + " x " +
                            std::to_string(block.ny));
  if (!std::isfinite(eb_abs) || eb_abs < 0) return invalid_argument("the absolute bound must be finite and >= 0");
  Options bo = o;
  bo.source.clear();  // the whole field's record goes after the file's last block, never in a block
  bo.bound_mode = BoundMode::abs;
  bo.bound = eb_abs;
  bo.exact_edges = uint8_t(o.exact_edges | L.shared_edges(b));
  return compress(block, bo, stats);
}

}  // namespace

uint8_t BlockLayout::shared_edges(int b) const {
  const int bx = b % px, by = b / px;
  uint8_t e = 0;
  if (bx > 0) e |= kEdgeXMin;
  if (bx < px - 1) e |= kEdgeXMax;
  if (by > 0) e |= kEdgeYMin;
  if (by < py - 1) e |= kEdgeYMax;
  return e;
}

Result<BlockLayout> make_block_layout(int64_t nx, int64_t ny, int px, int py) {
  if (nx < 1 || ny < 1) return invalid_argument("the grid must be at least 1 x 1");
  if (uint64_t(nx) > kMaxVertices / uint64_t(ny)) return invalid_argument("the grid has more than 2^40 vertices");
  if (px < 1 || py < 1) return invalid_argument("--blocks needs PX >= 1 and PY >= 1");
  if (int64_t(px) * int64_t(py) > kMaxBlocks) return invalid_argument("at most 2^20 blocks");
  if (px > 1 && px > nx - 1)
    return invalid_argument("PX = " + std::to_string(px) + " blocks need at least " + std::to_string(px) +
                            " cells along x, the grid has " + std::to_string(nx - 1));
  if (py > 1 && py > ny - 1)
    return invalid_argument("PY = " + std::to_string(py) + " blocks need at least " + std::to_string(py) +
                            " cells along y, the grid has " + std::to_string(ny - 1));
  auto bands = [](int64_t n, int p) {
    std::vector<std::pair<int64_t, int64_t>> out;  // (first vertex, vertices)
    const int64_t cells = n - 1, base = cells / p, extra = cells % p;
    int64_t at = 0;
    for (int i = 0; i < p; ++i) {
      const int64_t c = base + (i < extra ? 1 : 0);
      out.emplace_back(at, c + 1);
      at += c;
    }
    return out;
  };
  BlockLayout L;
  L.nx = nx;
  L.ny = ny;
  L.px = px;
  L.py = py;
  const auto bx = bands(nx, px), by = bands(ny, py);
  for (int j = 0; j < py; ++j)
    for (int i = 0; i < px; ++i) L.blocks.push_back({bx[size_t(i)].first, by[size_t(j)].first, bx[size_t(i)].second,
                                                     by[size_t(j)].second});
  return L;
}

ValueRange value_range_of(const VectorField2D& f) { return mb::range_of(f); }
ValueRange value_range_of(const VectorField2D64& f) { return mb::range_of(f); }

ValueRange merge(ValueRange a, ValueRange b) {
  if (a.empty) return b;
  if (b.empty) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), false};
}

Result<double> absolute_bound(const Options& o, ValueRange r) {
  if (!std::isfinite(o.bound) || o.bound < 0) return invalid_argument("the error bound must be finite and >= 0");
  if (o.bound_mode == BoundMode::abs) return o.bound;
  if (o.bound_mode != BoundMode::rel) return invalid_argument("unknown bound mode");
  // The same expression compress() uses for REL (bound * (hi - lo) in double).
  return r.empty ? 0.0 : o.bound * (r.hi - r.lo);
}

VectorField2D extract_block(const VectorField2D& g, const BlockExtent& e) { return extract(g, e); }
VectorField2D64 extract_block(const VectorField2D64& g, const BlockExtent& e) { return extract(g, e); }

Result<std::vector<uint8_t>> compress_block(const VectorField2D& block, const BlockLayout& L, int b, const Options& o,
                                            double eb_abs, CompressStats* stats) {
  return compress_one_block(block, L, b, o, eb_abs, stats);
}
Result<std::vector<uint8_t>> compress_block(const VectorField2D64& block, const BlockLayout& L, int b, const Options& o,
                                            double eb_abs, CompressStats* stats) {
  return compress_one_block(block, L, b, o, eb_abs, stats);
}

uint64_t multiblock_header_size(int blocks) { return kFixedHeader + kEntryBytes * uint64_t(blocks) + 4; }

uint16_t multiblock_version(int dims, DType dtype, bool with_source) {
  const bool float64 = dtype == DType::float64;
  const uint16_t base = dims == 3 ? (float64 ? kVersion3D64 : kVersion3D) : (float64 ? kVersionFloat64 : kVersion);
  return uint16_t(base + (with_source ? mb::kSourceVersionStep : 0));
}

std::vector<uint8_t> multiblock_source_trailer(std::span<const uint8_t> record, bool zstd) {
  std::vector<uint8_t> t;
  if (record.empty()) return t;  // no record: nothing after the last block
  std::vector<uint8_t> packed;
  // One zstd frame where it is shorter (a record of curvilinear grids), as the zstd stage does
  // for a stream's sections; the raw bytes otherwise.
  const bool pack = zstd && detail::zstd_compress(record, 0, packed).ok() && packed.size() < record.size();
  const std::span<const uint8_t> stored = pack ? std::span<const uint8_t>(packed) : record;
  t.reserve(stored.size() + size_t(mb::kTrailerOverhead));
  detail::put_le(t, uint64_t(record.size()), 8);
  t.push_back(pack ? mb::kTrailerZstd : mb::kTrailerRaw);
  t.insert(t.end(), stored.begin(), stored.end());
  detail::put_le(t, detail::crc32c(t), 4);
  return t;
}

std::vector<uint8_t> multiblock_header(const BlockLayout& L, const Options& o, std::span<const uint64_t> lengths,
                                       DType dtype) {
  const bool float64 = dtype == DType::float64;
  std::vector<uint8_t> h;
  h.reserve(size_t(multiblock_header_size(L.count())));
  for (uint8_t c : kMagic) h.push_back(c);
  detail::put_le(h, multiblock_version(2, dtype, !o.source.empty()), 2);
  h.push_back(uint8_t(o.bound_mode));
  h.push_back(float64 ? uint8_t(DType::float64) : uint8_t(0));  // version 1: the reserved zero
  detail::put_le(h, uint64_t(L.nx), 8);
  detail::put_le(h, uint64_t(L.ny), 8);
  detail::put_le(h, uint32_t(L.px), 4);
  detail::put_le(h, uint32_t(L.py), 4);
  put_f64(h, o.bound);
  detail::put_le(h, uint32_t(L.count()), 4);
  detail::put_le(h, detail::crc32c(h), 4);
  const size_t index_at = h.size();
  uint64_t offset = multiblock_header_size(L.count());
  for (int b = 0; b < L.count(); ++b) {
    const BlockExtent& e = L.blocks[size_t(b)];
    for (int64_t x : {e.x0, e.y0, e.nx, e.ny}) detail::put_le(h, uint64_t(x), 8);
    detail::put_le(h, offset, 8);
    detail::put_le(h, lengths[size_t(b)], 8);
    offset += lengths[size_t(b)];
  }
  detail::put_le(h, detail::crc32c(std::span<const uint8_t>(h).subspan(index_at)), 4);
  return h;
}

Result<uint64_t> multiblock_header_size_from_prefix(std::span<const uint8_t> b) {
  if (!is_multiblock(b)) return corrupt_stream("not a multi-block file (compress with --blocks)");
  if (b.size() < kFixedHeader) return corrupt_stream("multi-block header truncated");
  if (get_le(b, 44, 4) != detail::crc32c(b.subspan(0, 44))) return corrupt_stream("multi-block header checksum mismatch");
  const uint64_t count = get_le(b, 40, 4);
  if (count < 1 || count > uint64_t(kMaxBlocks)) return corrupt_stream("multi-block header: block counts are inconsistent");
  // A 3D file (version 3 or 4, 7 or 8) keeps this prefix's layout and has its own entry size.
  const uint64_t version = mb::base_version(get_le(b, 4, 2));
  if (version == kVersion3D || version == kVersion3D64) return multiblock3d_header_size(int(count));
  return multiblock_header_size(int(count));
}

bool is_multiblock(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kMagic, 4) == 0;
}

Result<MultiBlockIndex> parse_multiblock_index(std::span<const uint8_t> b, uint64_t file_size) {
  if (!is_multiblock(b)) return corrupt_stream("not a multi-block file (magic)");
  if (b.size() < kFixedHeader) return corrupt_stream("multi-block header truncated");
  const uint64_t stored = get_le(b, 4, 2), version = mb::base_version(stored);
  if (version == kVersion3D)  // unsupported here, as in a build without 3D files, naming the reader to use
    return Status(Code::unsupported_version, "multi-block file version " + std::to_string(stored) +
                                                 " holds a 3D vector field: decode it with "
                                                 "factz::decompress_multiblock3d (its index: parse_multiblock3d_index)");
  if (version == kVersion3D64)
    return Status(Code::unsupported_version,
                  "multi-block file version " + std::to_string(stored) +
                      " holds a float64 3D vector field: decode it with "
                      "factz::decompress_multiblock3d64 (its index: parse_multiblock3d_index)");
  if (version != kVersion && version != kVersionFloat64)
    return Status(Code::unsupported_version,
                  "multi-block file version " + std::to_string(stored) + " (this build reads 1 to 8)");
  if (get_le(b, 44, 4) != detail::crc32c(b.subspan(0, 44))) return corrupt_stream("multi-block header checksum mismatch");
  MultiBlockIndex ix;
  ix.has_source = mb::has_source_version(stored);
  ix.bound_mode = b[6];
  ix.dtype = version == kVersionFloat64 ? DType::float64 : DType::float32;
  // Byte 7: zero in version 1 (float32 blocks), the data type 2 in version 2 (float64).
  const uint8_t dtype_byte = version == kVersionFloat64 ? uint8_t(DType::float64) : uint8_t(0);
  if (ix.bound_mode > 1 || b[7] != dtype_byte)
    return corrupt_stream("multi-block header: bad bound mode or data type byte");
  const uint64_t nx = get_le(b, 8, 8), ny = get_le(b, 16, 8);
  const uint64_t px = get_le(b, 24, 4), py = get_le(b, 28, 4), count = get_le(b, 40, 4);
  ix.bound_value = std::bit_cast<double>(get_le(b, 32, 8));
  if (nx < 1 || ny < 1 || nx > kMaxVertices || ny > kMaxVertices || nx > kMaxVertices / ny)
    return corrupt_stream("multi-block header: grid size out of range");
  if (px < 1 || py < 1 || px > uint64_t(kMaxBlocks) || py > uint64_t(kMaxBlocks) || px * py != count ||
      count > uint64_t(kMaxBlocks))
    return corrupt_stream("multi-block header: block counts are inconsistent");
  if (!std::isfinite(ix.bound_value) || ix.bound_value < 0) return corrupt_stream("multi-block header: bad bound");
  auto layout = make_block_layout(int64_t(nx), int64_t(ny), int(px), int(py));
  if (!layout.ok()) return corrupt_stream("multi-block header: " + layout.status().message());
  ix.layout = std::move(layout).value();
  ix.header_bytes = multiblock_header_size(int(count));
  if (b.size() < ix.header_bytes) return corrupt_stream("multi-block index truncated");
  const auto index = b.subspan(kFixedHeader, size_t(kEntryBytes * count));
  if (get_le(b, size_t(kFixedHeader + kEntryBytes * count), 4) != detail::crc32c(index))
    return corrupt_stream("multi-block index checksum mismatch");
  uint64_t expect = ix.header_bytes;
  for (uint64_t k = 0; k < count; ++k) {
    const size_t at = size_t(k * kEntryBytes);
    const BlockExtent& e = ix.layout.blocks[size_t(k)];
    if (get_le(index, at, 8) != uint64_t(e.x0) || get_le(index, at + 8, 8) != uint64_t(e.y0) ||
        get_le(index, at + 16, 8) != uint64_t(e.nx) || get_le(index, at + 24, 8) != uint64_t(e.ny))
      return corrupt_stream("multi-block index: block " + std::to_string(k) + " does not match the layout");
    MultiBlockIndex::Entry en{get_le(index, at + 32, 8), get_le(index, at + 40, 8)};
    if (en.offset != expect || en.length < kMinStream || en.length > (uint64_t(1) << 62))
      return corrupt_stream("multi-block index: block " + std::to_string(k) + " byte range is invalid");
    expect += en.length;
    ix.entries.push_back(en);
  }
  FACTZ_RETURN_IF_ERROR(mb::finish_index(ix, expect, file_size));
  return ix;
}

namespace {

/// The source record of a file whose index is `ix` (2D or 3D), from its trailer's bytes.
template <class Index>
Result<std::optional<SourceRecord>> source_from(const Index& ix, std::span<const uint8_t> trailer) {
  std::vector<uint64_t> whole;
  if constexpr (requires { ix.layout.nz; })
    whole = detail::record_grid(uint64_t(ix.layout.nx), uint64_t(ix.layout.ny), uint64_t(ix.layout.nz), 3);
  else whole = detail::record_grid(uint64_t(ix.layout.nx), uint64_t(ix.layout.ny), 1, 2);
  auto record = mb::record_of_trailer(trailer, int(whole.size()), whole);
  if (!record.ok()) return record.status();
  return std::optional<SourceRecord>(std::move(record).value());
}

template <class Index>
Result<std::optional<SourceRecord>> source_in_memory(const Result<Index>& ix, std::span<const uint8_t> file) {
  if (!ix.ok()) return ix.status();
  if (!ix->has_source) return std::optional<SourceRecord>();
  return source_from(ix.value(), file.subspan(size_t(ix->blocks_end)));
}

template <class Index>
Result<std::optional<SourceRecord>> source_on_disk(const Result<Index>& ix, std::ifstream& in, const std::string& path) {
  if (!ix.ok()) return ix.status();
  if (!ix->has_source) return std::optional<SourceRecord>();
  std::vector<uint8_t> trailer;
  FACTZ_RETURN_IF_ERROR(
      mb::read_at(in, path, ix->blocks_end, ix->source_bytes + mb::kTrailerOverhead, trailer));
  return source_from(ix.value(), trailer);
}

}  // namespace

Result<std::optional<SourceRecord>> multiblock_source(std::span<const uint8_t> file) {
  if (is_multiblock3d(file)) return source_in_memory(parse_multiblock3d_index(file, file.size()), file);
  return source_in_memory(parse_multiblock_index(file, file.size()), file);
}

Result<std::optional<SourceRecord>> read_multiblock_source(const std::string& path) {
  std::ifstream in;
  uint64_t size = 0;
  FACTZ_RETURN_IF_ERROR(mb::open_file(path, in, size));
  std::vector<uint8_t> head;
  FACTZ_RETURN_IF_ERROR(mb::read_header(in, path, size, head));
  if (is_multiblock3d(head)) return source_on_disk(parse_multiblock3d_index(head, size), in, path);
  return source_on_disk(parse_multiblock_index(head, size), in, path);
}

namespace {

template <class Field>
Result<std::vector<uint8_t>> compress_all_blocks(const Field& f, const Options& o, int px, int py,
                                                 CompressStats* stats) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  auto layout = make_block_layout(f.nx, f.ny, px, py);
  if (!layout.ok()) return layout.status();
  return mb::compress_all_blocks(f, layout.value(), o, stats,
                                 [](const BlockLayout& L, const Options& opt, std::span<const uint64_t> lengths,
                                    DType dtype) { return multiblock_header(L, opt, lengths, dtype); });
}

/// Columns [x0, x1) and rows [y0, y1) of the window that block b decodes: the part of its
/// owned vertices (owned_end) inside the window; empty when x0 >= x1 or y0 >= y1.
Region owned_part(const BlockLayout& L, int b, const Region& r) {
  const BlockExtent& e = L.blocks[size_t(b)];
  return {std::max(e.x0, r.x0), std::max(e.y0, r.y0), std::min(owned_end(e, b % L.px == L.px - 1), r.x1),
          std::min(owned_end_y(e, b / L.px == L.py - 1), r.y1)};
}

/// Block b's stream holds the extent its index entry says and the file's data type.
Status check_block_stream(const MultiBlockIndex& ix, int b, std::span<const uint8_t> bytes) {
  const BlockExtent& e = ix.layout.blocks[size_t(b)];
  auto info = stream_info(bytes);
  if (!info.ok()) return Status(info.status().code(), "block " + std::to_string(b) + ": " + info.status().message());
  if (info->nx != e.nx || info->ny != e.ny)
    return corrupt_stream("block " + std::to_string(b) + " holds a " + std::to_string(info->nx) + " x " +
                          std::to_string(info->ny) + " field, its index says " + std::to_string(e.nx) + " x " +
                          std::to_string(e.ny));
  if (info->dtype != ix.dtype)
    return corrupt_stream("block " + std::to_string(b) + " holds " + dtype_name(info->dtype) +
                          " values, the file's header says " + dtype_name(ix.dtype));
  return Status::Ok();
}

/// Decodes block b's stream into the scratch planes (resized to the block) and copies its
/// part of the window into `out`, with its mask when the block has missing vertices (`out`'s
/// mask is then allocated, all valid, the first time a block needs it; `mask_lock` guards
/// that when blocks decode in parallel).
/// A decoding thread's block planes, reused: fresh pages per block cost more than decoding
/// small ones.
template <class T>
struct Planes {
  std::vector<T> u, v;
  std::vector<uint8_t> mask;
};

template <class Field, class T = ValueOf<Field>>
Status decode_block_into(const MultiBlockIndex& ix, int b, std::span<const uint8_t> bytes, const Region& r,
                         const DecompressOptions& d, Planes<T>& scratch, Field& out, std::mutex& mask_lock) {
  std::vector<T>& bu = scratch.u;
  std::vector<T>& bv = scratch.v;
  std::vector<uint8_t>& bm = scratch.mask;
  const BlockExtent& e = ix.layout.blocks[size_t(b)];
  FACTZ_RETURN_IF_ERROR(check_block_stream(ix, b, bytes));
  bu.resize(size_t(e.nx * e.ny));
  bv.resize(size_t(e.nx * e.ny));
  bm.resize(size_t(e.nx * e.ny));
  const Status st = decompress_into(bytes, std::span<T>(bu), std::span<T>(bv), std::span<uint8_t>(bm), d);
  if (!st.ok()) return Status(st.code(), "block " + std::to_string(b) + ": " + st.message());
  const Region w = owned_part(ix.layout, b, r);
  const size_t row = size_t(w.x1 - w.x0);
  bool masked = false;
  for (int64_t y = w.y0; y < w.y1 && !masked; ++y) {
    const uint8_t* m = bm.data() + size_t((y - e.y0) * e.nx + (w.x0 - e.x0));
    masked = std::find(m, m + row, uint8_t(1)) != m + row;
  }
  if (masked) {
    const std::lock_guard<std::mutex> hold(mask_lock);
    if (out.mask.empty()) out.mask.assign(size_t(out.nx * out.ny), uint8_t(0));
  }
  for (int64_t y = w.y0; y < w.y1; ++y) {
    const size_t src = size_t((y - e.y0) * e.nx + (w.x0 - e.x0));
    const size_t dst = size_t((y - r.y0) * out.nx + (w.x0 - r.x0));
    std::memcpy(out.u.data() + dst, bu.data() + src, row * sizeof(T));
    std::memcpy(out.v.data() + dst, bv.data() + src, row * sizeof(T));
    if (masked) std::memcpy(out.mask.data() + dst, bm.data() + src, row);
  }
  return Status::Ok();
}

/// The blocks owning a vertex of the window, in block order.
std::vector<int> blocks_for(const BlockLayout& L, const Region& r) {
  std::vector<int> needed;
  for (int b = 0; b < L.count(); ++b) {
    const Region w = owned_part(L, b, r);
    if (w.x0 < w.x1 && w.y0 < w.y1) needed.push_back(b);
  }
  return needed;
}

template <class Field>
Result<Field> decompress_all_blocks(std::span<const uint8_t> file, const DecompressOptions& d) {
  using T = ValueOf<Field>;
  auto ix = parse_multiblock_index(file, file.size());
  if (!ix.ok()) return ix.status();
  const MultiBlockIndex& I = ix.value();
  FACTZ_RETURN_IF_ERROR(require_file_dtype(I.dtype, kDTypeOf<Field>));
  // The whole file is here: a damaged record makes it corrupt, as a stream's section 12 does.
  if (I.has_source) FACTZ_RETURN_IF_ERROR(multiblock_source(file).status());
  const Region all{0, 0, I.layout.nx, I.layout.ny};
  Field out;
  try {
    out.nx = all.x1;
    out.ny = all.y1;
    for (auto* plane : {&out.u, &out.v}) detail::resize_fresh(*plane, size_t(out.nx * out.ny));  // huge pages before the zero fill
    FACTZ_RETURN_IF_ERROR(mb::decode_all_blocks<Planes<T>>(
        file, I, d, [&](int b, std::span<const uint8_t> s) { return check_block_stream(I, b, s); },
        [&](int b, std::span<const uint8_t> s, const DecompressOptions& inner, Planes<T>& scratch, std::mutex& lock) {
          return decode_block_into(I, b, s, all, inner, scratch, out, lock);
        }));
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding a multi-block field");
  }
  return out;
}

/// The validated header and index of the open file `in` of `size` bytes: only those bytes
/// are read.
Result<MultiBlockIndex> read_index(std::ifstream& in, const std::string& path, uint64_t size) {
  std::vector<uint8_t> head;
  FACTZ_RETURN_IF_ERROR(mb::read_header(in, path, size, head));
  return parse_multiblock_index(head, size);
}

template <class Field>
Result<Field> decompress_window(const std::string& path, const Region& r, const DecompressOptions& d,
                                RegionStats* stats) {
  using T = ValueOf<Field>;
  std::ifstream in;
  uint64_t size = 0;
  FACTZ_RETURN_IF_ERROR(mb::open_file(path, in, size));
  auto ix = read_index(in, path, size);
  if (!ix.ok()) return ix.status();
  const MultiBlockIndex& I = ix.value();
  FACTZ_RETURN_IF_ERROR(require_file_dtype(I.dtype, kDTypeOf<Field>));
  if (r.x0 < 0 || r.y0 < 0 || r.x1 > I.layout.nx || r.y1 > I.layout.ny || r.x0 >= r.x1 || r.y0 >= r.y1)
    return invalid_argument("the region [" + std::to_string(r.x0) + ", " + std::to_string(r.x1) + ") x [" +
                            std::to_string(r.y0) + ", " + std::to_string(r.y1) + ") is empty or outside the " +
                            std::to_string(I.layout.nx) + " x " + std::to_string(I.layout.ny) + " grid");
  RegionStats st;
  Field out;
  try {
    out.nx = r.x1 - r.x0;
    out.ny = r.y1 - r.y0;
    for (auto* plane : {&out.u, &out.v}) detail::resize_fresh(*plane, size_t(out.nx * out.ny));  // huge pages before the zero fill
    FACTZ_RETURN_IF_ERROR(mb::decode_window_blocks<Planes<T>>(
        in, path, I, blocks_for(I.layout, r), st,
        [&](int b, std::span<const uint8_t> s, Planes<T>& scratch, std::mutex& lock) {
          return decode_block_into(I, b, s, r, d, scratch, out, lock);
        }));
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding a region");
  }
  if (stats) *stats = st;
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> compress_multiblock(const VectorField2D& f, const Options& o, int px, int py,
                                                 CompressStats* stats) {
  return compress_all_blocks(f, o, px, py, stats);
}
Result<std::vector<uint8_t>> compress_multiblock(const VectorField2D64& f, const Options& o, int px, int py,
                                                 CompressStats* stats) {
  return compress_all_blocks(f, o, px, py, stats);
}

Result<VectorField2D> decompress_multiblock(std::span<const uint8_t> file, const DecompressOptions& d) {
  return decompress_all_blocks<VectorField2D>(file, d);
}
Result<VectorField2D64> decompress_multiblock64(std::span<const uint8_t> file, const DecompressOptions& d) {
  return decompress_all_blocks<VectorField2D64>(file, d);
}

Result<MultiBlockIndex> read_multiblock_index(const std::string& path) {
  std::ifstream in;
  uint64_t size = 0;
  FACTZ_RETURN_IF_ERROR(mb::open_file(path, in, size));
  return read_index(in, path, size);
}

Result<VectorField2D> decompress_region(const std::string& path, const Region& r, const DecompressOptions& d,
                                        RegionStats* stats) {
  return decompress_window<VectorField2D>(path, r, d, stats);
}
Result<VectorField2D64> decompress_region64(const std::string& path, const Region& r, const DecompressOptions& d,
                                            RegionStats* stats) {
  return decompress_window<VectorField2D64>(path, r, d, stats);
}

}  // namespace factz
