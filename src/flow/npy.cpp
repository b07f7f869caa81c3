// Minimal .npy reader/writer for float64 (and, on input, float32) C-order arrays of one or
// two dimensions (the NumPy format spec, versions 1.0-3.0).
#include <cstring>
#include <fstream>
#include <iterator>

#include "factz/flow.hpp"
#include "factz/io.hpp"

namespace factz::flow {

Result<NpyArray> parse_npy(std::span<const uint8_t> b) {
  // The header is parsed by the core's one .npy parser (factz/io.hpp): any key order and
  // spacing NumPy accepts, versions 1.0-3.0.
  auto parsed = parse_npy_header(b);
  if (!parsed.ok()) return parsed.status();
  const NpyHeader& h = parsed.value();
  // float64, or float32 widened on input; an error speaks of float64, what FaCTz-F writes.
  const int width = check_npy_float(h, 4, "npy").ok() ? 4 : 8;
  FACTZ_RETURN_IF_ERROR(check_npy_float(h, width, "npy"));
  if (h.shape.size() != 1 && h.shape.size() != 2)
    return invalid_argument("npy: shape must be (rows,) or (rows, cols), got " + std::to_string(h.shape.size()) +
                            " dimensions");
  NpyArray a;
  a.rows = h.shape[0];
  a.cols = h.shape.size() == 2 ? h.shape[1] : 1;
  if (a.rows > (int64_t(1) << 40) || a.cols > (int64_t(1) << 40)) return corrupt_stream("npy: shape too large");
  const size_t count = size_t(a.rows) * size_t(a.cols);
  const uint64_t have = b.size() - h.data_offset;
  if (a.cols > 0 && size_t(a.rows) > (have / size_t(a.cols))) return corrupt_stream("npy: data truncated");
  if (count * size_t(width) != have) return corrupt_stream("npy: data size does not match the shape");
  a.data.resize(count);
  const uint8_t* p = b.data() + h.data_offset;
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
