// Multi-block compress, decompress and verify of 3D vector fields for the CLI
// (docs/multiblock.md, "3D blocks"): `factz compress -3 NX NY NZ -i U -i V -i W -z OUT
// --blocks PX PY PZ`, `decompress` (whole, a window with --region X0 Y0 Z0 X1 Y1 Z1, or one
// file per block with --per-rank) and `verify` of the version 3 (float32) or version 4
// (float64) file it writes. blocks.cpp hands over here (for -3 with --blocks, or a 3D file).
//
// One process: the library's compress_multiblock, decompress_multiblock3d(64) and
// decompress_region3d(64) do the work. Under mpirun (or with --per-rank) the blocks are spread
// over the ranks as for 2D fields (contiguous ranges of block ids); each rank reads only its
// blocks' rows of the global raw inputs (or its own per-rank files), compresses them with the
// bound resolved by one MPI_Allreduce over the ranks' ranges, and the ranks write one file
// together: byte for byte the one-process file. Every fallible step runs inside `phase`
// (blocks.hpp), so a failing rank never leaves the others in a collective.
//
// float32 and float64 fields take the same driver: everything that touches values is a
// template on the field type (VectorField3D, VectorField3D64), chosen from the inputs
// (float64_field: '<f8' .npy files, or raw with --dtype f64) or from the file's header.
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <tuple>
#include <type_traits>

#include "block_steps.hpp"
#include "blocks.hpp"
#include "factz/io.hpp"
#include "factz/multiblock3d.hpp"
#include "field3d_files.hpp"
#include "field_files.hpp"  // any_variable_output

namespace factz::cli {
namespace {

using namespace factz::cli::blocks;
using Clock = std::chrono::steady_clock;

/// Bytes of the raw field (u, v and w).
template <class Field>
double raw_bytes_of(int64_t n) {
  return double(n) * 3.0 * double(sizeof(ValueOf<Field>));
}

/// Options that name 2D components.
void require_3d_options(const Args& a) {
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v name 2D components; give --fill V for a 3D vector field", 2);
}

/// With --per-rank under mpirun every rank has exactly one block.
void require_one_block_per_rank3d(const World& w, const BlockLayout3D& L) {
  if (w.distributed() && L.count() != w.size())
    fail("--per-rank needs PX * PY * PZ = number of ranks, got " + std::to_string(L.px) + " x " +
             std::to_string(L.py) + " x " + std::to_string(L.pz) + " blocks for " + std::to_string(w.size()) +
             " ranks",
         2);
}

/// A whole component of T (raw or .npy), read by the 3D reader.
template <class T>
std::vector<T> component_of(const std::string& path, int64_t nx, int64_t ny, int64_t nz) {
  if constexpr (sizeof(T) == 8) return read_component64(path, nx, ny, nz);
  else return read_component(path, nx, ny, nz);
}

/// Cuts blocks `blocks` out of `src`, planes z_first, z_first + 1, ... of a component of ny rows
/// of nx values each, into `outs` (sized to their blocks).
template <class T>
void cut_blocks3d(const T* src, int64_t z_first, int64_t nx, int64_t ny, const std::vector<BlockExtent3D>& blocks,
                  const std::vector<std::vector<T>*>& outs) {
  for (size_t k = 0; k < blocks.size(); ++k) {
    const BlockExtent3D& e = blocks[k];
    outs[k]->resize(size_t(e.nx * e.ny * e.nz));
    for (int64_t z = 0; z < e.nz; ++z)
      for (int64_t y = 0; y < e.ny; ++y)
        std::memcpy(outs[k]->data() + (z * e.ny + y) * e.nx, src + ((e.z0 - z_first + z) * ny + e.y0 + y) * nx + e.x0,
                    size_t(e.nx) * sizeof(T));
  }
}

/// Blocks `blocks` of the global nx x ny x nz component in `path`, into `outs` (one per
/// block): for a raw regular file, or a .npy file whose header npy_rows_offset accepts, only
/// each block's row segments are read (one read per row, or per slice when rows are whole);
/// another .npy file or a pipe is read whole once (the 3D reader checks its header and says
/// what is wrong) and cut.
template <class T>
void read_block_components(const std::string& path, int64_t nx, int64_t ny, int64_t nz,
                           const std::vector<BlockExtent3D>& blocks, const std::vector<std::vector<T>*>& outs) {
  for (size_t k = 0; k < blocks.size(); ++k)
    outs[k]->assign(size_t(blocks[k].nx * blocks[k].ny * blocks[k].nz), T(0));
  const int64_t volume[3] = {nz, ny, nx};
  const std::optional<uint64_t> npy_base = npy_rows_offset(path, volume, sizeof(T));
  uint64_t base = 0;
  if (npy_base) {
    base = *npy_base;
  } else if (read_whole(path)) {
    const std::vector<T> whole = component_of<T>(path, nx, ny, nz);
    cut_blocks3d(whole.data(), 0, nx, ny, blocks, outs);
    return;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("io: cannot open " + path + ": " + ec.message());
  const uint64_t need = base + uint64_t(nx * ny * nz) * sizeof(T);  // npy_rows_offset checked a .npy file's size
  if (uint64_t(size) != need)
    fail("invalid_argument: " + path + " holds " + std::to_string(size) + " bytes; -3 " + std::to_string(nx) + " " +
         std::to_string(ny) + " " + std::to_string(nz) + " needs " + std::to_string(need) +
         (sizeof(T) == 8 ? " (float64)" : " (float32)"));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("io: cannot open " + path);
  for (size_t k = 0; k < blocks.size(); ++k) {
    const BlockExtent3D& e = blocks[k];
    const bool whole_rows = e.x0 == 0 && e.nx == nx;
    for (int64_t z = 0; z < e.nz; ++z)
      for (int64_t y = 0; y < e.ny; y += whole_rows ? e.ny : 1) {
        const int64_t rows = whole_rows ? e.ny : 1;
        in.seekg(std::streamoff(base + uint64_t(((e.z0 + z) * ny + e.y0 + y) * nx + e.x0) * sizeof(T)));
        in.read(reinterpret_cast<char*>(outs[k]->data() + (z * e.ny + y) * e.nx),
                std::streamsize(uint64_t(rows * e.nx) * sizeof(T)));
        if (!in) fail("io: cannot read " + path);
      }
  }
}

/// Blocks of a 3D field read but not yet marked (the 3D twin of StagedBlocksOf): a rank reads
/// the z-slab of a netCDF / HDF5 variable its blocks span (read_plane_rows_of), raw and .npy
/// components by row segments; what the variables' readers found over the whole field is merged
/// over the ranks (share_staged3d) before finish_blocks3d declares and marks it, so every rank
/// marks what one process reading the whole field marks (read_field3d).
template <class Field>
struct Staged3D {
  std::vector<Field> fields;
  std::vector<BlockExtent3D> extents;
  int first = 0;
  PlaneInputOf<ValueOf<Field>> about[3];  ///< the variables' readers (no values); raw components: empty
  bool variable[3] = {false, false, false};
  std::string command;
};

/// Vertices block b owns along each axis (its extent minus the shared last planes).
std::array<int64_t, 3> owned_sizes(const BlockLayout3D& L, int b);

/// Reads blocks [first, last) of the field of `flag` (-i or -d): their rows of the three global
/// files, or with --per-rank each block's own three files (raw or .npy).
template <class Field>
Staged3D<Field> stage_blocks3d(const Args& a, const char* flag, const BlockLayout3D& L, int first, int last,
                               const std::string& command) {
  using T = ValueOf<Field>;
  Staged3D<Field> st;
  st.first = first;
  st.command = command;
  const auto files = three_files(a, flag);
  const bool per_rank = a.has("--per-rank");
  for (int c = 0; c < 3; ++c) {
    // With --per-rank the names are patterns: the rank's first block's file says what they are.
    const std::string& name = files[size_t(c)];
    st.variable[c] = field_file(per_rank ? per_rank_name(name, std::max(first, 0)) : name).variable.has_value();
    if (st.variable[c] && per_rank)
      fail("with --per-rank a 3D field's components are raw or .npy files (" + files[size_t(c)] +
               " is a netCDF / HDF5 variable: give the global variable without --per-rank)",
           2);
  }
  const std::vector<uint64_t> shape = {uint64_t(L.nz), uint64_t(L.ny), uint64_t(L.nx)};
  if (last <= first) {  // a rank without blocks reads no values; rank 0 still says what the ranks found
    if (this_rank() == 0)
      for (int c = 0; c < 3; ++c)
        if (st.variable[c])
          st.about[c] = read_plane_rows_of<T>(field_file(files[size_t(c)]), shape, 3, command,
                                              variable_io::RowRange{0, 0});
    return st;
  }
  st.fields.resize(size_t(last - first));
  int64_t z0 = L.nz, z1 = 0;  // the slab of planes the blocks span
  for (int b = first; b < last; ++b) {
    Field& f = st.fields[size_t(b - first)];
    const BlockExtent3D& e = L.blocks[size_t(b)];
    st.extents.push_back(e);
    f.nx = e.nx;
    f.ny = e.ny;
    f.nz = e.nz;
    z0 = std::min(z0, e.z0);
    z1 = std::max(z1, e.z0 + e.nz);
  }
  for (int c = 0; c < 3; ++c) {
    std::vector<std::vector<T>*> planes;
    for (Field& f : st.fields) planes.push_back(c == 0 ? &f.u : c == 1 ? &f.v : &f.w);
    if (per_rank) {
      for (int b = first; b < last; ++b) {
        const BlockExtent3D& e = st.extents[size_t(b - first)];
        *planes[size_t(b - first)] = component_of<T>(per_rank_name(files[size_t(c)], b), e.nx, e.ny, e.nz);
      }
      continue;
    }
    if (!st.variable[c]) {
      read_block_components<T>(files[size_t(c)], L.nx, L.ny, L.nz, st.extents, planes);
      continue;
    }
    const QuietReaderNotes quiet(this_rank() != 0);  // rank 0 says what its reader found
    PlaneInputOf<T>& p = st.about[c];
    p = read_plane_rows_of<T>(field_file(files[size_t(c)]), shape, 3, command,
                              variable_io::RowRange{uint64_t(z0), uint64_t(z1 - z0)});
    cut_blocks3d(p.values.data(), int64_t(p.first_row), L.nx, L.ny, st.extents, planes);
    std::vector<T>().swap(p.values);
    // Each rank counts the values outside the valid range that its blocks own (summed over the
    // ranks by share_staged3d), whatever planes it read.
    if (!p.outside.range.empty()) {
      p.outside.count = 0;
      for (int b = first; b < last; ++b) {
        const BlockExtent3D& e = st.extents[size_t(b - first)];
        p.outside.count += owned_outside(p, *planes[size_t(b - first)], e.nx, e.ny, owned_sizes(L, b));
      }
    }
  }
  return st;
}

/// Collective, between two phases: merges the variables' readers over the ranks (every rank
/// passes its three components, read or not).
template <class Field>
void share_staged3d(World& w, Staged3D<Field>& st) {
  PlaneInputOf<ValueOf<Field>>* const planes[3] = {&st.about[0], &st.about[1], &st.about[2]};
  share_readers<ValueOf<Field>>(w, planes);
}

/// Declares each component's fill values (a variable's own and its values outside the valid
/// range, as read_field3d; --fill replaces them; `like`, an original's, marks a reconstruction
/// too), marks NaN and --fill in any component, validates; `declared` gets the fill values.
template <class Field>
std::vector<Field> finish_blocks3d(const Args& a, Staged3D<Field>& st, Field3DInfo<ValueOf<Field>>* declared = nullptr,
                                   const Field3DInfo<ValueOf<Field>>* like = nullptr) {
  using T = ValueOf<Field>;
  Field3DInfo<T> fills;
  {
    const QuietReaderNotes quiet(this_rank() != 0);  // rank 0 says what the ranks found together
    for (int c = 0; c < 3; ++c)
      if (st.variable[c]) {
        finish_plane_input(st.about[c], st.command);
        fills.fills[c] = std::move(st.about[c].fills);
      }
  }
  apply_fill_options3d(a, fills, like);
  for (size_t k = 0; k < st.fields.size(); ++k) {
    Field& f = st.fields[k];
    const BlockExtent3D& e = st.extents[k];
    const std::vector<T>* planes[3] = {&f.u, &f.v, &f.w};
    for (int c = 0; c < 3; ++c) mark_values<T>(f.mask, *planes[c], fills.fills[c]);  // compared in T
    if constexpr (kFloat64<Field>) factz::mark_missing(f, fill3d_of64(a));
    else factz::mark_missing(f, fill3d_of(a));
    const Status s = factz::validate_field(f);
    if (!s.ok())
      fail("block " + std::to_string(st.first + int(k)) + " (from x=" + std::to_string(e.x0) +
           ", y=" + std::to_string(e.y0) + ", z=" + std::to_string(e.z0) + "): " + s.to_string());
  }
  if (declared) *declared = std::move(fills);
  return std::move(st.fields);
}

/// Blocks [first, last) of the global field of `flag`, read and marked in one step, with no
/// other rank to share with (one process with --per-rank, or raw and .npy components; under
/// mpirun the drivers stage, share and finish).
template <class Field>
std::vector<Field> read_blocks3d(const Args& a, const char* flag, const BlockLayout3D& L, int first, int last) {
  Staged3D<Field> st = stage_blocks3d<Field>(a, flag, L, first, last, "compress");
  for (int c = 0; c < 3; ++c)
    if (st.variable[c] && last - first != L.count())
      fail("internal: a variable's blocks read without sharing what the ranks found");
  return finish_blocks3d(a, st);
}

/// Block b of the global field of `flag` (read_blocks3d of that one block).
template <class Field>
Field read_block3d(const Args& a, const char* flag, const BlockLayout3D& L, int b) {
  return std::move(read_blocks3d<Field>(a, flag, L, b, b + 1).front());
}

/// The whole field of `flag` in memory, as Field.
/// `info` receives the fill values the files declared and the grid, which `like` (verify's
/// original, given for the reconstruction) applies.
template <class Field>
Field whole_field(const Args& a, const char* flag, const std::string& command, bool reconstruction = false,
                  const Field3DInfo<ValueOf<Field>>* like = nullptr, Field3DInfo<ValueOf<Field>>* info = nullptr) {
  int64_t masked = 0;
  if constexpr (kFloat64<Field>) return read_field3d64(a, flag, masked, command, reconstruction, like, info);
  else return read_field3d(a, flag, masked, command, reconstruction, like, info);
}

/// FNV-1a hashes of block f's six outer faces (x min, x max, y min, y max, z min, z max), u, v
/// then w, over the values' bytes: per-rank files of neighbouring blocks must agree on the
/// face they share.
template <class Field>
std::array<uint64_t, 6> face_hashes(const Field& f) {
  using T = ValueOf<Field>;
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  std::array<uint64_t, 6> h;
  h.fill(1469598103934665603ull);
  auto add = [&h, &f](int face, int64_t x, int64_t y, int64_t z) {
    const size_t k = size_t((z * f.ny + y) * f.nx + x);
    for (const auto* plane : {&f.u, &f.v, &f.w}) {
      const Bits bits = std::bit_cast<Bits>((*plane)[k]);
      for (size_t i = 0; i < sizeof(T); ++i)
        h[size_t(face)] = (h[size_t(face)] ^ ((bits >> (8 * i)) & 0xFF)) * 1099511628211ull;
    }
  };
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y) {
      add(0, 0, y, z);
      add(1, f.nx - 1, y, z);
    }
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t x = 0; x < f.nx; ++x) {
      add(2, x, 0, z);
      add(3, x, f.ny - 1, z);
    }
  for (int64_t y = 0; y < f.ny; ++y)
    for (int64_t x = 0; x < f.nx; ++x) {
      add(4, x, y, 0);
      add(5, x, y, f.nz - 1);
    }
  return h;
}

/// With --per-rank, neighbouring blocks come from different files: they must hold the same
/// values on their shared face, or the decomposition is not of one global field. `all` holds
/// every block's face_hashes, in block order.
void check_shared_faces(const BlockLayout3D& L, const std::vector<uint64_t>& all) {
  const int plane = L.px * L.py;
  for (int b = 0; b < L.count(); ++b) {
    const int bx = b % L.px, by = (b / L.px) % L.py, bz = b / plane;
    const BlockExtent3D& e = L.blocks[size_t(b)];
    auto differ = [&](int next, int face, int other_face, const char* axis, int64_t at) {
      if (all[size_t(6 * b + face)] != all[size_t(6 * next + other_face)])
        fail("invalid_argument: --per-rank files of blocks " + std::to_string(b) + " and " + std::to_string(next) +
             " differ on their shared plane " + axis + "=" + std::to_string(at));
    };
    if (bx + 1 < L.px) differ(b + 1, 1, 0, "x", e.x0 + e.nx - 1);
    if (by + 1 < L.py) differ(b + L.px, 3, 2, "y", e.y0 + e.ny - 1);
    if (bz + 1 < L.pz) differ(b + plane, 5, 4, "z", e.z0 + e.nz - 1);
  }
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

/// Vertices block b owns along each axis (its extent minus the shared last planes).
std::array<int64_t, 3> owned_sizes(const BlockLayout3D& L, int b) {
  const BlockExtent3D& e = L.blocks[size_t(b)];
  return {e.nx - (e.x0 + e.nx < L.nx ? 1 : 0), e.ny - (e.y0 + e.ny < L.ny ? 1 : 0),
          e.nz - (e.z0 + e.nz < L.nz ? 1 : 0)};
}

// ---- compress ------------------------------------------------------------------------------

/// Options and paths of compress, checked the same way by both drivers.
factz::Options compress3d_options(const Args& a, std::string& out) {
  require_3d_options(a);
  const auto files = three_files(a, "-i");
  if (!a.has("-z")) fail("missing -z OUT", 2);
  out = a.get("-z");
  require_plain_paths({files[0], files[1], files[2], out});
  if (a.has("--per-rank")) require_per_rank_names({files[0], files[1], files[2]});
  if (a.has("--scalar") || a.has("--persistence") || a.get("--mode") == "contour-tree")
    fail("--blocks takes vector fields", 2);
  return vector_compress_options(a, false);
}

/// One process, the global field in memory: the library's compress_multiblock.
template <class Field>
int compress_single3d(const Args& a) {
  std::string out;
  factz::Options o = compress3d_options(a, out);
  o.progress = compress_progress(a);
  const BlockLayout3D L = layout_of(a);
  const auto t0 = Clock::now();
  Field3DInfo<ValueOf<Field>> info;
  const Field f = whole_field<Field>(a, "-i", "compress", false, nullptr, &info);
  o.source = std::move(info.source);  // variables' record: after the file's last block (versions 7 and 8)
  const double read_s = seconds_since(t0);
  factz::CompressStats st;
  const auto t1 = Clock::now();
  const auto file = take(factz::compress_multiblock(f, o, L.px, L.py, L.pz, &st));
  const double compress_s = seconds_since(t1);
  const auto t2 = Clock::now();
  check(factz::write_bytes(out, file));
  const double write_s = seconds_since(t2);
  const double raw = raw_bytes_of<Field>(f.size()), ratio = raw / double(file.size());
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_dtype<Field>(r);
  add_grid(r, L);
  r.count("ranks", 1).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file.size()));
  r.num("ratio", ratio).num("bit_rate", 24.0 * double(sizeof(ValueOf<Field>)) / ratio).num("eb_abs", st.eb_abs);
  r.count("exact_vertices", st.exact_vertices).count("masked_vertices", st.masked_vertices);
  r.num("read_seconds", read_s).num("compress_seconds", compress_s).num("write_seconds", write_s);
  r.num("total_seconds", seconds_since(t0)).num("throughput_mbs", raw / std::max(compress_s, 1e-9) / 1e6);
  r.count("rank_bytes_max", int64_t(file.size())).count("comm_bytes_max", 0);
  r.print(a.has("--json"), false);
  note_bound_below_packing("compress", st.eb_abs);
  return 0;
}

/// Every rank its blocks (with --per-rank, from their own files); one file written together.
template <class Field>
int compress_blocks3d(World& w, const Args& a) {
  BlockLayout3D L;
  factz::Options o;
  std::string out;
  std::vector<Field> mine;
  int first = 0, last = 0;
  factz::ValueRange range;  // of this rank's blocks
  Staged3D<Field> staged;
  const auto t0 = Clock::now();
  phase(w, [&] {
    o = compress3d_options(a, out);
    if (!a.has("--per-rank")) {
      const auto files = three_files(a, "-i");
      require_regular_inputs(w, {files[0], files[1], files[2]});
    }
    L = layout_of(a);
    if (a.has("--per-rank")) {
      require_one_block_per_rank3d(w, L);
      refuse_clobbering(per_rank_paths(a, {"-i"}, L.count()), path_args(a, {"-z"}));
    }
    std::tie(first, last) = blocks_of(w.rank(), w.size(), L.count());
    staged = stage_blocks3d<Field>(a, "-i", L, first, last, "compress");  // a variable: its planes of these blocks
  });
  share_staged3d(w, staged);  // what the variables' readers found, merged over the ranks
  phase(w, [&] {
    mine = finish_blocks3d(a, staged);
    for (const Field& f : mine) range = factz::merge(range, factz::value_range_of(f));
  });
  // Variables: their source record, as one process writes it (rank 0 reads it without the
  // values; every rank needs its size).
  if (!a.has("--per-rank")) {
    phase(w, [&] {
      if (w.rank() != 0) return;
      const QuietReaderNotes quiet(true);  // the blocks' reading said it all
      const auto files = three_files(a, "-i");
      o.source = source_record_without_values<ValueOf<Field>>({files[0], files[1], files[2]}, 3, "compress");
    });
    check(w.broadcast(o.source, 0));
  }
  if (a.has("--per-rank"))  // 48 bytes per block gathered
    check_per_rank_files(
        w, mine, [](const Field& f) { return face_hashes(f); },
        [&L](const std::vector<uint64_t>& all) { check_shared_faces(L, all); });
  const double read_s = seconds_since(t0);
  const factz::ValueRange global = global_range(w, range);  // REL bounds
  std::vector<uint64_t> lengths;
  std::vector<uint8_t> bytes;
  int64_t masked = 0;
  double eb_abs = 0;
  const auto t1 = Clock::now();
  // Missing vertices counted once: those a block owns (the planes it shares with a later band
  // belong to that band).
  auto count_masked = [&](int b, const Field& f) {
    const BlockExtent3D& e = L.blocks[size_t(b)];
    const auto own = owned_sizes(L, b);
    if (!f.mask.empty())
      for (int64_t z = 0; z < own[2]; ++z)
        for (int64_t y = 0; y < own[1]; ++y)
          for (int64_t x = 0; x < own[0]; ++x) masked += f.mask[size_t((z * e.ny + y) * e.nx + x)] != 0;
  };
  const int64_t exact = compress_rank_blocks(w, mine, L, first, o, global, eb_abs, lengths, bytes, count_masked);
  const double compress_s = seconds_since(t1);
  const auto t2 = Clock::now();
  // Variables' record after the last block (versions 7 and 8), as one process writes it.
  const uint64_t file_bytes = write_multiblock_file(
      w, out, first, lengths, bytes, factz::multiblock_source_trailer(o.source, o.zstd),
      [&](const auto& all) { return factz::multiblock3d_header(L, o, all, kDTypeOf<Field>); });
  const double write_s = seconds_since(t2);
  int64_t sums[2] = {exact, masked};
  double maxima[6] = {read_s, compress_s, write_s, seconds_since(t0), double(bytes.size()), double(w.comm_bytes())};
  check(w.allreduce_sum(sums));
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<Field>(L.nx * L.ny * L.nz), ratio = raw / double(file_bytes);
  StatsWriter r;
  r.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder));
  add_dtype<Field>(r);
  add_grid(r, L);
  r.count("ranks", w.size()).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(file_bytes));
  r.num("ratio", ratio).num("bit_rate", 24.0 * double(sizeof(ValueOf<Field>)) / ratio).num("eb_abs", eb_abs);
  r.count("exact_vertices", sums[0]).count("masked_vertices", sums[1]);
  r.num("read_seconds", maxima[0]).num("compress_seconds", maxima[1]).num("write_seconds", maxima[2]);
  r.num("total_seconds", maxima[3]).num("throughput_mbs", raw / std::max(maxima[1], 1e-9) / 1e6);
  r.count("rank_bytes_max", int64_t(maxima[4])).count("comm_bytes_max", int64_t(maxima[5]));
  r.print(a.has("--json"), false);
  note_bound_below_packing("compress", eb_abs);
  return 0;
}

// ---- decompress ----------------------------------------------------------------------------

/// Writes the three components through the 3D writer (raw or .npy, float32 or float64), or
/// netCDF / HDF5 variables: with the file's source record (of the field's window) their
/// variables' dimensions, attributes and coordinates, else plain dimensions (z, y, x) and
/// their missing vertices' common value declared as _FillValue; --repack re-packs them.
template <class Field>
void write_field(const Args& a, const std::vector<std::string>& outputs, const Field& f,
                 const std::optional<factz::SourceRecord>& source) {
  using T = ValueOf<Field>;
  write_field_outputs<T>(
      outputs, {&f.u, &f.v, &f.w}, {uint64_t(f.nz), uint64_t(f.ny), uint64_t(f.nx)}, source, f.mask, "decompress",
      [&f](const std::string& name, const std::vector<T>& plane) { write_component(name, plane, f.nx, f.ny, f.nz); },
      a.has("--repack"));
}

/// The three -o names; netCDF / HDF5 variables only where one process writes the whole field
/// (`variables`), not under mpirun or --per-rank.
std::vector<std::string> decode_outputs(const Args& a, bool variables) {
  require_3d_options(a);
  const auto outputs = three_files(a, "-o");
  if (!variables && any_variable_output(outputs))
    fail("under mpirun or with --per-rank, 3D vector components are written as raw files (netCDF / HDF5 variables "
         "in one process only)",
         2);
  int to_stdout = 0;
  for (const auto& o : outputs) to_stdout += o == "-";
  if (to_stdout > 1) fail("only one component can go to stdout", 2);
  return outputs;
}

/// One process, the whole file in memory: the library's decompress_multiblock3d (or
/// decompress_multiblock3d64 for a version 4 file).
template <class Field>
int decompress_whole3d(const Args& a, const std::vector<uint8_t>& file, const factz::MultiBlockIndex3D& ix) {
  const auto outputs = decode_outputs(a, true);
  const factz::DecompressOptions d = vector_decompress_options(a);
  const auto t0 = Clock::now();
  Field f;
  if constexpr (kFloat64<Field>) f = take(factz::decompress_multiblock3d64(file, d));
  else f = take(factz::decompress_multiblock3d(file, d));
  const double secs = seconds_since(t0);
  write_field(a, outputs, f, take(factz::multiblock_source(file)));
  StatsWriter r;
  add_grid(r, ix.layout);
  add_dtype<Field>(r);
  r.count("ranks", 1).count("raw_bytes", int64_t(raw_bytes_of<Field>(f.size())));
  r.count("compressed_bytes", int64_t(file.size())).num("decompress_seconds", secs);
  r.num("throughput_mbs", raw_bytes_of<Field>(f.size()) / std::max(secs, 1e-9) / 1e6);
  r.print(a.has("--json"), false);
  return 0;
}

int decompress_whole3d(const Args& a, const std::vector<uint8_t>& file) {
  const auto ix = take(factz::parse_multiblock3d_index(file, file.size()));
  return ix.dtype == factz::DType::float64 ? decompress_whole3d<VectorField3D64>(a, file, ix)
                                           : decompress_whole3d<VectorField3D>(a, file, ix);
}

/// `--region X0 Y0 Z0 X1 Y1 Z1` (a 3D file's window; half-open, as the 2D X0 Y0 X1 Y1).
factz::Region3D region3d_of(const Args& a) {
  const auto& r = a.all("--region").back();
  if (r.size() != 6) fail("a 3D multi-block file takes --region X0 Y0 Z0 X1 Y1 Z1 (six integers)", 2);
  long long v[6];
  for (int k = 0; k < 6; ++k)
    if (!to_int64(r[size_t(k)], v[k]) || v[k] < 0)
      fail("--region needs six integers >= 0 (X0 Y0 Z0 X1 Y1 Z1), got '" + r[size_t(k)] + "'", 2);
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

/// --region: one process reads the index and the blocks owning a vertex of the window.
template <class Field>
int decompress_region3d_as(const Args& a, const std::vector<std::string>& outputs) {
  const factz::DecompressOptions d = vector_decompress_options(a);
  const factz::Region3D r = region3d_of(a);
  const auto t0 = Clock::now();
  factz::RegionStats st;
  Field f;
  if constexpr (kFloat64<Field>) f = take(factz::decompress_region3d64(a.get("-z"), r, d, &st));
  else f = take(factz::decompress_region3d(a.get("-z"), r, d, &st));
  const double secs = seconds_since(t0);
  // The record of the window: its coordinates and auxiliary variables cut to it.
  auto source = take(factz::read_multiblock_source(a.get("-z")));
  if (source) {
    const uint64_t first[3] = {uint64_t(r.z0), uint64_t(r.y0), uint64_t(r.x0)};
    const uint64_t count[3] = {uint64_t(f.nz), uint64_t(f.ny), uint64_t(f.nx)};
    source = take(factz::window_of_source_record(*source, first, count));
  }
  write_field(a, outputs, f, source);
  StatsWriter s;
  s.count("nx", f.nx).count("ny", f.ny).count("nz", f.nz);
  add_dtype<Field>(s);
  add_region_stats(s, st, a.get("-z"), secs);
  s.print(a.has("--json"), false);
  return 0;
}

int decompress_region3d_cli(const Args& a) {
  const auto outputs = decode_outputs(a, true);
  require_seekable(a.get("-z"), "--region");
  const auto ix = take(factz::read_multiblock3d_index(a.get("-z")));
  return ix.dtype == factz::DType::float64 ? decompress_region3d_as<VectorField3D64>(a, outputs)
                                           : decompress_region3d_as<VectorField3D>(a, outputs);
}

/// The (z, y) rows of decoded block b that b owns, as segments of the global raw plane.
template <class T>
void owned_segments(const BlockLayout3D& L, int b, const std::vector<T>& plane,
                    std::vector<factz::mpi::Segment>& segs) {
  const BlockExtent3D& e = L.blocks[size_t(b)];
  const auto own = owned_sizes(L, b);
  for (int64_t z = 0; z < own[2]; ++z)
    for (int64_t y = 0; y < own[1]; ++y)
      segs.push_back({uint64_t(((e.z0 + z) * L.ny + e.y0 + y) * L.nx + e.x0) * sizeof(T),
                      plane.data() + (z * e.ny + y) * e.nx, own[0], int(sizeof(T))});
}

/// Block b's stream decoded as Field, after checking that it holds the extent `e` its index
/// entry says and the file's data type.
template <class Field>
Field decode_block3d(std::span<const uint8_t> s, const BlockExtent3D& e, int b, const factz::DecompressOptions& d) {
  const auto dims = factz::stream_dims3d(s);
  if (!dims.ok()) fail("block " + std::to_string(b) + ": " + dims.status().to_string());
  if (dims.value() != std::array<int64_t, 3>{e.nx, e.ny, e.nz})
    fail("corrupt_stream: block " + std::to_string(b) + " does not hold the field its index says");
  const auto dtype = take(factz::stream_dtype3d(s));
  if (dtype != kDTypeOf<Field>)
    fail("corrupt_stream: block " + std::to_string(b) + " holds " + factz::dtype_name(dtype) +
         " values, the file's header says " + factz::dtype_name(kDTypeOf<Field>));
  factz::Result<Field> f = factz::Status();
  if constexpr (kFloat64<Field>) f = factz::decompress3d64(s, d);
  else f = factz::decompress3d(s, d);
  if (!f.ok()) fail("block " + std::to_string(b) + ": " + f.status().to_string());
  return std::move(f).value();
}

/// Every rank decodes its blocks [first, last) of the file at `path` and writes its part of
/// the global raw planes (or, with --per-rank, each block's own three files).
template <class Field>
int decompress_blocks3d(World& w, const Args& a, const std::string& path, const std::vector<std::string>& outputs,
                        const factz::MultiBlockIndex3D& ix, int first, int last) {
  const BlockLayout3D& L = ix.layout;
  const auto t0 = Clock::now();
  uint64_t read_bytes = 0;
  const std::vector<Field> decoded = decode_rank_blocks<Field>(
      w, a, path, ix, first, last, read_bytes,
      [&L](std::span<const uint8_t> s, int b, const factz::DecompressOptions& d) {
        return decode_block3d<Field>(s, L.blocks[size_t(b)], b, d);
      });
  const double decode_s = seconds_since(t0);
  const auto t1 = Clock::now();
  if (a.has("--per-rank")) {
    phase(w, [&] {
      for (int b = first; b < last; ++b) {
        const Field& f = decoded[size_t(b - first)];
        write_field(a, {per_rank_name(outputs[0], b), per_rank_name(outputs[1], b), per_rank_name(outputs[2], b)}, f,
                    std::nullopt);
      }
    });
  } else {
    write_owned_planes(w, decoded, first, outputs, L.nx * L.ny * L.nz, [&L](int b, const auto& plane, auto& segs) {
      owned_segments(L, b, plane, segs);
    });
  }
  const double write_s = seconds_since(t1);
  double maxima[4] = {decode_s, write_s, seconds_since(t0), double(read_bytes)};
  check(w.allreduce_max(maxima));
  if (w.rank() != 0) return 0;
  const double raw = raw_bytes_of<Field>(L.nx * L.ny * L.nz);
  StatsWriter r;
  add_grid(r, L);
  add_dtype<Field>(r);
  r.count("ranks", w.size()).count("raw_bytes", int64_t(raw)).count("compressed_bytes", int64_t(ix.file_bytes));
  r.num("decompress_seconds", maxima[0]).num("write_seconds", maxima[1]).num("total_seconds", maxima[2]);
  r.num("throughput_mbs", raw / std::max(maxima[0], 1e-9) / 1e6).count("rank_bytes_read_max", int64_t(maxima[3]));
  r.print(a.has("--json"), false);
  return 0;
}

/// Every rank decodes its blocks of the file and writes its part of the global raw planes (or
/// its blocks' per-rank files): float32 planes, or float64 ones for a version 4 file.
int decompress_distributed3d(World& w, const Args& a) {
  std::string path;
  std::vector<std::string> outputs;
  std::vector<uint8_t> head;
  phase(w, [&] {
    if (a.has("--region")) fail("--region decodes in one process: run it without mpirun or --per-rank", 2);
    if (a.has("--repack"))
      fail("--repack writes netCDF / HDF5 variables, which decompress writes in one process (not under mpirun or "
           "with --per-rank)",
           2);
    outputs = decode_outputs(a, false);
    path = a.get("-z");
    require_plain_paths({path, outputs[0], outputs[1], outputs[2]});
    require_seekable(path, "decompressing under mpirun or with --per-rank");
    if (a.has("--per-rank")) require_per_rank_names(outputs);
    else
      for (const auto& o : outputs)
        if (ends_with(o, ".npy"))
          fail("under mpirun the outputs are raw planes (little-endian float32, or float64 for a float64 file), "
               "not .npy",
               2);
    if (w.rank() == 0) head = header_and_size(path);  // one rank reads the index, every rank gets it
  });
  check(w.broadcast(head, 0));
  factz::MultiBlockIndex3D ix;
  int first = 0, last = 0;
  phase(w, [&] {
    const uint64_t size = take_size(head);
    ix = take(factz::parse_multiblock3d_index(head, size));
    if (a.has("--per-rank")) {
      require_one_block_per_rank3d(w, ix.layout);
      refuse_clobbering(path_args(a, {"-z"}), per_rank_paths(a, {"-o"}, ix.layout.count()));
    }
    std::tie(first, last) = blocks_of(w.rank(), w.size(), ix.layout.count());
  });
  // Every rank parsed the same header: the data type is the same on all.
  return ix.dtype == factz::DType::float64
             ? decompress_blocks3d<VectorField3D64>(w, a, path, outputs, ix, first, last)
             : decompress_blocks3d<VectorField3D>(w, a, path, outputs, ix, first, last);
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
template <class Field>
void tally_block(const BlockLayout3D& L, int b, const Field& o, const Field& d, factz::Exec ex, Tally3D& t) {
  const auto c = take(factz::compare(o, d, ex));
  t.counts[0] += c.cp_original;
  t.counts[1] += c.cp_decompressed;
  t.counts[2] += c.lost;
  t.counts[3] += c.spurious;
  t.counts[4] += c.type_changed;
  const std::vector<uint8_t> mo = factz::missing_mask(o), md = factz::missing_mask(d);
  const BlockExtent3D& e = L.blocks[size_t(b)];
  const auto own = owned_sizes(L, b);
  for (int64_t z = 0; z < own[2]; ++z)
    for (int64_t y = 0; y < own[1]; ++y)
      for (int64_t x = 0; x < own[0]; ++x) {
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

/// A rank's verify in two phases around the share: staged (files with a reader's findings:
/// variables, .npy files) or a block at a time (raw files).
template <class Field>
struct Verify3DStage {
  bool whole = false, staged = false;
  Staged3D<Field> o, d;
};

template <class Field>
void stage_tally(World& w, const Args& a, const BlockLayout3D& L, Verify3DStage<Field>& s) {
  const auto [first, last] = blocks_of(w.rank(), w.size(), L.count());
  s.whole = !w.distributed() && !a.has("--per-rank");
  s.staged = !s.whole && (read_whole(a, "-i") || read_whole(a, "-d"));
  if (!s.staged) return;
  s.o = stage_blocks3d<Field>(a, "-i", L, first, last, "verify");
  s.d = stage_blocks3d<Field>(a, "-d", L, first, last, "verify");
}

template <class Field>
void tally_blocks(World& w, const Args& a, const BlockLayout3D& L, Verify3DStage<Field>& s, Tally3D& t) {
  const auto [first, last] = blocks_of(w.rank(), w.size(), L.count());
  const factz::Exec ex = exec_of(a);
  if (s.whole) {  // each field read once
    Field3DInfo<ValueOf<Field>> info;  // the original's fill values apply to the reconstruction
    const Field orig = whole_field<Field>(a, "-i", "verify", false, nullptr, &info);
    const Field dec = whole_field<Field>(a, "-d", "verify", true, &info);
    for (int b = 0; b < L.count(); ++b)
      tally_block(L, b, factz::extract_block(orig, L.blocks[size_t(b)]), factz::extract_block(dec, L.blocks[size_t(b)]),
                  ex, t);
    return;
  }
  if (s.staged) {  // each variable or .npy read once, then the blocks
    Field3DInfo<ValueOf<Field>> info;  // the original's fill values apply to the reconstruction
    const std::vector<Field> o = finish_blocks3d(a, s.o, &info);
    const std::vector<Field> d = finish_blocks3d(a, s.d, nullptr, &info);
    for (int b = first; b < last; ++b) tally_block(L, b, o[size_t(b - first)], d[size_t(b - first)], ex, t);
    return;
  }
  for (int b = first; b < last; ++b)  // raw files by rows: a block of each in memory at a time
    tally_block(L, b, read_block3d<Field>(a, "-i", L, b), read_block3d<Field>(a, "-d", L, b), ex, t);
}

template <class Field>
void verify_mine3d(World& w, const Args& a, const BlockLayout3D& L, Tally3D& t) {
  Verify3DStage<Field> s;
  phase(w, [&] { stage_tally<Field>(w, a, L, s); });
  share_staged3d(w, s.o);  // every rank (nothing in one process)
  share_staged3d(w, s.d);
  phase(w, [&] { tally_blocks<Field>(w, a, L, s, t); });
}

int verify_blocks3d(World& w, const Args& a) {
  const bool float64 = float64_field(w, a, "-i");
  if (float64_field(w, a, "-d") != float64)
    fail("invalid_argument: verify compares fields of one value type: -i is " +
         std::string(float64 ? "float64" : "float32") + ", -d " + (float64 ? "float32" : "float64"));
  BlockLayout3D L;
  Tally3D t;
  phase(w, [&] {
    require_3d_options(a);
    const auto i = three_files(a, "-i"), d = three_files(a, "-d");
    require_plain_paths({i[0], i[1], i[2], d[0], d[1], d[2]});
    if (a.has("--per-rank")) require_per_rank_names({i[0], i[1], i[2], d[0], d[1], d[2]});
    else require_regular_inputs(w, {i[0], i[1], i[2], d[0], d[1], d[2]});
    L = layout_of(a);
    if (a.has("--per-rank")) require_one_block_per_rank3d(w, L);
  });
  if (float64) verify_mine3d<VectorField3D64>(w, a, L, t);
  else verify_mine3d<VectorField3D>(w, a, L, t);
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
  s.num("value_range", range, StatsWriter::In::json)
      .text("dtype", float64 ? "float64" : "float32", StatsWriter::In::json);
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
    const bool float64 = float64_field(w, a, "-i");
    if (!w.distributed() && !a.has("--per-rank")) {
      int rc = 0;
      phase(w, [&] { rc = float64 ? compress_single3d<VectorField3D64>(a) : compress_single3d<VectorField3D>(a); });
      return rc;
    }
    return float64 ? compress_blocks3d<VectorField3D64>(w, a) : compress_blocks3d<VectorField3D>(w, a);
  });
}

int run_blocks3d_decompress(const Args& a) {
  return guarded("decompress", [&a](World& w) {
    if (!w.distributed() && !a.has("--per-rank")) {
      int rc = 0;
      phase(w, [&] {
        if (a.has("--region")) {
          rc = decompress_region3d_cli(a);
          return;
        }
        decode_outputs(a, true);
        rc = decompress_whole3d(a, take(factz::read_bytes(a.get("-z"))));
      });
      return rc;
    }
    return decompress_distributed3d(w, a);
  });
}

int run_blocks3d_decompress_bytes(const Args& a, const std::vector<uint8_t>& file) {
  return guarded("decompress", [&](World& w) {
    if (w.distributed() || a.has("--per-rank") || a.has("--region"))
      fail("a multi-block file read from a pipe or stdin decodes in one process, without --per-rank or --region", 2);
    return decompress_whole3d(a, file);
  });
}

int run_blocks3d_verify(const Args& a) {
  return guarded("verify", [&a](World& w) { return verify_blocks3d(w, a); });
}

}  // namespace blocks
}  // namespace factz::cli
