// The reference for "same bytes as the C++ API": compresses raw float32 (or float64) planes
// with factz::compress and writes the stream, so that the C and Python tests compare against
// the C++ API itself. Usage:
//   factz_cpp_compress NX NY U V OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [DTYPE]
// MODE none|block|speculative, CODER huffman|ans, BOUND_MODE abs|rel, ZSTD 0|1, DTYPE f32
// (default: U and V hold float32 values) or f64 (float64 values: a VectorField2D64).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 12 && argc != 13) {
    std::fprintf(stderr, "usage: %s NX NY U V OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE [f32|f64]\n", argv[0]);
    return 2;
  }
  const bool f64 = argc == 13 && std::string(argv[12]) == "f64";
  const std::string mode = argv[6], coder = argv[7], bound = argv[8];
  factz::Options o;
  o.mode = mode == "none" ? factz::Mode::none : mode == "block" ? factz::Mode::block : factz::Mode::speculative;
  o.coder = coder == "ans" ? factz::Coder::ans : factz::Coder::huffman;
  o.bound_mode = bound == "abs" ? factz::BoundMode::abs : factz::BoundMode::rel;
  o.bound = std::strtod(argv[9], nullptr);
  o.zstd = std::string(argv[10]) == "1";
  o.anchor_stride = std::atoll(argv[11]);
  factz::Result<std::vector<uint8_t>> stream = factz::Status(factz::Code::io, "cannot read the planes");
  if (f64) {
    const auto f = read_field<factz::VectorField2D64>(argv);
    if (f.nx > 0) stream = factz::compress(f, o);
  } else {
    const auto f = read_field<factz::VectorField2D>(argv);
    if (f.nx > 0) stream = factz::compress(f, o);
  }
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.status().to_string().c_str());
    return 1;
  }
  std::ofstream out(argv[5], std::ios::binary);
  out.write(reinterpret_cast<const char*>(stream->data()), std::streamsize(stream->size()));
  return out ? 0 : 1;
}
