// World for builds without MPI: one rank of one; collectives are the identity.
#include "mpi/comm.hpp"
#include "mpi/posix_file.hpp"

namespace factz::mpi {

World::World() = default;
World::~World() = default;

World::Outcome World::agree(bool ok, int code, const std::string& message) { return {ok, ok ? 0 : code, ok ? "" : message}; }
void World::allreduce_min(std::span<double>) {}
void World::allreduce_max(std::span<double>) {}
void World::allreduce_sum(std::span<int64_t>) {}
void World::allreduce_sum(std::span<double>) {}
std::vector<uint64_t> World::allgather(std::span<const uint64_t> mine) { return {mine.begin(), mine.end()}; }
void World::broadcast(std::vector<uint8_t>&, int) {}

Status World::write_at_all(const std::string& path, uint64_t file_bytes, uint64_t offset,
                           std::span<const uint8_t> bytes) {
  return detail::posix_write_at(path, file_bytes, offset, bytes);
}
Status World::write_segments_all(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments) {
  return detail::posix_write_segments(path, file_bytes, segments);
}
Result<std::vector<uint8_t>> World::read_at_all(const std::string& path, uint64_t offset, uint64_t length) {
  return detail::posix_read_at(path, offset, length);
}

}  // namespace factz::mpi
