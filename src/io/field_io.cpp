// Reading and writing fields and streams (factz/io.hpp).
//
// Reading: a regular file is sized with fstat and read whole; anything else that opens (a
// pipe such as `<(cat u.f32)`, a FIFO, a character device, stdin) is read as a stream into a
// growing buffer and its size checked at the end, never seeked. A path that cannot be read
// says why ("is a directory", "does not exist", ...), never a size or an allocation failure.
//
// Writing: every write, the close and the rename are checked. A regular file is written
// under a temporary name in its own folder and renamed over the destination once complete:
// a failed write (disk full, quota, I/O error) leaves no truncated file that looks valid, and
// a file it would have replaced unchanged. Character devices, FIFOs and the paths of open
// files (/dev/stdout, /dev/fd/N, /proc/...) are written in place (renaming over them would
// be wrong).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <new>
#include <span>

#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "io/temp_files.hpp"
#include "util/big_vector.hpp"

namespace factz {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw and .npy I/O assume a little-endian host (documented in docs/usage.md)");

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The system's reason for `err`, in the words of the error lines ("does not exist",
/// "is a directory", "permission denied", "no space left on device").
std::string reason(int err) {
  if (err == ENOENT) return "does not exist";
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = char(s[0] - 'A' + 'a');
  return s;
}

/// A file descriptor closed on scope exit (stdin, not owned, stays open).
class Fd {
 public:
  explicit Fd(int fd, bool owned = true) : fd_(owned ? fd : -1), borrowed_(owned ? -1 : fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_ >= 0 ? fd_ : borrowed_; }
  /// Closes now; the close's own error (a write-back failure on some file systems) counts.
  int close() {
    const int fd = fd_;
    fd_ = -1;
    return fd >= 0 ? ::close(fd) : 0;
  }

 private:
  int fd_;
  int borrowed_;
};

/// Opens an input for reading ("-" is stdin); a directory or anything unopenable is an io
/// error that says why.
Result<int> open_input(const std::string& path, struct stat& st) {
  if (path == "-") {
    if (::fstat(0, &st) != 0) return io_error("cannot read stdin: " + reason(errno));
    return 0;
  }
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return io_error("cannot read " + path + ": " + reason(errno));
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error("cannot read " + path + ": " + reason(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return io_error("cannot read " + path + ": is a directory");
  }
  return fd;
}

std::string input_name(const std::string& path) { return path == "-" ? "stdin" : path; }

/// Reads from `fd` into `buf` (whose storage holds elements of T) until the end of the
/// input or `limit` bytes; `got` is the byte count. The buffer grows as data comes (a pipe
/// has no size up front); `hint` is the first allocation.
template <class T>
Status read_fd(int fd, const std::string& path, uint64_t limit, uint64_t hint, std::vector<T>& buf, uint64_t& got) {
  got = 0;
  try {
    uint64_t cap = std::min<uint64_t>(limit, std::max<uint64_t>(hint, 1 << 16));
    // Huge pages before the first touch (resize's zero fill): a fault per 4 KiB is most of
    // the cost of reading a large field into fresh memory on a virtual machine.
    detail::resize_fresh(buf, size_t((cap + sizeof(T) - 1) / sizeof(T)));
    for (;;) {
      if (got == cap) {
        if (cap >= limit) break;
        cap = std::min<uint64_t>(limit, cap * 2);
        buf.resize(size_t((cap + sizeof(T) - 1) / sizeof(T)));
      }
      uint8_t* at = reinterpret_cast<uint8_t*>(buf.data()) + got;
      const ssize_t r = ::read(fd, at, size_t(std::min<uint64_t>(cap - got, 1u << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return io_error("cannot read " + input_name(path) + ": " + reason(errno));
      if (r == 0) break;
      got += uint64_t(r);
    }
    buf.resize(size_t((got + sizeof(T) - 1) / sizeof(T)));
  } catch (const std::bad_alloc&) {
    return io_error("cannot read " + input_name(path) + ": more than memory holds (" + std::to_string(got) +
                    " bytes read)");
  }
  return Status::Ok();
}

/// Writes all of `bytes` to `fd` (write may write less than asked, or be interrupted).
bool write_all(int fd, std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t(1) << 30));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool write_parts(int fd, std::initializer_list<std::span<const uint8_t>> parts) {
  for (const auto& p : parts)
    if (!write_all(fd, p)) return false;
  return true;
}

using temp_files::special_path;

Status write_in_place(const std::string& path, std::initializer_list<std::span<const uint8_t>> parts) {
  int raw;
  do raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  while (raw < 0 && errno == EINTR);
  if (raw < 0) return io_error("cannot write " + path + ": " + reason(errno));
  Fd fd(raw);
  if (!write_parts(fd.get(), parts)) {
    const int err = errno;
    // A regular file written in place (its folder refused a temporary file, or it was
    // named through /dev/stdout) must not keep a valid-looking prefix: emptied, then
    // removed where the folder allows (never a /dev or /proc name, only the file itself).
    struct stat st;
    if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
      [[maybe_unused]] const int emptied = ::ftruncate(fd.get(), 0);  // best effort, as the unlink
      fd.close();
      struct stat named;
      if (!special_path(path) && ::lstat(path.c_str(), &named) == 0 && S_ISREG(named.st_mode)) ::unlink(path.c_str());
    }
    return io_error("cannot write " + path + ": " + reason(err));
  }
  if (fd.close() != 0) return io_error("cannot write " + path + ": " + reason(errno));
  return Status::Ok();
}

/// Writes the concatenation of `parts` to `path` (stdout for "-"), as write_bytes says.
Status write_file(const std::string& path, std::initializer_list<std::span<const uint8_t>> parts) {
  namespace fs = std::filesystem;
  if (path == "-") {
    // Through stdio: the statistics printed on stdout go through the same buffer.
    for (const auto& p : parts)
      if (!p.empty() && std::fwrite(p.data(), 1, p.size(), stdout) != p.size())
        return io_error(std::string("cannot write to stdout: ") + reason(errno));
    if (std::fflush(stdout) != 0) return io_error(std::string("cannot write to stdout: ") + reason(errno));
    return Status::Ok();
  }
  if (path.empty()) return io_error("cannot write an empty file name");
  std::string target = path;
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return io_error("cannot write " + path + ": is a directory");
  if (special_path(path) || (exists && !S_ISREG(st.st_mode))) return write_in_place(path, parts);
  struct stat lst;
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // Write the file the link names (as opening the link would), not over the link itself.
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (!ec) target = resolved.string();
  }
  if (exists && temp_files::read_only_file(target))
    return io_error("cannot write " + path + ": " + temp_files::kReadOnlyReason);
  // The temporary file (temp_files::temporary_path), created exclusively.
  const fs::path t(target);
  const fs::path folder = t.has_parent_path() ? t.parent_path() : fs::path(".");
  const std::string tmp = temp_files::temporary_path(t);
  temp_files::Registration registered(tmp);  // removed if a signal ends the process before the rename
  int raw;
  do raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  while (raw < 0 && errno == EINTR);
  if (raw < 0) {
    const int err = errno;
    // A writable file in a folder that refuses new files: written in place.
    if (exists && (err == EACCES || err == EPERM || err == EROFS) && ::access(target.c_str(), W_OK) == 0)
      return write_in_place(target, parts);
    if (err == ENOENT) return io_error("cannot write " + path + ": folder " + folder.string() + " does not exist");
    return io_error("cannot write " + path + ": " + reason(err));
  }
  temp_files::created(tmp);
  Fd fd(raw);
  if (exists) (void)::fchmod(fd.get(), st.st_mode & 07777);  // a replaced file keeps its mode
  int err = 0;
  if (!write_parts(fd.get(), parts)) err = errno;
  if (fd.close() != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    if (temp_files::ending()) temp_files::wait_for_the_end();  // the signal's doing, not an error to report
    return io_error("cannot write " + path + ": " + reason(err));
  }
  return Status::Ok();
}

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

/// The checks of a float32 plane's .npy header: dtype, order, shape against (ny, nx).
Status check_plane_npy(const NpyHeader& h, const std::string& path, int64_t nx, int64_t ny) {
  FACTZ_RETURN_IF_ERROR(check_npy_float(h, 4, path));
  std::string shape = "(";
  for (size_t k = 0; k < h.shape.size(); ++k) shape += (k ? ", " : "") + std::to_string(h.shape[k]);
  shape += h.shape.size() == 1 ? ",)" : ")";
  const std::string want = "(ny, nx) = (" + std::to_string(ny) + ", " + std::to_string(nx) + ") or (" +
                           std::to_string(uint64_t(nx) * uint64_t(ny)) + ",)";
  if (h.shape.size() != 1 && h.shape.size() != 2)
    return invalid_argument(path + ": " + std::to_string(h.shape.size()) + "-dimensional .npy array of shape " + shape +
                            "; FaCTz reads a plane of shape " + want);
  const bool ok2 = h.shape.size() == 2 && h.shape[0] == ny && h.shape[1] == nx;
  const bool ok1 = h.shape.size() == 1 && uint64_t(h.shape[0]) == uint64_t(nx) * uint64_t(ny);
  if (!ok1 && !ok2) return invalid_argument(path + ": .npy shape " + shape + " does not match " + want);
  return Status::Ok();
}

}  // namespace

Status check_input_path(const std::string& path) {
  if (path == "-") return Status::Ok();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return io_error("cannot read " + path + ": " + reason(errno));
  if (S_ISDIR(st.st_mode)) return io_error("cannot read " + path + ": is a directory");
  if (::access(path.c_str(), R_OK) != 0) return io_error("cannot read " + path + ": " + reason(errno));
  return Status::Ok();
}

Result<std::vector<uint8_t>> read_bytes(const std::string& path) {
  struct stat st;
  auto opened = open_input(path, st);
  if (!opened.ok()) return opened.status();
  Fd fd(opened.value(), path != "-");
  std::vector<uint8_t> out;
  uint64_t got = 0;
  // A regular file's size is only the first allocation: it is read to its end all the same.
  const uint64_t hint = S_ISREG(st.st_mode) ? uint64_t(st.st_size) + 1 : 0;
  FACTZ_RETURN_IF_ERROR(read_fd(fd.get(), path, UINT64_MAX, hint, out, got));
  return out;
}

Status write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) { return write_file(path, {bytes}); }
Status write_parts(const std::string& path, std::initializer_list<std::span<const uint8_t>> parts) {
  return write_file(path, parts);
}

Result<std::vector<float>> read_plane(const std::string& path, int64_t nx, int64_t ny) {
  if (nx <= 0 || ny <= 0) return invalid_argument("dimensions must be positive");
  if (nx > (int64_t(1) << 40) / ny)
    return invalid_argument("grid " + std::to_string(nx) + "x" + std::to_string(ny) + " is too large (more than 2^40 values)");
  const uint64_t n = uint64_t(nx) * uint64_t(ny);
  auto size_error = [&](uint64_t have, bool more) {
    return invalid_argument(input_name(path) + ": expected " + std::to_string(n * 4) + " bytes of float32 for " +
                            std::to_string(nx) + "x" + std::to_string(ny) + ", found " + (more ? "more than " : "") +
                            std::to_string(have));
  };
  if (ends_with(path, ".npy")) {
    auto bytes = read_bytes(path);
    if (!bytes.ok()) return bytes.status();
    const auto& b = bytes.value();
    auto h = parse_npy_header(b);
    if (!h.ok()) return Status(h.status().code(), path + ": " + h.status().message());
    FACTZ_RETURN_IF_ERROR(check_plane_npy(h.value(), path, nx, ny));
    const uint64_t have = b.size() - h->data_offset;
    if (have != n * 4) return size_error(have, false);
    std::vector<float> out;
    detail::resize_fresh(out, size_t(n));  // huge pages before the zero fill
    std::memcpy(out.data(), b.data() + h->data_offset, n * 4);
    return out;
  }
  struct stat st;
  auto opened = open_input(path, st);
  if (!opened.ok()) return opened.status();
  Fd fd(opened.value(), path != "-");
  std::vector<float> out;
  uint64_t got = 0;
  if (S_ISREG(st.st_mode)) {
    // Sized up front: a wrong size is refused before anything is allocated or read.
    if (uint64_t(st.st_size) != n * 4) return size_error(uint64_t(st.st_size), false);
    FACTZ_RETURN_IF_ERROR(read_fd(fd.get(), path, n * 4 + 1, n * 4 + 1, out, got));
    if (got != n * 4) return io_error("cannot read " + path + ": it changed size while being read");
    return out;
  }
  // A stream: read one byte past the expected size to tell "too long" from "exact".
  FACTZ_RETURN_IF_ERROR(read_fd(fd.get(), path, n * 4 + 1, 0, out, got));
  if (got != n * 4) return size_error(got > n * 4 ? n * 4 : got, got > n * 4);
  return out;
}

Status write_plane(const std::string& path, const std::vector<float>& data, int64_t nx, int64_t ny) {
  if (uint64_t(data.size()) != uint64_t(nx) * uint64_t(ny)) return invalid_argument("plane size mismatch");
  const std::span<const uint8_t> values(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 4);
  if (!ends_with(path, ".npy")) return write_file(path, {values});
  const int64_t shape[2] = {ny, nx};
  const std::string header = npy_header("<f4", shape);
  return write_file(path, {bytes_of(header), values});
}

Result<VectorField2D> read_vector_field(const std::string& u_path, const std::string& v_path,
                                        int64_t nx, int64_t ny) {
  if (u_path == "-" && v_path == "-") return invalid_argument("only one component can come from stdin");
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  auto u = read_plane(u_path, nx, ny);
  if (!u.ok()) return u.status();
  auto v = read_plane(v_path, nx, ny);
  if (!v.ok()) return v.status();
  f.u = std::move(u.value());
  f.v = std::move(v.value());
  Status s = validate_field(f);
  if (!s.ok()) return Status(s.code(), "input field: " + s.message());
  return f;
}

}  // namespace factz
