// The reference for "same bytes as the C++ API": compresses raw float32 (or float64) planes
// with factz::compress and writes the stream, so that the C and Python tests compare against
// the C++ API itself. Usage:
//   factz_cpp_compress NX NY U V OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [DTYPE]
//   factz_cpp_compress 3d NX NY NZ U V W OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [DTYPE]
// MODE none|block|speculative, CODER huffman|ans, BOUND_MODE abs|rel, ZSTD 0|1, DTYPE f32
// (default: U and V hold float32 values) or f64 (float64 values: a VectorField2D64). The
// second form compresses a 3D field: a VectorField3D (f32, the default) or a VectorField3D64
// (f64), factz/compress3d.hpp.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/factz.hpp"

namespace {

template <class T>
bool read_plane(const char* path, size_t n, std::vector<T>& out) {
  std::ifstream in(path, std::ios::binary);
  out.resize(n);
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n * sizeof(T)));
  return bool(in) && in.gcount() == std::streamsize(n * sizeof(T));
}

/// The field of the U and V files, or an empty field when they cannot be read.
template <class Field>
Field read_field(char** argv) {
  Field f;
  f.nx = std::atoll(argv[1]);
  f.ny = std::atoll(argv[2]);
  const size_t n = size_t(f.size());
  if (f.nx < 1 || f.ny < 1 || !read_plane(argv[3], n, f.u) || !read_plane(argv[4], n, f.v)) f.nx = f.ny = 0;
  return f;
}

/// The options of argv[first ...]: MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE.
factz::Options options_of(char** argv, int first) {
  const std::string mode = argv[first], coder = argv[first + 1], bound = argv[first + 2];
  factz::Options o;
  o.mode = mode == "none" ? factz::Mode::none : mode == "block" ? factz::Mode::block : factz::Mode::speculative;
  o.coder = coder == "ans" ? factz::Coder::ans : factz::Coder::huffman;
  o.bound_mode = bound == "abs" ? factz::BoundMode::abs : factz::BoundMode::rel;
  o.bound = std::strtod(argv[first + 3], nullptr);
  o.zstd = std::string(argv[first + 4]) == "1";
  o.anchor_stride = std::atoll(argv[first + 5]);
  return o;
}

int write_stream(const factz::Result<std::vector<uint8_t>>& stream, const char* path) {
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.status().to_string().c_str());
    return 1;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(stream->data()), std::streamsize(stream->size()));
  return out ? 0 : 1;
}

/// The second form: 3d NX NY NZ U V W OUT and the options; Field is VectorField3D or
/// VectorField3D64.
template <class Field>
int compress3d(char** argv) {
  Field f;
  f.nx = std::atoll(argv[2]);
  f.ny = std::atoll(argv[3]);
  f.nz = std::atoll(argv[4]);
  const size_t n = size_t(f.size());
  if (f.nx < 1 || f.ny < 1 || f.nz < 1 || !read_plane(argv[5], n, f.u) || !read_plane(argv[6], n, f.v) ||
      !read_plane(argv[7], n, f.w))
    return write_stream(factz::Status(factz::Code::io, "cannot read the planes"), argv[8]);
  return write_stream(factz::compress(f, options_of(argv, 9)), argv[8]);
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 15 || argc == 16) && std::string(argv[1]) == "3d")
    return argc == 16 && std::string(argv[15]) == "f64" ? compress3d<factz::VectorField3D64>(argv)
                                                        : compress3d<factz::VectorField3D>(argv);
  if (argc != 12 && argc != 13) {
    std::fprintf(stderr,
                 "usage: %s NX NY U V OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [f32|f64]\n"
                 "       %s 3d NX NY NZ U V W OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [f32|f64]\n",
                 argv[0], argv[0]);
    return 2;
  }
  const bool f64 = argc == 13 && std::string(argv[12]) == "f64";
  const factz::Options o = options_of(argv, 6);
  factz::Result<std::vector<uint8_t>> stream = factz::Status(factz::Code::io, "cannot read the planes");
  if (f64) {
    const auto f = read_field<factz::VectorField2D64>(argv);
    if (f.nx > 0) stream = factz::compress(f, o);
  } else {
    const auto f = read_field<factz::VectorField2D>(argv);
    if (f.nx > 0) stream = factz::compress(f, o);
  }
  return write_stream(stream, argv[5]);
}
