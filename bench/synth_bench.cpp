// synth_bench KIND NX NY SEED OUTPREFIX
//
// Writes a synthetic field as OUTPREFIX_u_NXxNY.f32 and OUTPREFIX_v_NXxNY.f32 (raw
// little-endian float32, x fastest) and prints the generation time and vertex count.
//
// KIND: turbulence[:PEAK_CYCLES] | turbulence_land[:PEAK_CYCLES] (turbulence with a 30%
// zero region from the same seed) | vortices[:COUNT] (default 64) | noise | linear (a
// saddle u = x - x0, v = -(y - y0) at the grid centre).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "synth.hpp"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: synth_bench KIND NX NY SEED OUTPREFIX\n"
               "  KIND: turbulence[:PEAK_CYCLES] | turbulence_land[:PEAK_CYCLES] |\n"
               "        vortices[:COUNT] | noise | linear\n");
}

bool parse_int(const char* text, int64_t& out) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0') return false;
  out = value;
  return true;
}

bool write_plane(const std::string& path, const std::vector<float>& plane) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  bool ok = true;
  if constexpr (std::endian::native == std::endian::little) {
    ok = std::fwrite(plane.data(), sizeof(float), plane.size(), file) == plane.size();
  } else {
    std::vector<uint32_t> chunk;
    for (size_t begin = 0; ok && begin < plane.size(); begin += (1u << 20)) {
      const size_t end = std::min(plane.size(), begin + (1u << 20));
      chunk.resize(end - begin);
      for (size_t i = begin; i < end; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &plane[i], sizeof(bits));
        chunk[i - begin] = __builtin_bswap32(bits);
      }
      ok = std::fwrite(chunk.data(), sizeof(uint32_t), chunk.size(), file) == chunk.size();
    }
  }
  return std::fclose(file) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nx = 0;
  int64_t ny = 0;
  int64_t seed = 0;
  if (argc != 6 || !parse_int(argv[2], nx) || !parse_int(argv[3], ny) ||
      !parse_int(argv[4], seed) || nx < 1 || ny < 1) {
    usage();
    return 2;
  }
  const std::string kind = argv[1];
  const std::string prefix = argv[5];

  // KIND[:PARAMETER]
  const size_t colon = kind.find(':');
  const std::string base = kind.substr(0, colon);
  double parameter = -1.0;  // absent
  if (colon != std::string::npos) {
    char* end = nullptr;
    parameter = std::strtod(kind.c_str() + colon + 1, &end);
    if (end == kind.c_str() + colon + 1 || *end != '\0' ||
        !(parameter >= 0.0 && parameter <= 1e6)) {
      usage();
      return 2;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  factz::VectorField2D field;
  const auto useed = static_cast<uint64_t>(seed);
  const double peak = parameter > 0.0 ? parameter : factz::synth::kTurbulencePeakCycles;
  if (base == "turbulence") {
    field = factz::synth::turbulence(nx, ny, useed, peak);
  } else if (base == "turbulence_land") {
    field = factz::synth::turbulence(nx, ny, useed, peak);
    factz::synth::add_zero_region(field, useed, 0.3);
  } else if (base == "vortices") {
    field =
        factz::synth::vortices(nx, ny, useed, parameter >= 0.0 ? static_cast<int>(parameter) : 64);
  } else if (base == "noise" && colon == std::string::npos) {
    field = factz::synth::noise(nx, ny, useed);
  } else if (base == "linear" && colon == std::string::npos) {
    const double x0 = 0.5 * static_cast<double>(nx - 1);
    const double y0 = 0.5 * static_cast<double>(ny - 1);
    field = factz::synth::linear(nx, ny, 1.0, 0.0, 0.0, -1.0, x0, y0);
  } else {
    usage();
    return 2;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string dims = std::to_string(nx) + "x" + std::to_string(ny) + ".f32";
  const std::string path_u = prefix + "_u_" + dims;
  const std::string path_v = prefix + "_v_" + dims;
  if (!write_plane(path_u, field.u) || !write_plane(path_v, field.v)) {
    std::fprintf(stderr, "synth_bench: cannot write %s / %s\n", path_u.c_str(), path_v.c_str());
    return 1;
  }
  std::printf("kind=%s nx=%lld ny=%lld vertices=%lld seconds=%.3f\n", kind.c_str(),
              static_cast<long long>(nx), static_cast<long long>(ny),
              static_cast<long long>(field.size()), seconds);
  std::printf("wrote %s %s\n", path_u.c_str(), path_v.c_str());
  return 0;
}
