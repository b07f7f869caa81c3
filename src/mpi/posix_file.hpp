// One-process file access behind World's file operations when there is one process
// (comm.cpp: not launched by mpirun, or built without MPI).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "factz/status.hpp"
#include "mpi/comm.hpp"

namespace factz::mpi::detail {

/// Creates or truncates `path` to `file_bytes`, then writes `bytes` at `offset`.
Status posix_write_at(const std::string& path, uint64_t file_bytes, uint64_t offset, std::span<const uint8_t> bytes);
/// Creates or truncates `path` to `file_bytes`, then writes every segment.
Status posix_write_segments(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments);
/// `length` bytes at `offset`; io_error when the file is shorter.
Result<std::vector<uint8_t>> posix_read_at(const std::string& path, uint64_t offset, uint64_t length);

}  // namespace factz::mpi::detail
