// Rate/accuracy of the divergence-free representations beside direct nodal compression
// with FaCTz mode `none` (docs/flow.md, "Measured").
//
//   flow_bench tg  [--dim 2|3] [--n N] [--rel E1,E2] [--methods m1,m2] [--landmarks M]
//                  [--length L] [--beta B]
//   flow_bench cfd --u U.f32 --v V.f32 --size S [--stride K] [...same options]
//
// Taylor-Green: u = sin x cos y (cos z), v = -cos x sin y (cos z) (, w = 0) at the cell
// centres of an N^d grid on the periodic box [0, 2pi)^d. CFD: a periodic unit box of S x S
// cell centres (float32, x fastest), subsampled every K cells. Ratios count the stream
// against raw float64 velocities (N^d * d * 8 bytes).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/flow.hpp"

namespace fl = factz::flow;

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

struct Data {
  int dim = 2;
  int nx = 0, ny = 0, nz = 1;
  double period = kTwoPi;
  std::vector<double> nodes, u;  // rows of dim values
};

Data taylor_green(int dim, int n) {
  Data d;
  d.dim = dim;
  d.nx = d.ny = n;
  d.nz = dim == 3 ? n : 1;
  const double h = kTwoPi / n;
  for (int k = 0; k < d.nz; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = (i + 0.5) * h, y = (j + 0.5) * h, z = (k + 0.5) * h;
        const double cz = dim == 3 ? std::cos(z) : 1.0;
        d.nodes.insert(d.nodes.end(), {x, y});
        if (dim == 3) d.nodes.push_back(z);
        d.u.push_back(std::sin(x) * std::cos(y) * cz);
        d.u.push_back(-std::cos(x) * std::sin(y) * cz);
        if (dim == 3) d.u.push_back(0.0);
      }
  return d;
}

std::vector<float> read_f32(const std::string& path, size_t count) {
  std::ifstream f(path, std::ios::binary);
  std::vector<float> v(count);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(count * 4));
  if (!f) {
    std::cerr << "cannot read " << count << " floats from " << path << "\n";
    std::exit(1);
  }
  return v;
}

Data cfd(const std::string& up, const std::string& vp, int size, int stride) {
  const auto u = read_f32(up, size_t(size) * size_t(size));
  const auto v = read_f32(vp, size_t(size) * size_t(size));
  Data d;
  d.period = 1.0;
  d.nx = d.ny = size / stride;
  for (int j = 0; j < d.ny; ++j)
    for (int i = 0; i < d.nx; ++i) {
      const size_t s = size_t(j * stride) * size_t(size) + size_t(i * stride);
      d.nodes.push_back((i * stride + 0.5) / size);
      d.nodes.push_back((j * stride + 0.5) / size);
      d.u.push_back(u[s]);
      d.u.push_back(v[s]);
    }
  return d;
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) e += (a[i] - b[i]) * (a[i] - b[i]), n += b[i] * b[i];
  return std::sqrt(e / n);
}

/// Normalized RMS of the central-difference divergence of (rec - u) on the periodic grid
/// (the paper's delta_div, with a finite-difference D_h): L / U_rms * rms(D_h(e)).
double fd_divergence_change(const Data& d, const std::vector<double>& rec) {
  const double h = d.period / d.nx;
  double s = 0, urms = 0;
  const int dim = d.dim;
  auto at = [&](int i, int j, int k, int c) {
    i = (i + d.nx) % d.nx, j = (j + d.ny) % d.ny, k = (k + d.nz) % d.nz;
    const size_t idx = (size_t(k) * d.ny + size_t(j)) * d.nx + size_t(i);
    return rec[idx * dim + c] - d.u[idx * dim + c];
  };
  for (int k = 0; k < d.nz; ++k)
    for (int j = 0; j < d.ny; ++j)
      for (int i = 0; i < d.nx; ++i) {
        double div = (at(i + 1, j, k, 0) - at(i - 1, j, k, 0) + at(i, j + 1, k, 1) - at(i, j - 1, k, 1)) / (2 * h);
        if (dim == 3) div += (at(i, j, k + 1, 2) - at(i, j, k - 1, 2)) / (2 * h);
        s += div * div;
      }
  for (double v : d.u) urms += v * v;
  urms = std::sqrt(urms / double(d.u.size()));
  return d.period / urms * std::sqrt(s / double(d.nx * d.ny * d.nz));
}

/// Max relative change of the second-order structure function S2(r) over 24 distance bins
/// (pairs of 400 fixed random nodes; periodic minimum-image distances).
double structure_change(const Data& d, const std::vector<double>& rec) {
  std::mt19937_64 rng(10);
  const int64_t n = int64_t(d.u.size()) / d.dim;
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> s(400);
  for (auto& v : s) v = pick(rng);
  const int bins = 24;
  const double rmax = d.period / 2;
  std::vector<double> a(bins, 0), b(bins, 0);
  std::vector<int64_t> cnt(bins, 0);
  for (size_t p = 0; p < s.size(); ++p)
    for (size_t q = p + 1; q < s.size(); ++q) {
      double r2 = 0;
      for (int k = 0; k < d.dim; ++k) {
        double dx = std::fabs(d.nodes[size_t(s[p] * d.dim + k)] - d.nodes[size_t(s[q] * d.dim + k)]);
        dx = std::min(dx, d.period - dx);
        r2 += dx * dx;
      }
      const int bin = int(std::sqrt(r2) / rmax * bins);
      if (bin >= bins) continue;
      double da = 0, db = 0;
      for (int k = 0; k < d.dim; ++k) {
        da += std::pow(d.u[size_t(s[p] * d.dim + k)] - d.u[size_t(s[q] * d.dim + k)], 2);
        db += std::pow(rec[size_t(s[p] * d.dim + k)] - rec[size_t(s[q] * d.dim + k)], 2);
      }
      a[size_t(bin)] += da, b[size_t(bin)] += db, ++cnt[size_t(bin)];
    }
  double worst = 0;
  for (int k = 0; k < bins; ++k)
    if (cnt[size_t(k)] > 0 && a[size_t(k)] > 0) worst = std::max(worst, std::fabs(b[size_t(k)] - a[size_t(k)]) / a[size_t(k)]);
  return worst;
}

/// Direct nodal compression with FaCTz mode none: components as float32 2D planes
/// (nx x ny*nz; a 3D field's w goes with a zero plane), the largest ABS bound (bisection)
/// whose float64-referenced relative l2 error is <= target.
void direct(const Data& d, double target) {
  const int64_t nx = d.nx, ny = int64_t(d.ny) * d.nz, n = nx * ny;
  std::vector<factz::VectorField2D> parts;
  for (int c = 0; c < d.dim; c += 2) {
    factz::VectorField2D f{nx, ny, std::vector<float>(size_t(n)), std::vector<float>(size_t(n), 0.0f)};
    for (int64_t i = 0; i < n; ++i) {
      f.u[size_t(i)] = float(d.u[size_t(i * d.dim + c)]);
      if (c + 1 < d.dim) f.v[size_t(i)] = float(d.u[size_t(i * d.dim + c + 1)]);
    }
    parts.push_back(std::move(f));
  }
  double umax = 0;
  for (double v : d.u) umax = std::max(umax, std::fabs(v));
  double lo = 0, hi = umax;
  size_t best_bytes = 0;
  double best_err = 0;
  std::vector<double> best_rec;
  for (int it = 0; it < 40; ++it) {
    const double eb = it == 0 ? hi : 0.5 * (lo + hi);
    factz::Options o;
    o.mode = factz::Mode::none;
    o.bound_mode = factz::BoundMode::abs;
    o.bound = eb;
    size_t bytes = 0;
    std::vector<double> rec(d.u.size());
    for (size_t p = 0; p < parts.size(); ++p) {
      auto z = factz::compress(parts[p], o);
      if (!z.ok()) {
        std::cerr << z.status().to_string() << "\n";
        std::exit(1);
      }
      bytes += z->size();
      auto back = factz::decompress(z.value());
      for (int64_t i = 0; i < n; ++i) {
        const int c = int(2 * p);
        rec[size_t(i * d.dim + c)] = back->u[size_t(i)];
        if (c + 1 < d.dim) rec[size_t(i * d.dim + c + 1)] = back->v[size_t(i)];
      }
    }
    const double e = rel_l2(rec, d.u);
    if (e <= target) {
      lo = eb;
      if (best_bytes == 0 || bytes < best_bytes) best_bytes = bytes, best_err = e, best_rec = rec;
      if (it == 0) break;
    } else {
      hi = eb;
    }
  }
  const double raw = double(d.u.size() * 8);
  std::printf("| direct (factz none) | - | %g | %zu | %zu | %.1f | %.3e | - | %.2e (FD) | - | %.2e |\n", target,
              size_t(d.u.size()), best_bytes, raw / double(best_bytes), best_err,
              best_rec.empty() ? 0.0 : fd_divergence_change(d, best_rec),
              best_rec.empty() ? 0.0 : structure_change(d, best_rec));
}

struct Quality {
  double div = 0, per = 0;
};

Quality properties(const fl::Basis& b, const std::vector<double>& c, const Data& d) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> U(0.0, d.period);
  const int dim = d.dim;
  std::vector<double> pts(300 * size_t(dim));
  for (double& v : pts) v = U(rng);
  std::vector<double> vel, grad;
  (void)fl::evaluate(b, c, pts, vel, &grad);
  double gmax = 0, dmax = 0;
  for (size_t p = 0; p < 300; ++p) {
    double g2 = 0, div = 0;
    for (int i = 0; i < dim; ++i)
      for (int k = 0; k < dim; ++k) {
        const double g = grad[(p * size_t(dim) + size_t(i)) * size_t(dim) + size_t(k)];
        g2 += g * g;
        if (i == k) div += g;
      }
    gmax = std::max(gmax, std::sqrt(g2));
    dmax = std::max(dmax, std::fabs(div));
  }
  Quality q;
  q.div = dmax / gmax;
  double umax = 0, worst = 0;
  for (int k = 0; k < dim; ++k) {
    std::vector<double> p(100 * size_t(dim));
    for (double& v : p) v = U(rng);
    auto qd = p;
    for (size_t i = 0; i < 100; ++i) p[i * size_t(dim) + size_t(k)] = 0, qd[i * size_t(dim) + size_t(k)] = d.period;
    std::vector<double> a, bb;
    (void)fl::evaluate(b, c, p, a);
    (void)fl::evaluate(b, c, qd, bb);
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - bb[i])), umax = std::max(umax, std::fabs(a[i]));
  }
  q.per = worst / umax;
  return q;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) out.push_back(t);
  return out;
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: flow_bench tg|cfd [options] (see the source header)\n";
    return 2;
  }
  const std::string which = argv[1];
  int dim = 2, n = 64, size = 512, stride = 8;
  std::string up, vp, methods = "nystrom2,hybrid,multilevel,frame,global", rels = "1e-2,1e-3";
  int64_t landmarks = 32;
  std::vector<double> lengths;
  double beta = 6;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dim") dim = std::stoi(v);
    else if (k == "--n") n = std::stoi(v);
    else if (k == "--size") size = std::stoi(v);
    else if (k == "--stride") stride = std::stoi(v);
    else if (k == "--u") up = v;
    else if (k == "--v") vp = v;
    else if (k == "--methods") methods = v;
    else if (k == "--rel") rels = v;
    else if (k == "--landmarks") landmarks = std::stoll(v);
    else if (k == "--length") for (auto& s : split(v)) lengths.push_back(std::stod(s));
    else if (k == "--beta") beta = std::stod(v);
    else {
      std::cerr << "unknown option " << k << "\n";
      return 2;
    }
  }
  const Data d = which == "cfd" ? cfd(up, vp, size, stride) : taylor_green(dim, n);
  const int64_t nodes = int64_t(d.u.size()) / d.dim;
  std::printf("# %s: %lld nodes, dim %d, raw float64 bytes %zu\n", which.c_str(), (long long)nodes, d.dim, d.u.size() * 8);
  std::printf("| method | coder | target | coefficients | bytes | ratio | rel l2 | bound | divergence | periodic | S2 change |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : split(rels)) direct(d, std::stod(r));
  for (const auto& mname : split(methods)) {
    fl::BasisOptions o;
    o.method = fl::method_from_name(mname).value();
    o.landmarks = landmarks;
    o.periods.assign(size_t(d.dim), d.period);
    o.matern_lengths = lengths;
    o.wendland_beta = beta;
    auto t0 = std::chrono::steady_clock::now();
    auto b = fl::build_basis(d.dim, d.nodes, o);
    if (!b.ok()) {
      std::printf("| %s | basis failed: %s |\n", mname.c_str(), b.status().to_string().c_str());
      continue;
    }
    const double tb = seconds(t0);
    t0 = std::chrono::steady_clock::now();
    auto f = fl::fit(b.value(), d.u);
    if (!f.ok()) {
      std::printf("| %s | fit failed: %s |\n", mname.c_str(), f.status().to_string().c_str());
      continue;
    }
    const double tf = seconds(t0);
    std::fprintf(stderr, "%s: basis %.2f s, fit %.2f s, fit error %.3e\n", mname.c_str(), tb, tf, f->rep_error / f->norm_u);
    for (const auto& r : split(rels))
      for (auto coder : {fl::CoefficientCoder::factz, fl::CoefficientCoder::zfp})
        for (auto rule : {fl::ToleranceRule::apriori, fl::ToleranceRule::measured}) {
        fl::EncodeStats s;
        auto z = fl::encode(b.value(), f.value(), d.u, std::stod(r), coder, &s, rule);
        const std::string cn = std::string(coder == fl::CoefficientCoder::zfp ? "zfp" : "factz") +
                               (rule == fl::ToleranceRule::measured ? " tight" : "");
        if (!z.ok()) {
          std::printf("| %s | %s | %s | %lld | - | - | fit error %.2e > target | - | - | - | - |\n", mname.c_str(), cn.c_str(),
                      r.c_str(), (long long)b->coefficients(), f->rep_error / f->norm_u);
          continue;
        }
        const auto c = fl::decode_coefficients(b.value(), z.value()).value();
        const auto rec = fl::decompress(b.value(), z.value()).value();
        const Quality q = properties(b.value(), c, d);
        std::printf("| %s | %s | %s | %lld | %lld | %.1f | %.3e | %.3e | %.1e (analytic) | %.1e | %.2e |%s\n", mname.c_str(), cn.c_str(),
                    r.c_str(), (long long)b->coefficients(), (long long)s.stream_bytes, s.ratio, s.rel_l2_error, s.rel_bound,
                    q.div, q.per, structure_change(d, rec), s.rel_l2_error <= s.rel_bound ? "" : " BOUND VIOLATED");
      }
  }
  return 0;
}
