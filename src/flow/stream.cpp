// The per-field stream and the tolerance derivation from the nodal error theorem.
//
// Stream (docs/flow.md, "Field stream"): "FZFS" | version u8 (1) | coder u8 |
// basis fingerprint u64 | coefficient count u32 | tolerance f64 | payload |
// low 32 bits of FNV-1a 64 over everything before.
#include <cmath>

#include "flow/bytes.hpp"
#include "flow/coefficient_coder.hpp"
#include "util/byte_io.hpp"

namespace factz::flow {

namespace {

constexpr uint8_t kStreamVersion = 1;
constexpr size_t kHeaderBytes = 4 + 1 + 1 + 8 + 4 + 8;

/// Blocks without a weight map hold per-center vectors (interleaved components); the
/// stream groups them by component (smoother arrays). Nystrom coordinates stay as they are.
std::vector<double> storage_order(const Basis& basis, std::span<const double> c, bool forward) {
  std::vector<double> out(c.size());
  size_t off = 0;
  const size_t d = size_t(basis.dim);
  for (const Block& b : basis.blocks) {
    const size_t r = size_t(b.rank);
    if (!b.weight_map.empty()) {
      std::copy(c.begin() + int64_t(off), c.begin() + int64_t(off + r), out.begin() + int64_t(off));
    } else {
      const size_t nc = r / d;
      for (size_t j = 0; j < nc; ++j)
        for (size_t a = 0; a < d; ++a) {
          if (forward) out[off + a * nc + j] = c[off + j * d + a];
          else out[off + j * d + a] = c[off + a * nc + j];
        }
    }
    off += r;
  }
  return out;
}

bool all_orthonormal(const Basis& b) {
  for (const Block& k : b.blocks)
    if (!k.orthonormal) return false;
  return true;
}

double block_norm(const Basis& basis) {
  double b = 0;
  for (const Block& k : basis.blocks) b += k.norm_bound * k.norm_bound;
  return std::sqrt(b);
}

}  // namespace

double theorem_bound(const Basis& basis, double rep_error, double tolerance) {
  const double spread = block_norm(basis) * std::sqrt(double(std::max<int64_t>(basis.coefficients(), 1))) * tolerance;
  return all_orthonormal(basis) ? std::sqrt(rep_error * rep_error + spread * spread) : rep_error + spread;
}

Result<double> stream_tolerance(std::span<const uint8_t> s) {
  if (s.size() < kHeaderBytes + 4 || std::string(s.begin(), s.begin() + 4) != "FZFS")
    return corrupt_stream("flow stream: not a flow field stream (magic FZFS missing)");
  factz::detail::ByteReader r(s);
  (void)r.skip(kHeaderBytes - 8);  // the size was checked above
  double eps;
  if (!r.f64(eps) || !(eps >= 0) || !std::isfinite(eps)) return corrupt_stream("flow stream: bad tolerance");
  return eps;
}

namespace {

Result<std::vector<uint8_t>> write_stream(uint64_t fingerprint, const std::vector<double>& stored,
                                          CoefficientCoder coder, double eps) {
  factz::detail::ByteWriter w;
  for (const char ch : {'F', 'Z', 'F', 'S'}) w.u8(uint8_t(ch));
  w.u8(kStreamVersion);
  w.u8(uint8_t(coder));
  w.u64(fingerprint);
  w.u32(uint32_t(stored.size()));
  w.f64(eps);
  std::vector<uint8_t> out = std::move(w.bytes());
  FACTZ_RETURN_IF_ERROR(detail::encode_coefficients(coder, stored, eps, out));
  const uint32_t h = uint32_t(detail::fnv1a(out));
  for (int k = 0; k < 4; ++k) out.push_back(uint8_t(h >> (8 * k)));
  return out;
}

/// The theorem's bound with the decoded coefficient errors (eq. 36 / 38).
double measured_bound(const Basis& basis, const Fit& f, const std::vector<double>& back) {
  double sum = 0, sq = 0;
  size_t off = 0;
  for (const Block& b : basis.blocks) {
    double e2 = 0;
    for (size_t i = off; i < off + size_t(b.rank); ++i) e2 += (back[i] - f.coefficients[i]) * (back[i] - f.coefficients[i]);
    sum += b.norm_bound * std::sqrt(e2);
    sq += b.norm_bound * b.norm_bound * e2;
    off += size_t(b.rank);
  }
  // The orthonormal identity holds in exact arithmetic; evaluating the weight maps rounds at
  // about 1e-16 * ||W|| (||W|| <= 1e7 / sigma_1 by the rank cut), so a 1e-8 ||u|| allowance
  // keeps the measured bound an upper bound.
  return all_orthonormal(basis) ? std::sqrt(f.rep_error * f.rep_error + sq) + 1e-8 * f.norm_u
                                : f.rep_error + sum;
}

}  // namespace

Result<std::vector<uint8_t>> encode(const Basis& basis, const Fit& f, std::span<const double> u, double rel_l2,
                                    CoefficientCoder coder, EncodeStats* stats, ToleranceRule rule) {
  if (!(rel_l2 > 0) || !std::isfinite(rel_l2)) return invalid_argument("relative l2 error must be finite and > 0");
  const int64_t m = basis.coefficients();
  if (int64_t(f.coefficients.size()) != m) return invalid_argument("fit does not belong to this basis");
  if (int64_t(u.size()) != basis.n * basis.dim) return invalid_argument("velocity array must be n x dim");
  if (coder != CoefficientCoder::factz && coder != CoefficientCoder::zfp) return invalid_argument("unknown coder");
  if (rule != ToleranceRule::apriori && rule != ToleranceRule::measured) return invalid_argument("unknown tolerance rule");
  // Nodal error theorem: ||u - A c~|| <= E_rep + ||A|| ||dc|| with ||dc|| <= sqrt(m) eps
  // for a max-abs coefficient error eps; orthonormal (Nystrom) blocks give the sharper
  // sqrt(E_rep^2 + ||dc||^2) (paper eqs. 36-40).
  const double total = rel_l2 * f.norm_u;
  const double sm = std::sqrt(double(std::max<int64_t>(m, 1)));
  const double b_tot = block_norm(basis);
  const bool ortho = all_orthonormal(basis);
  double tau = 0, eps = 0, bound = 0;
  if (f.norm_u > 0) {
    if (!(f.rep_error < total))
      return invalid_argument("the basis cannot reach relative error " + std::to_string(rel_l2) +
                              ": its fit error alone is " + std::to_string(f.rep_error / f.norm_u) +
                              " (use more landmarks or an interpolating method)");
    tau = ortho ? std::sqrt(total * total - f.rep_error * f.rep_error) : total - f.rep_error;
    eps = b_tot > 0 ? tau / (b_tot * sm) : tau;
    bound = theorem_bound(basis, f.rep_error, eps);
  }
  const std::vector<double> stored = storage_order(basis, f.coefficients, true);
  const uint64_t fingerprint = basis.fingerprint();
  auto first = write_stream(fingerprint, stored, coder, eps);
  if (!first.ok()) return first.status();
  std::vector<uint8_t> out = std::move(first).value();
  if (rule == ToleranceRule::measured && eps > 0) {
    for (int step = 1; step <= 16; ++step) {
      const double e = eps * std::pow(2.0, 0.5 * step);
      auto z = write_stream(fingerprint, stored, coder, e);
      if (!z.ok()) return z.status();
      auto back = decode_coefficients(basis, z.value());
      if (!back.ok()) return back.status();
      const double mb = measured_bound(basis, f, back.value());
      if (!(mb <= total)) break;
      if (z->size() <= out.size()) {  // keep the smallest admissible stream
        out = std::move(z).value();
        bound = mb;
      }
    }
  }
  if (stats) {
    EncodeStats& s = *stats;
    s = EncodeStats{};
    s.tolerance = stream_tolerance(out).value();
    s.allowance = tau;
    s.bound = bound;
    s.rel_bound = f.norm_u > 0 ? bound / f.norm_u : 0;
    s.rel_rep_error = f.norm_u > 0 ? f.rep_error / f.norm_u : 0;
    s.stream_bytes = int64_t(out.size());
    s.ratio = double(u.size() * sizeof(double)) / double(out.size());
    auto back = decode_coefficients(basis, out);
    if (!back.ok()) return back.status();
    for (int64_t i = 0; i < m; ++i)
      s.coef_max_error = std::max(s.coef_max_error, std::fabs(back.value()[size_t(i)] - f.coefficients[size_t(i)]));
    std::vector<double> rec;
    FACTZ_RETURN_IF_ERROR(evaluate(basis, back.value(), basis.nodes, rec));
    double e2 = 0;
    for (size_t i = 0; i < rec.size(); ++i) {
      const double e = rec[i] - u[i];
      e2 += e * e;
      s.max_abs_error = std::max(s.max_abs_error, std::fabs(e));
    }
    s.rel_l2_error = f.norm_u > 0 ? std::sqrt(e2) / f.norm_u : std::sqrt(e2);
  }
  return out;
}

Result<std::vector<uint8_t>> compress(const Basis& basis, std::span<const double> u, double rel_l2,
                                      CoefficientCoder coder, EncodeStats* stats, ToleranceRule rule) {
  auto f = fit(basis, u);
  if (!f.ok()) return f.status();
  return encode(basis, f.value(), u, rel_l2, coder, stats, rule);
}

Result<std::vector<double>> decode_coefficients(const Basis& basis, std::span<const uint8_t> s) {
  const auto bad = [](const std::string& m) { return corrupt_stream("flow stream: " + m); };
  if (s.size() < kHeaderBytes + 4 || std::string(s.begin(), s.begin() + 4) != "FZFS")
    return bad("not a flow field stream (magic FZFS missing)");
  uint32_t stored_sum = 0;
  for (int k = 3; k >= 0; --k) stored_sum = (stored_sum << 8) | s[s.size() - 4 + size_t(k)];
  if (stored_sum != uint32_t(detail::fnv1a(s.first(s.size() - 4)))) return bad("checksum mismatch (stream damaged)");
  factz::detail::ByteReader r(s.first(s.size() - 4));
  (void)r.skip(4);  // the magic
  uint8_t version, coder;
  uint64_t fp;
  uint32_t m;
  double eps;
  if (!r.u8(version) || !r.u8(coder) || !r.u64(fp) || !r.u32(m) || !r.f64(eps)) return bad("truncated header");
  if (version != kStreamVersion) return Status(Code::unsupported_version, "flow stream: version " + std::to_string(version));
  if (coder > 1) return bad("unknown coefficient coder");
  if (fp != basis.fingerprint()) return invalid_argument("flow stream was written for a different basis");
  if (int64_t(m) != basis.coefficients()) return bad("coefficient count does not match the basis");
  if (!(eps >= 0) || !std::isfinite(eps)) return bad("bad tolerance");
  std::vector<double> c(m, 0.0);
  const auto payload = s.subspan(r.pos(), r.remaining());  // the checksum excluded
  FACTZ_RETURN_IF_ERROR(detail::decode_coefficients(CoefficientCoder(coder), payload, eps, c));
  return storage_order(basis, c, false);
}

Result<std::vector<double>> decompress(const Basis& basis, std::span<const uint8_t> stream) {
  auto c = decode_coefficients(basis, stream);
  if (!c.ok()) return c.status();
  std::vector<double> v;
  FACTZ_RETURN_IF_ERROR(evaluate(basis, c.value(), basis.nodes, v));
  return v;
}

}  // namespace factz::flow
