// Multi-block compress, decompress and verify of 3D vector fields for the CLI
// (docs/multiblock.md, "3D blocks"): `factz compress -3 NX NY NZ -i U -i V -i W -z OUT
// --blocks PX PY PZ`, `decompress` and `verify` of the version 3 file it writes. blocks.cpp
// hands over here (for -3 with --blocks, or a version 3 file).
//
// One process: the library's compress_multiblock and decompress_multiblock3d do the work.
// Under mpirun the blocks are spread over the ranks as for 2D fields (contiguous ranges of
// block ids); each rank reads only its blocks' rows of the global raw inputs, compresses them
// with the bound resolved by one MPI_Allreduce over the ranks' ranges, and the ranks write
// one file together: byte for byte the one-process file. Every fallible step runs inside
// `phase` (blocks.hpp), so a failing rank never leaves the others in a collective.
//
// The drivers are templates on the 3D field type (VectorField3D today) where they touch
// values, as blocks.cpp is for 2D fields.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <tuple>

#include "blocks.hpp"
#include "factz/io.hpp"
#include "factz/multiblock3d.hpp"
#include "field3d_files.hpp"
#include "field_files.hpp"  // any_variable_output

namespace factz::cli {
namespace {

using namespace factz::cli::blocks;
using Clock = std::chrono::steady_clock;

template <class Field>
using ValueOf = typename decltype(Field::u)::value_type;

/// Bytes of the raw field (u, v and w).
template <class Field>
double raw_bytes_of(int64_t n) {
  return double(n) * 3.0 * double(sizeof(ValueOf<Field>));
}

/// 3D components are float32 raw or '<f4' .npy files (read_field3d's rule).
void require_float32(const Args& a) {
  if (a.has("--dtype") && a.get("--dtype") != "f32")
    fail("invalid_argument: 3D vector fields are read as float32 only (no float64 3D analysis yet)");
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v name 2D components; give --fill V for a 3D vector field", 2);
  if (a.has("--per-rank")) fail("--per-rank takes 2D fields only (a 3D field takes --blocks PX PY PZ)", 2);
  if (a.has("--region")) fail("--region takes 2D multi-block files (a 3D file decodes whole)", 2);
}

/// Block `e` of the global nx x ny x nz component in `path`: for a raw regular file only the
/// block's row segments are read (one read per row, or per slice when rows are whole); a .npy
/// file is read whole (read_component checks its header) and cut.
std::vector<float> read_block_component(const std::string& path, int64_t nx, int64_t ny, int64_t nz,
                                        const BlockExtent3D& e) {
  std::vector<float> out(size_t(e.nx * e.ny * e.nz));
  check(factz::check_input_path(path));
  std::error_code ec;
  if (ends_with(path, ".npy") || !std::filesystem::is_regular_file(path, ec)) {
    const std::vector<float> whole = read_component(path, nx, ny, nz);
    for (int64_t z = 0; z < e.nz; ++z)
      for (int64_t y = 0; y < e.ny; ++y)
        std::memcpy(out.data() + (z * e.ny + y) * e.nx, whole.data() + ((e.z0 + z) * ny + e.y0 + y) * nx + e.x0,
                    size_t(e.nx) * sizeof(float));
    return out;
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("io: cannot open " + path + ": " + ec.message());
  const uint64_t need = uint64_t(nx * ny * nz) * 4;
  if (uint64_t(size) != need)
    fail("invalid_argument: " + path + " holds " + std::to_string(size) + " bytes; -3 " + std::to_string(nx) + " " +
         std::to_string(ny) + " " + std::to_string(nz) + " needs " + std::to_string(need) + " (float32)");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("io: cannot open " + path);
  const bool whole_rows = e.x0 == 0 && e.nx == nx;
  for (int64_t z = 0; z < e.nz; ++z)
    for (int64_t y = 0; y < e.ny; y += whole_rows ? e.ny : 1) {
      const int64_t rows = whole_rows ? e.ny : 1;
      in.seekg(std::streamoff(uint64_t(((e.z0 + z) * ny + e.y0 + y) * nx + e.x0) * 4));
      in.read(reinterpret_cast<char*>(out.data() + (z * e.ny + y) * e.nx), std::streamsize(uint64_t(rows * e.nx) * 4));
      if (!in) fail("io: cannot read " + path);
    }
  return out;
}

/// Block b of the global field of `flag` (-i or -d): its rows of the three files, NaN and
/// --fill V marked missing, validated.
VectorField3D read_block3d(const Args& a, const char* flag, const BlockLayout3D& L, int b) {
  const auto files = three_files(a, flag);
  const BlockExtent3D& e = L.blocks[size_t(b)];
  VectorField3D f;
  f.nx = e.nx;
  f.ny = e.ny;
  f.nz = e.nz;
  f.u = read_block_component(files[0], L.nx, L.ny, L.nz, e);
  f.v = read_block_component(files[1], L.nx, L.ny, L.nz, e);
  f.w = read_block_component(files[2], L.nx, L.ny, L.nz, e);
  factz::mark_missing(f, fill3d_of(a));
  const Status s = factz::validate_field(f);
  if (!s.ok())
    fail("block " + std::to_string(b) + " (from x=" + std::to_string(e.x0) + ", y=" + std::to_string(e.y0) +
         ", z=" + std::to_string(e.z0) + "): " + s.to_string());
  return f;
}

/// The layout of `-3 NX NY NZ --blocks PX PY PZ`.
BlockLayout3D layout_of(const Args& a) {
  int64_t nx, ny, nz;
  int px, py, pz;
  dims3(a, nx, ny, nz);
  blocks3d_of_args(a, px, py, pz);
  return take(factz::make_block_layout3d(nx, ny, nz, px, py, pz));
}

void add_grid(StatsWriter& r, const BlockLayout3D& L) {
  r.count("nx", L.nx).count("ny", L.ny).count("nz", L.nz);
  r.count("px", L.px).count("py", L.py).count("pz", L.pz).count("blocks", L.count());
}

// ---- compress ------------------------------------------------------------------------------

/// Options and paths of compress, checked the same way by both drivers.
factz::Options compress3d_options(const Args& a, std::string& out) {
  require_float32(a);
  const auto files = three_files(a, "-i");
  if (!a.has("-z")) fail("missing -z OUT", 2);
  out = a.get("-z");
  require_plain_paths({files[0], files[1], files[2], out});
  if (a.has("--scalar") || a.has("--persistence") || a.get("--mode") == "contour-tree")
    fail("--blocks takes vector fields", 2);
  return vector_compress_options(a, false);
}

/// One process, the global field in memory: the library's compress_multiblock.
int compress_single3d(const Args& a) {
  std::string out;
  factz::Options o = compress3d_options(a, out);
  o.progress = compress_progress(a);
  const BlockLayout3D L = layout_of(a);
  const auto t0 = Clock::now();
  int64_t masked = 0;
  const VectorField3D f = read_field3d(a, "-i", masked, "compress");
  const double read_s = seconds_since(t0);
  factz::CompressStats st;
  const auto t1 = Clock::now();
  const auto file = take(factz::compress_multiblock(f, o, L.px, L.py, L.pz, &st));
  const double compress_s = seconds_since(t1);
  const auto t2 = Clock::now();
  check(factz::write_bytes(out, file));
  const double write_s = seconds_since(t2);
  const double raw = raw_bytes_of<VectorField3D>(f.size()), ratio = raw / double(file.size());
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_grid(r, L);
  r.count("ranks", 1).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file.size()));
  r.num("ratio", ratio).num("bit_rate", 96.0 / ratio).num("eb_abs", st.eb_abs);
  r.count("exact_vertices", st.exact_vertices).count("masked_vertices", st.masked_vertices);
  r.num("read_seconds", read_s).num("compress_seconds", compress_s).num("write_seconds", write_s);
  r.num("total_seconds", seconds_since(t0)).num("throughput_mbs", raw / std::max(compress_s, 1e-9) / 1e6);
  r.count("rank_bytes_max", int64_t(file.size())).count("comm_bytes_max", 0);
  r.print(a.has("--json"), false);
  return 0;
}

/// Every rank its blocks; one file written together.
template <class Field>
int compress_blocks3d(World& w, const Args& a) {
  BlockLayout3D L;
  factz::Options o;
  std::string out;
  std::vector<Field> mine;
  int first = 0, last = 0;
  double lo_neg_hi[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const auto t0 = Clock::now();
  phase(w, [&] {
    o = compress3d_options(a, out);
    L = layout_of(a);
    std::tie(first, last) = blocks_of(w.rank(), w.size(), L.count());
    for (int b = first; b < last; ++b) {
      mine.push_back(read_block3d(a, "-i", L, b));
      const auto r = factz::value_range_of(mine.back());
      if (!r.empty) {
        lo_neg_hi[0] = std::min(lo_neg_hi[0], r.lo);
        lo_neg_hi[1] = std::min(lo_neg_hi[1], -r.hi);
      }
    }
  });
  const double read_s = seconds_since(t0);
  // The global value range (REL bounds): one reduction of two doubles.
  check(w.allreduce_min(lo_neg_hi));
  factz::ValueRange global;
  if (lo_neg_hi[0] <= -lo_neg_hi[1]) global = {lo_neg_hi[0], -lo_neg_hi[1], false};
  std::vector<uint64_t> lengths;
  std::vector<uint8_t> bytes;
  int64_t exact = 0, masked = 0;
  double eb_abs = 0;
  const auto t1 = Clock::now();
  phase(w, [&] {
    eb_abs = take(factz::absolute_bound(o, global));
    for (int b = first; b < last; ++b) {
      factz::CompressStats st;
      Field& f = mine[size_t(b - first)];
      auto s = factz::compress_block(f, L, b, o, eb_abs, &st);
      if (!s.ok()) fail("block " + std::to_string(b) + ": " + s.status().to_string());
      // Missing vertices counted once: those the block owns (the planes it shares with a
      // later band belong to that band).
      const factz::BlockExtent3D& e = L.blocks[size_t(b)];
      if (!f.mask.empty())
        for (int64_t z = 0; z < e.nz - (e.z0 + e.nz < L.nz ? 1 : 0); ++z)
          for (int64_t y = 0; y < e.ny - (e.y0 + e.ny < L.ny ? 1 : 0); ++y)
            for (int64_t x = 0; x < e.nx - (e.x0 + e.nx < L.nx ? 1 : 0); ++x)
              masked += f.mask[size_t((z * e.ny + y) * e.nx + x)] != 0;
      decltype(f.u)().swap(f.u);
      decltype(f.v)().swap(f.v);
      decltype(f.w)().swap(f.w);
      lengths.push_back(s.value().size());
      bytes.insert(bytes.end(), s.value().begin(), s.value().end());
      exact += st.exact_vertices;
    }
  });
  const double compress_s = seconds_since(t1);
  // Every block's stream length, in block order (ranks hold ascending ranges).
  const std::vector<uint64_t> all = take(w.allgather(lengths));
  const std::vector<uint8_t> header = factz::multiblock3d_header(L, o, all);
  uint64_t offset = header.size(), file_bytes = header.size();
  for (int b = 0; b < L.count(); ++b) {
    if (b < first) offset += all[size_t(b)];
    file_bytes += all[size_t(b)];
  }
  if (w.rank() == 0) {  // the header, then rank 0's streams
    bytes.insert(bytes.begin(), header.begin(), header.end());
    offset = 0;
  }
  const auto t2 = Clock::now();
  written_or_removed(w, out, [&] { check(w.write_at_all(out, file_bytes, offset, bytes)); });
  const double write_s = seconds_since(t2);
  int64_t sums[2] = {exact, masked};
  double maxima[6] = {read_s, compress_s, write_s, seconds_since(t0), double(bytes.size()), double(w.comm_bytes())};
  check(w.allreduce_sum(sums));
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<Field>(L.nx * L.ny * L.nz), ratio = raw / double(file_bytes);
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_grid(r, L);
  r.count("ranks", w.size()).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file_bytes));
  r.num("ratio", ratio).num("bit_rate", 8.0 * 3.0 * double(sizeof(ValueOf<Field>)) / ratio).num("eb_abs", eb_abs);
  r.count("exact_vertices", sums[0]).count("masked_vertices", sums[1]);
  r.num("read_seconds", maxima[0]).num("compress_seconds", maxima[1]).num("write_seconds", maxima[2]);
  r.num("total_seconds", maxima[3]).num("throughput_mbs", raw / std::max(maxima[1], 1e-9) / 1e6);
  r.count("rank_bytes_max", int64_t(maxima[4])).count("comm_bytes_max", int64_t(maxima[5]));
  r.print(a.has("--json"), false);
  return 0;
}

// ---- decompress ----------------------------------------------------------------------------

/// Writes the three components through the 3D writer (raw float32 or '<f4' .npy).
void write_field(const std::vector<std::string>& outputs, const VectorField3D& f) {
  write_component(outputs[0], f.u, f.nx, f.ny, f.nz);
  write_component(outputs[1], f.v, f.nx, f.ny, f.nz);
  write_component(outputs[2], f.w, f.nx, f.ny, f.nz);
}

std::vector<std::string> decode_outputs(const Args& a) {
  require_float32(a);
  const auto outputs = three_files(a, "-o");
  if (any_variable_output(outputs))
    fail("3D vector components are written as raw float32 or .npy files (no netCDF / HDF5 output yet)", 2);
  int to_stdout = 0;
  for (const auto& o : outputs) to_stdout += o == "-";
  if (to_stdout > 1) fail("only one component can go to stdout", 2);
  return outputs;
}

/// One process, the whole file in memory: the library's decompress_multiblock3d.
int decompress_whole3d(const Args& a, const std::vector<uint8_t>& file) {
  const auto outputs = decode_outputs(a);
  const factz::DecompressOptions d = vector_decompress_options(a);
  const auto t0 = Clock::now();
  const VectorField3D f = take(factz::decompress_multiblock3d(file, d));
  const double secs = seconds_since(t0);
  write_field(outputs, f);
  const auto ix = take(factz::parse_multiblock3d_index(file, file.size()));
  StatsWriter r;
  add_grid(r, ix.layout);
  r.count("ranks", 1).count("raw_bytes", int64_t(raw_bytes_of<VectorField3D>(f.size())));
  r.count("compressed_bytes", int64_t(file.size())).num("decompress_seconds", secs);
  r.num("throughput_mbs", raw_bytes_of<VectorField3D>(f.size()) / std::max(secs, 1e-9) / 1e6);
  r.print(a.has("--json"), false);
  return 0;
}

/// The (z, y) rows of decoded block b that b owns, as segments of the global raw plane.
template <class T>
void owned_segments(const BlockLayout3D& L, int b, const std::vector<T>& plane,
                    std::vector<factz::mpi::Segment>& segs) {
  const BlockExtent3D& e = L.blocks[size_t(b)];
  const int64_t wx = e.nx - (e.x0 + e.nx < L.nx ? 1 : 0), wy = e.ny - (e.y0 + e.ny < L.ny ? 1 : 0),
                wz = e.nz - (e.z0 + e.nz < L.nz ? 1 : 0);
  for (int64_t z = 0; z < wz; ++z)
    for (int64_t y = 0; y < wy; ++y)
      segs.push_back({uint64_t(((e.z0 + z) * L.ny + e.y0 + y) * L.nx + e.x0) * sizeof(T),
                      plane.data() + (z * e.ny + y) * e.nx, wx, int(sizeof(T))});
}

/// Every rank decodes its blocks of the file at `path` and writes its part of the global raw
/// planes.
int decompress_distributed3d(World& w, const Args& a) {
  std::string path;
  std::vector<std::string> outputs;
  std::vector<uint8_t> head;
  phase(w, [&] {
    outputs = decode_outputs(a);
    path = a.get("-z");
    require_plain_paths({path, outputs[0], outputs[1], outputs[2]});
    require_seekable(path, "decompressing under mpirun");
    for (const auto& o : outputs)
      if (ends_with(o, ".npy")) fail("under mpirun the outputs are raw float32 planes, not .npy", 2);
    if (w.rank() == 0) {  // one rank reads the index, every rank gets it
      uint64_t size = 0;
      head = read_header_bytes(path, size);
      for (int k = 0; k < 8; ++k) head.push_back(uint8_t(size >> (8 * k)));
    }
  });
  check(w.broadcast(head, 0));
  factz::MultiBlockIndex3D ix;
  int first = 0, last = 0;
  phase(w, [&] {
    uint64_t size = 0;
    for (int k = 0; k < 8; ++k) size |= uint64_t(head[head.size() - 8 + size_t(k)]) << (8 * k);
    head.resize(head.size() - 8);
    ix = take(factz::parse_multiblock3d_index(head, size));
    std::tie(first, last) = blocks_of(w.rank(), w.size(), ix.layout.count());
  });
  const BlockLayout3D& L = ix.layout;
  const uint64_t from = first < last ? ix.entries[size_t(first)].offset : 0;
  const uint64_t to = first < last ? ix.entries[size_t(last - 1)].offset + ix.entries[size_t(last - 1)].length : 0;
  const auto t0 = Clock::now();
  std::vector<uint8_t> streams;
  phase(w, [&] { streams = take(w.read_at_all(path, from, to - from)); });
  std::vector<VectorField3D> decoded;
  phase(w, [&] {
    const factz::DecompressOptions d = vector_decompress_options(a);
    for (int b = first; b < last; ++b) {
      const auto& en = ix.entries[size_t(b)];
      const auto s = std::span<const uint8_t>(streams).subspan(size_t(en.offset - from), size_t(en.length));
      const BlockExtent3D& e = L.blocks[size_t(b)];
      const auto dims = factz::stream_dims3d(s);
      if (!dims.ok()) fail("block " + std::to_string(b) + ": " + dims.status().to_string());
      if (dims.value() != std::array<int64_t, 3>{e.nx, e.ny, e.nz})
        fail("corrupt_stream: block " + std::to_string(b) + " does not hold the field its index says");
      auto f = factz::decompress3d(s, d);
      if (!f.ok()) fail("block " + std::to_string(b) + ": " + f.status().to_string());
      decoded.push_back(std::move(f).value());
    }
  });
  const double decode_s = seconds_since(t0);
  const auto t1 = Clock::now();
  const uint64_t plane_bytes = uint64_t(L.nx * L.ny * L.nz) * sizeof(float);
  for (int c = 0; c < 3; ++c) {
    std::vector<factz::mpi::Segment> segs;
    for (int b = first; b < last; ++b) {
      const VectorField3D& f = decoded[size_t(b - first)];
      owned_segments(L, b, c == 0 ? f.u : c == 1 ? f.v : f.w, segs);
    }
    std::sort(segs.begin(), segs.end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
    const std::string& name = outputs[size_t(c)];
    written_or_removed(w, name, [&] { check(w.write_segments_all(name, plane_bytes, segs)); });
  }
  const double write_s = seconds_since(t1);
  double maxima[4] = {decode_s, write_s, seconds_since(t0), double(to - from)};
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<VectorField3D>(L.nx * L.ny * L.nz);
  StatsWriter r;
  add_grid(r, L);
  r.count("ranks", w.size()).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(ix.file_bytes));
  r.num("decompress_seconds", maxima[0]).num("write_seconds", maxima[1]).num("total_seconds", maxima[2]);
  r.num("throughput_mbs", raw / std::max(maxima[0], 1e-9) / 1e6).count("rank_bytes_read_max", int64_t(maxima[3]));
  r.print(a.has("--json"), false);
  return 0;
}

// ---- verify --------------------------------------------------------------------------------

/// Counts and error sums of a set of blocks; the sums over all blocks are the global figures.
struct Tally3D {
  /// cp_original, cp_decompressed, lost, spurious, type_changed, mask_mismatch, masked, valid
  int64_t counts[8] = {};
  double sq[1] = {};      ///< sum of squared errors over owned vertices valid in both
  double maxima[5] = {};  ///< max |du|, |dv|, |dw|, max value, -min value (original, valid)
  Tally3D() { maxima[3] = maxima[4] = -std::numeric_limits<double>::infinity(); }
};

/// Adds block b: critical points by factz::compare on the block (every tetrahedron of the
/// global mesh lies in exactly one block and its signature depends on its four vertices
/// only, so the per-block counts sum to the global comparison's); masks and errors over the
/// vertices the block owns (each vertex counted once).
void tally_block(const BlockLayout3D& L, int b, const VectorField3D& o, const VectorField3D& d, factz::Exec ex,
                 Tally3D& t) {
  const auto c = take(factz::compare(o, d, ex));
  t.counts[0] += c.cp_original;
  t.counts[1] += c.cp_decompressed;
  t.counts[2] += c.lost;
  t.counts[3] += c.spurious;
  t.counts[4] += c.type_changed;
  const std::vector<uint8_t> mo = factz::missing_mask(o), md = factz::missing_mask(d);
  const BlockExtent3D& e = L.blocks[size_t(b)];
  const int64_t wx = e.nx - (e.x0 + e.nx < L.nx ? 1 : 0), wy = e.ny - (e.y0 + e.ny < L.ny ? 1 : 0),
                wz = e.nz - (e.z0 + e.nz < L.nz ? 1 : 0);
  for (int64_t z = 0; z < wz; ++z)
    for (int64_t y = 0; y < wy; ++y)
      for (int64_t x = 0; x < wx; ++x) {
        const size_t k = size_t((z * e.ny + y) * e.nx + x);
        const bool miss_o = !mo.empty() && mo[k], miss_d = !md.empty() && md[k];
        t.counts[5] += miss_o != miss_d;
        t.counts[6] += miss_o;
        if (!miss_o) {
          t.maxima[3] = std::max({t.maxima[3], double(o.u[k]), double(o.v[k]), double(o.w[k])});
          t.maxima[4] = std::max({t.maxima[4], -double(o.u[k]), -double(o.v[k]), -double(o.w[k])});
        }
        if (miss_o || miss_d) continue;
        ++t.counts[7];
        const double du = double(o.u[k]) - double(d.u[k]), dv = double(o.v[k]) - double(d.v[k]),
                     dw = double(o.w[k]) - double(d.w[k]);
        t.sq[0] += du * du + dv * dv + dw * dw;
        t.maxima[0] = std::max(t.maxima[0], std::fabs(du));
        t.maxima[1] = std::max(t.maxima[1], std::fabs(dv));
        t.maxima[2] = std::max(t.maxima[2], std::fabs(dw));
      }
}

int verify_blocks3d(World& w, const Args& a) {
  BlockLayout3D L;
  Tally3D t;
  phase(w, [&] {
    require_float32(a);
    const auto i = three_files(a, "-i"), d = three_files(a, "-d");
    require_plain_paths({i[0], i[1], i[2], d[0], d[1], d[2]});
    L = layout_of(a);
    const auto [first, last] = blocks_of(w.rank(), w.size(), L.count());
    const factz::Exec ex = exec_of(a);
    if (!w.distributed()) {  // each field read once
      int64_t masked = 0;
      const VectorField3D orig = read_field3d(a, "-i", masked, "verify");
      const VectorField3D dec = read_field3d(a, "-d", masked, "verify", true);
      for (int b = 0; b < L.count(); ++b)
        tally_block(L, b, factz::extract_block(orig, L.blocks[size_t(b)]),
                    factz::extract_block(dec, L.blocks[size_t(b)]), ex, t);
      return;
    }
    for (int b = first; b < last; ++b)
      tally_block(L, b, read_block3d(a, "-i", L, b), read_block3d(a, "-d", L, b), ex, t);
  });
  check(w.allreduce_sum(t.counts));
  check(w.allreduce_sum(t.sq));
  check(w.allreduce_max(t.maxima));
  if (w.rank() != 0) return 0;
  const int64_t n = t.counts[7];
  const double range = t.counts[6] < L.nx * L.ny * L.nz ? t.maxima[3] + t.maxima[4] : 0.0;
  const double rmse = n > 0 ? std::sqrt(t.sq[0] / double(3 * n)) : 0.0;
  const int64_t violations = t.counts[2] + t.counts[3] + t.counts[4] + t.counts[5];
  StatsWriter s;
  s.count("cp_original", t.counts[0]).count("cp_decompressed", t.counts[1]).count("lost", t.counts[2]);
  s.count("spurious", t.counts[3]).count("type_changed", t.counts[4]).count("mask_mismatch", t.counts[5]);
  s.count("violations", violations).count("masked_vertices", t.counts[6]);
  std::string triple = "[";  // built by appending, as run_verify3d does
  for (int k = 0; k < 3; ++k) {
    if (k > 0) triple += ", ";
    triple += json_number(t.maxima[k]);
  }
  s.json("max_abs_error", triple + "]");
  s.num("max_abs_error_u", t.maxima[0], StatsWriter::In::text);
  s.num("max_abs_error_v", t.maxima[1], StatsWriter::In::text);
  s.num("max_abs_error_w", t.maxima[2], StatsWriter::In::text);
  s.num("rmse", rmse).num("nrmse", range > 0 ? rmse / range : 0.0);
  s.num("psnr", rmse > 0 ? 20.0 * std::log10(range / rmse) : std::numeric_limits<double>::infinity());
  s.num("value_range", range, StatsWriter::In::json).text("dtype", "float32", StatsWriter::In::json);
  s.count("blocks", L.count()).count("ranks", w.size());
  s.print(a.has("--json"), true);
  return 0;
}

}  // namespace

namespace blocks {

bool is_multiblock3d_file(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[6] = {};
  in.read(reinterpret_cast<char*>(head), 6);
  return in.gcount() == 6 && factz::is_multiblock3d(head);
}

int run_blocks3d_compress(const Args& a) {
  return guarded("compress", [&a](World& w) {
    if (!w.distributed()) {
      int rc = 0;
      phase(w, [&] { rc = compress_single3d(a); });
      return rc;
    }
    return compress_blocks3d<VectorField3D>(w, a);
  });
}

int run_blocks3d_decompress(const Args& a) {
  return guarded("decompress", [&a](World& w) {
    if (!w.distributed()) {
      int rc = 0;
      phase(w, [&] {
        decode_outputs(a);
        rc = decompress_whole3d(a, take(factz::read_bytes(a.get("-z"))));
      });
      return rc;
    }
    return decompress_distributed3d(w, a);
  });
}

int run_blocks3d_decompress_bytes(const Args& a, const std::vector<uint8_t>& file) {
  return guarded("decompress", [&](World& w) {
    if (w.distributed()) fail("a multi-block file read from a pipe or stdin decodes in one process", 2);
    return decompress_whole3d(a, file);
  });
}

int run_blocks3d_verify(const Args& a) {
  return guarded("verify", [&a](World& w) { return verify_blocks3d(w, a); });
}

}  // namespace blocks
}  // namespace factz::cli
