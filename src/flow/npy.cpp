// Minimal .npy reader/writer for float64 (and, on input, float32) C-order arrays of one or
// two dimensions (the NumPy format spec, versions 1.0-3.0).
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

#include "factz/flow.hpp"

namespace factz::flow {

Result<NpyArray> parse_npy(std::span<const uint8_t> b) {
  const auto bad = [](const std::string& m) { return corrupt_stream("npy: " + m); };
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) return bad("not an .npy file");
  const int major = b[6];
  size_t hlen, start;
  if (major == 1) {
    hlen = size_t(b[8]) | size_t(b[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return bad("truncated header");
    hlen = size_t(b[8]) | size_t(b[9]) << 8 | size_t(b[10]) << 16 | size_t(b[11]) << 24;
    start = 12;
  } else {
    return Status(Code::unsupported_version, "npy: format version " + std::to_string(major));
  }
  if (hlen > b.size() - start) return bad("truncated header");
  const std::string h(b.begin() + int64_t(start), b.begin() + int64_t(start + hlen));
  std::smatch m;
  if (!std::regex_search(h, m, std::regex("'descr'\\s*:\\s*'([^']*)'"))) return bad("no descr");
  const std::string descr = m[1];
  int width;
  if (descr == "<f8" || descr == "f8") width = 8;
  else if (descr == "<f4" || descr == "f4") width = 4;
  else return invalid_argument("npy: dtype " + descr + " unsupported (need little-endian float64)");
  if (std::regex_search(h, std::regex("'fortran_order'\\s*:\\s*True"))) return invalid_argument("npy: Fortran order unsupported");
  if (!std::regex_search(h, m, std::regex("'shape'\\s*:\\s*\\(\\s*([0-9]+)\\s*,?\\s*([0-9]*)\\s*,?\\s*\\)")))
    return invalid_argument("npy: shape must be (rows,) or (rows, cols)");
  NpyArray a;
  const std::string r = m[1], c = m[2];
  if (r.size() > 12 || c.size() > 12) return bad("shape too large");
  a.rows = std::stoll(r);
  a.cols = c.empty() ? 1 : std::stoll(c);
  const size_t count = size_t(a.rows) * size_t(a.cols);
  if (a.cols > 0 && size_t(a.rows) > (b.size() / size_t(a.cols))) return bad("data truncated");
  if (count * size_t(width) != b.size() - start - hlen) return bad("data size does not match the shape");
  a.data.resize(count);
  const uint8_t* p = b.data() + start + hlen;
  for (size_t i = 0; i < count; ++i) {
    if (width == 8) {
      std::memcpy(&a.data[i], p + 8 * i, 8);
    } else {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      a.data[i] = f;
    }
  }
  return a;
}

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return io_error("cannot open " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto r = parse_npy(bytes);
  if (!r.ok()) return Status(r.status().code(), path + ": " + r.status().message());
  return r;
}

Status write_npy(const std::string& path, int64_t rows, int64_t cols, std::span<const double> data) {
  if (rows < 0 || cols < 1 || size_t(rows * cols) != data.size()) return invalid_argument("npy: shape does not match data");
  std::string h = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                  std::to_string(cols) + "), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return io_error("cannot write " + path);
  const char head[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, char(h.size() & 0xff), char(h.size() >> 8)};
  f.write(head, 10);
  f.write(h.data(), int64_t(h.size()));
  f.write(reinterpret_cast<const char*>(data.data()), int64_t(data.size() * 8));
  if (!f) return io_error("write failed: " + path);
  return Status::Ok();
}

}  // namespace factz::flow
