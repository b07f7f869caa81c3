// The per-block steps that the 2D (blocks.cpp) and 3D (blocks3d.cpp) multi-block drivers
// share, written once as templates on the field type (VectorField2D, VectorField2D64,
// VectorField3D, VectorField3D64) and the layout (BlockLayout, BlockLayout3D): compressing a
// rank's blocks, checking per-rank files against their neighbours', decoding a rank's blocks
// and writing their owned parts to the global raw planes. What differs by dimension (reading
// a block, the shared-face hashes, a block stream's checks, which vertices a block owns, the
// statistics each command prints) stays in the drivers and comes in as callables. Every step
// that can fail runs inside `phase` (blocks.hpp), so a failing rank never leaves the others in
// a collective.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "blocks.hpp"
#include "factz/multiblock3d.hpp"

namespace factz::cli::blocks {

template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;
/// Whether a field type holds float64 values.
template <class Field>
constexpr bool kFloat64 = sizeof(ValueOf<Field>) == 8;
/// A field type's data type, as multi-block headers record it.
template <class Field>
constexpr factz::DType kDTypeOf = kFloat64<Field> ? factz::DType::float64 : factz::DType::float32;
/// Whether a field type has a third component (w).
template <class Field>
constexpr bool kIs3D = requires(const Field& f) { f.w; };

/// The value planes of a field in component order: (u, v), or (u, v, w) for a 3D field
/// (pointers to const planes for a const field).
template <class Field>
auto planes_of(Field& f) {
  if constexpr (kIs3D<Field>) return std::array{&f.u, &f.v, &f.w};
  else return std::array{&f.u, &f.v};
}

/// A float64 run says so in --json (as the one-stream float64 commands do).
template <class Field>
void add_dtype(StatsWriter& r) {
  if constexpr (kFloat64<Field>) r.text("dtype", "float64", StatsWriter::In::json);
}

/// The figures of a --region read, after the window's own (nx, ny[, nz], dtype):
/// blocks_decoded, bytes_read, file_bytes (-1 when `path`'s size cannot be read),
/// decompress_seconds.
inline void add_region_stats(StatsWriter& r, const factz::RegionStats& st, const std::string& path, double secs) {
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(path, ec);
  r.count("blocks_decoded", st.blocks_decoded);
  r.count("bytes_read", int64_t(st.bytes_read)).count("file_bytes", ec ? -1 : int64_t(file_bytes));
  r.num("decompress_seconds", secs);
}

/// With --per-rank, neighbouring blocks come from different files: every rank hashes its blocks
/// (`hashes(f)`: an array of uint64_t per block), the hashes of all blocks are gathered in block
/// order (one MPI_Allgather), and `check_all(all)` fails when two neighbours disagree.
template <class Field, class Hashes, class CheckAll>
void check_per_rank_files(World& w, const std::vector<Field>& mine, Hashes&& hashes, CheckAll&& check_all) {
  std::vector<uint64_t> mine_hashes;
  for (const auto& f : mine)
    for (uint64_t h : hashes(f)) mine_hashes.push_back(h);
  const auto all_hashes = take(w.allgather(mine_hashes));
  phase(w, [&] { check_all(all_hashes); });
}

/// Compresses this rank's blocks [first, first + mine.size()) of layout L (inside a phase) with
/// the absolute bound `o` resolves over the global value range `global` (stored in `eb_abs`):
/// their streams are appended to `bytes` in block order and their lengths to `lengths`;
/// `each(b, f)` sees every block once compressed, before its planes are freed. Returns the
/// blocks' exact vertices, summed.
template <class Field, class Layout, class Each>
int64_t compress_rank_blocks(World& w, std::vector<Field>& mine, const Layout& L, int first, const factz::Options& o,
                             const factz::ValueRange& global, double& eb_abs, std::vector<uint64_t>& lengths,
                             std::vector<uint8_t>& bytes, Each&& each) {
  int64_t exact = 0;
  phase(w, [&] {
    eb_abs = take(factz::absolute_bound(o, global));
    for (int b = first; b < first + int(mine.size()); ++b) {
      factz::CompressStats st;
      Field& f = mine[size_t(b - first)];
      auto s = factz::compress_block(f, L, b, o, eb_abs, &st);
      if (!s.ok()) fail("block " + std::to_string(b) + ": " + s.status().to_string());
      each(b, f);
      for (auto* plane : planes_of(f)) std::remove_reference_t<decltype(*plane)>().swap(*plane);
      lengths.push_back(s.value().size());
      bytes.insert(bytes.end(), s.value().begin(), s.value().end());
      exact += st.exact_vertices;
    }
  });
  return exact;
}

/// Reads this rank's blocks [first, last) of the multi-block file at `path` collectively and
/// decodes them (inside a phase): `decode(stream, b, options)` checks block b's stream against
/// the index and decodes it as Field (options: the command's decompress options). `read_bytes`
/// gets the bytes this rank read.
template <class Field, class Index, class Decode>
std::vector<Field> decode_rank_blocks(World& w, const Args& a, const std::string& path, const Index& ix, int first,
                                      int last, uint64_t& read_bytes, Decode&& decode) {
  uint64_t from = 0;
  const std::vector<uint8_t> streams = read_block_streams(w, path, ix, first, last, from);
  read_bytes = streams.size();
  std::vector<Field> decoded;
  phase(w, [&] {
    const factz::DecompressOptions d = vector_decompress_options(a);
    for (int b = first; b < last; ++b) {
      const auto& en = ix.entries[size_t(b)];
      const auto s = std::span<const uint8_t>(streams).subspan(size_t(en.offset - from), size_t(en.length));
      decoded.push_back(decode(s, b, d));
    }
  });
  return decoded;
}

/// Writes the parts of this rank's decoded blocks (block first + i is decoded[i]) that they
/// own into the global raw planes `outputs` (one per component, `vertices` values each), one
/// collective write per component: `owned(b, plane, segs)` adds block b's owned rows of one
/// decoded plane as segments.
template <class Field, class Owned>
void write_owned_planes(World& w, const std::vector<Field>& decoded, int first,
                        const std::vector<std::string>& outputs, int64_t vertices, Owned&& owned) {
  using T = ValueOf<Field>;
  const uint64_t plane_bytes = uint64_t(vertices) * sizeof(T);
  for (size_t c = 0; c < outputs.size(); ++c) {
    std::vector<factz::mpi::Segment> segs;
    for (size_t i = 0; i < decoded.size(); ++i) owned(first + int(i), *planes_of(decoded[i])[c], segs);
    write_plane_segments(w, outputs[c], plane_bytes, std::move(segs));
  }
}

}  // namespace factz::cli::blocks
