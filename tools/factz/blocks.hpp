// The multi-block driver's shared pieces (docs/multiblock.md): blocks.cpp runs compress,
// decompress and verify over the ranks; blocks_input.cpp checks their options and reads a
// rank's blocks and the multi-block file's index.
//
// float32 and float64 fields take the same driver: blocks.cpp is templated on the field type
// (VectorField2D or VectorField2D64), chosen from the inputs (float64_field: '<f8' .npy, or
// raw with --dtype f64) or, for a multi-block file, from its header (MultiBlockIndex::dtype).
// blocks3d.cpp is the same driver for 3D fields; the steps that do not depend on the
// dimension (the range reduction, writing the file together, broadcasting the index, reading a
// rank's streams, writing a global plane) are written once, below, and the per-block loops
// over the field types in block_steps.hpp.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "factz/multiblock.hpp"
#include "field_files.hpp"
#include "io/temp_files.hpp"
#include "mpi/comm.hpp"

namespace factz::cli::blocks {

using factz::mpi::World;

/// The CLI's failures cross World::agree as Status values: a usage error (exit code 2) as
/// invalid_argument, any other failure (exit code 1) as internal; the message is the text
/// main prints.
inline Status failure_status(const Failure& f) {
  return Status(f.code == 2 ? Code::invalid_argument : Code::internal, f.message);
}
inline Failure status_failure(const Status& s) { return {s.code() == Code::invalid_argument ? 2 : 1, s.message()}; }

/// Local work `f` (which fails by throwing Failure) between two agreements
/// (mpi::agreed_phase): the first failure of any rank is thrown on every rank.
template <class F>
void phase(World& w, F&& f) {
  const Status s = factz::mpi::agreed_phase(w, [&f]() -> Status {
    try {
      f();
    } catch (const Failure& e) {
      return failure_status(e);
    }
    return Status::Ok();
  });
  if (!s.ok()) throw status_failure(s);
}

/// This process's rank, once guarded() has started the world (0 before, and in one process).
inline int& this_rank() {
  static int rank = 0;
  return rank;
}

/// Runs a driver. One process: failures go to main as usual. Under mpirun only rank 0 prints
/// the failure, as one write (so that mpirun's own messages cannot split the line); every
/// rank exits with the same code.
template <class F>
int guarded(const char* command, F&& driver) {
  auto started = World::start();
  if (!started.ok()) fail(started.status().to_string());
  World& w = *started.value();
  this_rank() = w.rank();
  try {
    return driver(w);
  } catch (const Failure& f) {
    if (!w.distributed()) throw;
    if (w.rank() == 0) {
      const std::string line = std::string("factz ") + command + ": " + f.message + "\n";
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fflush(stderr);
    }
    return f.code;
  }
}

/// Where a collective write of `file` goes, the same on every rank (rank 0 decides and
/// broadcasts): a temporary file in its folder (temp_files::temporary_path), which rank 0
/// creates empty with the mode of the file it replaces and registers for the signal handlers
/// (`registered`), renamed over the file once every rank's part is written; or `file` itself,
/// written in place: a device, FIFO or /dev/stdout-like name, or a file in a folder that
/// refuses new files (or that does not exist: the write then says so).
struct CollectiveOutput {
  std::string path;        ///< what the ranks write
  bool temporary = false;  ///< `path` is a temporary, renamed over `target` when whole
  std::string target;      ///< the file `file` names (a symbolic link's file)
  bool read_only = false;  ///< an existing file the user may not write: refused (temp_files::read_only_file)
};
CollectiveOutput collective_output(World& w, const std::string& file,
                                   std::optional<factz::temp_files::Registration>& registered);
/// Rank 0, once every rank's part is written: renames the temporary over its target.
Status rename_collective_output(const CollectiveOutput& out);
/// `message` with the temporary's name replaced by the name the user gave.
std::string named_as_given(std::string message, const CollectiveOutput& out, const std::string& file);

/// OpenMPI's MPI-IO opens `path.locktest.RANK` beside a file each rank opens, and removes it
/// at once: registered on each rank for the signal handlers while `path` is open (a run ended
/// then would leave it beside the user's file). Nothing in one process.
inline void register_mpi_side_file(World& w, const std::string& path,
                                   std::optional<factz::temp_files::Registration>& side) {
  if (w.distributed()) side.emplace(path + ".locktest." + std::to_string(w.rank()));
}

/// A collective write of a file that ranks write in parts (MPI-IO, or one process's
/// positioned writes), `write(path)` on every rank, with the guarantees of every other write
/// (docs/usage.md, "Every write is checked"): the parts go to a temporary file renamed over
/// `file` when whole, so a failure on any rank, or a signal that ends the run, leaves no
/// partial output and an existing file unchanged. Written in place (collective_output), a file
/// the write created or changed is removed when it fails; one it never touched (it could not
/// be opened) is left as it was, and so are devices and FIFOs.
template <class F>
void written_or_removed(World& w, const std::string& file, F&& write) {
  std::optional<factz::temp_files::Registration> registered;
  const CollectiveOutput out = collective_output(w, file, registered);
  std::optional<factz::temp_files::Registration> side, on_this_rank;
  register_mpi_side_file(w, out.path, side);
  // Every rank's handler removes the temporary: a rank that is still writing when another
  // ends may create it again (MPI_MODE_CREATE) before the signal reaches it.
  if (out.temporary && w.rank() != 0) on_this_rank.emplace(out.path);
  struct stat before {};
  const bool existed = ::stat(file.c_str(), &before) == 0;
  try {
    phase(w, [&] { write(out.path); });
    if (out.temporary) phase(w, [&] { check(w.rank() == 0 ? rename_collective_output(out) : Status::Ok()); });
  } catch (Failure& f) {
    if (w.rank() == 0 && out.temporary) {
      ::unlink(out.path.c_str());
      if (factz::temp_files::ending()) factz::temp_files::wait_for_the_end();  // the signal's doing
    }
    struct stat after {};
    if (w.rank() == 0 && !out.temporary && ::stat(file.c_str(), &after) == 0 && S_ISREG(after.st_mode)) {
      const bool changed = !existed || after.st_ino != before.st_ino || after.st_size != before.st_size ||
                           after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
                           after.st_mtim.tv_nsec != before.st_mtim.tv_nsec;
      if (changed) ::unlink(file.c_str());
    }
    f.message = named_as_given(f.message, out, file);
    throw;
  }
}

/// `path` is read at offsets (the multi-block index first, then the blocks): a pipe or FIFO
/// cannot be (io error); a path that cannot be read says why.
void require_seekable(const std::string& path, const std::string& what);
/// Under mpirun with several ranks every rank reads the global inputs `names` (files or
/// variables' files): a pipe or FIFO, which one rank's read empties (and whose later readers
/// would wait for a writer for ever), is a usage error found by stat, before anything is opened.
void require_regular_inputs(const World& w, const std::vector<std::string>& names);

// ---- options (every check fails with a usage error) ---------------------------------------

/// `--blocks PX PY`.
void blocks_of_args(const Args& a, int& px, int& py);
/// The vector-field compression options, as `factz compress` reads them.
factz::Options compress_options(const Args& a);
/// `pattern` with every "%r" replaced by the block (= rank) id.
std::string per_rank_name(const std::string& pattern, int b);
/// Every name contains %r (--per-rank).
void require_per_rank_names(const std::vector<std::string>& names);
/// No name is '-' (multi-block files and fields are read and written by name).
void require_plain_paths(const std::vector<std::string>& names);
/// Blocks [first, last) of `rank`: contiguous ranges of block ids, as even as possible.
std::pair<int, int> blocks_of(int rank, int ranks, int blocks);
/// With --per-rank under mpirun every rank has exactly one block.
void require_one_block_per_rank(const World& w, const BlockLayout& L);
bool ends_with(const std::string& s, const std::string& tail);

// ---- input --------------------------------------------------------------------------------

/// Whether the field of `flag` (-i or -d) is float64 (factz::cli::float64_inputs; with
/// --per-rank, of the files of this rank's block, or of block 0 in one process), the same
/// answer on every rank: ranks whose files disagree fail together.
bool float64_field(World& w, const Args& a, const char* flag);
/// Block b of the global field given by `flag` (-i or -d): its rows of the global files, or
/// its own per-rank files; validated.
VectorField2D read_block(const Args& a, const std::string& flag, const BlockLayout& L, int b);
/// read_block of a float64 field (the same code, templated on the value type): raw float64
/// (--dtype f64), '<f8' .npy files or float64 variables, fill values compared as doubles.
VectorField2D64 read_block64(const Args& a, const std::string& flag, const BlockLayout& L, int b);
/// Blocks of a field read but not yet marked: under mpirun the ranks read a variable's rows
/// each (stage_blocks), merge what their readers found (share_staged: the values outside the
/// valid range and the unpacking's rounding, one allgather, collective), then declare and mark
/// them (finish_blocks), so that every rank declares what one process reading the whole
/// variable does. Ranks without blocks take part in the share all the same.
template <class T>
struct StagedBlocksOf {
  std::vector<VectorFieldOf<T>> fields;
  std::vector<BlockExtent> extents;
  int first = 0;
  PlaneInputOf<T> u, v;  ///< what the readers said about the global files (no values)
  bool per_rank = false;  ///< --per-rank: each block's own files, their fills below
  std::vector<std::pair<std::vector<T>, std::vector<T>>> per_block_fills;
  bool partial = false;  ///< a variable's rows read, a part of them
  bool shared = false;   ///< share_staged ran
  /// Values read into memory (both components; a file read whole counts whole, a row read
  /// by two blocks twice): compress reports the largest rank's as input_values_max.
  uint64_t values_read = 0;
  std::string command = "compress";  ///< whose notes the readers print ("factz verify: note: ...")
};
/// Reads blocks [first, last) of the field of `flag` (-i or -d): raw files and .npy files by
/// rows, a variable by the rows its blocks span when `by_rows` (else whole), other files whole;
/// the readers' notes are `command`'s.
template <class T>
StagedBlocksOf<T> stage_blocks(const Args& a, const std::string& flag, const BlockLayout& L, int first, int last,
                               bool by_rows, const std::string& command);
/// Vertices block b of a 2D layout owns along x and y: its extent less the last column and row
/// it shares with the next block (the last band keeps them), as blocks3d's owned_sizes in 3D.
inline std::array<int64_t, 2> owned_sizes(const BlockLayout& L, int b) {
  const BlockExtent& e = L.blocks[size_t(b)];
  return {e.nx - (b % L.px == L.px - 1 ? 0 : 1), e.ny - (b / L.px == L.py - 1 ? 0 : 1)};
}

/// The vertices of a block (values `plane`, nx x ny per z plane) in its owned box own[0] x
/// own[1] x own[2] that hold one of `p`'s values outside the valid range: what a rank adds to
/// the count share_readers sums, each vertex counted by the one block that owns it.
template <class T>
uint64_t owned_outside(const PlaneInputOf<T>& p, const std::vector<T>& plane, int64_t nx, int64_t ny,
                       std::array<int64_t, 3> own) {
  uint64_t count = 0;
  for (int64_t z = 0; z < own[2]; ++z)
    for (int64_t y = 0; y < own[1]; ++y)
      for (int64_t x = 0; x < own[0]; ++x) count += p.outside.holds(plane[size_t((z * ny + y) * nx + x)], p.fills);
  return count;
}

/// Collective, outside any phase: merges what every rank's readers of `planes` found (values
/// outside the valid range, the unpacking's rounding) into each rank's, in place; the ranks pass
/// the same number of planes (one per component). Nothing in one process.
template <class T>
void share_readers(World& w, std::span<PlaneInputOf<T>* const> planes);
/// Collective, outside any phase (every rank, those whose reading failed too would hang: call
/// it between two phases): merges every rank's findings into each rank's `st`.
template <class T>
void share_staged(World& w, StagedBlocksOf<T>& st);
/// Declares the fill values and the values outside the valid range (rank 0 notes them), marks
/// and validates the blocks; `st` is spent.
template <class T>
std::vector<VectorFieldOf<T>> finish_blocks(const Args& a, StagedBlocksOf<T>& st, DeclaredFillsOf<T>* declared = nullptr,
                                            const DeclaredFillsOf<T>* like = nullptr);

/// Whether the global file `path` is read whole: a netCDF / HDF5 variable, a .npy file, a
/// pipe or a FIFO (raw regular files are read by rows); a missing or unreadable path fails.
/// (A .npy file that npy_rows_offset accepts is read by rows all the same.)
bool read_whole(const std::string& path);
/// Where the values of the .npy file `path` start, when it is a regular file whose header
/// says C-order little-endian values of `value_size` bytes (what check_npy_float accepts:
/// '<f4', '=f4', '|f4', ...) of `shape` (outermost first) or of its product (flat), and
/// whose size is exactly header plus values: then the blocks' rows are read as from a raw
/// file, and no rank holds the whole component. Anything else (another dtype or shape, a
/// damaged header, a pipe): nullopt, and the whole-file reader says what is wrong.
std::optional<uint64_t> npy_rows_offset(const std::string& path, std::span<const int64_t> shape, size_t value_size);
/// Whether the global files of `flag` include one that is read whole (stage_blocks; false
/// with --per-rank).
bool read_whole(const Args& a, const std::string& flag);
/// FNV-1a hashes of block f's four outer lines (x min, x max, y min, y max), u then v, over
/// the values' bytes (4 or 8 each).
std::array<uint64_t, 4> edge_hashes(const VectorField2D& f);
std::array<uint64_t, 4> edge_hashes(const VectorField2D64& f);
/// With --per-rank: neighbouring blocks' files agree on their shared lines (`all`: every
/// block's edge_hashes, in block order).
void check_shared_lines(const BlockLayout& L, const std::vector<uint64_t>& all);
/// The validated header and index bytes of the multi-block file at `path`; `size` gets the
/// file size.
std::vector<uint8_t> read_header_bytes(const std::string& path, uint64_t& size);
/// `--region X0 Y0 X1 Y1`.
factz::Region region_of(const Args& a);

// ---- steps of the 2D and 3D drivers ---------------------------------------------------------

/// The per-rank file names of `flags` (each with %r) for blocks 0 .. count-1.
std::vector<PathArg> per_rank_paths(const Args& a, std::initializer_list<const char*> flags, int count);

/// The global value range (REL bounds) from every rank's `mine` (its blocks' ranges merged):
/// one reduction of two doubles (min lo, min -hi).
factz::ValueRange global_range(World& w, factz::ValueRange mine);

/// Writes the multi-block file `out` together. `bytes` holds this rank's streams of blocks
/// [first, first + lengths.size()) back to back, `lengths` theirs: every block's length is
/// gathered (one MPI_Allgather), header(all lengths) gives the header and index, which rank 0
/// puts in front of its streams (in `bytes`), the last rank puts `trailer` (the source
/// record's, the same on every rank; empty without one) after its own, and every rank writes
/// its part at its offset (written_or_removed: whole or not at all). Returns the file's size.
template <class Header>
uint64_t write_multiblock_file(World& w, const std::string& out, int first, const std::vector<uint64_t>& lengths,
                               std::vector<uint8_t>& bytes, const std::vector<uint8_t>& trailer, Header&& header) {
  // Every block's stream length, in block order (ranks hold ascending ranges).
  const std::vector<uint64_t> all = take(w.allgather(lengths));
  const std::vector<uint8_t> head = header(all);
  uint64_t offset = head.size(), file_bytes = head.size() + trailer.size();
  for (size_t b = 0; b < all.size(); ++b) {
    if (int64_t(b) < first) offset += all[b];
    file_bytes += all[b];
  }
  // The last rank's blocks are the last ones (or it has none and starts where they end).
  if (w.rank() == w.size() - 1) bytes.insert(bytes.end(), trailer.begin(), trailer.end());
  if (w.rank() == 0) {  // the header, then rank 0's streams (blocks 0, 1, ... when it has any)
    bytes.insert(bytes.begin(), head.begin(), head.end());
    offset = 0;
  }
  written_or_removed(w, out, [&](const std::string& path) { check(w.write_at_all(path, file_bytes, offset, bytes)); });
  return file_bytes;
}

/// Rank 0's part of sharing a file's index: the validated header and index bytes of the
/// multi-block file at `path` (read_header_bytes), then the file size in 8 bytes.
std::vector<uint8_t> header_and_size(const std::string& path);
/// After the broadcast, on every rank: the file size from header_and_size's bytes (which keep
/// the header and index only).
uint64_t take_size(std::vector<uint8_t>& head);

/// This rank's blocks [first, last) of the file at `path`, read collectively: their streams
/// back to back, from byte `from` of the file (0 when the rank has none).
template <class Index>
std::vector<uint8_t> read_block_streams(World& w, const std::string& path, const Index& ix, int first, int last,
                                        uint64_t& from) {
  from = first < last ? ix.entries[size_t(first)].offset : 0;
  const uint64_t to = first < last ? ix.entries[size_t(last - 1)].offset + ix.entries[size_t(last - 1)].length : 0;
  std::vector<uint8_t> streams;
  std::optional<factz::temp_files::Registration> side;
  register_mpi_side_file(w, path, side);
  phase(w, [&] { streams = take(w.read_at_all(path, from, to - from)); });
  return streams;
}

/// Writes one global raw plane of `plane_bytes` from this rank's segments (sorted here by
/// offset), collectively; whole or not at all (written_or_removed).
inline void write_plane_segments(World& w, const std::string& name, uint64_t plane_bytes,
                                 std::vector<factz::mpi::Segment> segs) {
  std::sort(segs.begin(), segs.end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
  written_or_removed(w, name, [&](const std::string& path) { check(w.write_segments_all(path, plane_bytes, segs)); });
}

// ---- 3D vector fields (blocks3d.cpp) --------------------------------------------------------

/// `--blocks PX PY PZ` of a 3D vector field (-3 with three -i).
void blocks3d_of_args(const Args& a, int& px, int& py, int& pz);
/// compress, decompress and verify of a 3D field with --blocks PX PY PZ, or of a version 3
/// multi-block file (the 2D entry points hand over).
int run_blocks3d_compress(const Args& a);
int run_blocks3d_decompress(const Args& a);
int run_blocks3d_decompress_bytes(const Args& a, const std::vector<uint8_t>& file);
int run_blocks3d_verify(const Args& a);
/// Whether the regular file at `path` is a 3D multi-block file (magic and version 3).
bool is_multiblock3d_file(const std::string& path);

}  // namespace factz::cli::blocks
