#include "harness.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace factz::eval {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n == 0 ? 0.0 : (n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]));
}

int repeats_for(const Settings& s, int64_t vertices) {
  if (s.repeats > 0) return s.repeats;
  if (vertices <= (int64_t(1) << 18)) return 5;
  if (vertices <= (int64_t(1) << 22)) return 3;
  return 1;
}

int thread_count(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// Compresses and decompresses `repeats` times, keeps the last reconstruction, and fills
// the size, throughput and fidelity columns of `row`.
Status run_one(const Compressor& c, const VectorField2D& f, const std::vector<uint8_t>& sig,
               const Settings& s, Row& row) {
  const int reps = c.slow() ? 1 : repeats_for(s, f.size());
  std::vector<double> tc, td;
  std::vector<uint8_t> stream;
  VectorField2D rec;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto comp = c.compress(f, row.eb_abs);
    tc.push_back(seconds_since(t0));
    if (!comp.ok()) return comp.status();
    stream = std::move(comp).value();
    rec = VectorField2D{};  // release the previous reconstruction before timing the next
    t0 = std::chrono::steady_clock::now();
    auto dec = c.decompress(stream, f.nx, f.ny);
    td.push_back(seconds_since(t0));
    if (!dec.ok()) return dec.status();
    rec = std::move(dec).value();
  }
  if (rec.nx != f.nx || rec.ny != f.ny || rec.u.size() != f.u.size() || rec.v.size() != f.v.size())
    return Status(Code::internal, "reconstruction has the wrong size");
  auto fid = measure(f, sig, rec, Exec{s.threads});
  if (!fid.ok()) return fid.status();
  const Fidelity& m = fid.value();
  row.repeats = reps;
  row.raw_bytes = 8 * f.size();
  row.compressed_bytes = int64_t(stream.size());
  row.ratio = stream.empty() ? 0.0 : double(row.raw_bytes) / double(stream.size());
  row.bit_rate = f.size() > 0 ? 8.0 * double(stream.size()) / double(2 * f.size()) : 0.0;
  row.psnr = m.psnr;
  row.max_error = m.max_error;
  row.nrmse = m.nrmse;
  row.cp_original = m.cp_original;
  row.cp_decompressed = m.cp_decompressed;
  row.lost = m.lost;
  row.spurious = m.spurious;
  row.type_changed = m.type_changed;
  const double mc = median(tc), md = median(td);
  row.compress_mbps = mc > 0 ? double(row.raw_bytes) / mc / 1e6 : 0.0;
  row.decompress_mbps = md > 0 ? double(row.raw_bytes) / md / 1e6 : 0.0;
  row.bound_respected = m.max_error <= row.eb_abs || (c.lossless() && m.max_error == 0);
  return Status::Ok();
}

}  // namespace

std::vector<double> default_bounds() {
  std::vector<double> b;
  for (int h = 2; h <= 10; ++h) b.push_back(std::pow(10.0, -0.5 * h));
  b.push_back(0.0);
  return b;
}

double value_range(const VectorField2D& f) {
  if (f.u.empty()) return 0.0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (size_t k = 0; k < f.u.size(); ++k) {
    lo = std::min({lo, double(f.u[k]), double(f.v[k])});
    hi = std::max({hi, double(f.u[k]), double(f.v[k])});
  }
  return hi - lo;
}

Result<Fidelity> measure(const VectorField2D& a, const std::vector<uint8_t>& x, const VectorField2D& b, Exec exec) {
  if (a.nx != b.nx || a.ny != b.ny || a.u.size() != b.u.size() || a.v.size() != b.v.size())
    return invalid_argument("fields differ in dimensions");
  auto sb = signatures(b, exec);
  if (!sb.ok()) return sb.status();
  const auto& y = sb.value();
  if (x.size() != y.size()) return invalid_argument("signature count differs from the field's triangles");
  Fidelity c;
  for (size_t t = 0; t < x.size(); ++t) {
    c.cp_original += x[t] != 0;
    c.cp_decompressed += y[t] != 0;
    c.lost += x[t] != 0 && y[t] == 0;
    c.spurious += x[t] == 0 && y[t] != 0;
    c.type_changed += x[t] != 0 && y[t] != 0 && x[t] != y[t];
  }
  const int64_t n = a.size();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sq = 0, e = 0;
#pragma omp parallel for schedule(static) num_threads(thread_count(exec.threads)) \
    reduction(min : lo) reduction(max : hi, e) reduction(+ : sq)
  for (int64_t k = 0; k < n; ++k) {
    const double ua = a.u[size_t(k)], va = a.v[size_t(k)];
    const double du = ua - double(b.u[size_t(k)]), dv = va - double(b.v[size_t(k)]);
    lo = std::min({lo, ua, va});
    hi = std::max({hi, ua, va});
    e = std::max({e, std::fabs(du), std::fabs(dv)});
    sq += du * du + dv * dv;
  }
  c.max_error = e;
  c.value_range = n > 0 ? hi - lo : 0.0;
  c.rmse = n > 0 ? std::sqrt(sq / double(2 * n)) : 0.0;
  c.nrmse = c.value_range > 0 ? c.rmse / c.value_range : 0.0;
  c.psnr = c.rmse > 0 ? 20.0 * std::log10(c.value_range / c.rmse) : std::numeric_limits<double>::infinity();
  return c;
}

Result<std::vector<Row>> evaluate_field(const std::string& name, const VectorField2D& f,
                                        const std::vector<const Compressor*>& sweep,
                                        const std::vector<const Compressor*>& throughput,
                                        const Settings& s, const Progress& progress) {
  auto sig = signatures(f, Exec{s.threads});
  if (!sig.ok()) return sig.status();
  const double range = value_range(f);
  std::vector<Row> rows;
  auto one = [&](const Compressor& c, const std::string& kind, double bound) -> Status {
    Row row;
    row.sweep = kind;
    row.field = name;
    row.nx = f.nx;
    row.ny = f.ny;
    row.compressor = c.name();
    row.coder = c.coder();
    row.bound = bound;
    row.eb_abs = bound * range;
    const auto t0 = std::chrono::steady_clock::now();
    Status st = run_one(c, f, sig.value(), s, row);
    if (!st.ok())
      return Status(st.code(), c.name() + " (" + c.coder() + ") at REL " + short_number(bound) + " on " + name + ": " + st.message());
    if (progress)
      progress("  " + c.name() + (c.coder() == "-" ? "" : "/" + c.coder()) + " REL " + short_number(bound) + ": ratio " +
               short_number(row.ratio) + ", PSNR " + short_number(row.psnr) + " dB, violations " +
               std::to_string(row.violations()) + " (lost " + std::to_string(row.lost) + ", spurious " +
               std::to_string(row.spurious) + ", type " + std::to_string(row.type_changed) + "), " +
               short_number(row.compress_mbps) + " / " + short_number(row.decompress_mbps) + " MB/s [" +
               short_number(seconds_since(t0)) + " s]");
    rows.push_back(std::move(row));
    return Status::Ok();
  };
  const std::vector<double>& bounds = f.size() > s.large_vertices ? s.large_bounds : s.bounds;
  for (const Compressor* c : sweep) {
    if (c->slow() && f.size() > s.slow_max_vertices) {
      if (progress) progress("  " + c->name() + ": skipped (slow; field above " + std::to_string(s.slow_max_vertices) + " vertices)");
      continue;
    }
    if (c->lossless()) {
      FACTZ_RETURN_IF_ERROR(one(*c, "bounds", 0.0));
      continue;
    }
    for (double b : bounds) FACTZ_RETURN_IF_ERROR(one(*c, "bounds", b));
  }
  for (const Compressor* c : throughput) {
    // The same compressor at the same bound was measured by the sweep already: reuse it.
    auto same = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.sweep == "bounds" && r.compressor == c->name() && r.coder == c->coder() && r.bound == s.throughput_bound;
    });
    if (same != rows.end()) {
      Row copy = *same;
      copy.sweep = "throughput";
      rows.push_back(std::move(copy));
      continue;
    }
    FACTZ_RETURN_IF_ERROR(one(*c, "throughput", s.throughput_bound));
  }
  return rows;
}

bool parse_vector_name(const std::string& u_path, std::string& name, int64_t& nx, int64_t& ny, std::string& v_path) {
  const size_t slash = u_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : u_path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? u_path : u_path.substr(slash + 1);
  const size_t dot = base.rfind(".f32");
  if (dot == std::string::npos || dot + 4 != base.size()) return false;
  const size_t tag = base.rfind("_u_");
  if (tag == std::string::npos || tag == 0) return false;
  const std::string dims = base.substr(tag + 3, dot - tag - 3);
  const size_t x = dims.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= dims.size()) return false;
  for (size_t k = 0; k < dims.size(); ++k)
    if (k != x && (dims[k] < '0' || dims[k] > '9')) return false;
  if (x > 9 || dims.size() - x - 1 > 9) return false;  // each extent fits an int64 easily
  nx = std::stoll(dims.substr(0, x));
  ny = std::stoll(dims.substr(x + 1));
  if (nx <= 0 || ny <= 0) return false;
  name = base.substr(0, tag);
  v_path = dir + name + "_v_" + dims + ".f32";
  return true;
}

}  // namespace factz::eval
