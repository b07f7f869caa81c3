// factz h5filter: the parameters of the HDF5 filter (id 40410, hdf5/h5z_factz.cpp) for a
// compression setting, spelled for h5repack (-f UD=...), nccopy (-F VAR,40410,...) and h5py
// (compression=40410, compression_opts=...). The user's cd_values, as the filter reads them:
//   [0] mode: 0 none, 1 block, 2 speculative
//   [1] bound type: 0 ABS, 1 REL
//   [2] bound, low 32 bits of the IEEE float64     [3] bound, high 32 bits
//   [4] coder: 0 Huffman, 1 ANS
//   [5] exact edges (EdgeBits; written when given, or when [6] follows)
//   [6] declared fill value: the bits of an IEEE float32 (written with --fill)
// All five first values are always written, so the file does not depend on the plugin's
// defaults. The same values serve 2D vector, 3D vector and scalar datasets: the filter
// tells them apart by the dataset's shape (a component axis of length 2 third to last, or
// of length 3 fourth to last), not by a cd_values slot. The filter has no slot for the zstd stage (it always applies it) nor for the
// anchor stride (it uses the library's default).
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"

namespace {

using factz::cli::Args;
using factz::cli::Command;
using factz::cli::fail;

constexpr unsigned kFilterId = 40410;

const Command kSpec{
    "h5filter",
    "Print the HDF5 filter's parameters (filter 40410, cd_values) for a compression setting: the UD= string of "
    "h5repack -f, the filter spec of nccopy -F and h5py's compression_opts.",
    "factz h5filter [-M ABS|REL E] [--mode speculative|block|none] [--coder ans|huffman] [--zstd] [--fill V] "
    "[--exact-edges BITS] [--var NAME] [--h5repack | --nccopy | --json]",
    {{"-M", 2, "ABS|REL E", "error bound: ABS e or REL t (t times the chunk's value range); default REL 1e-2"},
     {"--mode", 1, "MODE",
      "speculative (default) | block | none (vector datasets); scalar datasets (no component axis) take none"},
     {"--coder", 1, "CODER", "ans (default) | huffman"},
     {"--zstd", 0, "", "the zstd lossless stage: the filter always applies it (accepted for symmetry with compress)"},
     {"--no-zstd", 0, "", "refused: the filter's cd_values have no slot to turn the zstd stage off"},
     {"--fill", 1, "V",
      "declare V (a float32; inf, -inf) as the fill value marking missing vertices, for data whose dataset has no "
      "fill value property (nccopy's copies)"},
     {"--exact-edges", 1, "BITS",
      "store the chunk's outer rows and columns exactly: bits 1 (x = 0), 2 (x = nx - 1), 4 (y = 0), 8 (y = ny - 1); "
      "15 for all four"},
     {"--var", 1, "NAME",
      "the variable of the nccopy spec (default uv); given, h5repack's string names the dataset too (NAME:UD=...)"},
     {"--h5repack", 0, "", "print only the argument of h5repack -f"},
     {"--nccopy", 0, "", "print only the argument of nccopy -F"},
     {"--json", 0, "", "print one JSON object on stdout"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

std::string joined(const std::vector<uint32_t>& v, const std::string& sep) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? sep : "") + std::to_string(v[k]);
  return s;
}

int run(const Args& a) {
  int outputs = 0;
  for (const char* flag : {"--h5repack", "--nccopy", "--json"}) outputs += a.has(flag);
  if (outputs > 1) fail("give one of --h5repack, --nccopy and --json", 2);
  if (a.has("--no-zstd"))
    fail("--no-zstd: the HDF5 filter always applies the zstd stage (its cd_values have no slot to turn it off)", 2);
  factz::BoundMode bound_mode = factz::BoundMode::rel;
  double bound = 1e-2;
  factz::cli::bound_of(a, bound_mode, bound);
  const std::string mode = a.get("--mode", "speculative");
  uint32_t mode_code = 2;
  if (mode == "none") mode_code = 0;
  else if (mode == "block") mode_code = 1;
  else if (mode == "contour-tree")
    fail("--mode contour-tree: the HDF5 filter compresses scalar datasets in mode none only", 2);
  else if (mode != "speculative") fail("--mode must be speculative, block or none, got '" + mode + "'", 2);
  factz::Coder coder = factz::Coder::ans;
  bool zstd = true;
  factz::cli::coder_of(a, coder, zstd);
  long long edges = 0;
  if (a.has("--exact-edges") &&
      (!factz::cli::to_int64(a.get("--exact-edges"), edges) || edges < 0 || edges > 15))
    fail("--exact-edges needs bits of 1, 2, 4, 8 (an integer in [0, 15]), got '" + a.get("--exact-edges") + "'", 2);
  const std::string var = a.get("--var", "uv");
  if (a.has("--var") && (var.empty() || var.find_first_of(",: \"\\'") != std::string::npos))
    fail("--var needs a variable name without ',', ':', quotes, backslashes or spaces, got '" + var + "'", 2);

  uint64_t bits = 0;
  std::memcpy(&bits, &bound, sizeof bits);
  std::vector<uint32_t> cd = {mode_code, bound_mode == factz::BoundMode::abs ? 0u : 1u, uint32_t(bits & 0xFFFFFFFFu),
                              uint32_t(bits >> 32), coder == factz::Coder::ans ? 1u : 0u};
  std::optional<float> fill = factz::cli::fill_of(a).u;
  if (a.has("--fill-u") || a.has("--fill-v")) fail("the filter takes one fill value for both components: --fill V", 2);
  if (a.has("--exact-edges") || fill) cd.push_back(uint32_t(edges));
  if (fill) {
    uint32_t f = 0;
    std::memcpy(&f, &*fill, sizeof f);
    cd.push_back(f);
  }
  std::string h5repack = a.has("--var") ? var + ":" : std::string();
  h5repack += "UD=" + std::to_string(kFilterId) + ",0," + std::to_string(cd.size()) + "," + joined(cd, ",");
  const std::string nccopy = var + "," + std::to_string(kFilterId) + "," + joined(cd, ",");
  const std::string h5py = "compression=" + std::to_string(kFilterId) + ", compression_opts=(" + joined(cd, ", ") +
                           (cd.size() == 1 ? ",)" : ")");
  if (a.has("--h5repack")) {
    std::cout << h5repack << "\n";
  } else if (a.has("--nccopy")) {
    std::cout << nccopy << "\n";
  } else if (a.has("--json")) {
    std::string values = "[";
    values += joined(cd, ", ");
    values += "]";
    factz::cli::StatsWriter s;
    s.count("filter_id", kFilterId).json("cd_values", values).text("mode", mode);
    s.text("bound_mode", bound_mode == factz::BoundMode::abs ? "ABS" : "REL").num("bound", bound);
    s.text("coder", factz::coder_name(coder)).count("exact_edges", edges);
    if (fill) s.num("fill", double(*fill));
    s.text("h5repack", h5repack).text("nccopy", nccopy);
    std::cout << s.object() << "\n";
  } else {
    std::cout << "h5repack -f " << h5repack << "\n"
              << "nccopy -F " << nccopy << "\n"
              << "h5py " << h5py << "\n";
  }
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kSpec, &run);

}  // namespace
