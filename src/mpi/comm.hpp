// The few collective operations the multi-block driver (tools/factz/blocks.cpp,
// docs/multiblock.md) needs, behind one small interface (comm.cpp): one process, or MPI
// through the table of mpi_module.hpp, which the module libfactz-mpi.so (comm_mpi.cpp, built
// when CMake finds MPI, FACTZ_MPI) fills and factz loads only under mpirun. Callers never
// include mpi.h and contain no #ifdef: with one process every collective is the identity
// and every "collective" file write is an ordinary one.
//
// Rules every caller follows (so that a failing rank never leaves the others waiting in a
// collective): local work that can fail runs between two calls of `agree` (agreed_phase);
// a collective operation is only entered after an `agree` that returned no failure.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "factz/status.hpp"

namespace factz::mpi {

/// Whether this process was launched by an MPI launcher (mpirun / srun set
/// OMPI_COMM_WORLD_SIZE or PMI_SIZE). Checked before MPI is initialized, so that a plain
/// `factz` run never initializes MPI.
bool launched_by_mpirun();

/// A piece of a file written by one rank: `count` values of `value_bytes` bytes each (4:
/// float32 planes, 8: float64 planes) from `data` at byte `offset`.
struct Segment {
  uint64_t offset = 0;
  const void* data = nullptr;
  int64_t count = 0;
  int value_bytes = 4;

  uint64_t bytes() const { return uint64_t(count) * uint64_t(value_bytes); }
};

struct MpiModule;  // mpi/mpi_module.hpp

/// The world communicator: MPI_COMM_WORLD when built with MPI and launched by mpirun (MPI is
/// initialized by start() and finalized by the destructor), otherwise one rank of one.
///
/// Every fallible call returns Status or Result<T>; no call prints, exits or throws (only
/// agreed_phase passes on what the caller's own work throws, out of memory aside). The
/// collectives check MPI's return codes, but MPI_COMM_WORLD keeps MPI's default error
/// handler (abort the job), so a failed reduction, gather or broadcast normally ends the
/// job before its Status is seen; the file operations (MPI-IO returns errors) report theirs.
class World {
 public:
  /// Initializes MPI when built with MPI and launched by mpirun (MPI_THREAD_FUNNELED: the
  /// calling thread makes every MPI call), through the module libfactz-mpi.so, loaded then
  /// (dynload/module_loader.hpp says where it is looked for); otherwise loads nothing.
  /// Errors: backend_unavailable when the module cannot be loaded (naming it and where it
  /// was looked for), internal when MPI cannot be initialized.
  static Result<std::unique_ptr<World>> start();
  /// The same on MPI operations the program links itself (factz_h5mpi: linked_mpi()).
  static Result<std::unique_ptr<World>> start(const MpiModule& mpi);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Whether the ranks are MPI processes (false: one process without MPI).
  bool distributed() const { return mpi_ != nullptr; }

  /// Every rank passes its local outcome; every rank gets the first (lowest-rank) failure,
  /// with the code and message that rank passed, or ok when all succeeded.
  Status agree(const Status& local);

  /// In-place reductions over all ranks.
  Status allreduce_min(std::span<double> values);
  Status allreduce_max(std::span<double> values);
  Status allreduce_sum(std::span<int64_t> values);
  Status allreduce_sum(std::span<double> values);
  /// Concatenation, in rank order, of every rank's values (counts may differ).
  Result<std::vector<uint64_t>> allgather(std::span<const uint64_t> mine);
  /// Root's bytes on every rank.
  Status broadcast(std::vector<uint8_t>& bytes, int root);

  /// Bytes this rank has sent or received in reductions, gathers and broadcasts so far
  /// (payload only: the communication volume the benchmarks report).
  uint64_t comm_bytes() const { return comm_bytes_; }

  /// Collective: creates (or truncates) `path` to `file_bytes` and writes this rank's
  /// `bytes` at `offset`. Writes larger than 1 GiB go in several rounds (MPI counts are int).
  Status write_at_all(const std::string& path, uint64_t file_bytes, uint64_t offset, std::span<const uint8_t> bytes);
  /// Collective: creates (or truncates) `path` to `file_bytes` and writes this rank's
  /// segments (sorted by offset, not overlapping) through one file view per round.
  Status write_segments_all(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments);
  /// Collective: reads `length` bytes at `offset` of `path` on every rank (each its own range).
  Result<std::vector<uint8_t>> read_at_all(const std::string& path, uint64_t offset, uint64_t length);

 private:
  World() = default;
  int rank_ = 0, size_ = 1;
  const MpiModule* mpi_ = nullptr;  ///< set once MPI is initialized: the destructor finalizes it
  uint64_t comm_bytes_ = 0;
};

/// Runs the local work `f` (a callable returning Status), then agrees with the other ranks
/// (World::agree): every rank returns the first failure of any rank (out of memory in `f`
/// becomes internal "out of memory"), its message prefixed with the failing rank when there
/// are several, or ok.
template <class F>
Status agreed_phase(World& w, F&& f) {
  Status local;
  try {
    local = f();
  } catch (const std::bad_alloc&) {
    local = Status(Code::internal, "out of memory");
  }
  if (!local.ok() && w.size() > 1)
    local = Status(local.code(), "rank " + std::to_string(w.rank()) + ": " + local.message());
  return w.agree(local);
}

}  // namespace factz::mpi
