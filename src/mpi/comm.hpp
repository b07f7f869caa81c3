// The few collective operations the multi-block driver (tools/factz/blocks.cpp,
// docs/multiblock.md) needs, behind one small interface with two implementations:
// comm_mpi.cpp (built when CMake finds MPI, FACTZ_MPI) and comm_serial.cpp (one process).
// Callers never include mpi.h and contain no #ifdef: with one process every collective is
// the identity and every "collective" file write is an ordinary one.
//
// Rules every caller follows (so that a failing rank never leaves the others waiting in a
// collective): local work that can fail runs between two calls of `agree`; a collective
// operation is only entered after an `agree` that returned no failure.
#pragma once

#include <cstdint>
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

/// A piece of a file written by one rank: `count` floats from `data` at byte `offset`.
struct Segment {
  uint64_t offset = 0;
  const float* data = nullptr;
  int64_t count = 0;
};

/// The world communicator. MPI is initialized by the constructor when built with MPI and
/// launched by mpirun, and finalized by the destructor; otherwise one rank of one.
class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Whether the ranks are MPI processes (false: one process without MPI).
  bool distributed() const { return distributed_; }

  /// Every rank passes its local outcome; every rank gets the first (lowest-rank) failure,
  /// or ok when all succeeded. `code` is carried along (the CLI's exit code, 1 or 2).
  struct Outcome {
    bool ok = true;
    int code = 0;
    std::string message;
  };
  Outcome agree(bool ok, int code, const std::string& message);

  /// In-place reductions over all ranks.
  void allreduce_min(std::span<double> values);
  void allreduce_max(std::span<double> values);
  void allreduce_sum(std::span<int64_t> values);
  void allreduce_sum(std::span<double> values);
  /// Concatenation, in rank order, of every rank's values (counts may differ).
  std::vector<uint64_t> allgather(std::span<const uint64_t> mine);
  /// Root's bytes on every rank.
  void broadcast(std::vector<uint8_t>& bytes, int root);

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
  int rank_ = 0, size_ = 1;
  bool distributed_ = false;
  uint64_t comm_bytes_ = 0;
};

/// Runs the local work `f`, then agrees with the other ranks (World::agree): the first
/// failure of any rank (`F` thrown as `Failure{code, message}`, or out of memory) is thrown
/// on every rank, the message prefixed with the failing rank when there are several.
/// `Failure` is the caller's exception type with members `code` and `message`.
template <class Failure, class F>
void agreed_phase(World& w, F&& f) {
  bool ok = true;
  int code = 0;
  std::string message;
  try {
    f();
  } catch (const Failure& e) {
    ok = false;
    code = e.code;
    message = e.message;
  } catch (const std::bad_alloc&) {
    ok = false;
    code = 1;
    message = "out of memory";
  }
  if (!ok && w.size() > 1) message = "rank " + std::to_string(w.rank()) + ": " + message;
  const World::Outcome o = w.agree(ok, code, message);
  if (!o.ok) throw Failure{o.code, o.message};
}

}  // namespace factz::mpi
