#include "support/fields.hpp"

#include <cfloat>
#include <filesystem>
#include <map>
#include <regex>

#include "factz/io.hpp"
#include "synth.hpp"

namespace factz::testing {

std::vector<std::string> real_data_dirs() {
  std::vector<std::string> out;
  for (const char* d : {FACTZ_TEST_DATA_DIR, FACTZ_SHARED_DATA_DIR})
    if (std::filesystem::is_directory(d)) out.emplace_back(d);
  return out;
}

std::vector<NamedField> real_vector_fields() {
  std::map<std::string, NamedField> by_name;
  const std::regex pat(R"((.*)_u_(\d+)x(\d+)\.f32)");
  for (const std::string& d : real_data_dirs()) {
    const std::filesystem::path dir(d);
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (!std::regex_match(name, m, pat) || by_name.count(m[1].str())) continue;
      const std::string v = (dir / (m[1].str() + "_v_" + m[2].str() + "x" + m[3].str() + ".f32")).string();
      auto f = read_vector_field(e.path().string(), v, std::stoll(m[2].str()), std::stoll(m[3].str()));
      if (f.ok()) by_name[m[1].str()] = {m[1].str(), std::move(f.value())};
    }
  }
  std::vector<NamedField> out;
  for (auto& [name, f] : by_name) out.push_back(std::move(f));
  return out;
}

std::vector<NamedField> synthetic_fields() {
  std::vector<NamedField> out;
  out.push_back({"turbulence_128", synth::turbulence(128, 128, 1)});
  out.push_back({"turbulence_97x61", synth::turbulence(97, 61, 2)});
  out.push_back({"vortices_100x80", synth::vortices(100, 80, 3, 12)});
  out.push_back({"noise_64", synth::noise(64, 64, 4)});
  auto land = synth::turbulence(120, 90, 5);
  synth::add_zero_region(land, 6, 0.3);
  out.push_back({"turbulence_land_120x90", std::move(land)});
  auto vl = synth::vortices(70, 70, 7, 6);
  synth::add_zero_region(vl, 8, 0.5);
  out.push_back({"vortices_land_70", std::move(vl)});
  return out;
}

namespace {

VectorField2D filled(int64_t nx, int64_t ny, float u, float v) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  f.u.assign(size_t(nx * ny), u);
  f.v.assign(size_t(nx * ny), v);
  return f;
}

}  // namespace

std::vector<NamedField> degenerate_fields() {
  std::vector<NamedField> out;
  out.push_back({"1x1", filled(1, 1, 0.5f, -2.0f)});
  out.push_back({"1x1_zero", filled(1, 1, 0.0f, 0.0f)});
  out.push_back({"1x40", synth::turbulence(1, 40, 9)});
  out.push_back({"40x1", synth::turbulence(40, 1, 10)});
  out.push_back({"2x2", synth::noise(2, 2, 11)});
  out.push_back({"33x17", synth::turbulence(33, 17, 12)});
  out.push_back({"2x3_noise", synth::noise(2, 3, 13)});
  out.push_back({"constant", filled(50, 40, 1.25f, -3.5f)});
  out.push_back({"zeros", filled(45, 37, 0.0f, 0.0f)});
  // Small integers: many exact ties and zero vectors.
  auto ties = synth::noise(41, 29, 14);
  for (auto* p : {&ties.u, &ties.v})
    for (float& x : *p) x = float(int(x * 2.5f));
  out.push_back({"small_integer_ties", std::move(ties)});
  auto huge = synth::turbulence(40, 40, 15);
  for (auto* p : {&huge.u, &huge.v})
    for (float& x : *p) x *= 1e37f;
  out.push_back({"near_float_max", std::move(huge)});
  auto tiny = synth::turbulence(40, 40, 16);
  for (auto* p : {&tiny.u, &tiny.v})
    for (float& x : *p) x *= 1e-40f;  // subnormal
  out.push_back({"subnormal", std::move(tiny)});
  return out;
}

}  // namespace factz::testing
