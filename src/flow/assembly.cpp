#include "flow/assembly.hpp"

#include <algorithm>
#include <cmath>

#include "flow/kernel.hpp"

namespace factz::flow::detail {

std::vector<uint32_t> all_indices(int64_t n) {
  std::vector<uint32_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = uint32_t(i);
  return idx;
}

std::vector<double> gather_nodes(const Basis& basis, std::span<const uint32_t> idx) {
  std::vector<double> out(idx.size() * size_t(basis.dim));
  for (size_t i = 0; i < idx.size(); ++i)
    for (int k = 0; k < basis.dim; ++k)
      out[i * size_t(basis.dim) + size_t(k)] = basis.nodes[size_t(idx[i]) * size_t(basis.dim) + size_t(k)];
  return out;
}

Eigen::MatrixXd dense_kernel(const Basis& basis, std::span<const KernelTerm> kernel,
                             std::span<const double> points, std::span<const uint32_t> centers) {
  const int d = basis.dim;
  const int64_t p = int64_t(points.size()) / d, m = int64_t(centers.size());
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(p * d, m * d);
  const double support = support_rho(kernel);
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < m; ++j) {
    const double* y = &basis.nodes[size_t(centers[size_t(j)]) * size_t(d)];
    double phi[9];
    for (int64_t i = 0; i < p; ++i) {
      if (!kernel_block(d, kernel, basis.periods.data(), support, &points[size_t(i * d)], y, phi)) continue;
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) k(i * d + a, j * d + b) = phi[a * 3 + b];
    }
  }
  return k;
}

SparseMatrix sparse_kernel(const Basis& basis, std::span<const KernelTerm> kernel,
                           std::span<const double> points, std::span<const uint32_t> centers) {
  const int d = basis.dim;
  const int64_t p = int64_t(points.size()) / d, m = int64_t(centers.size());
  const double support = support_rho(kernel);
  // Column by column (deterministic: each column's entries in row order).
  std::vector<std::vector<std::pair<int64_t, double>>> cols(size_t(m * d));
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t j = 0; j < m; ++j) {
    const double* y = &basis.nodes[size_t(centers[size_t(j)]) * size_t(d)];
    double phi[9];
    for (int64_t i = 0; i < p; ++i) {
      if (!kernel_block(d, kernel, basis.periods.data(), support, &points[size_t(i * d)], y, phi)) continue;
      for (int b = 0; b < d; ++b)
        for (int a = 0; a < d; ++a) cols[size_t(j * d + b)].emplace_back(i * d + a, phi[a * 3 + b]);
    }
  }
  SparseMatrix s(p * d, m * d);
  std::vector<int64_t> nnz(size_t(m * d));
  for (size_t c = 0; c < cols.size(); ++c) nnz[c] = int64_t(cols[c].size());
  s.reserve(nnz);
  for (size_t c = 0; c < cols.size(); ++c)
    for (const auto& [r, v] : cols[c]) s.insert(r, int64_t(c)) = v;
  s.makeCompressed();
  return s;
}

Eigen::VectorXd block_weights(const Basis& basis, const Block& b, std::span<const double> c) {
  const int64_t rows = int64_t(b.centers.size()) * basis.dim;
  Eigen::Map<const Eigen::VectorXd> cv(c.data(), int64_t(c.size()));
  if (b.weight_map.empty()) return cv / b.scale;
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> w(
      b.weight_map.data(), rows, b.rank);
  return (w * cv) / b.scale;
}

double norm_bound_of(const SparseMatrix& m) {
  if (m.nonZeros() == 0) return 0;
  Eigen::VectorXd row = Eigen::VectorXd::Zero(m.rows());
  double col_max = 0;
  for (int64_t c = 0; c < m.outerSize(); ++c) {
    double s = 0;
    for (SparseMatrix::InnerIterator it(m, c); it; ++it) {
      s += std::fabs(it.value());
      row(it.row()) += std::fabs(it.value());
    }
    col_max = std::max(col_max, s);
  }
  return std::sqrt(col_max * row.maxCoeff());
}

double norm_bound_of(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return 0;
  const double one = m.cwiseAbs().colwise().sum().maxCoeff();
  const double inf = m.cwiseAbs().rowwise().sum().maxCoeff();
  return std::sqrt(one * inf);
}

void farthest_points(const Basis& basis, int64_t count, std::vector<uint32_t>& order,
                     std::vector<double>* radii, const std::vector<uint8_t>* excluded) {
  const int d = basis.dim;
  const int64_t n = basis.n;
  std::vector<double> dist(size_t(n), INFINITY);
  std::vector<uint8_t> used(size_t(n), 0);
  if (excluded)
    for (int64_t i = 0; i < n; ++i) used[size_t(i)] = (*excluded)[size_t(i)];
  order.clear();
  if (radii) radii->clear();
  for (int64_t k = 0; k < count; ++k) {
    int64_t best = -1;
    for (int64_t i = 0; i < n; ++i)
      if (!used[size_t(i)] && (best < 0 || dist[size_t(i)] > dist[size_t(best)])) best = i;
    if (best < 0) break;
    order.push_back(uint32_t(best));
    if (radii) radii->push_back(std::sqrt(dist[size_t(best)]));
    used[size_t(best)] = 1;
    const double* y = &basis.nodes[size_t(best) * size_t(d)];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double r = kernel_rho(d, &basis.nodes[size_t(i) * size_t(d)], y, basis.periods.data());
      if (r < dist[size_t(i)]) dist[size_t(i)] = r;
    }
  }
}

}  // namespace factz::flow::detail
