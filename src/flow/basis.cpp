// Building the reusable basis of each fitting scheme (paper section 2.2; docs/flow.md).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "flow/assembly.hpp"
#include "flow/kernel.hpp"

namespace factz::flow {

using detail::dense_kernel;
using detail::sparse_kernel;

int64_t Basis::coefficients() const {
  int64_t m = 0;
  for (const Block& b : blocks) m += b.rank;
  return m;
}

const char* method_name(Method m) {
  switch (m) {
    case Method::global: return "global";
    case Method::nystrom2: return "nystrom2";
    case Method::hybrid: return "hybrid";
    case Method::multilevel: return "multilevel";
    case Method::frame: return "frame";
  }
  return "unknown";
}

Result<Method> method_from_name(const std::string& name) {
  for (Method m : {Method::global, Method::nystrom2, Method::hybrid, Method::multilevel, Method::frame})
    if (name == method_name(m)) return m;
  return invalid_argument("unknown method '" + name + "' (global|nystrom2|hybrid|multilevel|frame)");
}

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Singular values below this fraction of the largest are dropped from a landmark space:
// the weight map grows like 1 / sigma, and so does the roundoff of evaluating it.
constexpr double kRankTolerance = 1e-7;

/// W (k x r) such that C W has orthonormal columns spanning C's numerical range.
Eigen::MatrixXd orth_map(const Eigen::MatrixXd& c) {
  const int64_t k = c.cols();
  if (k == 0 || c.rows() == 0) return Eigen::MatrixXd(k, 0);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(c);
  const int64_t kk = std::min<int64_t>(k, c.rows());
  Eigen::MatrixXd r = qr.matrixQR().topRows(kk).triangularView<Eigen::Upper>();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(r, Eigen::ComputeFullV);
  const Eigen::VectorXd& s = svd.singularValues();
  int64_t rank = 0;
  while (rank < s.size() && s(rank) > kRankTolerance * s(0) && s(rank) > 0) ++rank;
  return svd.matrixV().leftCols(rank) * s.head(rank).cwiseInverse().asDiagonal();
}

/// Re-orthonormalizes U = C W (W <- W G^-1/2, G = U^T U) and returns ||U||_2 bound.
double reorthonormalize(const Eigen::MatrixXd& c, Eigen::MatrixXd& w) {
  if (w.cols() == 0) return 0;
  for (int pass = 0; pass < 2; ++pass) {
    const Eigen::MatrixXd u = c * w;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(u.transpose() * u);
    const Eigen::VectorXd inv_sqrt = eig.eigenvalues().cwiseMax(1e-300).cwiseSqrt().cwiseInverse();
    w = w * (eig.eigenvectors() * inv_sqrt.asDiagonal() * eig.eigenvectors().transpose());
  }
  const Eigen::MatrixXd u = c * w;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(u.transpose() * u, Eigen::EigenvaluesOnly);
  // A little above the computed norm: the eigenvalue itself carries roundoff.
  return std::sqrt(eig.eigenvalues().maxCoeff()) * (1.0 + 1e-10);
}

std::vector<double> to_row_major(const Eigen::MatrixXd& m) {
  std::vector<double> out(size_t(m.size()));
  Eigen::Map<RowMajor>(out.data(), m.rows(), m.cols()) = m;
  return out;
}

std::vector<KernelTerm> mixture(Radial r, const std::vector<double>& lengths) {
  std::vector<KernelTerm> k;
  const double l0 = lengths.back();
  for (double l : lengths) k.push_back({r, l, std::pow(l / l0, 8.0 / 3.0)});  // paper's l^(8/3), normalized
  return k;
}

/// Largest nearest-neighbor distance (the mesh spacing h_X; 0 for a single node).
double spacing(const Basis& b) {
  std::vector<double> nn(size_t(b.n), INFINITY);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < b.n; ++i)
    for (int64_t j = 0; j < b.n; ++j)
      if (j != i)
        nn[size_t(i)] = std::min(nn[size_t(i)], detail::kernel_rho(b.dim, &b.nodes[size_t(i * b.dim)],
                                                                  &b.nodes[size_t(j * b.dim)], b.periods.data()));
  double h = 0;
  for (double v : nn)
    if (std::isfinite(v)) h = std::max(h, v);
  return std::sqrt(h);
}

double extent(const Basis& b) {
  double e = INFINITY;
  for (int k = 0; k < b.dim; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < b.n; ++i) {
      lo = std::min(lo, b.nodes[size_t(i * b.dim + k)]);
      hi = std::max(hi, b.nodes[size_t(i * b.dim + k)]);
    }
    const double ext = b.periods[size_t(k)] > 0 ? b.periods[size_t(k)] : hi - lo;
    if (ext > 0) e = std::min(e, ext);
  }
  return std::isfinite(e) ? e : 1.0;
}

/// A Wendland block on `centers` with the given support, scaled so ||A_b||_2 <= 1.
Block wendland_block(const Basis& basis, std::vector<uint32_t> centers, double support) {
  Block b;
  b.kernel = {{Radial::wendland, support, 1.0}};
  std::sort(centers.begin(), centers.end());  // node order keeps neighbors together in the stream
  b.centers = std::move(centers);
  b.rank = int64_t(b.centers.size()) * basis.dim;
  const auto s = sparse_kernel(basis, b.kernel, basis.nodes, b.centers);
  b.scale = detail::norm_bound_of(s);
  if (!(b.scale > 0)) b.scale = 1;
  b.norm_bound = 1;
  return b;
}

/// Nystrom block on landmark sets z1 (and z2, orthogonalized against z1's space).
Block nystrom_block(const Basis& basis, const std::vector<KernelTerm>& kernel,
                    const std::vector<uint32_t>& z1, const std::vector<uint32_t>& z2) {
  Block b;
  b.kernel = kernel;
  b.orthonormal = true;
  const Eigen::MatrixXd c1 = dense_kernel(basis, kernel, basis.nodes, z1);
  const Eigen::MatrixXd w1 = orth_map(c1);
  Eigen::MatrixXd c = c1, w = w1;
  if (!z2.empty()) {
    const Eigen::MatrixXd c2 = dense_kernel(basis, kernel, basis.nodes, z2);
    const Eigen::MatrixXd u1 = c1 * w1;
    const Eigen::MatrixXd proj = u1.transpose() * c2;  // U1^T C2
    const Eigen::MatrixXd v2 = orth_map(c2 - u1 * proj);
    c.resize(c1.rows(), c1.cols() + c2.cols());
    c << c1, c2;
    w = Eigen::MatrixXd::Zero(c1.cols() + c2.cols(), w1.cols() + v2.cols());
    w.topLeftCorner(w1.rows(), w1.cols()) = w1;
    w.topRightCorner(w1.rows(), v2.cols()) = -w1 * (proj * v2);
    w.bottomRightCorner(v2.rows(), v2.cols()) = v2;
  }
  b.norm_bound = reorthonormalize(c, w);
  b.centers = z1;
  b.centers.insert(b.centers.end(), z2.begin(), z2.end());
  b.rank = w.cols();
  b.weight_map = to_row_major(w);
  b.scale = 1;
  return b;
}

/// Second-level landmarks by residual score sqrt(e_i) * dist(x_i, Z2) (paper SM 1.2).
std::vector<uint32_t> residual_landmarks(const Basis& basis, const Block& first, int64_t m,
                                         const std::vector<std::vector<double>>& training) {
  const int d = basis.dim;
  const auto all = detail::all_indices(basis.n);
  const Eigen::MatrixXd c = dense_kernel(basis, first.kernel, basis.nodes, first.centers);
  const Eigen::MatrixXd w = Eigen::Map<const RowMajor>(first.weight_map.data(), c.cols(), first.rank);
  const Eigen::MatrixXd u = c * w;
  std::vector<double> score(size_t(basis.n), 0.0);
  for (const auto& t : training) {
    Eigen::Map<const Eigen::VectorXd> ut(t.data(), basis.n * d);
    const Eigen::VectorXd r = ut - u * (u.transpose() * ut);
    for (int64_t i = 0; i < basis.n; ++i)
      for (int a = 0; a < d; ++a) score[size_t(i)] += r(i * d + a) * r(i * d + a);
  }
  std::vector<uint8_t> used(size_t(basis.n), 0);
  for (uint32_t z : first.centers) used[z] = 1;
  std::vector<double> dist(size_t(basis.n), INFINITY);
  std::vector<uint32_t> z2;
  for (int64_t k = 0; k < m; ++k) {
    int64_t best = -1;
    double best_v = -1;
    for (int64_t i = 0; i < basis.n; ++i) {
      if (used[size_t(i)]) continue;
      const double v = k == 0 ? score[size_t(i)] : std::sqrt(score[size_t(i)]) * std::sqrt(dist[size_t(i)]);
      if (v > best_v) best_v = v, best = i;
    }
    if (best < 0) break;
    z2.push_back(uint32_t(best));
    used[size_t(best)] = 1;
    for (int64_t i = 0; i < basis.n; ++i)
      dist[size_t(i)] = std::min(dist[size_t(i)], detail::kernel_rho(d, &basis.nodes[size_t(i * d)],
                                                                  &basis.nodes[size_t(best) * size_t(d)],
                                                                  basis.periods.data()));
  }
  return z2;
}

std::vector<uint32_t> prefix(const std::vector<uint32_t>& order, int64_t count) {
  return {order.begin(), order.begin() + std::min<int64_t>(count, int64_t(order.size()))};
}

}  // namespace

Result<Basis> build_basis(int dim, std::span<const double> nodes, const BasisOptions& o) {
  if (dim != 2 && dim != 3) return invalid_argument("nodes must have 2 or 3 columns");
  if (nodes.empty() || nodes.size() % size_t(dim) != 0) return invalid_argument("node array is empty or not n x dim");
  for (double v : nodes)
    if (!std::isfinite(v)) return invalid_argument("node coordinates must be finite");
  Basis b;
  b.dim = dim;
  b.n = int64_t(nodes.size()) / dim;
  if (b.n >= (int64_t(1) << 31)) return invalid_argument("too many nodes");
  b.nodes.assign(nodes.begin(), nodes.end());
  b.periods.assign(size_t(dim), 0.0);
  if (!o.periods.empty()) {
    if (o.periods.size() != size_t(dim)) return invalid_argument("--periodic needs one length per axis");
    for (int k = 0; k < dim; ++k) {
      if (!(o.periods[size_t(k)] >= 0) || !std::isfinite(o.periods[size_t(k)]))
        return invalid_argument("periods must be finite and >= 0");
      b.periods[size_t(k)] = o.periods[size_t(k)];
    }
  }
  // Distinct nodes (a repeated node makes every interpolation matrix singular).
  {
    std::vector<int64_t> order(size_t(b.n));
    for (int64_t i = 0; i < b.n; ++i) order[size_t(i)] = i;
    auto key = [&](int64_t i) { return std::span<const double>(&b.nodes[size_t(i * dim)], size_t(dim)); };
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      auto a = key(x), c = key(y);
      return std::lexicographical_compare(a.begin(), a.end(), c.begin(), c.end());
    });
    for (size_t i = 1; i < order.size(); ++i) {
      auto a = key(order[i - 1]), c = key(order[i]);
      if (std::equal(a.begin(), a.end(), c.begin()))
        return invalid_argument("nodes " + std::to_string(order[i - 1]) + " and " + std::to_string(order[i]) +
                                " coincide");
    }
  }
  b.method = o.method;
  if (o.landmarks < 1) return invalid_argument("--landmarks must be >= 1");
  if (!(o.wendland_beta > 0)) return invalid_argument("Wendland support factor must be > 0");
  for (const auto& t : o.training)
    if (t.size() != nodes.size()) return invalid_argument("training velocities must be n x dim");
  std::vector<double> lengths = o.matern_lengths;
  for (double l : lengths)
    if (!(l > 0) || !std::isfinite(l)) return invalid_argument("kernel lengths must be finite and > 0");
  if (lengths.empty()) lengths = {extent(b) / 4.0};
  std::sort(lengths.begin(), lengths.end());
  const auto matern = mixture(Radial::matern, lengths);
  const int64_t m = std::min<int64_t>(o.landmarks, b.n);
  const auto all = detail::all_indices(b.n);
  double h = spacing(b);
  if (!(h > 0)) h = extent(b);
  const double beta = o.wendland_beta;

  switch (o.method) {
    case Method::global: {
      Block g;
      g.kernel = matern;
      g.centers = all;
      g.rank = b.n * dim;
      g.scale = detail::norm_bound_of(dense_kernel(b, g.kernel, b.nodes, g.centers));
      if (!(g.scale > 0)) g.scale = 1;
      b.blocks.push_back(std::move(g));
      break;
    }
    case Method::nystrom2: {
      std::vector<uint32_t> fps;
      detail::farthest_points(b, o.training.empty() ? std::min<int64_t>(2 * m, b.n) : m, fps);
      const auto z1 = prefix(fps, m);
      std::vector<uint32_t> z2;
      if (o.training.empty()) {
        z2.assign(fps.begin() + int64_t(z1.size()), fps.end());
      } else {
        const Block first = nystrom_block(b, matern, z1, {});
        z2 = residual_landmarks(b, first, std::min<int64_t>(m, b.n - int64_t(z1.size())), o.training);
      }
      b.blocks.push_back(nystrom_block(b, matern, z1, z2));
      break;
    }
    case Method::hybrid: {
      std::vector<uint32_t> fps;
      detail::farthest_points(b, m, fps);
      b.blocks.push_back(nystrom_block(b, matern, fps, {}));
      b.blocks.push_back(wendland_block(b, all, beta * h));
      break;
    }
    case Method::multilevel:
    case Method::frame: {
      // Nested center sets of about n / 2^(2d), n / 2^d and n nodes (farthest-point
      // prefixes), supports beta h 2^level from the finest level up.
      const int64_t n1 = std::max<int64_t>(1, b.n >> dim), n2 = std::max<int64_t>(1, b.n >> (2 * dim));
      std::vector<uint32_t> fps;
      detail::farthest_points(b, n1, fps);
      std::vector<Block> levels = {wendland_block(b, prefix(fps, n2), 4 * beta * h),
                                   wendland_block(b, prefix(fps, n1), 2 * beta * h),
                                   wendland_block(b, all, beta * h)};
      if (o.method == Method::frame) std::reverse(levels.begin(), levels.end());  // fine to coarse
      b.blocks = std::move(levels);
      break;
    }
  }
  return b;
}

}  // namespace factz::flow
