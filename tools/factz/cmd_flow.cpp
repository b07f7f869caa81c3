// factz flow basis|compress|decompress|eval: divergence-free compression of incompressible
// flows (docs/flow.md). The action is the first word after `flow`; the option parser has
// no positionals, so the four actions are declared as switches and exactly one is required.
#include <cmath>
#include <sstream>

#include "common.hpp"
#include "stats_writer.hpp"
#include "factz/flow.hpp"
#include "factz/io.hpp"

namespace {

using factz::cli::Args;
using factz::cli::check;
using factz::cli::fail;
using factz::cli::StatsWriter;
using factz::cli::take;
namespace fl = factz::flow;

const factz::cli::Command kFlow{
    "flow",
    "Divergence-free (and periodic) compression of incompressible velocity fields with divergence-free kernels.",
    "factz flow basis --nodes X.npy --method global|nystrom2|hybrid|multilevel|frame [--landmarks M]\n"
    "                 [--periodic LX,LY[,LZ]] [--length L[,L2...]] [--beta B] [--train U.npy] -o BASIS\n"
    "  factz flow compress --basis BASIS --velocity U.npy --rel-l2 E -z OUT [--coder factz|zfp] [--tight] [--json]\n"
    "  factz flow decompress --basis BASIS -z OUT -o U2.npy [--velocity U.npy] [--json]\n"
    "  factz flow eval --basis BASIS -z OUT --points P.npy -o V.npy [--divergence D.npy]\n"
    "  (.npy arrays are float64, shape N x d with d = 2 or 3)",
    {{"basis", 0, "", "action: build the reusable per-mesh basis"},
     {"compress", 0, "", "action: fit and compress one velocity field"},
     {"decompress", 0, "", "action: nodal velocities of a stream"},
     {"eval", 0, "", "action: velocity and analytic divergence at any points"},
     {"--nodes", 1, "X.npy", "basis: node coordinates, N x d"},
     {"--method", 1, "METHOD",
      "basis: global (Matern interpolation) | nystrom2 (two-level Nystrom, default) | hybrid (Nystrom + "
      "Wendland) | multilevel (multilevel Wendland) | frame (redundant Wendland frame)"},
     {"--landmarks", 1, "M", "basis: landmarks per Nystrom level (default 32)"},
     {"--periodic", 1, "LX,LY[,LZ]", "basis: period of each axis (0: not periodic)"},
     {"--length", 1, "L[,L2...]", "basis: Matern length(s); several give a multiscale mixture (default extent/4)"},
     {"--beta", 1, "B", "basis: Wendland support in mesh spacings (default 6)"},
     {"--train", 1, "U.npy", "basis: training velocity for residual-adaptive nystrom2 landmarks", true},
     {"--basis", 1, "BASIS", "basis file"},
     {"--velocity", 1, "U.npy", "nodal velocities, N x d (decompress: reference for --json errors)"},
     {"--rel-l2", 1, "E", "compress: relative l2 nodal error to meet (by the nodal error theorem)"},
     {"--coder", 1, "CODER", "compress: factz (ABS quantization + Huffman + zstd; default) | zfp"},
     {"--tight", 0, "",
      "compress: widen the coefficient tolerance while the theorem's bound with the decoded coefficient "
      "errors still meets --rel-l2 (fewer bytes; the default derives it a priori)"},
     {"--points", 1, "P.npy", "eval: points, P x d"},
     {"--divergence", 1, "D.npy", "eval: write the analytic divergence, P values"},
     {"-z", 1, "FILE", "field stream"},
     {"-o", 1, "FILE", "output (basis file, or .npy)"},
     {"--json", 0, "", "print statistics as JSON"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

std::string need(const Args& a, const std::string& flag) {
  if (!a.has(flag)) fail("missing " + flag, 2);
  return a.get(flag);
}

double number(const Args& a, const std::string& flag) {
  double v;
  if (!factz::cli::to_double(need(a, flag), v)) fail(flag + " needs a number", 2);
  return v;
}

std::vector<double> number_list(const std::string& s, const std::string& flag) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    double v;
    if (!factz::cli::to_double(tok, v)) fail(flag + " needs comma-separated numbers", 2);
    out.push_back(v);
  }
  return out;
}

/// A float64 (or float32) .npy array read by factz::read_bytes (so a pipe or FIFO works,
/// and an unreadable path says why), parsed by flow's parse_npy.
fl::NpyArray read_npy(const std::string& path) {
  const auto bytes = take(factz::read_bytes(path));
  auto r = fl::parse_npy(bytes);
  if (!r.ok()) fail(factz::Status(r.status().code(), path + ": " + r.status().message()).to_string());
  return std::move(r).value();
}

/// A float64 rows x cols .npy array through factz::write_bytes (every write checked, no
/// partial file left behind).
void write_npy(const std::string& path, int64_t rows, int64_t cols, const std::vector<double>& data) {
  if (rows < 0 || cols < 1 || uint64_t(rows) * uint64_t(cols) != data.size())
    fail("internal: npy shape does not match data");
  const int64_t shape[2] = {rows, cols};
  const std::string header = factz::npy_header("<f8", shape);
  std::vector<uint8_t> bytes(header.begin(), header.end());
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  bytes.insert(bytes.end(), p, p + data.size() * 8);
  check(factz::write_bytes(path, bytes));
}

fl::Basis load_basis(const Args& a) {
  const auto bytes = take(factz::read_bytes(need(a, "--basis")));
  return take(fl::parse_basis(bytes));
}

fl::NpyArray load_field(const std::string& path, const fl::Basis& b) {
  auto arr = read_npy(path);
  if (arr.rows != b.n || arr.cols != b.dim)
    fail(path + ": shape " + std::to_string(arr.rows) + " x " + std::to_string(arr.cols) + " does not match the basis (" +
         std::to_string(b.n) + " x " + std::to_string(b.dim) + ")");
  return arr;
}

int run_basis(const Args& a) {
  const auto nodes = read_npy(need(a, "--nodes"));
  if (nodes.cols != 2 && nodes.cols != 3) fail("--nodes must be N x 2 or N x 3");
  fl::BasisOptions o;
  if (a.has("--method")) o.method = take(fl::method_from_name(a.get("--method")));
  if (a.has("--landmarks")) {
    long long m;
    if (!factz::cli::to_int64(a.get("--landmarks"), m) || m < 1) fail("--landmarks needs a positive integer", 2);
    o.landmarks = m;
  }
  if (a.has("--periodic")) o.periods = number_list(a.get("--periodic"), "--periodic");
  if (a.has("--length")) o.matern_lengths = number_list(a.get("--length"), "--length");
  if (a.has("--beta")) o.wendland_beta = number(a, "--beta");
  if (a.has("--train"))
    for (const auto& occ : a.all("--train")) {
      auto t = read_npy(occ[0]);
      if (t.rows != nodes.rows || t.cols != nodes.cols) fail(occ[0] + ": training velocity must match the nodes' shape");
      o.training.push_back(std::move(t.data));
    }
  const fl::Basis b = take(fl::build_basis(int(nodes.cols), nodes.data, o));
  const auto bytes = take(fl::serialize_basis(b));
  check(factz::write_bytes(need(a, "-o"), bytes));
  if (a.has("--json")) {
    StatsWriter st;
    st.text("method", fl::method_name(b.method)).count("nodes", b.n).count("coefficients", b.coefficients());
    st.count("basis_bytes", bytes.size()).print(true, true);
  }
  return 0;
}

int run_compress(const Args& a) {
  const fl::Basis b = load_basis(a);
  const auto u = load_field(need(a, "--velocity"), b);
  const double e = number(a, "--rel-l2");
  fl::CoefficientCoder coder = fl::CoefficientCoder::factz;
  if (a.has("--coder")) {
    const std::string c = a.get("--coder");
    if (c == "zfp") coder = fl::CoefficientCoder::zfp;
    else if (c != "factz") fail("--coder must be factz or zfp", 2);
  }
  fl::EncodeStats s;
  const auto rule = a.has("--tight") ? fl::ToleranceRule::measured : fl::ToleranceRule::apriori;
  const auto z = take(fl::compress(b, u.data, e, coder, &s, rule));
  check(factz::write_bytes(need(a, "-z"), z));
  if (a.has("--json")) {
    StatsWriter st;
    st.text("method", fl::method_name(b.method)).text("coder", coder == fl::CoefficientCoder::zfp ? "zfp" : "factz");
    st.count("coefficients", b.coefficients()).count("stream_bytes", s.stream_bytes).num("ratio", s.ratio);
    st.num("rel_l2_error", s.rel_l2_error).num("max_abs_error", s.max_abs_error).num("bound", s.rel_bound);
    st.num("bound_abs", s.bound).num("rel_rep_error", s.rel_rep_error).num("tolerance", s.tolerance);
    st.num("coef_max_error", s.coef_max_error).print(true, true);
  }
  return 0;
}

int run_decompress(const Args& a) {
  const fl::Basis b = load_basis(a);
  const auto z = take(factz::read_bytes(need(a, "-z")));
  const auto v = take(fl::decompress(b, z));
  write_npy(need(a, "-o"), b.n, b.dim, v);
  if (a.has("--json")) {
    StatsWriter st;
    st.count("stream_bytes", z.size()).num("ratio", double(v.size() * 8) / double(z.size()));
    if (a.has("--velocity")) {
      const auto u = load_field(a.get("--velocity"), b);
      double e2 = 0, n2 = 0, mx = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        e2 += (v[i] - u.data[i]) * (v[i] - u.data[i]);
        n2 += u.data[i] * u.data[i];
        mx = std::max(mx, std::fabs(v[i] - u.data[i]));
      }
      // The theorem's bound needs the fit error of the reference and the stream tolerance.
      const auto f = take(fl::fit(b, u.data));
      const double bound = fl::theorem_bound(b, f.rep_error, take(fl::stream_tolerance(z)));
      st.num("rel_l2_error", n2 > 0 ? std::sqrt(e2 / n2) : std::sqrt(e2)).num("max_abs_error", mx);
      st.num("bound", f.norm_u > 0 ? bound / f.norm_u : bound);
      st.num("rel_rep_error", f.norm_u > 0 ? f.rep_error / f.norm_u : 0);
    }
    st.print(true, true);
  }
  return 0;
}

int run_eval(const Args& a) {
  const fl::Basis b = load_basis(a);
  const auto z = take(factz::read_bytes(need(a, "-z")));
  const auto c = take(fl::decode_coefficients(b, z));
  const auto p = read_npy(need(a, "--points"));
  if (p.cols != b.dim) fail("--points must have " + std::to_string(b.dim) + " columns");
  std::vector<double> v, g;
  check(fl::evaluate(b, c, p.data, v, a.has("--divergence") ? &g : nullptr));
  write_npy(need(a, "-o"), p.rows, b.dim, v);
  if (a.has("--divergence")) {
    std::vector<double> div(size_t(p.rows), 0.0);
    for (int64_t i = 0; i < p.rows; ++i)
      for (int k = 0; k < b.dim; ++k) div[size_t(i)] += g[size_t((i * b.dim + k) * b.dim + k)];
    write_npy(a.get("--divergence"), p.rows, 1, div);
  }
  return 0;
}

int run(const Args& a) {
  int actions = 0;
  for (const char* act : {"basis", "compress", "decompress", "eval"}) actions += a.has(act) ? 1 : 0;
  if (actions != 1) fail("give exactly one action: basis, compress, decompress or eval (see factz flow --help)", 2);
  // -z is the output of compress and an input of decompress and eval.
  if (a.has("compress"))
    factz::cli::refuse_clobbering(a, {"--basis", "--velocity"}, {"-z"});
  else
    factz::cli::refuse_clobbering(a, {"--nodes", "--train", "--basis", "--velocity", "--points", "-z"},
                                  {"-o", "--divergence"});
  if (a.has("basis")) return run_basis(a);
  if (a.has("compress")) return run_compress(a);
  if (a.has("decompress")) return run_decompress(a);
  return run_eval(a);
}

const bool kRegistered = factz::cli::register_command(&kFlow, &run);

}  // namespace
