// Whole-field decompression with Huffman against ANS, in CPU time of one thread (robust on a
// shared machine): for each of modes block and speculative,
// compress with both coders, then decode REPEATS times alternating the coders and report the
// medians.
//   decode_bench NX NY [U V]     (without files: synthetic turbulence, seed 7)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_field.hpp"
#include "factz/factz.hpp"

namespace {

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: decode_bench NX NY [U V]\n");
    return 2;
  }
  const auto field = factz::bench::load_field(std::atoll(argv[1]), std::atoll(argv[2]), argc == 5 ? argv[3] : nullptr,
                                              argc == 5 ? argv[4] : nullptr);
  if (!field) return 1;
  const int repeats = field->size() < 1000000 ? 41 : 5;
  for (const factz::Mode mode : {factz::Mode::block, factz::Mode::speculative}) {
    std::vector<uint8_t> streams[2];
    const factz::Coder coders[2] = {factz::Coder::huffman, factz::Coder::ans};
    for (int c = 0; c < 2; ++c) {
      factz::Options o;
      o.mode = mode;
      o.coder = coders[c];
      o.policy = factz::Policy::serial;
      streams[c] = factz::compress(*field, o).value();
    }
    std::vector<float> u(size_t(field->size())), v(size_t(field->size()));
    std::vector<double> whole[2];
    for (int r = 0; r < repeats; ++r) {
      for (int c = 0; c < 2; ++c) {
        factz::DecompressOptions d;
        d.policy = factz::Policy::serial;
        const double t0 = cpu_seconds();
        if (!factz::decompress_into(streams[c], u, v, d).ok()) return 1;
        whole[c].push_back(cpu_seconds() - t0);
      }
    }
    for (int c = 0; c < 2; ++c) {
      std::printf("mode=%s coder=%s bytes=%zu whole_cpu_ms=%.3f\n", factz::mode_name(mode),
                  factz::coder_name(coders[c]), streams[c].size(), 1e3 * median(whole[c]));
    }
    std::printf("mode=%s ans/huffman: bytes %.3f whole-field decode time %.3f\n", factz::mode_name(mode),
                double(streams[1].size()) / double(streams[0].size()), median(whole[1]) / median(whole[0]));
  }
  return 0;
}
