// evaluate --out DIR [options] U_FILE...
//
// The evaluation harness (docs/evaluation.md): every compressor on every field at every
// bound. Each U_FILE is NAME_u_NXxNY.f32 with NAME_v_NXxNY.f32 beside it. Writes
// DIR/results.csv, DIR/results.json, DIR/table2.csv and DIR/table2.md; progress on stderr.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "factz/io.hpp"
#include "harness.hpp"
#include "report.hpp"

namespace {

using factz::eval::Compressor;

const char* kUsage =
    "usage: evaluate --out DIR [options] U_FILE...\n"
    "  U_FILE                NAME_u_NXxNY.f32 (NAME_v_NXxNY.f32 beside it)\n"
    "  --out DIR             results.csv, results.json, table2.csv, table2.md go here\n"
    "  --bounds B1,B2,...    REL bounds (default 1e-1 .. 1e-5 in half-decades, then 0)\n"
    "  --large-bounds LIST   REL bounds for fields above --large-vertices (default\n"
    "                        1e-1,1e-2,1e-3,1e-4,1e-5,0)\n"
    "  --large-vertices N    (default 16777216 = 4096^2: 4096^2 gets the full sweep)\n"
    "  --slow-max-vertices N zstd-19 runs only up to N vertices (default 4194304)\n"
    "  --compressors LIST    of zstd-3,zstd-19,zfp,sz3,factz-none,factz-B,factz-S (default all;\n"
    "                        sz3 only with --sz3)\n"
    "  --sz3 PATH            SZ3's command-line tool (built from its public source outside\n"
    "                        this repository): adds the sz3 baseline\n"
    "  --repeats N           timed repeats (default by size: 5, 3, or 1 above 4M vertices)\n"
    "  --threads T           OpenMP threads (default: OpenMP's)\n"
    "  --throughput-bound B  REL bound of the mode x coder sweep (default 1e-2)\n"
    "  --no-throughput       skip the mode x coder sweep\n"
    "  --dump COMP@BOUND     also write COMP's reconstruction at REL BOUND of every field as\n"
    "                        DIR/recon_NAME_COMP_BOUND_{u,v}_NXxNY.f32 (for factz render)\n";

int usage(const std::string& why) {
  std::fprintf(stderr, "evaluate: %s\n%s", why.c_str(), kUsage);
  return 2;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

bool to_double(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0' && std::isfinite(out);
}

std::unique_ptr<Compressor> make(const std::string& name, int threads, const std::string& sz3) {
  using factz::Coder;
  using factz::Mode;
  if (name == "zstd-3") return factz::eval::make_zstd(3, threads);
  if (name == "zstd-19") return factz::eval::make_zstd(19, threads);
  if (name == "zfp") return factz::eval::make_zfp(threads);
  if (name == "sz3" && !sz3.empty()) return factz::eval::make_sz3(sz3);
  if (name == "factz-none") return factz::eval::make_factz(Mode::none, Coder::huffman, threads);
  if (name == "factz-B") return factz::eval::make_factz(Mode::block, Coder::huffman, threads);
  if (name == "factz-S") return factz::eval::make_factz(Mode::speculative, Coder::huffman, threads);
  return nullptr;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, dump, sz3;
  bool names_given = false;
  std::vector<std::string> inputs;
  std::vector<std::string> names = {"zstd-3", "zstd-19", "zfp", "factz-none", "factz-B", "factz-S"};
  factz::eval::Settings settings;
  bool throughput = true;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> const char* { return k + 1 < argc ? argv[++k] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--no-throughput") {
      throughput = false;
    } else if (a == "--out" || a == "--bounds" || a == "--compressors" || a == "--repeats" || a == "--threads" ||
               a == "--throughput-bound" || a == "--dump" || a == "--large-bounds" || a == "--large-vertices" ||
               a == "--slow-max-vertices" || a == "--sz3") {
      const char* v = value();
      if (v == nullptr) return usage(a + " needs a value");
      double x = 0;
      if (a == "--out") out_dir = v;
      else if (a == "--dump") dump = v;
      else if (a == "--sz3") sz3 = v;
      else if (a == "--compressors") {
        names = split(v, ',');
        names_given = true;
      }
      else if (a == "--bounds" || a == "--large-bounds") {
        auto& list = a == "--bounds" ? settings.bounds : settings.large_bounds;
        list.clear();
        for (const auto& b : split(v, ','))
          if (!to_double(b, x) || x < 0) return usage("bad bound '" + b + "'");
          else list.push_back(x);
        if (list.empty()) return usage(a + " needs at least one bound");
      } else if (!to_double(v, x) || x < 0) {
        return usage("bad value '" + std::string(v) + "' for " + a);
      } else if (a == "--repeats") settings.repeats = int(x);
      else if (a == "--threads") settings.threads = int(x);
      else if (a == "--large-vertices") settings.large_vertices = int64_t(x);
      else if (a == "--slow-max-vertices") settings.slow_max_vertices = int64_t(x);
      else settings.throughput_bound = x;
    } else if (a.rfind("--", 0) == 0) {
      return usage("unknown option " + a);
    } else {
      inputs.push_back(a);
    }
  }
  if (out_dir.empty()) return usage("--out DIR is required");
  if (inputs.empty()) return usage("no fields given");
  const int threads = settings.threads;
  if (!sz3.empty() && !names_given) names.insert(names.begin() + 3, "sz3");  // after zfp

  std::vector<std::unique_ptr<Compressor>> owned;
  std::vector<const Compressor*> sweep, tput;
  for (const auto& n : names) {
    owned.push_back(make(n, threads, sz3));
    if (!owned.back()) return usage(n == "sz3" ? "sz3 needs --sz3 PATH" : "unknown compressor '" + n + "'");
    sweep.push_back(owned.back().get());
  }
  if (throughput)
    for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
      for (auto coder : {factz::Coder::huffman, factz::Coder::ans}) {
        owned.push_back(factz::eval::make_factz(mode, coder, threads));
        tput.push_back(owned.back().get());
      }
  std::unique_ptr<Compressor> dumper;
  double dump_bound = 0;
  if (!dump.empty()) {
    const auto at = dump.find('@');
    if (at == std::string::npos || !(dumper = make(dump.substr(0, at), threads, sz3)) ||
        !to_double(dump.substr(at + 1), dump_bound) || dump_bound < 0)
      return usage("--dump needs COMPRESSOR@REL_BOUND, e.g. zfp@1e-2");
  }

  struct Input {
    std::string name, u, v;
    int64_t nx, ny;
  };
  std::vector<Input> fields;
  for (const auto& u : inputs) {
    Input in{};
    in.u = u;
    if (!factz::eval::parse_vector_name(u, in.name, in.nx, in.ny, in.v))
      return usage("'" + u + "' is not NAME_u_NXxNY.f32");
    fields.push_back(in);
  }

  const auto t_all = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count(); };
  std::vector<factz::eval::Row> rows;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Input& in = fields[i];
    std::fprintf(stderr, "[%zu/%zu] %s %lldx%lld (%.0f s elapsed)\n", i + 1, fields.size(), in.name.c_str(),
                 static_cast<long long>(in.nx), static_cast<long long>(in.ny), elapsed());
    auto f = factz::read_vector_field(in.u, in.v, in.nx, in.ny);
    if (!f.ok()) {
      std::fprintf(stderr, "evaluate: %s: %s\n", in.u.c_str(), f.status().to_string().c_str());
      return 1;
    }
    auto r = factz::eval::evaluate_field(in.name, f.value(), sweep, tput, settings,
                                         [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
    if (!r.ok()) {
      std::fprintf(stderr, "evaluate: %s\n", r.status().to_string().c_str());
      return 1;
    }
    rows.insert(rows.end(), r->begin(), r->end());
    if (dumper) {
      const double eb = dump_bound * factz::eval::value_range(f.value());
      auto s = dumper->compress(f.value(), eb);
      auto d = s.ok() ? dumper->decompress(s.value(), in.nx, in.ny) : factz::Result<factz::VectorField2D>(s.status());
      if (!d.ok()) {
        std::fprintf(stderr, "evaluate: --dump: %s\n", d.status().to_string().c_str());
        return 1;
      }
      char bound[32];
      std::snprintf(bound, sizeof bound, "%g", dump_bound);
      const std::string stem = out_dir + "/recon_" + in.name + "_" + dumper->name() + "_" + bound;
      const std::string dims = std::to_string(in.nx) + "x" + std::to_string(in.ny) + ".f32";
      auto su = factz::write_plane(stem + "_u_" + dims, d->u, in.nx, in.ny);
      auto sv = factz::write_plane(stem + "_v_" + dims, d->v, in.nx, in.ny);
      if (!su.ok() || !sv.ok()) {
        std::fprintf(stderr, "evaluate: --dump: %s\n", (su.ok() ? sv : su).to_string().c_str());
        return 1;
      }
    }
    // Written after every field, so an interrupted run keeps what it measured.
    auto st = factz::eval::write_csv(out_dir + "/results.csv", rows);
    if (!st.ok()) {
      std::fprintf(stderr, "evaluate: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"finished_utc", now_utc()},
      {"wall_seconds", std::to_string(elapsed())},
      {"omp_threads", std::to_string(threads > 0 ? threads : omp_get_max_threads())},
      {"bound_mode", "REL (fraction of max - min over both components); every compressor gets the same absolute bound"},
      {"throughput_unit", "MB/s of raw float32 input (1e6 bytes), median of the timed repeats"},
  };
  auto table = factz::eval::table2(rows, settings.throughput_bound);
  for (auto st : {factz::eval::write_json(out_dir + "/results.json", rows, meta),
                  factz::eval::write_table2_csv(out_dir + "/table2.csv", table),
                  factz::eval::write_table2_markdown(out_dir + "/table2.md", table)})
    if (!st.ok()) {
      std::fprintf(stderr, "evaluate: %s\n", st.to_string().c_str());
      return 1;
    }
  std::fprintf(stderr, "evaluate: %zu rows, %zu fields in %.1f s; wrote %s/results.{csv,json}, table2.{csv,md}\n",
               rows.size(), fields.size(), elapsed(), out_dir.c_str());
  return 0;
}
