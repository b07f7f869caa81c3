// World (comm.hpp): one process, or, once MPI is initialized, the collectives of an MPI
// table (mpi_module.hpp): the module libfactz-mpi.so, loaded only under mpirun, or the one
// a program links. The bytes comm_bytes() reports are counted here, whichever table runs.
#include <algorithm>
#include <cstring>

#include "mpi/mpi_module.hpp"
#include "mpi/posix_file.hpp"

namespace factz::mpi {
namespace {

/// Whether this build has the MPI module (FACTZ_MPI found MPI); without it every run is one
/// process, under mpirun too.
constexpr bool kMpiModule = FACTZ_MPI_MODULE;

/// The module, loaded on the first call; the outcome (a table, or why there is none) is kept.
Result<const MpiModule*> mpi_module() {
  // RTLD_GLOBAL: OpenMPI dlopens its own components, which need libmpi's and libopen-pal's
  // symbols in the global scope.
  static const Result<const MpiModule*> loaded =
      dynload::load_module_table<MpiModule>(kModuleFile, kModuleEntry, "factz under mpirun", true, kModuleVersion);
  return loaded;
}

/// One in-place reduction of `count` values (`bytes` in all), counted in `comm_bytes`.
Status reduce(const MpiModule& mpi, void* values, size_t count, size_t bytes, ReduceType type, ReduceOp op,
              uint64_t& comm_bytes) {
  if (count == 0) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(mpi.allreduce(values, count, type, op));
  comm_bytes += 2 * bytes;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<World>> World::start() {
  if (!kMpiModule || !launched_by_mpirun()) return std::unique_ptr<World>(new World);
  const auto mpi = mpi_module();
  if (!mpi.ok()) return mpi.status();
  return start(*mpi.value());
}

Result<std::unique_ptr<World>> World::start(const MpiModule& mpi) {
  std::unique_ptr<World> w(new World);
  if (!launched_by_mpirun()) return w;
  FACTZ_RETURN_IF_ERROR(mpi.init(w->rank_, w->size_));
  w->mpi_ = &mpi;  // from here on the destructor finalizes MPI
  return w;
}

World::~World() {
  if (mpi_) mpi_->finalize();
}

Status World::agree(const Status& local) {
  if (!mpi_) return local;
  int32_t first = local.ok() ? size_ : rank_;
  FACTZ_RETURN_IF_ERROR(reduce(*mpi_, &first, 1, sizeof first, ReduceType::int32, ReduceOp::min, comm_bytes_));
  if (first == size_) return Status::Ok();
  // The failing rank's code (4 bytes, native order: every rank runs this build) and message.
  std::vector<uint8_t> text;
  if (rank_ == first) {
    const int32_t code = int32_t(local.code());
    text.resize(4 + local.message().size());
    std::memcpy(text.data(), &code, 4);
    std::copy(local.message().begin(), local.message().end(), text.begin() + 4);
  }
  FACTZ_RETURN_IF_ERROR(broadcast(text, first));
  int32_t code = int32_t(Code::internal);
  if (text.size() >= 4) std::memcpy(&code, text.data(), 4);
  const std::string message(text.begin() + std::min<size_t>(4, text.size()), text.end());
  return Status(code == int32_t(Code::ok) ? Code::internal : Code(code), message);
}

Status World::allreduce_min(std::span<double> v) {
  if (!mpi_) return Status::Ok();
  return reduce(*mpi_, v.data(), v.size(), v.size_bytes(), ReduceType::float64, ReduceOp::min, comm_bytes_);
}

Status World::allreduce_max(std::span<double> v) {
  if (!mpi_) return Status::Ok();
  return reduce(*mpi_, v.data(), v.size(), v.size_bytes(), ReduceType::float64, ReduceOp::max, comm_bytes_);
}

Status World::allreduce_sum(std::span<int64_t> v) {
  if (!mpi_) return Status::Ok();
  return reduce(*mpi_, v.data(), v.size(), v.size_bytes(), ReduceType::int64, ReduceOp::sum, comm_bytes_);
}

Status World::allreduce_sum(std::span<double> v) {
  if (!mpi_) return Status::Ok();
  return reduce(*mpi_, v.data(), v.size(), v.size_bytes(), ReduceType::float64, ReduceOp::sum, comm_bytes_);
}

Result<std::vector<uint64_t>> World::allgather(std::span<const uint64_t> mine) {
  if (!mpi_) return std::vector<uint64_t>(mine.begin(), mine.end());
  auto all = mpi_->allgather(mine, size_);
  // The counts (one int per rank, and this rank's), then the values sent and received.
  if (all.ok()) comm_bytes_ += sizeof(int32_t) * (1 + size_t(size_)) + 8 * (mine.size() + all->size());
  return all;
}

Status World::broadcast(std::vector<uint8_t>& bytes, int root) {
  if (!mpi_) return Status::Ok();
  FACTZ_RETURN_IF_ERROR(mpi_->broadcast(bytes, root));
  comm_bytes_ += 8 + bytes.size();  // the length, then the bytes
  return Status::Ok();
}

Status World::write_at_all(const std::string& path, uint64_t file_bytes, uint64_t offset,
                           std::span<const uint8_t> bytes) {
  if (!mpi_) return detail::posix_write_at(path, file_bytes, offset, bytes);
  return mpi_->write_at_all(path, file_bytes, offset, bytes);
}

Status World::write_segments_all(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments) {
  if (!mpi_) return detail::posix_write_segments(path, file_bytes, segments);
  return mpi_->write_segments_all(path, file_bytes, segments);
}

Result<std::vector<uint8_t>> World::read_at_all(const std::string& path, uint64_t offset, uint64_t length) {
  if (!mpi_) return detail::posix_read_at(path, offset, length);
  return mpi_->read_at_all(path, offset, length);
}

}  // namespace factz::mpi
