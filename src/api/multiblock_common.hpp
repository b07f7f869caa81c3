// The orchestration that 2D (src/api/multiblock.cpp) and 3D (src/api/multiblock3d.cpp)
// multi-block files share, written once: templates on the field type (VectorField2D,
// VectorField2D64, VectorField3D, VectorField3D64) and the layout, that call the public
// per-type overloads (value_range_of, extract_block, compress_block) and take the
// format-specific steps (header, stream checks, placing a block in the output) as callables.
// What stays in each file is what differs: the layout rule, the header and index layout, and
// how a decoded block's owned part is copied out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <omp.h>

#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "codec/zstd_stage.hpp"
#include "format/crc32.hpp"
#include "streams/source_section.hpp"

namespace factz::mb {

inline uint64_t get_le(std::span<const uint8_t> b, size_t at, int bytes) {
  uint64_t x = 0;
  for (int k = 0; k < bytes; ++k) x |= uint64_t(b[at + size_t(k)]) << (8 * k);
  return x;
}

template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;
/// The data type of a field type's streams.
template <class Field>
constexpr DType kDTypeOf = sizeof(ValueOf<Field>) == 8 ? DType::float64 : DType::float32;
/// Whether a field type has a third component (w) and axis (nz).
template <class Field>
constexpr bool kIs3D = requires(const Field& f) { f.w; f.nz; };

inline std::string block_name(int b) { return "block " + std::to_string(b); }

// ---- the source record after the last block (versions 5 to 8) ----------------------------

/// Versions 5 to 8 are versions 1 to 4 with a source record after the last block.
inline constexpr uint64_t kSourceVersionStep = 4;
/// A version without its record: 1 to 4 (others unchanged, for the unsupported message).
inline uint64_t base_version(uint64_t v) { return v >= 5 && v <= 8 ? v - kSourceVersionStep : v; }
inline bool has_source_version(uint64_t v) { return v >= 5 && v <= 8; }
/// The trailer's bytes beyond the stored record: the record's length (u64), its coding (u8:
/// 0 raw, 1 one zstd frame) and a CRC-32C of everything before it (u32).
inline constexpr uint64_t kTrailerOverhead = 13;
inline constexpr uint8_t kTrailerRaw = 0, kTrailerZstd = 1;

/// Sets the index's end of blocks, record length and file size from the end of its last
/// block and the file's size (0: not known, the record's length stays 0); corrupt_stream when
/// the size is not the one the index (and a record of at least one byte) allows.
template <class Index>
Status finish_index(Index& ix, uint64_t blocks_end, uint64_t file_size) {
  ix.blocks_end = ix.file_bytes = blocks_end;
  if (ix.has_source && file_size != 0) {
    if (file_size < blocks_end + kTrailerOverhead + 1)
      return corrupt_stream("multi-block file is " + std::to_string(file_size) + " bytes, its index and source " +
                            "record need at least " + std::to_string(blocks_end + kTrailerOverhead + 1));
    ix.source_bytes = file_size - blocks_end - kTrailerOverhead;
    ix.file_bytes = file_size;
  }
  if (file_size != 0 && file_size != ix.file_bytes)
    return corrupt_stream("multi-block file is " + std::to_string(file_size) + " bytes, its index says " +
                          std::to_string(ix.file_bytes));
  return Status::Ok();
}

/// The record of a trailer (`t`: from the end of the last block to the end of the file),
/// checked as a stream's section 12: it decodes and describes a field of `components`
/// components whose whole dimensions are `whole` (outermost first).
inline Result<SourceRecord> record_of_trailer(std::span<const uint8_t> t, int components,
                                              std::span<const uint64_t> whole) {
  if (t.size() < kTrailerOverhead + 1) return corrupt_stream("multi-block source record truncated");
  const uint64_t stored = t.size() - kTrailerOverhead, length = get_le(t, 0, 8);
  const uint8_t coding = t[8];
  if (get_le(t, size_t(9 + stored), 4) != detail::crc32c(t.subspan(0, size_t(9 + stored))))
    return corrupt_stream("multi-block source record checksum mismatch");
  if (coding > kTrailerZstd || (coding == kTrailerRaw && length != stored) || length == 0)
    return corrupt_stream("multi-block source record: its coding (" + std::to_string(coding) + ") or length (" +
                          std::to_string(length) + " bytes) does not fit the " + std::to_string(stored) +
                          " bytes stored");
  std::vector<uint8_t> raw;
  std::span<const uint8_t> bytes = t.subspan(9, size_t(stored));
  if (coding == kTrailerZstd) {
    const Status st = detail::zstd_decompress(bytes, length, raw);
    if (!st.ok()) return corrupt_stream("multi-block source record: " + st.message());
    bytes = raw;
  }
  auto record = decode_source_record(bytes);
  if (!record.ok()) return corrupt_stream("multi-block source record: " + record.status().message());
  const Status fits = check_source_record(record.value(), components, whole);
  if (!fits.ok()) return corrupt_stream("multi-block source record: " + fits.message());
  return record;
}

/// The value range over every component of the valid vertices, as compress() computes a REL
/// bound (missing vertices hold NaN or fill values).
template <class Field>
ValueRange range_of(const Field& f) {
  ValueRange r;
  const int64_t n = f.size();
  const std::vector<uint8_t> missing = missing_mask(f);
  for (int64_t k = 0; k < n; ++k) {
    if (!missing.empty() && missing[size_t(k)]) continue;
    const double u = double(f.u[size_t(k)]), v = double(f.v[size_t(k)]);
    if (r.empty) {
      r.lo = r.hi = u;
      r.empty = false;
    }
    if constexpr (kIs3D<Field>) {
      const double w = double(f.w[size_t(k)]);
      r.lo = std::min({r.lo, u, v, w});
      r.hi = std::max({r.hi, u, v, w});
    } else {
      r.lo = std::min({r.lo, u, v});
      r.hi = std::max({r.hi, u, v});
    }
  }
  return r;
}

/// Threads available to the block loop: one for serial and CUDA policies (blocks go to the
/// device one after the other, never to CPU threads).
inline int block_threads(Policy policy, int threads) {
  return policy != Policy::omp ? 1 : (threads > 0 ? threads : omp_get_max_threads());
}

/// Runs body(b, scratch) for every block b: in parallel, one thread each, when `outer`
/// (enough blocks to share the threads), else one after the other. Each thread has its own
/// Scratch. The first failure in block order is returned; no exception leaves the loop.
template <class Scratch, class Body>
Status for_each_block(int count, bool outer, int threads, const char* doing, Body&& body) {
  std::vector<Status> status(static_cast<size_t>(count));
#pragma omp parallel num_threads(outer ? threads : 1)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < count; ++b) {
      try {  // no exception may leave an OpenMP region
        status[size_t(b)] = body(b, scratch);
      } catch (const std::bad_alloc&) {
        status[size_t(b)] = Status(Code::internal, std::string("out of memory ") + doing + " " + block_name(b));
      }
    }
  }
  for (const Status& st : status) FACTZ_RETURN_IF_ERROR(st);
  return Status::Ok();
}

struct NoScratch {};

/// One process, all blocks of layout L: each block compressed by compress_block with the
/// bound resolved over the whole field, then header(L, o, lengths, dtype) and the streams in
/// block order. The bytes do not depend on the thread count: blocks compress in parallel, one
/// thread each, when there are enough of them to share, otherwise one after the other with
/// the threads inside.
template <class Field, class Layout, class Header>
Result<std::vector<uint8_t>> compress_all_blocks(const Field& f, const Layout& L, const Options& o,
                                                 CompressStats* stats, Header&& header) {
  auto eb = absolute_bound(o, value_range_of(f));
  if (!eb.ok()) return eb.status();
  if (!o.source.empty()) {  // the whole field's record, after the last block (compress_block drops it)
    std::vector<uint64_t> whole;
    if constexpr (kIs3D<Field>) whole = detail::record_grid(uint64_t(f.nx), uint64_t(f.ny), uint64_t(f.nz), 3);
    else whole = detail::record_grid(uint64_t(f.nx), uint64_t(f.ny), 1, 2);
    FACTZ_RETURN_IF_ERROR(detail::check_source_bytes(o.source, kIs3D<Field> ? 3 : 2, whole, "Options::source"));
  }
  const int count = L.count();
  const int threads = block_threads(o.policy, o.threads);
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
  try {
    const Status st = for_each_block<NoScratch>(count, outer, threads, "compressing", [&](int b, NoScratch&) {
      auto s = compress_block(extract_block(f, L.blocks[size_t(b)]), L, b, inner, eb.value(), &block_stats[size_t(b)]);
      if (!s.ok()) return Status(s.status().code(), block_name(b) + ": " + s.status().message());
      lengths[size_t(b)] = s.value().size();
      streams[size_t(b)] = std::move(s).value();
      if (o.progress) {
#pragma omp critical(factz_multiblock_progress)
        o.progress(Progress{"block", 0.99 * double(++done) / double(count)});
      }
      return Status::Ok();
    });
    FACTZ_RETURN_IF_ERROR(st);
    CompressStats total;
    for (const CompressStats& s : block_stats) {
      total.eb_abs = s.eb_abs;
      total.exact_vertices += s.exact_vertices;  // a shared vertex counts in each block
      total.repair_rounds = std::max(total.repair_rounds, s.repair_rounds);
      total.repaired_vertices += s.repaired_vertices;
    }
    const std::vector<uint8_t> missing = missing_mask(f);
    total.masked_vertices = std::count(missing.begin(), missing.end(), uint8_t(1));
    std::vector<uint8_t> out = header(L, o, std::span<const uint64_t>(lengths), kDTypeOf<Field>);
    for (auto& s : streams) {
      out.insert(out.end(), s.begin(), s.end());
      std::vector<uint8_t>().swap(s);
    }
    const std::vector<uint8_t> trailer = multiblock_source_trailer(o.source, o.zstd);  // none without a record
    out.insert(out.end(), trailer.begin(), trailer.end());
    if (stats) *stats = std::move(total);
    if (o.progress) o.progress(Progress{"container", 1.0});
    return out;
  } catch (const std::bad_alloc&) {
    return Status(Code::internal, "out of memory compressing a multi-block field");
  }
}

/// Decodes every block of a file held in memory into `out` (allocated by the caller):
/// check(b, stream) runs on every block before anything is decoded (a block's own header
/// must agree with the index before the grid is filled), then into(b, stream, inner options,
/// scratch, mask_lock) places each one. Blocks decode in parallel, one thread each, when there
/// are enough of them, otherwise one after the other with the threads inside: the values are
/// the same.
template <class Scratch, class Index, class Check, class Into>
Status decode_all_blocks(std::span<const uint8_t> file, const Index& I, const DecompressOptions& d, Check&& check,
                         Into&& into) {
  const int count = I.layout.count();
  auto stream_of = [&](int b) {
    const auto& en = I.entries[size_t(b)];
    return file.subspan(size_t(en.offset), size_t(en.length));
  };
  for (int b = 0; b < count; ++b) FACTZ_RETURN_IF_ERROR(check(b, stream_of(b)));
  const int threads = block_threads(d.policy, d.threads);
  const bool outer = threads > 1 && count >= threads;
  const DecompressOptions inner = outer ? DecompressOptions{Policy::serial, 1} : d;
  std::mutex mask_lock;
  return for_each_block<Scratch>(count, outer, threads, "decoding", [&](int b, Scratch& scratch) {
    return into(b, stream_of(b), inner, scratch, mask_lock);
  });
}

/// Reads `n` bytes at `offset` of the open file `in` (`path` in messages).
inline Status read_at(std::ifstream& in, const std::string& path, uint64_t offset, uint64_t n,
                      std::vector<uint8_t>& out) {
  out.resize(size_t(n));
  in.seekg(std::streamoff(offset));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n));
  if (!in || uint64_t(in.gcount()) != n)
    return io_error("cannot read " + std::to_string(n) + " bytes of '" + path + "'");
  return Status::Ok();
}

/// The file at `path` opened for reading, and its size.
inline Status open_file(const std::string& path, std::ifstream& in, uint64_t& size) {
  in.open(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  size = uint64_t(in.tellg());
  return Status::Ok();
}

/// The header and index bytes of the open file `in` of `size` bytes (the prefix says how
/// many; only those are read), for parse_multiblock_index or parse_multiblock3d_index.
inline Status read_header(std::ifstream& in, const std::string& path, uint64_t size, std::vector<uint8_t>& head) {
  if (size < kMultiBlockPrefixBytes) return corrupt_stream("'" + path + "' is too short for a multi-block file");
  FACTZ_RETURN_IF_ERROR(read_at(in, path, 0, kMultiBlockPrefixBytes, head));
  auto header_size = multiblock_header_size_from_prefix(head);
  if (!header_size.ok()) return header_size.status();
  if (header_size.value() > size) return corrupt_stream("multi-block index truncated");
  return read_at(in, path, 0, header_size.value(), head);
}

/// Reads and places, one after the other, the blocks `needed` of the open file: into(b,
/// stream, scratch, mask_lock) copies block b's part of the window. `stats` counts the
/// header and the blocks read.
template <class Scratch, class Index, class Into>
Status decode_window_blocks(std::ifstream& in, const std::string& path, const Index& I,
                            const std::vector<int>& needed, RegionStats& stats, Into&& into) {
  stats.bytes_read = I.header_bytes;
  std::vector<uint8_t> buf;
  Scratch scratch;
  std::mutex mask_lock;
  for (int b : needed) {
    const auto& en = I.entries[size_t(b)];
    FACTZ_RETURN_IF_ERROR(read_at(in, path, en.offset, en.length, buf));
    FACTZ_RETURN_IF_ERROR(into(b, std::span<const uint8_t>(buf), scratch, mask_lock));
    ++stats.blocks_decoded;
    stats.bytes_read += en.length;
  }
  return Status::Ok();
}

}  // namespace factz::mb
