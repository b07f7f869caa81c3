// `factz ct`: the contour tree of a scalar field simplified at a persistence threshold
// (nodes with vertex, position, value and type; the arcs of the contour tree and of the two
// simplified merge trees; the persistence pairs).
// Also defines scalar_dims, shared with the scalar paths of compress and verify (main.cpp),
// and the float64 scalar paths of compress, decompress and verify: a '<f8' .npy, a raw
// file with --dtype f64 or a float64 netCDF / HDF5 variable in, a float64 stream (version
// 6) out, '<f8' .npy, raw float64 or an NC_DOUBLE variable back (write_field_outputs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "factz/contour_tree.hpp"
#include "factz/io.hpp"
#include "field_files.hpp"
#include "factz/scalar.hpp"
#include "format/container.hpp"

namespace factz::cli {

/// `-3 NX NY NZ` or `-2 NX NY` (nz = 1); usage error when absent or not positive integers.
void scalar_dims(const Args& a, int64_t& nx, int64_t& ny, int64_t& nz) {
  if (a.has("-3")) {
    const auto& d = a.all("-3").back();
    long long x = 0, y = 0, z = 0;
    if (!to_int64(d[0], x) || !to_int64(d[1], y) || !to_int64(d[2], z) || x <= 0 || y <= 0 || z <= 0)
      fail("-3 needs three positive integers, got '" + d[0] + " " + d[1] + " " + d[2] + "'", 2);
    nx = x;
    ny = y;
    nz = z;
    return;
  }
  if (!a.has("-2")) fail("missing -2 NX NY or -3 NX NY NZ", 2);
  dims(a, nx, ny);
  nz = 1;
}

/// Marks the missing vertices of a scalar field read for a command: NaN, and the value of
/// `--fill V` when given (--fill-u / --fill-v are for vector fields). Returns their count.
int64_t mark_scalar_fill(const Args& a, factz::ScalarField& f) {
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v apply to vector fields; give --fill for a scalar field", 2);
  return factz::mark_missing(f, fill_of(a).u);
}

/// `--persistence P` (a fraction of the value range, finite, >= 0), default 1e-2.
double persistence_of(const Args& a) {
  double p = 1e-2;
  if (a.has("--persistence") && (!to_double(a.get("--persistence"), p) || p < 0))
    fail("--persistence needs a finite fraction >= 0, got '" + a.get("--persistence") + "'", 2);
  return p;
}

// ---- float64 scalar fields ----------------------------------------------------------------

/// Whether the scalar field of `flag` holds float64 values: --dtype f64, or a '<f8' .npy
/// (float64_inputs, which also refuses a mismatch between the two).
bool scalar_float64_input(const Args& a, const char* flag) { return a.has(flag) && float64_inputs(a, flag); }

/// `--fill V` as a double (fill_of64: a float64 field's fill value is compared as a double,
/// never rounded to a float); none when absent.
std::optional<double> scalar_fill64(const Args& a) {
  if (a.has("--fill-u") || a.has("--fill-v"))
    fail("--fill-u and --fill-v apply to vector fields; give --fill for a scalar field", 2);
  return fill_of64(a).u;
}

/// A float64 scalar field (one file of `flag`): shape from -3 / -2, the .npy's own ((ny, nx)
/// or (nz, ny, nx)), or `like`'s (the original of a comparison); NaN and --fill (as a
/// double) mark missing vertices. A float64 netCDF / HDF5 variable gives its own shape and
/// fill values (read_scalar_variable64).
ScalarField64 read_scalar_input64(const Args& a, const char* flag, const std::string& command,
                                  const ScalarField64* like = nullptr, std::vector<uint8_t>* source = nullptr) {
  const auto& occurrences = a.all(flag);
  if (occurrences.size() != 1) fail(std::string("give ") + flag + " once for a scalar field", 2);
  const std::string path = occurrences[0][0];
  if (const FieldFile file = field_file(path); file.variable) {
    ScalarField64 f = read_scalar_variable64(a, file, command, like, source);
    factz::mark_missing(f, scalar_fill64(a));
    return f;
  }
  int64_t nx = 0, ny = 0, nz = 1;
  if (a.has("-3") || a.has("-2")) {
    scalar_dims(a, nx, ny, nz);
  } else if (like) {
    nx = like->nx;
    ny = like->ny;
    nz = like->nz;
  } else {
    const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    auto bytes = npy ? factz::read_bytes(path) : factz::Result<std::vector<uint8_t>>(factz::Status());
    auto h = npy && bytes.ok() ? factz::parse_npy_header(bytes.value()) : factz::Result<factz::NpyHeader>(factz::Status());
    if (!h.ok() || (h->shape.size() != 2 && h->shape.size() != 3))
      fail("missing -2 NX NY or -3 NX NY NZ: " + path + " does not say its shape", 2);
    const auto& s = h->shape;
    nx = s.back();
    ny = s[s.size() - 2];
    nz = s.size() == 3 ? s[0] : 1;
  }
  ScalarField64 f = take(factz::read_scalar_field64(path, nx, ny, nz));
  factz::mark_missing(f, scalar_fill64(a));
  return f;
}

/// Whether a stream is a scalar stream of float64 values (false when it cannot be parsed:
/// decompress_scalar then says why).
bool scalar_stream_is_float64(const std::vector<uint8_t>& stream) {
  auto t = factz::scalar_stream_dtype(stream);
  return t.ok() && t.value() == factz::DType::float64;
}

/// compress's report of a scalar field, float32 or float64 (dtype: a "dtype" line and 64
/// raw bits per value, or none and 32).
void print_scalar_compression(const Args& a, const std::string& mode,
                              const factz::ScalarCompressStats& st, int64_t nx, int64_t ny, int64_t nz,
                              size_t stream_bytes, double secs, const char* dtype) {
  using In = StatsWriter::In;
  const double bits = dtype ? 64.0 : 32.0;
  const double raw = double(nx) * double(ny) * double(nz) * bits / 8.0;
  const double ratio = raw / double(stream_bytes);
  StatsWriter s;
  s.text("mode", mode).text("coder", factz::coder_name(st.coder), In::json);
  s.text("predictor", factz::scalar_predictor_name(st.predictor), In::json);
  if (dtype) s.text("dtype", dtype, In::json);
  s.count("nx", nx, In::json).count("ny", ny, In::json).count("nz", nz, In::json);
  s.count("raw_bytes", int64_t(raw)).count("compressed_bytes", stream_bytes).num("ratio", ratio);
  s.num("bit_rate", bits / ratio).num("eb_abs", st.eb_abs).num("persistence_abs", st.persistence_abs);
  s.count("tree_nodes", st.tree_nodes).count("exact_vertices", st.exact_vertices).count("iterations", st.iterations)
      .count("race_rounds", st.race_rounds).count("rounds_ahead", st.rounds_ahead);
  s.count("masked_vertices", st.masked_vertices);
  s.num("compress_seconds", secs).num("throughput_mbs", raw / secs / 1e6);
  s.print(a.has("--json"), false);
  note_bound_below_packing("compress", st.eb_abs);
}

/// compress of a float64 scalar field: the options `o` main.cpp parsed (mode named `mode`).
int run_compress_scalar64(const Args& a, factz::ScalarOptions o, const std::string& mode) {
  const ScalarField64 field = read_scalar_input64(a, "-i", "compress", nullptr, &o.source);  // section 12
  factz::ScalarCompressStats st;
  const auto t0 = std::chrono::steady_clock::now();
  const auto stream = take(factz::compress_scalar(field, o, &st));
  const double secs = seconds_since(t0);
  check(factz::write_bytes(a.get("-z"), stream));
  print_scalar_compression(a, mode, st, field.nx, field.ny, field.nz, stream.size(), secs, "float64");
  return 0;
}

/// decompress of a float64 scalar stream: '<f8' .npy (shape (ny, nx), or (nz * ny, nx) in
/// 3D, as float32 fields are written) or raw float64; missing vertices hold their 64 bits.
int run_decompress_scalar64(const Args& a, const std::vector<uint8_t>& stream) {
  factz::DecompressOptions o;
  const factz::Exec e = exec_of(a, &o.policy);
  o.threads = e.threads;
  const auto t0 = std::chrono::steady_clock::now();
  const auto field = take(factz::decompress_scalar64(stream, o));
  const double secs = seconds_since(t0);
  const std::vector<uint64_t> shape = field.nz > 1 ? std::vector<uint64_t>{uint64_t(field.nz), uint64_t(field.ny),
                                                                           uint64_t(field.nx)}
                                                    : std::vector<uint64_t>{uint64_t(field.ny), uint64_t(field.nx)};
  const auto source = take(factz::stream_source(stream));  // a variable's dimensions, attributes, coordinates
  write_field_outputs({a.get("-o")}, {&field.values}, shape, source, field.mask, "decompress", {}, a.has("--repack"));
  print_decompression(a, field.nx, field.ny, field.nz, true, double(field.size()) * 8.0, stream.size(), secs);
  return 0;
}

/// verify's report of a scalar comparison, float32 or float64 (dtype: a "dtype" line, or none).
void print_scalar_comparison(const Args& a, const factz::ScalarComparison& c, double p, const char* dtype) {
  using In = StatsWriter::In;
  const auto& t = c.tree;
  StatsWriter s;
  s.num("persistence", p, In::json).num("persistence_abs", c.persistence_abs, In::json);
  s.count("nodes_original", t.nodes_original).count("nodes_decompressed", t.nodes_decompressed);
  s.count("false_positive", t.false_positive).count("false_negative", t.false_negative);
  s.count("false_type", t.false_type).count("false_cases", t.false_cases(), In::json);
  s.count("arcs_missing", t.arcs_missing).count("arcs_extra", t.arcs_extra);
  s.count("pairs_missing", t.pairs_missing).count("pairs_extra", t.pairs_extra).flag("same_tree", t.same());
  s.count("masked_vertices", c.masked_vertices).count("mask_mismatch", c.mask_mismatch);
  s.num("max_abs_error", c.max_abs_error).num("rmse", c.rmse).num("psnr", c.psnr);
  s.num("value_range", c.value_range, In::json);
  if (dtype) s.text("dtype", dtype, In::json);
  s.print(a.has("--json"), true);
}

/// verify of float64 scalar fields: both -i and -d float64, trees and errors in double.
int run_verify_scalar64(const Args& a) {
  if (!scalar_float64_input(a, "-i") || !scalar_float64_input(a, "-d"))
    fail("invalid_argument: verify compares a float64 original with a float64 reconstruction: give both -i and -d "
         "as '<f8' .npy files, or raw files with --dtype f64");
  if (a.all("-i").size() != 1 || a.all("-d").size() != 1) fail("give -i and -d once each for a scalar field", 2);
  const double p = persistence_of(a);
  factz::Policy policy;
  const factz::Exec e = exec_of(a, &policy);
  const ScalarField64 orig = read_scalar_input64(a, "-i", "verify");
  const ScalarField64 dec = read_scalar_input64(a, "-d", "verify", &orig);
  print_scalar_comparison(a, take(factz::compare_scalar(orig, dec, factz::BoundMode::rel, p, policy, e.threads)), p,
                          "float64");
  return 0;
}

}  // namespace factz::cli

namespace {

using factz::cli::Args;
using factz::cli::fail;
using factz::cli::json_number;
using factz::cli::take;

const factz::cli::Command kCt{
    "ct", "Print the contour tree of a 2D or 3D scalar field, simplified at a persistence threshold.",
    "factz ct [-2 NX NY | -3 NX NY NZ] -i FILE [--persistence P] [--fill V] [--json] [-x POLICY]",
    {{"-2", 2, "NX NY", "2D scalar grid, NX fastest (x)"},
     {"-3", 3, "NX NY NZ", "3D scalar grid, NX fastest (x), then NY, then NZ"},
     {"-i", 1, "FILE",
      "the field: raw float32 (x fastest; float64 with --dtype f64), .npy ('<f4' or '<f8'), FILE.nc:VAR[...] or "
      "FILE.h5:/path (-2/-3 optional then)"},
     factz::cli::dtype_option(),
     {"--persistence", 1, "P", "remove extremum-saddle pairs of persistence below P times the value range (default 1e-2)"},
     {"--fill", 1, "V",
      "the fill value marking missing vertices (e.g. 1e20, -9999, nan; NaN is always missing): they and every "
      "simplex touching them leave the mesh, and the tree becomes a forest when the valid vertices fall apart"},
     {"-x", 1, "POLICY", "serial | omp | omp=T (T threads); the tree never depends on it"},
     {"--json", 0, "", "print one JSON object on stdout"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

int run_ct(const Args& a) {
  if (!a.has("-i")) fail("missing -i FILE", 2);
  if (a.all("-i").size() != 1) fail("give -i once (a scalar field)", 2);
  factz::CtOptions o;
  o.persistence = factz::cli::persistence_of(a);
  const factz::Exec e = factz::cli::exec_of(a, &o.policy);
  o.threads = e.threads;
  // A float64 field's tree is computed on its doubles; its values print with 17 digits.
  const bool float64 = factz::cli::scalar_float64_input(a, "-i");
  int64_t nx = 0, ny = 0, nz = 1, masked = 0;
  const factz::ContourTree t = [&] {
    if (float64) {
      const factz::ScalarField64 field = factz::cli::read_scalar_input64(a, "-i", "ct");
      nx = field.nx, ny = field.ny, nz = field.nz;
      masked = field.mask.empty() ? 0 : int64_t(std::count(field.mask.begin(), field.mask.end(), uint8_t(1)));
      return take(factz::contour_tree(field, o));
    }
    auto field = factz::cli::read_scalar_input(a, "-i", "ct");  // raw, .npy, FILE.nc:VAR[...]
    masked = factz::cli::mark_scalar_fill(a, field);
    nx = field.nx, ny = field.ny, nz = field.nz;
    return take(factz::contour_tree(field, o));
  }();
  int64_t counts[factz::kCtNodeTypeCount] = {};
  for (const auto& n : t.nodes) ++counts[int(n.type)];
  auto xyz = [&](int64_t v) {
    return std::to_string(v % nx) + (a.has("--json") ? ", " : " ") + std::to_string((v / nx) % ny) +
           (a.has("--json") ? ", " : " ") + std::to_string(v / (nx * ny));
  };
  using In = factz::cli::StatsWriter::In;
  factz::cli::StatsWriter s, types;
  for (int k = 0; k < factz::kCtNodeTypeCount; ++k)
    types.count(factz::ct_node_type_name(factz::CtNodeType(k)), counts[k]);
  s.count("nx", nx, In::json).count("ny", ny, In::json).count("nz", nz, In::json);
  if (float64) s.text("dtype", "float64", In::json);
  s.num("persistence", o.persistence, In::json).num("persistence_abs", t.persistence, In::json);
  s.count("nodes", t.nodes.size(), In::text).count("arcs", t.arcs.size(), In::text);
  s.count("full_nodes", t.full_nodes).count("pruned_pairs", t.pruned_pairs).count("components", t.components);
  s.count("masked_vertices", masked);
  s.count("join_arcs", t.join_arcs.size(), In::text).count("split_arcs", t.split_arcs.size(), In::text);
  s.flag("contour_arcs", t.contour_arcs);
  s.num("persistence_abs", t.persistence, In::text).json("types", types.object());
  for (int k = 0; k < factz::kCtNodeTypeCount; ++k)
    s.count(factz::ct_node_type_name(factz::CtNodeType(k)), counts[k], In::text);
  std::ostringstream os;
  if (a.has("--json")) {
    // The tree itself: JSON arrays after the statistics.
    os << "[";
    for (size_t i = 0; i < t.nodes.size(); ++i) {
      const auto& n = t.nodes[i];
      os << (i ? ", " : "") << "{\"vertex\": " << n.vertex << ", \"xyz\": [" << xyz(n.vertex)
         << "], \"value\": " << json_number(n.value) << ", \"type\": \"" << factz::ct_node_type_name(n.type)
         << "\", \"up\": " << n.up_degree << ", \"down\": " << n.down_degree << "}";
    }
    s.json("nodes", os.str() + "]");
    auto arc_list = [&](const std::vector<factz::CtArc>& arcs) {
      std::ostringstream list;
      list << "[";
      for (size_t i = 0; i < arcs.size(); ++i) list << (i ? ", " : "") << "[" << arcs[i].lower << ", " << arcs[i].upper << "]";
      return list.str() + "]";
    };
    s.json("arcs", arc_list(t.arcs)).json("join_arcs", arc_list(t.join_arcs)).json("split_arcs", arc_list(t.split_arcs));
    os.str("");
    os << "[";
    for (size_t i = 0; i < t.pairs.size(); ++i)
      os << (i ? ", " : "") << "{\"extremum\": " << t.pairs[i].extremum << ", \"saddle\": " << t.pairs[i].saddle
         << ", \"persistence\": " << json_number(t.pairs[i].persistence) << "}";
    s.json("pairs", os.str() + "]");
    os.str("");
    os << s.object() << "\n";
  } else {
    os << s.line() << "\n# node VERTEX X Y Z VALUE TYPE\n";
    char buf[64];
    for (const auto& n : t.nodes) {
      std::snprintf(buf, sizeof buf, float64 ? "%.17g" : "%.9g", n.value);
      os << "node " << n.vertex << ' ' << xyz(n.vertex) << ' ' << buf << ' ' << factz::ct_node_type_name(n.type) << "\n";
    }
    os << "# arc LOWER UPPER (contour tree; join_arc and split_arc: the simplified merge trees)\n";
    for (const auto& arc : t.arcs) os << "arc " << arc.lower << ' ' << arc.upper << "\n";
    for (const auto& arc : t.join_arcs) os << "join_arc " << arc.lower << ' ' << arc.upper << "\n";
    for (const auto& arc : t.split_arcs) os << "split_arc " << arc.lower << ' ' << arc.upper << "\n";
    os << "# pair EXTREMUM SADDLE PERSISTENCE\n";
    for (const auto& p : t.pairs) {
      std::snprintf(buf, sizeof buf, "%.9g", p.persistence);
      os << "pair " << p.extremum << ' ' << p.saddle << ' ' << buf << "\n";
    }
  }
  std::cout << os.str();
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kCt, &run_ct);

}  // namespace
