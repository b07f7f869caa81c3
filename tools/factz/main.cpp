// factz: the command-line program. Subcommands: compress, decompress, verify, cp (and those
// registered from tools/factz/cmd_*.cpp: ct, flow, h5filter, info, render). compress,
// decompress and verify also handle scalar fields (2D or 3D, docs/toposz.md).
// Statistics go to stderr as one key=value line, or to stdout as one JSON object with
// --json. Exit code 0 on success, 1 on error (one clear line on stderr), 2 on usage errors.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "common.hpp"
#include "field_files.hpp"
#include "stats_writer.hpp"
#include "factz/factz.hpp"
#include "factz/contour_tree.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/scalar.hpp"
#include "format/container.hpp"
#include "io/temp_files.hpp"
#include "streams/vector_stream.hpp"
#include "util/job_heap.hpp"

namespace factz::cli {  // defined in cmd_ct.cpp
double persistence_of(const Args& a);
int64_t mark_scalar_fill(const Args& a, factz::ScalarField& f);
bool scalar_float64_input(const Args& a, const char* flag);
bool scalar_stream_is_float64(const std::vector<uint8_t>& stream);
int run_compress_scalar64(const Args& a, factz::ScalarOptions o, const std::string& mode);
int run_decompress_scalar64(const Args& a, const std::vector<uint8_t>& stream);
int run_verify_scalar64(const Args& a);
/// verify's report of a scalar comparison (both value types); dtype: a "dtype" line, or none.
void print_scalar_comparison(const Args& a, const factz::ScalarComparison& c, double p, const char* dtype);
/// compress's report of a scalar field (both value types); dtype: a "dtype" line, or none.
void print_scalar_compression(const Args& a, const std::string& mode,
                              const factz::ScalarCompressStats& st, int64_t nx, int64_t ny, int64_t nz,
                              size_t stream_bytes, double secs, const char* dtype);
}  // namespace factz::cli
namespace factz::cli {  // defined in cmd_cp3d.cpp: 3D vector fields (-3 with three -i)
int run_cp3d(const Args& a);
int run_verify3d(const Args& a);
int run_compress3d(const Args& a);
int run_decompress3d(const Args& a, const std::vector<uint8_t>& stream);
}  // namespace factz::cli

namespace {

using factz::cli::Args;
using factz::cli::Command;

const factz::cli::OptionSpec kDims{
    "-2", 2, "NX NY",
    "2D grid, NX fastest (x), NY rows; needed for raw files, optional (and checked) for .npy and netCDF/HDF5 "
    "variables, which give their shape"};
const factz::cli::OptionSpec kJson{"--json", 0, "", "print one JSON object on stdout"};
const factz::cli::OptionSpec kExec{
    "-x", 1, "POLICY",
    "serial | omp (OpenMP's threads; 2D vector compress/decompress: one per 131072 vertices at most) | omp=T (T "
    "threads; 2D vector compress/decompress: at most T, one per 131072 vertices) | cuda | cuda:N (vector "
    "compress/decompress on CUDA device N; plain cuda: "
    "the node-local MPI rank modulo the device count); output bytes never depend on it"};
const factz::cli::OptionSpec kHelp{"--help", 0, "", "show this help"};
const factz::cli::OptionSpec kHelpShort{"-h", 0, "", "show this help"};
const factz::cli::OptionSpec kDims3{
    "-3", 3, "NX NY NZ", "3D grid, NX fastest (x), then NY, then NZ: a scalar field, or with three -i (compress, cp, verify) a vector field"};
const factz::cli::OptionSpec kBlocks{
    "--blocks", 2, "PX PY [PZ]",
    "domain decomposition (docs/multiblock.md): PX x PY blocks sharing their boundary rows/columns (PX x PY x PZ "
    "blocks sharing their boundary planes for a 3D vector field, -3 with three -i), stored exactly; writes a "
    "multi-block file. Under mpirun the blocks are spread over the ranks",
    false, 1};
const factz::cli::OptionSpec kPerRank{
    "--per-rank", 0, "",
    "with --blocks under mpirun: one block per rank (PX*PY ranks; PX*PY*PZ for a 3D field), each rank reading "
    "(compress, verify) or writing "
    "(decompress) only its own block; every field file name must contain %r, replaced by the rank"};
const factz::cli::OptionSpec kPersistence{
    "--persistence", 1, "P",
    "scalar fields: contour tree simplification threshold, a fraction of the value range (default 1e-2)"};

const Command kCompress{
    "compress", "Compress a 2D vector field (two float32 planes: raw .f32, .npy, or netCDF/HDF5 variables), a 3D vector field (three float32 or float64 planes with -3) or a 2D/3D scalar field into a FaCTz stream.",
    "factz compress [-2 NX NY] -i U -i V -z OUT [-M ABS|REL E] [--mode speculative|block|none] [--anchor-stride S] [--coder ans|huffman] [--zstd|--no-zstd] [--fill V] [-x POLICY] [--json]\n"
    "       factz compress -3 NX NY NZ -i U -i V -i W -z OUT [-M ABS|REL E] [--mode speculative|block|none] [--anchor-stride S] [--coder ans|huffman] [--zstd|--no-zstd] [--fill V] [-x serial|omp[=T]] [--json]   (3D vector; with --blocks PX PY PZ a multi-block file)\n"
    "       factz compress -3 NX NY NZ | -2 NX NY --scalar  -i S -z OUT [-M ABS|REL E] [--mode contour-tree|none] [--persistence P] [--coder smallest|ans|huffman|context] [--zstd|--no-zstd] [--fill V] [-x POLICY] [--json]",
    {kDims, kDims3,
     {"-i", 1, "FILE",
      "input component (give twice: u then v; three times with -3 for a 3D vector field: raw or .npy; once for a "
      "scalar field): raw float32, .npy, FILE.nc:VAR, "
      "FILE.nc:VAR[time=3,depth=0] or VAR[3,0,:,:] (the last two dimensions are y and x), FILE.h5:/path/to/dataset; "
      "'-' reads stdin. A variable's _FillValue / missing_value are declared fill values (--fill overrides)",
      true},
     {"-z", 1, "FILE", "output stream; '-' writes stdout"},
     {"-M", 2, "ABS|REL E", "error bound: ABS e (absolute) or REL t (t times the value range); default REL 1e-2"},
     {"--mode", 1, "MODE",
      "speculative (FaCTz-S, keeps every critical point, best ratio; default) | block (FaCTz-B, keeps every "
      "critical point, fastest) | none (plain error bound, no topology guarantee) | contour-tree (scalar fields only: "
      "TopoSZ, keeps the contour tree simplified at --persistence; the default for scalar fields)"},
     {"--scalar", 0, "", "the single -i is a scalar field (implied by -3, --persistence and --mode contour-tree)"},
     kPersistence,
     {"--anchor-stride", 1, "S", "speculative mode: anchors every S vertices, a power of two in [2, 4096] (default 4096: one exact anchor on grids up to 4096, every other vertex predicted)"},
     {"--coder", 1, "CODER", "ans (byte-plane interleaved rANS with order-1 contexts; default for vector fields) | huffman (canonical Huffman) | context (scalar fields only: adaptive binary coding with the neighbours' codes as contexts) | smallest (scalar fields only, their default: each of the three, the smallest stream kept)"},
     {"--predictor", 1, "PRED",
      "scalar fields only: best (default: both predictors, the smaller stream kept; contour-tree races both) | "
      "lorenzo (index order; streams older builds read) | interpolation (multilevel cubic, format version 22)"},
     {"--zstd", 0, "", "apply the zstd lossless stage (default)"},
     {"--no-zstd", 0, "", "skip the zstd stage"},
     factz::cli::fill_option(), factz::cli::fill_u_option(), factz::cli::fill_v_option(), factz::cli::dtype_option(),
     {"--progress", 0, "",
      "print progress on stderr (the stages done; contour-tree rounds with the vertices still to fix); by default "
      "only when stderr is a terminal and the run takes over a second"},
     {"--keep-coordinates", 0, "",
      "netCDF inputs: also store the auxiliary coordinate variables that span two or more of the field's dimensions "
      "(a curvilinear grid's lat(y, x), lon(y, x), named by the variables' coordinates attribute), losslessly; the "
      "small ones (scalar and 1D coordinates, grid_mapping variables, 1D coordinates' cell bounds) are always stored"},
     kBlocks, kPerRank, kExec, kJson, kHelp, kHelpShort}};

/// The contour-tree rounds on stderr: every round with --progress, else on a terminal once
/// the step has run for a second. Never on stdout (statistics and --json live there).
factz::ScalarProgressHook scalar_progress(const Args& a) {
  const bool asked = a.has("--progress");
  if (!asked && !isatty(STDERR_FILENO)) return {};
  return [asked](const factz::ScalarProgress& p) {
    if (!asked && p.seconds < 1.0) return;
    std::fprintf(stderr, "factz: contour tree, step %lld round %lld: %lld vertices to fix, %lld exact (%.1f s)\n",
                 static_cast<long long>(p.step), static_cast<long long>(p.round),
                 static_cast<long long>(p.nodes_to_fix), static_cast<long long>(p.exact_vertices), p.seconds);
  };
}

const Command kDecompress{
    "decompress", "Decompress a FaCTz stream into two float32 planes (three for a 3D vector stream), or one for a scalar stream (.npy when the name ends in .npy, a netCDF/HDF5 variable for FILE.nc:VAR or FILE.h5:/path, raw otherwise).",
    "factz decompress -z IN -o U -o V [-x POLICY] [--json]\n       factz decompress -z IN -o U -o V -o W [-x serial|omp[=T]] [--json]   (3D vector stream)\n"
    "       factz decompress -z IN -o S [-x POLICY] [--json]   (scalar stream)",
    {{"-z", 1, "FILE", "input stream; '-' reads stdin"},
     {"-o", 1, "FILE",
      "output component (give twice: u then v; three times for a 3D vector stream: raw or .npy only; once for a "
      "scalar stream): raw, .npy, FILE.nc:VAR or FILE.h5:/path "
      "(netCDF-4; both variables may go to one file; the original's dimensions, attributes and coordinates when "
      "the stream recorded them); '-' writes stdout",
      true},
     {"--region", 4, "X0 Y0 X1 Y1 | X0 Y0 Z0 X1 Y1 Z1",
      "multi-block file: decode only the window [X0, X1) x [Y0, Y1) (x [Z0, Z1) for a 3D file), reading only the "
      "blocks it touches",
      false, 2},
     {"--repack", 0, "",
     "netCDF / HDF5 outputs of variables read from packed integers (scale_factor / add_offset): write those "
     "integers back, each value's nearest, with the file's packing attributes and type (lossless when the bound "
     "was below the limit compress notes); other variables stay floats, with a warning"},
     {"--replace", 0, "",
      "netCDF / HDF5 outputs: replace an existing file (without it, an existing non-empty file is refused: "
      "FILE.nc:VAR writes a whole new file, it does not add VAR to one)"},
    kPerRank, kExec, kJson, kHelp, kHelpShort}};

const Command kVerify{
    "verify", "Compare an original and a decompressed field: critical points lost (P1), spurious (P2), type changed (P3), errors; "
    "for scalar fields the simplified contour trees (false positive / negative / type, arcs, pairing), errors.",
    "factz verify [-2 NX NY] -i U -i V -d U2 -d V2 [--fill V] [-x POLICY] [--json]\n"
    "       factz verify -2 NX NY | -3 NX NY NZ -i S -d S2 [--persistence P] [--fill V] [-x POLICY] [--json]   (scalar)\n"
    "       factz verify -3 NX NY NZ -i U -i V -i W -d U2 -d V2 -d W2 [--fill V] [-x POLICY] [--json]   (3D vector)",
    {kDims, kDims3,
     {"-i", 1, "FILE", "original component (u then v; once for a scalar field): raw, .npy, FILE.nc:VAR[...], FILE.h5:/path", true},
     {"-d", 1, "FILE", "decompressed component (u then v; once for a scalar field); the original's fill values apply", true},
     kPersistence,
     {"--blocks", 2, "PX PY [PZ]",
      "check block by block (the layout of compress --blocks; PX PY PZ for a 3D vector field); under mpirun each "
      "rank checks its blocks and the counts are summed",
      false, 1},
     factz::cli::fill_option(), factz::cli::fill_u_option(), factz::cli::fill_v_option(), factz::cli::dtype_option(),
     kPerRank, kExec, kJson, kHelp, kHelpShort}};

const Command kCp{
    "cp", "Extract the critical points of a 2D or 3D vector field (exact, Simulation of Simplicity).",
    "factz cp [-2 NX NY] -i U -i V [--fill V] [--json] [--csv FILE] [-x POLICY]\n       factz cp -3 NX NY NZ -i U -i V -i W [--fill V] [--json] [--csv FILE] [-x POLICY]   (3D)",
    {kDims, kDims3,
     {"-i", 1, "FILE", "component (u then v): raw, .npy, FILE.nc:VAR[...], FILE.h5:/path", true},
     {"--csv", 1, "FILE", "write one row per critical point: triangle,row,column,mu0,mu1,mu2,type"},
     factz::cli::fill_option(), factz::cli::fill_u_option(), factz::cli::fill_v_option(), factz::cli::dtype_option(),
     kExec, kJson, kHelp, kHelpShort}};

// info, render, ct, flow and h5filter live in their own files (cmd_*.cpp).
const std::vector<const Command*> kCommands = {&kCompress, &kDecompress, &kVerify, &kCp};

std::string top_help() {
  std::ostringstream os;
  os << "factz: error-bounded lossy compression of 2D vector fields that keeps every critical point,\n"
     << "and of 2D/3D scalar fields that keeps the simplified contour tree\n\n"
     << "usage: factz SUBCOMMAND [options]   (factz SUBCOMMAND --help for its options)\n\nsubcommands:\n";
  auto line = [&os](const Command& c) {
    std::string n = "  " + c.name;
    n.resize(14, ' ');
    os << n << c.summary << "\n";
  };
  for (const auto* c : kCommands) line(*c);
  for (const auto& r : factz::cli::registered_commands()) line(*r.spec);
  return os.str();
}

using factz::cli::bound_of;
using factz::cli::check;
using factz::cli::coder_of;
using factz::cli::dims;
using factz::cli::exec_of;
using factz::cli::fail;
using factz::cli::Failure;
using factz::cli::seconds_since;
using factz::cli::StatsWriter;
using In = StatsWriter::In;
using factz::cli::refuse_clobbering;
using factz::cli::take;
using factz::cli::two_files;

/// The critical points of the -i field (float32, or float64: factz::cli::float64_inputs),
/// with its size and missing vertices.
std::vector<factz::CriticalPoint> cp_input(const Args& a, int64_t& nx, int64_t& ny, int64_t& masked, bool& float64) {
  float64 = factz::cli::float64_inputs(a, "-i");
  if (float64) {
    const auto in = factz::cli::read_vector_input64(a, "-i", "cp");
    nx = in.field.nx;
    ny = in.field.ny;
    masked = in.masked;
    return take(factz::critical_points(in.field, exec_of(a)));
  }
  const auto in = factz::cli::read_vector_input(a, "-i", "cp");
  nx = in.field.nx;
  ny = in.field.ny;
  masked = in.masked;
  return take(factz::critical_points(in.field, exec_of(a)));
}

int run_cp(const Args& a) {
  // Three -i: a 3D vector field (-3 gives its grid, or the variables do).
  if (a.has("-3") || (a.has("-i") && a.all("-i").size() == 3)) return factz::cli::run_cp3d(a);
  two_files(a, "-i");
  refuse_clobbering(a, {"-i"}, {"--csv"});
  int64_t nx = 0, ny = 0, masked = 0;
  bool float64 = false;
  const auto cps = cp_input(a, nx, ny, masked, float64);
  int64_t counts[factz::kCpTypeCount] = {};
  for (const auto& c : cps) ++counts[int(c.type)];
  if (a.has("--csv")) {  // built in memory, written (and checked) as one file
    std::string csv = "triangle,row,column,mu0,mu1,mu2,type\n";
    char buf[256];
    for (const auto& c : cps) {
      std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,%.9g,%.9g,%.9g,%s\n", (long long)c.triangle,
                    (long long)c.row, (long long)c.column, c.mu[0], c.mu[1], c.mu[2],
                    factz::cp_type_name(c.type));
      csv += buf;
    }
    check(factz::write_bytes(a.get("--csv"), std::vector<uint8_t>(csv.begin(), csv.end())));
  }
  StatsWriter types, s;
  for (int t = 0; t < factz::kCpTypeCount; ++t) types.count(factz::cp_type_name(factz::CpType(t)), counts[t]);
  s.count("nx", nx, In::json).count("ny", ny, In::json).count("critical_points", cps.size());
  s.count("masked_vertices", masked).text("dtype", float64 ? "float64" : "float32", In::json);
  s.json("types", types.object());
  for (int t = 0; t < factz::kCpTypeCount; ++t) s.count(factz::cp_type_name(factz::CpType(t)), counts[t], In::text);
  s.print(a.has("--json"), true);
  return 0;
}

int run_verify_scalar(const Args& a) {
  if (a.all("-i").size() != 1 || a.all("-d").size() != 1) fail("give -i and -d once each for a scalar field", 2);
  if (factz::cli::scalar_float64_input(a, "-i") || factz::cli::scalar_float64_input(a, "-d"))
    return factz::cli::run_verify_scalar64(a);
  const double p = factz::cli::persistence_of(a);
  factz::Policy policy;
  const factz::Exec e = exec_of(a, &policy);
  std::vector<float> file_fills;
  auto orig = factz::cli::read_scalar_input(a, "-i", "verify", nullptr, &file_fills);
  auto dec = factz::cli::read_scalar_input(a, "-d", "verify", &orig);
  // The original's fill values (its file's, or --fill) apply to the reconstruction too.
  if (!factz::cli::fill_of(a).u)
    for (float fill : file_fills) factz::mark_missing(dec, fill);
  factz::cli::mark_scalar_fill(a, orig);
  factz::cli::mark_scalar_fill(a, dec);
  factz::cli::print_scalar_comparison(
      a, take(factz::compare_scalar(orig, dec, factz::BoundMode::rel, p, policy, e.threads)), p, nullptr);
  return 0;
}

/// verify of float64 fields: the original (-i) and the reconstruction (-d) are read as
/// float64 (a '<f8' .npy, raw with --dtype f64, or float64 netCDF / HDF5 variables) and
/// compared exactly in double.
int run_verify64(const Args& a) {
  if (!factz::cli::float64_inputs(a, "-i") || !factz::cli::float64_inputs(a, "-d"))
    fail("invalid_argument: verify compares a float64 original with a float64 reconstruction: give both -i and -d "
         "as '<f8' .npy files, float64 variables, or raw files with --dtype f64");
  const auto orig = factz::cli::read_vector_input64(a, "-i", "verify");
  const auto dec = factz::cli::read_vector_input64(a, "-d", "verify", &orig);  // the original's fill values apply
  const auto c = take(factz::compare(orig.field, dec.field, exec_of(a)));
  StatsWriter s;
  factz::cli::add_comparison(s, c);
  s.num("value_range", c.value_range, In::json).text("dtype", "float64", In::json);
  s.print(a.has("--json"), true);
  return 0;
}

int run_verify(const Args& a) {
  if (a.has("--blocks") || a.has("--per-rank")) return factz::cli::run_blocks_verify(a);
  if (a.has("-i") && a.all("-i").size() == 3) return factz::cli::run_verify3d(a);  // -3, or the variables' grid
  if (a.has("-3") || (a.has("-i") && a.has("-d") && a.all("-i").size() == 1 && a.all("-d").size() == 1))
    return run_verify_scalar(a);
  two_files(a, "-i");
  two_files(a, "-d");
  if (factz::cli::float64_inputs(a, "-i") || factz::cli::float64_inputs(a, "-d")) return run_verify64(a);
  const auto orig = factz::cli::read_vector_input(a, "-i", "verify");
  // The original's declared fill values apply to the reconstruction too.
  const auto dec = factz::cli::read_vector_input(a, "-d", "verify", &orig);
  const auto c = take(factz::compare(orig.field, dec.field, exec_of(a)));
  StatsWriter s;
  factz::cli::add_comparison(s, c);
  s.num("value_range", c.value_range, In::json);
  s.print(a.has("--json"), true);
  return 0;
}

bool scalar_compress_request(const Args& a) {
  return a.has("-3") || a.has("--scalar") || a.has("--persistence") || a.get("--mode") == "contour-tree";
}

int run_compress_scalar(const Args& a) {
  if (!a.has("-i") || a.all("-i").size() != 1) fail("give -i once for a scalar field", 2);
  if (!a.has("-z")) fail("missing -z OUT", 2);
  factz::ScalarOptions o;
  const factz::Exec e = exec_of(a, &o.policy);
  o.threads = e.threads;
  bound_of(a, o.bound_mode, o.bound);
  const std::string mode = a.get("--mode", "contour-tree");
  if (mode == "contour-tree") o.mode = factz::ScalarMode::contour_tree;
  else if (mode == "none") o.mode = factz::ScalarMode::none;
  else fail("--mode must be contour-tree or none for a scalar field, got '" + mode + "'", 2);
  if (a.has("--anchor-stride")) fail("--anchor-stride applies to vector fields (--mode speculative) only", 2);
  if (a.has("--persistence") && o.mode != factz::ScalarMode::contour_tree)
    fail("--persistence applies to --mode contour-tree only", 2);
  o.persistence = factz::cli::persistence_of(a);
  coder_of(a, o.coder, o.zstd, true);
  const std::string predictor = a.get("--predictor", "best");
  if (predictor == "best") o.predictor = factz::ScalarPredictor::best;
  else if (predictor == "lorenzo") o.predictor = factz::ScalarPredictor::lorenzo;
  else if (predictor == "interpolation") o.predictor = factz::ScalarPredictor::interpolation;
  else fail("--predictor must be best, lorenzo or interpolation, got '" + predictor + "'", 2);
  o.progress = scalar_progress(a);
  if (factz::cli::scalar_float64_input(a, "-i")) return factz::cli::run_compress_scalar64(a, o, mode);
  auto field = factz::cli::read_scalar_input(a, "-i", "compress", nullptr, nullptr, &o.source);  // section 12
  factz::cli::mark_scalar_fill(a, field);
  const int64_t nx = field.nx, ny = field.ny, nz = field.nz;
  factz::ScalarCompressStats st;
  const auto t0 = std::chrono::steady_clock::now();
  const auto stream = take(factz::compress_scalar(field, o, &st));
  const double secs = seconds_since(t0);
  check(factz::write_bytes(a.get("-z"), stream));
  factz::cli::print_scalar_compression(a, mode, st, nx, ny, nz, stream.size(), secs, nullptr);
  return 0;
}

/// Threads for a 2D vector field of `vertices` vertices: -x omp=T asks for at most T. A
/// field under 2 x kValuesPerDefaultThread vertices runs on fewer (the default's rule): on
/// fields that small the other threads' start-up and synchronisation cost more than their
/// share of the work (a 360 x 181 field decompressed in 17.8 ms on two threads against
/// 13.8 ms on one; docs/benchmarks.md). The bytes and values never depend on it.
int useful_threads(int requested, int64_t vertices) {
  return requested <= 1 ? requested : factz::detail::threads_capped(requested, vertices);
}

/// compress of a float64 field (a '<f8' .npy, raw float64 with --dtype f64, or float64
/// netCDF / HDF5 variables): a float64 stream (format version 6), on the CPU or with -x
/// cuda on the GPU (the same bytes).
int run_compress64(const Args& a, factz::Options o) {
  auto in = factz::cli::read_vector_input64(a, "-i", "compress");
  const int64_t nx = in.field.nx, ny = in.field.ny;
  o.threads = useful_threads(o.threads, nx * ny);
  o.source = std::move(in.source);  // where the field came from: section 12 (netCDF / HDF5 inputs)
  factz::CompressStats st;
  const auto t0 = std::chrono::steady_clock::now();
  const auto stream = take(factz::compress(std::move(in.field), o, &st));  // the planes are not needed after
  const double secs = seconds_since(t0);
  check(factz::write_bytes(a.get("-z"), stream));
  factz::cli::print_vector_compression(a, o, st, nx, ny, 0, 16, true, stream.size(), secs);
  return 0;
}

int run_compress(const Args& a) {
  refuse_clobbering(a, {"-i"}, {"-z"});  // --per-rank file names are checked once expanded (blocks.cpp)
  // --blocks and --per-rank take float32 and float64 inputs (blocks.cpp decides from the files).
  if (a.has("--keep-coordinates") && a.has("--per-rank"))
    fail("--keep-coordinates: per-rank files are blocks, not the field's variables (their file keeps no source "
         "record)", 2);
  // The variables read bring the auxiliary variables their attributes name (the source record).
  factz::cli::read_auxiliaries(a.has("--keep-coordinates") ? factz::variable_io::Auxiliaries::all
                                                           : factz::variable_io::Auxiliaries::small);
  if (a.has("--predictor") && (!scalar_compress_request(a) || a.has("--blocks") || a.has("--per-rank") ||
                                (a.has("-i") && a.all("-i").size() != 1)))
    fail("--predictor applies to a scalar field (one -i, without --blocks)", 2);
  if (a.has("--blocks")) return factz::cli::run_blocks_compress(a);  // 2D, or 3D with -3 (blocks3d.cpp)
  if (a.has("-i") && a.all("-i").size() == 3) return factz::cli::run_compress3d(a);  // -3, or the variables' grid
  if (a.has("--per-rank")) return factz::cli::run_blocks_compress(a);
  if (scalar_compress_request(a)) return run_compress_scalar(a);
  two_files(a, "-i");
  if (!a.has("-z")) fail("missing -z OUT", 2);
  factz::Options o = factz::cli::vector_compress_options(a, true);
  o.progress = factz::cli::compress_progress(a);
  if (factz::cli::float64_inputs(a, "-i")) return run_compress64(a, std::move(o));
  auto in = factz::cli::read_vector_input(a, "-i", "compress");
  const int64_t nx = in.field.nx, ny = in.field.ny;
  o.threads = useful_threads(o.threads, nx * ny);
  o.source = std::move(in.source);  // where the field came from: section 12 (netCDF / HDF5 inputs)
  factz::CompressStats st;
  const auto t0 = std::chrono::steady_clock::now();
  // The planes are not needed after: given up, they are the speculative mode's working state.
  // -x cuda: o.policy runs it on the GPU.
  const auto stream = take(factz::compress(std::move(in.field), o, &st));
  const double secs = seconds_since(t0);
  check(factz::write_bytes(a.get("-z"), stream));
  factz::cli::print_vector_compression(a, o, st, nx, ny, 0, 8, false, stream.size(), secs);
  return 0;
}

int run_decompress_scalar(const Args& a, const std::vector<uint8_t>& stream) {
  if (factz::cli::scalar_stream_is_float64(stream)) return factz::cli::run_decompress_scalar64(a, stream);
  factz::DecompressOptions o;
  factz::Exec e = exec_of(a, &o.policy);
  o.threads = e.threads;
  const auto t0 = std::chrono::steady_clock::now();
  const auto field = take(factz::decompress_scalar(stream, o));
  const double secs = seconds_since(t0);
  const std::vector<uint64_t> shape = field.nz > 1 ? std::vector<uint64_t>{uint64_t(field.nz), uint64_t(field.ny),
                                                                           uint64_t(field.nx)}
                                                    : std::vector<uint64_t>{uint64_t(field.ny), uint64_t(field.nx)};
  const auto source = take(factz::stream_source(stream));  // a variable's dimensions, attributes, coordinates
  factz::cli::write_field_outputs({a.get("-o")}, {&field.values}, shape, source, field.mask, "decompress", {},
                                  a.has("--repack"));
  factz::cli::print_decompression(a, field.nx, field.ny, field.nz, false, double(field.size()) * 4.0, stream.size(),
                                  secs);
  return 0;
}

// Whether a stream holds a scalar field (one component); false when it cannot be parsed.
bool is_scalar_stream(const std::vector<uint8_t>& stream) {
  auto parsed = factz::detail::parse_container(stream);
  return parsed.ok() && parsed->header.components == 1;
}

// Whether a stream holds a 3D vector field (three components); false when it cannot be parsed.
bool is_vector3d_stream(const std::vector<uint8_t>& stream) {
  auto parsed = factz::detail::parse_container(stream);
  return parsed.ok() && parsed->header.components == 3;
}

/// Whether the regular file at `path` starts with the multi-block magic. Only regular files
/// are looked at: a pipe or FIFO (or stdin) cannot be read twice, so its bytes are read once
/// and tested by run_decompress.
bool is_multiblock_file(const std::string& path) {
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[4] = {};
  in.read(reinterpret_cast<char*>(head), 4);
  return in.gcount() == 4 && factz::is_multiblock(head);
}

/// decompress of a float64 stream: the planes as '<f8' .npy, raw float64 or NC_DOUBLE
/// variables (missing vertices with the 64 bits they held), as the float32 path writes them.
int run_decompress64(const Args& a, const std::vector<uint8_t>& stream, const factz::DecompressOptions& o) {
  const auto [uo, vo] = two_files(a, "-o");
  const auto t0 = std::chrono::steady_clock::now();
  const auto field = take(factz::decompress64(stream, o));
  const double secs = seconds_since(t0);
  const auto source = take(factz::stream_source(stream));
  factz::cli::write_field_outputs({uo, vo}, {&field.u, &field.v}, {uint64_t(field.ny), uint64_t(field.nx)}, source,
                                  field.mask, "decompress", {}, a.has("--repack"));
  factz::cli::print_decompression(a, field.nx, field.ny, 0, true, double(field.size()) * 16.0, stream.size(), secs);
  return 0;
}

int run_decompress(const Args& a) {
  if (!a.has("-z")) fail("missing -z IN", 2);
  refuse_clobbering(a, {"-z"}, {"-o"});  // --per-rank file names are checked once expanded (blocks.cpp)
  if (a.has("--region") || a.has("--per-rank") || is_multiblock_file(a.get("-z")))
    return factz::cli::run_blocks_decompress(a);
  if (a.has("-o") && a.all("-o").size() == 1) {  // a scalar stream, which only the stream can tell
    auto bytes = factz::read_bytes(a.get("-z"));
    if (!bytes.ok())
      fail("give -o twice (u then v) for a vector stream, once for a scalar stream (cannot read the stream: " +
               bytes.status().to_string() + ")", 2);
    if (factz::is_multiblock(bytes.value()))
      fail("the stream is a multi-block file of a vector field: give -o twice (u then v), or three times (u, v, w) "
           "for a 3D field", 2);
    if (is_vector3d_stream(bytes.value()))
      fail("the stream holds a 3D vector field: give -o three times (u, v, w)", 2);
    if (!is_scalar_stream(bytes.value()) && factz::detail::parse_container(bytes.value()).ok())
      fail("the stream holds a 2D vector field: give -o twice (u then v)", 2);
    return run_decompress_scalar(a, bytes.value());
  }
  if (a.has("-o") && a.all("-o").size() == 3) {
    const auto stream = take(factz::read_bytes(a.get("-z")));
    // A multi-block file through a pipe or stdin (a regular file went to the driver above).
    if (factz::is_multiblock(stream)) return factz::cli::run_blocks_decompress_bytes(a, stream);
    if (!is_vector3d_stream(stream) && factz::detail::parse_container(stream).ok())
      fail(std::string("the stream holds a ") + (is_scalar_stream(stream) ? "scalar field: give -o once" :
                                                 "2D vector field: give -o twice (u then v)"), 2);
    return factz::cli::run_decompress3d(a, stream);
  }
  auto [uo, vo] = two_files(a, "-o");
  if (uo == "-" && vo == "-") fail("only one component can go to stdout", 2);
  factz::DecompressOptions o = factz::cli::vector_decompress_options(a);  // -x cuda: on the GPU
  const auto stream = take(factz::read_bytes(a.get("-z")));
  // A multi-block file through a pipe or stdin (a regular file went to the driver above).
  if (factz::is_multiblock(stream)) return factz::cli::run_blocks_decompress_bytes(a, stream);
  if (is_scalar_stream(stream)) fail("the stream holds a scalar field: give -o once", 2);
  if (is_vector3d_stream(stream)) fail("the stream holds a 3D vector field: give -o three times (u, v, w)", 2);
  const factz::StreamInfo info = take(factz::stream_info(stream));
  o.threads = useful_threads(o.threads, int64_t(info.nx) * int64_t(info.ny));
  if (info.dtype == factz::DType::float64) return run_decompress64(a, stream, o);
  const auto t0 = std::chrono::steady_clock::now();
  const auto field = take(factz::decompress(stream, o));
  const double secs = seconds_since(t0);
  // netCDF / HDF5 outputs get the variables' dimensions, attributes and coordinates back.
  const auto source = take(factz::stream_source(stream));
  factz::cli::write_field_outputs({uo, vo}, {&field.u, &field.v}, {uint64_t(field.ny), uint64_t(field.nx)}, source,
                                  field.mask, "decompress", {}, a.has("--repack"));
  factz::cli::print_decompression(a, field.nx, field.ny, 0, false, double(field.size()) * 8.0, stream.size(), secs);
  return 0;
}

/// Ranks of the mpirun that started this process (0 when not started by one).
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

bool launched_rank_zero() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v) == 0;
  return true;
}

/// Whether the command goes to the multi-block driver (the only one that shares work
/// between ranks).
bool multiblock_command(const Command* cmd, const Args& a) {
  if (cmd == &kCompress || cmd == &kVerify) return a.has("--blocks") || a.has("--per-rank");
  if (cmd == &kDecompress)
    return a.has("--region") || a.has("--per-rank") || (a.has("-z") && is_multiblock_file(a.get("-z")));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  factz::detail::prepare_job_heap();  // one heap, no mmap per array, huge pages first (util/job_heap.hpp)
  // Ctrl-C, kill or a closed terminal during a write removes the hidden temporary file.
  factz::temp_files::install_signal_cleanup(factz::variable_io::unlink_temporaries);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << top_help();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "factz 0.1.0 (stream format v2 to v" << factz::detail::kFormatVersion << "; reads v1 Huffman streams)\n"
              << "fields: raw float32, .npy; " << factz::variable_io::built_in() << "\n";
    return 0;
  }
  const Command* cmd = nullptr;
  factz::cli::RunFn registered_run = nullptr;
  for (const auto* c : kCommands)
    if (c->name == args[0]) cmd = c;
  for (const auto& r : factz::cli::registered_commands())
    if (!cmd && r.spec->name == args[0]) {
      cmd = r.spec;
      registered_run = r.run;
    }
  if (!cmd) {
    std::cerr << "factz: unknown subcommand '" << args[0] << "' (see factz --help)\n";
    return 2;
  }
  Args parsed;
  std::string error;
  if (!factz::cli::parse(*cmd, {args.begin() + 1, args.end()}, parsed, error)) {
    std::cerr << "factz " << cmd->name << ": " << error << "\n";
    return 2;
  }
  if (parsed.has("--help") || parsed.has("-h")) {
    std::cout << factz::cli::help_text(*cmd);
    return 0;
  }
  try {
    // Under mpirun with several ranks, every rank would do the same whole job and write the
    // same files: only the multi-block driver shares the work.
    if (launched_ranks() > 1 && !multiblock_command(cmd, parsed)) {
      if (launched_rank_zero())
        std::cerr << "factz " << cmd->name << ": under mpirun only compress/verify --blocks and decompress of a "
                     "multi-block file share the work between ranks; run this command in one process\n";
      return 2;
    }
    int rc = 0;
    if (registered_run) rc = registered_run(parsed);
    else if (cmd == &kCompress) rc = run_compress(parsed);
    else if (cmd == &kDecompress) rc = run_decompress(parsed);
    else if (cmd == &kVerify) rc = run_verify(parsed);
    else rc = run_cp(parsed);
    // What went to stdout (statistics, JSON, a stream for "-z -") counts as an output too:
    // a full disk or a closed file there is an error, not a silent success.
    errno = 0;
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout)
      fail(std::string("io: cannot write to stdout: ") + (errno ? std::strerror(errno) : "write error"));
    return rc;
  } catch (const Failure& f) {
    std::cerr << "factz " << cmd->name << ": " << f.message << "\n";
    return f.code;
  } catch (const std::bad_alloc&) {
    std::cerr << "factz " << cmd->name << ": out of memory\n";
    return 1;
  }
}
