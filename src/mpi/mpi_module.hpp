// The MPI module libfactz-mpi.so (docs/architecture.md, "Loadable modules"): World's
// operations on MPI_COMM_WORLD (comm_mpi.cpp, linking MPI), built as a shared module that
// factz loads (comm.cpp) only when launched by mpirun, so that a plain run never maps MPI
// and its libraries. Programs that link MPI themselves (factz_h5mpi) link comm_mpi.cpp
// instead and hand its table to World::start. The module and the CLI come from one build and
// pass C++ types; kModuleVersion changes whenever this table or the types it passes change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dynload/module_loader.hpp"
#include "factz/status.hpp"
#include "mpi/comm.hpp"

namespace factz::mpi {

inline constexpr uint32_t kModuleVersion = 1;
inline constexpr char kModuleFile[] = "libfactz-mpi.so";
inline constexpr char kModuleEntry[] = "factz_mpi_module";

/// The element types and operations of MpiModule::allreduce.
enum class ReduceType : uint8_t { int32, int64, float64 };
enum class ReduceOp : uint8_t { min, max, sum };

/// World's collectives on MPI_COMM_WORLD (comm.hpp says what each does; World counts the
/// bytes they move). Errors as comm.hpp describes.
struct MpiModule {
  uint32_t version = kModuleVersion;
  /// MPI_Init_thread (MPI_THREAD_FUNNELED), then this process's rank and the world's size.
  Status (*init)(int& rank, int& size) = nullptr;
  void (*finalize)() = nullptr;
  /// In place over all ranks: `count` values of `type` at `values`.
  Status (*allreduce)(void* values, size_t count, ReduceType type, ReduceOp op) = nullptr;
  Result<std::vector<uint64_t>> (*allgather)(std::span<const uint64_t> mine, int size) = nullptr;
  Status (*broadcast)(std::vector<uint8_t>& bytes, int root) = nullptr;
  Status (*write_at_all)(const std::string& path, uint64_t file_bytes, uint64_t offset,
                         std::span<const uint8_t> bytes) = nullptr;
  Status (*write_segments_all)(const std::string& path, uint64_t file_bytes,
                               std::span<const Segment> segments) = nullptr;
  Result<std::vector<uint8_t>> (*read_at_all)(const std::string& path, uint64_t offset, uint64_t length) = nullptr;
};

/// The table of comm_mpi.cpp, for a program that links it (factz_h5mpi).
const MpiModule& linked_mpi();

}  // namespace factz::mpi

/// The module's entry point (comm_mpi.cpp): linked_mpi(), valid while the module stays loaded.
FACTZ_MODULE_ENTRY const factz::mpi::MpiModule* factz_mpi_module();
