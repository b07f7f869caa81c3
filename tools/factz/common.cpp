#include "common.hpp"
#include "field_files.hpp"

#include "factz/io.hpp"
#include "io/temp_files.hpp"
#include "io/variable/variable_io.hpp"

#include <cstdlib>
#include <optional>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace factz::cli {

void fail(const std::string& m, int code) { throw Failure{code, m}; }

void check(const factz::Status& s) {
  if (!s.ok()) fail(s.to_string());
}

void dims(const Args& a, int64_t& nx, int64_t& ny) {
  if (!a.has("-2")) fail("missing -2 NX NY", 2);
  const auto& d = a.all("-2").back();
  long long x = 0, y = 0;
  if (!to_int64(d[0], x) || !to_int64(d[1], y) || x <= 0 || y <= 0)
    fail("-2 needs two positive integers, got '" + d[0] + " " + d[1] + "'", 2);
  nx = x;
  ny = y;
}

std::pair<std::string, std::string> two_files(const Args& a, const std::string& flag) {
  const auto& v = a.all(flag);
  if (v.size() != 2) {
    // Three files without -3: a 3D vector field, which needs its grid even from .npy files.
    std::string hint;
    if (v.size() == 3 && !a.has("-3")) hint = "; a 3D vector field takes -3 NX NY NZ and " + flag + " three times (u, v, w)";
    if (v.size() == 1 && flag == "-i") hint = "; one -i is a scalar field (compress --scalar or -3 NX NY NZ; factz ct)";
    fail("give " + flag + " exactly twice (u then v), got " + std::to_string(v.size()) + hint, 2);
  }
  return {v[0][0], v[1][0]};
}

namespace {

/// What a command-line path names, for telling whether two paths are one file.
struct FileId {
  enum class Kind { stdio, device, inode, path } kind = Kind::path;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string path;  ///< normalized absolute path (kind path)
  bool same(const FileId& o) const {
    if (kind != o.kind || kind == Kind::device) return false;
    if (kind == Kind::stdio) return true;
    if (kind == Kind::inode) return dev == o.dev && ino == o.ino;
    return path == o.path;
  }
};

FileId file_id(const std::string& p) {
  namespace fs = std::filesystem;
  FileId id;
  if (p == "-") {
    id.kind = FileId::Kind::stdio;
    return id;
  }
  struct stat st;
  if (::stat(p.c_str(), &st) == 0) {  // follows links: a link to an input is the input
    id.kind = S_ISCHR(st.st_mode) ? FileId::Kind::device : FileId::Kind::inode;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  // Not there yet: the file a dangling link would create, then the normalized path.
  std::error_code ec;
  fs::path q = fs::absolute(p, ec);
  if (ec) q = p;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(q, ec)); ++hops) {
    const fs::path target = fs::read_symlink(q, ec);
    if (ec) break;
    q = target.is_absolute() ? target : q.parent_path() / target;
  }
  const fs::path n = fs::weakly_canonical(q, ec);
  id.path = (ec ? q.lexically_normal() : n).string();
  return id;
}

std::string named(const PathArg& p) { return p.flag + " " + p.path; }

}  // namespace

std::vector<PathArg> path_args(const Args& a, std::initializer_list<const char*> flags) {
  std::vector<PathArg> out;
  for (const char* f : flags)
    for (const auto& occurrence : a.all(f))
      if (!occurrence.empty()) out.push_back({f, occurrence[0]});
  return out;
}

namespace {

/// The file a name writes or reads, and the variable in it ("" for a plain file): outputs
/// FILE.nc:U and FILE.nc:V are two variables of one file, not one file named twice.
std::pair<std::string, std::string> file_and_variable(const std::string& name, bool output) {
  auto spec = variable_io::parse_variable_spec(name, output);
  if (!spec.ok() || !spec->has_value()) return {name, ""};
  return {spec.value()->file, spec.value()->variable};
}

}  // namespace

void refuse_clobbering(const std::vector<PathArg>& inputs, const std::vector<PathArg>& outputs, bool replace_files) {
  std::vector<FileId> in_ids, out_ids;
  std::vector<std::string> out_files, out_variables;
  for (const auto& p : inputs) in_ids.push_back(file_id(file_and_variable(p.path, false).first));
  for (const auto& p : outputs) {
    const auto [file, variable] = file_and_variable(p.path, true);
    out_ids.push_back(file_id(file));
    out_files.push_back(file);
    out_variables.push_back(variable);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const PathArg& out = outputs[o];
    if (out_ids[o].kind == FileId::Kind::stdio) {
      for (size_t k = 0; k < o; ++k)
        if (out_ids[k].kind == FileId::Kind::stdio)
          fail("only one output can go to stdout ('-' given for " + outputs[k].flag + " and " + out.flag + ")", 2);
      continue;  // stdout is not stdin
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (out_ids[o].same(in_ids[i]))
        fail("output " + named(out) + " is the input " + named(inputs[i]) +
                 (out.path == inputs[i].path ? "" : " (the same file)") + ": refusing to overwrite an input",
             2);
    for (size_t k = 0; k < o; ++k) {
      if (!out_ids[o].same(out_ids[k])) continue;
      // Two variables of one netCDF / HDF5 file are written together.
      if (!out_variables[o].empty() && !out_variables[k].empty() && out_variables[o] != out_variables[k]) continue;
      if (out.path == outputs[k].path)
        fail("output " + (out.flag == outputs[k].flag ? named(out) : out.path) + " is named twice" +
                 (out.flag == outputs[k].flag ? "" : " (" + outputs[k].flag + " and " + out.flag + ")") +
                 ": give each output its own file",
             2);
      fail("outputs " + named(outputs[k]) + " and " + named(out) +
               " are the same file: give each output its own file (or each variable its own name)",
           2);
    }
  }
  // A read-only output is refused before anything is written (the writers refuse it too), so
  // that no output of the run is replaced when another cannot be.
  for (size_t o = 0; o < outputs.size(); ++o)
    if (out_ids[o].kind != FileId::Kind::stdio && !factz::temp_files::special_path(out_files[o]) &&
        factz::temp_files::read_only_file(out_files[o]))
      fail("io: cannot write " + named(outputs[o]) + ": " + factz::temp_files::kReadOnlyReason);
  // FILE.nc:VAR replaces FILE, it does not add VAR to it: an existing file's contents would go.
  if (replace_files) return;
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (out_variables[o].empty()) continue;
    const std::string& file = out_files[o];
    struct stat st;
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) continue;
    const auto kind = variable_io::sniff_file(file);
    fail("output " + named(outputs[o]) + ": " + file + " exists (" +
             (kind ? variable_io::variables_hint(file, *kind) : std::string("not a netCDF or HDF5 file")) +
             "); a netCDF / HDF5 output writes a whole new file, which would replace it: give another file, or "
             "--replace to replace it",
         2);
  }
}

void refuse_clobbering(const Args& a, std::initializer_list<const char*> input_flags,
                       std::initializer_list<const char*> output_flags) {
  refuse_clobbering(path_args(a, input_flags), path_args(a, output_flags), a.has("--replace"));
}

int device_of(const Args& a) {
  const std::string x = a.get("-x", "omp");
  if (x == "cuda") return factz::kDeviceAuto;
  if (x.rfind("cuda:", 0) != 0) return 0;
  long long d = 0;
  if (!to_int64(x.substr(5), d) || d < 0 || d > 1 << 20)
    fail("-x cuda:N needs a device number N >= 0, got '" + x + "'", 2);
  return int(d);
}

factz::Exec exec_of(const Args& a, factz::Policy* policy, bool allow_cuda) {
  const std::string x = a.get("-x", "omp");
  factz::Exec e;
  if (x == "serial") {
    e.threads = 1;
    if (policy) *policy = factz::Policy::serial;
    return e;
  }
  if (policy) *policy = factz::Policy::omp;
  if (x == "omp") return e;
  long long t = 0;
  if (x.rfind("omp=", 0) == 0 && to_int64(x.substr(4), t) && t > 0 && t <= 1024) {
    e.threads = int(t);
    return e;
  }
  if (x == "cuda" || x.rfind("cuda:", 0) == 0) {
    if (!allow_cuda) fail("-x cuda applies to vector fields (compress, decompress) only", 2);
    device_of(a);  // a bad ordinal is a usage error
    if (policy) *policy = factz::Policy::cuda;
    // One host thread drives the device (the library ignores threads for the GPU), so the
    // multi-block drivers hand every block to the device in turn rather than to CPU threads.
    e.threads = 1;
    return e;
  }
  fail("-x must be serial, omp, omp=T, cuda or cuda:N, got '" + x + "'", 2);
}

void bound_of(const Args& a, factz::BoundMode& mode, double& bound) {
  if (!a.has("-M")) return;
  const auto& m = a.all("-M").back();
  if (m[0] == "ABS" || m[0] == "abs") mode = factz::BoundMode::abs;
  else if (m[0] == "REL" || m[0] == "rel") mode = factz::BoundMode::rel;
  else fail("-M must be ABS or REL, got '" + m[0] + "'", 2);
  if (!to_double(m[1], bound) || !(bound >= 0) || bound > 1e308)
    fail("-M needs a finite bound >= 0, got '" + m[1] + "'", 2);
}

void coder_of(const Args& a, factz::Coder& coder, bool& zstd, bool scalar) {
  const std::string name = a.get("--coder", scalar ? "smallest" : "ans");
  if (name == "huffman") coder = factz::Coder::huffman;
  else if (name == "ans") coder = factz::Coder::ans;
  else if (name == "smallest" && scalar) coder = factz::Coder::smallest;
  else if (name == "context" && scalar) coder = factz::Coder::context;
  else if (name == "smallest" || name == "context")
    fail("--coder " + name + " applies to scalar fields only; choose ans or huffman", 2);
  else fail(std::string("--coder must be ") + (scalar ? "smallest, ans, huffman or context" : "ans or huffman") +
                ", got '" + name + "'", 2);
  if (a.has("--zstd") && a.has("--no-zstd")) fail("--zstd and --no-zstd exclude each other", 2);
  zstd = !a.has("--no-zstd");
}

factz::Options vector_compress_options(const Args& a, bool allow_cuda) {
  factz::Options o;
  o.threads = exec_of(a, &o.policy, allow_cuda).threads;
  o.device = device_of(a);
  bound_of(a, o.bound_mode, o.bound);
  const std::string mode = a.get("--mode", "speculative");
  if (mode == "block") o.mode = factz::Mode::block;
  else if (mode == "none") o.mode = factz::Mode::none;
  else if (mode == "speculative") o.mode = factz::Mode::speculative;
  else fail("--mode must be speculative, block or none (contour-tree: scalar fields), got '" + mode + "'", 2);
  if (a.has("--anchor-stride")) {
    long long s = 0;
    if (mode != "speculative") fail("--anchor-stride applies to --mode speculative only", 2);
    if (!to_int64(a.get("--anchor-stride"), s) || s < 2 || s > 4096 || (s & (s - 1)) != 0)
      fail("--anchor-stride must be a power of two in [2, 4096], got '" + a.get("--anchor-stride") + "'", 2);
    o.anchor_stride = s;
  }
  coder_of(a, o.coder, o.zstd);
  return o;
}

factz::DecompressOptions vector_decompress_options(const Args& a) {
  factz::DecompressOptions d;
  d.threads = exec_of(a, &d.policy, true).threads;
  d.device = device_of(a);
  return d;
}

std::string json_number(double x) {
  if (std::isinf(x)) return x > 0 ? "1e999" : "-1e999";  // JSON has no inf; 1e999 parses as inf
  if (std::isnan(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

void add_comparison(StatsWriter& s, const factz::Comparison& c) {
  using In = StatsWriter::In;
  s.count("cp_original", c.cp_original).count("cp_decompressed", c.cp_decompressed).count("lost", c.lost);
  s.count("spurious", c.spurious).count("type_changed", c.type_changed).count("mask_mismatch", c.mask_mismatch);
  s.count("violations", c.violations()).count("masked_vertices", c.masked_vertices);
  std::string pair = "[";  // built by appending: GCC 12 warns (-Wrestrict) on "[" + std::string
  pair += json_number(c.max_abs_error[0]);
  pair += ", ";
  pair += json_number(c.max_abs_error[1]);
  s.json("max_abs_error", pair + "]");
  s.num("max_abs_error_u", c.max_abs_error[0], In::text).num("max_abs_error_v", c.max_abs_error[1], In::text);
  s.num("rmse", c.rmse).num("nrmse", c.nrmse).num("psnr", c.psnr);
}

OptionSpec fill_option() {
  return {"--fill", 1, "V",
          "the fill value marking missing vertices in both components (netCDF _FillValue / missing_value, e.g. "
          "1e20, -9999, inf); NaN always marks a vertex missing. Missing vertices are stored bit for bit, outside "
          "the error bound and the mesh. Replaces a netCDF/HDF5 variable's own _FillValue / missing_value (--fill nan: "
          "only NaN marks missing data)"};
}
OptionSpec fill_u_option() {
  return {"--fill-u", 1, "V", "the fill value of u only (overrides --fill and the u variable's own for u)"};
}
OptionSpec fill_v_option() {
  return {"--fill-v", 1, "V", "the fill value of v only (overrides --fill and the v variable's own for v)"};
}

factz::FillValues fill_of(const Args& a) {
  auto value = [&](const char* flag) -> std::optional<float> {
    const std::string s = a.get(flag);
    double d = 0;
    if (s == "nan" || s == "NaN") return std::nanf("");
    if (s == "inf" || s == "+inf" || s == "Inf") return std::numeric_limits<float>::infinity();
    if (s == "-inf" || s == "-Inf") return -std::numeric_limits<float>::infinity();
    if (!to_double(s, d)) fail(std::string(flag) + " needs a number (or inf, -inf, nan), got '" + s + "'", 2);
    const float f = float(d);
    if (!std::isfinite(f)) fail(std::string(flag) + " " + s + " is beyond float32", 2);
    return f;
  };
  factz::FillValues fill;
  if (a.has("--fill")) fill.u = fill.v = value("--fill");
  if (a.has("--fill-u")) fill.u = value("--fill-u");
  if (a.has("--fill-v")) fill.v = value("--fill-v");
  return fill;
}

namespace {

/// The shortest text of x that reads back as x, in T (float: 6-9 digits, double: up to 17).
template <class T>
std::string shortest_text(T x) {
  char text[64];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, double(x));
    if (std::is_same_v<T, float> ? std::strtof(text, nullptr) == float(x) : std::strtod(text, nullptr) == double(x))
      break;
  }
  return text;
}

template <class Field>
void warn_suspected_fill_any(const Field& f, const std::string& command) {
  auto suspect = factz::suspected_fill_value(f);
  if (!suspect) return;
  const std::string value = shortest_text(suspect->value);
  // A 3D field takes one fill value for its three components (--fill only).
  constexpr bool three = std::is_same_v<Field, factz::VectorField3D> || std::is_same_v<Field, factz::VectorField3D64>;
  const char* per_component = three ? "" : " (or --fill-u/--fill-v)";
  std::fprintf(stderr,
               "factz %s: warning: %lld value(s) equal %s, which looks like a fill value for missing data; "
               "if it is one, declare it with --fill %s%s, else it is compressed as data\n",
               command.c_str(), (long long)suspect->count, value.c_str(), value.c_str(), per_component);
}

}  // namespace

void warn_suspected_fill(const factz::VectorField2D& f, const std::string& command) {
  warn_suspected_fill_any(f, command);
}
void warn_suspected_fill(const factz::VectorField2D64& f, const std::string& command) {
  warn_suspected_fill_any(f, command);
}
void warn_suspected_fill(const factz::VectorField3D& f, const std::string& command) {
  warn_suspected_fill_any(f, command);
}
void warn_suspected_fill(const factz::VectorField3D64& f, const std::string& command) {
  warn_suspected_fill_any(f, command);
}

factz::ProgressHook compress_progress(const Args& a) {
  const bool asked = a.has("--progress");
  if (!asked && !isatty(STDERR_FILENO)) return {};
  const auto t0 = std::chrono::steady_clock::now();
  return [asked, t0](const factz::Progress& p) {
    if (!asked && seconds_since(t0) < 1.0) return;
    std::fprintf(stderr, "factz: compress: %.*s done, %.0f %%\n", int(p.stage.size()), p.stage.data(),
                 100.0 * p.fraction);
  };
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- float64 fields -------------------------------------------------------------------------

OptionSpec dtype_option() {
  return {"--dtype", 1, "f32|f64",
          "value type of raw input files: f32 (little-endian float32, the default) or f64 (little-endian float64: a "
          "float64 stream, decompressed as float64); .npy files give their own ('<f4' or '<f8')"};
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The dtype string of a .npy file named on the command line, or "" for anything else (a
/// raw file, stdin, a file that is not .npy): only the first bytes are read.
std::string npy_descr(const std::string& path) {
  if (path == "-" || !ends_with(path, ".npy")) return "";
  // Regular files only: a pipe or FIFO cannot be read twice (its reader takes it as float32).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return "";
  std::vector<uint8_t> head(4096);
  head.resize(std::fread(head.data(), 1, head.size(), file));
  std::fclose(file);
  auto h = factz::parse_npy_header(head);
  return h.ok() ? h->descr : "";
}

// A float64 dtype in any byte order: a big-endian one goes to the float64 reader, whose error
// names it as such (check_npy_float), not to the float32 reader's "'>f8' is not float32".
bool float64_descr(const std::string& d) { return d.size() == 3 && d[1] == 'f' && d[2] == '8'; }

/// The value type a file gives by itself. A variable whose metadata cannot be read is
/// `unknown` (its reader says why when the field is read).
enum class GivenType { raw, unknown, float32, float64 };

GivenType given_type(const std::string& name) {
  auto spec = variable_io::parse_variable_spec(name, false);
  if (!spec.ok()) return GivenType::unknown;
  if (spec->has_value()) {
    // Its type, without its values: as a 2D field, else as a 3D one (a 3D vector component or
    // scalar field whose leading dimensions leave three unsliced).
    auto data = variable_io::read_variable(**spec, 2, false);
    if (!data.ok()) data = variable_io::read_variable(**spec, 3, false);
    if (!data.ok()) return GivenType::unknown;
    return data->dtype == variable_io::DType::float64 ? GivenType::float64 : GivenType::float32;
  }
  const std::string d = npy_descr(name);
  if (d.empty()) return GivenType::raw;
  return float64_descr(d) ? GivenType::float64 : GivenType::float32;
}

std::optional<double> fill_value64(const Args& a, const char* flag) {
  if (!a.has(flag)) return std::nullopt;
  const std::string s = a.get(flag);
  double d = 0;
  if (s == "nan" || s == "NaN") return std::nan("");
  if (s == "inf" || s == "+inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf" || s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (!to_double(s, d)) fail(std::string(flag) + " needs a number (or inf, -inf, nan), got '" + s + "'", 2);
  return d;
}

}  // namespace

bool float64_inputs(const Args& a, const char* flag) {
  const std::string dtype = a.get("--dtype", "");
  if (!dtype.empty() && dtype != "f32" && dtype != "f64") fail("--dtype must be f32 or f64, got '" + dtype + "'", 2);
  const auto& files = a.all(flag);
  std::string first32, first64, plain;  // a float32 and a float64 file, and one that gives no type (raw, a pipe)
  for (const auto& f : files) {
    if (f.empty()) continue;
    switch (given_type(f[0])) {
      case GivenType::raw:
        if (plain.empty()) plain = f[0];
        break;
      case GivenType::float32:
        if (first32.empty()) first32 = f[0];
        break;
      case GivenType::float64:
        if (first64.empty()) first64 = f[0];
        break;
      case GivenType::unknown: break;
    }
  }
  if (!first32.empty() && !first64.empty()) {
    // The components named in order (u, v, w): the earlier of the two files first.
    auto place = [&](const std::string& name) {
      for (size_t k = 0; k < files.size(); ++k)
        if (!files[k].empty() && files[k][0] == name) return k;
      return files.size();
    };
    const bool first_is_64 = place(first64) < place(first32);
    const std::string& a = first_is_64 ? first64 : first32;
    const std::string& b = first_is_64 ? first32 : first64;
    const char* letters = "uvw";
    auto letter = [&](const std::string& name) { return std::string(1, letters[std::min<size_t>(place(name), 2)]); };
    fail("invalid_argument: " + letter(a) + " " + a + " is " + (first_is_64 ? "float64" : "float32") + " but " +
         letter(b) + " " + b + " is " + (first_is_64 ? "float32" : "float64") + " (" + flag + "): " +
         (files.size() == 3 ? "u, v and w" : "u and v") + " must have the same type");
  }
  if (!first64.empty() && dtype.empty() && !plain.empty()) {
    const bool npy = !npy_descr(first64).empty();
    fail("invalid_argument: " + first64 + ": " + (npy ? "dtype '<f8'" : "float64") +
         " is not float32 like the raw file " + plain +
         " (raw files are float32 unless --dtype f64 is given): give --dtype f64, or " +
         (npy ? "save it as '<f4'" : "store the variable as float32"));
  }
  if (dtype == "f64" && !first32.empty())
    fail("invalid_argument: --dtype f64 with the float32 input " + first32 +
         " (.npy files and variables give their own type; --dtype is that of raw files)");
  if (dtype == "f32" && !first64.empty())
    fail("invalid_argument: --dtype f32 with the float64 input " + first64 +
         " (.npy files and variables give their own type; --dtype is that of raw files)");
  return dtype == "f64" || !first64.empty();
}

FillValues64 fill_of64(const Args& a) {
  FillValues64 fill;
  fill.u = fill_value64(a, "--fill");
  fill.v = fill.u;
  if (auto u = fill_value64(a, "--fill-u")) fill.u = u;
  if (auto v = fill_value64(a, "--fill-v")) fill.v = v;
  return fill;
}

namespace {
std::vector<Registered>& registry() {
  static std::vector<Registered> r;  // function-local: safe from static initialization order
  return r;
}
}  // namespace

bool register_command(const Command* spec, RunFn run) {
  registry().push_back({spec, run});
  return true;
}

std::vector<Registered> registered_commands() {
  auto r = registry();
  std::sort(r.begin(), r.end(), [](const Registered& a, const Registered& b) { return a.spec->name < b.spec->name; });
  return r;
}

void print_vector_compression(const Args& a, const factz::Options& o, const factz::CompressStats& st,
                              int64_t nx, int64_t ny, int64_t nz, int bytes_per_vertex, bool float64,
                              size_t stream_bytes, double secs) {
  using In = StatsWriter::In;
  const double raw = double(nx * ny * (nz > 0 ? nz : 1)) * double(bytes_per_vertex);
  const double ratio = raw / double(stream_bytes);
  StatsWriter s;
  s.text("mode", factz::mode_name(o.mode)).text("coder", factz::coder_name(o.coder), In::json);
  if (float64) s.text("dtype", "float64", In::json);
  s.count("nx", nx, In::json).count("ny", ny, In::json);
  if (nz > 0) s.count("nz", nz, In::json);
  s.count("raw_bytes", int64_t(raw)).count("compressed_bytes", stream_bytes).num("ratio", ratio);
  s.num("bit_rate", 8.0 * bytes_per_vertex / ratio).num("eb_abs", st.eb_abs).count("exact_vertices", st.exact_vertices);
  if (nz == 0)
    s.count("repair_rounds", st.repair_rounds, In::json).count("repaired_vertices", st.repaired_vertices, In::json);
  s.count("masked_vertices", st.masked_vertices);
  s.num("compress_seconds", secs).num("throughput_mbs", raw / secs / 1e6);
  // Where the library's time went (its own laps: prepare, frontend, encode, ...), JSON only.
  for (const auto& [stage, stage_secs] : st.stage_seconds) s.num("stage_" + stage + "_seconds", stage_secs, In::json);
  s.print(a.has("--json"), false);
  note_bound_below_packing("compress", st.eb_abs);
}

void print_decompression(const Args& a, int64_t nx, int64_t ny, int64_t nz, bool float64, double raw_bytes,
                         size_t stream_bytes, double secs) {
  using In = StatsWriter::In;
  StatsWriter s;
  s.count("nx", nx).count("ny", ny);
  if (nz > 0) s.count("nz", nz);
  if (float64) s.text("dtype", "float64", In::json);
  s.count("raw_bytes", int64_t(raw_bytes), In::json).count("compressed_bytes", stream_bytes, In::json);
  s.num("decompress_seconds", secs).num("throughput_mbs", raw_bytes / secs / 1e6);
  s.print(a.has("--json"), false);
}

}  // namespace factz::cli
