// The multi-block driver's input side (blocks.hpp): option checks shared by compress,
// decompress and verify, reading one rank's blocks of the global planes (or its per-rank
// files), the shared-line check of per-rank files, the multi-block file's index, and where a
// collective write goes (a temporary renamed over the output).
// Blocks are read as float32 or float64 by one template on the value type T over the
// readers of field_files.hpp (read_plane_input_of<T>, declared_fills<T>).
#include <fcntl.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <type_traits>

#include "blocks.hpp"
#include "factz/io.hpp"
#include "factz/multiblock3d.hpp"
#include "field_files.hpp"
#include "mpi/posix_file.hpp"

namespace factz::cli::blocks {
namespace {

/// The rows of block `e` from the raw plane of `nx` columns of T that starts at byte `base`
/// of the regular file `path` (0, or a .npy file's header size): one read for whole rows,
/// else one per row segment.
template <class T>
void read_rows(const std::string& path, int64_t nx, const BlockExtent& e, T* out, uint64_t base = 0) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("io: cannot open " + path);
  const bool whole_rows = e.x0 == 0 && e.nx == nx;
  for (int64_t y = 0; y < e.ny; y += whole_rows ? e.ny : 1) {
    const int64_t rows = whole_rows ? e.ny : 1;
    in.seekg(std::streamoff(base + uint64_t((e.y0 + y) * nx + e.x0) * sizeof(T)));
    in.read(reinterpret_cast<char*>(out + y * e.nx), std::streamsize(uint64_t(rows * e.nx) * sizeof(T)));
    if (!in) fail("io: cannot read " + path);
  }
}

/// Blocks `blocks` of the global nx x ny plane of T in `path`, into `outs` (one per block,
/// e.nx * e.ny values): for raw regular files and .npy files that npy_rows_offset accepts only
/// each block's row segments are read; a netCDF / HDF5 variable only the rows the blocks span
/// (read_plane_rows_of: its values outside the valid range left for finish_blocks); another
/// file read whole (read_whole) once, through the one reader, and cut. Returns what the reader
/// said about the file (fill values, valid range, packing; no values).
template <class T>
PlaneInputOf<T> read_block_planes(const std::string& path, int64_t nx, int64_t ny,
                                  const std::vector<BlockExtent>& blocks, const std::vector<std::vector<T>*>& outs,
                                  bool by_rows, uint64_t& values_read, const std::string& command) {
  uint64_t blocks_values = 0;
  for (size_t k = 0; k < blocks.size(); ++k) {
    outs[k]->assign(size_t(blocks[k].nx * blocks[k].ny), T(0));
    blocks_values += uint64_t(blocks[k].nx * blocks[k].ny);
  }
  PlaneInputOf<T> about;
  const int64_t plane[2] = {ny, nx};
  if (const auto base = npy_rows_offset(path, plane, sizeof(T))) {  // a .npy file read by rows, as a raw one
    for (size_t k = 0; k < blocks.size(); ++k) read_rows(path, nx, blocks[k], outs[k]->data(), *base);
    values_read += blocks_values;
    return about;
  }
  if (read_whole(path)) {
    const QuietReaderNotes quiet(this_rank() != 0);  // every rank reads it: rank 0 says what it found
    const FieldFile file = field_file(path);
    int64_t y0 = ny, y1 = 0, x0 = nx, x1 = 0;  // the rows and columns the blocks span
    for (const BlockExtent& e : blocks) {
      y0 = std::min(y0, e.y0);
      y1 = std::max(y1, e.y0 + e.ny);
      x0 = std::min(x0, e.x0);
      x1 = std::max(x1, e.x0 + e.nx);
    }
    const bool part = by_rows && file.variable && (y0 > 0 || y1 < ny || x0 > 0 || x1 < nx);
    const std::vector<uint64_t> shape = {uint64_t(ny), uint64_t(nx)};
    about = part ? read_plane_rows_of<T>(file, shape, 2, command,
                                         variable_io::RowRange{uint64_t(y0), uint64_t(y1 - y0), uint64_t(x0),
                                                               uint64_t(x1 - x0)})
                 : read_plane_rows_of<T>(file, shape, 2, command, variable_io::RowRange{});
    const int64_t width = int64_t(about.cols), left = int64_t(about.first_col), top = int64_t(about.first_row);
    for (size_t k = 0; k < blocks.size(); ++k) {
      const BlockExtent& e = blocks[k];
      for (int64_t y = 0; y < e.ny; ++y)
        std::memcpy(outs[k]->data() + y * e.nx, about.values.data() + (e.y0 - top + y) * width + (e.x0 - left),
                    size_t(e.nx) * sizeof(T));
    }
    values_read += about.values.size();
    std::vector<T>().swap(about.values);
    return about;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("io: cannot open " + path + ": " + ec.message());
  const uint64_t need = uint64_t(nx * ny) * sizeof(T);
  if (uint64_t(size) != need)
    fail("invalid_argument: " + path + " holds " + std::to_string(size) + " bytes, a " + std::to_string(nx) + " x " +
         std::to_string(ny) + (sizeof(T) == 8 ? " float64" : " float32") + " plane needs " + std::to_string(need));
  for (size_t k = 0; k < blocks.size(); ++k) read_rows(path, nx, blocks[k], outs[k]->data());
  values_read += blocks_values;
  return about;
}

/// Marks NaN and the declared fill values (the files', or --fill's; extract_block keeps the
/// mask) in block b, then validates it.
template <class T>
void finish_block(VectorFieldOf<T>& f, const DeclaredFillsOf<T>& fills, const BlockExtent& e, int b) {
  mark_declared(f, fills);
  const Status s = factz::validate_field(f);
  if (!s.ok())
    fail("block " + std::to_string(b) + " (from x=" + std::to_string(e.x0) + ", y=" + std::to_string(e.y0) +
         "): " + s.to_string());
}

/// One rank's share of a file's reading (OutsideValuesOf, packing_slack) as uint64 words:
/// count, slack bits, n, then n values' bits.
template <class T>
void put_share(std::vector<uint64_t>& words, const PlaneInputOf<T>& p) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  words.push_back(p.outside.count);
  words.push_back(std::bit_cast<uint64_t>(p.packing_slack));
  words.push_back(p.outside.values.size());
  for (T x : p.outside.values) words.push_back(uint64_t(std::bit_cast<Bits>(x)));
}
/// The inverse of put_share, from `words` at `at` (advanced), merged into `into`.
template <class T>
void take_share(std::span<const uint64_t> words, size_t& at, PlaneInputOf<T>& into) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  if (words.size() - at < 3) fail("internal: a rank's share of the valid range is cut short");
  OutsideValuesOf<T> other;
  other.count = words[at];
  into.packing_slack = std::max(into.packing_slack, std::bit_cast<double>(words[at + 1]));
  const uint64_t n = words[at + 2];
  at += 3;
  if (words.size() - at < n) fail("internal: a rank's share of the valid range is cut short");
  for (uint64_t k = 0; k < n; ++k) other.values.insert(std::bit_cast<T>(Bits(words[at + k])));
  at += size_t(n);
  merge_outside(into.outside, other);
}

}  // namespace

// ---- reading blocks in three steps ------------------------------------------------------------

template <class T>
StagedBlocksOf<T> stage_blocks(const Args& a, const std::string& flag, const BlockLayout& L, int first, int last,
                               bool by_rows, const std::string& command) {
  StagedBlocksOf<T> st;
  st.first = first;
  st.command = command;
  const auto& files = a.all(flag);
  const std::string u = files[0][0], v = files[1][0];
  if (last <= first) {  // a rank without blocks (more ranks than blocks) reads no values
    if (by_rows && this_rank() == 0 && !a.has("--per-rank")) {
      // Rank 0 says what the ranks found (finish_blocks): a variable's valid range and packing,
      // and what its reader says about the file.
      for (auto [path, p] : {std::pair{u, &st.u}, std::pair{v, &st.v}})
        if (const FieldFile f = field_file(path); f.variable)
          *p = read_plane_rows_of<T>(f, {}, 2, command, variable_io::RowRange{0, 0});
    }
    return st;
  }
  std::vector<std::vector<T>*> us, vs;
  st.fields.resize(size_t(last - first));
  for (int b = first; b < last; ++b) {
    VectorFieldOf<T>& f = st.fields[size_t(b - first)];
    st.extents.push_back(L.blocks[size_t(b)]);
    f.nx = st.extents.back().nx;
    f.ny = st.extents.back().ny;
    us.push_back(&f.u);
    vs.push_back(&f.v);
  }
  if (a.has("--per-rank")) {  // each block its own files, with their own fill values: finished here
    st.per_rank = true;
    for (int b = first; b < last; ++b) {
      const BlockExtent& e = st.extents[size_t(b - first)];
      const std::vector<uint64_t> shape = {uint64_t(e.ny), uint64_t(e.nx)};
      auto pu = read_plane_input_of<T>(field_file(per_rank_name(u, b)), shape, 2, command);
      auto pv = read_plane_input_of<T>(field_file(per_rank_name(v, b)), shape, 2, command);
      st.values_read += pu.values.size() + pv.values.size();
      *us[size_t(b - first)] = std::move(pu.values);
      *vs[size_t(b - first)] = std::move(pv.values);
      st.per_block_fills.push_back({std::move(pu.fills), std::move(pv.fills)});
    }
    return st;
  }
  st.u = read_block_planes<T>(u, L.nx, L.ny, st.extents, us, by_rows, st.values_read, command);
  st.v = read_block_planes<T>(v, L.nx, L.ny, st.extents, vs, by_rows, st.values_read, command);
  if (by_rows) {
    // The ranks' counts are summed (share_staged): each counts the vertices its blocks own (a
    // block's last row and column belong to the next one), whatever rows it read.
    const auto recount = [&](PlaneInputOf<T>& p, const std::vector<std::vector<T>*>& planes) {
      if (p.outside.range.empty()) return;
      p.outside.count = 0;
      for (int b = first; b < last; ++b) {
        const BlockExtent& e = st.extents[size_t(b - first)];
        const auto own = owned_sizes(L, b);
        p.outside.count += owned_outside(p, *planes[size_t(b - first)], e.nx, e.ny, {own[0], own[1], 1});
      }
    };
    recount(st.u, us);
    recount(st.v, vs);
  }
  const auto part_of = [&L](const PlaneInputOf<T>& p) {
    return p.rows != 0 && (p.rows != uint64_t(L.ny) || p.cols != uint64_t(L.nx));
  };
  st.partial = part_of(st.u) || part_of(st.v);
  return st;
}

template <class T>
void share_readers(World& w, std::span<PlaneInputOf<T>* const> planes) {
  if (!w.distributed()) return;
  std::vector<uint64_t> mine;
  for (PlaneInputOf<T>* p : planes) put_share(mine, *p);
  const std::vector<uint64_t> all = take(w.allgather(mine));
  for (PlaneInputOf<T>* p : planes) {
    p->outside.values.clear();
    p->outside.count = 0;
  }
  // Every rank's share, in rank order (this one's included): the same sets on every rank.
  for (size_t at = 0; at < all.size();)
    for (PlaneInputOf<T>* p : planes) take_share(all, at, *p);
}
template void share_readers<float>(World&, std::span<PlaneInputOf<float>* const>);
template void share_readers<double>(World&, std::span<PlaneInputOf<double>* const>);

template <class T>
void share_staged(World& w, StagedBlocksOf<T>& st) {
  PlaneInputOf<T>* const planes[2] = {&st.u, &st.v};
  share_readers<T>(w, planes);
  st.shared = true;
}

template <class T>
std::vector<VectorFieldOf<T>> finish_blocks(const Args& a, StagedBlocksOf<T>& st, DeclaredFillsOf<T>* declared,
                                            const DeclaredFillsOf<T>* like) {
  if (st.partial && !st.shared) fail("internal: blocks read by rows were not shared before they were marked");
  const auto marked = [&](const std::vector<T>& fills_u, const std::vector<T>& fills_v) {
    DeclaredFillsOf<T> fills = declared_fills<T>(a, fills_u, fills_v);
    if (like) add_original_fills(fills, *like);  // a reconstruction: the original's mark its vertices too
    return fills;
  };
  if (st.per_rank) {
    for (size_t k = 0; k < st.fields.size(); ++k) {
      DeclaredFillsOf<T> fills = marked(st.per_block_fills[k].first, st.per_block_fills[k].second);
      finish_block(st.fields[k], fills, st.extents[k], st.first + int(k));
      if (declared) *declared = std::move(fills);
    }
    return std::move(st.fields);
  }
  {
    const QuietReaderNotes quiet(this_rank() != 0);  // rank 0 says what the ranks found together
    finish_plane_input(st.u, st.command);
    finish_plane_input(st.v, st.command);
  }
  if (st.fields.empty()) return {};
  DeclaredFillsOf<T> fills = marked(st.u.fills, st.v.fills);
  for (size_t k = 0; k < st.fields.size(); ++k) finish_block(st.fields[k], fills, st.extents[k], st.first + int(k));
  if (declared) *declared = std::move(fills);
  return std::move(st.fields);
}

template StagedBlocksOf<float> stage_blocks<float>(const Args&, const std::string&, const BlockLayout&, int, int,
                                                   bool, const std::string&);
template StagedBlocksOf<double> stage_blocks<double>(const Args&, const std::string&, const BlockLayout&, int, int,
                                                     bool, const std::string&);
template void share_staged<float>(World&, StagedBlocksOf<float>&);
template void share_staged<double>(World&, StagedBlocksOf<double>&);
template std::vector<VectorFieldOf<float>> finish_blocks<float>(const Args&, StagedBlocksOf<float>&,
                                                                DeclaredFillsOf<float>*, const DeclaredFillsOf<float>*);
template std::vector<VectorFieldOf<double>> finish_blocks<double>(const Args&, StagedBlocksOf<double>&,
                                                                  DeclaredFillsOf<double>*,
                                                                  const DeclaredFillsOf<double>*);

namespace {

/// Blocks [first, last) of the global field of `flag` with values of type T, read and marked
/// in one step, with no other rank: a variable is read whole (the drivers under mpirun stage,
/// share and finish instead, and read only their rows).
template <class T>
std::vector<VectorFieldOf<T>> read_blocks_of(const Args& a, const std::string& flag, const BlockLayout& L, int first,
                                             int last) {
  StagedBlocksOf<T> st = stage_blocks<T>(a, flag, L, first, last, false, flag == "-d" ? "verify" : "compress");
  return finish_blocks<T>(a, st);
}

/// `a` with the files of `flag` (two, or three for a 3D field) replaced by block b's per-rank
/// files.
Args per_rank_args(const Args& a, const std::string& flag, int b) {
  Args own = a;
  auto& files = own.values_[flag];
  for (auto& f : files) f = {per_rank_name(f[0], b)};
  return own;
}

template <class Field>
std::array<uint64_t, 4> hashes_of(const Field& f) {
  using T = typename decltype(Field::u)::value_type;
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  std::array<uint64_t, 4> h;
  h.fill(1469598103934665603ull);
  auto add = [&h](int k, T x) {
    const Bits bits = std::bit_cast<Bits>(x);
    for (size_t i = 0; i < sizeof(T); ++i) h[size_t(k)] = (h[size_t(k)] ^ ((bits >> (8 * i)) & 0xFF)) * 1099511628211ull;
  };
  for (const auto* plane : {&f.u, &f.v}) {
    for (int64_t y = 0; y < f.ny; ++y) {
      add(0, (*plane)[size_t(y * f.nx)]);
      add(1, (*plane)[size_t(y * f.nx + f.nx - 1)]);
    }
    for (int64_t x = 0; x < f.nx; ++x) {
      add(2, (*plane)[size_t(x)]);
      add(3, (*plane)[size_t((f.ny - 1) * f.nx + x)]);
    }
  }
  return h;
}

}  // namespace

// ---- options -------------------------------------------------------------------------------

void blocks_of_args(const Args& a, int& px, int& py) {
  if (!a.has("--blocks")) fail("--per-rank needs --blocks PX PY", 2);
  const auto& b = a.all("--blocks").back();
  if (b.size() != 2)
    fail("--blocks PX PY PZ takes a 3D vector field (-3 NX NY NZ with three -i); a 2D field takes PX PY", 2);
  long long x = 0, y = 0;
  if (!to_int64(b[0], x) || !to_int64(b[1], y) || x < 1 || y < 1 || x > (1 << 20) || y > (1 << 20))
    fail("--blocks needs two integers >= 1, got '" + b[0] + " " + b[1] + "'", 2);
  px = int(x);
  py = int(y);
}

void blocks3d_of_args(const Args& a, int& px, int& py, int& pz) {
  const auto& b = a.all("--blocks").back();
  long long v[3] = {0, 0, 0};
  if (b.size() != 3) fail("a 3D vector field takes --blocks PX PY PZ", 2);
  for (int k = 0; k < 3; ++k)
    if (!to_int64(b[size_t(k)], v[k]) || v[k] < 1 || v[k] > (1 << 20))
      fail("--blocks needs three integers >= 1, got '" + b[0] + " " + b[1] + " " + b[2] + "'", 2);
  px = int(v[0]);
  py = int(v[1]);
  pz = int(v[2]);
}

/// The vector-field compression options, as `factz compress` reads them.
factz::Options compress_options(const Args& a) {
  if (a.has("-3") || a.has("--scalar") || a.has("--persistence") || a.get("--mode") == "contour-tree")
    fail("--blocks applies to 2D vector fields only", 2);
  return vector_compress_options(a, true);
}

/// `pattern` with every "%r" replaced by the block (= rank) id.
std::string per_rank_name(const std::string& pattern, int b) {
  std::string out;
  for (size_t k = 0; k < pattern.size(); ++k) {
    if (pattern.compare(k, 2, "%r") == 0) {
      out += std::to_string(b);
      ++k;
    } else {
      out += pattern[k];
    }
  }
  return out;
}

void require_per_rank_names(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (n.find("%r") == std::string::npos)
      fail("--per-rank: every field file name must contain %r (the rank), got '" + n + "'", 2);
}

void require_plain_paths(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (n == "-") fail("multi-block files and fields are read and written by name ('-' is not supported)", 2);
}

/// Blocks [first, last) of `rank`: contiguous ranges of block ids, as even as possible.
std::pair<int, int> blocks_of(int rank, int ranks, int blocks) {
  return {int(int64_t(blocks) * rank / ranks), int(int64_t(blocks) * (rank + 1) / ranks)};
}

/// With --per-rank under mpirun every rank has exactly one block.
void require_one_block_per_rank(const World& w, const BlockLayout& L) {
  if (w.distributed() && L.count() != w.size())
    fail("--per-rank needs PX * PY = number of ranks, got " + std::to_string(L.px) + " x " + std::to_string(L.py) +
             " blocks for " + std::to_string(w.size()) + " ranks",
         2);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// ---- reading blocks ------------------------------------------------------------------------

VectorField2D read_block(const Args& a, const std::string& flag, const BlockLayout& L, int b) {
  return std::move(read_blocks_of<float>(a, flag, L, b, b + 1).front());
}
VectorField2D64 read_block64(const Args& a, const std::string& flag, const BlockLayout& L, int b) {
  return std::move(read_blocks_of<double>(a, flag, L, b, b + 1).front());
}
std::optional<uint64_t> npy_rows_offset(const std::string& path, std::span<const int64_t> shape, size_t value_size) {
  if (!ends_with(path, ".npy")) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> head(12, 0);
  if (!in.read(reinterpret_cast<char*>(head.data()), 12)) return std::nullopt;
  // The preamble: magic (6 bytes), version (2), header length (2 bytes in version 1, 4 after).
  const uint64_t length = head[6] == 1 ? uint64_t(head[8]) | uint64_t(head[9]) << 8
                                       : uint64_t(head[8]) | uint64_t(head[9]) << 8 | uint64_t(head[10]) << 16 |
                                             uint64_t(head[11]) << 24;
  const uint64_t total = (head[6] == 1 ? 10 : 12) + length;
  if (total > (uint64_t(1) << 24) || total > size) return std::nullopt;
  head.resize(size_t(total));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(head.data()), std::streamsize(total))) return std::nullopt;
  auto h = factz::parse_npy_header(head);
  if (!h.ok()) return std::nullopt;
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  const bool grid = h->shape.size() == shape.size() && std::equal(shape.begin(), shape.end(), h->shape.begin());
  const bool flat = h->shape.size() == 1 && uint64_t(h->shape[0]) == n;
  // Any spelling of little-endian float of this width in C order (check_npy_float: '<f4', '=f4',
  // '|f4'); what it refuses is read whole and refused there, in the one wording.
  if (!factz::check_npy_float(*h, int(value_size), path).ok() || !(grid || flat) ||
      uint64_t(size) != h->data_offset + n * value_size)
    return std::nullopt;
  return h->data_offset;
}

bool read_whole(const std::string& path) {
  const FieldFile file = field_file(path);
  if (!file.variable) check(factz::check_input_path(path));  // "is a directory", "does not exist", ...
  std::error_code regular_ec;
  return file.variable || ends_with(path, ".npy") || !std::filesystem::is_regular_file(path, regular_ec);
}
bool read_whole(const Args& a, const std::string& flag) {
  if (a.has("--per-rank")) return false;
  const auto& files = a.all(flag);
  return std::any_of(files.begin(), files.end(), [](const auto& f) { return read_whole(f[0]); });
}

bool float64_field(World& w, const Args& a, const char* flag) {
  double kind[2] = {0, 0};  // {float64, -float64}, reduced by min: {all ranks, -any rank}
  phase(w, [&] {
    const bool per_rank = a.has("--per-rank") && a.has(flag) && a.all(flag).size() >= 2;
    const bool f64 = per_rank ? float64_inputs(per_rank_args(a, flag, w.distributed() ? w.rank() : 0), flag)
                              : float64_inputs(a, flag);
    kind[0] = f64 ? 1 : 0;
    kind[1] = -kind[0];
  });
  check(w.allreduce_min(kind));
  if (kind[0] != -kind[1])
    fail("invalid_argument: the ranks' " + std::string(flag) + " files mix float32 and float64 values");
  return kind[0] > 0;
}

/// FNV-1a hashes of block f's four outer lines (x min, x max, y min, y max), u then v:
/// per-rank files of neighbouring blocks must agree on the line they share.
std::array<uint64_t, 4> edge_hashes(const VectorField2D& f) { return hashes_of(f); }
std::array<uint64_t, 4> edge_hashes(const VectorField2D64& f) { return hashes_of(f); }

/// With --per-rank, neighbouring blocks come from different files: they must hold the same
/// values on their shared line, or the decomposition is not of one global field. `all` holds
/// every block's edge_hashes, in block order.
void check_shared_lines(const BlockLayout& L, const std::vector<uint64_t>& all) {
  for (int b = 0; b < L.count(); ++b) {
    const int bx = b % L.px, by = b / L.px;
    const BlockExtent& e = L.blocks[size_t(b)];
    if (bx + 1 < L.px && all[size_t(4 * b + 1)] != all[size_t(4 * (b + 1))])
      fail("invalid_argument: --per-rank files of blocks " + std::to_string(b) + " and " + std::to_string(b + 1) +
           " differ on their shared column x=" + std::to_string(e.x0 + e.nx - 1));
    if (by + 1 < L.py && all[size_t(4 * b + 3)] != all[size_t(4 * (b + L.px) + 2)])
      fail("invalid_argument: --per-rank files of blocks " + std::to_string(b) + " and " + std::to_string(b + L.px) +
           " differ on their shared row y=" + std::to_string(e.y0 + e.ny - 1));
  }
}

// ---- the multi-block file ---------------------------------------------------------------

CollectiveOutput collective_output(World& w, const std::string& file,
                                   std::optional<factz::temp_files::Registration>& registered) {
  namespace fs = std::filesystem;
  CollectiveOutput out;
  out.path = out.target = file;
  if (w.rank() == 0) {
    struct stat st {};
    const bool exists = ::stat(file.c_str(), &st) == 0;
    struct stat link {};
    if (::lstat(file.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      // The file the link names (as opening the link would write it), not the link itself.
      std::error_code ec;
      const fs::path resolved = fs::weakly_canonical(fs::absolute(file, ec), ec);
      if (!ec) out.target = resolved.string();
    }
    if (exists && factz::temp_files::read_only_file(out.target)) {
      out.read_only = true;
    } else if (!factz::temp_files::special_path(file) && (!exists || S_ISREG(st.st_mode))) {
      const std::string tmp = factz::temp_files::temporary_path(out.target);
      registered.emplace(tmp);  // before the file exists: a signal from now on removes it
      int fd;
      do fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      while (fd < 0 && errno == EINTR);
      if (fd >= 0) {
        factz::temp_files::created(tmp);
        if (exists) (void)::fchmod(fd, st.st_mode & 07777);  // a replaced file keeps its mode
        ::close(fd);
        out.path = tmp;
        out.temporary = true;
      } else {
        registered.reset();
      }
    }
  }
  if (w.distributed()) {
    std::vector<uint8_t> shared;
    if (w.rank() == 0) {  // a byte (0 in place, 1 a temporary, 2 a read-only file), then the path
      shared.assign(1 + out.path.size(), out.read_only ? 2 : out.temporary ? 1 : 0);
      std::copy(out.path.begin(), out.path.end(), shared.begin() + 1);
    }
    check(w.broadcast(shared, 0));
    if (shared.empty()) fail("the ranks could not agree on where to write " + file);
    out.temporary = shared[0] == 1;
    out.read_only = shared[0] == 2;
    out.path.assign(shared.begin() + 1, shared.end());
  }
  if (out.read_only) fail("io: cannot write " + file + ": " + factz::temp_files::kReadOnlyReason);
  return out;
}

Status rename_collective_output(const CollectiveOutput& out) {
  if (::rename(out.path.c_str(), out.target.c_str()) == 0) return Status::Ok();
  return io_error("cannot write " + out.target + ": " + std::strerror(errno));
}

std::string named_as_given(std::string message, const CollectiveOutput& out, const std::string& file) {
  if (!out.temporary) return message;
  for (size_t at = message.find(out.path); at != std::string::npos; at = message.find(out.path, at + file.size()))
    message.replace(at, out.path.size(), file);
  return message;
}

/// `path` is read at offsets (the multi-block index first, then the blocks): a pipe or FIFO
/// cannot be (io error); a path that cannot be read says why.
void require_seekable(const std::string& path, const std::string& what) {
  check(factz::check_input_path(path));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail("io: cannot read " + path + " for " + what + ": it is read at offsets and is not a regular file (a pipe or "
         "FIFO); decompress it whole or save it to a file first");
}

void require_regular_inputs(const World& w, const std::vector<std::string>& names) {
  if (w.size() <= 1) return;
  for (const auto& name : names) {
    const FieldFile f = field_file(name);
    struct stat st {};
    if (::stat(f.path().c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      fail("io: cannot read " + name + " on " + std::to_string(w.size()) +
               " ranks: every rank reads the global inputs, and it is not a regular file (a pipe or FIFO, which "
               "one rank's read empties); save it to a file first");
  }
}


/// The header and index bytes of the multi-block file at `path` (only those are read),
/// validated; `size` gets the file size.
std::vector<uint8_t> read_header_bytes(const std::string& path, uint64_t& size) {
  check(factz::check_input_path(path));  // "is a directory", "does not exist", ...
  std::error_code ec;
  size = std::filesystem::file_size(path, ec);
  if (ec) fail("io: cannot open " + path + ": " + ec.message());
  const uint64_t fixed = factz::kMultiBlockPrefixBytes;
  if (size < fixed) fail("corrupt_stream: " + path + " is truncated (too short for a multi-block file)");
  auto head = take(factz::mpi::detail::posix_read_at(path, 0, fixed));
  if (!factz::is_multiblock(head)) fail("corrupt_stream: " + path + " is not a multi-block file (compress with --blocks)");
  const uint64_t hsize = take(factz::multiblock_header_size_from_prefix(head));
  if (hsize > size) fail("corrupt_stream: multi-block index truncated");
  head = take(factz::mpi::detail::posix_read_at(path, 0, hsize));
  if (factz::is_multiblock3d(head)) check(factz::parse_multiblock3d_index(head, size).status());
  else check(factz::parse_multiblock_index(head, size).status());
  return head;
}

std::vector<PathArg> per_rank_paths(const Args& a, std::initializer_list<const char*> flags, int count) {
  std::vector<PathArg> out;
  for (const auto& p : path_args(a, flags))
    for (int b = 0; b < count; ++b) out.push_back({p.flag, per_rank_name(p.path, b)});
  return out;
}

factz::ValueRange global_range(World& w, factz::ValueRange mine) {
  double lo_neg_hi[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  if (!mine.empty) {
    lo_neg_hi[0] = mine.lo;
    lo_neg_hi[1] = -mine.hi;
  }
  check(w.allreduce_min(lo_neg_hi));
  factz::ValueRange global;
  if (lo_neg_hi[0] <= -lo_neg_hi[1]) global = {lo_neg_hi[0], -lo_neg_hi[1], false};
  return global;
}

std::vector<uint8_t> header_and_size(const std::string& path) {
  uint64_t size = 0;
  std::vector<uint8_t> head = read_header_bytes(path, size);
  for (int k = 0; k < 8; ++k) head.push_back(uint8_t(size >> (8 * k)));
  return head;
}

uint64_t take_size(std::vector<uint8_t>& head) {
  if (head.size() < 8) fail("internal: the broadcast multi-block index is truncated");
  uint64_t size = 0;
  for (int k = 0; k < 8; ++k) size |= uint64_t(head[head.size() - 8 + size_t(k)]) << (8 * k);
  head.resize(head.size() - 8);
  return size;
}

factz::Region region_of(const Args& a) {
  const auto& r = a.all("--region").back();
  if (r.size() != 4)
    fail("--region X0 Y0 Z0 X1 Y1 Z1 takes a 3D multi-block file; a 2D file takes --region X0 Y0 X1 Y1", 2);
  long long v[4];
  for (int k = 0; k < 4; ++k)
    if (!to_int64(r[size_t(k)], v[k]) || v[k] < 0)
      fail("--region needs four integers >= 0 (X0 Y0 X1 Y1), got '" + r[size_t(k)] + "'", 2);
  return {v[0], v[1], v[2], v[3]};
}

}  // namespace factz::cli::blocks
