// World's operations on MPI_COMM_WORLD (mpi_module.hpp; built when CMake finds MPI): in the
// module libfactz-mpi.so (module_entry.cpp), which factz loads under mpirun, and linked into
// factz_h5mpi.
// Called only once MPI is initialized (World::start); World keeps rank, size and the
// communication volume.
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "mpi/mpi_module.hpp"

namespace factz::mpi {
namespace {

constexpr uint64_t kRoundBytes = uint64_t(1) << 30;  // MPI counts are int: 1 GiB per call

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, size_t(len));
}

/// A failed MPI call (seen only where MPI returns errors instead of aborting the job).
Status mpi_failure(const char* call, int rc) {
  return Status(Code::internal, std::string(call) + ": " + mpi_error(rc));
}

/// Opens `path` collectively for writing and sizes it to file_bytes (truncating a longer one);
/// a device (/dev/null) has no size to set.
Result<MPI_File> open_for_write(const std::string& path, uint64_t file_bytes) {
  MPI_File fh;
  int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) return io_error("cannot open " + path + " for writing: " + mpi_error(rc));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return fh;
  rc = MPI_File_set_size(fh, MPI_Offset(file_bytes));
  if (rc != MPI_SUCCESS) {
    MPI_File_close(&fh);
    return io_error("cannot size " + path + ": " + mpi_error(rc));
  }
  return fh;
}

/// What a collective write that returned `rc` with status `st` did wrong, or "": MPI's error,
/// or fewer than `count` bytes written. OpenMPI's posix file layer reports a write that
/// failed (ENOSPC, EIO) on stderr and returns success with the bytes it wrote in the status, so
/// the count is what tells a whole write from a file left with holes.
std::string write_failure(int rc, const MPI_Status& st, int64_t count, const std::string& path) {
  if (rc != MPI_SUCCESS) return "cannot write " + path + ": " + mpi_error(rc);
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  if (int64_t(got) == count) return "";
  return "cannot write " + path + ": " + std::to_string(got < 0 ? 0 : got) + " of " + std::to_string(count) +
         " bytes written (is the disk full?)";
}

/// After a collective write of `path` and its close: whether this rank's `pieces` (file
/// offset, bytes) are in the file. OpenMPI's aggregated writes of non-contiguous views report
/// a failed write (ENOSPC) on stderr only and count every byte as written, which leaves the
/// sized file with holes; a regular file with fewer bytes allocated than its size is read back
/// (each rank its own pieces, compared byte for byte), so that such a file is an error. A file
/// whose blocks cover its size (every write landed) is not read; a device cannot be.
Status check_written(const std::string& path, std::span<const std::pair<uint64_t, std::span<const uint8_t>>> pieces) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();
  if (uint64_t(st.st_blocks) * 512 >= uint64_t(st.st_size)) return Status::Ok();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot read back " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> back;
  Status result;
  for (const auto& [offset, bytes] : pieces) {
    back.resize(bytes.size());
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t got = ::pread(fd, back.data() + done, bytes.size() - done, off_t(offset + done));
      if (got <= 0) break;
      done += size_t(got);
    }
    if (done != bytes.size() || std::memcmp(back.data(), bytes.data(), bytes.size()) != 0) {
      result = io_error("cannot write " + path + ": the file does not hold what was written at byte " +
                        std::to_string(offset) + " (is the disk full?)");
      break;
    }
  }
  ::close(fd);
  return result;
}

/// The largest value of n over all ranks.
Result<int64_t> max_over_ranks(int64_t n) {
  long long v = n;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_failure("MPI_Allreduce", rc);
  return int64_t(v);
}

Status init(int& rank, int& size) {
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) return mpi_failure("MPI_Init_thread", rc);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return Status::Ok();
}

void finalize() { MPI_Finalize(); }

Status allreduce(void* values, size_t count, ReduceType type, ReduceOp op) {
  static_assert(sizeof(int) == sizeof(int32_t) && sizeof(long long) == sizeof(int64_t));
  const MPI_Datatype t = type == ReduceType::int32 ? MPI_INT : type == ReduceType::int64 ? MPI_LONG_LONG : MPI_DOUBLE;
  const MPI_Op o = op == ReduceOp::min ? MPI_MIN : op == ReduceOp::max ? MPI_MAX : MPI_SUM;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, values, int(count), t, o, MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? Status::Ok() : mpi_failure("MPI_Allreduce", rc);
}

Result<std::vector<uint64_t>> allgather(std::span<const uint64_t> mine, int size) {
  const int n = int(mine.size());
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  int rc = MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_failure("MPI_Allgather", rc);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[size_t(r)] = total;
    total += counts[size_t(r)];
  }
  std::vector<uint64_t> all(static_cast<size_t>(total));
  static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
  rc = MPI_Allgatherv(mine.data(), n, MPI_UNSIGNED_LONG_LONG, all.data(), counts.data(), displs.data(),
                      MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_failure("MPI_Allgatherv", rc);
  return all;
}

Status broadcast(std::vector<uint8_t>& bytes, int root) {
  unsigned long long n = bytes.size();
  int rc = MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_failure("MPI_Bcast", rc);
  bytes.resize(n);
  for (uint64_t done = 0; done < n;) {
    const int c = int(std::min<uint64_t>(n - done, kRoundBytes));
    rc = MPI_Bcast(bytes.data() + done, c, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_failure("MPI_Bcast", rc);
    done += uint64_t(c);
  }
  return Status::Ok();
}

Status write_at_all(const std::string& path, uint64_t file_bytes, uint64_t offset, std::span<const uint8_t> bytes) {
  auto fh = open_for_write(path, file_bytes);
  if (!fh.ok()) return fh.status();
  // Every rank takes part in every round (count 0 once its bytes are out).
  const auto rounds = max_over_ranks(int64_t((bytes.size() + kRoundBytes - 1) / kRoundBytes));
  if (!rounds.ok()) {
    MPI_File_close(&fh.value());
    return rounds.status();
  }
  std::string err;
  for (int64_t k = 0; k < rounds.value(); ++k) {
    const uint64_t from = std::min<uint64_t>(uint64_t(k) * kRoundBytes, bytes.size());
    const int count = int(std::min<uint64_t>(bytes.size() - from, kRoundBytes));
    MPI_Status st;
    const int rc = MPI_File_write_at_all(fh.value(), MPI_Offset(offset + from), bytes.data() + from, count, MPI_BYTE, &st);
    if (err.empty()) err = write_failure(rc, st, count, path);
  }
  const int rc = MPI_File_close(&fh.value());
  if (rc != MPI_SUCCESS && err.empty()) err = "cannot close " + path + ": " + mpi_error(rc);
  if (!err.empty()) return io_error(err);
  const std::pair<uint64_t, std::span<const uint8_t>> mine[1] = {{offset, bytes}};
  return check_written(path, mine);
}

Status write_segments_all(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments) {
  // Rounds of at most kRoundBytes bytes; a longer segment is split. The file view and the
  // memory type count bytes, so float32 and float64 planes (Segment::value_bytes) go alike.
  struct Piece {
    uint64_t offset;
    const uint8_t* data;
    int64_t bytes;
  };
  const int64_t round_bytes = int64_t(kRoundBytes);
  std::vector<std::vector<Piece>> rounds(1);
  int64_t in_round = 0;
  for (const Segment& s : segments) {
    Piece p{s.offset, static_cast<const uint8_t*>(s.data), int64_t(s.bytes())};
    while (p.bytes > 0) {
      if (in_round == round_bytes) {
        rounds.emplace_back();
        in_round = 0;
      }
      const int64_t take = std::min(p.bytes, round_bytes - in_round);
      rounds.back().push_back({p.offset, p.data, take});
      in_round += take;
      p.offset += uint64_t(take);
      p.data += take;
      p.bytes -= take;
    }
  }
  auto fh = open_for_write(path, file_bytes);
  if (!fh.ok()) return fh.status();
  const auto n_rounds = max_over_ranks(int64_t(rounds.size()));
  if (!n_rounds.ok()) {
    MPI_File_close(&fh.value());
    return n_rounds.status();
  }
  std::string err;
  auto note = [&err, &path](int rc, const char* what) {
    if (rc != MPI_SUCCESS && err.empty()) err = std::string(what) + " " + path + ": " + mpi_error(rc);
  };
  for (int64_t k = 0; k < n_rounds.value(); ++k) {
    const std::vector<Piece> none;
    const auto& r = size_t(k) < rounds.size() ? rounds[size_t(k)] : none;
    MPI_Status st;
    if (r.empty()) {  // this rank writes nothing in this round, but takes part
      note(MPI_File_set_view(fh.value(), 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "cannot view");
      note(MPI_File_write_all(fh.value(), nullptr, 0, MPI_BYTE, &st), "cannot write");
      continue;
    }
    int64_t round_total = 0;
    for (const Piece& p : r) round_total += p.bytes;
    std::vector<int> lengths(r.size());
    std::vector<MPI_Aint> file_at(r.size()), memory_at(r.size());
    for (size_t i = 0; i < r.size(); ++i) {
      lengths[i] = int(r[i].bytes);
      file_at[i] = MPI_Aint(r[i].offset);
      MPI_Get_address(r[i].data, &memory_at[i]);
    }
    MPI_Datatype file_type, memory_type;
    MPI_Type_create_hindexed(int(r.size()), lengths.data(), file_at.data(), MPI_BYTE, &file_type);
    MPI_Type_create_hindexed(int(r.size()), lengths.data(), memory_at.data(), MPI_BYTE, &memory_type);
    MPI_Type_commit(&file_type);
    MPI_Type_commit(&memory_type);
    note(MPI_File_set_view(fh.value(), 0, MPI_BYTE, file_type, "native", MPI_INFO_NULL), "cannot view");
    const int rc = MPI_File_write_all(fh.value(), MPI_BOTTOM, 1, memory_type, &st);
    if (err.empty()) err = write_failure(rc, st, round_total, path);
    MPI_Type_free(&file_type);
    MPI_Type_free(&memory_type);
  }
  note(MPI_File_close(&fh.value()), "cannot close");
  if (!err.empty()) return io_error(err);
  std::vector<std::pair<uint64_t, std::span<const uint8_t>>> pieces;
  for (const Segment& seg : segments)
    pieces.push_back(
        {seg.offset, std::span<const uint8_t>(static_cast<const uint8_t*>(seg.data), size_t(seg.bytes()))});
  return check_written(path, pieces);
}

Result<std::vector<uint8_t>> read_at_all(const std::string& path, uint64_t offset, uint64_t length) {
  MPI_File fh;
  int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) return io_error("cannot open " + path + ": " + mpi_error(rc));
  MPI_Offset size = 0;
  MPI_File_get_size(fh, &size);
  std::string err;
  if (offset + length > uint64_t(size)) {
    err = path + ": " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
          " asked, the file holds " + std::to_string(size);
    length = 0;  // still takes part in the rounds
  }
  std::vector<uint8_t> out(length);
  const auto rounds = max_over_ranks(int64_t((length + kRoundBytes - 1) / kRoundBytes));
  if (!rounds.ok()) {
    MPI_File_close(&fh);
    return rounds.status();
  }
  for (int64_t k = 0; k < rounds.value(); ++k) {
    const uint64_t from = std::min<uint64_t>(uint64_t(k) * kRoundBytes, length);
    const int count = int(std::min<uint64_t>(length - from, kRoundBytes));
    MPI_Status st;
    rc = MPI_File_read_at_all(fh, MPI_Offset(offset + from), out.data() + from, count, MPI_BYTE, &st);
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if ((rc != MPI_SUCCESS || got != count) && err.empty()) err = "cannot read " + path;
  }
  MPI_File_close(&fh);
  if (!err.empty()) return io_error(err);
  return out;
}

}  // namespace

const MpiModule& linked_mpi() {
  static const MpiModule m = [] {
    MpiModule t;
    t.init = init;
    t.finalize = finalize;
    t.allreduce = allreduce;
    t.allgather = allgather;
    t.broadcast = broadcast;
    t.write_at_all = write_at_all;
    t.write_segments_all = write_segments_all;
    t.read_at_all = read_at_all;
    return t;
  }();
  return m;
}

}  // namespace factz::mpi
