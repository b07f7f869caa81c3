// Kernel matrices on node sets: dense (Matern, Nystrom) and sparse (Wendland), and the
// evaluation of a coefficient vector anywhere. Rows and columns interleave the velocity
// components: row i * dim + a is component a at point i; column j * dim + b is
// component b of the weight at center j.
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cstdint>
#include <span>
#include <vector>

#include "factz/flow.hpp"

namespace factz::flow::detail {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t>;

/// Kernel matrix between `points` (p x dim) and the basis nodes `centers`.
Eigen::MatrixXd dense_kernel(const Basis& basis, std::span<const KernelTerm> kernel,
                             std::span<const double> points, std::span<const uint32_t> centers);
SparseMatrix sparse_kernel(const Basis& basis, std::span<const KernelTerm> kernel,
                           std::span<const double> points, std::span<const uint32_t> centers);

/// Rows of the basis nodes with the given indices (p x dim).
std::vector<double> gather_nodes(const Basis& basis, std::span<const uint32_t> idx);
std::vector<uint32_t> all_indices(int64_t n);

/// Kernel weights (dim * centers) of a block from its stored coefficients.
Eigen::VectorXd block_weights(const Basis& basis, const Block& b, std::span<const double> c);

/// sqrt(||M||_1 ||M||_inf) >= ||M||_2 (0 for an empty matrix).
double norm_bound_of(const SparseMatrix& m);
double norm_bound_of(const Eigen::MatrixXd& m);

/// Farthest-point order of `count` nodes among those not excluded (ties: smallest
/// index), starting from `seed_first` when given; radii[k] = distance of the k-th pick to
/// the earlier ones (the covering radius before it was added).
void farthest_points(const Basis& basis, int64_t count, std::vector<uint32_t>& order,
                     std::vector<double>* radii = nullptr,
                     const std::vector<uint8_t>* excluded = nullptr);

}  // namespace factz::flow::detail
