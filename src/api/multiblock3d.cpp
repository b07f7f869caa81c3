// Domain decomposition of 3D vector fields with shared, exactly stored block faces, and the
// version 3 multi-block file (docs/multiblock.md "3D blocks", docs/format.md "Multi-block
// files"). One implementation for every 3D field type: the functions below are templates on
// the field type (Field = VectorField3D today, T its value type) behind the public overloads,
// as src/api/multiblock.cpp is for 2D fields; a float64 3D field adds an overload, its
// decoder in decode_as and its file version in kVersionOf.
#include "factz/multiblock3d.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>

#include <omp.h>

#include "factz/topology3d.hpp"
#include "format/crc32.hpp"
#include "util/byte_io.hpp"

namespace factz {
namespace {

constexpr uint8_t kMagic[4] = {'F', 'Z', 'M', 'B'};
/// Version 3: float32 3D blocks (header byte 7 zero). Versions 1 and 2 are the 2D files; a
/// build that reads only those answers unsupported_version for a 3D file.
constexpr uint16_t kVersion3D = 3;
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

uint64_t get_le(std::span<const uint8_t> b, size_t at, int bytes) {
  uint64_t x = 0;
  for (int k = 0; k < bytes; ++k) x |= uint64_t(b[at + size_t(k)]) << (8 * k);
  return x;
}

template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;
/// The data type of a field type's streams.
template <class Field>
constexpr DType kDTypeOf = sizeof(ValueOf<Field>) == 8 ? DType::float64 : DType::float32;

/// The one decoder of a field type's block streams.
template <class Field>
Result<Field> decode_as(std::span<const uint8_t> stream, const DecompressOptions& d);
template <>
Result<VectorField3D> decode_as<VectorField3D>(std::span<const uint8_t> stream, const DecompressOptions& d) {
  return decompress3d(stream, d);
}

std::string block_name(int b) { return "block " + std::to_string(b); }

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
ValueRange range_of(const Field& f) {
  // Over the valid vertices, as compress() computes it (missing ones hold NaN or fill values).
  ValueRange r;
  const int64_t n = f.size();
  const std::vector<uint8_t> missing = missing_mask(f);
  for (int64_t k = 0; k < n; ++k) {
    if (!missing.empty() && missing[size_t(k)]) continue;
    const double u = double(f.u[size_t(k)]), v = double(f.v[size_t(k)]), w = double(f.w[size_t(k)]);
    if (r.empty) {
      r.lo = r.hi = u;
      r.empty = false;
    }
    r.lo = std::min({r.lo, u, v, w});
    r.hi = std::max({r.hi, u, v, w});
  }
  return r;
}

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

ValueRange value_range_of(const VectorField3D& f) { return range_of(f); }

VectorField3D extract_block(const VectorField3D& g, const BlockExtent3D& e) { return extract(g, e); }

Result<std::vector<uint8_t>> compress_block(const VectorField3D& block, const BlockLayout3D& L, int b,
                                            const Options& o, double eb_abs, CompressStats* stats) {
  return compress_one_block(block, L, b, o, eb_abs, stats);
}

// ---- the version 3 file --------------------------------------------------------------------

uint64_t multiblock3d_header_size(int blocks) { return kFixedHeader3D + kEntryBytes3D * uint64_t(blocks) + 4; }

bool is_multiblock3d(std::span<const uint8_t> bytes) {
  return is_multiblock(bytes) && bytes.size() >= 6 && get_le(bytes, 4, 2) == kVersion3D;
}

std::vector<uint8_t> multiblock3d_header(const BlockLayout3D& L, const Options& o, std::span<const uint64_t> lengths,
                                         DType /*dtype: float32 only so far (version 3)*/) {
  std::vector<uint8_t> h;
  h.reserve(size_t(multiblock3d_header_size(L.count())));
  for (uint8_t c : kMagic) h.push_back(c);
  detail::put_le(h, kVersion3D, 2);
  h.push_back(uint8_t(o.bound_mode));
  h.push_back(0);  // the data type byte: float32 (version 3)
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
  const uint64_t version = get_le(b, 4, 2);
  if (version == 1 || version == 2)
    return invalid_argument("the multi-block file holds a 2D field: decode it with factz::decompress_multiblock "
                            "(or decompress_multiblock64)");
  if (version != kVersion3D)
    return Status(Code::unsupported_version,
                  "multi-block file version " + std::to_string(version) + " (this build reads 1, 2 and 3)");
  if (b.size() < kFixedHeader3D) return corrupt_stream("multi-block header truncated");
  if (get_le(b, 44, 4) != detail::crc32c(b.subspan(0, 44)) || get_le(b, 60, 4) != detail::crc32c(b.subspan(0, 60)))
    return corrupt_stream("multi-block header checksum mismatch");
  MultiBlockIndex3D ix;
  ix.bound_mode = b[6];
  if (ix.bound_mode > 1 || b[7] != 0) return corrupt_stream("multi-block header: bad bound mode or data type byte");
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
  ix.file_bytes = expect;
  if (file_size != 0 && file_size != expect)
    return corrupt_stream("multi-block file is " + std::to_string(file_size) + " bytes, its index says " +
                          std::to_string(expect));
  return ix;
}

namespace {

/// Reads `n` bytes at `offset` of the open file `in` (`path` in messages).
Status read_at(std::ifstream& in, const std::string& path, uint64_t offset, uint64_t n, std::vector<uint8_t>& out) {
  out.resize(size_t(n));
  in.seekg(std::streamoff(offset));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n));
  if (!in || uint64_t(in.gcount()) != n)
    return io_error("cannot read " + std::to_string(n) + " bytes of '" + path + "'");
  return Status::Ok();
}

/// The file at `path` opened for reading, its size, and its validated header and index
/// (only those bytes are read).
Result<MultiBlockIndex3D> open_index(const std::string& path, std::ifstream& in, uint64_t& size) {
  in.open(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  size = uint64_t(in.tellg());
  std::vector<uint8_t> head;
  if (size < kMultiBlockPrefixBytes) return corrupt_stream("'" + path + "' is too short for a multi-block file");
  FACTZ_RETURN_IF_ERROR(read_at(in, path, 0, kMultiBlockPrefixBytes, head));
  auto header_size = multiblock_header_size_from_prefix(head);
  if (!header_size.ok()) return header_size.status();
  if (header_size.value() > size) return corrupt_stream("multi-block index truncated");
  FACTZ_RETURN_IF_ERROR(read_at(in, path, 0, header_size.value(), head));
  return parse_multiblock3d_index(head, size);
}

/// Block b's stream holds the extent its index entry says.
Status check_block_stream(const MultiBlockIndex3D& ix, int b, std::span<const uint8_t> bytes) {
  const BlockExtent3D& e = ix.layout.blocks[size_t(b)];
  auto dims = stream_dims3d(bytes);
  if (!dims.ok()) return Status(dims.status().code(), block_name(b) + ": " + dims.status().message());
  const auto& d = dims.value();
  if (d[0] != e.nx || d[1] != e.ny || d[2] != e.nz)
    return corrupt_stream(block_name(b) + " holds a " + std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " +
                          std::to_string(d[2]) + " field, its index says " + std::to_string(e.nx) + " x " +
                          std::to_string(e.ny) + " x " + std::to_string(e.nz));
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
  out.u.resize(n);
  out.v.resize(n);
  out.w.resize(n);
  return out;
}

template <class Field>
Result<std::vector<uint8_t>> compress_all_blocks(const Field& f, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  auto layout = make_block_layout3d(f.nx, f.ny, f.nz, px, py, pz);
  if (!layout.ok()) return layout.status();
  const BlockLayout3D& L = layout.value();
  auto eb = absolute_bound(o, value_range_of(f));
  if (!eb.ok()) return eb.status();
  // Blocks compress in parallel, one thread each, when there are enough of them to share;
  // otherwise one after the other with the threads inside. The bytes are the same.
  const int count = L.count();
  const int threads = o.policy != Policy::omp ? 1 : (o.threads > 0 ? o.threads : omp_get_max_threads());
  const bool outer = threads > 1 && count >= threads;
  Options inner = o;
  inner.progress = {};  // the file reports per block (below), not each block's stages
  if (outer) {
    inner.policy = Policy::serial;
    inner.threads = 1;
  }
  int done = 0;
  std::vector<std::vector<uint8_t>> streams(static_cast<size_t>(count));
  std::vector<uint64_t> lengths(static_cast<size_t>(count));
  std::vector<CompressStats> block_stats(static_cast<size_t>(count));
  std::vector<Status> status(static_cast<size_t>(count));
  try {
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer ? threads : 1)
    for (int b = 0; b < count; ++b) {
      try {  // no exception may leave an OpenMP region
        auto s = compress_one_block(extract(f, L.blocks[size_t(b)]), L, b, inner, eb.value(), &block_stats[size_t(b)]);
        if (s.ok()) {
          lengths[size_t(b)] = s.value().size();
          streams[size_t(b)] = std::move(s).value();
          if (o.progress) {
#pragma omp critical(factz_multiblock3d_progress)
            o.progress(Progress{"block", 0.99 * double(++done) / double(count)});
          }
        } else {
          status[size_t(b)] = Status(s.status().code(), block_name(b) + ": " + s.status().message());
        }
      } catch (const std::bad_alloc&) {
        status[size_t(b)] = Status(Code::internal, "out of memory compressing " + block_name(b));
      }
    }
    for (const Status& st : status) FACTZ_RETURN_IF_ERROR(st);
    CompressStats total;
    for (const CompressStats& st : block_stats) {
      total.eb_abs = st.eb_abs;
      total.exact_vertices += st.exact_vertices;  // a shared vertex counts in each block
      total.repair_rounds = std::max(total.repair_rounds, st.repair_rounds);
      total.repaired_vertices += st.repaired_vertices;
    }
    const std::vector<uint8_t> missing = missing_mask(f);
    total.masked_vertices = std::count(missing.begin(), missing.end(), uint8_t(1));
    std::vector<uint8_t> out = multiblock3d_header(L, o, lengths, kDTypeOf<Field>);
    for (auto& s : streams) {
      out.insert(out.end(), s.begin(), s.end());
      std::vector<uint8_t>().swap(s);
    }
    if (stats) *stats = std::move(total);
    if (o.progress) o.progress(Progress{"container", 1.0});
    return out;
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a multi-block field");
  }
}

template <class Field>
Result<Field> decompress_all_blocks(std::span<const uint8_t> file, const DecompressOptions& d) {
  auto ix = parse_multiblock3d_index(file, file.size());
  if (!ix.ok()) return ix.status();
  const MultiBlockIndex3D& I = ix.value();
  // Every block's own header must agree with the index before the whole grid is allocated.
  for (int b = 0; b < I.layout.count(); ++b) {
    const auto& en = I.entries[size_t(b)];
    FACTZ_RETURN_IF_ERROR(check_block_stream(I, b, file.subspan(size_t(en.offset), size_t(en.length))));
  }
  const int threads = d.policy != Policy::omp ? 1 : (d.threads > 0 ? d.threads : omp_get_max_threads());
  const int count = I.layout.count();
  const bool outer = threads > 1 && count >= threads;
  const DecompressOptions inner = outer ? DecompressOptions{Policy::serial, 1} : d;
  const Region3D all{0, 0, 0, I.layout.nx, I.layout.ny, I.layout.nz};
  std::vector<Status> status(static_cast<size_t>(count));
  Field out;
  try {
    out = window_field<Field>(all);
    std::mutex mask_lock;
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer ? threads : 1)
    for (int b = 0; b < count; ++b) {
      const auto& en = I.entries[size_t(b)];
      try {  // no exception may leave an OpenMP region
        auto blk = decode_block<Field>(I, b, file.subspan(size_t(en.offset), size_t(en.length)), inner);
        if (blk.ok()) place_block(I.layout, b, blk.value(), all, out, mask_lock);
        else status[size_t(b)] = blk.status();
      } catch (const std::bad_alloc&) {
        status[size_t(b)] = Status(Code::internal, "out of memory decoding " + block_name(b));
      }
    }
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory decoding a multi-block field");
  }
  for (const Status& st : status) FACTZ_RETURN_IF_ERROR(st);
  return out;
}

template <class Field>
Result<Field> decompress_one_block(std::span<const uint8_t> file, int b, const DecompressOptions& d) {
  auto ix = parse_multiblock3d_index(file, file.size());
  if (!ix.ok()) return ix.status();
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
  const BlockLayout3D& L = I.layout;
  if (r.x0 < 0 || r.y0 < 0 || r.z0 < 0 || r.x1 > L.nx || r.y1 > L.ny || r.z1 > L.nz || is_empty(r))
    return invalid_argument("the region [" + std::to_string(r.x0) + ", " + std::to_string(r.x1) + ") x [" +
                            std::to_string(r.y0) + ", " + std::to_string(r.y1) + ") x [" + std::to_string(r.z0) +
                            ", " + std::to_string(r.z1) + ") is empty or outside the " + std::to_string(L.nx) +
                            " x " + std::to_string(L.ny) + " x " + std::to_string(L.nz) + " grid");
  RegionStats st;
  st.bytes_read = I.header_bytes;
  std::mutex mask_lock;
  try {
    Field out = window_field<Field>(r);
    std::vector<uint8_t> buf;
    for (int b = 0; b < L.count(); ++b) {
      if (is_empty(owned_part(L, b, r))) continue;
      const auto& en = I.entries[size_t(b)];
      FACTZ_RETURN_IF_ERROR(read_at(in, path, en.offset, en.length, buf));
      auto blk = decode_block<Field>(I, b, buf, d);
      if (!blk.ok()) return blk.status();
      place_block(L, b, blk.value(), r, out, mask_lock);
      ++st.blocks_decoded;
      st.bytes_read += en.length;
    }
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

Result<VectorField3D> decompress_multiblock3d(std::span<const uint8_t> file, const DecompressOptions& d) {
  return decompress_all_blocks<VectorField3D>(file, d);
}

Result<VectorField3D> decompress_block3d(std::span<const uint8_t> file, int b, const DecompressOptions& d) {
  return decompress_one_block<VectorField3D>(file, b, d);
}

Result<VectorField3D> decompress_region3d(const std::string& path, const Region3D& r, const DecompressOptions& d,
                                          RegionStats* stats) {
  return decompress_window<VectorField3D>(path, r, d, stats);
}

}  // namespace factz
