// The multi-block driver's shared pieces (docs/multiblock.md): blocks.cpp runs compress,
// decompress and verify over the ranks; blocks_input.cpp checks their options and reads a
// rank's blocks and the multi-block file's index.
//
// float32 and float64 fields take the same driver: blocks.cpp is templated on the field type
// (VectorField2D or VectorField2D64), chosen from the inputs (float64_field: '<f8' .npy, or
// raw with --dtype f64) or, for a multi-block file, from its header (MultiBlockIndex::dtype).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "factz/multiblock.hpp"
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

}  // namespace factz::cli::blocks
