#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "factz/io.hpp"
#include "factz/topology.hpp"

namespace factz {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw and .npy I/O assume a little-endian host (documented in docs/usage.md)");

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Parses the shape tuple and checks descr/fortran_order of a v1/v2/v3 .npy header.
Status parse_npy(const std::vector<uint8_t>& b, const std::string& path, std::vector<int64_t>& shape,
                 size_t& data_offset) {
  const std::string bad = "not a float32 .npy file: " + path;
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return invalid_argument(bad);
  const int major = b[6];
  size_t hlen = 0, start = 0;
  if (major == 1) {
    hlen = size_t(b[8]) | size_t(b[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return invalid_argument(bad);
    hlen = size_t(b[8]) | size_t(b[9]) << 8 | size_t(b[10]) << 16 | size_t(b[11]) << 24;
    start = 12;
  } else {
    return invalid_argument("unsupported .npy version in " + path);
  }
  if (hlen > b.size() - start) return invalid_argument("truncated .npy header in " + path);
  const std::string h(reinterpret_cast<const char*>(b.data() + start), hlen);
  if (h.find("'descr': '<f4'") == std::string::npos && h.find("'descr': '|f4'") == std::string::npos)
    return invalid_argument(path + ": dtype must be little-endian float32 ('<f4')");
  if (h.find("'fortran_order': False") == std::string::npos)
    return invalid_argument(path + ": array must be C order (fortran_order False)");
  const size_t open = h.find("'shape': (");
  const size_t close = open == std::string::npos ? open : h.find(')', open);
  if (close == std::string::npos) return invalid_argument(bad);
  std::string dims = h.substr(open + 10, close - open - 10);
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item));
    } catch (...) {
      return invalid_argument(bad);
    }
  }
  data_offset = start + hlen;
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint8_t>> read_bytes(const std::string& path) {
  if (path == "-") {
    std::vector<uint8_t> out((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return out;
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return io_error("cannot open " + path + ": " + std::strerror(errno));
  const std::streamsize size = in.tellg();
  if (size < 0) return io_error("cannot read " + path);
  std::vector<uint8_t> out(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(out.data()), size))
    return io_error("cannot read " + path);
  return out;
}

Status write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  if (path == "-") {
    std::cout.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    std::cout.flush();
    return std::cout ? Status::Ok() : io_error("cannot write to stdout");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error("cannot open " + path + " for writing: " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  out.close();
  return out ? Status::Ok() : io_error("cannot write " + path);
}

Result<std::vector<float>> read_plane(const std::string& path, int64_t nx, int64_t ny) {
  if (nx <= 0 || ny <= 0) return invalid_argument("dimensions must be positive");
  if (nx > (int64_t(1) << 40) / ny)
    return invalid_argument("grid " + std::to_string(nx) + "x" + std::to_string(ny) + " is too large (more than 2^40 values)");
  const uint64_t n = uint64_t(nx) * uint64_t(ny);
  auto size_error = [&](uint64_t have) {
    return invalid_argument(path + ": expected " + std::to_string(n * 4) + " bytes of float32 for " +
                            std::to_string(nx) + "x" + std::to_string(ny) + ", found " + std::to_string(have));
  };
  if (path != "-" && !ends_with(path, ".npy")) {
    // Raw file: read straight into the plane (no intermediate byte buffer).
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return io_error("cannot open " + path + ": " + std::strerror(errno));
    const std::streamsize size = in.tellg();
    if (size < 0) return io_error("cannot read " + path);
    if (uint64_t(size) != n * 4) return size_error(uint64_t(size));
    std::vector<float> out(n);
    in.seekg(0);
    if (n > 0 && !in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n * 4)))
      return io_error("cannot read " + path);
    return out;
  }
  auto bytes = read_bytes(path);
  if (!bytes.ok()) return bytes.status();
  const auto& b = bytes.value();
  size_t offset = 0;
  if (ends_with(path, ".npy")) {
    std::vector<int64_t> shape;
    FACTZ_RETURN_IF_ERROR(parse_npy(b, path, shape, offset));
    const bool ok2 = shape.size() == 2 && shape[0] == ny && shape[1] == nx;
    const bool ok1 = shape.size() == 1 && uint64_t(shape[0]) == n;
    if (!ok2 && !ok1)
      return invalid_argument(path + ": .npy shape does not match (ny, nx) = (" + std::to_string(ny) +
                              ", " + std::to_string(nx) + ")");
  }
  const uint64_t have = b.size() - offset;
  if (have != n * 4) return size_error(have);
  std::vector<float> out(n);
  if (n > 0) std::memcpy(out.data(), b.data() + offset, n * 4);
  return out;
}

Status write_plane(const std::string& path, const std::vector<float>& data, int64_t nx, int64_t ny) {
  if (uint64_t(data.size()) != uint64_t(nx) * uint64_t(ny)) return invalid_argument("plane size mismatch");
  std::vector<uint8_t> out;
  if (ends_with(path, ".npy")) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(ny) + ", " +
                    std::to_string(nx) + "), }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string head("\x93NUMPY\x01\x00", 8);
    head += char(h.size() & 0xff);
    head += char(h.size() >> 8);
    head += h;
    out.assign(head.begin(), head.end());
  }
  const size_t off = out.size();
  out.resize(off + data.size() * 4);
  if (!data.empty()) std::memcpy(out.data() + off, data.data(), data.size() * 4);
  return write_bytes(path, out);
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
