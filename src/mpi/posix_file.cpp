#include "mpi/posix_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace factz::mpi {

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

namespace detail {
namespace {

std::string why(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

/// Writes all of [p, p + n) at `offset` (pwrite may write less than asked).
bool write_all(int fd, const uint8_t* p, uint64_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, off_t(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= uint64_t(w);
    offset += uint64_t(w);
  }
  return true;
}

/// Opens `path` for writing, truncated to exactly `file_bytes`.
Result<int> open_sized(const std::string& path, uint64_t file_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return io_error(why("cannot open", path) + " for writing");
  if (::ftruncate(fd, off_t(file_bytes)) != 0) {
    const Status s = io_error(why("cannot size", path));
    ::close(fd);
    return s;
  }
  return fd;
}

Status finish(int fd, bool ok, const std::string& path) {
  const std::string err = ok ? "" : why("cannot write", path);
  if (::close(fd) != 0 && ok) return io_error(why("cannot close", path));
  return ok ? Status::Ok() : io_error(err);
}

}  // namespace

Status posix_write_at(const std::string& path, uint64_t file_bytes, uint64_t offset, std::span<const uint8_t> bytes) {
  auto fd = open_sized(path, file_bytes);
  if (!fd.ok()) return fd.status();
  return finish(fd.value(), write_all(fd.value(), bytes.data(), bytes.size(), offset), path);
}

Status posix_write_segments(const std::string& path, uint64_t file_bytes, std::span<const Segment> segments) {
  auto fd = open_sized(path, file_bytes);
  if (!fd.ok()) return fd.status();
  bool ok = true;
  for (const auto& s : segments) {
    ok = write_all(fd.value(), static_cast<const uint8_t*>(s.data), s.bytes(), s.offset);
    if (!ok) break;
  }
  return finish(fd.value(), ok, path);
}

Result<std::vector<uint8_t>> posix_read_at(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return io_error(why("cannot open", path));
  std::vector<uint8_t> out(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t r = ::pread(fd, out.data() + done, length - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    done += uint64_t(r);
  }
  ::close(fd);
  if (done < length)
    return io_error(path + ": " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                    " asked, the file ends after " + std::to_string(done));
  return out;
}

}  // namespace detail
}  // namespace factz::mpi
