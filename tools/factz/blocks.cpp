// Multi-block (domain-decomposed) compress, decompress and verify for the CLI
// (docs/multiblock.md). main.cpp hands over here for --blocks, --region, --per-rank and
// multi-block input files.
//
// One process (no mpirun, or a build without MPI): the library's compress_multiblock,
// decompress_multiblock and decompress_region do the work; verify compares block by block.
// Under mpirun (factz_mpi built with MPI) the blocks are spread over the ranks as
// contiguous ranges of block ids; each rank reads only its blocks, compresses them, and the
// ranks write one file together with MPI-IO. The file is byte-identical to the one-process
// one for the same layout and options, whatever the rank count, because every block is
// compressed from the same values with the same (globally resolved) absolute bound, and the
// header and offsets depend only on the stream lengths.
//
// No rank ever waits in a collective for a rank that failed: every piece of local work that
// can fail runs inside `phase` (blocks.hpp), which ends with World::agree (all ranks learn
// the first failure, rank 0 prints it, every rank exits 1 or 2). Option checks and input
// are in blocks_input.cpp.
//
// float64 fields ('<f8' .npy, or raw with --dtype f64) take the same code: compress, decode
// and verify are templates on the field type (VectorField2D, VectorField2D64); a float64
// multi-block file (its header says so) decodes to float64 planes ('<f8' .npy or raw).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

#include "block_steps.hpp"
#include "blocks.hpp"
#include "factz/io.hpp"
#include "factz/multiblock3d.hpp"
#include "field_files.hpp"

namespace factz::cli {
namespace {

using namespace factz::cli::blocks;
using Clock = std::chrono::steady_clock;

/// Block b of the field of `flag`, read as Field.
template <class Field>
Field block_of(const Args& a, const std::string& flag, const BlockLayout& L, int b) {
  if constexpr (kFloat64<Field>) return read_block64(a, flag, L, b);
  else return read_block(a, flag, L, b);
}

/// Bytes of the raw field (u and v) and its bits per vertex at `ratio`.
template <class Field>
double raw_bytes_of(int64_t nx, int64_t ny) {
  return double(nx * ny) * 2.0 * double(sizeof(ValueOf<Field>));
}
template <class Field>
double bit_rate_of(double ratio) {
  return 16.0 * double(sizeof(ValueOf<Field>)) / ratio;
}

/// Writes decoded planes to the -o names through the one writer of every command (raw,
/// .npy, netCDF / HDF5 variables, with the mask's fill value): float32 planes as float32,
/// float64 planes as float64 (raw, '<f8', NC_DOUBLE; missing vertices keep their 64 bits).
/// `source`: the file's record (of the planes' window), which variables are written with;
/// --repack re-packs them.
template <class Field>
void write_planes(const Args& a, const std::string& uo, const std::string& vo, const Field& f,
                  const std::optional<factz::SourceRecord>& source) {
  write_field_outputs({uo, vo}, {&f.u, &f.v}, {uint64_t(f.ny), uint64_t(f.nx)}, source, f.mask, "decompress", {},
                      a.has("--repack"));
}

// ---- compress ------------------------------------------------------------------------------

/// One process, the global field in memory (read `t0` on): the library's compress_multiblock.
template <class Field>
int compress_whole(const Args& a, const Field& field, const factz::Options& o, int px, int py, Clock::time_point t0) {
  const int64_t nx = field.nx, ny = field.ny;
  const double read_s = seconds_since(t0);
  factz::CompressStats st;
  const auto t1 = Clock::now();
  const auto file = take(factz::compress_multiblock(field, o, px, py, &st));
  const double compress_s = seconds_since(t1);
  const auto t2 = Clock::now();
  check(factz::write_bytes(a.get("-z"), file));
  const double write_s = seconds_since(t2);
  const double raw = raw_bytes_of<Field>(nx, ny), ratio = raw / double(file.size()), total = seconds_since(t0);
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_dtype<Field>(r);
  r.count("nx", nx).count("ny", ny).count("px", px).count("py", py).count("blocks", int64_t(px) * py).count("ranks", 1);
  r.count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file.size())).num("ratio", ratio);
  r.num("bit_rate", bit_rate_of<Field>(ratio)).num("eb_abs", st.eb_abs).count("exact_vertices", st.exact_vertices);
  r.num("read_seconds", read_s).num("compress_seconds", compress_s).num("write_seconds", write_s);
  r.num("total_seconds", total).num("throughput_mbs", raw / compress_s / 1e6);
  r.count("rank_bytes_max", int64_t(file.size())).count("comm_bytes_max", 0);
  r.print(a.has("--json"), false);
  note_bound_below_packing("compress", st.eb_abs);
  return 0;
}

/// One process, one global field in memory (float32, or float64 inputs).
int compress_single(const Args& a) {
  int px, py;
  blocks_of_args(a, px, py);
  auto [uf, vf] = two_files(a, "-i");
  if (!a.has("-z")) fail("missing -z OUT", 2);
  require_plain_paths({uf, vf, a.get("-z")});
  factz::Options o = compress_options(a);
  o.progress = compress_progress(a);
  const auto t0 = Clock::now();
  // Variables' source record: after the file's last block (versions 5 and 6).
  if (float64_inputs(a, "-i")) {
    auto in = read_vector_input64(a, "-i", "compress");
    o.source = std::move(in.source);
    return compress_whole(a, in.field, o, px, py, t0);
  }
  auto in = read_vector_input(a, "-i", "compress");
  o.source = std::move(in.source);
  return compress_whole(a, in.field, o, px, py, t0);
}

/// Every rank its blocks; one file written together (or one process with per-rank inputs).
template <class Field>
int compress_blocks(World& w, const Args& a) {
  int64_t nx = 0, ny = 0;
  BlockLayout L;
  factz::Options o;
  std::string out;
  std::vector<Field> mine;
  int first = 0, last = 0;
  bool variables = false;   // both inputs netCDF / HDF5 variables
  factz::ValueRange range;  // of this rank's blocks
  StagedBlocksOf<ValueOf<Field>> staged;
  const auto t0 = Clock::now();
  phase(w, [&] {
    input_dims(a, "-i", nx, ny);
    int px, py;
    blocks_of_args(a, px, py);
    auto [uf, vf] = two_files(a, "-i");
    if (!a.has("-z")) fail("missing -z OUT", 2);
    out = a.get("-z");
    require_plain_paths({uf, vf, out});
    if (a.has("--per-rank")) require_per_rank_names({uf, vf});
    else require_regular_inputs(w, {uf, vf});
    variables = !a.has("--per-rank") && field_file(uf).variable && field_file(vf).variable;
    o = compress_options(a);
    L = take(factz::make_block_layout(nx, ny, px, py));
    if (a.has("--per-rank")) {
      require_one_block_per_rank(w, L);
      refuse_clobbering(per_rank_paths(a, {"-i"}, L.count()), path_args(a, {"-z"}));
    }
    std::tie(first, last) = blocks_of(w.rank(), w.size(), L.count());
    // A variable: the rows of this rank's blocks.
    staged = stage_blocks<ValueOf<Field>>(a, "-i", L, first, last, true, "compress");
  });
  share_staged(w, staged);  // what the readers found, merged: every rank declares the same missing values
  const uint64_t values_read = staged.values_read;
  phase(w, [&] {
    mine = finish_blocks(a, staged);
    for (const Field& f : mine) range = factz::merge(range, factz::value_range_of(f));
  });
  if (a.has("--per-rank"))  // 32 bytes per block gathered
    check_per_rank_files(
        w, mine, [](const Field& f) { return edge_hashes(f); },
        [&L](const std::vector<uint64_t>& all) { check_shared_lines(L, all); });
  // Global variables: their source record, as one process writes it (rank 0 reads it without
  // the values, every rank needs its size). Per-rank files describe blocks, not the field: none.
  if (variables) {
    phase(w, [&] {
      if (w.rank() != 0) return;
      const QuietReaderNotes quiet(true);  // the blocks' reading said it all
      const auto [u, v] = two_files(a, "-i");
      o.source = source_record_without_values<ValueOf<Field>>({u, v}, 2, "compress");
    });
    check(w.broadcast(o.source, 0));
  }
  const double read_s = seconds_since(t0);
  // The global value range (REL bounds), in doubles, which hold float32 and float64 values
  // exactly.
  const factz::ValueRange global = global_range(w, range);
  std::vector<uint64_t> lengths;
  std::vector<uint8_t> bytes;
  double eb_abs = 0;
  const auto t1 = Clock::now();
  const int64_t exact =
      compress_rank_blocks(w, mine, L, first, o, global, eb_abs, lengths, bytes, [](int, const Field&) {});
  const double compress_s = seconds_since(t1);
  const auto t2 = Clock::now();
  const uint64_t file_bytes = write_multiblock_file(
      w, out, first, lengths, bytes, factz::multiblock_source_trailer(o.source, o.zstd), [&](const auto& all) {
        return factz::multiblock_header(L, o, all, kDTypeOf<Field>);
      });
  const double write_s = seconds_since(t2);
  // Statistics: sums and maxima over the ranks.
  int64_t sums[1] = {exact};
  double maxima[7] = {read_s,
                      compress_s,
                      write_s,
                      seconds_since(t0),
                      double(bytes.size()),
                      double(w.comm_bytes()),
                      double(values_read)};
  check(w.allreduce_sum(sums));
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<Field>(nx, ny), ratio = raw / double(file_bytes);
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_dtype<Field>(r);
  r.count("nx", nx).count("ny", ny).count("px", L.px).count("py", L.py).count("blocks", L.count());
  r.count("ranks", w.size()).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file_bytes));
  r.num("ratio", ratio).num("bit_rate", bit_rate_of<Field>(ratio)).num("eb_abs", eb_abs).count("exact_vertices", sums[0]);
  r.num("read_seconds", maxima[0]).num("compress_seconds", maxima[1]).num("write_seconds", maxima[2]);
  r.num("total_seconds", maxima[3]).num("throughput_mbs", raw / maxima[1] / 1e6);
  r.count("rank_bytes_max", int64_t(maxima[4])).count("comm_bytes_max", int64_t(maxima[5]));
  r.count("input_values_max", int64_t(maxima[6]));
  r.print(a.has("--json"), false);
  note_bound_below_packing("compress", eb_abs);
  return 0;
}

int compress_distributed(World& w, const Args& a) {
  return float64_field(w, a, "-i") ? compress_blocks<VectorField2D64>(w, a) : compress_blocks<VectorField2D>(w, a);
}


// ---- decompress ----------------------------------------------------------------------------

/// The data type of the multi-block file at `path` (its header and index only are read).
factz::DType file_dtype(const std::string& path) {
  uint64_t size = 0;
  const std::vector<uint8_t> head = read_header_bytes(path, size);
  return take(factz::parse_multiblock_index(head, size)).dtype;
}

/// --region: one process reads the index and the blocks the window touches.
template <class Field>
int decompress_region_as(const Args& a, const std::string& uo, const std::string& vo) {
  const factz::DecompressOptions d = vector_decompress_options(a);
  const auto t0 = Clock::now();
  factz::RegionStats st;
  Field field;
  if constexpr (kFloat64<Field>) field = take(factz::decompress_region64(a.get("-z"), region_of(a), d, &st));
  else field = take(factz::decompress_region(a.get("-z"), region_of(a), d, &st));
  const double secs = seconds_since(t0);
  // The record of the window: its coordinates and auxiliary variables cut to it.
  auto source = take(factz::read_multiblock_source(a.get("-z")));
  if (source) {
    const factz::Region w = region_of(a);
    const uint64_t first[2] = {uint64_t(w.y0), uint64_t(w.x0)}, count[2] = {uint64_t(field.ny), uint64_t(field.nx)};
    source = take(factz::window_of_source_record(*source, first, count));
  }
  write_planes(a, uo, vo, field, source);
  StatsWriter r;
  r.count("nx", field.nx).count("ny", field.ny);
  add_dtype<Field>(r);
  add_region_stats(r, st, a.get("-z"), secs);
  r.print(a.has("--json"), false);
  return 0;
}

int decompress_region_cli(const Args& a) {
  auto [uo, vo] = two_files(a, "-o");
  require_seekable(a.get("-z"), "--region");
  return file_dtype(a.get("-z")) == factz::DType::float64 ? decompress_region_as<VectorField2D64>(a, uo, vo)
                                                           : decompress_region_as<VectorField2D>(a, uo, vo);
}

/// One process, the whole file in memory: the library's decompress_multiblock (or
/// decompress_multiblock64 for a float64 file).
template <class Field>
int decompress_whole(const Args& a, const std::vector<uint8_t>& file, const std::string& uo, const std::string& vo) {
  const factz::DecompressOptions d = vector_decompress_options(a);
  const auto t0 = Clock::now();
  Field field;
  if constexpr (kFloat64<Field>) field = take(factz::decompress_multiblock64(file, d));
  else field = take(factz::decompress_multiblock(file, d));
  const double secs = seconds_since(t0);
  write_planes(a, uo, vo, field, take(factz::multiblock_source(file)));
  const double raw = raw_bytes_of<Field>(field.nx, field.ny);
  StatsWriter r;
  r.count("nx", field.nx).count("ny", field.ny);
  add_dtype<Field>(r);
  r.count("ranks", 1).count("raw_bytes", int64_t(raw));
  r.count("compressed_bytes", int64_t(file.size())).num("decompress_seconds", secs);
  r.num("throughput_mbs", raw / secs / 1e6);
  r.print(a.has("--json"), false);
  return 0;
}

/// One process, the whole file in memory. `bytes`: the file when it was already read (from
/// a pipe), else it is read here.
int decompress_single(const Args& a, const std::vector<uint8_t>* bytes = nullptr) {
  auto [uo, vo] = two_files(a, "-o");
  if (uo == "-" && vo == "-") fail("only one component can go to stdout", 2);
  std::vector<uint8_t> read;
  if (!bytes) read = take(factz::read_bytes(a.get("-z")));
  const std::vector<uint8_t>& file = bytes ? *bytes : read;
  const auto ix = take(factz::parse_multiblock_index(file, file.size()));
  return ix.dtype == factz::DType::float64 ? decompress_whole<VectorField2D64>(a, file, uo, vo)
                                           : decompress_whole<VectorField2D>(a, file, uo, vo);
}

/// The rows of decoded block b (extent e) that b owns (shared last row/column excluded unless
/// b is the last band), as segments of the global raw plane.
template <class T>
void owned_segments(const BlockLayout& L, int b, const std::vector<T>& plane, std::vector<factz::mpi::Segment>& segs) {
  const BlockExtent& e = L.blocks[size_t(b)];
  const auto [w, h] = owned_sizes(L, b);
  for (int64_t y = 0; y < h; ++y)
    segs.push_back({uint64_t((e.y0 + y) * L.nx + e.x0) * sizeof(T), plane.data() + y * e.nx, w, int(sizeof(T))});
}

/// Block b's stream decoded as Field, after checking that it holds the extent and the data
/// type the file's index says.
template <class Field>
Field decode_block(std::span<const uint8_t> s, const BlockExtent& e, int b, const factz::DecompressOptions& d) {
  const auto info = factz::stream_info(s);
  if (!info.ok()) fail("block " + std::to_string(b) + ": " + info.status().to_string());
  if (info->nx != e.nx || info->ny != e.ny)
    fail("corrupt_stream: block " + std::to_string(b) + " does not hold the field its index says");
  if (info->dtype != kDTypeOf<Field>)
    fail("corrupt_stream: block " + std::to_string(b) + " holds " + factz::dtype_name(info->dtype) +
         " values, the file's header says " + factz::dtype_name(kDTypeOf<Field>));
  factz::Result<Field> f = factz::Status();
  if constexpr (kFloat64<Field>) f = factz::decompress64(s, d);
  else f = factz::decompress(s, d);
  if (!f.ok()) fail("block " + std::to_string(b) + ": " + f.status().to_string());
  return std::move(f).value();
}

/// Writes a decoded per-rank block to its own file (each file whole or not at all).
void write_block_file(const std::string& name, const std::vector<float>& plane, int64_t nx, int64_t ny) {
  check(factz::write_plane(name, plane, nx, ny));
}
void write_block_file(const std::string& name, const std::vector<double>& plane, int64_t nx, int64_t ny) {
  write_plane64(name, plane, nx, ny, "decompress");
}

/// Every rank decodes its blocks [first, last) of the file at `path` and writes its part of
/// the global raw planes (or its own per-rank files).
template <class Field>
int decompress_blocks(World& w, const Args& a, const std::string& path, const std::string& uo, const std::string& vo,
                      const factz::MultiBlockIndex& ix, int first, int last) {
  const BlockLayout& L = ix.layout;
  const auto t0 = Clock::now();
  uint64_t read_bytes = 0;
  const std::vector<Field> decoded = decode_rank_blocks<Field>(
      w, a, path, ix, first, last, read_bytes,
      [&L](std::span<const uint8_t> s, int b, const factz::DecompressOptions& d) {
        return decode_block<Field>(s, L.blocks[size_t(b)], b, d);
      });
  const double decode_s = seconds_since(t0);
  const auto t1 = Clock::now();
  if (a.has("--per-rank")) {
    phase(w, [&] {
      for (int b = first; b < last; ++b) {
        const auto& f = decoded[size_t(b - first)];
        write_block_file(per_rank_name(uo, b), f.u, f.nx, f.ny);
        write_block_file(per_rank_name(vo, b), f.v, f.nx, f.ny);
      }
    });
  } else {
    write_owned_planes(w, decoded, first, {uo, vo}, L.nx * L.ny, [&L](int b, const auto& plane, auto& segs) {
      owned_segments(L, b, plane, segs);
    });
  }
  const double write_s = seconds_since(t1);
  double maxima[4] = {decode_s, write_s, seconds_since(t0), double(read_bytes)};
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<Field>(L.nx, L.ny);
  StatsWriter r;
  r.count("nx", L.nx).count("ny", L.ny);
  add_dtype<Field>(r);
  r.count("blocks", L.count()).count("ranks", w.size());
  r.count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(ix.file_bytes));
  r.num("decompress_seconds", maxima[0]).num("write_seconds", maxima[1]).num("total_seconds", maxima[2]);
  r.num("throughput_mbs", raw / maxima[0] / 1e6).count("rank_bytes_read_max", int64_t(maxima[3]));
  r.print(a.has("--json"), false);
  return 0;
}

/// Every rank decodes its blocks and writes its part of the global raw planes (or its own
/// per-rank files): float32 planes, or float64 planes for a float64 file.
int decompress_distributed(World& w, const Args& a) {
  std::string path, uo, vo;
  std::vector<uint8_t> head;
  phase(w, [&] {
    if (a.has("--region")) fail("--region decodes in one process: run it without mpirun", 2);
    if (a.has("--repack"))
      fail("--repack writes netCDF / HDF5 variables, which decompress writes in one process (not under mpirun or "
           "with --per-rank)",
           2);
    std::tie(uo, vo) = two_files(a, "-o");
    path = a.get("-z");
    require_plain_paths({path, uo, vo});
    require_seekable(path, "decompressing under mpirun or with --per-rank");
    if (any_variable_output({uo, vo}))
      fail("under mpirun or with --per-rank the outputs are raw or .npy planes (not netCDF / HDF5 variables): "
           "decompress in one process to write variables",
           2);
    if (a.has("--per-rank")) require_per_rank_names({uo, vo});
    else if (ends_with(uo, ".npy") || ends_with(vo, ".npy"))
      fail("under mpirun the outputs are raw planes (little-endian float32, or float64 for a float64 file), not .npy",
           2);
    if (w.rank() == 0) head = header_and_size(path);  // one rank reads the index, every rank gets it
  });
  check(w.broadcast(head, 0));
  factz::MultiBlockIndex ix;
  int first = 0, last = 0;
  phase(w, [&] {
    const uint64_t size = take_size(head);
    ix = take(factz::parse_multiblock_index(head, size));
    if (a.has("--per-rank")) {
      require_one_block_per_rank(w, ix.layout);
      refuse_clobbering(path_args(a, {"-z"}), per_rank_paths(a, {"-o"}, ix.layout.count()));
    }
    std::tie(first, last) = blocks_of(w.rank(), w.size(), ix.layout.count());
  });
  // Every rank parsed the same header: the data type is the same on all.
  return ix.dtype == factz::DType::float64 ? decompress_blocks<VectorField2D64>(w, a, path, uo, vo, ix, first, last)
                                           : decompress_blocks<VectorField2D>(w, a, path, uo, vo, ix, first, last);
}

// ---- verify --------------------------------------------------------------------------------

/// Counts and error sums of a set of blocks; the sums over all blocks are the global figures.
struct Tally {
  /// cp_original, cp_decompressed, lost, spurious, type_changed, mask_mismatch, masked, valid
  int64_t counts[8] = {};
  double sq[1] = {};      ///< sum of squared errors over owned vertices valid in both
  double maxima[4] = {};  ///< max |du|, max |dv|, max value, -min value (valid in both)
  Tally() { maxima[2] = maxima[3] = -std::numeric_limits<double>::infinity(); }
};

/// Adds block b: critical points by factz::compare on the block (every triangle of the
/// global mesh lies in exactly one block, and its signature depends only on its three
/// vertices, so the per-block counts sum to the global comparison's); masks and errors over
/// the vertices the block owns (each vertex counted once), as factz::compare counts them: a
/// vertex missing in one field only is a mask mismatch, the original's missing vertices are
/// the masked ones, errors and the value range run over the vertices valid in both.
template <class Field>
void tally_block(const BlockLayout& L, int b, const Field& o, const Field& d, factz::Exec ex, Tally& t) {
  const auto c = take(factz::compare(o, d, ex));
  t.counts[0] += c.cp_original;
  t.counts[1] += c.cp_decompressed;
  t.counts[2] += c.lost;
  t.counts[3] += c.spurious;
  t.counts[4] += c.type_changed;
  const std::vector<uint8_t> mo = factz::missing_mask(o), md = factz::missing_mask(d);
  const BlockExtent& e = L.blocks[size_t(b)];
  const auto [w, h] = owned_sizes(L, b);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const size_t k = size_t(y * e.nx + x);
      const bool miss_o = !mo.empty() && mo[k], miss_d = !md.empty() && md[k];
      t.counts[5] += miss_o != miss_d;
      t.counts[6] += miss_o;
      if (miss_o || miss_d) continue;
      ++t.counts[7];
      const double du = double(o.u[k]) - double(d.u[k]), dv = double(o.v[k]) - double(d.v[k]);
      t.sq[0] += du * du + dv * dv;
      t.maxima[0] = std::max(t.maxima[0], std::fabs(du));
      t.maxima[1] = std::max(t.maxima[1], std::fabs(dv));
      t.maxima[2] = std::max({t.maxima[2], double(o.u[k]), double(o.v[k])});
      t.maxima[3] = std::max({t.maxima[3], -double(o.u[k]), -double(o.v[k])});
    }
}

/// One process, both fields in memory: every block of them.
void tally_whole(const Args& a, const BlockLayout& L, factz::Exec ex, bool float64, Tally& t) {
  auto all_blocks = [&](const auto& o, const auto& d) {
    for (int b = 0; b < L.count(); ++b)
      tally_block(L, b, factz::extract_block(o, L.blocks[size_t(b)]), factz::extract_block(d, L.blocks[size_t(b)]), ex,
                  t);
  };
  if (float64) {
    const auto in = read_vector_input64(a, "-i", "verify");
    all_blocks(in.field, read_vector_input64(a, "-d", "verify", &in).field);
  } else {
    const auto in = read_vector_input(a, "-i", "verify");
    all_blocks(in.field, read_vector_input(a, "-d", "verify", &in).field);
  }
}

/// The blocks of a rank's verify: under mpirun, files with a reader's findings (variables,
/// .npy files, pipes; --per-rank files) are staged in the first phase, shared, and finished
/// in the second; raw files are read a block at a time in the second.
template <class Field>
struct VerifyStage {
  bool staged = false;
  StagedBlocksOf<ValueOf<Field>> o, d;
};

template <class Field>
void stage_mine(const Args& a, const BlockLayout& L, int first, int last, VerifyStage<Field>& s) {
  s.staged = read_whole(a, "-i") || read_whole(a, "-d") || a.has("--per-rank");
  if (!s.staged) return;
  s.o = stage_blocks<ValueOf<Field>>(a, "-i", L, first, last, true, "verify");
  s.d = stage_blocks<ValueOf<Field>>(a, "-d", L, first, last, true, "verify");
}

template <class Field>
void tally_mine(const Args& a, const BlockLayout& L, int first, int last, factz::Exec ex, VerifyStage<Field>& s,
                Tally& t) {
  if (s.staged) {
    // Each file read once, then the blocks; the original's fill values mark the
    // reconstruction's missing vertices too (as verify in one process).
    DeclaredFillsOf<ValueOf<Field>> fills;
    const std::vector<Field> o = finish_blocks<ValueOf<Field>>(a, s.o, &fills);
    const std::vector<Field> d = finish_blocks<ValueOf<Field>>(a, s.d, nullptr, &fills);
    for (int b = first; b < last; ++b) tally_block(L, b, o[size_t(b - first)], d[size_t(b - first)], ex, t);
    return;
  }
  for (int b = first; b < last; ++b)  // raw files by rows (only --fill declares): a block of each at a time
    tally_block(L, b, block_of<Field>(a, "-i", L, b), block_of<Field>(a, "-d", L, b), ex, t);
}

template <class Field>
void verify_mine(World& w, const Args& a, const BlockLayout& L, int first, int last, factz::Exec ex, Tally& t) {
  VerifyStage<Field> s;
  phase(w, [&] { stage_mine<Field>(a, L, first, last, s); });
  share_staged(w, s.o);  // every rank, blocks or not (nothing in one process)
  share_staged(w, s.d);
  phase(w, [&] { tally_mine<Field>(a, L, first, last, ex, s, t); });
}

int verify_blocks(World& w, const Args& a) {
  const bool float64 = float64_field(w, a, "-i");
  if (float64_field(w, a, "-d") != float64)
    fail("invalid_argument: verify compares a float64 original with a float64 reconstruction: give both -i and -d "
         "as '<f8' .npy files, or raw files with --dtype f64");
  int64_t nx = 0, ny = 0;
  BlockLayout L;
  Tally t;
  int first = 0, last = 0;
  factz::Exec ex{};
  bool whole = false;
  phase(w, [&] {
    input_dims(a, "-i", nx, ny);
    int px, py;
    blocks_of_args(a, px, py);
    auto [ui, vi] = two_files(a, "-i");
    auto [ud, vd] = two_files(a, "-d");
    require_plain_paths({ui, vi, ud, vd});
    if (a.has("--per-rank")) require_per_rank_names({ui, vi, ud, vd});
    else require_regular_inputs(w, {ui, vi, ud, vd});
    L = take(factz::make_block_layout(nx, ny, px, py));
    if (a.has("--per-rank")) require_one_block_per_rank(w, L);
    std::tie(first, last) = blocks_of(w.rank(), w.size(), L.count());
    ex = exec_of(a);
    whole = !w.distributed() && !a.has("--per-rank");
    if (whole) tally_whole(a, L, ex, float64, t);  // each field read once
  });
  if (!whole) {
    if (float64) verify_mine<VectorField2D64>(w, a, L, first, last, ex, t);
    else verify_mine<VectorField2D>(w, a, L, first, last, ex, t);
  }
  check(w.allreduce_sum(t.counts));
  check(w.allreduce_sum(t.sq));
  check(w.allreduce_max(t.maxima));
  if (w.rank() != 0) return 0;
  factz::Comparison c;
  c.cp_original = t.counts[0];
  c.cp_decompressed = t.counts[1];
  c.lost = t.counts[2];
  c.spurious = t.counts[3];
  c.type_changed = t.counts[4];
  c.mask_mismatch = t.counts[5];
  c.masked_vertices = t.counts[6];
  c.max_abs_error = {t.maxima[0], t.maxima[1]};
  const int64_t n = t.counts[7];
  c.value_range = n > 0 ? t.maxima[2] + t.maxima[3] : 0.0;
  c.rmse = n > 0 ? std::sqrt(t.sq[0] / double(2 * n)) : 0.0;
  c.nrmse = c.value_range > 0 ? c.rmse / c.value_range : 0.0;
  c.psnr = c.rmse > 0 ? 20.0 * std::log10(c.value_range / c.rmse) : std::numeric_limits<double>::infinity();
  StatsWriter r;
  add_comparison(r, c);
  r.num("value_range", c.value_range);
  if (float64) r.text("dtype", "float64", StatsWriter::In::json);
  r.count("blocks", L.count()).count("ranks", w.size());
  r.print(a.has("--json"), true);
  return 0;
}

}  // namespace

int run_blocks_compress(const Args& a) {
  if (a.has("-3")) return run_blocks3d_compress(a);
  return guarded("compress", [&a](World& w) {
    if (!w.distributed() && !a.has("--per-rank")) {
      // One process: still every failure leaves through here (rank 0 is the only rank).
      int rc = 0;
      phase(w, [&] { rc = compress_single(a); });
      return rc;
    }
    return compress_distributed(w, a);
  });
}

int run_blocks_decompress(const Args& a) {
  if (a.has("-z") && is_multiblock3d_file(a.get("-z"))) return run_blocks3d_decompress(a);
  return guarded("decompress", [&a](World& w) {
    if (!w.distributed() && !a.has("--per-rank")) {
      if (!a.has("-z")) fail("missing -z IN", 2);
      if (a.has("--region")) return decompress_region_cli(a);
      return decompress_single(a);
    }
    return decompress_distributed(w, a);
  });
}

int run_blocks_decompress_bytes(const Args& a, const std::vector<uint8_t>& file) {
  if (factz::is_multiblock3d(file)) return run_blocks3d_decompress_bytes(a, file);
  return guarded("decompress", [&](World& w) {
    if (w.distributed() || a.has("--per-rank") || a.has("--region"))
      fail("a multi-block file read from a pipe or stdin decodes in one process, without --per-rank or --region", 2);
    return decompress_single(a, &file);
  });
}

int run_blocks_verify(const Args& a) {
  if (a.has("-3")) return run_blocks3d_verify(a);
  return guarded("verify", [&a](World& w) { return verify_blocks(w, a); });
}

}  // namespace factz::cli

