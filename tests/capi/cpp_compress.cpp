// The reference for "same bytes as the C++ API": compresses raw float32 planes with
// factz::compress and writes the stream, so that the C and Python tests compare against the
// C++ API itself. Usage:
//   factz_cpp_compress NX NY U.f32 V.f32 OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE
// MODE none|block|speculative, CODER huffman|ans, BOUND_MODE abs|rel, ZSTD 0|1.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "factz/factz.hpp"

namespace {

bool read_plane(const char* path, size_t n, std::vector<float>& out) {
  std::ifstream in(path, std::ios::binary);
  out.resize(n);
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n * sizeof(float)));
  return bool(in) && in.gcount() == std::streamsize(n * sizeof(float));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 12) {
    std::fprintf(stderr, "usage: %s NX NY U V OUT MODE CODER BOUND_MODE BOUND ZSTD ANCHOR_STRIDE\n", argv[0]);
    return 2;
  }
  factz::VectorField2D f;
  f.nx = std::atoll(argv[1]);
  f.ny = std::atoll(argv[2]);
  if (f.nx < 1 || f.ny < 1 || !read_plane(argv[3], size_t(f.size()), f.u) || !read_plane(argv[4], size_t(f.size()), f.v)) {
    std::fprintf(stderr, "cannot read %lldx%lld planes\n", static_cast<long long>(f.nx), static_cast<long long>(f.ny));
    return 1;
  }
  const std::string mode = argv[6], coder = argv[7], bound = argv[8];
  factz::Options o;
  o.mode = mode == "none" ? factz::Mode::none : mode == "block" ? factz::Mode::block : factz::Mode::speculative;
  o.coder = coder == "ans" ? factz::Coder::ans : factz::Coder::huffman;
  o.bound_mode = bound == "abs" ? factz::BoundMode::abs : factz::BoundMode::rel;
  o.bound = std::strtod(argv[9], nullptr);
  o.zstd = std::string(argv[10]) == "1";
  o.anchor_stride = std::atoll(argv[11]);
  auto stream = factz::compress(f, o);
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.status().to_string().c_str());
    return 1;
  }
  std::ofstream out(argv[5], std::ios::binary);
  out.write(reinterpret_cast<const char*>(stream->data()), std::streamsize(stream->size()));
  return out ? 0 : 1;
}
