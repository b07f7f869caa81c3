// World for builds without MPI: one rank of one; collectives are the identity.
#include "mpi/comm.hpp"
#include "mpi/posix_file.hpp"

namespace factz::mpi {

Result<std::unique_ptr<World>> World::start() { return std::unique_ptr<World>(new World); }
World::~World() = default;

Status World::agree(const Status& local) { return local; }
Status World::allreduce_min(std::span<double>) { return Status::Ok(); }
Status World::allreduce_max(std::span<double>) { return Status::Ok(); }
Status World::allreduce_sum(std::span<int64_t>) { return Status::Ok(); }
Status World::allreduce_sum(std::span<double>) { return Status::Ok(); }
Result<std::vector<uint64_t>> World::allgather(std::span<const uint64_t> mine) {
  return std::vector<uint64_t>(mine.begin(), mine.end());
}
Status World::broadcast(std::vector<uint8_t>&, int) { return Status::Ok(); }

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
