// The `factz` program as users meet it (docs/usage.md): help, statistics as JSON or as a
// key=value line, raw and .npy files, '-' for stdin / stdout, execution policies that
// never change the bytes, and clean failures (exit 1 for errors, 2 for usage, one line on
// stderr, never a signal). Each test runs the built binary in its own temporary folder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "support/npy_file.hpp"
#include "support/temp_dir.hpp"
#include "synth.hpp"

namespace factz {
namespace {

namespace fs = std::filesystem;

const std::string kCli = FACTZ_CLI_PATH;
const std::string kData = FACTZ_TEST_DATA_DIR;
const std::string kGfsU = kData + "/gfs10m_wind_2014_u_360x181.f32";
const std::string kGfsV = kData + "/gfs10m_wind_2014_v_360x181.f32";
constexpr int64_t kGfsNx = 360, kGfsNy = 181;
const std::string kGfsDims = "-2 360 181";
const std::string kGfsInputs = "-i '" + kGfsU + "' -i '" + kGfsV + "'";

// ---- Files and processes -------------------------------------------------------------------

using testing::TempDir;  // each test's folder (support/temp_dir.hpp)

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}
std::string float_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());  // little-endian host (docs/usage.md)
  return s;
}
std::vector<float> floats_of(const std::string& bytes) {
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

/// A .npy version 1.0 file of float32 with the given shape (written from the NumPy spec).
std::string npy_bytes(const std::vector<float>& data, const std::string& shape) {
  return testing::npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", 1, float_bytes(data));
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

struct Outcome {
  int exit_code = -1;   ///< the process's exit status, -1 when it did not exit normally
  bool signaled = false;
  int signal = 0;
  std::string out, err;
  std::string describe() const {
    std::ostringstream os;
    if (signaled) os << "killed by signal " << signal;
    else os << "exit " << exit_code;
    os << "\nstdout: " << out.substr(0, 2000) << "\nstderr: " << err.substr(0, 2000);
    return os.str();
  }
};

/// Runs a shell command line in `dir`, capturing stdout and stderr. Command lines that
/// start with the program are exec'ed, so a signal that kills it is seen as such.
Outcome shell(const TempDir& dir, const std::string& command_line, bool exec = false) {
  const std::string out = dir / ".stdout", err = dir / ".stderr";
  const std::string full = "cd " + quoted(dir.path().string()) + " && " + (exec ? "exec " : "") +
                           command_line + " > " + quoted(out) + " 2> " + quoted(err);
  const int status = std::system(full.c_str());
  Outcome o;
  if (status != -1 && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (status != -1 && WIFSIGNALED(status)) {
    o.signaled = true;
    o.signal = WTERMSIG(status);
  }
  // A shell that is not exec'ed reports a child's signal as 128 + signal.
  if (o.exit_code > 128) {
    o.signaled = true;
    o.signal = o.exit_code - 128;
  }
  o.out = read_file(out);
  o.err = read_file(err);
  return o;
}

/// `factz ARGS` in `dir`.
Outcome factz(const TempDir& dir, const std::string& args) { return shell(dir, quoted(kCli) + " " + args, true); }

// ---- A small strict JSON reader (RFC 8259, what the CLI prints) ----------------------------

struct Json {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}

  /// The one value of the whole text (surrounding white space allowed), or nothing.
  std::optional<Json> document() {
    Json j;
    if (!value(j)) return std::nullopt;
    space();
    if (i_ != s_.size()) return std::nullopt;
    return j;
  }

 private:
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }
  bool value(Json& j) {
    if (++depth_ > 64) return false;
    space();
    if (i_ >= s_.size()) return false;
    bool ok = false;
    const char c = s_[i_];
    if (c == '{') ok = object(j);
    else if (c == '[') ok = array(j);
    else if (c == '"') ok = (j.kind = Json::Kind::string, string(j.text));
    else if (literal("true")) ok = (j.kind = Json::Kind::boolean, j.boolean = true, true);
    else if (literal("false")) ok = (j.kind = Json::Kind::boolean, true);
    else if (literal("null")) ok = true;
    else ok = number(j);
    --depth_;
    return ok;
  }
  bool object(Json& j) {
    j.kind = Json::Kind::object;
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      space();
      std::string key;
      if (i_ >= s_.size() || s_[i_] != '"' || !string(key)) return false;
      space();
      if (i_ >= s_.size() || s_[i_++] != ':') return false;
      Json v;
      if (!value(v)) return false;
      j.members.emplace_back(std::move(key), std::move(v));
      space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      return s_[i_++] == '}';
    }
  }
  bool array(Json& j) {
    j.kind = Json::Kind::array;
    ++i_;
    space();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      Json v;
      if (!value(v)) return false;
      j.items.push_back(std::move(v));
      space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      return s_[i_++] == ']';
    }
  }
  bool string(std::string& out) {
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        const char e = s_[i_++];
        if (std::strchr("\"\\/bfnrt", e) == nullptr && e != 'u') return false;
        if (e == 'u') i_ += 4;  // kept as is: the CLI's keys and values are ASCII
      }
      out += c;
    }
    return false;
  }
  bool number(Json& j) {
    // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t d = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ > d;
    };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') ++i_;
    else if (!digits()) return false;
    if (i_ < s_.size() && s_[i_] == '.' && (++i_, !digits())) return false;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    j.kind = Json::Kind::number;
    j.number = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);  // 1e999 -> inf
    return true;
  }

  const std::string& s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

/// Parses the CLI's --json output: exactly one JSON object on one line.
Json json_object(const std::string& text) {
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line expected: " << text;
  auto j = JsonReader(text).document();
  EXPECT_TRUE(j.has_value()) << "not valid JSON: " << text;
  if (!j) return Json{};
  EXPECT_EQ(j->kind, Json::Kind::object) << text;
  return *j;
}

/// The number under `key`; a failure (and NaN) when it is missing or not a number.
double number(const Json& j, const std::string& key) {
  const Json* v = j.find(key);
  EXPECT_TRUE(v != nullptr) << "missing key " << key;
  if (v == nullptr) return std::nan("");
  EXPECT_EQ(v->kind, Json::Kind::number) << key << " is not a number";
  return v->kind == Json::Kind::number ? v->number : std::nan("");
}

/// key=value pairs of a statistics line.
std::map<std::string, std::string> key_values(const std::string& line) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const auto eq = token.find('=');
    if (eq != std::string::npos) kv[token.substr(0, eq)] = token.substr(eq + 1);
  }
  return kv;
}

/// Writes a synthetic field as two raw planes u.f32 and v.f32 in `dir`.
void write_field(const TempDir& dir, const VectorField2D& f, const std::string& stem = "") {
  write_file(dir / (stem + "u.f32"), float_bytes(f.u));
  write_file(dir / (stem + "v.f32"), float_bytes(f.v));
}

/// An error as docs/usage.md promises: the exit code, one line on stderr naming the
/// subcommand, nothing else, no signal.
void expect_clean_error(const Outcome& o, int code, const std::string& subcommand, const std::string& needle,
                        const std::string& what) {
  EXPECT_FALSE(o.signaled) << what << ": " << o.describe();
  EXPECT_EQ(o.exit_code, code) << what << ": " << o.describe();
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << what << ": one line on stderr expected\n"
                                                             << o.err;
  const std::string prefix = subcommand.empty() ? "factz: " : "factz " + subcommand + ": ";
  EXPECT_EQ(o.err.rfind(prefix, 0), 0u) << what << ": " << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << what << ": expected '" << needle << "' in " << o.err;
}

// ---- Help ---------------------------------------------------------------------------------

TEST(Cli, HelpListsEverySubcommand) {
  TempDir dir;
  for (const char* flag : {"--help", "-h"}) {
    const Outcome o = factz(dir, flag);
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    for (const char* sub : {"compress", "decompress", "verify", "cp", "info"})
      EXPECT_NE(o.out.find(sub), std::string::npos) << sub;
  }
  const Outcome bare = factz(dir, "");
  EXPECT_EQ(bare.exit_code, 2) << "no subcommand is a usage error\n" << bare.describe();
  expect_clean_error(factz(dir, "squeeze -2 3 3"), 2, "", "unknown subcommand 'squeeze'", "unknown subcommand");
}

TEST(Cli, EverySubcommandHelpMentionsEveryFlag) {
  const std::map<std::string, std::vector<std::string>> flags = {
      {"compress", {"-2", "-i", "-z", "-M", "--mode", "--coder", "--zstd", "--no-zstd", "-x", "--json", "--help"}},
      {"decompress", {"-z", "-o", "-x", "--json", "--help"}},
      {"verify", {"-2", "-i", "-d", "-x", "--json", "--help"}},
      {"cp", {"-2", "-i", "--json", "--csv", "-x", "--help"}},
      {"info", {"-z", "--help"}},
  };
  TempDir dir;
  for (const auto& [sub, list] : flags) {
    for (const char* help : {"--help", "-h"}) {
      const Outcome o = factz(dir, sub + " " + help);
      EXPECT_EQ(o.exit_code, 0) << sub << "\n" << o.describe();
      EXPECT_TRUE(o.err.empty()) << sub;
      for (const auto& flag : list) {
        // The flag as a word of the help text (so "-z" is not found inside "--zstd").
        bool found = false;
        for (std::size_t at = o.out.find(flag); at != std::string::npos && !found; at = o.out.find(flag, at + 1)) {
          const char before = at == 0 ? ' ' : o.out[at - 1];
          const char after = at + flag.size() < o.out.size() ? o.out[at + flag.size()] : ' ';
          found = (before == ' ' || before == '[' || before == '|') &&
                  (after == ' ' || after == '\n' || after == ']' || after == '|');
        }
        EXPECT_TRUE(found) << "factz " << sub << " " << help << " does not mention " << flag << "\n" << o.out;
      }
    }
  }
}

// ---- cp -----------------------------------------------------------------------------------

TEST(Cli, CpJsonCountsEveryTypeAndCsvHasOneRowPerPoint) {
  TempDir dir;
  const Outcome o = factz(dir, "cp " + kGfsDims + " " + kGfsInputs + " --json --csv cp.csv");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const Json j = json_object(o.out);
  EXPECT_EQ(number(j, "nx"), kGfsNx);
  EXPECT_EQ(number(j, "ny"), kGfsNy);
  const double count = number(j, "critical_points");
  EXPECT_GT(count, 0) << "the GFS wind has critical points";
  const Json* types = j.find("types");
  ASSERT_TRUE(types != nullptr && types->kind == Json::Kind::object) << o.out;
  const std::vector<std::string> names = {"saddle",          "attracting_node", "repelling_node", "attracting_focus",
                                          "repelling_focus", "center",          "degenerate"};
  double sum = 0;
  for (const auto& name : names) sum += number(*types, name);
  EXPECT_EQ(types->members.size(), names.size());
  EXPECT_EQ(sum, count);

  // The same count as the library's extractor.
  std::vector<float> u = floats_of(read_file(kGfsU)), v = floats_of(read_file(kGfsV));
  VectorField2D f{kGfsNx, kGfsNy, u, v};
  auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok()) << cps.status().to_string();
  EXPECT_EQ(double(cps->size()), count);

  std::istringstream csv(read_file(dir / "cp.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line, "triangle,row,column,mu0,mu1,mu2,type");
  int64_t rows = 0, last_triangle = -1;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 7u) << line;
    const int64_t triangle = std::stoll(cells[0]);
    EXPECT_GT(triangle, last_triangle) << "rows are ordered by triangle id";
    last_triangle = triangle;
    EXPECT_EQ(triangle / 2, std::stoll(cells[1]) * (kGfsNx - 1) + std::stoll(cells[2])) << line;
    EXPECT_NE(std::find(names.begin(), names.end(), cells[6]), names.end()) << line;
    ++rows;
  }
  EXPECT_EQ(double(rows), count);

  // Without --json: one key=value line on stdout.
  const Outcome kv = factz(dir, "cp " + kGfsDims + " " + kGfsInputs);
  ASSERT_EQ(kv.exit_code, 0) << kv.describe();
  EXPECT_EQ(key_values(kv.out)["critical_points"], std::to_string(int64_t(count))) << kv.out;
}

// ---- compress / decompress / verify --------------------------------------------------------

TEST(Cli, CompressDecompressVerifyReportEveryStatistic) {
  TempDir dir;
  const Outcome c = factz(dir, "compress " + kGfsDims + " " + kGfsInputs + " -z s.fz -M REL 1e-2 --json");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_TRUE(c.err.empty()) << c.err;
  const Json cj = json_object(c.out);
  const double raw = double(kGfsNx * kGfsNy * 8);
  const double stream_bytes = double(fs::file_size(dir / "s.fz"));
  EXPECT_EQ(number(cj, "raw_bytes"), raw);
  EXPECT_EQ(number(cj, "compressed_bytes"), stream_bytes);
  EXPECT_NEAR(number(cj, "ratio"), raw / stream_bytes, 1e-9 * raw / stream_bytes);
  EXPECT_NEAR(number(cj, "bit_rate"), 64.0 * stream_bytes / raw, 1e-9);
  EXPECT_GT(number(cj, "eb_abs"), 0);
  EXPECT_GE(number(cj, "exact_vertices"), 0);
  EXPECT_GE(number(cj, "compress_seconds"), 0);
  EXPECT_GT(number(cj, "throughput_mbs"), 0);
  for (const char* key : {"repair_rounds", "repaired_vertices", "nx", "ny"}) EXPECT_GE(number(cj, key), 0);
  ASSERT_TRUE(cj.find("mode") && cj.find("mode")->kind == Json::Kind::string);
  EXPECT_EQ(cj.find("mode")->text, "speculative") << "speculative is the default mode";
  const double eb = number(cj, "eb_abs");

  const Outcome d = factz(dir, "decompress -z s.fz -o u2.f32 -o v2.f32 --json");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  const Json dj = json_object(d.out);
  EXPECT_EQ(number(dj, "nx"), kGfsNx);
  EXPECT_EQ(number(dj, "ny"), kGfsNy);
  EXPECT_EQ(number(dj, "raw_bytes"), raw);
  EXPECT_EQ(number(dj, "compressed_bytes"), stream_bytes);
  EXPECT_GE(number(dj, "decompress_seconds"), 0);
  EXPECT_GT(number(dj, "throughput_mbs"), 0);
  EXPECT_EQ(fs::file_size(dir / "u2.f32"), uint64_t(kGfsNx * kGfsNy * 4));
  EXPECT_EQ(fs::file_size(dir / "v2.f32"), uint64_t(kGfsNx * kGfsNy * 4));

  const Outcome v = factz(dir, "verify " + kGfsDims + " " + kGfsInputs + " -d u2.f32 -d v2.f32 --json");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  const Json vj = json_object(v.out);
  EXPECT_GT(number(vj, "cp_original"), 0);
  EXPECT_EQ(number(vj, "cp_decompressed"), number(vj, "cp_original"));
  EXPECT_EQ(number(vj, "lost"), 0);
  EXPECT_EQ(number(vj, "spurious"), 0);
  EXPECT_EQ(number(vj, "type_changed"), 0);
  EXPECT_EQ(number(vj, "violations"), 0) << "mode block keeps every critical point";
  const Json* err = vj.find("max_abs_error");
  ASSERT_TRUE(err && err->kind == Json::Kind::array && err->items.size() == 2) << v.out;
  for (const Json& e : err->items) {
    ASSERT_EQ(e.kind, Json::Kind::number);
    EXPECT_LE(e.number, eb) << "G0: within the absolute bound";
  }
  EXPECT_GT(number(vj, "psnr"), 0);
  for (const char* key : {"rmse", "nrmse", "value_range"}) EXPECT_GE(number(vj, key), 0) << key;

  // verify of a field against itself: zero error, infinite PSNR written as 1e999.
  const Outcome same = factz(dir, "verify " + kGfsDims + " " + kGfsInputs + " -d '" + kGfsU + "' -d '" + kGfsV + "' --json");
  ASSERT_EQ(same.exit_code, 0) << same.describe();
  const Json sj = json_object(same.out);
  EXPECT_TRUE(std::isinf(number(sj, "psnr"))) << same.out;
  EXPECT_EQ(number(sj, "rmse"), 0);
}

TEST(Cli, WithoutJsonTheStatisticsLineGoesToStderr) {
  TempDir dir;
  write_field(dir, synth::turbulence(64, 48, 5));
  const Outcome c = factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z s.fz");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_TRUE(c.out.empty()) << "stdout must stay free (it may carry the stream): " << c.out;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  auto kv = key_values(c.err);
  for (const char* key : {"mode", "raw_bytes", "compressed_bytes", "ratio", "bit_rate", "eb_abs", "exact_vertices",
                          "compress_seconds", "throughput_mbs"})
    EXPECT_EQ(kv.count(key), 1u) << key << " missing in " << c.err;
  EXPECT_EQ(kv["compressed_bytes"], std::to_string(fs::file_size(dir / "s.fz")));

  const Outcome d = factz(dir, "decompress -z s.fz -o u2.f32 -o v2.f32");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  EXPECT_TRUE(d.out.empty()) << d.out;
  EXPECT_EQ(std::count(d.err.begin(), d.err.end(), '\n'), 1) << d.err;
  kv = key_values(d.err);
  for (const char* key : {"nx", "ny", "decompress_seconds", "throughput_mbs"})
    EXPECT_EQ(kv.count(key), 1u) << key << " missing in " << d.err;

  const Outcome v = factz(dir, "verify -2 64 48 -i u.f32 -i v.f32 -d u2.f32 -d v2.f32");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  EXPECT_EQ(key_values(v.out)["violations"], "0") << v.out;
}

TEST(Cli, NpyInputAndOutputRoundTrip) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(50, 30, 8);
  write_field(dir, f);
  write_file(dir / "u.npy", npy_bytes(f.u, "(30, 50)"));
  write_file(dir / "v.npy", npy_bytes(f.v, "(1500,)"));  // 1D arrays of nx*ny values are accepted
  ASSERT_EQ(factz(dir, "compress -2 50 30 -i u.f32 -i v.f32 -z raw.fz").exit_code, 0);
  const Outcome c = factz(dir, "compress -2 50 30 -i u.npy -i v.npy -z npy.fz");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_EQ(read_file(dir / "raw.fz"), read_file(dir / "npy.fz")) << "same values, same stream";

  ASSERT_EQ(factz(dir, "decompress -z npy.fz -o u2.npy -o v2.f32").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z npy.fz -o u3.f32 -o v3.f32").exit_code, 0);
  const std::string npy = read_file(dir / "u2.npy");
  ASSERT_GE(npy.size(), 10u);
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  const std::size_t header_len = std::size_t(uint8_t(npy[8])) | std::size_t(uint8_t(npy[9])) << 8;
  ASSERT_LE(10 + header_len, npy.size());
  EXPECT_EQ((10 + header_len) % 64, 0u) << "NumPy aligns the data to 64 bytes";
  const std::string header = npy.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (30, 50)"), std::string::npos) << header;
  EXPECT_EQ(npy.substr(10 + header_len), read_file(dir / "u3.f32")) << ".npy and raw hold the same values";

  // The written .npy reads back as input, and verifies against the original.
  const Outcome v = factz(dir, "verify -2 50 30 -i u.npy -i v.f32 -d u2.npy -d v2.f32 --json");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  EXPECT_EQ(number(json_object(v.out), "violations"), 0);

  // A .npy of the wrong shape or dtype is an error naming the file.
  write_file(dir / "t.npy", npy_bytes(f.u, "(50, 30)"));
  expect_clean_error(factz(dir, "cp -2 50 30 -i t.npy -i v.f32"), 1, "cp", "t.npy", "transposed .npy");
  std::string f8 = npy_bytes(f.u, "(30, 50)");
  f8.replace(f8.find("<f4"), 3, "<f8");
  write_file(dir / "d.npy", f8);
  expect_clean_error(factz(dir, "cp -2 50 30 -i d.npy -i v.f32"), 1, "cp", "d.npy", "float64 .npy");
}

TEST(Cli, StreamsPassThroughStdinAndStdout) {
  TempDir dir;
  write_field(dir, synth::turbulence(48, 40, 9));
  const std::string cli = quoted(kCli);
  ASSERT_EQ(factz(dir, "compress -2 48 40 -i u.f32 -i v.f32 -z file.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z file.fz -o u_file.f32 -o v_file.f32").exit_code, 0);

  // compress to stdout: the same bytes as to a file, nothing else on stdout.
  Outcome o = shell(dir, cli + " compress -2 48 40 -i u.f32 -i v.f32 -z -");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out, read_file(dir / "file.fz"));

  // The pipe of the docs: compress ... -z - | decompress -z - ...
  o = shell(dir, cli + " compress -2 48 40 -i u.f32 -i v.f32 -z - | " + cli +
                     " decompress -z - -o u_pipe.f32 -o v_pipe.f32 --json");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(number(json_object(o.out), "nx"), 48);
  EXPECT_EQ(read_file(dir / "u_pipe.f32"), read_file(dir / "u_file.f32"));
  EXPECT_EQ(read_file(dir / "v_pipe.f32"), read_file(dir / "v_file.f32"));

  // One component from stdin; one component to stdout.
  o = shell(dir, cli + " compress -2 48 40 -i - -i v.f32 -z stdin.fz < u.f32");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "stdin.fz"), read_file(dir / "file.fz"));
  o = shell(dir, cli + " decompress -z file.fz -o u_out.f32 -o -");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out, read_file(dir / "v_file.f32"));
  o = shell(dir, cli + " info -z - < file.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_NE(o.out.find("codes_u"), std::string::npos);

  // Both components cannot share stdin or stdout.
  expect_clean_error(factz(dir, "decompress -z file.fz -o - -o -"), 2, "decompress", "stdout", "two stdouts");
  const Outcome two_in = shell(dir, cli + " compress -2 48 40 -i - -i - -z x.fz < u.f32", true);
  EXPECT_FALSE(two_in.signaled) << two_in.describe();
  EXPECT_TRUE(two_in.exit_code == 1 || two_in.exit_code == 2) << two_in.describe();
  EXPECT_NE(two_in.err.find("stdin"), std::string::npos) << two_in.err;
}

TEST(Cli, StreamBytesDoNotDependOnTheExecutionPolicy) {
  TempDir dir;
  std::string reference;
  for (const char* policy : {"serial", "omp=3", "omp", "omp=1"}) {
    const std::string name = std::string("s_") + policy + ".fz";
    const Outcome o = factz(dir, "compress " + kGfsDims + " " + kGfsInputs + " -z '" + name + "' -x " + policy);
    ASSERT_EQ(o.exit_code, 0) << policy << "\n" << o.describe();
    const std::string bytes = read_file(dir / name);
    ASSERT_FALSE(bytes.empty());
    if (reference.empty()) reference = bytes;
    EXPECT_EQ(bytes, reference) << "-x " << policy << " changed the stream";
  }
  std::string decoded;
  for (const char* policy : {"serial", "omp=3"}) {
    ASSERT_EQ(factz(dir, std::string("decompress -z s_serial.fz -o u.f32 -o v.f32 -x ") + policy).exit_code, 0);
    const std::string bytes = read_file(dir / "u.f32") + read_file(dir / "v.f32");
    if (decoded.empty()) decoded = bytes;
    EXPECT_EQ(bytes, decoded) << "-x " << policy << " changed the decoded field";
  }
  expect_clean_error(factz(dir, "compress " + kGfsDims + " " + kGfsInputs + " -z x.fz -x omp=0"), 2, "compress", "-x",
                     "omp=0");
  expect_clean_error(factz(dir, "compress " + kGfsDims + " " + kGfsInputs + " -x gpu -z x.fz"), 2, "compress", "-x",
                     "unknown policy");
}

TEST(Cli, InfoPrintsTheHeaderAndSectionNames) {
  TempDir dir;
  write_field(dir, synth::turbulence(40, 40, 10));
  ASSERT_EQ(factz(dir, "compress -2 40 40 -i u.f32 -i v.f32 -z s.fz --mode block").exit_code, 0);
  const Outcome o = factz(dir, "info -z s.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  for (const char* text : {"format version 2", "nx=40 ny=40", "block", "ans", "meta", "tile_bounds", "codes_u",
                           "codes_v", "exact_index", "exact_values", "outliers"})
    EXPECT_NE(o.out.find(text), std::string::npos) << text << " missing in\n" << o.out;
  ASSERT_EQ(factz(dir, "compress -2 40 40 -i u.f32 -i v.f32 -z s2.fz --anchor-stride 8").exit_code, 0);
  const Outcome o2 = factz(dir, "info -z s2.fz");
  ASSERT_EQ(o2.exit_code, 0) << o2.describe();
  for (const char* text : {"speculative", "anchor stride   8", "meta", "codes_u", "codes_v", "exact_values",
                           "bound_ids_u"})
    EXPECT_NE(o2.out.find(text), std::string::npos) << text << " missing in\n" << o2.out;
  expect_clean_error(factz(dir, "info -z nowhere.fz"), 1, "info", "nowhere.fz", "missing stream");
}

TEST(Cli, VerifyReportsViolationsAndStillSucceeds) {
  TempDir dir;
  write_field(dir, synth::turbulence(128, 96, 12));
  ASSERT_EQ(factz(dir, "compress -2 128 96 -i u.f32 -i v.f32 -z s.fz --mode none -M REL 0.1").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o u2.f32 -o v2.f32").exit_code, 0);
  const Outcome o = factz(dir, "verify -2 128 96 -i u.f32 -i v.f32 -d u2.f32 -d v2.f32 --json");
  EXPECT_EQ(o.exit_code, 0) << "verify reports; it does not fail on violations\n" << o.describe();
  const Json j = json_object(o.out);
  EXPECT_GT(number(j, "violations"), 0) << "mode none at REL 0.1 loses critical points of turbulence";
  EXPECT_EQ(number(j, "violations"), number(j, "lost") + number(j, "spurious") + number(j, "type_changed"));
  EXPECT_NE(number(j, "cp_original"), 0);
}

// ---- Errors ---------------------------------------------------------------------------------

TEST(Cli, BadInputFilesFailWithOneClearLine) {
  TempDir dir;
  VectorField2D f = synth::turbulence(20, 10, 13);
  write_field(dir, f);
  expect_clean_error(factz(dir, "cp -2 20 11 -i u.f32 -i v.f32"), 1, "cp", "expected 880 bytes", "wrong size");
  expect_clean_error(factz(dir, "compress -2 20 11 -i u.f32 -i v.f32 -z s.fz"), 1, "compress", "found 800",
                     "wrong size");
  EXPECT_FALSE(fs::exists(dir / "s.fz")) << "no stream is written for a failed compression";
  expect_clean_error(factz(dir, "compress -2 20 10 -i missing.f32 -i v.f32 -z s.fz"), 1, "compress", "missing.f32",
                     "missing file");

  f.u[3 * 20 + 5] = std::nanf("");  // NaN marks the vertex missing (issue 17): not an error
  f.v[7 * 20 + 1] = INFINITY;       // x=1 y=7: the first infinite value in index order
  f.u[9 * 20 + 19] = -INFINITY;
  write_field(dir, f, "bad_");
  for (const char* sub : {"cp", "compress"}) {
    const std::string extra = std::string(sub) == "compress" ? " -z s.fz" : "";
    const Outcome o = factz(dir, std::string(sub) + " -2 20 10 -i bad_u.f32 -i bad_v.f32" + extra);
    expect_clean_error(o, 1, sub, "2 infinite", "infinite input");
    EXPECT_NE(o.err.find("x=1 y=7"), std::string::npos) << o.err;
  }
  const Outcome o = factz(dir, "verify -2 20 10 -i u.f32 -i v.f32 -d bad_u.f32 -d bad_v.f32");
  expect_clean_error(o, 1, "verify", "infinite", "infinity in the decompressed field");
}

TEST(Cli, UsageErrorsExitWithCodeTwo) {
  TempDir dir;
  write_field(dir, synth::turbulence(20, 10, 14));
  const std::string in = " -i u.f32 -i v.f32";
  struct Case {
    std::string sub, args, needle;
  };
  const std::vector<Case> cases = {
      {"compress", "-2 20 10" + in + " -z s.fz --frobnicate", "--frobnicate"},
      {"compress", in + " -z s.fz", "-2"},
      {"compress", "-2 20" + in + " -z s.fz", ""},  // "-i" taken as NY
      {"compress", "-2 20 x" + in + " -z s.fz", "-2"},
      {"compress", "-2 0 10" + in + " -z s.fz", "-2"},
      {"compress", "-2 20 10 -i u.f32 -z s.fz", "-i"},
      {"compress", "-2 20 10" + in, "-z"},
      {"compress", "-2 20 10" + in + " -z s.fz -M FOO 1", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz -M REL abc", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz -M REL -1", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz -M ABS nan", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz -M ABS inf", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz -M REL", "-M"},
      {"compress", "-2 20 10" + in + " -z s.fz --mode fast", "--mode"},
      {"compress", "-2 20 10" + in + " -z s.fz --coder lzw", "--coder"},
      {"compress", "-2 20 10" + in + " -z s.fz --zstd --no-zstd", "zstd"},
      {"decompress", "-o u2 -o v2", "-z"},
      {"decompress", "-z s.fz -o u2", "-o"},
      {"verify", "-2 20 10" + in + " -d u.f32", "-d"},
      {"cp", "-2 20 10" + in + " --csv", "--csv"},
      {"info", "", "-z"},
      {"info", "-z s.fz -x serial", "-x"},
  };
  for (const auto& c : cases)
    expect_clean_error(factz(dir, c.sub + " " + c.args), 2, c.sub, c.needle, "factz " + c.sub + " " + c.args);
  EXPECT_FALSE(fs::exists(dir / "s.fz"));
}

// `-x cuda` either runs on a GPU with the CPU's bytes and values, or (no CUDA backend in
// this build, or no device) fails with one clear backend_unavailable line.
TEST(Cli, CudaPolicyGivesTheCpuBytesOrIsReportedAsUnavailable) {
  TempDir dir;
  write_field(dir, synth::turbulence(20, 10, 15));
  ASSERT_EQ(factz(dir, "compress -2 20 10 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  const Outcome c = factz(dir, "compress -2 20 10 -i u.f32 -i v.f32 -z g.fz -x cuda");
  if (c.exit_code == 0) {
    EXPECT_EQ(read_file(dir / "g.fz"), read_file(dir / "s.fz")) << "GPU stream differs from the CPU stream";
    ASSERT_EQ(factz(dir, "decompress -z s.fz -o a -o b -x cuda").exit_code, 0);
    ASSERT_EQ(factz(dir, "decompress -z s.fz -o c -o d").exit_code, 0);
    EXPECT_EQ(read_file(dir / "a"), read_file(dir / "c"));
    EXPECT_EQ(read_file(dir / "b"), read_file(dir / "d"));
    return;
  }
  expect_clean_error(c, 1, "compress", "backend_unavailable", "-x cuda");
  expect_clean_error(factz(dir, "decompress -z s.fz -o a -o b -x cuda"), 1, "decompress", "backend_unavailable",
                     "-x cuda");
  // Elsewhere -x cuda is refused as usage or as unavailable, never run on the CPU silently.
  const Outcome v = factz(dir, "verify -2 20 10 -i u.f32 -i v.f32 -d u.f32 -d v.f32 -x cuda");
  EXPECT_NE(v.exit_code, 0) << v.describe();
}

TEST(Cli, BadStreamsFailCleanly) {
  TempDir dir;
  write_field(dir, synth::turbulence(30, 20, 16));
  ASSERT_EQ(factz(dir, "compress -2 30 20 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  const std::string good = read_file(dir / "s.fz");
  std::string garbage(5000, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = char((i * 2654435761u) >> 13);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  std::string wrong_version = good;
  wrong_version[4] = 24;  // one past the newest version this build reads (23)
  const std::vector<std::pair<std::string, std::string>> streams = {
      {"garbage", garbage},
      {"empty", ""},
      {"truncated", good.substr(0, good.size() - 7)},
      {"header only", good.substr(0, 64)},
      {"flipped", flipped},
      {"appended", good + "tail"},
      {"version 24", wrong_version},
  };
  for (const auto& [name, bytes] : streams) {
    write_file(dir / "bad.fz", bytes);
    const std::string code = name == "version 24" ? "unsupported_version" : "corrupt_stream";
    expect_clean_error(factz(dir, "decompress -z bad.fz -o u2.f32 -o v2.f32"), 1, "decompress", code, name);
    expect_clean_error(factz(dir, "info -z bad.fz"), 1, "info", code, name);
  }
  expect_clean_error(factz(dir, "decompress -z nowhere.fz -o u2.f32 -o v2.f32"), 1, "decompress", "nowhere.fz",
                     "missing stream");
  expect_clean_error(factz(dir, "decompress -z s.fz -o no/such/dir/u.f32 -o v2.f32"), 1, "decompress",
                     "no/such/dir/u.f32", "unwritable output");
}

// Grid sizes whose byte count overflows 64 bits must be refused like any wrong size: a
// 4 * nx * ny that wraps to the file size once made `cp` abort (std::length_error).
TEST(Cli, HugeGridSizesFailCleanly) {
  TempDir dir;
  write_file(dir / "empty.f32", "");
  write_file(dir / "four.f32", "abcd");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"4611686018427387904 2", "empty.f32"},  // 4 * 2^63 wraps to 0 bytes
      {"4611686018427387904 4", "empty.f32"},  // 4 * 2^64 wraps to 0 bytes
      {"1073741824 1073741824", "empty.f32"},
      {"4611686018427387905 1", "four.f32"},  // 4 * (2^62 + 1) wraps to 4 bytes
      {"9223372036854775807 9223372036854775807", "empty.f32"},
  };
  for (const auto& [dims, file] : cases)
    for (const char* sub : {"cp", "compress"}) {
      const std::string extra = std::string(sub) == "compress" ? " -z s.fz" : "";
      const Outcome o = factz(dir, std::string(sub) + " -2 " + dims + " -i " + file + " -i " + file + extra);
      // An error (1) or a usage error (2), as long as it is a clean one.
      const std::string what = std::string(sub) + " -2 " + dims + " on " + file;
      if (o.signaled) {
        ADD_FAILURE() << what << ": " << o.describe();
        continue;
      }
      EXPECT_TRUE(o.exit_code == 1 || o.exit_code == 2) << what << ": " << o.describe();
      EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << what << ": " << o.err;
      EXPECT_EQ(o.err.rfind("factz " + std::string(sub) + ": ", 0), 0u) << what << ": " << o.err;
    }
}


// ---- Nothing silently wrong (issue 17): outputs, writes, unusable inputs, .npy headers -----

/// Whether the CLI has the subcommand (flow needs Eigen at build time).
bool has_subcommand(const TempDir& dir, const std::string& name) {
  return factz(dir, "--help").out.find("  " + name + " ") != std::string::npos;
}

/// Names in `dir` that a failed write could have left behind (the writer's temporary files).
std::vector<std::string> leftovers(const TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().filename().string().find(".factz-") != std::string::npos) out.push_back(e.path().string());
  return out;
}

TEST(Cli, OutputsThatAreInputsOrNamedTwiceAreRefused) {
  TempDir dir;
  write_field(dir, synth::turbulence(40, 30, 17));
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z m.fzmb --blocks 2 2").exit_code, 0);
  write_file(dir / "f.f32", read_file(dir / "u.f32"));
  ASSERT_EQ(factz(dir, "compress -2 40 30 --scalar -i f.f32 -z f.fz").exit_code, 0);
  fs::create_symlink("u.f32", dir / "link.f32");
  fs::create_hard_link(dir / "v.f32", dir / "hard.f32");
  fs::create_directory(dir / "sub");
  const std::string u = read_file(dir / "u.f32"), v = read_file(dir / "v.f32"), s = read_file(dir / "s.fz");
  const std::string m = read_file(dir / "m.fzmb"), f = read_file(dir / "f.f32"), fz = read_file(dir / "f.fz");
  const std::string in = "-2 40 30 -i u.f32 -i v.f32";
  struct Case {
    std::string sub, args, needle;
  };
  const std::vector<Case> cases = {
      {"compress", in + " -z u.f32", "output -z u.f32 is the input -i u.f32: refusing to overwrite an input"},
      {"compress", in + " -z v.f32 --mode block", "is the input -i v.f32"},
      {"compress", in + " -z link.f32", "output -z link.f32 is the input -i u.f32 (the same file)"},
      {"compress", in + " -z hard.f32", "output -z hard.f32 is the input -i v.f32 (the same file)"},
      {"compress", in + " -z ./sub/../u.f32", "(the same file)"},
      {"compress", in + " -z u.f32 --blocks 2 2", "refusing to overwrite an input"},
      {"compress", "-2 40 30 --scalar -i f.f32 -z f.f32", "output -z f.f32 is the input -i f.f32"},
      {"compress", "-2 40 30 --blocks 2 2 --per-rank -i p_%r.f32 -i q_%r.f32 -z p_1.f32",
       "output -z p_1.f32 is the input -i p_1.f32"},
      {"decompress", "-z s.fz -o s.fz -o x.f32", "output -o s.fz is the input -z s.fz"},
      {"decompress", "-z s.fz -o x.f32 -o x.f32", "output -o x.f32 is named twice: give each output its own file"},
      {"decompress", "-z s.fz -o x.f32 -o ./sub/../x.f32", "outputs -o x.f32 and -o ./sub/../x.f32 are the same file"},
      {"decompress", "-z s.fz -o u.f32 -o u.f32", "named twice"},
      {"decompress", "-z f.fz -o f.fz", "output -o f.fz is the input -z f.fz"},
      {"decompress", "-z m.fzmb -o m.fzmb -o x.f32", "output -o m.fzmb is the input -z m.fzmb"},
      {"decompress", "-z m.fzmb --region 0 0 10 10 -o r.f32 -o r.f32", "named twice"},
      {"decompress", "-z m.fzmb --per-rank -o a_%r.f32 -o a_%r.f32", "named twice"},
      {"decompress", "-z m.fzmb --per-rank -o a%r.f32 -o m.fzmb", "is the input -z m.fzmb"},
      {"cp", in + " --csv v.f32", "output --csv v.f32 is the input -i v.f32"},
      {"render", in + " -o u.f32", "output -o u.f32 is the input -i u.f32"},
      {"render", in + " -d u.f32 -d v.f32 -o link.f32", "is the input -i u.f32 (the same file)"},
  };
  for (const auto& c : cases) {
    const Outcome o = factz(dir, c.sub + " " + c.args);
    expect_clean_error(o, 2, c.sub, c.needle, "factz " + c.sub + " " + c.args);
  }
  // Nothing was touched, and nothing was created.
  EXPECT_EQ(read_file(dir / "u.f32"), u);
  EXPECT_EQ(read_file(dir / "v.f32"), v);
  EXPECT_EQ(read_file(dir / "s.fz"), s);
  EXPECT_EQ(read_file(dir / "m.fzmb"), m);
  EXPECT_EQ(read_file(dir / "f.f32"), f);
  EXPECT_EQ(read_file(dir / "f.fz"), fz);
  for (const char* name : {"x.f32", "r.f32", "a_0.f32", "a0.f32", "p_1.f32"}) EXPECT_FALSE(fs::exists(dir / name)) << name;
  EXPECT_TRUE(fs::is_symlink(dir / "link.f32"));

  if (has_subcommand(dir, "flow")) {
    // -z is flow compress's output and an input of decompress and eval; checked before
    // anything is read.
    expect_clean_error(factz(dir, "flow compress --basis b.fzb --velocity w.npy --rel-l2 1e-3 -z w.npy"), 2, "flow",
                       "output -z w.npy is the input --velocity w.npy", "flow compress over its velocity");
    expect_clean_error(factz(dir, "flow decompress --basis b.fzb -z w.fzf -o b.fzb"), 2, "flow",
                       "output -o b.fzb is the input --basis b.fzb", "flow decompress over its basis");
    expect_clean_error(factz(dir, "flow eval --basis b.fzb -z w.fzf --points p.npy -o v.npy --divergence v.npy"), 2,
                       "flow", "output v.npy is named twice (-o and --divergence)", "flow eval writing one file twice");
  }

  // Inputs may repeat, stdout may take one output, and character devices are no one's data.
  EXPECT_EQ(factz(dir, "cp -2 40 30 -i u.f32 -i u.f32").exit_code, 0);
  const Outcome null2 = factz(dir, "decompress -z s.fz -o /dev/null -o /dev/null");
  EXPECT_EQ(null2.exit_code, 0) << null2.describe();
  const Outcome one_stdout = factz(dir, "decompress -z s.fz -o - -o y.f32");
  EXPECT_EQ(one_stdout.exit_code, 0) << one_stdout.describe();
  EXPECT_EQ(one_stdout.out.size(), u.size()) << "u went to stdout";
  expect_clean_error(factz(dir, "decompress -z s.fz -o - -o -"), 2, "decompress", "stdout", "two stdouts");
}

TEST(Cli, FailedWritesAreErrorsWithTheReasonAndLeaveNoPartialFile) {
  TempDir dir;
  write_field(dir, synth::turbulence(64, 48, 18));
  ASSERT_EQ(factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z m.fzmb --blocks 2 2").exit_code, 0);
  const std::string in = "-2 64 48 -i u.f32 -i v.f32";
  const std::string cli = quoted(kCli);
  if (fs::exists("/dev/full")) {
    struct Case {
      std::string sub, args;
    };
    const std::vector<Case> cases = {
        {"cp", in + " --csv /dev/full"},
        {"compress", in + " -z /dev/full"},
        {"compress", in + " -z /dev/full --blocks 2 2"},
        {"decompress", "-z s.fz -o /dev/full -o v2.f32"},
        {"decompress", "-z s.fz -o u2.f32 -o /dev/full"},
        {"decompress", "-z m.fzmb -o u2.f32 -o /dev/full"},
        {"decompress", "-z m.fzmb --region 0 0 8 8 -o /dev/full -o v2.f32"},
        {"render", in + " -o /dev/full --size 64"},
    };
    for (const auto& c : cases) {
      const Outcome o = factz(dir, c.sub + " " + c.args);
      expect_clean_error(o, 1, c.sub, "io: cannot write /dev/full: no space left on device", c.sub + " " + c.args);
    }
    // What goes to stdout is an output too: the statistics, the JSON, a stream for -z -.
    const std::vector<std::string> to_stdout = {"cp " + in, "cp " + in + " --json", "compress " + in + " -z -",
                                                "compress " + in + " -z s2.fz --json",
                                                "decompress -z s.fz -o - -o v3.f32", "info -z s.fz"};
    for (const std::string& args : to_stdout) {
      const Outcome o = shell(dir, cli + " " + args + " >/dev/full 2>" + quoted(dir / ".stderr2") + "; echo $?");
      EXPECT_EQ(o.out, "1\n") << args;
      const std::string err = read_file(dir / ".stderr2");
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << ": " << err;
      EXPECT_NE(err.find("cannot write to stdout"), std::string::npos) << args << ": " << err;
    }
  }
  // A file that cannot be written whole is not written at all, and an existing file it was
  // to replace keeps its bytes: the file size limit (ulimit -f, in blocks of at most 1 KiB)
  // makes the 12 KiB planes and the exact stream fail part way (SIGXFSZ ignored: write
  // then fails with EFBIG).
  write_file(dir / "keep.f32", "old bytes");
  const std::string limited = "trap '' XFSZ; ulimit -f 4; exec " + cli + " ";
  Outcome o = shell(dir, limited + "decompress -z s.fz -o keep.f32 -o new.f32");
  expect_clean_error(o, 1, "decompress", "io: cannot write keep.f32: file too large", "size-limited decompress");
  EXPECT_EQ(read_file(dir / "keep.f32"), "old bytes");
  EXPECT_FALSE(fs::exists(dir / "new.f32"));
  o = shell(dir, limited + "decompress -z s.fz -o new.npy -o new2.f32");
  expect_clean_error(o, 1, "decompress", "new.npy", "size-limited .npy");
  EXPECT_FALSE(fs::exists(dir / "new.npy"));
  o = shell(dir, limited + "compress " + in + " -z big.fz -M ABS 0");
  expect_clean_error(o, 1, "compress", "io: cannot write big.fz: file too large", "size-limited compress");
  EXPECT_FALSE(fs::exists(dir / "big.fz"));
  o = shell(dir, limited + "compress " + in + " -z big.fzmb -M ABS 0 --blocks 2 2");
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  EXPECT_FALSE(fs::exists(dir / "big.fzmb"));
  // The multi-block writers of one process too (the file as given in the message, an
  // existing file unchanged); under mpirun the ranks' collective writes are checked by
  // Mpi.collective_writes_replace_whole_or_not_at_all.
  write_file(dir / "keep.fzmb", "old bytes");
  o = shell(dir, limited + "compress " + in + " -z keep.fzmb -M ABS 0 --blocks 2 2");
  expect_clean_error(o, 1, "compress", "io: cannot write keep.fzmb: file too large", "size-limited multi-block");
  EXPECT_EQ(read_file(dir / "keep.fzmb"), "old bytes");
  o = shell(dir, limited + "decompress -z m.fzmb -o keep.f32 -o new.f32");
  expect_clean_error(o, 1, "decompress", "io: cannot write keep.f32: file too large", "size-limited multi-block planes");
  EXPECT_EQ(read_file(dir / "keep.f32"), "old bytes");
  EXPECT_FALSE(fs::exists(dir / "new.f32"));
  o = shell(dir, limited + "cp " + kGfsDims + " " + kGfsInputs + " --csv big.csv");
  expect_clean_error(o, 1, "cp", "io: cannot write big.csv: file too large", "size-limited CSV");
  EXPECT_FALSE(fs::exists(dir / "big.csv"));
  EXPECT_TRUE(leftovers(dir).empty()) << leftovers(dir).front();
  // A write that succeeds replaces the file (and keeps its permissions).
  fs::permissions(dir / "keep.f32", fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o keep.f32 -o new.f32").exit_code, 0);
  EXPECT_EQ(read_file(dir / "keep.f32").size(), 64u * 48u * 4u);
  EXPECT_EQ(fs::status(dir / "keep.f32").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  expect_clean_error(factz(dir, "decompress -z s.fz -o sub/u.f32 -o v.f32x"), 1, "decompress",
                     "cannot write sub/u.f32: folder sub does not exist", "missing folder");
  fs::create_directory(dir / "folder");
  expect_clean_error(factz(dir, "decompress -z s.fz -o folder -o v.f32x"), 1, "decompress",
                     "cannot write folder: is a directory", "a folder as output");
  EXPECT_TRUE(leftovers(dir).empty());
}

TEST(Cli, ReadOnlyOutputsAreNotReplaced) {
  // A user who makes a file read-only keeps it: every writer writes a temporary and renames it
  // over the output, which the folder allows whatever the file's mode, so factz refuses a file
  // the user may not write, before any output of the run is written. Root writes every file
  // (as cp does): as root the commands run as nobody (setpriv) in a folder everyone may write.
  TempDir dir;
  write_field(dir, synth::turbulence(64, 48, 18));
  ASSERT_EQ(factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  std::string run = quoted(kCli) + " ";
  if (::geteuid() == 0) {
    if (shell(dir, "command -v setpriv && id nobody && getent group nogroup").exit_code != 0)
      GTEST_SKIP() << "running as root without setpriv or the user nobody: a read-only file is writable to root";
    fs::permissions(dir.path(), fs::perms::all);
    for (const char* f : {"u.f32", "v.f32", "s.fz"}) fs::permissions(dir / f, fs::perms::all);
    run = "setpriv --reuid=nobody --regid=nogroup --clear-groups " + run;
  }
  write_file(dir / "ro.f32", "protected");
  write_file(dir / "ro.nc", "protected");
  write_file(dir / "rw.f32", "old");
  for (const char* f : {"ro.f32", "ro.nc"})
    fs::permissions(dir / f, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir / "rw.f32", fs::perms::all);
  struct Case {
    std::string sub, args, named;
  };
  const std::vector<Case> cases = {
      {"decompress", "-z s.fz -o rw.f32 -o ro.f32", "-o ro.f32"},
      {"decompress", "-z s.fz -o ro.f32 -o new.f32", "-o ro.f32"},
      {"compress", "-2 64 48 -i u.f32 -i v.f32 -z ro.f32", "-z ro.f32"},
      {"compress", "-2 64 48 -i u.f32 -i v.f32 -z ro.f32 --blocks 2 2", "-z ro.f32"},
      {"decompress", "-z s.fz -o ro.nc:u -o ro.nc:v --replace", "-o ro.nc:u"},
  };
  for (const auto& c : cases) {
    const Outcome o = shell(dir, run + c.sub + " " + c.args, true);
    expect_clean_error(o, 1, c.sub, "io: cannot write " + c.named + ": permission denied (the file is read-only",
                       c.sub + " " + c.args);
    EXPECT_EQ(read_file(dir / "ro.f32"), "protected") << c.args;
    EXPECT_EQ(read_file(dir / "ro.nc"), "protected") << c.args;
    EXPECT_EQ(read_file(dir / "rw.f32"), "old") << c.args << ": no output of the run is written";
    EXPECT_FALSE(fs::exists(dir / "new.f32")) << c.args;
  }
  // A file the user may write is replaced as before.
  const Outcome o = shell(dir, run + "decompress -z s.fz -o rw.f32 -o new.f32", true);
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(fs::file_size(dir / "rw.f32"), size_t(64 * 48 * 4));
}

TEST(Cli, UnusableInputPathsSayWhatAndWhy) {
  TempDir dir;
  write_field(dir, synth::turbulence(40, 30, 19));
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z m.fzmb --blocks 2 2").exit_code, 0);
  fs::create_directory(dir / "d");
  struct Case {
    std::string sub, args, needle;
  };
  const std::vector<Case> cases = {
      {"compress", "-2 40 30 -i d -i v.f32 -z x.fz", "cannot read d: is a directory"},
      {"compress", "-2 40 30 -i d.npy -i v.f32 -z x.fz", "cannot read d.npy: does not exist"},
      {"compress", "-2 40 30 -i u.f32 -i d -z x.fz --blocks 2 2", "cannot read d: is a directory"},
      {"compress", "-2 40 30 --scalar -i d -z x.fz", "cannot read d: is a directory"},
      {"decompress", "-z d -o a.f32 -o b.f32", "cannot read d: is a directory"},
      {"decompress", "-z d --region 0 0 4 4 -o a.f32 -o b.f32", "cannot read d: is a directory"},
      {"decompress", "-z nowhere.fz -o a.f32 -o b.f32", "cannot read nowhere.fz: does not exist"},
      {"info", "-z d", "cannot read d: is a directory"},
      {"verify", "-2 40 30 -i u.f32 -i v.f32 -d d -d v.f32", "cannot read d: is a directory"},
      {"cp", "-2 40 30 -i u.f32 -i d", "cannot read d: is a directory"},
      {"ct", "-2 40 30 -i d", "cannot read d: is a directory"},
      {"render", "-2 40 30 -i d -i v.f32 -o x.png", "cannot read d: is a directory"},
  };
  for (const auto& c : cases) {
    const Outcome o = factz(dir, c.sub + " " + c.args);
    expect_clean_error(o, 1, c.sub, c.needle, "factz " + c.sub + " " + c.args);
    EXPECT_EQ(o.err.find("9223372036854775807"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("out of memory"), std::string::npos) << o.err;
  }
  if (::geteuid() != 0) {  // root reads anything
    write_file(dir / "locked.f32", read_file(dir / "u.f32"));
    fs::permissions(dir / "locked.f32", fs::perms::none);
    expect_clean_error(factz(dir, "cp -2 40 30 -i locked.f32 -i v.f32"), 1, "cp", "locked.f32: permission denied",
                       "unreadable file");
  }
  // --region reads at offsets: a pipe cannot serve it, and says so.
  const Outcome pipe_region =
      shell(dir, "cat m.fzmb | " + quoted(kCli) + " decompress -z /dev/stdin --region 0 0 4 4 -o a.f32 -o b.f32");
  expect_clean_error(pipe_region, 1, "decompress", "not a regular file", "--region on a pipe");
}

TEST(Cli, PipesAndFifosAreReadAsStreams) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(40, 30, 20);
  write_field(dir, f);
  write_file(dir / "u.npy", npy_bytes(f.u, "(30, 40)"));
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z s.fz").exit_code, 0);
  ASSERT_EQ(factz(dir, "compress -2 40 30 -i u.f32 -i v.f32 -z m.fzmb --blocks 2 2").exit_code, 0);
  ASSERT_EQ(factz(dir, "decompress -z s.fz -o u2.f32 -o v2.f32").exit_code, 0);
  const std::string cli = quoted(kCli);
  const std::string stream = read_file(dir / "s.fz");
  ASSERT_EQ(shell(dir, "mkfifo fifo fifo.npy").exit_code, 0);
  // The writer side of a FIFO: bounded in time and detached from the test's output, so that
  // a reader that never opens the FIFO cannot leave a blocked process behind.
  auto feed = [](const std::string& what, const std::string& fifo) {
    return "(timeout 60 sh -c " + quoted(what + " > " + fifo) + " 2>/dev/null &); ";
  };

  // A FIFO as a component, as a stream, as a .npy; a pipe through /dev/stdin.
  Outcome o = shell(dir, feed("cat u.f32", "fifo") + cli + " compress -2 40 30 -i fifo -i v.f32 -z a.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "a.fz"), stream);
  o = shell(dir, feed("cat u.npy", "fifo.npy") + cli + " compress -2 40 30 -i fifo.npy -i v.f32 -z b.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "b.fz"), stream);
  o = shell(dir, "cat v.f32 | " + cli + " compress -2 40 30 -i u.f32 -i /dev/stdin -z c.fz");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "c.fz"), stream);
  o = shell(dir, feed("cat s.fz", "fifo") + cli + " decompress -z fifo -o u3.f32 -o v3.f32");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "u3.f32"), read_file(dir / "u2.f32"));
  EXPECT_EQ(read_file(dir / "v3.f32"), read_file(dir / "v2.f32"));
  o = shell(dir, feed("cat s.fz", "fifo") + cli + " info -z fifo");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  // A multi-block file through a pipe decodes whole, like the file.
  o = shell(dir, "cat m.fzmb | " + cli + " decompress -z /dev/stdin -o u4.f32 -o v4.f32");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  ASSERT_EQ(factz(dir, "decompress -z m.fzmb -o u5.f32 -o v5.f32").exit_code, 0);
  EXPECT_EQ(read_file(dir / "u4.f32"), read_file(dir / "u5.f32"));
  o = shell(dir, "cat m.fzmb | " + cli + " decompress -z - -o u6.f32 -o v6.f32");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(read_file(dir / "v6.f32"), read_file(dir / "v5.f32"));

  // The size is checked at the end of the stream: short, long.
  o = shell(dir, feed("head -c 100 u.f32", "fifo") + "exec " + cli + " compress -2 40 30 -i fifo -i v.f32 -z x.fz");
  expect_clean_error(o, 1, "compress", "fifo: expected 4800 bytes of float32 for 40x30, found 100", "short FIFO");
  o = shell(dir, feed("cat u.f32 u.f32", "fifo") + "exec " + cli + " compress -2 40 30 -i fifo -i v.f32 -z x.fz");
  expect_clean_error(o, 1, "compress", "found more than 4800", "long FIFO");
  EXPECT_FALSE(fs::exists(dir / "x.fz"));
}

TEST(Cli, NpyHeadersAreReadAsNumpyDefinesThem) {
  TempDir dir;
  const VectorField2D f = synth::turbulence(64, 48, 21);
  write_field(dir, f);
  ASSERT_EQ(factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z raw.fz").exit_code, 0);
  const std::string raw_stream = read_file(dir / "raw.fz");
  /// A .npy file with the given dict and version, written from the spec.
  auto npy = [&](const std::string& dict, int major = 1, const std::vector<float>* data = nullptr) {
    return testing::npy_file(dict, major, float_bytes(data ? *data : f.u));
  };
  const std::vector<std::pair<std::string, int>> valid = {
      {"{'descr':'<f4','fortran_order':False,'shape':(48,64)}", 1},  // the header
      {"{'shape': (48, 64), 'descr': '<f4', 'fortran_order': False}", 1},
      {"{'descr':'<f4','fortran_order':False,'shape':(3072,)}", 1},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 2},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }", 3},
  };
  for (const auto& [dict, major] : valid) {
    write_file(dir / "u.npy", npy(dict, major));
    const Outcome o = factz(dir, "compress -2 64 48 -i u.npy -i v.f32 -z npy.fz");
    ASSERT_EQ(o.exit_code, 0) << dict << " v" << major << "\n" << o.describe();
    EXPECT_EQ(read_file(dir / "npy.fz"), raw_stream) << dict;
  }
  struct Case {
    std::string dict, needle;
  };
  const std::vector<Case> refused = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (64, 48), }", "Fortran-order"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (48, 64), }", "big-endian"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (48, 32), }", "is not float32"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 48, 64), }", "3-dimensional"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3072), }", "1-tuple"},
      {"{'descr': '<f4', 'shape': (48, 64), }", "no 'fortran_order'"},
  };
  for (const auto& c : refused) {
    write_file(dir / "bad.npy", npy(c.dict));
    for (const char* sub : {"cp", "compress"}) {
      const std::string extra = std::string(sub) == "compress" ? " -z x.fz" : "";
      const Outcome o = factz(dir, std::string(sub) + " -2 64 48 -i bad.npy -i v.f32" + extra);
      expect_clean_error(o, 1, sub, c.needle, c.dict);
      EXPECT_NE(o.err.find("bad.npy: "), std::string::npos) << c.dict << ": the file is named in " << o.err;
    }
  }
  std::string v4 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (48, 64), }");
  v4[6] = 4;
  write_file(dir / "v4.npy", v4);
  expect_clean_error(factz(dir, "cp -2 64 48 -i v4.npy -i v.f32"), 1, "cp", "v4.npy: .npy format version 4.0",
                     "version 4");
  EXPECT_FALSE(fs::exists(dir / "x.fz"));
}

}  // namespace
}  // namespace factz

namespace factz {
namespace {

// Issue 17: a fill value declared with --fill is missing data, stored bit for bit; one
// nobody declared gets a warning naming it; ordinary data gets none.
TEST(Cli, FillValuesAreMaskedAndAForgottenOneIsNamed) {
  TempDir dir;
  VectorField2D f = synth::turbulence(64, 48, 5);
  for (int64_t y = 10; y < 30; ++y)
    for (int64_t x = 5; x < 25; ++x) f.u[size_t(y * 64 + x)] = f.v[size_t(y * 64 + x)] = 1e20f;
  write_field(dir, f);
  write_field(dir, synth::turbulence(64, 48, 6), "plain_");
  const Outcome quiet = factz(dir, "compress -2 64 48 -i plain_u.f32 -i plain_v.f32 -z p.fz");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.describe();
  EXPECT_EQ(quiet.err.find("warning"), std::string::npos) << quiet.err;
  const Outcome forgot = factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z a.fz");
  ASSERT_EQ(forgot.exit_code, 0) << forgot.describe();
  EXPECT_NE(forgot.err.find("warning: 800 value(s) equal 1e+20"), std::string::npos) << forgot.err;
  EXPECT_NE(forgot.err.find("--fill 1e+20"), std::string::npos) << forgot.err;
  const Outcome c = factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z s.fz --fill 1e20");
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_EQ(c.err.find("warning"), std::string::npos) << c.err;
  auto kv = key_values(c.err);
  EXPECT_EQ(kv["masked_vertices"], "400") << c.err;
  EXPECT_LT(std::stod(kv["eb_abs"]), 1.0) << "the bound must come from the valid range: " << c.err;
  const Outcome d = factz(dir, "decompress -z s.fz -o u2.f32 -o v2.f32");
  ASSERT_EQ(d.exit_code, 0) << d.describe();
  const Outcome v = factz(dir, "verify -2 64 48 -i u.f32 -i v.f32 -d u2.f32 -d v2.f32 --fill 1e20");
  ASSERT_EQ(v.exit_code, 0) << v.describe();
  kv = key_values(v.out);
  EXPECT_EQ(kv["violations"], "0") << v.out;
  EXPECT_EQ(kv["mask_mismatch"], "0") << v.out;
  EXPECT_EQ(kv["masked_vertices"], "400") << v.out;
  // The fill value comes back bit for bit where it was.
  const auto back = read_vector_field((dir / "u2.f32"), (dir / "v2.f32"), 64, 48);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->u[size_t(20 * 64 + 10)], 1e20f);
  // A reconstruction whose mask differs is a violation.
  VectorField2D other = back.value();
  other.u[0] = other.v[0] = 1e20f;
  write_field(dir, other, "w_");
  const Outcome bad = factz(dir, "verify -2 64 48 -i u.f32 -i v.f32 -d w_u.f32 -d w_v.f32 --fill 1e20");
  EXPECT_EQ(key_values(bad.out)["mask_mismatch"], "1") << bad.out;
  // Block by block (--blocks, one process; the MPI driver tallies the same way): the masks and
  // the errors over the vertices valid in both, as the whole comparison counts them (before,
  // it reported mask_mismatch 0 and masked_vertices 0 whatever the masks, and took the fill
  // values into the value range).
  for (const std::string d : {"-d u2.f32 -d v2.f32", "-d w_u.f32 -d w_v.f32"}) {
    const std::string args = "verify -2 64 48 -i u.f32 -i v.f32 " + d + " --fill 1e20";
    auto whole = key_values(factz(dir, args).out);
    auto blocks = key_values(factz(dir, args + " --blocks 3 2").out);
    for (const char* k : {"mask_mismatch", "masked_vertices", "violations", "max_abs_error_u", "max_abs_error_v",
                          "rmse", "psnr"})
      EXPECT_EQ(blocks[k], whole[k]) << k << " of " << d;
  }
  const Outcome usage = factz(dir, "compress -2 64 48 -i u.f32 -i v.f32 -z s.fz --fill lots");
  EXPECT_EQ(usage.exit_code, 2) << usage.describe();
  const Outcome cp = factz(dir, "cp -2 64 48 -i u.f32 -i v.f32 --fill-u 1e20 --fill-v 1e20");
  EXPECT_EQ(key_values(cp.out)["masked_vertices"], "400") << cp.describe();
}

// Every .npy reader of the CLI (2D vector planes, float64 planes, 3D components, scalar
// fields) words a wrong byte order, a wrong dtype and Fortran order alike, with the file's
// name and how to save it as FaCTz reads it (check_npy_float); a big-endian float64 file is
// named as such, not as a float32 it is not.
TEST(Cli, EveryNpyReaderWordsDtypeAndOrderErrorsAlike) {
  const TempDir dir;
  const int64_t nx = 20, ny = 16, nz = 12;
  const std::string values(size_t(nx * ny * nz) * 8, '\0');  // zeros, in any width
  auto npy = [&](const std::string& descr, bool fortran, const std::string& shape, size_t bytes) {
    return testing::npy_file("{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                                 ", 'shape': " + shape + ", }",
                             1, values.substr(0, bytes));
  };
  const std::string plane = "(16, 20)", cube = "(12, 16, 20)";
  const size_t n2 = size_t(nx * ny), n3 = size_t(nx * ny * nz);
  const std::string fortran = "bad.npy: Fortran-order .npy array (fortran_order: True); FaCTz reads C order: save "
                              "np.ascontiguousarray(a)";
  auto big = [](const std::string& type, const std::string& w) {
    return "bad.npy: big-endian " + type + " .npy ('>f" + w + "'); FaCTz reads little-endian " + type + " ('<f" + w +
           "'): save a.astype('<f" + w + "')";
  };
  const std::string not32 =
      "bad.npy: .npy dtype '<i4' is not float32; FaCTz reads little-endian float32 ('<f4'): save a.astype('<f4')";
  struct Case {
    std::string file, args, expected;
  };
  const std::string vector2 = "compress -2 20 16 -i bad.npy -i bad.npy -z x.fz";
  const std::string vector3 = "compress -3 20 16 12 -i bad.npy -i bad.npy -i bad.npy -z x.fz";
  const std::string scalar2 = "compress --scalar -i bad.npy -z x.fz";
  const std::string scalar3 = "compress -3 20 16 12 --scalar -i bad.npy -z x.fz";
  const std::vector<Case> cases = {
      {npy(">f4", false, plane, 4 * n2), vector2, big("float32", "4")},
      {npy("<f4", true, plane, 4 * n2), vector2, fortran},
      {npy("<i4", false, plane, 4 * n2), vector2, not32},
      {npy(">f8", false, plane, 8 * n2), vector2, big("float64", "8")},
      {npy("<f8", true, plane, 8 * n2), vector2, fortran},
      {npy(">f4", false, cube, 4 * n3), vector3, big("float32", "4")},
      {npy("<f4", true, cube, 4 * n3), vector3, fortran},
      {npy("<i4", false, cube, 4 * n3), vector3, not32},
      {npy(">f8", false, cube, 8 * n3), vector3, big("float64", "8")},
      {npy(">f4", false, plane, 4 * n2), scalar2, big("float32", "4")},
      {npy("<f4", true, plane, 4 * n2), scalar2, fortran},
      {npy("<i4", false, plane, 4 * n2), scalar2, not32},
      {npy(">f8", false, plane, 8 * n2), scalar2, big("float64", "8")},
      {npy("<f8", true, cube, 8 * n3), scalar3, fortran},
  };
  for (const Case& c : cases) {
    write_file(dir / "bad.npy", c.file);
    const Outcome o = factz(dir, c.args);
    expect_clean_error(o, 1, "compress", c.expected, c.args + " " + c.file.substr(10, 60));
    EXPECT_FALSE(fs::exists(dir / "x.fz")) << c.args;
  }
}

}  // namespace
}  // namespace factz
