// Domain decomposition of 3D vector fields with shared, exactly stored block faces, and the
// version 3 (float32) and version 4 (float64) multi-block files (docs/multiblock.md "3D
// blocks", docs/format.md "Multi-block files"). One implementation for every 3D field type:
// the functions below are templates on the field type (VectorField3D, VectorField3D64) behind
// the public overloads, and the orchestration (block loop, the file's assembly, decoding
// every block or a window's) is the 2D files' (src/api/multiblock_common.hpp); what is here is
// what 3D adds: the layout rule along z, the 64-byte header and 64-byte index entries, and
// copying a decoded box out.
#include "factz/multiblock3d.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>

#include "api/multiblock_common.hpp"
#include "factz/topology3d.hpp"
#include "format/crc32.hpp"
#include "util/big_vector.hpp"
#include "util/byte_io.hpp"

namespace factz {
namespace {

using mb::block_name;
using mb::get_le;
using mb::kDTypeOf;
using mb::ValueOf;

constexpr uint8_t kMagic[4] = {'F', 'Z', 'M', 'B'};
/// Version 3: float32 3D blocks (header byte 7 zero); version 4: float64 3D blocks (byte 7
/// the data type 2), so that a build reading only version 3 answers unsupported_version.
/// Versions 1 and 2 are the 2D files.
constexpr uint16_t kVersion3D = 3;
constexpr uint16_t kVersion3D64 = 4;
/// magic .. nz, pz and the second header CRC: the first 48 bytes are laid out as a 2D
/// header's (so the 2D prefix rules still find the block count), then nz, pz, CRC.
constexpr uint64_t kFixedHeader3D = 64;
constexpr uint64_t kEntryBytes3D = 64;  ///< x0, y0, z0, nx, ny, nz, offset, length
/// At most this many blocks (a forged count must not size an allocation).
constexpr int64_t kMaxBlocks = int64_t(1) << 20;
/// Same limit as the container: nx * ny * nz at most 2^40.
constexpr uint64_t kMaxVertices = uint64_t(1) << 40;
/// The smallest FaCTz stream: its 64-byte header.
constexpr uint64_t kMinStream = 64;

/// The one decoder of a field type's block streams.
template <class Field>
Result<Field> decode_as(std::span<const uint8_t> stream, const DecompressOptions& d) {
  if constexpr (kDTypeOf<Field> == DType::float64) return decompress3d64(stream, d);
  else return decompress3d(stream, d);
}

/// A file's blocks are decoded by the decoder of their type only (as decompress3d and
/// decompress3d64 refuse each other's streams): invalid_argument naming the other call.
Status require_file_dtype(DType file, DType want) {
  if (file == want) return Status::Ok();
  if (file == DType::float64)
    return invalid_argument("the 3D multi-block file (version 4) holds float64 values: decode it with "
                            "factz::decompress_multiblock3d64 (a window with decompress_region3d64, one block with "
                            "decompress_block3d64); a float32 decoder would round them");
  return invalid_argument("the 3D multi-block file (version 3) holds float32 values: decode it with "
                          "factz::decompress_multiblock3d (a window with decompress_region3d, one block with "
                          "decompress_block3d)");
}

/// Band bx, by, bz of block b.
void band_of(const BlockLayout3D& L, int b, int& bx, int& by, int& bz) {
  bx = b % L.px;
  by = (b / L.px) % L.py;
  bz = b / (L.px * L.py);
}

/// The vertices of the window that block b decodes: the part of its owned vertices (its
/// extent minus each shared last plane, which the next band owns) inside the window; empty
/// along an axis where lo >= hi. Every vertex has exactly one owner.
Region3D owned_part(const BlockLayout3D& L, int b, const Region3D& r) {
  const BlockExtent3D& e = L.blocks[size_t(b)];
  int bx, by, bz;
  band_of(L, b, bx, by, bz);
  const int64_t x1 = e.x0 + e.nx - (bx == L.px - 1 ? 0 : 1), y1 = e.y0 + e.ny - (by == L.py - 1 ? 0 : 1),
                z1 = e.z0 + e.nz - (bz == L.pz - 1 ? 0 : 1);
  return {std::max(e.x0, r.x0), std::max(e.y0, r.y0), std::max(e.z0, r.z0),
          std::min(x1, r.x1),   std::min(y1, r.y1),   std::min(z1, r.z1)};
}

bool is_empty(const Region3D& w) { return w.x0 >= w.x1 || w.y0 >= w.y1 || w.z0 >= w.z1; }

template <class Field>
Field extract(const Field& g, const BlockExtent3D& e) {
  using T = ValueOf<Field>;
  Field b;
  b.nx = e.nx;
  b.ny = e.ny;
  b.nz = e.nz;
  const size_t n = size_t(e.nx * e.ny * e.nz);
  b.u.resize(n);
  b.v.resize(n);
  b.w.resize(n);
  if (!g.mask.empty()) b.mask.resize(n);
  for (int64_t z = 0; z < e.nz; ++z)
    for (int64_t y = 0; y < e.ny; ++y) {
      const size_t src = size_t(((e.z0 + z) * g.ny + e.y0 + y) * g.nx + e.x0), dst = size_t((z * e.ny + y) * e.nx);
      std::memcpy(b.u.data() + dst, g.u.data() + src, size_t(e.nx) * sizeof(T));
      std::memcpy(b.v.data() + dst, g.v.data() + src, size_t(e.nx) * sizeof(T));
      std::memcpy(b.w.data() + dst, g.w.data() + src, size_t(e.nx) * sizeof(T));
      if (!g.mask.empty()) std::memcpy(b.mask.data() + dst, g.mask.data() + src, size_t(e.nx));
    }
  return b;
}

template <class Field>
Result<std::vector<uint8_t>> compress_one_block(const Field& block, const BlockLayout3D& L, int b, const Options& o,
                                                double eb_abs, CompressStats* stats) {
  if (b < 0 || b >= L.count() || size_t(L.count()) != L.blocks.size())
    return invalid_argument(block_name(b) + " is not in the layout");
  const BlockExtent3D& e = L.blocks[size_t(b)];
  if (block.nx != e.nx || block.ny != e.ny || block.nz != e.nz)
    return invalid_argument(block_name(b) + " must be " + std::to_string(e.nx) + " x " + std::to_string(e.ny) + " x " +
                            std::to_string(e.nz) + ", got " + std::to_string(block.nx) + " x " +
                            std::to_string(block.ny) + " x " + std::to_string(block.nz));
  if (!std::isfinite(eb_abs) || eb_abs < 0) return invalid_argument("the absolute bound must be finite and >= 0");
  if (o.exact_edges > kFaceAll) return invalid_argument("exact_edges of a 3D field takes the face bits (FaceBits)");
  Options bo = o;
  bo.source.clear();  // the whole field's record goes after the file's last block, never in a block
  bo.bound_mode = BoundMode::abs;
  bo.bound = eb_abs;
  bo.exact_edges = uint8_t(o.exact_edges | L.shared_faces(b));
  return compress(block, bo, stats);
}

/// Cells per band: (first vertex, vertices) of each of p bands over n vertices, the rule of
/// make_block_layout.
std::vector<std::pair<int64_t, int64_t>> bands(int64_t n, int p) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t cells = n - 1, base = cells / p, extra = cells % p;
  int64_t at = 0;
  for (int i = 0; i < p; ++i) {
    const int64_t c = base + (i < extra ? 1 : 0);
    out.emplace_back(at, c + 1);
    at += c;
  }
  return out;
}

}  // namespace

uint8_t BlockLayout3D::shared_faces(int b) const {
  int bx, by, bz;
  band_of(*this, b, bx, by, bz);
  uint8_t f = 0;
  if (bx > 0) f |= kFaceXMin;
  if (bx < px - 1) f |= kFaceXMax;
  if (by > 0) f |= kFaceYMin;
  if (by < py - 1) f |= kFaceYMax;
  if (bz > 0) f |= kFaceZMin;
  if (bz < pz - 1) f |= kFaceZMax;
  return f;
}

Result<BlockLayout3D> make_block_layout3d(int64_t nx, int64_t ny, int64_t nz, int px, int py, int pz) {
  if (nx < 1 || ny < 1 || nz < 1) return invalid_argument("the grid must be at least 1 x 1 x 1");
  if (uint64_t(nx) > kMaxVertices / uint64_t(ny) || uint64_t(nx * ny) > kMaxVertices / uint64_t(nz))
    return invalid_argument("the grid has more than 2^40 vertices");
  if (px < 1 || py < 1 || pz < 1) return invalid_argument("--blocks needs PX >= 1, PY >= 1 and PZ >= 1");
  if (px > kMaxBlocks || py > kMaxBlocks || pz > kMaxBlocks || int64_t(px) * py * pz > kMaxBlocks)
    return invalid_argument("at most 2^20 blocks");
  const struct {
    const char* name;
    int p;
    int64_t n;
    const char* axis;
  } axes[3] = {{"PX", px, nx, "x"}, {"PY", py, ny, "y"}, {"PZ", pz, nz, "z"}};
  for (const auto& a : axes)
    if (a.p > 1 && a.p > a.n - 1)
      return invalid_argument(std::string(a.name) + " = " + std::to_string(a.p) + " blocks need at least " +
                              std::to_string(a.p) + " cells along " + a.axis + ", the grid has " +
                              std::to_string(a.n - 1));
  BlockLayout3D L;
  L.nx = nx;
  L.ny = ny;
  L.nz = nz;
  L.px = px;
  L.py = py;
  L.pz = pz;
  const auto bx = bands(nx, px), by = bands(ny, py), bz = bands(nz, pz);
  L.blocks.reserve(size_t(L.count()));
  for (int k = 0; k < pz; ++k)
    for (int j = 0; j < py; ++j)
      for (int i = 0; i < px; ++i)
        L.blocks.push_back({bx[size_t(i)].first, by[size_t(j)].first, bz[size_t(k)].first, bx[size_t(i)].second,
                            by[size_t(j)].second, bz[size_t(k)].second});
  return L;
}

ValueRange value_range_of(const VectorField3D& f) { return mb::range_of(f); }
ValueRange value_range_of(const VectorField3D64& f) { return mb::range_of(f); }

VectorField3D extract_block(const VectorField3D& g, const BlockExtent3D& e) { return extract(g, e); }
VectorField3D64 extract_block(const VectorField3D64& g, const BlockExtent3D& e) { return extract(g, e); }

Result<std::vector<uint8_t>> compress_block(const VectorField3D& block, const BlockLayout3D& L, int b,
                                            const Options& o, double eb_abs, CompressStats* stats) {
  return compress_one_block(block, L, b, o, eb_abs, stats);
}
Result<std::vector<uint8_t>> compress_block(const VectorField3D64& block, const BlockLayout3D& L, int b,
                                            const Options& o, double eb_abs, CompressStats* stats) {
  return compress_one_block(block, L, b, o, eb_abs, stats);
}

// ---- the version 3 and 4 files -------------------------------------------------------------

uint64_t multiblock3d_header_size(int blocks) { return kFixedHeader3D + kEntryBytes3D * uint64_t(blocks) + 4; }

bool is_multiblock3d(std::span<const uint8_t> bytes) {
  if (!is_multiblock(bytes) || bytes.size() < 6) return false;
  const uint64_t version = mb::base_version(get_le(bytes, 4, 2));
  return version == kVersion3D || version == kVersion3D64;
}

std::vector<uint8_t> multiblock3d_header(const BlockLayout3D& L, const Options& o, std::span<const uint64_t> lengths,
                                         DType dtype) {
  const bool float64 = dtype == DType::float64;
  std::vector<uint8_t> h;
  h.reserve(size_t(multiblock3d_header_size(L.count())));
  for (uint8_t c : kMagic) h.push_back(c);
  detail::put_le(h, multiblock_version(3, dtype, !o.source.empty()), 2);
  h.push_back(uint8_t(o.bound_mode));
  h.push_back(float64 ? uint8_t(DType::float64) : uint8_t(0));  // the data type byte (version 3: zero)
  detail::put_le(h, uint64_t(L.nx), 8);
  detail::put_le(h, uint64_t(L.ny), 8);
  detail::put_le(h, uint32_t(L.px), 4);
  detail::put_le(h, uint32_t(L.py), 4);
  detail::put_le(h, std::bit_cast<uint64_t>(o.bound), 8);
  detail::put_le(h, uint32_t(L.count()), 4);
  detail::put_le(h, detail::crc32c(h), 4);  // bytes 0..44, as in a 2D header
  detail::put_le(h, uint64_t(L.nz), 8);
  detail::put_le(h, uint32_t(L.pz), 4);
  detail::put_le(h, detail::crc32c(h), 4);  // bytes 0..60
  const size_t index_at = h.size();
  uint64_t offset = multiblock3d_header_size(L.count());
  for (int b = 0; b < L.count(); ++b) {
    const BlockExtent3D& e = L.blocks[size_t(b)];
    for (int64_t x : {e.x0, e.y0, e.z0, e.nx, e.ny, e.nz}) detail::put_le(h, uint64_t(x), 8);
    detail::put_le(h, offset, 8);
    detail::put_le(h, lengths[size_t(b)], 8);
    offset += lengths[size_t(b)];
  }
  detail::put_le(h, detail::crc32c(std::span<const uint8_t>(h).subspan(index_at)), 4);
  return h;
}

Result<MultiBlockIndex3D> parse_multiblock3d_index(std::span<const uint8_t> b, uint64_t file_size) {
  if (!is_multiblock(b)) return corrupt_stream("not a multi-block file (magic)");
  if (b.size() < 6) return corrupt_stream("multi-block header truncated");
  const uint64_t stored = get_le(b, 4, 2), version = mb::base_version(stored);
  if (version == 1 || version == 2)
    return invalid_argument("the multi-block file holds a 2D field: decode it with factz::decompress_multiblock "
                            "(or decompress_multiblock64)");
  if (version != kVersion3D && version != kVersion3D64)
    return Status(Code::unsupported_version,
                  "multi-block file version " + std::to_string(stored) + " (this build reads 1 to 8)");
  if (b.size() < kFixedHeader3D) return corrupt_stream("multi-block header truncated");
  if (get_le(b, 44, 4) != detail::crc32c(b.subspan(0, 44)) || get_le(b, 60, 4) != detail::crc32c(b.subspan(0, 60)))
    return corrupt_stream("multi-block header checksum mismatch");
  MultiBlockIndex3D ix;
  ix.has_source = mb::has_source_version(stored);
  ix.bound_mode = b[6];
  ix.dtype = version == kVersion3D64 ? DType::float64 : DType::float32;
  // Byte 7: zero in version 3 (float32 blocks), the data type 2 in version 4 (float64).
  const uint8_t dtype_byte = version == kVersion3D64 ? uint8_t(DType::float64) : uint8_t(0);
  if (ix.bound_mode > 1 || b[7] != dtype_byte)
    return corrupt_stream("multi-block header: bad bound mode or data type byte");
  const uint64_t nx = get_le(b, 8, 8), ny = get_le(b, 16, 8), nz = get_le(b, 48, 8);
  const uint64_t px = get_le(b, 24, 4), py = get_le(b, 28, 4), pz = get_le(b, 56, 4), count = get_le(b, 40, 4);
  ix.bound_value = std::bit_cast<double>(get_le(b, 32, 8));
  if (nx < 1 || ny < 1 || nz < 1 || nx > kMaxVertices || ny > kMaxVertices || nz > kMaxVertices ||
      nx > kMaxVertices / ny || nx * ny > kMaxVertices / nz)
    return corrupt_stream("multi-block header: grid size out of range");
  const uint64_t maxb = uint64_t(kMaxBlocks);
  if (px < 1 || py < 1 || pz < 1 || px > maxb || py > maxb || pz > maxb || count < 1 || count > maxb ||
      px * py * pz != count)
    return corrupt_stream("multi-block header: block counts are inconsistent");
  if (!std::isfinite(ix.bound_value) || ix.bound_value < 0) return corrupt_stream("multi-block header: bad bound");
  ix.header_bytes = multiblock3d_header_size(int(count));
  // Checked before the layout is built: the count sizes it, and the bytes must be there.
  if (b.size() < ix.header_bytes || (file_size != 0 && file_size < ix.header_bytes))
    return corrupt_stream("multi-block index truncated");
  const auto index = b.subspan(size_t(kFixedHeader3D), size_t(kEntryBytes3D * count));
  if (get_le(b, size_t(kFixedHeader3D + kEntryBytes3D * count), 4) != detail::crc32c(index))
    return corrupt_stream("multi-block index checksum mismatch");
  auto layout = make_block_layout3d(int64_t(nx), int64_t(ny), int64_t(nz), int(px), int(py), int(pz));
  if (!layout.ok()) return corrupt_stream("multi-block header: " + layout.status().message());
  ix.layout = std::move(layout).value();
  uint64_t expect = ix.header_bytes;
  ix.entries.reserve(size_t(count));
  for (uint64_t k = 0; k < count; ++k) {
    const size_t at = size_t(k * kEntryBytes3D);
    const BlockExtent3D& e = ix.layout.blocks[size_t(k)];
    const int64_t want[6] = {e.x0, e.y0, e.z0, e.nx, e.ny, e.nz};
    for (int f = 0; f < 6; ++f)
      if (get_le(index, at + size_t(8 * f), 8) != uint64_t(want[f]))
        return corrupt_stream("multi-block index: " + block_name(int(k)) + " does not match the layout");
    MultiBlockIndex::Entry en{get_le(index, at + 48, 8), get_le(index, at + 56, 8)};
    if (en.offset != expect || en.length < kMinStream || en.length > (uint64_t(1) << 62))
      return corrupt_stream("multi-block index: " + block_name(int(k)) + " byte range is invalid");
    expect += en.length;
    ix.entries.push_back(en);
  }
  FACTZ_RETURN_IF_ERROR(mb::finish_index(ix, expect, file_size));
  return ix;
}

namespace {

/// The file at `path` opened for reading, its size, and its validated header and index
/// (only those bytes are read).
Result<MultiBlockIndex3D> open_index(const std::string& path, std::ifstream& in, uint64_t& size) {
  FACTZ_RETURN_IF_ERROR(mb::open_file(path, in, size));
  std::vector<uint8_t> head;
  FACTZ_RETURN_IF_ERROR(mb::read_header(in, path, size, head));
  return parse_multiblock3d_index(head, size);
}

/// Block b's stream holds the extent its index entry says and the file's data type.
Status check_block_stream(const MultiBlockIndex3D& ix, int b, std::span<const uint8_t> bytes) {
  const BlockExtent3D& e = ix.layout.blocks[size_t(b)];
  auto dims = stream_dims3d(bytes);
  if (!dims.ok()) return Status(dims.status().code(), block_name(b) + ": " + dims.status().message());
  const auto& d = dims.value();
  if (d[0] != e.nx || d[1] != e.ny || d[2] != e.nz)
    return corrupt_stream(block_name(b) + " holds a " + std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " +
                          std::to_string(d[2]) + " field, its index says " + std::to_string(e.nx) + " x " +
                          std::to_string(e.ny) + " x " + std::to_string(e.nz));
  auto dtype = stream_dtype3d(bytes);
  if (!dtype.ok()) return Status(dtype.status().code(), block_name(b) + ": " + dtype.status().message());
  if (dtype.value() != ix.dtype)
    return corrupt_stream(block_name(b) + " holds " + dtype_name(dtype.value()) + " values, the file's header says " +
                          dtype_name(ix.dtype));
  return Status::Ok();
}

/// Copies the part of decoded block b (`blk`, its whole extent) that b owns inside the window
/// `r` into `out` (the window's field), with its mask when one of those vertices is missing
/// (`out`'s mask is then allocated, all valid, the first time a block needs it; `mask_lock`
/// guards that when blocks decode in parallel).
template <class Field>
void place_block(const BlockLayout3D& L, int b, const Field& blk, const Region3D& r, Field& out,
                 std::mutex& mask_lock) {
  using T = ValueOf<Field>;
  const BlockExtent3D& e = L.blocks[size_t(b)];
  const Region3D w = owned_part(L, b, r);
  if (is_empty(w)) return;
  const size_t row = size_t(w.x1 - w.x0);
  auto src_of = [&](int64_t y, int64_t z) { return size_t(((z - e.z0) * e.ny + (y - e.y0)) * e.nx + (w.x0 - e.x0)); };
  auto dst_of = [&](int64_t y, int64_t z) {
    return size_t(((z - r.z0) * out.ny + (y - r.y0)) * out.nx + (w.x0 - r.x0));
  };
  bool masked = false;
  if (!blk.mask.empty())
    for (int64_t z = w.z0; z < w.z1 && !masked; ++z)
      for (int64_t y = w.y0; y < w.y1 && !masked; ++y) {
        const uint8_t* m = blk.mask.data() + src_of(y, z);
        masked = std::find_if(m, m + row, [](uint8_t x) { return x != 0; }) != m + row;
      }
  if (masked) {
    const std::lock_guard<std::mutex> hold(mask_lock);
    if (out.mask.empty()) out.mask.assign(size_t(out.nx * out.ny * out.nz), uint8_t(0));
  }
  for (int64_t z = w.z0; z < w.z1; ++z)
    for (int64_t y = w.y0; y < w.y1; ++y) {
      const size_t src = src_of(y, z), dst = dst_of(y, z);
      std::memcpy(out.u.data() + dst, blk.u.data() + src, row * sizeof(T));
      std::memcpy(out.v.data() + dst, blk.v.data() + src, row * sizeof(T));
      std::memcpy(out.w.data() + dst, blk.w.data() + src, row * sizeof(T));
      if (masked) std::memcpy(out.mask.data() + dst, blk.mask.data() + src, row);
    }
}

/// Decodes block b's stream as Field after checking it against the index.
template <class Field>
Result<Field> decode_block(const MultiBlockIndex3D& ix, int b, std::span<const uint8_t> bytes,
                           const DecompressOptions& d) {
  FACTZ_RETURN_IF_ERROR(check_block_stream(ix, b, bytes));
  auto f = decode_as<Field>(bytes, d);
  if (!f.ok()) return Status(f.status().code(), block_name(b) + ": " + f.status().message());
  return f;
}

/// A window's field (allocated, mask empty).
template <class Field>
Field window_field(const Region3D& r) {
  Field out;
  out.nx = r.x1 - r.x0;
  out.ny = r.y1 - r.y0;
  out.nz = r.z1 - r.z0;
  const size_t n = size_t(out.nx * out.ny * out.nz);
  for (auto* plane : {&out.u, &out.v, &out.w}) detail::resize_fresh(*plane, n);  // huge pages before the zero fill
  return out;
}

template <class Field>
Result<std::vector<uint8_t>> compress_all_blocks(const Field& f, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  auto layout = make_block_layout3d(f.nx, f.ny, f.nz, px, py, pz);
  if (!layout.ok()) return layout.status();
  return mb::compress_all_blocks(f, layout.value(), o, stats,
                                 [](const BlockLayout3D& L, const Options& opt, std::span<const uint64_t> lengths,
                                    DType dtype) { return multiblock3d_header(L, opt, lengths, dtype); });
}

template <class Field>
Result<Field> decompress_all_blocks(std::span<const uint8_t> file, const DecompressOptions& d) {
  auto ix = parse_multiblock3d_index(file, file.size());
  if (!ix.ok()) return ix.status();
  const MultiBlockIndex3D& I = ix.value();
  FACTZ_RETURN_IF_ERROR(require_file_dtype(I.dtype, kDTypeOf<Field>));
  // The whole file is here: a damaged record makes it corrupt, as a stream's section 12 does.
  if (I.has_source) FACTZ_RETURN_IF_ERROR(multiblock_source(file).status());
  const Region3D all{0, 0, 0, I.layout.nx, I.layout.ny, I.layout.nz};
  Field out;
  try {
    out = window_field<Field>(all);
    FACTZ_RETURN_IF_ERROR(mb::decode_all_blocks<mb::NoScratch>(
        file, I, d, [&](int b, std::span<const uint8_t> s) { return check_block_stream(I, b, s); },
        [&](int b, std::span<const uint8_t> s, const DecompressOptions& inner, mb::NoScratch&, std::mutex& lock) {
          auto blk = decode_block<Field>(I, b, s, inner);
          if (!blk.ok()) return blk.status();
          place_block(I.layout, b, blk.value(), all, out, lock);
          return Status::Ok();
        }));
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding a multi-block field");
  }
  return out;
}

template <class Field>
Result<Field> decompress_one_block(std::span<const uint8_t> file, int b, const DecompressOptions& d) {
  auto ix = parse_multiblock3d_index(file, file.size());
  if (!ix.ok()) return ix.status();
  FACTZ_RETURN_IF_ERROR(require_file_dtype(ix->dtype, kDTypeOf<Field>));
  if (b < 0 || b >= ix->layout.count())
    return invalid_argument(block_name(b) + " is not in the file (it has " + std::to_string(ix->layout.count()) +
                            " blocks)");
  const auto& en = ix->entries[size_t(b)];
  try {
    return decode_block<Field>(ix.value(), b, file.subspan(size_t(en.offset), size_t(en.length)), d);
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding " + block_name(b));
  }
}

template <class Field>
Result<Field> decompress_window(const std::string& path, const Region3D& r, const DecompressOptions& d,
                                RegionStats* stats) {
  std::ifstream in;
  uint64_t size = 0;
  auto ix = open_index(path, in, size);
  if (!ix.ok()) return ix.status();
  const MultiBlockIndex3D& I = ix.value();
  FACTZ_RETURN_IF_ERROR(require_file_dtype(I.dtype, kDTypeOf<Field>));
  const BlockLayout3D& L = I.layout;
  if (r.x0 < 0 || r.y0 < 0 || r.z0 < 0 || r.x1 > L.nx || r.y1 > L.ny || r.z1 > L.nz || is_empty(r))
    return invalid_argument("the region [" + std::to_string(r.x0) + ", " + std::to_string(r.x1) + ") x [" +
                            std::to_string(r.y0) + ", " + std::to_string(r.y1) + ") x [" + std::to_string(r.z0) +
                            ", " + std::to_string(r.z1) + ") is empty or outside the " + std::to_string(L.nx) +
                            " x " + std::to_string(L.ny) + " x " + std::to_string(L.nz) + " grid");
  std::vector<int> needed;  // the blocks owning a vertex of the window, in block order
  for (int b = 0; b < L.count(); ++b)
    if (!is_empty(owned_part(L, b, r))) needed.push_back(b);
  RegionStats st;
  try {
    Field out = window_field<Field>(r);
    FACTZ_RETURN_IF_ERROR(mb::decode_window_blocks<mb::NoScratch>(
        in, path, I, needed, st, [&](int b, std::span<const uint8_t> s, mb::NoScratch&, std::mutex& lock) {
          auto blk = decode_block<Field>(I, b, s, d);
          if (!blk.ok()) return blk.status();
          place_block(L, b, blk.value(), r, out, lock);
          return Status::Ok();
        }));
    if (stats) *stats = st;
    return out;
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding a region");
  }
}

}  // namespace

Result<MultiBlockIndex3D> read_multiblock3d_index(const std::string& path) {
  std::ifstream in;
  uint64_t size = 0;
  return open_index(path, in, size);
}

Result<std::vector<uint8_t>> compress_multiblock(const VectorField3D& f, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats) {
  return compress_all_blocks(f, o, px, py, pz, stats);
}
Result<std::vector<uint8_t>> compress_multiblock(const VectorField3D64& f, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats) {
  return compress_all_blocks(f, o, px, py, pz, stats);
}

Result<VectorField3D> decompress_multiblock3d(std::span<const uint8_t> file, const DecompressOptions& d) {
  return decompress_all_blocks<VectorField3D>(file, d);
}
Result<VectorField3D64> decompress_multiblock3d64(std::span<const uint8_t> file, const DecompressOptions& d) {
  return decompress_all_blocks<VectorField3D64>(file, d);
}

Result<VectorField3D> decompress_block3d(std::span<const uint8_t> file, int b, const DecompressOptions& d) {
  return decompress_one_block<VectorField3D>(file, b, d);
}
Result<VectorField3D64> decompress_block3d64(std::span<const uint8_t> file, int b, const DecompressOptions& d) {
  return decompress_one_block<VectorField3D64>(file, b, d);
}

Result<VectorField3D> decompress_region3d(const std::string& path, const Region3D& r, const DecompressOptions& d,
                                          RegionStats* stats) {
  return decompress_window<VectorField3D>(path, r, d, stats);
}
Result<VectorField3D64> decompress_region3d64(const std::string& path, const Region3D& r, const DecompressOptions& d,
                                              RegionStats* stats) {
  return decompress_window<VectorField3D64>(path, r, d, stats);
}

}  // namespace factz
