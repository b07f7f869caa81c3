// dt_synth NX NY SEED OUTPREFIX [--grid M] [--peak K0] [--turnovers T] [--nu NU]
//
// Synthetic 2D decaying turbulence (see turbulence.hpp for the model) written as
// OUTPREFIX_u_NXxNY.f32 and OUTPREFIX_v_NXxNY.f32 (raw little-endian float32, x fastest),
// e.g. `dt_synth 10000 10000 10 data/dt10k` for a DT-10K analog. Prints the settings,
// the number of steps, the critical point count and the time; progress on stderr.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "turbulence.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "dt_synth: %s\nusage: dt_synth NX NY SEED OUTPREFIX [--grid M] [--peak K0] [--turnovers T] [--nu NU] "
               "[--no-count]\n",
               why);
  return 2;
}

bool to_num(const char* s, double& out) {
  char* end = nullptr;
  out = std::strtod(s, &end);
  return end != s && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) return usage("need NX NY SEED OUTPREFIX");
  double nx = 0, ny = 0, seed = 0;
  if (!to_num(argv[1], nx) || !to_num(argv[2], ny) || !to_num(argv[3], seed) || nx < 2 || ny < 2 || seed < 0 ||
      nx != double(int64_t(nx)) || ny != double(int64_t(ny)) || seed != double(uint64_t(seed)))
    return usage("NX, NY must be integers >= 2 and SEED an integer >= 0");
  factz::eval::TurbulenceSpec spec;
  spec.nx = int64_t(nx);
  spec.ny = int64_t(ny);
  spec.seed = uint64_t(seed);
  const std::string prefix = argv[4];
  bool count = true;
  for (int k = 5; k < argc; ++k) {
    const std::string flag = argv[k];
    if (flag == "--no-count") {
      count = false;
      continue;
    }
    double value = 0;
    if (k + 1 >= argc || !to_num(argv[k + 1], value)) return usage(("bad or missing value for " + flag).c_str());
    ++k;
    if (flag == "--grid") spec.grid = int64_t(value);
    else if (flag == "--peak") spec.peak = value;
    else if (flag == "--turnovers") spec.turnovers = value;
    else if (flag == "--nu") spec.nu = value;
    else return usage(("unknown option " + flag).c_str());
  }
  const auto t0 = std::chrono::steady_clock::now();
  factz::eval::TurbulenceInfo info;
  auto f = factz::eval::decaying_turbulence(spec, &info, [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); });
  if (!f.ok()) {
    std::fprintf(stderr, "dt_synth: %s\n", f.status().to_string().c_str());
    return 1;
  }
  const double gen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string dims = std::to_string(spec.nx) + "x" + std::to_string(spec.ny);
  for (int c = 0; c < 2; ++c) {
    const std::string path = prefix + (c == 0 ? "_u_" : "_v_") + dims + ".f32";
    auto st = factz::write_plane(path, c == 0 ? f->u : f->v, spec.nx, spec.ny);
    if (!st.ok()) {
      std::fprintf(stderr, "dt_synth: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  std::printf("dt_synth %s seed %llu: simulation grid %lld, peak k0 %.3g, nu %.3g, %lld steps to t = %.4g; %.2f s\n",
              dims.c_str(), static_cast<unsigned long long>(spec.seed), static_cast<long long>(info.grid), info.peak,
              info.nu, static_cast<long long>(info.steps), info.time, gen);
  if (count) {
    auto sig = factz::signatures(f.value());
    if (sig.ok()) {
      long long n = 0;
      for (uint8_t s : sig.value()) n += s != 0;
      std::printf("critical points: %lld\n", n);
    }
  }
  return 0;
}
